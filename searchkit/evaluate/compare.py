"""Comparing runs over the same queries, with paired significance tests (SPEC E4).

The tests are library implementations over per-query values:

- ``fisher``: Fisher's randomization (permutation) test of the mean paired difference, two-sided,
  by ``scipy.stats.permutation_test`` with ``permutation_type="samples"`` (each query's pair of
  values is swapped or not), exact when ``2**n`` is within ``n_resamples``, else ``n_resamples``
  random sign flips from a fixed seed. Smucker, Allan & Carterette, "A comparison of statistical
  significance tests for information retrieval evaluation", CIKM 2007. (ranx ships the same test,
  but its numba-parallel version gives different p-values for the same seed from call to call,
  e.g. 0.777-0.792 on one input, so it cannot back a reproducible gate.)
- ``student``: the two-sided paired t-test, ``scipy.stats.ttest_rel`` (what ranx's
  ``paired_student_t_test`` calls).

More than one comparison against the baseline in one table row is corrected with Holm's
step-down method (Holm, "A simple sequentially rejective multiple test procedure", Scand. J.
Statist. 6, 1979); neither scipy nor ranx offers it. The no-answer AUROC, which is not a mean over
queries, is compared with a paired, stratified bootstrap over queries (AUROC by scikit-learn's
``roc_auc_score``, and on each resample as scipy's Mann-Whitney U / (n1 n0)), fixed seed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from searchkit.errors import SearchkitError

__all__ = [
    "TESTS", "SEED", "CompareError", "Comparison", "auroc_bootstrap", "compare_runs", "holm", "paired_p",
    "paired_test", "render",
]

TESTS: tuple[str, ...] = ("fisher", "student")
SEED = 42
N_PERMUTATIONS = 10_000
N_BOOTSTRAP = 2_000


class CompareError(SearchkitError, ValueError):
    """Runs that cannot be compared (different query sets, missing per-query values)."""


def _check_test(test: str) -> None:
    if test not in TESTS:
        raise CompareError(f"unknown test {test!r}; valid: {', '.join(TESTS)}")


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

    _check_test(test)
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

    def mean_diff(u, v, axis):
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
        CompareError: the two runs hold different queries, or a metric is missing.
    """
    _check_test(test)
    qa, qb = set(per_query_a), set(per_query_b)
    if qa != qb:
        only_a, only_b = sorted(qa - qb), sorted(qb - qa)
        raise CompareError(
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
        raise CompareError(f"metric {exc.args[0]!r} is missing from a query's values") from None
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
    bootstrap deltas) and ``p`` (two-sided: twice the smaller share of deltas on either side of 0).
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
    else:
        p = float(min(1.0, 2 * min(np.mean(deltas <= 0), np.mean(deltas >= 0))))
    return {"AUROC_a": auc_a, "AUROC_b": auc_b, "delta": auc_b - auc_a, "ci_low": float(lo), "ci_high": float(hi),
            "p": p}


# ----------------------------------------------------------------------------------------------
# comparing run folders


@dataclass(frozen=True)
class Comparison:
    """Runs compared against the first: per section (all, then each breakdown group) and metric,
    each run's value, its delta against the baseline, p, Holm-adjusted p and a significance flag."""

    runs: tuple[Mapping[str, Any], ...]
    dataset: str
    split: str
    dataset_sha256: str
    test: str
    alpha: float
    correction: str
    seed: int
    sections: tuple[Mapping[str, Any], ...]
    no_answer: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [dict(r) for r in self.runs],
            "baseline": self.runs[0]["name"],
            "dataset": self.dataset,
            "split": self.split,
            "dataset_sha256": self.dataset_sha256,
            "test": self.test,
            "alpha": self.alpha,
            "correction": self.correction,
            "seed": self.seed,
            "sections": [dict(s) for s in self.sections],
            "no_answer": dict(self.no_answer) if self.no_answer is not None else None,
            "notes": list(self.notes),
        }


def _label(run: Any) -> str:
    return str(run.path)


def _check_same_queries(runs: Sequence[Any]) -> None:
    base = runs[0]
    for other in runs[1:]:
        if other.query_set != base.query_set:
            (d1, s1, h1), (d2, s2, h2) = base.query_set, other.query_set
            raise CompareError(
                f"{_label(base)} ({d1} {s1}, dataset sha256 {h1[:12]}) and {_label(other)} ({d2} {s2}, dataset "
                f"sha256 {h2[:12]}) are over different query sets; compare runs of one dataset split"
            )


