"""Run a dataset's queries through the Searcher and measure them (SPEC E4).

What is measured is what ships: the same ``Searcher`` and ``SearchConfig`` the tools use, and with
``as_tool=True`` the history tool's own path (scope, privacy, kind diversity H8, its card limit).
Ranking metrics (nDCG@10, RR@10, R@1/5/10/20/100; ranx) are over the answerable queries, whole and
broken down by language, category and kind; the no-answer metrics read the weak-match probability
of every query against its ``answerable`` label; the missing-ID figures (H12) read the warning
against the ``id_in_corpus`` label.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence

import numpy as np

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.evaluate.datasets import Dataset, Query
from searchkit.evaluate.halves import query_shape, run_shape
from searchkit.evaluate.metrics import (
    RANKING_METRICS,
    missing_id_metrics,
    no_answer_metrics,
    per_query_metrics,
    ranking_metrics,
)
from searchkit.evaluate.trec import strictly_decreasing
from searchkit.ingest.policy import can_see
from searchkit.ingest.workspace import SpaceInfo
from searchkit.searcher import Filters, Searcher
from searchkit.records import Record, Result
from searchkit.tools.history import MAX_LIMIT_SPACES, HistoryIndex

if TYPE_CHECKING:
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedding import Embedder

PATHS: tuple[str, ...] = ("searcher", "tool")
"""What ``evaluate_dataset`` can measure: the Searcher itself, or the history tool's path."""

EVAL_CALLER = "eval:member"
"""On the tool path, the caller of a query that names none: a member of every space who owns
nothing, so nobody's personal records are visible to it (H15)."""

BREAKDOWNS: dict[str, Callable[[Mapping[str, Any]], Iterable[str]]] = {
    "by_lang": lambda q: [q["lang"]] if q.get("lang") else [],
    "by_category": lambda q: [q["category"]] if q.get("category") else [],
    "by_kind": lambda q: list(q.get("relevant_kinds") or ()),
    "by_kinds_filter": lambda q: list(q.get("kinds") or ()) or ["any"],
}
"""Groups of a query (a per-query row of ``EvalReport.to_dict(with_queries=True)``) in each
breakdown: its language; its category; the kinds of its relevant records (a query with relevant
records of two kinds is in both groups); its ``kinds`` filter (``any`` when it has none). A
breakdown is reported when the answerable queries fall into more than one group."""


class JudgedSplit(Protocol):
    """What ``summarize`` and ``per_query`` read of a loaded split (a ``Dataset``, a ``TaskSet``, a
    labelled workspace): its name, split, records (counted) and judgements."""

    @property
    def name(self) -> str: ...

    @property
    def split(self) -> str: ...

    @property
    def records(self) -> Sequence[Record]: ...

    @property
    def qrels(self) -> Mapping[str, Mapping[str, int]]: ...


@dataclass(frozen=True)
class QueryOutcome:
    """One query's ranked ids, its weak-match probability and its warnings."""

    query_id: str
    lang: str
    category: str
    answerable: bool
    ranking: tuple[str, ...]
    answer_probability: float
    weak_match: bool
    missing_ids: tuple[str, ...]
    latency_ms: float
    signals: Mapping[str, float] = field(default_factory=dict)
    kinds: tuple[str, ...] = ()
    relevant_kinds: tuple[str, ...] = ()
    id_in_corpus: bool | None = None
    scores: tuple[float, ...] = ()
    """The final score of each ranked record (the Searcher's hit score), in ``ranking`` order; empty
    where the ranking came without scores (then ``EvalReport.run`` scores by rank)."""

    def row(self) -> dict[str, Any]:
        """The fields breakdowns group by (see ``BREAKDOWNS``)."""
        return {"lang": self.lang, "category": self.category, "kinds": list(self.kinds),
                "relevant_kinds": list(self.relevant_kinds)}


