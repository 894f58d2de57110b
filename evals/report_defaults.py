"""Figures of the shipped defaults on the public dev sets, for README.md, from the run folders
`evals/reproduce_defaults.sh` leaves in runs/defaults (before_<set>: the previous defaults,
after_<set>: the new ones; compare_<set>.json: `searchkit compare --half report`).

For each set: nDCG@10 on the whole dev split (comparable with ../shared/data/BASELINE.md) and on the
report half, with the paired test against the previous defaults (report half); the no-answer figures
on the report half (AUROC with its bootstrap test, recall of unanswerable queries at 5% false
warnings, the shipped threshold's warning recall and false-warning rate). Usage:
    .venv/bin/python evals/report_defaults.py [--runs runs/defaults] [--out evals/defaults/results.json] [--merge]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SETS = ["jsquad-ja", "xquad-ru", "squad2-en", "nomiracl-ja", "nomiracl-ru", "nomiracl-en",
        "locomo-sessions", "locomo-turns"]
BASELINE = {  # ../shared/data/BASELINE.md: nDCG@10 BM25, dense, RRF; AUROC top-1 dense
    "jsquad-ja": (0.943, 0.908, 0.947, 0.975),
    "xquad-ru": (0.952, 0.941, 0.954, 0.948),
    "squad2-en": (0.892, 0.871, 0.913, 0.700),
    "nomiracl-ja": (0.539, 0.630, 0.602, 0.727),
    "nomiracl-ru": (0.582, 0.671, 0.662, 0.680),
    "nomiracl-en": (0.672, 0.781, 0.740, 0.685),
    "locomo-sessions": (0.683, 0.484, 0.630, 0.550),
    "locomo-turns": (0.414, 0.442, 0.466, 0.625),
}


def _half(run: Path, half: str) -> dict:
    from searchkit.evaluate.metrics import no_answer_metrics
    from searchkit.evaluate.tune import half_of

    m = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    rows = [q for q in m["queries"] if half_of(f"{m['dataset']}:{q['id']}") == half]
    judged = [q for q in rows if q.get("metrics")]
    out = {"nDCG@10": sum(q["metrics"]["nDCG@10"] for q in judged) / max(1, len(judged)), "judged": len(judged),
           "queries": len(rows)}
    if any(not q["answerable"] for q in rows):
        out.update(no_answer_metrics([q["answerable"] for q in rows], [q["answer_probability"] for q in rows],
                                     [bool(q["weak_match"]) for q in rows]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="runs/defaults")
    ap.add_argument("--out")
    ap.add_argument("--merge", action="store_true",
                    help="keep the --out file's figures for the sets this run folder lacks (a REFIT of one shape)")
    args = ap.parse_args()
    runs = Path(args.runs)
    results, lines = {}, []
    for name in SETS:
        before, after, cmp_file = runs / f"before_{name}", runs / f"after_{name}", runs / f"compare_{name}.json"
        if not (after / "metrics.json").is_file():
            print(f"{name}: no run folder {after}; skipped", file=sys.stderr)
            continue
        whole = json.loads((after / "metrics.json").read_text(encoding="utf-8"))
        res = {"whole_dev": whole["metrics"], "shape": whole.get("shape"),
               "report_half": _half(after, "report"), "previous_report_half": _half(before, "report")}
        if cmp_file.is_file():
            cmp = json.loads(cmp_file.read_text(encoding="utf-8"))
            nd = next(r for r in cmp["sections"][0]["metrics"] if r["metric"] == "nDCG@10")
            res["vs_previous"] = {"nDCG@10_delta": nd["delta"][1], "nDCG@10_p": nd["p"][1]}
            if cmp.get("no_answer"):
                na = cmp["no_answer"]
                res["vs_previous"].update({"AUROC_delta": na["delta"][1], "AUROC_p": na["p"][1]})
        results[name] = res
        bm, de, rrf, auc_peer = BASELINE[name]
        r, p = res["report_half"], res["previous_report_half"]
        vs = res.get("vs_previous", {})
        lines.append(
            f"| {name} | {bm:.3f} / {de:.3f} / {rrf:.3f} | **{whole['metrics']['nDCG@10']:.3f}** | "
            f"{p['nDCG@10']:.3f} → **{r['nDCG@10']:.3f}** ({vs.get('nDCG@10_delta', 0):+.3f}, p {vs.get('nDCG@10_p', float('nan')):.3f}) | "
            f"{auc_peer:.3f} | {p.get('AUROC', float('nan')):.3f} → **{r.get('AUROC', float('nan')):.3f}** "
            f"(p {vs.get('AUROC_p', float('nan')):.3f}) | {r.get('recall@5%FW', float('nan')):.2f} | "
            f"{p.get('false-warn-rate', float('nan')):.2f} → {r.get('false-warn-rate', float('nan')):.2f} | "
            f"{r.get('warn-recall', float('nan')):.2f} |")
    print("| set | nDCG@10 peer BM25 / dense / RRF (whole dev) | **searchkit** (whole dev) | report half: previous → new (Δ, p) | "
          "no-answer AUROC peer (top-1 dense, whole dev) | report half AUROC previous → new (p) | recall of unanswerable "
          "at 5% false warnings | false-warning rate previous → new | warning recall |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))
    if args.out:
        out = Path(args.out)
        if args.merge and out.is_file():  # the sets this run did not measure keep their figures
            results = {**json.loads(out.read_text(encoding="utf-8")), **results}
            results = {name: results[name] for name in SETS if name in results}
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
