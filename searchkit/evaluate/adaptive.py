"""Fitting query-adaptive fusion (``searchkit.rank.adaptive``; ``searchkit tune adaptive-fusion``).

For every judged query of the given datasets the retrievers run once; the query's candidates are
then fused at every BM25 share of ``GRID`` and the metric (nDCG@10 by default) of each fused
ranking is kept beside the query's pre-fusion features (``FusionCase``). The model is a
cost-sensitive logistic regression (scikit-learn) fitted on the **tune** half only: for each query
whose ranking differs between the ``lo`` and the ``hi`` share, the label says which is better and
the sample weight how much better (every dataset weighing the same). Candidate settings (``lo``,
``hi``, the regularisation ``C``) are chosen by the tune half's mean metric; the report half's
figures are what may be quoted. A case's metric at a share between grid points is interpolated
linearly: the figures here are estimates for choosing, and the claim is an ``eval`` run under the
fitted config, compared with ``searchkit compare``.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from searchkit.errors import InputError
from searchkit import retrievers
from searchkit.config import SHIPPED_ADAPTIVE, AdaptiveFusion, SearchConfig
from searchkit.evaluate.halves import half_of
from searchkit.evaluate.metrics import per_query_metrics
from searchkit.evaluate.run import _visible_to
from searchkit.rank.adaptive import features as prefusion
from searchkit.rank.candidates import Candidates
from searchkit.rank.stages import FuseStage
from searchkit.searcher import Filters, Searcher

log = logging.getLogger(__name__)

GRID: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
"""BM25 shares at which every case's candidates are fused and scored."""

DEFAULT_FEATURES: tuple[str, ...] = SHIPPED_ADAPTIVE.features
"""The pre-fusion features the shipped model reads (``searchkit.rank.adaptive.FEATURES``)."""

SETTINGS: tuple[tuple[float, float], ...] = ((0.1, 0.7), (0.2, 0.7), (0.2, 0.8), (0.1, 0.8), (0.3, 0.7), (0.2, 0.6))
"""(lo, hi) share ranges tried; the tune half picks one."""

C_VALUES: tuple[float, ...] = (0.1, 1.0)


@dataclass(frozen=True)
class FusionCase:
    """One judged query: its pre-fusion features and its metric at each BM25 share of ``GRID``."""

    key: str
    dataset: str
    features: Mapping[str, float]
    metric: Mapping[float, float]

    @property
    def half(self) -> str:
        return half_of(self.key)

    def at(self, share: float) -> float:
        """The metric at ``share`` (linear between the two nearest grid points)."""
        grid = sorted(self.metric)
        share = min(max(share, grid[0]), grid[-1])
        for a, b in zip(grid, grid[1:]):
            if a <= share <= b:
                t = 0.0 if b == a else (share - a) / (b - a)
                return (1 - t) * self.metric[a] + t * self.metric[b]
        return self.metric[grid[-1]]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "dataset": self.dataset, "features": dict(self.features),
                "metric": {str(k): v for k, v in self.metric.items()}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FusionCase":
        return cls(d["key"], d["dataset"], dict(d["features"]), {float(k): float(v) for k, v in d["metric"].items()})


