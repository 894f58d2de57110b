"""ragas as a metric provider (SPEC E1, E4): its ID-based context precision and recall.

ragas (https://docs.ragas.io) scores retrieval for RAG. Its ``IDBasedContextPrecision`` and
``IDBasedContextRecall`` need no LLM: over a query's retrieved context ids and its reference ids,

    precision = |retrieved ∩ reference| / |retrieved|      recall = |retrieved ∩ reference| / |reference|

Given the top ``k`` of a run as the retrieved contexts and the relevant documents (grade > 0) of the
qrels as the reference, ragas' recall is our ``R@k`` (ranx ``recall@k``) and its precision our
``P@k`` (ranx ``precision@k``) wherever the run returned at least ``k`` documents (ranx divides by
``k``, ragas by the number retrieved). ``tests/test_ragas.py`` checks both.

ragas is optional (the ``research`` extra); ``is_available()`` says whether it is installed and
``INSTALL_HINT`` how to install it. ragas' usage analytics are switched off
(``RAGAS_DO_NOT_TRACK=true``) before it is imported: an eval never calls out to the network.
"""
from __future__ import annotations

import os
import warnings
from typing import Mapping

__all__ = ["INSTALL_HINT", "RagasUnavailable", "is_available", "ragas_scores", "ragas_summary"]

INSTALL_HINT = (
    "ragas is not installed; install the research extra: "
    "SEARCHKIT_EXTRAS=test,research bash scripts/setup.sh (or pip install 'searchkit[research]')"
)


class RagasUnavailable(ImportError):
    """ragas is not installed (the message says how to install it)."""


def is_available() -> bool:
    """True when ragas can be imported."""
    import importlib.util

    return importlib.util.find_spec("ragas") is not None


def _metrics():
    if not is_available():
        raise RagasUnavailable(INSTALL_HINT)
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    with warnings.catch_warnings():
        # ragas 0.4 marks these imports deprecated in favour of ragas.metrics.collections,
        # which does not hold the ID-based metrics yet
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics import IDBasedContextPrecision, IDBasedContextRecall
    return SingleTurnSample, IDBasedContextPrecision(), IDBasedContextRecall()


def names(k: int) -> tuple[str, str]:
    """The names the scores are reported under: ``ragas:id_context_precision@k``, ``…recall@k``."""
    return f"ragas:id_context_precision@{k}", f"ragas:id_context_recall@{k}"


def ragas_scores(
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, int]],
    k: int = 10,
) -> dict[str, dict[str, float]]:
    """ragas' ID-based context precision and recall of the top ``k`` of ``run`` per query.

    Args:
        run: ``{query_id: {doc_id: score}}`` (higher first), e.g. ``EvalReport.run()``.
        qrels: ``{query_id: {doc_id: grade}}``; queries without a positive grade are skipped.
        k: how many top documents count as retrieved.

    Returns:
        ``{query_id: {"ragas:id_context_precision@k": p, "ragas:id_context_recall@k": r}}``;
        precision is nan where the run returned nothing (ragas' own convention).

    Raises:
        RagasUnavailable: ragas is not installed.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    Sample, precision, recall = _metrics()
    p_name, r_name = names(k)
    out: dict[str, dict[str, float]] = {}
    for qid in sorted(qrels):
        reference = [d for d, g in qrels[qid].items() if int(g) > 0]
        if not reference:
            continue
        ranked = sorted(run.get(qid, {}).items(), key=lambda kv: -kv[1])[:k]
        sample = Sample(retrieved_context_ids=[d for d, _ in ranked], reference_context_ids=reference)
        out[qid] = {p_name: float(precision.single_turn_score(sample)), r_name: float(recall.single_turn_score(sample))}
    return out


def ragas_summary(scores: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Mean of each ragas score over the queries where it is defined."""
    import numpy as np

    keys = sorted({m for v in scores.values() for m in v})
    out = {}
    for m in keys:
        vals = np.array([v[m] for v in scores.values() if m in v], dtype=float)
        out[m] = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")
    return out
