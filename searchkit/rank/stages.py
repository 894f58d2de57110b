"""A search as a pipeline of stages over ``Candidates`` (issue 29 item 1; SPEC E2, H11).

A stage is a callable ``stage(c: Candidates, q: Query) -> Candidates`` with a ``name``; a
``Pipeline`` runs its stages in order. ``build_pipeline(searcher)`` builds the search path from the
Searcher's config, one entry of ``STAGES`` per step of ``ORDER``, each stage holding its own knobs:

- ``retrieve``: each retriever's best passages, as record runs (``<retriever>.depth``);
- ``fuse``: the runs fused (``fusion.method``, ``weights``, ``adaptive``, ...);
- ``rerank``: a second look at the head (``rerank.*``; absent while ``rerank.enabled`` is false);
- ``evidence``: what the top records hold of the query (``weak_match.evidence_depth``,
  ``attribution_depth``, ``attribution_passages``); the weak-match signals read the ranking it saw;
- ``speaker``: another speaker's turn moves down (``fusion.speaker``, ``speaker_depth``; absent at 0);
- ``date``: a record of the date the question names moves up (``fusion.date``, ``date_depth``);
- ``cut``: the best ``q.k``.

Every ranking stage leaves its ranking in ``Candidates.stages``, so a hit carries every stage's
score. Tuning and the adaptive-fusion fit run a prefix once and vary one stage over it
(``Pipeline.upto``, ``after``, ``replace``, ``without``; ``FuseStage.with_weights``).

The stages read the Searcher they were built for (``corpus``: its records, passages, analyzer,
speakers and reranker) and nothing outside the ``Query``'s views, so a scoped search stays scoped.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from searchkit.analyze import detect_language
from searchkit.ports import Corpus
from searchkit.rank import conversation
from searchkit.rank.adaptive import weights_for
from searchkit.rank.candidates import Candidates, collect
from searchkit.rank.conversation import said_by, whose
from searchkit.rank.dates import query_when, record_day
from searchkit.rank.fusion import fuse_runs
from searchkit.rank.rerank import reorder, stage_evidence
from searchkit.retrievers import HasEvidence, HasTermWeights, first

if TYPE_CHECKING:
    from searchkit.config import SearchConfig
    from searchkit.retrievers import Retriever

Ranking = list[tuple[int, float]]

ORDER: tuple[str, ...] = ("retrieve", "fuse", "rerank", "evidence", "speaker", "date", "cut")
"""The stages of a search, in the order they run."""


@dataclass(frozen=True, eq=False)
class Query:
    """One search as the stages see it: the checked query text, the retrievers to ask (``views``:
    name -> retriever, each limited to ``scope`` where it can be), the passages that may be
    candidates (``pmask``, None: all), the records the search sees (``scope``, None: all) and how
    many hits to keep (``k``)."""

    text: str
    views: Mapping[str, Any]
    pmask: np.ndarray | None = None
    scope: np.ndarray | None = None
    k: int = 10


@runtime_checkable
class Stage(Protocol):
    """One step of a search: candidates in, candidates out."""

    @property
    def name(self) -> str:
        """The stage's name in its pipeline (a field of the frozen stage dataclasses)."""

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        """The candidates after this stage."""


def passage_depth(record_depth: int, n_passages: int) -> int:
    """Passages to fetch so that about ``record_depth`` distinct records come back."""
    return min(n_passages, max(record_depth, int(record_depth * 1.5) + 10))


def shifted(head: Ranking, rest: Ranking, deltas: Sequence[float]) -> Ranking:
    """A ranking stage's result: each head record's score plus its delta, the whole list in score
    order again (ties: the lower record), so a record moved down may fall below the rest."""
    moved = [(ri, s + d) for (ri, s), d in zip(head, deltas)] + rest
    moved.sort(key=lambda t: (-t[1], t[0]))
    return moved


def lexical_run(c: Candidates, views: Mapping[str, Any]) -> str | None:
    """The run of the first retriever that weighs query terms (its prepared query is the query's
    terms: what the speaker stage matches names against), None when no such run is in ``c``."""
    name = first(views, HasTermWeights)
    return name if name is not None and name in c.runs else None


# --------------------------------------------------------------------------- the stages


