"""The one Searcher that the tools and the harness drive (SPEC E2).

``Searcher.build(records, config)`` cuts records into passages, analyses them, and builds the
enabled retrievers (BM25 over a sparse matrix, FAISS over embeddings). ``search(query, k,
filters)`` returns a ``Result`` whose hits carry each retriever's score and rank, so a researcher
sees why a record ranked. Filters apply before the top-k is cut: a filtered-out record never
takes a slot. Scoring is per record: each retriever's score for a record is its best passage's
score (MaxP); the card shows the passage with the best passage-level fused score.

A search is a pipeline of stages over ``Candidates`` built from the config
(``searchkit.rank.stages``: retrieve, fuse, rerank, evidence, speaker, date, cut; ``pipeline``),
run over the ``Query`` that ``query`` checks; ``result`` turns its candidates into hits and
warnings. Tuning and the adaptive-fusion fit run a prefix of ``pipeline`` once and vary one stage.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from searchkit import __version__, retrievers
from searchkit.analyze import ANALYZER_VERSION, Analyzer, detect_language
from searchkit.config import SearchConfig
from searchkit.errors import DataError, InputError, SearchkitError
from searchkit.index import store
from searchkit.index.cache import EmbeddingCache, default_cache_path
from searchkit.index.jsonl_lines import LineObjects, read_lines
from searchkit.index.writes import write_failure
from searchkit.passages import make_passages
from searchkit.ports import EmbedderPort, EmbeddingCachePort
from searchkit.rank.candidates import Candidates
from searchkit.rank.conversation import Speakers, record_heads
from searchkit.rank.filters import Filters
from searchkit.rank.lines import FILE_NAME as LINES_FILE
from searchkit.rank.lines import analyse_searcher, load_line_analysis
from searchkit.rank.notices import search_notices
from searchkit.rank.rerank import RERANKERS, passage_sentences, reads
from searchkit.rank.stages import Pipeline, Query, build_pipeline
from searchkit.rank.stages import passage_depth as _passage_depth  # noqa: F401  (benchmarks read it here)
from searchkit.records import Hit, Passage, Record, Result
from searchkit.retrievers.scopes import ScopeMasks, SqlScope, pushed_down
from searchkit.util import problem_of, read_json_file

INDEX_FORMAT = 2
"""2: retrievers in folders named after them, the analysis identity in the manifest."""


def make_analyzer(config: SearchConfig):
    """The analyzer the config's ``analyzer`` section describes."""
    return Analyzer.from_config(config.analyzer)


def make_embedder(config: SearchConfig):
    """The embedder of the first retriever that embeds (``RetrieverSpec.embedder`` over its config
    section; the running ones first, then any registered): the dense retriever's ``dense.embedder``
    with its parameters and ``dense.fallbacks`` in the shipped tree."""
    running = retrievers.enabled(config)
    for name in running + [n for n in retrievers.names() if n not in running]:
        spec = retrievers.get(name)
        if spec.embeds and spec.embedder is not None and spec.section:
            return spec.embedder(getattr(config, spec.section))
    raise ValueError("no registered retriever makes an embedder")


