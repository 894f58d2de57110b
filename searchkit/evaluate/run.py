"""Run a dataset's queries through the Searcher and measure them (SPEC E4).

What is measured is what ships: the same ``Searcher`` and ``SearchConfig`` the tools use.
Ranking metrics are over the answerable queries; the no-answer metrics read the weak-match
probability of every query against its ``answerable`` label.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from searchkit.config import SearchConfig
from searchkit.evaluate.metrics import RANKING_METRICS, no_answer_metrics, per_query_metrics, ranking_metrics


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

    def to_dict(self, with_queries: bool = False) -> dict[str, Any]:
        d = {
            "dataset": self.dataset,
            "split": self.split,
            "config_fingerprint": self.config_fingerprint,
            "metrics": dict(self.metrics),
            "no_answer": dict(self.no_answer),
            "by_lang": {k: dict(v) for k, v in self.by_lang.items()},
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
        """The run as ``{query_id: {doc_id: score}}`` (scores decrease with rank)."""
        return _run_of(self.outcomes)


def _run_of(outcomes) -> dict[str, dict[str, float]]:
    """Rankings as a ranx-style run; scores are rank-derived, so tied fused scores keep our order."""
    return {o.query_id: {d: float(len(o.ranking) - i) for i, d in enumerate(o.ranking)} for o in outcomes}


def evaluate_dataset(
    dataset: Any,
    config: SearchConfig | None = None,
    *,
    searcher: Any = None,
    embedder: Any = None,
    cache: Any = None,
    depth: int = 100,
    show_progress: bool = True,
) -> EvalReport:
    """Index ``dataset.records`` (unless ``searcher`` is given), run every query of the split,
    and compute nDCG@10, RR@10, R@100 (answerable queries) and the no-answer metrics."""
    from searchkit.searcher import Filters, Searcher

    config = config or (searcher.config if searcher is not None else SearchConfig())
    t0 = time.perf_counter()
    if searcher is None:
        searcher = Searcher.build(dataset.records, config, embedder=embedder, cache=cache, show_progress=show_progress)
    index_s = time.perf_counter() - t0

    queries = list(dataset.queries)
    if getattr(searcher, "dense", None) is not None and getattr(searcher, "cache", None) is not None:
        # embed every query text in batches first (parallel across texts, cached); the
        # per-query searches below then only look them up
        searcher.cache.embed(
            searcher.embedder, sorted({q.text.strip() for q in queries if q.text.strip()}), "query",
            batch_size=searcher.config.dense.batch_size, show_progress=show_progress, desc="embed queries",
        )
    it = queries
    if show_progress:
        from tqdm.auto import tqdm

        it = tqdm(queries, desc=f"queries {dataset.name}", unit="q")
    outcomes = []
    for q in it:
        filters = None
        if q.kinds or q.since or q.until or q.spaces or q.caller:
            filters = Filters(
                kinds=tuple(q.kinds) if q.kinds else None,
                since=q.since,
                until=q.until,
                spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None,
                visible=_visible_to(q.caller) if q.caller else None,
            )
        s = time.perf_counter()
        res = searcher.search(q.text, k=depth, filters=filters)
        ms = (time.perf_counter() - s) * 1000
        mi = res.warning("missing_ids")
        outcomes.append(
            QueryOutcome(
                query_id=q.id,
                lang=q.lang or "",
                category=q.category or "",
                answerable=bool(q.answerable),
                ranking=tuple(h.record.id for h in res.hits),
                answer_probability=float(res.signals.get("answer_probability", 0.0)),
                weak_match=res.warning("weak_match") is not None,
                missing_ids=tuple(mi.detail.get("ids", ())) if mi else (),
                latency_ms=ms,
                signals={k: float(v) for k, v in res.signals.items()},
            )
        )
    return summarize(dataset, searcher.config, outcomes, index_s=index_s)


def _visible_to(caller: str):
    """H15 for dataset queries with a ``caller``: personal records of others are never seen."""
    from searchkit.ingest.policy import can_see

    return lambda r: can_see(r, caller, "personal")


def summarize(dataset: Any, config: SearchConfig, outcomes: list[QueryOutcome], *, index_s: float = 0.0) -> EvalReport:
    """Metrics of a list of outcomes (also used to re-score a subset, e.g. one language)."""
    qrels = {qid: dict(d) for qid, d in dataset.qrels.items()}
    run = _run_of(outcomes)
    answerable_ids = {o.query_id for o in outcomes if o.answerable}
    qrels_a = {qid: d for qid, d in qrels.items() if qid in answerable_ids}
    metrics = ranking_metrics(qrels_a, run) if qrels_a else {m: float("nan") for m in RANKING_METRICS}
    no_answer = no_answer_metrics(
        [o.answerable for o in outcomes], [o.answer_probability for o in outcomes], [o.weak_match for o in outcomes]
    )
    by_lang: dict[str, dict[str, float]] = {}
    langs = sorted({o.lang for o in outcomes if o.lang})
    if len(langs) > 1:
        for lang in langs:
            ids = {o.query_id for o in outcomes if o.lang == lang and o.answerable}
            sub = {qid: d for qid, d in qrels_a.items() if qid in ids}
            if sub:
                by_lang[lang] = ranking_metrics(sub, run)
    lat = np.array([o.latency_ms for o in outcomes]) if outcomes else np.zeros(1)
    counts = {
        "queries": len(outcomes),
        "answerable": sum(o.answerable for o in outcomes),
        "unanswerable": sum(not o.answerable for o in outcomes),
        "judged": len(qrels_a),
        "records": len(dataset.records),
    }
    timing = {
        "index_s": round(index_s, 3),
        "query_ms_p50": round(float(np.percentile(lat, 50)), 3),
        "query_ms_p95": round(float(np.percentile(lat, 95)), 3),
    }
    return EvalReport(
        dataset=dataset.name,
        split=dataset.split,
        config_fingerprint=config.fingerprint(),
        metrics=metrics,
        no_answer=no_answer,
        by_lang=by_lang,
        counts=counts,
        timing=timing,
        outcomes=tuple(outcomes),
    )


def per_query(report: EvalReport, dataset: Any) -> dict[str, dict[str, float]]:
    """Per-query ranking metrics of a report (answerable, judged queries)."""
    ids = {o.query_id for o in report.outcomes if o.answerable}
    qrels = {qid: dict(d) for qid, d in dataset.qrels.items() if qid in ids}
    return per_query_metrics(qrels, report.run())