@dataclass(frozen=True)
class EvalReport:
    dataset: str
    split: str
    config_fingerprint: str
    metrics: Mapping[str, float]
    no_answer: Mapping[str, float]
    by_lang: Mapping[str, Mapping[str, float]]
    counts: Mapping[str, int]
    timing: Mapping[str, float]
    outcomes: tuple[QueryOutcome, ...] = ()
    by_category: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    by_kind: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    by_kinds_filter: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    missing_id: Mapping[str, float] = field(default_factory=dict)
    per_query: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    path: str = "searcher"
    depth: int = 100
    shape: str = "documents"
    """The weak-match model that scored the queries (``conversation`` / ``documents``; ``mixed``: both,
    each query's in its ``conversation_model`` signal)."""

    def breakdowns(self) -> dict[str, Mapping[str, Mapping[str, float]]]:
        """``{"by_lang": {...}, "by_category": {...}, "by_kind": {...}, "by_kinds_filter": {...}}``."""
        return {name: getattr(self, name) for name in BREAKDOWNS}

    def to_dict(self, with_queries: bool = False) -> dict[str, Any]:
        d = {
            "dataset": self.dataset,
            "split": self.split,
            "config_fingerprint": self.config_fingerprint,
            "path": self.path,
            "depth": self.depth,
            "shape": self.shape,
            "metrics": dict(self.metrics),
            "no_answer": dict(self.no_answer),
            "missing_id": dict(self.missing_id),
            **{name: {k: dict(v) for k, v in groups.items()} for name, groups in self.breakdowns().items()},
            "counts": dict(self.counts),
            "timing": dict(self.timing),
        }
        if with_queries:
            d["queries"] = [
                {
                    "id": o.query_id,
                    "lang": o.lang,
                    "category": o.category,
                    "answerable": o.answerable,
                    "kinds": list(o.kinds),
                    "relevant_kinds": list(o.relevant_kinds),
                    "id_in_corpus": o.id_in_corpus,
                    "metrics": dict(self.per_query[o.query_id]) if o.query_id in self.per_query else None,
                    "ranking": list(o.ranking[:10]),
                    "answer_probability": o.answer_probability,
                    "weak_match": o.weak_match,
                    "missing_ids": list(o.missing_ids),
                    "signals": dict(o.signals),
                }
                for o in self.outcomes
            ]
        return d

    def run(self) -> dict[str, dict[str, float]]:
        """The run as ``{query_id: {doc_id: score}}``: each record's final score, strictly decreasing
        with rank (``trec.strictly_decreasing``: a tie is nudged one float32 step down), so any reader ranks
        as we did (scores by rank where an outcome has none)."""
        return _run_of(self.outcomes)


def _run_of(outcomes: Iterable[QueryOutcome]) -> dict[str, dict[str, float]]:
    """Rankings as a ranx-style run: the real scores, made strictly decreasing in our order (so a tie
    keeps our order wherever it is read), or rank-derived scores for an outcome without scores."""
    run: dict[str, dict[str, float]] = {}
    for o in outcomes:
        if o.scores and len(o.scores) == len(o.ranking):
            values = strictly_decreasing(o.scores)
        else:
            values = [float(len(o.ranking) - i) for i in range(len(o.ranking))]
        run[o.query_id] = dict(zip(o.ranking, values))
    return run


