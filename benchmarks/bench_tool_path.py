"""The history_search tool path, per call, in process (issue 30 item 9): where a call's time goes.

Loads the index a ``bench_serve.py --workdir`` run left (its ``config.json``, ``index`` and ``ws``),
warms every scope the bench's callers use (8 callers, their own space and ``spaces="all"``: each
new scope builds its BM25 statistics and speakers once), then calls the tool ``--calls`` times the
way the server does (``Tool.parse``, ``run``, ``to_dict``, ``render``, ``json.dumps``) and prints
p50/p95/mean of the wall time, of the calling thread's CPU time (``time.thread_time``: what
other processes on a shared machine do not change) and of the process's (``time.process_time``:
with the BLAS threads of the dense pass, which the calling thread's leaves out; ``--blas-threads 1``
limits them as ``searchkit serve`` does), and the mean of each section. ``--dump FILE``
writes each call's ``to_dict()`` (one JSON line, keys sorted) to compare two versions of the code
for identical answers (run both under the same ``PYTHONHASHSEED``); ``--profile`` prints cProfile.

    .venv/bin/python benchmarks/bench_tool_path.py /tmp/bench100k --calls 120 --dump /tmp/answers.jsonl

The embedding cache is the one ``SEARCHKIT_CACHE`` names (bench_serve.py's ``WORKDIR/embeddings.sqlite``).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_serve as bs  # noqa: E402  (the bench's callers and query texts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workdir", type=Path, help="a bench_serve.py --workdir (config.json, index, ws)")
    ap.add_argument("--calls", type=int, default=120)
    ap.add_argument("--dump", type=Path, help="write each call's to_dict() here (JSON lines)")
    ap.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    ap.add_argument("--seed", type=int, default=0, help="the query texts' shuffle (a new seed: texts the cache has not seen)")
    ap.add_argument("--blas-threads", type=int, help="limit BLAS to this many threads, as searchkit serve does (1)")
    args = ap.parse_args(argv)
    if args.blas_threads:
        from searchkit.serve.startup import limit_blas_threads

        limit_blas_threads(args.blas_threads)

    from searchkit.config_file import load_config
    from searchkit.serve.session import Session
    from searchkit.tools.history import HistoryIndex
    from searchkit.tools.registry import TOOLS

    t0 = time.perf_counter()
    idx = HistoryIndex.load(args.workdir / "index", load_config(str(args.workdir / "config.json")))
    print(f"loaded {len(idx.searcher.passages):,} passages in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    _, queries = bs.real_texts(bs.DEFAULT_DATA, args.seed)
    tool = TOOLS["history_search"]
    sessions = [Session(u, space="acme" if u in bs.SPACES["acme"] else next(s for s, m in bs.SPACES.items() if u in m))
                for u in bs.USERS]
    t0, c0 = time.perf_counter(), time.thread_time()
    for s in sessions:
        for extra in ({}, {"spaces": "all"}):
            tool.run(tool.parse({"query": "warm up query", **extra}), s.context(idx))
    print(f"warmed {2 * len(sessions)} scopes: {time.perf_counter() - t0:.1f} s wall, {time.thread_time() - c0:.1f} s CPU",
          file=sys.stderr)
    calls = []
    for i in range(args.calls):
        call = {"query": queries[i % len(queries)][:200]}
        if i % 10 == 9:  # as bench_serve.py: one in ten looks for the stamps
            call = {"query": "stamp generation marker", "kinds": ["app", "chat"], "limit": 10}
        if i % 7 == 3:
            call["spaces"] = "all"
        calls.append((sessions[i % len(sessions)], call))
    sections = dict.fromkeys(("run", "to_dict", "render", "json"), 0.0)
    wall, cpu, pcpu, out = [], [], [], []
    prof = cProfile.Profile() if args.profile else None
    if prof:
        prof.enable()
    for s, call in calls:
        t, c, pc = time.perf_counter(), time.thread_time(), time.process_time()
        answer = tool.run(tool.parse(call), s.context(idx))
        t1 = time.perf_counter()
        data = answer.to_dict()
        t2 = time.perf_counter()
        text = answer.render(None)
        t3 = time.perf_counter()
        json.dumps({"answer": data, "text": text}, ensure_ascii=False)
        t4 = time.perf_counter()
        for name, dt in zip(sections, (t1 - t, t2 - t1, t3 - t2, t4 - t3)):
            sections[name] += dt
        wall.append((t4 - t) * 1000)
        cpu.append((time.thread_time() - c) * 1000)
        pcpu.append((time.process_time() - pc) * 1000)
        out.append({"caller": s.caller, "args": call, "answer": data})
    if prof:
        prof.disable()
    n = len(wall)
    figures = {
        "passages": len(idx.searcher.passages), "calls": n,
        "wall_ms": {"p50": float(np.percentile(wall, 50)), "p95": float(np.percentile(wall, 95)), "mean": float(np.mean(wall))},
        "cpu_ms": {"p50": float(np.percentile(cpu, 50)), "p95": float(np.percentile(cpu, 95)), "mean": float(np.mean(cpu))},
        # the whole process: the calling thread and the BLAS threads of the dense pass (what a core serves)
        "process_cpu_ms": {"p50": float(np.percentile(pcpu, 50)), "p95": float(np.percentile(pcpu, 95)),
                           "mean": float(np.mean(pcpu))},
        "blas_threads": args.blas_threads,
        "sections_mean_ms": {k: v / n * 1000 for k, v in sections.items()},
        "load": os.getloadavg(), "pythonhashseed": os.environ.get("PYTHONHASHSEED"),
    }
    print(json.dumps(figures, indent=2))
    if args.dump:
        args.dump.write_text("".join(json.dumps(o, ensure_ascii=False, sort_keys=True) + "\n" for o in out),
                             encoding="utf-8")
    if prof:
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    return 0


if __name__ == "__main__":
    sys.exit(main())