def collect_cases(datasets: Sequence[Any], base: SearchConfig | None = None, *, grid: Sequence[float] = GRID,
                  metric: str = "nDCG@10", depth: int = 100, show_progress: bool = True) -> list[FusionCase]:
    """Retrieve once per judged query of each dataset (one index per dataset under ``base``) and
    score its candidates fused at every BM25 share of ``grid``, each fused list passed through the
    rest of the search path (rerank, who said it, the question's date) as ``Searcher.search`` does."""
    base = base or SearchConfig()
    if base.fusion.method == "rrf":
        raise InputError("adaptive fusion chooses weighted-sum weights; the base config fuses by rrf")
    cases: list[FusionCase] = []
    for ds in datasets:
        s = Searcher.build(ds.records, base, show_progress=show_progress)
        lead, others = lead_of(base)
        if lead not in s.retrievers or not others:
            raise InputError(f"adaptive fusion needs the {lead or 'first'} retriever and at least one other")
        # retrieve once, then vary the fuse stage and run the rest of the search path (rerank, who
        # said it, the question's date; the evidence stage reads and moves nothing)
        retrieve = s.pipeline.upto("retrieve")
        rest = s.pipeline.after("retrieve").without("evidence", "cut")
        fuse = rest["fuse"]
        assert isinstance(fuse, FuseStage)  # the Searcher's pipeline fuses with a FuseStage
        queries = [q for q in ds.queries if q.answerable and ds.qrels.get(q.id)]
        it: Iterable[Any] = queries
        if show_progress:
            from tqdm.auto import tqdm

            it = tqdm(queries, desc=f"fusion cases {ds.name}", unit="q")
        feats: dict[str, dict[str, float]] = {}
        runs: dict[float, dict[str, dict[str, float]]] = {w: {} for w in grid}
        for q in it:
            filters = None
            if q.kinds or q.since or q.until or q.spaces or q.caller:
                filters = Filters(kinds=tuple(q.kinds) if q.kinds else None, since=q.since, until=q.until,
                                  spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None,
                                  visible=_visible_to(q.caller) if q.caller else None)
            query = s.query(q.text, filters=filters)
            c = retrieve(Candidates(), query)
            feats[q.id] = prefusion(c)
            for w in grid:
                weights = {lead: w, **{n: (1.0 - w) / len(others) for n in others}}
                ranked = rest.replace("fuse", fuse.with_weights(weights))(c, query).fused[:depth]
                runs[w][q.id] = {s.records[ri].id: float(sc) for ri, sc in ranked}
        qrels = {q.id: dict(ds.qrels[q.id]) for q in queries}
        by_w = {w: per_query_metrics(qrels, runs[w], [metric]) for w in grid}
        for q in queries:
            cases.append(FusionCase(f"{ds.name}:{q.id}", ds.name, feats[q.id],
                                    {w: float(by_w[w].get(q.id, {}).get(metric, 0.0)) for w in grid}))
    return cases


def lead_of(base: SearchConfig) -> tuple[str | None, list[str]]:
    """The retriever whose share the model sets (the base's adaptive model's when it runs, else the
    first running one: BM25 in the shipped config) and the other running retrievers, in order."""
    running = retrievers.enabled(base)
    model = base.fusion.adaptive
    lead = model.retriever if model is not None and model.retriever in running else next(iter(running), None)
    return lead, [n for n in running if n != lead]


def _matrix(cases: Sequence[FusionCase], names: Sequence[str]) -> np.ndarray:
    return np.array([[c.features[n] for n in names] for c in cases], dtype=np.float64)


def _balanced(cases: Sequence[FusionCase]) -> np.ndarray:
    """Per-case weights under which every dataset weighs the same."""
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.dataset] = counts.get(c.dataset, 0) + 1
    return np.array([1.0 / counts[c.dataset] for c in cases])


