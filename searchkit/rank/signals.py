"""Signals above the cards: weak match (H11) and missing IDs (H12).

Weak match reads the *shape* of the score lists, not one absolute score: how far the top record
stands out from the rest (margins, z-score), how close the best passage is in embedding space,
and how much of the query's vocabulary the top record holds. The features are combined by a
logistic model whose coefficients, intercept and threshold live in ``WeakMatchConfig`` (fitted by
the harness with scikit-learn on dev labels): ``p = sigmoid(intercept + coef · x)`` is the
probability that the space has an answer; the warning fires when ``p < threshold``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from searchkit.records import Hit, Warning

if TYPE_CHECKING:  # pragma: no cover
    from searchkit.config import WeakMatchConfig


def _sorted_scores(run: Mapping[int, float]) -> list[float]:
    return sorted(run.values(), reverse=True)


def _top(run: Mapping[int, float], i: int) -> float:
    vals = _sorted_scores(run)
    return float(vals[i]) if len(vals) > i else 0.0


def _dense_top1(ctx: "FeatureContext") -> float:
    return _top(ctx.runs.get("dense", {}), 0)


def _dense_margin(ctx: "FeatureContext") -> float:
    run = ctx.runs.get("dense", {})
    return _top(run, 0) - _top(run, 1) if len(run) > 1 else 0.0


def _dense_gap10(ctx: "FeatureContext") -> float:
    vals = _sorted_scores(ctx.runs.get("dense", {}))
    if len(vals) < 2:
        return 0.0
    return float(vals[0] - np.mean(vals[1:10]))


def _bm25_top1(ctx: "FeatureContext") -> float:
    return _top(ctx.runs.get("bm25", {}), 0)


def _bm25_margin(ctx: "FeatureContext") -> float:
    run = ctx.runs.get("bm25", {})
    t1, t2 = _top(run, 0), _top(run, 1)
    return (t1 - t2) / t1 if t1 > 0 else 0.0


def _bm25_z(ctx: "FeatureContext") -> float:
    return _z_top1(_sorted_scores(ctx.runs.get("bm25", {})))


def _dense_z(ctx: "FeatureContext") -> float:
    return _z_top1(_sorted_scores(ctx.runs.get("dense", {})))


def _fused_z(ctx: "FeatureContext") -> float:
    return _z_top1([s for _, s in ctx.ranked])


def _z_top1(vals: Sequence[float]) -> float:
    if len(vals) < 3:
        return 0.0
    arr = np.asarray(vals, dtype=float)
    sd = arr[1:].std()
    if sd <= 1e-12:
        return 0.0
    return float((arr[0] - arr[1:].mean()) / sd)


def _term_coverage(ctx: "FeatureContext") -> float:
    return ctx.term_coverage


FEATURES: dict[str, Callable[["FeatureContext"], float]] = {
    "dense_top1": _dense_top1,
    "dense_margin": _dense_margin,
    "dense_gap10": _dense_gap10,
    "dense_z": _dense_z,
    "bm25_top1": _bm25_top1,
    "bm25_margin": _bm25_margin,
    "bm25_z": _bm25_z,
    "fused_z": _fused_z,
    "term_coverage": _term_coverage,
}
"""Score-shape features by name; each maps a ``FeatureContext`` to one float."""


class FeatureContext:
    """What the features read: record-level runs per retriever, the fused ranking, coverage."""

    def __init__(self, runs: Mapping[str, Mapping[int, float]], ranked: Sequence[tuple[int, float]], term_coverage: float):
        self.runs = runs
        self.ranked = ranked
        self.term_coverage = term_coverage


def compute_features(searcher: Any, query: str, ranked: Sequence[tuple[int, float]], cands: Any) -> dict[str, float]:
    """All registered features for one search (the searcher's candidates after fusion)."""
    coverage = 0.0
    qt = set(cands.query_tokens)
    if qt and ranked and searcher.bm25 is not None:
        top = ranked[0][0]
        pis = cands.record_passages.get(top) or []
        best = 0
        for pi in pis:
            best = max(best, searcher.bm25.matched_terms(cands.query_tokens, pi))
        coverage = best / len(qt)
    ctx = FeatureContext(cands.record_runs, ranked, coverage)
    return {name: float(fn(ctx)) for name, fn in FEATURES.items()}


def answer_probability(features: Mapping[str, float], cfg: "WeakMatchConfig") -> float:
    """``sigmoid(intercept + sum(coef_i * feature_i))`` over the configured features."""
    unknown = [f for f in cfg.features if f not in FEATURES]
    if unknown:
        raise ValueError(f"unknown weak-match feature {unknown[0]!r}; valid: {sorted(FEATURES)}")
    z = cfg.intercept + sum(c * features[f] for f, c in zip(cfg.features, cfg.coef))
    return 1.0 / (1.0 + math.exp(-max(min(z, 500.0), -500.0)))


def weak_match_warning(features: Mapping[str, float], cfg: "WeakMatchConfig") -> Warning | None:
    """H11: a ``weak_match`` warning when no card stands out (P(answer) < threshold)."""
    p = answer_probability(features, cfg)
    if p >= cfg.threshold:
        return None
    detail = {"probability": round(p, 4), "threshold": cfg.threshold}
    detail.update({f: round(features[f], 4) for f in cfg.features})
    return Warning(code="weak_match", message="Weak match: no card stands out from the rest.", detail=detail)


def mentions(text: str, ident: str) -> bool:
    """Whether ``text`` mentions identifier ``ident`` (H12).

    Identifiers are compared in canonical form, never as substrings: ``ATL-1650`` does not
    mention ``ATL-16``, ``#412`` not ``#41``, ``v2.3.1`` not ``v2.3``; ``atl-1656``, ``ATL1656``,
    ``ＡＴＬ－１６５６`` all mention ``ATL-1656``, ``№412`` mentions ``#412``.
    """
    from searchkit.analyze import canonical_identifier, identifier_forms

    return canonical_identifier(ident) in identifier_forms(text)


def missing_ids(query: str, hits: Sequence[Hit]) -> list[str]:
    """H12: identifiers in the query that no returned card mentions (title or full text), canonical."""
    from searchkit.analyze import identifier_forms, identifier_mentions

    wanted = identifier_mentions(query)
    if not wanted:
        return []
    found: set[str] = set()
    for h in hits:
        found |= identifier_forms(h.record.title)
        found |= identifier_forms(h.record.text)
    return [ident for ident, aliases in wanted if not found.intersection(aliases)]


def missing_ids_warning(query: str, hits: Sequence[Hit]) -> Warning | None:
    ids = missing_ids(query, hits)
    if not ids:
        return None
    return Warning(code="missing_ids", message="No card mentions " + ", ".join(ids) + ".", detail={"ids": ids})
