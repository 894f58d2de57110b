"""Paired significance tests, multiple-test corrections, bootstrap intervals and effect sizes over
per-query values (SPEC E4): the statistics ``compare`` and ``gate`` put beside every delta.

Split out of ``searchkit.evaluate.compare`` (issue 29 item 5: no module over 600 lines), which
re-exports every name; the choice of tests and their references are in that module's docstring.
"""
from __future__ import annotations

import math
import warnings
from typing import Callable, Mapping, Sequence

import numpy as np

from searchkit.errors import InputError

__all__ = [
    "CONFIDENCE", "CORRECTIONS", "CORRECTION_NAMES", "DEFAULT_CORRECTION", "N_BOOTSTRAP", "N_PERMUTATIONS", "SEED",
    "TESTS", "auroc_bootstrap", "benjamini_hochberg", "check_test", "effect_size", "holm", "paired_ci", "paired_p",
    "paired_test",
]

TESTS: tuple[str, ...] = ("fisher", "student")
SEED = 42
N_PERMUTATIONS = 10_000
N_BOOTSTRAP = 2_000
CONFIDENCE = 0.95


def check_test(test: str) -> None:
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; valid: {', '.join(TESTS)}")


def paired_p(
    a: Sequence[float], b: Sequence[float], test: str = "fisher", *, seed: int = SEED,
    n_resamples: int = N_PERMUTATIONS,
) -> float:
    """Two-sided p-value of a paired test of ``mean(b - a) == 0`` over aligned per-query values.

    ``test`` is ``fisher`` (randomization test, scipy) or ``student`` (paired t-test, scipy).
    Identical values give p = 1; fewer than two queries give nan (no test).
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired values must be two sequences of one length, got {x.shape} and {y.shape}")
    return float(_paired_rows(x[None, :], y[None, :], test, seed, n_resamples)[0])


def _paired_rows(x: np.ndarray, y: np.ndarray, test: str, seed: int, n_resamples: int) -> np.ndarray:
    """p-values of ``paired_p`` for each row of two (metrics x queries) arrays. Each row is its
    own scipy call from the same seed, so a metric's p-value never depends on which other
    metrics were tested with it."""
    from scipy import stats

    check_test(test)
    rows, n = x.shape
    out = np.full(rows, np.nan)
    if n < 2:
        return out
    same = np.all(x == y, axis=1)
    out[same] = 1.0
    todo = ~same
    if not todo.any():
        return out
    if test == "student":
        out[todo] = stats.ttest_rel(x[todo], y[todo], axis=-1, alternative="two-sided").pvalue
        return out

    def mean_diff(u: np.ndarray, v: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(u - v, axis=axis)

    for i in np.flatnonzero(todo):
        res = stats.permutation_test(
            (x[i], y[i]), mean_diff, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
            alternative="two-sided", rng=np.random.default_rng(seed),
        )
        out[i] = min(1.0, float(res.pvalue))
    return out


def paired_test(
    per_query_a: Mapping[str, Mapping[str, float]],
    per_query_b: Mapping[str, Mapping[str, float]],
    test: str = "fisher",
    *,
    metrics: Sequence[str] | None = None,
    seed: int = SEED,
    n_resamples: int = N_PERMUTATIONS,
) -> dict[str, float]:
    """p-value per metric of a paired test between two runs' per-query values.

    Args:
        per_query_a, per_query_b: ``{query_id: {metric: value}}`` (``RunFolder.per_query()``,
            ``EvalReport.per_query``, a baseline file's per-query values); the same queries.
        test: ``fisher`` (default) or ``student``.
        metrics: the metrics to test (default: those both runs have, in ``a``'s order).

    Returns:
        ``{metric: p}`` (two-sided; the sign of the difference is the caller's to read). Queries
        are aligned in sorted id order, so p does not depend on the order a file lists them.

    Raises:
        InputError: the two runs hold different queries, or a metric is missing.
    """
    check_test(test)
    qa, qb = set(per_query_a), set(per_query_b)
    if qa != qb:
        only_a, only_b = sorted(qa - qb), sorted(qb - qa)
        raise InputError(
            f"the runs hold different queries ({len(only_a)} only in the first, e.g. {only_a[:3]}; "
            f"{len(only_b)} only in the second, e.g. {only_b[:3]})"
        )
    ids = sorted(qa)
    if metrics is None:
        first = next(iter(per_query_a.values()), {})
        metrics = [m for m in first if all(m in per_query_b[q] for q in ids)]
    metrics = list(metrics)
    try:
        a = np.array([[float(per_query_a[q][m]) for q in ids] for m in metrics]).reshape(len(metrics), len(ids))
        b = np.array([[float(per_query_b[q][m]) for q in ids] for m in metrics]).reshape(len(metrics), len(ids))
    except KeyError as exc:
        raise InputError(f"metric {exc.args[0]!r} is missing from a query's values") from None
    ps = _paired_rows(a, b, test, seed, n_resamples)
    return {m: float(p) for m, p in zip(metrics, ps)}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (step-down, monotone, capped at 1), in the input order; nan stays
    nan and does not count as a hypothesis. Holm (1979)."""
    p = [float(x) for x in p_values]
    finite = [i for i, x in enumerate(p) if not math.isnan(x)]
    m = len(finite)
    order = sorted(finite, key=lambda i: p[i])
    adjusted = list(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate; scipy's
    ``false_discovery_control``), in the input order; nan stays nan and does not count as a
    hypothesis. Benjamini & Hochberg, "Controlling the false discovery rate", JRSS B 57, 1995."""
    from scipy.stats import false_discovery_control

    p = [float(x) for x in p_values]
    finite = [i for i, x in enumerate(p) if not math.isnan(x)]
    adjusted = list(p)
    if finite:
        for i, q in zip(finite, false_discovery_control([p[i] for i in finite], method="bh")):
            adjusted[i] = float(q)
    return adjusted


def _uncorrected(p_values: Sequence[float]) -> list[float]:
    return [float(x) for x in p_values]


CORRECTIONS: dict[str, Callable[[Sequence[float]], list[float]]] = {
    "bh": benjamini_hochberg,
    "holm": holm,
    "none": _uncorrected,
}
"""Corrections for the tests of one comparison (the groups x metrics x runs asked for), by name."""
CORRECTION_NAMES: dict[str, str] = {"bh": "Benjamini-Hochberg", "holm": "Holm", "none": "no correction"}
DEFAULT_CORRECTION = "bh"
"""``compare``'s default: Benjamini-Hochberg over the tests asked for (each metric in each group asked
for, for each run after the first; identical comparisons are not tests). ``searchkit compare`` asks for
the ``all`` rows unless ``--by``: 8 tests on mini (7 metrics and the AUROC), fewer where a metric did
not move; with every breakdown it is up to a hundred, and an uncorrected table would show about one
false ``*`` in twenty. Holm (family-wise error) would hide most real differences among many tests; BH
keeps the share of false discoveries at alpha."""


def paired_ci(
    a: Sequence[float], b: Sequence[float], *, confidence: float = CONFIDENCE, n_resamples: int = N_BOOTSTRAP,
    seed: int = SEED,
) -> list[float] | None:
    """``[low, high]``: the paired bootstrap confidence interval of ``mean(b - a)`` over aligned
    per-query values (``scipy.stats.bootstrap``, ``paired=True``, BCa, fixed seed; the percentile
    interval where BCa is undefined). Every query moved by the same amount: ``[d, d]``. Fewer
    than two queries: ``None`` (no interval)."""
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2:
        return None
    diff = y - x
    if np.all(diff == diff[0]):
        return [float(diff[0]), float(diff[0])]

    def mean_diff(u: np.ndarray, v: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(v - u, axis=axis)

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback
            res = stats.bootstrap((x, y), mean_diff, paired=True, vectorized=True, n_resamples=n_resamples,
                                  confidence_level=confidence, method=method, rng=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(lo) and math.isfinite(hi):
            return [lo, hi]
    return None


def effect_size(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cohen's d for paired values (d_z): the mean of ``b - a`` over the standard deviation of the
    differences (ddof 1). 0 when nothing changed; ``None`` when undefined (fewer than two queries,
    or every query moved by the same non-zero amount: no spread to scale by)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2:
        return None
    diff = y - x
    sd = float(np.std(diff, ddof=1))
    mean = float(np.mean(diff))
    if sd == 0:
        return 0.0 if mean == 0 else None
    return mean / sd


def auroc_bootstrap(
    answerable: Sequence[bool],
    prob_a: Sequence[float],
    prob_b: Sequence[float],
    *,
    n_resamples: int = N_BOOTSTRAP,
    seed: int = SEED,
    confidence: float = 0.95,
) -> dict[str, float]:
    """Paired bootstrap over queries of the AUROC difference ``b - a`` (P(answer) against the
    ``answerable`` label). Resamples are stratified by the label so each holds both classes.

    Returns ``AUROC_a``, ``AUROC_b``, ``delta``, ``ci_low``/``ci_high`` (percentile interval of the
    bootstrap deltas) and ``p`` (two-sided: twice the smaller count ``b`` of deltas on either side of 0,
    as ``(b + 1) / (B + 1)`` over ``B`` resamples, so never 0; 1 when every delta is 0).
    """
    from scipy.stats import mannwhitneyu
    from sklearn.metrics import roc_auc_score

    y = np.asarray([bool(v) for v in answerable])
    pa, pb = np.asarray(prob_a, dtype=float), np.asarray(prob_b, dtype=float)
    if not (len(y) == len(pa) == len(pb)):
        raise ValueError("labels and probabilities must have one length")
    nan = float("nan")
    if len(set(y.tolist())) < 2:
        return {"AUROC_a": nan, "AUROC_b": nan, "delta": nan, "ci_low": nan, "ci_high": nan, "p": nan}
    auc_a, auc_b = float(roc_auc_score(y, pa)), float(roc_auc_score(y, pb))
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    # one resample = the answerable and the unanswerable queries drawn with replacement within
    # their class, the same draw for both runs (paired); AUROC = Mann-Whitney U / (n1 * n0)
    ip = rng.choice(pos, size=(n_resamples, len(pos)))
    ineg = rng.choice(neg, size=(n_resamples, len(neg)))
    scale = len(pos) * len(neg)

    def auc(p: np.ndarray) -> np.ndarray:
        return mannwhitneyu(p[ip], p[ineg], axis=1).statistic / scale

    deltas = auc(pb) - auc(pa)
    lo, hi = np.percentile(deltas, [50 * (1 - confidence), 100 - 50 * (1 - confidence)])
    if np.all(deltas == 0):
        p = 1.0
    else:  # the observed difference counts as one of the resamples: never 0 (Davison & Hinkley 1997, eq. 4.11)
        tail = min(int(np.count_nonzero(deltas <= 0)), int(np.count_nonzero(deltas >= 0)))
        p = float(min(1.0, 2 * (tail + 1) / (n_resamples + 1)))
    return {"AUROC_a": auc_a, "AUROC_b": auc_b, "delta": auc_b - auc_a, "ci_low": float(lo), "ci_high": float(hi),
            "p": p}