@dataclass(frozen=True, eq=False)
class RetrieveStage:
    """Each retriever's best passages for the query (``depths``: records by retriever name),
    collected as record runs; starts a pipeline (the candidates given are not read). ``fetch`` (by
    retriever name) says how many passages a retriever is asked for to fill ``depth`` records,
    ``fetch(depth, n_passages)`` (default ``passage_depth``; the task search asks its own,
    ``searchkit.tools.task_engine``)."""

    corpus: Corpus
    depths: Mapping[str, int]
    name: str = "retrieve"
    fetch: Mapping[str, Callable[[int, int], int]] = field(default_factory=dict)

    def __call__(self, c: Candidates, q: Query) -> Candidates:  # noqa: ARG002 - a pipeline's first stage
        if q.pmask is not None and not q.pmask.any():
            return Candidates()
        answers = {}
        n = len(self.corpus.passages)
        for name, r in q.views.items():
            prepared = r.prepare(q.text)
            depth = self.depths.get(name, 100)
            rows, scores = r.search(prepared, self.fetch.get(name, passage_depth)(depth, n), q.pmask)
            answers[name] = (prepared, rows, scores, depth)
        return collect(answers, self.corpus.passage_record)


@dataclass(frozen=True, eq=False)
class FuseStage:
    """The runs fused as ``fusion`` says (``searchkit.rank.fusion.fuse_runs``); ``weights`` (by
    retriever) overrides the config's and the adaptive model's."""

    corpus: Corpus
    fusion: Any
    weights: Mapping[str, float] | None = None
    name: str = "fuse"

    def with_weights(self, weights: Mapping[str, float] | None) -> "FuseStage":
        """This stage under other weights (the adaptive-fusion fit scores several of one retrieval)."""
        return replace(self, weights=weights)

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        def fill(name: str, missing: list[int]) -> dict[int, float]:
            """The retriever's exact score for records it did not return: their best passage."""
            pis = [self.corpus.record_passages(ri) for ri in missing]
            vals = np.asarray(q.views[name].scores_for(c.runs[name].query, np.concatenate(pis)))
            starts = np.cumsum([0] + [len(p) for p in pis[:-1]])
            return dict(zip(missing, np.maximum.reduceat(vals, starts).tolist()))

        cfg, weights = self.fusion, self.weights
        if weights is None and cfg.adaptive is not None and cfg.method != "rrf":
            weights = weights_for(c, cfg)
        fused = fuse_runs({name: run.records for name, run in c.runs.items()}, cfg, fill=fill, weights=weights)
        return c.ranked_by(self.name, fused)


@dataclass(frozen=True, eq=False)
class KeepStage:
    """The run of retriever ``run`` in that retriever's own order, as the ranking (no fusion): where
    one retriever's order is the answer (FTS5 alone in task search: relevance, or newest first on
    its LIKE path, T4). It replaces ``fuse`` in such a pipeline."""

    run: str
    name: str = "keep"

    def __call__(self, c: Candidates, q: Query) -> Candidates:  # noqa: ARG002 - reads the run alone
        run = c.runs.get(self.run)
        return c.ranked_by(self.name, list(run.records.items()) if run is not None else [])


@dataclass(frozen=True, eq=False)
class RerankStage:
    """A second look at the best ``rerank.depth`` fused records, for queries in the languages
    ``rerank.languages`` names (``searchkit.rank.rerank``); adds ``rerank_top1`` to the evidence
    where it ran. ``corpus.reranker()`` gives the reranker ``rerank.method`` names."""

    corpus: Any
    rerank: Any
    rrf_k: float
    name: str = "rerank"

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        ranked, evidence = self.scored(q.text, c, list(c.fused))
        return c.ranked_by(self.name, ranked, {**c.evidence, **evidence})

    def scored(self, text: str, c: Candidates, ranked: Ranking) -> tuple[Ranking, dict[str, float]]:
        """The reranked list and the evidence the stage adds (none where it did not run)."""
        cfg = self.rerank
        if not cfg.enabled or not ranked:
            return ranked, {}

        if not cfg.runs_for(detect_language(text)):
            return ranked, {}
        reranker = self.corpus.reranker()
        records, passages = self.corpus.records, self.corpus.passages
        head = [ri for ri, _ in ranked[:cfg.depth]]
        best = [c.best_passage(ri, self.rrf_k) for ri in head]
        texts = [passages[pi].text if pi is not None else records[ri].text[:1500] for ri, pi in zip(head, best)]
        scores = [float(s) for s in reranker.rerank(text, texts)]
        return reorder(ranked, dict(zip(head, scores)), cfg.weight), stage_evidence(scores)


