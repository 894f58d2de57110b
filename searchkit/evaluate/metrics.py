"""Metrics, backed by ir_measures (ranking, through trec_eval's pytrec_eval) and scikit-learn
(no-answer separation).

Any ir_measures measure is a ranking metric here (the registry, ``searchkit.evaluate.measures``, checks
the name and gives its canonical form). Names print as what they are: ``nDCG@10``, ``RR@10``
(reciprocal rank cut at 10), ``R@k`` (recall at k), ``P@k`` (precision at k), ``AP``, ``Judged@10``
— ir_measures' own names, so each metric is the value whose ``repr`` is its parse string. Nothing here
hand-computes a standard metric. ir_measures calls trec_eval's C code (pytrec_eval; MS MARCO's
evaluator for ``RR@10``, which trec_eval cannot cut; its own ``judged`` evaluator for ``Judged@k``):
no per-process compile (ranx, used before, spent 8-35 s compiling numba code in every new process;
``tests/test_metrics.py`` keeps a parity test against ranx). A query's documents are ranked by score,
ties in the run's own order (trec_eval would break them by document id), so the metric reads the
ranking the run shows.

The queries measured are the judged ones: those with at least one positive judgement. Their whole
judgements go to the evaluator, grade 0 included, so a measure that reads non-relevant judgements
(``Judged@k``, ``Bpref``, ``infAP``) sees them; a grade-0 judgement adds nothing to nDCG, RR, R or P,
whose values are those computed before (tests/test_measures.py checks them bit for bit).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from searchkit.evaluate.measures import DEFAULT_METRICS, RECALL_KS, ir_measure, metric, provider_of
from searchkit.errors import InputError

__all__ = ["METRICS", "RANKING_METRICS", "RECALL_KS", "missing_id_metrics", "no_answer_metrics", "per_query_metrics",
           "ranking_metrics"]

RANKING_METRICS: tuple[str, ...] = DEFAULT_METRICS
"""The ranking metrics every eval reports unless told otherwise (SPEC E4), by their ir_measures names."""

METRICS: tuple[str, ...] = (*RANKING_METRICS, "P@10")
"""The metrics reported before issue 40 and P@10 (any ir_measures measure is accepted now:
``searchkit.evaluate.measures``)."""

_NONE = "__none__"
"""The one impossible document a judged query with an empty ranking gets, so it counts as 0."""


def _inputs(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]]):
    """The judgements of the judged queries (at least one positive; every grade kept), and their
    rankings as strictly decreasing scores (rank-based, so ties keep the run's order)."""
    q = {qid: {str(d): int(s) for d, s in docs.items()} for qid, docs in qrels.items()}
    q = {qid: docs for qid, docs in q.items() if any(s > 0 for s in docs.values())}
    r: dict[str, dict[str, float]] = {}
    for qid in q:
        docs = sorted(run.get(qid, {}).items(), key=lambda kv: -float(kv[1]))  # stable: ties keep run order
        r[qid] = {str(d): float(len(docs) - i) for i, (d, _) in enumerate(docs)} or {_NONE: 0.0}
    return q, r


def _measures(metrics: Sequence[str]) -> dict[object, list[str]]:
    """Each ir_measures measure asked for, with the names it was asked under (``MAP`` and ``AP`` are
    one measure). Raises ``InputError`` (a ``ValueError``) for a name that is not an ir_measures
    measure the installed evaluators compute."""
    out: dict[object, list[str]] = {}
    for name in metrics:
        entry = metric(name)
        if entry.source != "ir_measures":
            raise InputError(f"{name[:60]!r} is not a ranking metric; ranking metrics are ir_measures measures "
                              "(e.g. nDCG@10, RR@10, R@100, AP, Judged@10)")
        out.setdefault(ir_measure(entry.name), []).append(name)
    return out


def per_query_metrics(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = RANKING_METRICS,
) -> dict[str, dict[str, float]]:
    """``{query_id: {metric: value}}`` for the judged queries, in qrels order (for significance tests)."""
    names = _measures(metrics)
    q, r = _inputs(qrels, run)
    out: dict[str, dict[str, float]] = {qid: {} for qid in q}
    if not out:
        return out
    by_provider: dict[Any, list] = {}  # an ir_measures provider (untyped)
    for measure in names:  # trec_eval where it has the measure, MS MARCO's evaluator for RR@k, ...
        by_provider.setdefault(provider_of(measure), []).append(measure)
    for provider, measures in by_provider.items():
        for row in provider.iter_calc(measures, q, r):
            if row.query_id in out:
                for name in names[row.measure]:
                    out[row.query_id][name] = float(row.value)
    missing = next(((qid, m) for qid, vals in out.items() for m in metrics if m not in vals), None)
    if missing is not None:
        raise InputError(f"{missing[1]!r}: the evaluator gave no value for query {missing[0][:60]!r}")
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
