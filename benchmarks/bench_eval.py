"""``searchkit eval --dataset mini`` end to end, warm, against its target (issue 31 item 1).

Prints figures and ratios; it is a script, not a timed test. What it runs:

1. One warm-up ``searchkit eval --dataset DATASET --quiet`` in a subprocess (fills the embedding
   cache and the OS page cache, and numba's on-disk cache of searchkit's BM25 kernel), then
   ``--repeats`` timed runs of the same command, each a fresh process, wall time from spawn to exit
   (what a user waits). The figure is their median; the target is ``--target`` seconds (6 s).
2. The metrics step alone, each in a fresh process (imports included), on the rankings the eval
   wrote (``run.trec`` of a run folder) and the dataset's qrels:

   - searchkit: ``searchkit.evaluate.metrics.ranking_metrics`` (ir_measures over trec_eval's C code,
     MS MARCO's evaluator for RR@10), the eval's own path;
   - the named peer, ranx: ``ranx.evaluate(Qrels, Run, [ndcg@10, mrr@10, recall@k...])``, what eval
     used before issue 31 (numba code, compiled in every new process or loaded from numba's cache).

   The two must give the same figures (checked to 1e-9 here, and in tests/test_metrics.py).

The eval median is also given as a ratio to the peer's metrics step alone: below 1 means the whole
eval now costs less than ranx's metric step used to add to it.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_eval.py                  # mini, 5 timed runs (~30 s)
    .venv/bin/python benchmarks/bench_eval.py --repeats 9 --json runs/bench_eval.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 6.0

_OURS = r"""
import json, sys, time
t0 = time.perf_counter()
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.metrics import RANKING_METRICS, ranking_metrics
ds = load_dataset(resolve_dataset(sys.argv[1]), sys.argv[2])
run = {}
for line in open(sys.argv[3], encoding="utf-8"):
    qid, _, doc, _, score, _ = line.split()
    run.setdefault(qid, {})[doc] = float(score)
out = ranking_metrics(ds.to_ranx_qrels(), run, RANKING_METRICS)
print(json.dumps({"seconds": time.perf_counter() - t0, "metrics": out}))
"""

_RANX = r"""
import json, sys, time
t0 = time.perf_counter()
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
import ranx
ds = load_dataset(resolve_dataset(sys.argv[1]), sys.argv[2])
qrels = {k: {d: s for d, s in v.items() if s > 0} for k, v in ds.to_ranx_qrels().items()}
qrels = {k: v for k, v in qrels.items() if v}
run = {}
for line in open(sys.argv[3], encoding="utf-8"):
    qid, _, doc, _, score, _ = line.split()
    run.setdefault(qid, {})[doc] = float(score)
names = {"nDCG@10": "ndcg@10", "RR@10": "mrr@10",
         **{f"R@{k}": f"recall@{k}" for k in (1, 5, 10, 20, 100)}}
r = ranx.Run({k: run.get(k) or {"__none__": 0.0} for k in qrels})
got = ranx.evaluate(ranx.Qrels(qrels), r, list(names.values()), make_comparable=True)
print(json.dumps({"seconds": time.perf_counter() - t0,
                  "metrics": {ours: float(got[theirs]) for ours, theirs in names.items()}}))
"""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _searchkit() -> list[str]:
    exe = Path(sys.executable).with_name("searchkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "searchkit.cli"]


def timed(cmd: list[str]) -> tuple[float, str]:
    """Wall seconds of ``cmd`` in a fresh process, and its stdout; a failure stops the benchmark."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        raise SystemExit(f"bench_eval: {cmd[0]} exited {done.returncode}: {tail[0]}")
    return wall, done.stdout


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="mini")
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--repeats", type=int, default=5, help="timed eval runs after the warm-up (default 5)")
    ap.add_argument("--metric-repeats", type=int, default=3, help="fresh processes per metrics step (default 3)")
    ap.add_argument("--target", type=float, default=TARGET_S, help="target seconds (default 6)")
    ap.add_argument("--no-peer", action="store_true", help="skip the ranx peer")
    ap.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.metric_repeats < 1:
        ap.error("--repeats and --metric-repeats must be >= 1")

    eval_cmd = [*_searchkit(), "eval", "--dataset", args.dataset, "--split", args.split, "--quiet"]
    with tempfile.TemporaryDirectory(prefix="bench_eval.") as tmp:
        out = Path(tmp) / "run"
        log(f"warm-up: {' '.join(eval_cmd[1:])} --out {out}")
        warm, _ = timed([*eval_cmd, "--out", str(out)])
        walls = []
        for i in range(args.repeats):
            wall, _ = timed(eval_cmd)
            walls.append(wall)
            log(f"eval run {i + 1}/{args.repeats}: {wall:.2f} s")
        trec = str(out / "run.trec")
        ours_runs, peer_runs = [], []
        for _ in range(args.metric_repeats):
            ours_runs.append(json.loads(timed([sys.executable, "-c", _OURS, args.dataset, args.split, trec])[1]))
        if not args.no_peer:
            for i in range(args.metric_repeats):
                wall, text = timed([sys.executable, "-c", _RANX, args.dataset, args.split, trec])
                row = json.loads(text)
                row["wall"] = wall
                peer_runs.append(row)
                log(f"ranx metrics process {i + 1}/{args.metric_repeats}: {wall:.2f} s")

    ev = summary(walls)
    load = os.getloadavg()
    res: dict = {
        "dataset": args.dataset, "split": args.split, "target_s": args.target,
        "warm_up_s": warm, "eval_s": ev, "eval_over_target": ev["median"] / args.target,
        "meets_target": ev["median"] <= args.target,
        "metrics_step_s": summary([r["seconds"] for r in ours_runs]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "processor": platform.processor() or platform.machine(),
                    "load_avg_1_5_15": list(load)},
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(f"searchkit eval --dataset {args.dataset} --split {args.split}, warm, {ev['n']} runs "
          f"(warm-up {warm:.2f} s; load average {load[0]:.1f} on {os.cpu_count()} CPUs):")
    print(f"  median {ev['median']:.2f} s (min {ev['min']:.2f}, max {ev['max']:.2f}); "
          f"target <= {args.target:g} s: {ev['median'] / args.target:.2f}x the target, "
          f"{'MET' if res['meets_target'] else 'MISSED'}")
    ms = res["metrics_step_s"]
    print(f"  metrics step alone, fresh process (searchkit / ir_measures): median {ms['median']:.2f} s")
    if peer_runs:
        peer = summary([r["seconds"] for r in peer_runs])
        peer_first = peer_runs[0]["seconds"]
        diff = max(abs(peer_runs[0]["metrics"][m] - ours_runs[0]["metrics"][m]) for m in peer_runs[0]["metrics"])
        res.update(peer={"name": "ranx", "metrics_step_s": peer, "first_s": peer_first,
                         "max_abs_difference": diff},
                   eval_over_peer_metrics=ev["median"] / peer["median"],
                   ours_over_peer_metrics=ms["median"] / peer["median"])
        print(f"  metrics step alone, fresh process (peer: ranx): median {peer['median']:.2f} s "
              f"(first {peer_first:.2f} s, max {peer['max']:.2f} s); searchkit's step "
              f"{ms['median'] / peer['median']:.3f}x ranx's; the whole eval {ev['median'] / peer['median']:.2f}x "
              f"ranx's metric step alone")
        print(f"  figures: largest |searchkit - ranx| {diff:.2e}")
        if diff > 1e-9:
            print("  WARNING: the figures differ from ranx's")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 0 if res["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
