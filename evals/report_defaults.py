"""Figures of the shipped defaults on the public dev sets, for README.md.

For each set: ranking metrics on the whole dev split (comparable with ../shared/data/BASELINE.md)
and on the report half (never used for any choice), and the weak-match figures on the report half.
Sets not used for tuning are marked held out. Usage:
    .venv/bin/python evals/report_defaults.py [--out evals/defaults/results.json]
"""
from __future__ import annotations

import argparse
import json
import sys

from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset, resolve_dataset, shared_data_dir
from searchkit.evaluate.run import evaluate_dataset, summarize
from searchkit.evaluate.tune import half_of

SETS = ["jsquad-ja", "xquad-ru", "squad2-en", "nomiracl-ja", "nomiracl-ru", "nomiracl-en"]
TUNED_ON = {"xquad-ru", "jsquad-ja", "squad2-en", "nomiracl-ru"}
BASELINE = {  # ../shared/data/BASELINE.md: nDCG@10 BM25, dense, RRF; AUROC top-1 dense
    "jsquad-ja": (0.943, 0.908, 0.947, 0.975),
    "xquad-ru": (0.952, 0.941, 0.954, 0.948),
    "squad2-en": (0.892, 0.871, 0.913, 0.700),
    "nomiracl-ja": (0.539, 0.630, 0.602, 0.727),
    "nomiracl-ru": (0.582, 0.671, 0.662, 0.680),
    "nomiracl-en": (0.672, 0.781, 0.740, 0.685),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args()
    if shared_data_dir() is None:
        print("../shared/data is absent: nothing to report", file=sys.stderr)
        return 2
    cfg = SearchConfig()
    results = {}
    for name in args.sets.split(","):
        ds = load_dataset(resolve_dataset(name))
        rep = evaluate_dataset(ds, cfg, show_progress=False)
        report_half = [o for o in rep.outcomes if half_of(f"{ds.name}:{o.query_id}") == "report"]
        half = summarize(ds, cfg, report_half)
        results[name] = {
            "tuned_on": name in TUNED_ON,
            "whole_dev": dict(rep.metrics),
            "report_half": dict(half.metrics),
            "no_answer_report_half": dict(half.no_answer),
            "no_answer_whole_dev": dict(rep.no_answer),
            "counts": dict(rep.counts),
            "timing": dict(rep.timing),
        }
        print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    lines = [
        "| set | used for tuning | nDCG@10 peer BM25 / dense / RRF | **nDCG@10 searchkit** (whole dev) | RR@10 | R@100 "
        "| nDCG@10 report half | no-answer AUROC peer (top-1 dense) | **AUROC searchkit** (report half) | warn recall / false-warn rate (report half) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        b = BASELINE[name]
        w, h, na = r["whole_dev"], r["report_half"], r["no_answer_report_half"]
        lines.append(
            f"| {name} | {'tune half' if r['tuned_on'] else 'held out'} | {b[0]:.3f} / {b[1]:.3f} / {b[2]:.3f} "
            f"| **{w['nDCG@10']:.3f}** | {w['RR@10']:.3f} | {w['R@100']:.3f} | {h['nDCG@10']:.3f} | {b[3]:.3f} "
            f"| **{na['AUROC']:.3f}** | {na['warn-recall']:.2f} / {na['false-warn-rate']:.2f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"config_fingerprint": cfg.fingerprint(), "results": results, "table": table}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