class Searcher:
    """Records, their passages, and a name -> retriever mapping, searched under a ``SearchConfig``.

    The retrievers (``searchkit.retrievers``: BM25, dense, or any other registered one) each rank
    passage rows; the Searcher turns their answers into one frozen ``Candidates`` value (record
    scores by their best passage), fuses the runs (``fusion.method`` with ``fusion.weights`` by
    retriever name), picks each card's passage and computes the warnings from ``Candidates``.
    """

    def __init__(
        self,
        config: SearchConfig,
        records: Sequence[Record],
        passages: Sequence[Passage],
        *,
        retrievers: Mapping[str, Any],
        analyzer: Analyzer | None = None,
        pipeline: Callable[["Searcher"], Pipeline] | None = None,
    ) -> None:
        self.config = config
        self.records: tuple[Record, ...] = tuple(records)
        self.passages: tuple[Passage, ...] = tuple(passages)
        self.retrievers: dict[str, Any] = dict(retrievers)
        self.analyzer = analyzer if analyzer is not None else make_analyzer(config)
        self._rec_index = {r.id: i for i, r in enumerate(self.records)}
        self._passage_record = np.fromiter(
            (self._rec_index[p.record_id] for p in self.passages), dtype=np.int64, count=len(self.passages)
        )
        order = np.argsort(self._passage_record, kind="stable")
        bounds = np.searchsorted(self._passage_record[order], np.arange(len(self.records) + 1))
        self._record_passages = [order[bounds[i]:bounds[i + 1]] for i in range(len(self.records))]
        self._speakers: dict[bytes, Any] = {}
        self._languages: dict[str, str] = {}  # language_of's memo
        self.line_analysis: Any = None
        self.line_objects: tuple[LineObjects, LineObjects] | None = None  # load_version's, for the next
        """Who said each line of the passages, analysed once (``searchkit.rank.lines.LineAnalysis``;
        a history index builds and keeps one): the speaker and evidence stages read it instead of
        analysing the lines of every search's top passages. None: they analyse them."""
        self._pipeline = pipeline(self) if pipeline is not None else None  # None: the config's, built when first searched
        self.scope_mask = ScopeMasks(self.records)  # SqlScope -> the records it selects (the last 32 kept)
        self._fingerprint: str | None = None  # the config's, computed once (a config is frozen)

    # -- what it holds --------------------------------------------------------------------
    @property
    def passage_record(self) -> np.ndarray:
        """The record index of each passage row (read-only view)."""
        view = self._passage_record.view()
        view.flags.writeable = False
        return view

    def record_passages(self, record: int) -> np.ndarray:
        """The passage rows of record ``record``."""
        return self._record_passages[record]

    @property
    def embedder(self) -> Any:
        """The embedder of the first retriever that embeds (None without one)."""
        name = retrievers.first(self.retrievers, retrievers.Embeds)
        return self.retrievers[name].embedder if name is not None else None

    @property
    def cache(self) -> Any:
        """The embedding cache of the first retriever that embeds (None without one)."""
        name = retrievers.first(self.retrievers, retrievers.Embeds)
        return self.retrievers[name].cache if name is not None else None

    def warm(self, texts: Sequence[str], *, show_progress: bool = False) -> None:
        """Let every retriever that can prepare many queries at once do so (the dense one embeds
        them in batches into its cache), before they are searched one by one."""
        for name, r in self.retrievers.items():
            if isinstance(r, retrievers.Warmable):
                r.warm(texts, batch_size=self.section_value(name, "batch_size", 32), show_progress=show_progress)

    def section_value(self, name: str, key: str, default: object) -> Any:
        """Key ``key`` of retriever ``name``'s config section (``default`` without one)."""

        spec = retrievers.RETRIEVERS.get(name)
        section = getattr(self.config, spec.section, None) if spec is not None and spec.section else None
        return getattr(section, key, default)

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        records: Iterable[Record],
        config: SearchConfig | None = None,
        *,
        embedder: EmbedderPort | None = None,
        cache: EmbeddingCachePort | None = None,
        show_progress: bool = False,
        previous: "Searcher | None" = None,
    ) -> "Searcher":
        """Cut, analyse and index ``records`` under ``config`` (default ``SearchConfig()``): one
        retriever for each registered kind whose config section is enabled.

        ``embedder`` defaults to the one the config names; ``cache`` is an
        ``EmbeddingCache`` (default: the on-disk cache at ``default_cache_path()``). ``previous``
        (an update's Searcher before it) lets a retriever keep what it made of an unchanged
        passage (BM25: its tokens; issue 30) when its index config is this one; the index is the
        same as without it.
        """
        config = config or SearchConfig()
        records = list(records)
        seen: set[str] = set()
        for r in records:
            if r.id in seen:
                raise InputError(f"duplicate record id {r.id!r}")
            seen.add(r.id)
        passages: list[Passage] = []
        for r in records:
            passages.extend(
                make_passages(r, max_chars=config.passages.max_chars, title_prefix=config.passages.title_prefix)
            )
        analyzer = make_analyzer(config)
        names = retrievers.enabled(config)
        if retrievers.embedding(names):
            embedder = embedder if embedder is not None else make_embedder(config)
            cache = cache if cache is not None else _default_cache()
        if previous is not None and previous.config.index_fingerprint() != config.index_fingerprint():
            previous = None
        ctx = retrievers.BuildContext(passages, analyzer, embedder, cache, show_progress, previous)
        built = {}
        for name in names:
            built[name] = retrievers.get(name).built(config, ctx)
        return cls(config, records, passages, retrievers=built, analyzer=analyzer)

    def with_config(self, config: SearchConfig) -> "Searcher":
        """The same indexes searched under another config whose index part is the same
        (query-time knobs only: depths, fusion, warnings, diversity)."""
        if config.index_fingerprint() != self.config.index_fingerprint():
            raise DataError(
                "with_config: the new config changes analysis, passages, BM25 weights or the embedder; build a new index"
            )
        out = Searcher(config, self.records, self.passages, retrievers=self.retrievers, analyzer=self.analyzer)
        out.line_analysis = self.line_analysis
        return out

    # -- searching ------------------------------------------------------------------------
    def validate_query(self, query: object) -> str:
        if not isinstance(query, str):
            raise InputError(f"query must be a string, got {type(query).__name__}", param="query")
        if "\x00" in query:
            raise InputError("query contains a NUL character", param="query")
        q = query.strip()
        if not q:
            raise InputError("query is empty: give some words or a question", param="query")
        limit = self.config.query.max_chars
        if len(q) > limit:
            raise InputError(
                f"query is {len(q):,} characters long; the limit is {limit:,} (query.max_chars): "
                "search with a few precise words instead", param="query",
            )
        return q

    def record_mask(self, filters: Filters | None) -> np.ndarray | None:
        """Boolean mask over records that pass ``filters`` (None when nothing is filtered)."""
        if filters is None or filters.is_empty():
            return None
        return np.fromiter((filters.accepts(r) for r in self.records), dtype=bool, count=len(self.records))

    def query(
        self,
        query: str,
        k: int = 10,
        filters: Filters | None = None,
        *,
        record_mask: np.ndarray | None = None,
        scope: np.ndarray | SqlScope | None = None,
    ) -> Query:
        """The checked ``Query`` the stages run (``search`` takes the same arguments): the query
        text, the retrievers (each a view limited to ``scope`` where it can be), the passages that
        may be candidates and ``k``. Raises ``InputError`` naming a bad argument (``param``: query or k)."""
        q = self.validate_query(query)
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}", param="k")
        mask = self.record_mask(filters)
        if record_mask is not None:
            mask = record_mask if mask is None else (mask & record_mask)
        pscope = None
        if isinstance(scope, SqlScope):
            views, allowed = pushed_down(self.retrievers, scope, self.scope_mask)
            if allowed is not None:
                mask = allowed if mask is None else (mask & allowed)
            return Query(q, views, None if mask is None else mask[self._passage_record], None, k)
        if scope is not None:
            scope = np.asarray(scope)
            if scope.dtype != np.bool_ or scope.shape != (len(self.records),):
                raise ValueError(f"scope must be a bool array over the {len(self.records)} records")
            mask = scope if mask is None else (mask & scope)
            pscope = scope[self._passage_record]
        pmask = None if mask is None else mask[self._passage_record]
        views = {name: (r.scoped(pscope) if pscope is not None and isinstance(r, retrievers.Scopable) else r)
                 for name, r in self.retrievers.items()}
        return Query(q, views, pmask, scope, k)

    @property
    def pipeline(self) -> Pipeline:
        """The search path under this Searcher's config (``searchkit.rank.stages``): retrieve,
        fuse, rerank, evidence, speaker, date, cut (the stages the config turns off left out)."""
        if self._pipeline is None:
            self._pipeline = build_pipeline(self)
        return self._pipeline

    def search(
        self,
        query: str,
        k: int = 10,
        filters: Filters | None = None,
        *,
        record_mask: np.ndarray | None = None,
        scope: np.ndarray | SqlScope | None = None,
        pick: Callable[[list[Hit]], list[Hit]] | None = None,
    ) -> Result:
        """Search; return at most ``k`` hits, best first, with warnings (H11, H12).

        ``pick`` (the hits a caller shows, chosen from the ``k`` ranked: e.g. the history tool's
        cards) makes the result's hits ``pick(hits)``; the missing-ID notice (H12) then reads the
        hits shown, computed once here, and the weak-match notice (H11) the ranking as always.

        ``record_mask`` (boolean over ``self.records``) may be given instead of, or besides,
        ``filters``; both restrict the candidates before the top-k is cut.

        ``scope`` (boolean over ``self.records``) is the collection this search sees, e.g. what
        a caller may see (H14, H15): only its records come back, and each retriever searches a
        view of itself limited to the scope (``scoped``: BM25's collection statistics over the
        scope's passages alone, dense scored exactly), so nothing outside it changes a result or
        a score. Filters narrow the candidates within the scope without changing statistics.
        A ``SqlScope`` (task search, T1): pushed down where it can be, else a candidate mask (``scopes``).
        """
        q = self.query(query, k, filters, record_mask=record_mask, scope=scope)
        return self.result(self.pipeline(Candidates(), q), q, pick=pick)

    def result(self, c: Candidates, q: Query, *, pick: Callable[[list[Hit]], list[Hit]] | None = None) -> Result:
        """The ``Result`` of a pipeline's candidates: a hit for each of ``c.fused`` (at most
        ``q.k``) carrying every stage's score, and the warnings. The weak-match signals are read
        off the ranking the ``evidence`` stage saw (before the speaker stage: that stage moves
        another speaker's turn down, and an adversarial question's best match being someone
        else's is the very evidence of no answer)."""
        hits = self._hits(c, q.k)
        shown = hits if pick is None else list(pick(hits))
        seen = c.stages.get("evidence", c.fused)
        warnings, sig = search_notices(q.text, c.with_fusion(seen, c.evidence), hits,
                                       lambda ri: self.records[ri].kind, self.config.weak_match, shown=shown)
        if self._fingerprint is None:
            self._fingerprint = self.config.fingerprint()
        return Result(
            query=q.text, hits=tuple(shown), warnings=tuple(warnings), config_fingerprint=self._fingerprint, signals=sig
        )

    # -- what the stages read -------------------------------------------------------------
    def reranker(self) -> Any:
        """The reranker ``rerank.method`` names (``searchkit.rank.rerank.RERANKERS``), for this
        Searcher's embedder and cache."""
        if self.config.rerank.method == "sentence_maxsim" and self.embedder is None:
            raise DataError("rerank.method sentence_maxsim needs a retriever that embeds (its embedder: the "
                                     "dense one in the shipped tree)")
        return RERANKERS[self.config.rerank.method](self)

    def embed_rerank_sentences(self, passages: Iterable[int] | None = None, *, show_progress: bool = False) -> int:
        """Embed, into the cache, the sentences the ``rerank`` stage reads, so that a query does not
        wait for them (``searchkit index`` does this after building): those of ``passages``
        (indices into ``self.passages``; default every passage whose language,
        ``analyze.detect_language``, is one the stage runs for). Returns the number of distinct
        sentences; 0 when the stage is off or reads no embeddings. Already cached ones cost a lookup.
        A passage in another language is read whole by the stage (``rerank.reads``): the dense
        retriever's vector, cached by the build."""
        cfg = self.config.rerank
        if not cfg.enabled or cfg.method != "sentence_maxsim" or self.embedder is None or self.cache is None:
            return 0
        flat = self.rerank_sentences(passages)
        if flat:
            self.cache.embed(self.embedder, flat, "passage", show_progress=show_progress, desc="embed sentences (rerank)")
        return len(flat)

    def language_of(self, text: str) -> str:
        """``analyze.detect_language`` of a text of this index, remembered: the rerank stage asks it
        of the head passages of every reranked query (0.4 ms for a passage of 1,100 characters)."""
        lang = self._languages.get(text)
        if lang is None:
            lang = self._languages[text] = detect_language(text)
        return lang

    def rerank_sentences(self, passages: Iterable[int] | None = None) -> list[str]:
        """The distinct texts (sorted) the ``rerank`` stage reads of ``passages`` (``rerank.reads``:
        the sentences of one in a language the stage runs for, the whole text of another; default:
        every passage in a language the stage runs for); see ``embed_rerank_sentences``."""
        langs = self.config.rerank.languages
        if passages is None:  # every passage in the stage's languages: its sentences
            return sorted({s for p in self.passages if not langs or detect_language(p.text) in langs
                           for s in passage_sentences(p.text)})
        return sorted({s for i in passages for s in reads(self.passages[i].text, langs, self.language_of)})

    def analyse_lines(self, previous: "Searcher | None" = None, *, show_progress: bool = False) -> None:
        """Analyse who said each line of every passage once (``line_analysis``,
        ``searchkit.rank.lines.analyse_searcher``), keeping what ``previous`` (the version before)
        made of a passage whose text it has; saved with the index. The same answers, faster."""
        self.line_analysis = analyse_searcher(self, previous, show_progress=show_progress)

    def speakers(self, scope: np.ndarray | None = None) -> Any:
        """The speaker names of the conversations in ``scope`` (every record when None), learned
        once per scope: a name only someone else's chats hold never shapes a caller's evidence."""
        import hashlib

        key = b"" if scope is None or bool(scope.all()) else hashlib.sha256(np.packbits(scope).tobytes()).digest()
        hit = self._speakers.get(key)
        if hit is None:
            heads = record_heads(self)  # each record's speaker-like line heads, read once
            rows = np.flatnonzero(scope) if scope is not None and key else range(len(self.records))
            hit = self._speakers[key] = Speakers.from_heads((heads[i] for i in rows), self.analyzer.query_tokens)
            while len(self._speakers) > 16:
                self._speakers.pop(next(iter(self._speakers)))
        return hit

    def _hits(self, c: Candidates, k: int) -> list[Hit]:
        hits = []
        rrf_k = self.config.fusion.rrf_k
        top = c.fused[:k]
        for pos, ((ri, score), stages) in enumerate(zip(top, c.stage_scores([ri for ri, _ in top])), start=1):
            scores = {n: float(run.records[ri]) for n, run in c.runs.items() if ri in run.records}
            ranks = {n: run.ranks[ri] for n, run in c.runs.items() if ri in run.ranks}
            pi = c.best_passage(ri, rrf_k)
            if pi is None:  # pragma: no cover - every ranked record came from some passage
                pi = int(self._record_passages[ri][0])
            hits.append(Hit(record=self.records[ri], score=float(score), rank=pos, passage=self.passages[pi],
                            scores=scores, ranks=ranks, stages=stages))
        return hits

    # -- persistence ----------------------------------------------------------------------
    def save(self, folder: str | Path, *, extra_files: Mapping[str, str] | None = None) -> Path:
        """Save as a new version of the index folder ``folder`` (``searchkit.index.store``): the
        version is written completely in a private temporary folder, then made current in one
        atomic step; readers keep the version they opened. ``folder`` must be absent, empty or a
        searchkit index. ``extra_files`` (name -> text) go into the same version (e.g. a
        workspace's spaces). Returns ``folder``."""
        store.write_version(folder, lambda tmp: self._write_files(tmp, extra_files or {}))
        return Path(folder)

    def _write_files(self, tmp: Path, extra_files: Mapping[str, str]) -> None:
        embedder = self.embedder
        manifest = {
            "format": INDEX_FORMAT,
            "searchkit_version": __version__,
            "config_fingerprint": self.config.fingerprint(),
            "index_fingerprint": self.config.index_fingerprint(),
            "analysis": analysis_identity(),
            "retrievers": list(self.retrievers),
            "embedder_fingerprint": embedder.fingerprint() if embedder is not None else None,
            "n_records": len(self.records),
            "n_passages": len(self.passages),
        }

        def lines(name: str, rows: Iterable[str]) -> None:
            try:
                with open(tmp / name, "w", encoding="utf-8") as fh:
                    fh.writelines(rows)
            except OSError as exc:  # a full disk: name the file and say so (issue 27 item 13)
                raise write_failure(tmp / name, exc) from None

        lines("config.json", [self.config.to_json() + "\n"])
        lines("records.jsonl", (json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in self.records))
        lines("passages.jsonl", (json.dumps([p.record_id, p.index, p.start, p.end, p.text], ensure_ascii=False) + "\n"
                                 for p in self.passages))
        for name, r in self.retrievers.items():
            if not isinstance(r, retrievers.Persistable):
                raise DataError(f"retriever {name!r} cannot be saved (it has no save method)")
            try:
                r.save(tmp / name)
            except OSError as exc:
                raise write_failure(tmp / name, exc) from None
        if self.line_analysis is not None:
            try:
                (tmp / LINES_FILE).write_bytes(self.line_analysis.to_bytes())
            except OSError as exc:
                raise write_failure(tmp / LINES_FILE, exc) from None
        for name, text in extra_files.items():
            lines(name, [text])
        lines("manifest.json", [json.dumps(manifest, indent=2) + "\n"])

    @classmethod
    def load(
        cls,
        folder: str | Path,
        config: SearchConfig | None = None,
        *,
        embedder: EmbedderPort | None = None,
        cache: EmbeddingCachePort | None = None,
    ) -> "Searcher":
        """Load the current version of an index folder. With ``config``, its index part must
        match the stored one; its query-time knobs (depths, fusion, warnings) replace the stored
        ones. A version being replaced by a writer meanwhile is read whole, never mixed."""
        with store.reading(folder) as version:
            return cls.load_version(version, config, embedder=embedder, cache=cache, name=str(folder))

    @classmethod
    def load_version(
        cls,
        folder: Path,
        config: SearchConfig | None = None,
        *,
        embedder: EmbedderPort | None = None,
        cache: EmbeddingCachePort | None = None,
        name: str | None = None,
        previous: "Searcher | None" = None,
    ) -> "Searcher":
        """Load one version folder (see ``load``); every damaged file is a one-line error naming it.
        ``previous``, a version loaded before: its records and passages are reused for every line
        whose bytes are the same (``index.jsonl_lines``; a new version after a refresh)."""

        shown = name or str(folder)
        manifest = _read_json_file(folder / "manifest.json", shown)
        if not isinstance(manifest, dict):
            raise DataError(f"{shown}: manifest.json is not a JSON object; the index is damaged, rebuild it")
        if manifest.get("format") != INDEX_FORMAT:
            raise DataError(f"{shown}: index format {str(manifest.get('format'))[:40]!r} is not {INDEX_FORMAT}; rebuild it")
        if manifest.get("analysis") != analysis_identity():
            raise DataError(
                f"{shown} was analysed by another analyzer or dictionary ({_analysis_text(manifest.get('analysis'))}; "
                f"installed: {_analysis_text(analysis_identity())}): its tokens would not match new queries; rebuild it"
            )
        stored = SearchConfig.load(folder / "config.json")
        if config is None:
            config = stored
        elif config.index_fingerprint() != manifest.get("index_fingerprint"):
            raise DataError(
                f"{shown} was built under another config (index fingerprint {str(manifest.get('index_fingerprint'))[:40]}, "
                f"asked for {config.index_fingerprint()}): analysis, passages, BM25 or embedder settings differ; "
                "rebuild the index with this config"
            )
        known = (previous.line_objects if previous is not None else None) or ({}, {})
        records, rec_lines = read_lines(folder / "records.jsonl", shown, Record.from_dict, known[0])
        passages, pas_lines = read_lines(
            folder / "passages.jsonl", shown,
            lambda obj: Passage(record_id=obj[0], index=obj[1], text=obj[4], start=obj[2], end=obj[3]), known[1],
        )
        expected = (manifest.get("n_records"), manifest.get("n_passages"))
        if expected != (len(records), len(passages)):
            raise DataError(
                f"{shown}: {len(records)} records and {len(passages)} passages on disk, the manifest says "
                f"{expected[0]} and {expected[1]}; the index is damaged, rebuild it"
            )
        ids = {r.id for r in records}
        if len(ids) != len(records) or any(p.record_id not in ids for p in passages):
            raise DataError(f"{shown}: records.jsonl and passages.jsonl disagree; the index is damaged, rebuild it")
        names = retrievers.enabled(config)
        if retrievers.embedding(names):
            embedder = embedder if embedder is not None else make_embedder(config)
            if embedder.fingerprint() != manifest.get("embedder_fingerprint"):
                raise DataError(
                    f"{shown} was embedded with embedder {str(manifest.get('embedder_fingerprint'))[:40]}, "
                    f"but the embedder given is {embedder.fingerprint()} ({getattr(embedder, 'name', '?')}); "
                    "rebuild the index or pass the same embedder"
                )
            cache = cache if cache is not None else _default_cache()
        analyzer = make_analyzer(config)
        ctx = retrievers.BuildContext(passages, analyzer, embedder, cache)
        loaded = {}
        for rname in names:
            spec = retrievers.get(rname)
            try:
                r = spec.loaded(folder / rname, config, ctx)
            except (ValueError, FileNotFoundError) as exc:
                if isinstance(exc, SearchkitError):
                    raise
                raise DataError(f"{shown}: the {rname} index is damaged ({' '.join(str(exc).split())[:150]}); rebuild it") from None
            n = getattr(getattr(r, "index", None), "n_docs", None) or getattr(getattr(r, "index", None), "n", None)
            if n is not None and n != len(passages):
                raise DataError(f"{shown}: the {rname} index has {n} rows for {len(passages)} passages; rebuild it")
            loaded[rname] = r
        out = cls(config, records, passages, retrievers=loaded, analyzer=analyzer)
        out.line_analysis = load_line_analysis(folder / LINES_FILE, len(passages))
        out.line_objects = (rec_lines, pas_lines)
        return out


def analysis_identity() -> dict[str, Any]:
    """What decides the tokens an index holds besides its config: the analyzer's version and
    the installed Sudachi dictionary and Snowball stemmer (an upgrade of either must not
    silently reuse an index built with the other)."""
    from importlib import metadata

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {"analyzer_version": ANALYZER_VERSION, "sudachipy": version("sudachipy"),
            "sudachidict_core": version("sudachidict-core"), "pystemmer": version("PyStemmer")}


def _analysis_text(identity: object) -> str:
    if not isinstance(identity, dict):
        return "unknown"
    return ", ".join(f"{k} {v}" for k, v in identity.items())


def _read_json_file(path: Path, shown: str) -> Any:
    """A JSON file of an index version, read as a regular file only (never a FIFO: no hang)."""
    try:
        return read_json_file(path)
    except FileNotFoundError:
        raise DataError(f"{shown}: {path.name} is missing; the index is damaged, rebuild it") from None
    except (OSError, DataError) as exc:  # DataError: not a regular file, not UTF-8, not JSON
        why = problem_of(exc)
        raise DataError(f"{shown}: {path.name} is unreadable ({str(why)[:100]}); rebuild the index") from None


def _default_cache():
    return EmbeddingCache(default_cache_path())