def _groups(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """(breakdown, group, query ids) of the judged queries: ``all`` first, then each breakdown
    with more than one group (the rule eval uses)."""
    from searchkit.evaluate.run import BREAKDOWNS

    judged = sorted((q for q in rows if q.get("metrics") is not None), key=lambda q: q["id"])
    out = [("all", "all", [q["id"] for q in judged])]
    for name, labels in BREAKDOWNS.items():
        members: dict[str, list[str]] = {}
        for q in judged:
            for g in labels(q):
                members.setdefault(g, []).append(q["id"])
        if len(members) > 1:
            out.extend((name, g, ids) for g, ids in sorted(members.items()))
    return out


def compare_runs(
    runs: Sequence[Any],
    *,
    test: str = "fisher",
    alpha: float = 0.05,
    seed: int = SEED,
    n_resamples: int = N_PERMUTATIONS,
    n_bootstrap: int = N_BOOTSTRAP,
    metrics: Sequence[str] | None = None,
    half: str | None = None,
) -> Comparison:
    """Compare run folders (``runs.load_run``) against the first one; ``half`` (``tune`` or
    ``report``, ``searchkit.evaluate.tune.half_of`` of ``dataset:query_id``) compares that half of
    the queries only (a setting chosen on the tune half is quoted on the report half).

    Raises:
        CompareError: fewer than two runs, runs over different query sets (dataset hash or
            split differ; the message names both), or runs whose per-query values differ in
            their queries or metrics.
        ValueError: an unknown test or an ``alpha`` outside (0, 1).
    """
    _check_test(test)
    if not 0 < alpha < 1:
        raise CompareError(f"--alpha must be between 0 and 1, got {alpha}")
    if len(runs) < 2:
        raise CompareError("compare needs at least two run folders")
    _check_same_queries(runs)
    per_query = [r.per_query() for r in runs]
    base_rows = runs[0].queries
    keep = _half_filter(runs[0].query_set[0], half)
    per_query = [{q: v for q, v in pq.items() if keep(q)} for pq in per_query]
    base_rows = [q for q in base_rows if keep(q["id"])]
    if not per_query[0]:
        raise CompareError(f"{_label(runs[0])} has no judged queries to compare")
    for r, pq in zip(runs[1:], per_query[1:]):
        if set(pq) != set(per_query[0]):
            raise CompareError(f"{_label(runs[0])} and {_label(r)} judge different queries; rerun both with this searchkit")
    if metrics is None:
        first = next(iter(per_query[0].values()))
        metrics = [m for m in first if all(m in pq[q] for pq in per_query for q in pq)]
    correction = "holm" if len(runs) > 2 else "none"

    sections = []
    for breakdown, group, ids in _groups(base_rows):
        rows = []
        for m in metrics:
            values = [float(np.mean([pq[q][m] for q in ids])) for pq in per_query]
            ps = [paired_p([per_query[0][q][m] for q in ids], [pq[q][m] for q in ids], test, seed=seed,
                           n_resamples=n_resamples) for pq in per_query[1:]]
            adj = holm(ps) if correction == "holm" else ps
            rows.append({
                "metric": m,
                "values": values,
                "delta": [None] + [v - values[0] for v in values[1:]],
                "p": [None] + ps,
                "p_adjusted": [None] + adj,
                "significant": [None] + [bool(not math.isnan(p) and p < alpha) for p in adj],
            })
        sections.append({"breakdown": breakdown, "group": group, "queries": len(ids), "metrics": rows})

    no_answer = _compare_no_answer(runs, correction, alpha, seed, n_bootstrap, keep)
    info = []
    for r in runs:
        m = r.metrics
        info.append({"name": r.name, "path": str(r.path), "config_fingerprint": m.get("config_fingerprint"),
                     "measured": m.get("path", "searcher")})
    d, s, h = runs[0].query_set
    notes = [] if half is None else [f"only the {half} half of the queries (half_of of '{d}:query_id')"]
    if len({i["measured"] for i in info}) > 1:
        notes.append("the runs measured different paths (searcher / tool): the tool returns at most 15 cards, "
                     "so R@20 and R@100 differ by construction")
    return Comparison(tuple(info), d, s, h, test, alpha, correction, seed, tuple(sections), no_answer, tuple(notes))


def _half_filter(dataset: str, half: str | None) -> Any:
    if half is None:
        return _everything
    if half not in ("tune", "report"):
        raise CompareError(f"half must be tune or report, got {half!r}")
    from searchkit.evaluate.tune import half_of

    return lambda qid: half_of(f"{dataset}:{qid}") == half


def _everything(_qid: str) -> bool:
    return True


def _compare_no_answer(runs, correction, alpha, seed, n_bootstrap, keep=_everything) -> dict[str, Any] | None:
    rows = [{q["id"]: q for q in r.queries if keep(q["id"])} for r in runs]
    ids = sorted(rows[0])
    if any(set(r) != set(ids) for r in rows[1:]):
        raise CompareError(f"{_label(runs[0])} and the other runs hold different queries")
    labels = [bool(rows[0][q]["answerable"]) for q in ids]
    if len(set(labels)) < 2:
        return None
    probs = [[float(r[q].get("answer_probability", 0.0)) for q in ids] for r in rows]
    boots = [auroc_bootstrap(labels, probs[0], p, n_resamples=n_bootstrap, seed=seed) for p in probs[1:]]
    ps = [b["p"] for b in boots]
    adj = holm(ps) if correction == "holm" else ps
    return {
        "metric": "AUROC",
        "queries": len(ids),
        "unanswerable": labels.count(False),
        "values": [boots[0]["AUROC_a"]] + [b["AUROC_b"] for b in boots],
        "delta": [None] + [b["delta"] for b in boots],
        "ci": [None] + [[b["ci_low"], b["ci_high"]] for b in boots],
        "p": [None] + ps,
        "p_adjusted": [None] + adj,
        "significant": [None] + [bool(not math.isnan(p) and p < alpha) for p in adj],
        "method": f"paired stratified bootstrap over queries, {n_bootstrap} resamples, seed {seed}",
    }


def _f(v: Any, signed: bool = False) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return f"{v:+.4f}" if signed else f"{v:.4f}"


def render(cmp: Comparison) -> str:
    """The comparison as text tables: one per section, a row per metric; ``*`` marks a
    difference significant at ``alpha`` (after Holm's correction when more than two runs)."""
    names = [r["name"] for r in cmp.runs]
    head = (f"baseline {names[0]}; {cmp.dataset} {cmp.split}; test {cmp.test}, alpha {cmp.alpha}"
            + (", Holm-corrected" if cmp.correction == "holm" else ""))
    w = max(10, *(len(n) + 2 for n in names))
    lines = [head]
    for i, n in enumerate(names):
        lines.append(f"  [{i}] {n}  {cmp.runs[i]['path']}  (config {cmp.runs[i]['config_fingerprint']}, {cmp.runs[i]['measured']})")
    cols = f"{'metric':<10}" + "".join(f"{n[:w - 2]:>{w}}" for n in names)
    cols += "".join(f"{'Δ' + str(i):>10}{'p' + str(i):>9}  " for i in range(1, len(names)))
    for sec in cmp.sections:
        title = "all" if sec["breakdown"] == "all" else f"{sec['breakdown']} = {sec['group']}"
        lines.append("")
        lines.append(f"{title}  ({sec['queries']} {'query' if sec['queries'] == 1 else 'queries'})")
        lines.append(cols)
        for row in sec["metrics"]:
            line = f"{row['metric']:<10}" + "".join(f"{_f(v):>{w}}" for v in row["values"])
            for i in range(1, len(names)):
                mark = "*" if row["significant"][i] else " "
                line += f"{_f(row['delta'][i], True):>10}{_f(row['p_adjusted'][i]):>9}{mark} "
            lines.append(line)
    na = cmp.no_answer
    if na is not None:
        lines.append("")
        lines.append(f"no-answer AUROC  ({na['queries']} queries, {na['unanswerable']} unanswerable; {na['method']})")
        line = f"{'AUROC':<10}" + "".join(f"{_f(v):>{w}}" for v in na["values"])
        for i in range(1, len(names)):
            mark = "*" if na["significant"][i] else " "
            line += f"{_f(na['delta'][i], True):>10}{_f(na['p_adjusted'][i]):>9}{mark} "
        lines.append(line)
        lines.append("95% interval of the AUROC delta: " + ", ".join(
            f"[{i}] {_f(na['ci'][i][0], True)} to {_f(na['ci'][i][1], True)}" for i in range(1, len(names))))
    for n in cmp.notes:
        lines.append(f"note: {n}")
    lines.append(f"* p < {cmp.alpha}" + (" after Holm's correction over the runs compared" if cmp.correction == "holm" else ""))
    return "\n".join(lines) + "\n"