def fit(cases: Sequence[FusionCase], *, features: Sequence[str] = DEFAULT_FEATURES, lo: float, hi: float,
        C: float = 1.0, retriever: str = AdaptiveFusion.retriever) -> Any:
    """The ``AdaptiveFusion`` model fitted on ``cases`` (give it the tune half): a logistic regression
    on standardised features, labels ``metric(hi) > metric(lo)``, weights ``|difference|`` times the
    dataset balance; the scaler folded into the coefficients."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    diff = np.array([c.at(hi) - c.at(lo) for c in cases])
    keep = np.abs(diff) > 1e-12
    if keep.sum() < 2 or len(set((diff[keep] > 0).tolist())) < 2:
        raise InputError("too few queries where the two shares rank differently to fit a model")
    x = _matrix([c for c, k in zip(cases, keep) if k], features)
    y = (diff[keep] > 0).astype(int)
    w = np.abs(diff[keep]) * _balanced([c for c, k in zip(cases, keep) if k])
    w = w / w.mean()
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    lr = LogisticRegression(C=C, max_iter=2000).fit((x - scaler.mean_) / scale, y, sample_weight=w)
    coef = lr.coef_[0] / scale
    intercept = float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scale))
    return AdaptiveFusion(features=tuple(features), coef=tuple(round(float(v), 6) for v in coef),
                          intercept=round(intercept, 6), retriever=retriever, lo=lo, hi=hi)


def shares(cases: Sequence[FusionCase], model: AdaptiveFusion) -> np.ndarray:
    """The BM25 share the model gives each case."""
    z = model.intercept + _matrix(cases, model.features) @ np.asarray(model.coef)
    p = 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))
    return model.lo + (model.hi - model.lo) * p


def per_dataset(cases: Sequence[FusionCase], share_of: Callable[..., np.ndarray]) -> dict[str, float]:
    """Mean metric per dataset when each case is fused at ``share_of(cases) -> shares``."""
    s = share_of(cases)
    out: dict[str, list[float]] = {}
    for c, v in zip(cases, s):
        out.setdefault(c.dataset, []).append(c.at(float(v)))
    return {d: float(np.mean(v)) for d, v in sorted(out.items())}


def fit_and_choose(cases: Sequence[FusionCase], *, base_share: float, features: Sequence[str] = DEFAULT_FEATURES,
                   settings: Sequence[tuple[float, float]] = SETTINGS,
                   c_values: Sequence[float] = C_VALUES, retriever: str = AdaptiveFusion.retriever,
                   others: Sequence[str] = ()) -> dict[str, Any]:
    """Fit one model per (lo, hi, C) on the tune half, keep the one with the best mean (over
    datasets) tune-half metric, and report every figure by half: the fixed ``base_share``, the
    model's ``retriever`` alone (share 1, under its name), the ``others`` alone (share 0, under the
    other's name, or ``others``), the adaptive model and the per-query oracle."""
    tune = [c for c in cases if c.half == "tune"]
    report = [c for c in cases if c.half == "report"]
    trials = []
    for lo, hi in settings:
        for C in c_values:
            try:
                model = fit(tune, features=features, lo=lo, hi=hi, C=C, retriever=retriever)
            except ValueError as exc:
                log.info("lo %.1f hi %.1f C %g: %s", lo, hi, C, exc)
                continue
            t = per_dataset(tune, lambda cs, m=model: shares(cs, m))
            trials.append((float(np.mean(list(t.values()))), lo, hi, C, model))
            log.info("lo %.1f hi %.1f C %g: tune %.4f", lo, hi, C, trials[-1][0])
    if not trials:
        raise InputError("no setting could be fitted")
    trials.sort(key=lambda t: -t[0])
    best = trials[0][4]
    rest = others[0] if len(others) == 1 else "others"

    def figures(half: Sequence[FusionCase]) -> dict[str, dict[str, float]]:
        fixed = per_dataset(half, lambda cs: np.full(len(cs), base_share))
        return {
            "fixed": fixed,
            "adaptive": per_dataset(half, lambda cs: shares(cs, best)),
            retriever: per_dataset(half, lambda cs: np.ones(len(cs))),
            rest: per_dataset(half, lambda cs: np.zeros(len(cs))),
            "oracle": {d: float(np.mean([max(c.metric.values()) for c in half if c.dataset == d]))
                       for d in fixed},
        }

    return {
        "model": best,
        "trials": [{"lo": lo, "hi": hi, "C": C, "tune_mean": round(m, 5)} for m, lo, hi, C, _ in trials],
        "tune": figures(tune),
        "report": figures(report),
        "counts": {"tune": len(tune), "report": len(report)},
        "retriever": retriever,
        "others": rest,
    }


def mean_of(fig: Mapping[str, float]) -> float:
    return float(np.mean(list(fig.values()))) if fig else math.nan
