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
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from searchkit import registries, retrievers
from searchkit.rank.candidates import Candidates
from searchkit.rank.signals import FEATURES as SIGNALS

if TYPE_CHECKING:
    from searchkit.config import AdaptiveFusion, FusionConfig

__all__ = ["FEATURES", "features", "share", "weights_for"]


def _shape(name: str) -> Callable[[Candidates], float]:
    def fn(c: Candidates) -> float:
        return float(SIGNALS[name](c))

    return fn


def _top(c: Candidates, name: str | None, n: int) -> list[int]:
    run = c.runs.get(name) if name is not None else None
    if run is None:
        return []
    return [ri for ri, _ in sorted(run.ranks.items(), key=lambda item: item[1])[:n]]


def _pair(c: Candidates) -> tuple[str | None, str | None]:
    """The first two runs, in the registry's order (the first retriever and the one after it)."""
    names = list(c.runs)[:2]
    return (names + [None, None])[0], (names + [None, None])[1]


def _overlap10(c: Candidates) -> float:
    """Share of the first retriever's top 10 records that are also in the second's top 10."""
    one, two = _pair(c)
    a, b = _top(c, one, 10), _top(c, two, 10)
    return len(set(a) & set(b)) / 10.0 if a and b else 0.0


def _top1_agree(c: Candidates) -> float:
    one, two = _pair(c)
    a, b = _top(c, one, 1), _top(c, two, 1)
    return 1.0 if a and a == b else 0.0


def _terms_run(c: Candidates) -> Any:
    """The run of the first retriever whose prepared query is the query's terms
    (``RetrieverSpec.terms``), None without one."""
    for name, run in c.runs.items():
        spec = retrievers.RETRIEVERS.get(name)
        if spec is not None and spec.terms:
            return run
    return None


def _query_terms(c: Candidates) -> float:
    """log(1 + distinct analysed query terms)."""
    run = _terms_run(c)
    terms = set(run.query) if run is not None and run.query is not None else set()
    return math.log1p(len(terms))


def _own_feature(name: str, fn: Callable[[Any], float]) -> Callable[[Candidates], float]:
    def feature(c: Candidates) -> float:
        run = c.runs.get(name)
        return float(fn(run)) if run is not None else 0.0

    return feature


class _Features(Mapping[str, Callable[[Candidates], float]]):
    """The pre-fusion features, read live from the retriever registry: for each registered
    retriever ``R``, ``R_<shape>`` for each of its score shapes (``RetrieverSpec.shapes``) and
    ``R_<name>`` for each of its own run features (``RetrieverSpec.prefusion``, e.g.
    ``bm25_top1_per_term``); then the agreement of the first two retrievers' top lists
    (``overlap10``, ``top1_agree``) and the query's length (``query_terms``)."""

    _key: tuple = ()
    _cached: dict = {}

    def _table(self) -> dict[str, Callable[[Candidates], float]]:
        key = tuple((n, id(retrievers.get(n))) for n in retrievers.names())
        if key == self._key:
            return self._cached
        table: dict[str, Callable[[Candidates], float]] = {}
        for name in retrievers.names():
            spec = retrievers.get(name)
            table.update({f"{name}_{shape}": _shape(f"{name}_{shape}") for shape in spec.shapes})
        table.update({"overlap10": _overlap10, "top1_agree": _top1_agree, "query_terms": _query_terms})
        for name in retrievers.names():
            spec = retrievers.get(name)
            table.update({f"{name}_{own}": _own_feature(name, fn) for own, fn in spec.prefusion.items()})
        self._key, self._cached = key, table
        return table

    def __getitem__(self, key: str) -> Callable[[Candidates], float]:
        return self._table()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


FEATURES: Mapping[str, Callable[[Candidates], float]] = _Features()
"""Pre-fusion features by name: each reads only the retrievers' own runs, never the fused list."""
registries.provide("fusion feature", FEATURES)  # read live by the config (issue 42 item 3)


def features(c: Candidates, names: Iterable[str] | None = None) -> dict[str, float]:
    """The pre-fusion features ``names`` (all when None) of one query's candidates."""
    return {n: float(FEATURES[n](c)) for n in (names if names is not None else FEATURES)}


def share(c: Candidates, model: AdaptiveFusion) -> float:
    """The share of ``model.retriever`` for this query: ``lo + (hi - lo) * sigmoid(z)``."""
    x = features(c, model.features)
    z = model.intercept + sum(w * x[f] for f, w in zip(model.features, model.coef))
    p = 1.0 / (1.0 + math.exp(-max(min(z, 500.0), -500.0)))
    return model.lo + (model.hi - model.lo) * p


def weights_for(c: Candidates, fusion: FusionConfig) -> Mapping[str, float]:
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