def evaluate_dataset(
    dataset: Dataset,
    config: SearchConfig | None = None,
    *,
    searcher: Searcher | None = None,
    embedder: Embedder | None = None,
    cache: EmbeddingCache | None = None,
    depth: int = 100,
    show_progress: bool = True,
    as_tool: bool = False,
    metrics: Sequence[str] = RANKING_METRICS,
) -> EvalReport:
    """Index ``dataset.records`` (unless ``searcher`` is given), run every query of the split,
    and compute the ranking metrics (answerable queries), their breakdowns, the no-answer and
    the missing-ID figures.

    With ``as_tool`` (a workspace-style dataset: every record has a ``space``) each query goes
    through ``HistoryIndex.search``, the path the history tool ships: the caller's spaces and
    privacy (H14, H15; ``EVAL_CALLER`` when the query names no caller), kind diversity (H8) and
    the tool's card limit (15 with ``spaces``), and the warnings computed over those cards.
    ``metrics`` are the ranking metrics reported (any ir_measures measure:
    ``searchkit.evaluate.measures``; default nDCG@10, RR@10, R@1/5/10/20/100).

    Raises:
        ValueError: ``as_tool`` on a dataset with records outside any space.
    """
    tool = _tool_for(dataset) if as_tool else None  # refuse before anything is built
    config = config or (searcher.config if searcher is not None else SearchConfig())
    t0 = time.perf_counter()
    if searcher is None:
        searcher = Searcher.build(dataset.records, config, embedder=embedder, cache=cache, show_progress=show_progress)
    index_s = time.perf_counter() - t0
    if tool is not None:
        tool = tool(searcher)

        depth = MAX_LIMIT_SPACES

    queries = list(dataset.queries)
    # prepare every query text in batches first (the dense retriever embeds them in parallel
    # into its cache); the per-query searches below then only look them up
    searcher.warm(sorted({q.text.strip() for q in queries if q.text.strip()}), show_progress=show_progress)
    it = queries
    if show_progress:
        from tqdm.auto import tqdm

        it = tqdm(queries, desc=f"queries {dataset.name}", unit="q")
    kind_of = {r.id: r.kind for r in dataset.records}
    outcomes = []
    for q in it:
        s = time.perf_counter()
        if tool is not None:
            res = tool(q)
        else:
            filters = None
            if q.kinds or q.since or q.until or q.spaces or q.caller:
                filters = Filters(
                    kinds=tuple(q.kinds) if q.kinds else None,
                    since=q.since,
                    until=q.until,
                    spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None,
                    visible=_visible_to(q.caller) if q.caller else None,
                )
            res = searcher.search(q.text, k=depth, filters=filters)
        ms = (time.perf_counter() - s) * 1000
        mi = res.warning("missing_ids")
        relevant = dataset.qrels.get(q.id, {})
        outcomes.append(
            QueryOutcome(
                query_id=q.id,
                lang=q.lang or "",
                category=q.category or "",
                answerable=bool(q.answerable),
                ranking=tuple(h.record.id for h in res.hits),
                scores=tuple(float(h.score) for h in res.hits),
                answer_probability=float(res.signals.get("answer_probability", 0.0)),
                weak_match=res.warning("weak_match") is not None,
                missing_ids=tuple(mi.detail.get("ids", ())) if mi else (),
                latency_ms=ms,
                signals={k: float(v) for k, v in res.signals.items()},
                kinds=tuple(q.kinds or ()),
                relevant_kinds=tuple(sorted({kind_of[d] for d, g in relevant.items() if g > 0 and d in kind_of})),
                id_in_corpus=q.id_in_corpus,
            )
        )
    return summarize(dataset, searcher.config, outcomes, index_s=index_s,
                     path="tool" if tool is not None else "searcher", depth=depth, shape=_models_used(outcomes),
                     metrics=metrics)


def _models_used(outcomes: list[QueryOutcome]) -> str:
    """The weak-match model(s) that scored the queries (``documents``, ``conversation`` or ``mixed``;
    each query's own is its ``conversation_model`` signal)."""
    return run_shape(query_shape(o.signals) for o in outcomes if o.signals)


def _tool_for(dataset: Dataset) -> Callable[[Any], Callable[[Any], Any]]:
    """For ``as_tool``: a factory that, given the Searcher, returns ``query -> Result`` through
    ``HistoryIndex.search``. Every space of the dataset has as members every record owner, every
    query's caller and ``EVAL_CALLER``; history search is on in all of them."""
    outside = [r.id for r in dataset.records if not r.space]
    if outside:
        raise DataError(
            f"--as-tool needs a workspace-style dataset (every record in a space); {dataset.name} has "
            f"{len(outside)} record(s) without 'space', e.g. {outside[0]!r}", reason="dataset"
        )

    people = {r.owner for r in dataset.records if r.owner} | {q.caller for q in dataset.queries if q.caller}
    members = tuple(sorted(people | {EVAL_CALLER}))
    slugs = sorted({r.space for r in dataset.records})
    spaces = {s: SpaceInfo(slug=s, title=s, members=members) for s in slugs}

    def build(searcher: Searcher) -> Callable[[Query], Result]:
        index = HistoryIndex(searcher, spaces)

        def run(q: Query) -> Result:
            wanted = list(q.spaces) if isinstance(q.spaces, tuple) else "all"
            home = wanted[0] if isinstance(wanted, list) else slugs[0]
            answer = index.search(
                q.text, kinds=list(q.kinds) if q.kinds else None, since=q.since, until=q.until,
                limit=MAX_LIMIT_SPACES, spaces=wanted, caller=q.caller or EVAL_CALLER,
                container="personal", space=home,
            )
            return answer.result

        return run

    return build


def _visible_to(caller: str) -> Callable[[Record], bool]:
    """H15 for dataset queries with a ``caller``: personal records of others are never seen."""
    return lambda r: can_see(r, caller, "personal")


