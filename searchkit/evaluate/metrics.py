"""Metrics, backed by ir_measures (ranking, through trec_eval's pytrec_eval) and scikit-learn
(no-answer separation).

Names print as what they are: ``nDCG@10``, ``RR@10`` (reciprocal rank cut at 10), ``R@k`` (recall at
k), ``P@k`` (precision at k) — ir_measures' own names, so each metric is the value whose ``repr`` is
its parse string. Nothing here hand-computes a standard metric. ir_measures calls trec_eval's C code
(pytrec_eval; MS MARCO's evaluator for ``RR@10``, which trec_eval cannot cut): no per-process compile (ranx, used before, spent 8-35 s compiling numba code in every new process;
``tests/test_metrics.py`` keeps a parity test against ranx). A query's documents are ranked by score,
ties in the run's own order (trec_eval would break them by document id), so the metric reads the
ranking the run shows.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

RECALL_KS: tuple[int, ...] = (1, 5, 10, 20, 100)

RANKING_METRICS: tuple[str, ...] = ("nDCG@10", "RR@10", *(f"R@{k}" for k in RECALL_KS))
"""The ranking metrics every eval reports (SPEC E4), by their ir_measures names."""

METRICS: tuple[str, ...] = (*RANKING_METRICS, "P@10")
"""Every metric name ``ranking_metrics`` accepts (the reported ones and a few more)."""

_NONE = "__none__"
"""The one impossible document a judged query with an empty ranking gets, so it counts as 0."""


@lru_cache(maxsize=None)
def _measure(name: str):
    import ir_measures

    return ir_measures.parse_measure(name)


def _inputs(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]]):
    """Positive judgements of the judged queries, and their rankings as strictly decreasing scores."""
    q = {qid: {str(d): int(s) for d, s in docs.items() if int(s) > 0} for qid, docs in qrels.items()}
    q = {qid: docs for qid, docs in q.items() if docs}
    r: dict[str, dict[str, float]] = {}
    for qid in q:
        docs = sorted(run.get(qid, {}).items(), key=lambda kv: -float(kv[1]))  # stable: ties keep run order
        r[qid] = {str(d): float(len(docs) - i) for i, (d, _) in enumerate(docs)} or {_NONE: 0.0}
    return q, r


def _check_names(metrics: Sequence[str]) -> None:
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; valid: {list(METRICS)}")


def per_query_metrics(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = RANKING_METRICS,
) -> dict[str, dict[str, float]]:
    """``{query_id: {metric: value}}`` for the judged queries, in qrels order (for significance tests)."""
    import ir_measures

    _check_names(metrics)
    q, r = _inputs(qrels, run)
    out: dict[str, dict[str, float]] = {qid: {} for qid in q}
    if not out:
        return out
    names = {_measure(m): m for m in metrics}
    by_provider: dict[object, list] = {}
    for measure in names:  # trec_eval where it has the measure, MS MARCO's evaluator for RR@k
        provider = next(p for p in (ir_measures.pytrec_eval, ir_measures.msmarco) if p.supports(measure))
        by_provider.setdefault(provider, []).append(measure)
    for provider, measures in by_provider.items():
        for row in provider.iter_calc(measures, q, r):
            out[row.query_id][names[row.measure]] = float(row.value)
    return {qid: {m: vals[m] for m in metrics} for qid, vals in out.items()}


def ranking_metrics(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = RANKING_METRICS,
) -> dict[str, float]:
    """Mean of each metric over the queries that have positive judgements (nan when there are none)."""
    per_query = per_query_metrics(qrels, run, metrics)
    if not per_query:
        return {m: float("nan") for m in metrics}
    import numpy as np

    return {m: float(np.mean([v[m] for v in per_query.values()])) for m in metrics}


def no_answer_metrics(answerable: Sequence[bool], answer_prob: Sequence[float], warned: Sequence[bool]) -> dict[str, float]:
    """How well the weak-match signal separates answerable from unanswerable queries.

    ``AUROC`` of P(answer) against the label (0.5 = chance), ``AP-noanswer`` (average
    precision of flagging unanswerable queries, by 1 - P), and for the warning as fired:
    ``warn-precision`` / ``warn-recall`` over unanswerable queries and ``false-warn-rate``
    over answerable ones. ``recall@5%FW``: a point of the ROC curve, the share of unanswerable
    queries flagged by the best threshold that flags at most 5% of the answerable ones (a property
    of the probabilities on these queries, not of the shipped threshold).
    """
    from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

    y = [bool(a) for a in answerable]
    out: dict[str, float] = {}
    if len(set(y)) == 2:
        out["AUROC"] = float(roc_auc_score(y, list(answer_prob)))
        out["AP-noanswer"] = float(average_precision_score([not a for a in y], [1 - p for p in answer_prob]))
        fpr, tpr, _ = roc_curve([not a for a in y], [1 - p for p in answer_prob])
        out["recall@5%FW"] = float(max(t for f, t in zip(fpr, tpr) if f <= 0.05))
    else:
        out["AUROC"] = float("nan")
        out["AP-noanswer"] = float("nan")
        out["recall@5%FW"] = float("nan")
    tp = sum(1 for a, w in zip(y, warned) if w and not a)
    fp = sum(1 for a, w in zip(y, warned) if w and a)
    fn = sum(1 for a, w in zip(y, warned) if not w and not a)
    n_ans = sum(y)
    out["warn-precision"] = tp / (tp + fp) if tp + fp else float("nan")
    out["warn-recall"] = tp / (tp + fn) if tp + fn else float("nan")
    out["false-warn-rate"] = fp / n_ans if n_ans else float("nan")
    return out


def missing_id_metrics(id_in_corpus: Sequence[bool], warned: Sequence[bool]) -> dict[str, float]:
    """How well the missing-ID warning (H12) tells an identifier the corpus never mentions.

    Over queries that name an identifier and carry the ``id_in_corpus`` label: the positive class
    is "the corpus does not mention it". ``precision`` / ``recall`` of the warning as fired
    (scikit-learn; nan when undefined), ``false-warn-rate`` (warned although the corpus mentions
    every named id), and the counts.
    """
    from sklearn.metrics import precision_score, recall_score

    absent = [not bool(x) for x in id_in_corpus]
    fired = [bool(w) for w in warned]
    if len(absent) != len(fired):
        raise ValueError(f"{len(absent)} labels but {len(fired)} warnings")
    out: dict[str, float] = {"queries": len(absent), "id_absent": sum(absent), "warned": sum(fired)}
    nan = float("nan")
    if not absent:
        return {**out, "precision": nan, "recall": nan, "false-warn-rate": nan}
    out["precision"] = float(precision_score(absent, fired, zero_division=nan)) if any(fired) else nan
    out["recall"] = float(recall_score(absent, fired, zero_division=nan)) if any(absent) else nan
    present = [f for a, f in zip(absent, fired) if not a]
    out["false-warn-rate"] = (sum(present) / len(present)) if present else nan
    return out
