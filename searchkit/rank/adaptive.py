"""Query-adaptive fusion (SPEC H11's ranking side; issue 11 item 1): the fusion weights of one query
chosen from what the retrievers returned *before* fusing.

A small logistic model reads pre-fusion features of the query's runs (each retriever's score shape,
the agreement of the two top lists, the query's length) and gives the share of one retriever
(``AdaptiveFusion.retriever``, BM25 by default) between ``lo`` and ``hi``::

    share = lo + (hi - lo) * sigmoid(intercept + coef . features)

The other retrievers split the rest in the proportions of ``fusion.weights``. The model is fitted
by ``searchkit tune adaptive-fusion`` (``searchkit.evaluate.adaptive``): a cost-sensitive logistic
regression (scikit-learn) on the tune halves that learns, query by query, whether the ``hi`` or the
``lo`` share ranks the relevant records better, each query weighing by how much better.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from searchkit.rank.candidates import Candidates

__all__ = ["FEATURES", "features", "share", "weights_for"]

_SHAPES = ("bm25_top1", "bm25_margin", "bm25_z", "dense_top1", "dense_margin", "dense_gap10", "dense_z")


def _shape(name: str) -> Callable[[Candidates], float]:
    def fn(c: Candidates) -> float:
        from searchkit.rank.signals import FEATURES as SIGNALS

        return float(SIGNALS[name](c))

    return fn


def _top(c: Candidates, name: str, n: int) -> list[int]:
    run = c.runs.get(name)
    if run is None:
        return []
    return [ri for ri, _ in sorted(run.ranks.items(), key=lambda item: item[1])[:n]]


def _overlap10(c: Candidates) -> float:
    """Share of BM25's top 10 records that are also in dense's top 10."""
    a, b = _top(c, "bm25", 10), _top(c, "dense", 10)
    return len(set(a) & set(b)) / 10.0 if a and b else 0.0


def _top1_agree(c: Candidates) -> float:
    a, b = _top(c, "bm25", 1), _top(c, "dense", 1)
    return 1.0 if a and a == b else 0.0


def _query_terms(c: Candidates) -> float:
    """log(1 + distinct analysed query terms)."""
    run = c.runs.get("bm25")
    terms = set(run.query) if run is not None and run.query is not None else set()
    return math.log1p(len(terms))


def _bm25_top1_per_term(c: Candidates) -> float:
    """The best BM25 score per distinct query term (the query's IDF mass the top record holds)."""
    run = c.runs.get("bm25")
    if run is None or not run.records:
        return 0.0
    n = len(set(run.query or ()))
    return max(run.records.values()) / max(1, n)


FEATURES: dict[str, Callable[[Candidates], float]] = {
    **{name: _shape(name) for name in _SHAPES},
    "overlap10": _overlap10,
    "top1_agree": _top1_agree,
    "query_terms": _query_terms,
    "bm25_top1_per_term": _bm25_top1_per_term,
}
"""Pre-fusion features by name: each reads only the retrievers' own runs, never the fused list."""


def features(c: Candidates, names: Any = None) -> dict[str, float]:
    """The pre-fusion features ``names`` (all when None) of one query's candidates."""
    return {n: float(FEATURES[n](c)) for n in (names if names is not None else FEATURES)}


def share(c: Candidates, model: Any) -> float:
    """The share of ``model.retriever`` for this query: ``lo + (hi - lo) * sigmoid(z)``."""
    x = features(c, model.features)
    z = model.intercept + sum(w * x[f] for f, w in zip(model.features, model.coef))
    p = 1.0 / (1.0 + math.exp(-max(min(z, 500.0), -500.0)))
    return model.lo + (model.hi - model.lo) * p


def weights_for(c: Candidates, fusion: Any) -> Mapping[str, float]:
    """The fusion weights of this query: ``fusion.weights`` when ``fusion.adaptive`` is None or its
    retriever did not run; otherwise its share from the model, the rest split among the other
    retrievers in the proportions of ``fusion.weights``."""
    model = getattr(fusion, "adaptive", None)
    base = dict(fusion.weights)
    if model is None or model.retriever not in c.runs or len(c.runs) < 2:
        return base
    s = share(c, model)
    others = {n: base.get(n, 0.0) for n in c.runs if n != model.retriever}
    total = sum(others.values())
    out = {model.retriever: s}
    for n, w in others.items():
        out[n] = (1.0 - s) * (w / total if total > 0 else 1.0 / len(others))
    return out
