"""Fitting the weak-match model (H11) on labelled queries, with a held-out half to report on.

Queries are split into a *tune* half and a *report* half by a salted hash of their id, so the
split is stable and independent of the dataset's own dev/test split. ``fit_weak_match`` fits a
scikit-learn ``LogisticRegression`` (standardised features, balanced classes) on the tune half
and folds the scaler back into raw-feature coefficients, so ``WeakMatchConfig`` stays a plain
``sigmoid(intercept + coef · x)`` that production can compute without scikit-learn. Figures are
only ever reported on the report half.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from searchkit.config import WeakMatchConfig

DEFAULT_FEATURES: tuple[str, ...] = (
    "dense_top1", "dense_margin", "dense_gap10", "dense_z", "bm25_margin", "bm25_z", "fused_z", "term_coverage",
)
SALT = "searchkit-tune-v1"


def half_of(query_id: str, salt: str = SALT) -> str:
    """``tune`` or ``report``: a stable 50/50 split by a salted sha256 of the query id."""
    h = hashlib.sha256(f"{salt}:{query_id}".encode("utf-8")).digest()
    return "tune" if h[0] % 2 == 0 else "report"


@dataclass(frozen=True)
class LabelledSignals:
    """One query's features and whether the space can answer it."""

    query_id: str
    answerable: bool
    signals: Mapping[str, float]
    group: str = ""


def from_eval_json(report: Mapping[str, Any]) -> list[LabelledSignals]:
    """Rows from ``searchkit eval --json --queries`` output."""
    if "queries" not in report:
        raise ValueError(f"eval report of {report.get('dataset')!r} has no per-query rows; run eval with --json --queries")
    return [
        LabelledSignals(f"{report['dataset']}:{q['id']}", bool(q["answerable"]), q.get("signals") or {}, report["dataset"])
        for q in report["queries"]
    ]


def _matrix(rows: Sequence[LabelledSignals], features: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[float(r.signals.get(f, 0.0)) for f in features] for r in rows], dtype=float)
    y = np.array([1 if r.answerable else 0 for r in rows], dtype=int)
    return X, y


def fit_weak_match(
    rows: Iterable[LabelledSignals],
    features: Sequence[str] = DEFAULT_FEATURES,
    *,
    C: float = 1.0,
    target_false_warn: float | None = None,
    balance_groups: bool = True,
) -> WeakMatchConfig:
    """Fit on ``rows`` (use the tune half). The threshold is 0.5 on the balanced model, or, with
    ``target_false_warn``, the largest threshold whose false-warning rate on answerable rows stays
    within that target. With ``balance_groups`` every (group, class) cell weighs the same in the
    fit, so a small workspace-like set counts as much as a large Wikipedia one."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rows = list(rows)
    X, y = _matrix(rows, features)
    if len(set(y.tolist())) < 2:
        raise ValueError("fitting weak match needs both answerable and unanswerable queries")
    scaler = StandardScaler().fit(X)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    if balance_groups:
        from collections import Counter

        cells = Counter((r.group, int(r.answerable)) for r in rows)
        weight = np.array([1.0 / cells[(r.group, int(r.answerable))] for r in rows])
        weight *= len(rows) / weight.sum()
        lr = LogisticRegression(C=C, max_iter=1000, random_state=0)
        lr.fit((X - scaler.mean_) / scale, y, sample_weight=weight)
    else:
        lr = LogisticRegression(C=C, class_weight="balanced", max_iter=1000, random_state=0)
        lr.fit((X - scaler.mean_) / scale, y)
    coef = lr.coef_[0] / scale
    intercept = float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scale))
    threshold = 0.5
    if target_false_warn is not None:
        p = 1.0 / (1.0 + np.exp(-(X @ coef + intercept)))
        pa = np.sort(p[y == 1])
        k = int(np.floor(target_false_warn * len(pa)))
        threshold = float(pa[k]) if k < len(pa) else 1.0
    return WeakMatchConfig(
        enabled=True,
        features=tuple(features),
        coef=tuple(float(c) for c in coef),
        intercept=intercept,
        threshold=threshold,
    )


def score_weak_match(rows: Iterable[LabelledSignals], cfg: WeakMatchConfig) -> dict[str, float]:
    """No-answer metrics of ``cfg`` on ``rows`` (use the report half)."""
    from searchkit.evaluate.metrics import no_answer_metrics
    from searchkit.rank.signals import answer_probability

    rows = list(rows)
    probs = [answer_probability(r.signals, cfg) if r.signals else 0.0 for r in rows]
    return no_answer_metrics([r.answerable for r in rows], probs, [p < cfg.threshold for p in probs])


FUSION_GRID: tuple[dict[str, Any], ...] = tuple(
    [{"fusion.method": "rrf", "fusion.rrf_k": k} for k in (10, 30, 60)]
    + [
        {"fusion.method": "wsum", "fusion.norm": norm, "fusion.bm25_weight": round(w, 2), "fusion.dense_weight": round(1 - w, 2)}
        for norm in ("minmax", "zscore")
        for w in (0.2, 0.3, 0.4, 0.5, 0.6)
    ]
)
"""The fusion settings ``tune_fusion`` tries by default (query-time knobs only)."""


@dataclass(frozen=True)
class FusionTrial:
    """One grid point: its settings and mean nDCG@10 per half and per dataset."""

    settings: Mapping[str, Any]
    tune: Mapping[str, float]
    report: Mapping[str, float]

    @property
    def tune_mean(self) -> float:
        return float(np.mean(list(self.tune.values())))

    @property
    def report_mean(self) -> float:
        return float(np.mean(list(self.report.values())))


def tune_fusion(
    datasets: Sequence[Any],
    base: Any = None,
    grid: Sequence[Mapping[str, Any]] = FUSION_GRID,
    *,
    metric: str = "nDCG@10",
    show_progress: bool = True,
) -> list[FusionTrial]:
    """Evaluate every grid point on every dataset (one index per dataset, reused across the
    grid), scoring the tune and report halves separately. Pick on ``tune_mean`` only; the
    report half is what may be quoted. Returns the trials sorted by ``tune_mean``, best first."""
    from searchkit.config import SearchConfig
    from searchkit.evaluate.run import evaluate_dataset, summarize
    from searchkit.searcher import Searcher

    base = base or SearchConfig()
    searchers = [Searcher.build(ds.records, base, show_progress=show_progress) for ds in datasets]
    trials = []
    for settings in grid:
        cfg = base.replace(**settings)
        tune_m, report_m = {}, {}
        for ds, s in zip(datasets, searchers):
            rep = evaluate_dataset(ds, cfg, searcher=s.with_config(cfg), show_progress=False)
            halves = {"tune": [], "report": []}
            for o in rep.outcomes:
                halves[half_of(f"{ds.name}:{o.query_id}")].append(o)
            tune_m[ds.name] = summarize(ds, cfg, halves["tune"]).metrics[metric]
            report_m[ds.name] = summarize(ds, cfg, halves["report"]).metrics[metric]
        trials.append(FusionTrial(dict(settings), tune_m, report_m))
        if show_progress:
            import sys

            print(f"{settings}: tune {trials[-1].tune_mean:.4f}  report {trials[-1].report_mean:.4f}",
                  file=sys.stderr, flush=True)
    return sorted(trials, key=lambda t: -t.tune_mean)