def summarize(
    dataset: JudgedSplit,
    config: SearchConfig | None,
    outcomes: list[QueryOutcome],
    *,
    index_s: float = 0.0,
    breakdowns: bool = True,
    path: str = "searcher",
    depth: int = 100,
    shape: str = "documents",
    no_answer: bool = True,
    fingerprint: str | None = None,
    metrics: Sequence[str] = RANKING_METRICS,
) -> EvalReport:
    """Metrics of a list of outcomes (also used to re-score a subset, e.g. one half). With
    ``breakdowns`` false, only the overall figures are computed (what tuning needs). With
    ``no_answer`` false (rankings that carry no weak-match probability, e.g. a TREC run file) the
    no-answer figures are not computed (empty). ``fingerprint`` names what produced the outcomes
    where no ``config`` did (``config`` may then be None). ``metrics``: the ranking metrics (any
    ir_measures measure; ``searchkit.evaluate.measures``)."""
    names = tuple(metrics)
    qrels = {qid: dict(d) for qid, d in dataset.qrels.items()}
    run = _run_of(outcomes)
    answerable_ids = {o.query_id for o in outcomes if o.answerable}
    qrels_a = {qid: d for qid, d in qrels.items() if qid in answerable_ids}
    figures = ranking_metrics(qrels_a, run, names) if qrels_a else {m: float("nan") for m in names}
    no_answer_figures = no_answer_metrics(
        [o.answerable for o in outcomes], [o.answer_probability for o in outcomes], [o.weak_match for o in outcomes]
    ) if no_answer else {}
    groups: dict[str, dict[str, dict[str, float]]] = {name: {} for name in BREAKDOWNS}
    per_q: dict[str, dict[str, float]] = {}
    missing: dict[str, float] = {}
    if breakdowns:
        for name, labels in BREAKDOWNS.items():
            members: dict[str, set[str]] = {}
            for o in outcomes:
                if o.query_id in qrels_a:
                    for g in labels(o.row()):
                        members.setdefault(g, set()).add(o.query_id)
            if len(members) > 1:
                for g in sorted(members):
                    # every group carries its query count ``n`` beside its figures (issue 31 item 2)
                    groups[name][g] = {"n": len(members[g]),
                                       **ranking_metrics({q: qrels_a[q] for q in sorted(members[g])}, run, names)}
        per_q = per_query_metrics(qrels_a, run, names)
        labelled = [o for o in outcomes if o.id_in_corpus is not None]
        missing = missing_id_metrics([bool(o.id_in_corpus) for o in labelled], [bool(o.missing_ids) for o in labelled])
    lat = np.array([o.latency_ms for o in outcomes]) if outcomes else np.zeros(1)
    counts = {
        "queries": len(outcomes),
        "answerable": sum(o.answerable for o in outcomes),
        "unanswerable": sum(not o.answerable for o in outcomes),
        "judged": len(qrels_a),
        "records": len(dataset.records),
        "id_labelled": sum(o.id_in_corpus is not None for o in outcomes),
    }
    timing = {
        "index_s": round(index_s, 3),
        "query_ms_p50": round(float(np.percentile(lat, 50)), 3),
        "query_ms_p95": round(float(np.percentile(lat, 95)), 3),
    }
    if fingerprint is None:
        assert config is not None, "summarize: no config, no fingerprint"  # every caller gives one
        fingerprint = config.fingerprint()
    return EvalReport(
        dataset=dataset.name,
        split=dataset.split,
        config_fingerprint=fingerprint,
        metrics=figures,
        no_answer=no_answer_figures,
        by_lang=groups["by_lang"],
        counts=counts,
        timing=timing,
        outcomes=tuple(outcomes),
        by_category=groups["by_category"],
        by_kind=groups["by_kind"],
        by_kinds_filter=groups["by_kinds_filter"],
        missing_id=missing,
        per_query=per_q,
        path=path,
        depth=depth,
        shape=shape,
    )


def per_query(report: EvalReport, dataset: JudgedSplit) -> dict[str, dict[str, float]]:
    """Per-query ranking metrics of a report (answerable, judged queries)."""
    ids = {o.query_id for o in report.outcomes if o.answerable}
    qrels = {qid: dict(d) for qid, d in dataset.qrels.items() if qid in ids}
    return per_query_metrics(qrels, report.run())
