"""Scoring a TREC run file on a dataset split with the metrics ``searchkit eval`` reports (issue 40
item 3): another system's run, or the ``run.trec`` of one of our run folders.

``evaluate_trec_run`` ranks each query's documents as trec_eval does (``TrecRun.ranking``: score
descending, ties by document id descending) and computes what ``eval`` computes from a ranking
(``run.summarize``): nDCG@10, RR@10, R@1/5/10/20/100 over the split's answerable queries, their
breakdowns by language, category, kind and kinds filter, and the per-query figures. A run file holds
no weak-match probability and no warnings: the no-answer and missing-ID figures are not measured.

Every query of the split counts: one the run does not rank scores 0 on every metric (as trec_eval
``-c``, and as ``eval`` where the Searcher found nothing). Queries of the run outside the split are
left out. An id is matched as written, else as ``trec.untrec_id`` decodes it (our writer's
``%XX``). The report's ``counts`` say how many queries were unranked, how many of the run's queries
lay outside the split and how many ranked documents are not in the corpus (they count as not
relevant).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from typing import Sequence

from searchkit.evaluate.datasets import Dataset
from searchkit.evaluate.metrics import RANKING_METRICS
from searchkit.evaluate.run import EvalReport, QueryOutcome, summarize
from searchkit.evaluate.trec import TrecRun, read_trec_run, untrec_id

__all__ = ["TREC_PATH", "evaluate_trec_run"]

TREC_PATH = "trec"
"""The ``path`` of a report measured from a TREC run file (``searcher`` / ``tool`` for our own runs)."""


def _fingerprint(run: TrecRun) -> str:
    """``trec:`` and the first 16 hex digits of the sha256 of the run's content (ids, scores)."""
    h = hashlib.sha256()
    for qid in sorted(run.scores):
        for doc, score in sorted(run.scores[qid].items()):
            h.update(f"{qid}\t{doc}\t{score!r}\n".encode("utf-8"))
    return "trec:" + h.hexdigest()[:16]


def evaluate_trec_run(run: TrecRun | str | os.PathLike[str], dataset: Dataset, *,
                      metrics: Sequence[str] = RANKING_METRICS) -> EvalReport:
    """Score a TREC run (a ``TrecRun``, or a run file's path, read with ``read_trec_run``) on
    ``dataset`` (a loaded split) with the metrics ``eval`` reports (``metrics``: any ir_measures
    measures, ``searchkit.evaluate.measures``; default nDCG@10, RR@10, R@1/5/10/20/100).

    Returns:
        An ``EvalReport`` with ``path`` ``"trec"``, ``config_fingerprint`` ``trec:<content hash>``,
        empty ``no_answer``, ``missing_id`` over no query, timings 0, and ``counts`` extended with ``unranked_queries``,
        ``run_queries_outside_split`` and ``unknown_documents``.

    Raises:
        DataError: the file is missing or holds a bad line (``file:line: why``).
    """
    if not isinstance(run, TrecRun):
        run = read_trec_run(run)
    by_id: dict[str, str] = {}
    for key in run.scores:
        by_id.setdefault(key, key)
    for key in run.scores:
        by_id.setdefault(untrec_id(key), key)
    corpus = {r.id for r in dataset.records}
    kind_of = {r.id: r.kind for r in dataset.records}
    split_ids = {q.id for q in dataset.queries}
    outcomes = []
    unranked = unknown = 0
    depth = 0
    for q in dataset.queries:
        run_key = by_id.get(q.id)
        ranked = run.ranking(run_key) if run_key is not None else []
        unranked += not ranked
        docs = []
        for doc, _score in ranked:
            if doc not in corpus and untrec_id(doc) in corpus:
                doc = untrec_id(doc)
            unknown += doc not in corpus
            docs.append(doc)
        depth = max(depth, len(docs))
        relevant = dataset.qrels.get(q.id, {})
        outcomes.append(QueryOutcome(
            query_id=q.id, lang=q.lang or "", category=q.category or "", answerable=bool(q.answerable),
            ranking=tuple(docs), scores=tuple(s for _d, s in ranked), answer_probability=float("nan"),
            weak_match=False, missing_ids=(), latency_ms=0.0, kinds=tuple(q.kinds or ()),
            relevant_kinds=tuple(sorted({kind_of[d] for d, g in relevant.items() if g > 0 and d in kind_of})),
        ))
    outside = sum(1 for key in run.scores if key not in split_ids and untrec_id(key) not in split_ids)
    report = summarize(dataset, None, outcomes, path=TREC_PATH, depth=depth or 100, no_answer=False,
                       fingerprint=_fingerprint(run), metrics=metrics)
    counts = {**report.counts, "unranked_queries": unranked, "run_queries_outside_split": outside,
              "unknown_documents": unknown}
    timing = {k: 0.0 for k in report.timing}
    return replace(report, counts=counts, timing=timing)