@dataclass(frozen=True, eq=False)
class EvidenceStage:
    """How much of the query the top records hold: each retriever's own evidence (``R_<item>``
    over the best ``depth`` records) and who said what in conversations (the passages of the best
    ``attribution_depth`` records, at most ``attribution_passages`` each;
    ``searchkit.rank.conversation``). The ranking is left as it is (and kept: the weak-match
    signals read the ranking the evidence was read from)."""

    corpus: Any
    depth: int
    attribution_depth: int
    attribution_passages: int
    rrf_k: float
    name: str = "evidence"

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        return c.ranked_by(self.name, c.fused, {**self.read(c, q), **c.evidence})

    def read(self, c: Candidates, q: Query) -> dict[str, float]:
        """The evidence of ``c.fused`` (none for an empty ranking)."""
        ranked, s = c.fused, self.corpus
        if not ranked:
            return {}
        top = [c.record_passages.get(ri, ()) for ri, _ in ranked[:self.depth]]
        best = [c.best_passage(ri, self.rrf_k) for ri, _ in ranked[:self.depth]]
        texts = [s.passages[pi].text for pi in best if pi is not None]
        out: dict[str, float] = {}
        for name, r in q.views.items():
            if isinstance(r, HasEvidence) and name in c.runs:
                for item, value in r.evidence(c.runs[name].query, top, texts).items():
                    out[f"{name}_{item}"] = float(value)
        # the query terms and their weights from the first retriever that weighs terms
        weighing = first(q.views, HasTermWeights)
        query = (c.runs[weighing].query if weighing is not None and weighing in c.runs
                 else s.analyzer.query_tokens(q.text))
        weights = q.views[weighing].term_weights(query) if weighing is not None else None
        rows = [int(pi) for ri, _ in ranked[:self.attribution_depth]
                for pi in s.record_passages(ri)[:self.attribution_passages]]
        said = [s.passages[pi].text for pi in rows]
        analysed = getattr(s, "line_analysis", None)  # the index's analysis of each line, where it has one
        lines = analysed.of_rows(rows) if analysed is not None else None
        out.update(conversation.attribution(query, said, s.speakers(q.scope), conversation.query_tokens_of(s),
                                               weights, lines))
        return out


@dataclass(frozen=True, eq=False)
class SpeakerStage:
    """``fusion.speaker``: when the question names a speaker of the conversations in scope, a
    record among the best ``depth`` whose best passage only someone else said loses ``weight``
    (``searchkit.rank.conversation.said_by``); the rest keep their score. Needs the run of a retriever that weighs terms (BM25: its query tokens)."""

    corpus: Any
    weight: float
    depth: int
    rrf_k: float
    name: str = "speaker"

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        return c.ranked_by(self.name, self.moved(c, list(c.fused), q))

    def moved(self, c: Candidates, ranked: Ranking, q: Query) -> Ranking:
        lexical, scope = lexical_run(c, q.views), q.scope
        if self.weight <= 0 or not ranked or lexical is None:
            return ranked

        s = self.corpus
        speakers = s.speakers(scope)
        named = speakers.in_query(c.runs[lexical].query)
        if not named:
            return ranked
        head, rest = ranked[:self.depth], ranked[self.depth:]
        owners = speakers.passage_owners  # passage row -> whose it is, kept with these speakers
        analysed = getattr(s, "line_analysis", None)  # the index's analysis of each line, where it has one
        own: list[bool | None] = []
        for ri, _ in head:
            pi = c.best_passage(ri, self.rrf_k)
            if pi is None:
                own.append(None)
                continue
            who = owners.get(pi)
            if who is None:
                # the passage's own slice of its record: not the title line it is prefixed with (a
                # chat's title names both speakers)
                p = s.passages[pi]
                who = owners[pi] = whose(s.records[ri].text[p.start:p.end], speakers, conversation.query_tokens_of(s),
                                         analysed.entries(pi, whole=False) if analysed is not None else None)
            own.append(said_by(named, who))
        return shifted(head, rest, [-self.weight if mine is False else 0.0 for mine in own])


@dataclass(frozen=True, eq=False)
class DateStage:
    """``fusion.date``: when the question names a date, a record of that date (its own date, or
    the whole date its title names; ``searchkit.rank.dates``) among the best ``depth`` gains
    ``weight``; the rest keep their score."""

    corpus: Any
    weight: float
    depth: int
    days: dict = field(default_factory=dict)  # record -> its day, learned as records reach a head
    name: str = "date"

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        return c.ranked_by(self.name, self.moved(q.text, list(c.fused)))

    def moved(self, text: str, ranked: Ranking) -> Ranking:
        if self.weight <= 0 or not ranked:
            return ranked

        when = query_when(text)
        if when is None:
            return ranked
        days, records = self.days, self.corpus.records
        head, rest = ranked[:self.depth], ranked[self.depth:]
        for ri, _ in head:
            if ri not in days:
                days[ri] = record_day(records[ri])
        gains = [self.weight if when.matches(days[ri]) else 0.0 for ri, _ in head]
        return shifted(head, rest, gains) if any(gains) else ranked


@dataclass(frozen=True, eq=False)
class CutStage:
    """The best ``q.k`` of the ranking (what the hits are made of)."""

    name: str = "cut"

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        return replace(c, fused=c.fused[:q.k])


# --------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class Pipeline:
    """Stages run in order: ``pipeline(candidates, query) -> candidates``."""

    stages: tuple[Stage, ...]

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        for stage in self.stages:
            c = stage(c, q)
        return c

    run = __call__

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stages)

    def __getitem__(self, name: str) -> Stage:
        return self.stages[self._at(name)]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def _at(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no stage {name!r} in this pipeline (it has {', '.join(self.names)})") from None

    def upto(self, name: str) -> "Pipeline":
        """The stages up to and including ``name`` (a prefix to run once)."""
        return Pipeline(self.stages[:self._at(name) + 1])

    def after(self, name: str) -> "Pipeline":
        """The stages after ``name`` (to run over a prefix's candidates)."""
        return Pipeline(self.stages[self._at(name) + 1:])

    def replace(self, name: str, stage: Stage) -> "Pipeline":
        """This pipeline with stage ``name`` replaced by ``stage`` (one stage varied)."""
        i = self._at(name)
        return Pipeline(self.stages[:i] + (stage,) + self.stages[i + 1:])

    def without(self, *names: str) -> "Pipeline":
        """This pipeline without the stages ``names``."""
        for n in names:
            self._at(n)
        return Pipeline(tuple(s for s in self.stages if s.name not in names))


class SearcherView(Corpus, Protocol):
    """The Searcher (``searchkit.searcher``, a layer above) as the stage factories read it: its
    corpus, its config, its retrievers by name and their config sections."""

    @property
    def config(self) -> SearchConfig: ...

    @property
    def retrievers(self) -> Mapping[str, Retriever]: ...

    def section_value(self, name: str, key: str, default: object) -> Any: ...


def _retrieve(s: SearcherView) -> Stage:
    return RetrieveStage(s, {name: s.section_value(name, "depth", 100) for name in s.retrievers})


def _rerank(s: SearcherView) -> Stage | None:
    return RerankStage(s, s.config.rerank, s.config.fusion.rrf_k) if s.config.rerank.enabled else None


def _evidence(s: SearcherView) -> Stage:
    wm = s.config.weak_match
    return EvidenceStage(s, wm.evidence_depth, wm.attribution_depth, wm.attribution_passages, s.config.fusion.rrf_k)


def _speaker(s: SearcherView) -> Stage | None:
    f = s.config.fusion
    return SpeakerStage(s, f.speaker, f.speaker_depth, f.rrf_k) if f.speaker > 0 else None


def _date(s: SearcherView) -> Stage | None:
    f = s.config.fusion
    return DateStage(s, f.date, f.date_depth) if f.date > 0 else None


STAGES: dict[str, Callable[[Any], Stage | None]] = {
    "retrieve": _retrieve,
    "fuse": lambda s: FuseStage(s, s.config.fusion),
    "rerank": _rerank,
    "evidence": _evidence,
    "speaker": _speaker,
    "date": _date,
    "cut": lambda _searcher: CutStage(),
}
"""Stage factories by name: each builds its stage for a Searcher from its config (None: the
config turns the stage off, and the pipeline leaves it out)."""


def build_pipeline(searcher: SearcherView, order: Sequence[str] = ORDER) -> Pipeline:
    """The search path of ``searcher`` under its config: the stages of ``order`` that are on."""
    built = (STAGES[name](searcher) for name in order)
    return Pipeline(tuple(s for s in built if s is not None))
