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

The tests of one comparison (each metric asked for in each group asked for, for each run after the
first, and the no-answer AUROC) are one family, adjusted together; a comparison whose per-query values
are all the same (every difference 0) is reported as ``identical`` and left out of the family, so
degenerate tests do not dilute the others. The family is adjusted with Benjamini-Hochberg by default (scipy's
``false_discovery_control``; Benjamini & Hochberg 1995), Holm's step-down method (Holm, "A simple
sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979; a few lines here, as
neither scipy nor ranx has it and statsmodels is not a dependency) or none. Each delta carries a
95% paired bootstrap interval (``scipy.stats.bootstrap``, BCa, fixed seed) and Cohen's d for paired
values. The no-answer AUROC, which is not a mean over queries, is compared with a paired,
stratified bootstrap over queries (AUROC by scikit-learn's ``roc_auc_score``, and on each resample
as scipy's Mann-Whitney U / (n1 n0)), fixed seed. A resampled p is never 0: scipy's permutation test
and the AUROC bootstrap count the observed value among the resamples ((b + 1) / (B + 1)).

Any metric of the registry (``searchkit.evaluate.measures``) compares: the values a run folder holds,
or, for an ir_measures measure it lacks, values computed from its ``run.trec``
(``searchkit.evaluate.run_values``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from searchkit.errors import InputError
from searchkit.evaluate.halves import half_of
from searchkit.evaluate.measures import Metric, metric
from searchkit.evaluate.run import BREAKDOWNS
from searchkit.evaluate.run_values import metric_values
from searchkit.evaluate.significance import (
    CONFIDENCE,
    CORRECTION_NAMES,
    CORRECTIONS,
    DEFAULT_CORRECTION,
    N_BOOTSTRAP,
    N_PERMUTATIONS,
    SEED,
    TESTS,
    auroc_bootstrap,
    benjamini_hochberg,
    check_test,
    effect_size,
    holm,
    paired_ci,
    paired_p,
    paired_test,
)

if TYPE_CHECKING:
    from searchkit.evaluate.runs import RunFolder

__all__ = [
    "CONFIDENCE", "CORRECTION_NAMES", "CORRECTIONS", "DEFAULT_CORRECTION", "N_BOOTSTRAP", "N_PERMUTATIONS", "TESTS",
    "SEED", "Comparison", "auroc_bootstrap",
    "benjamini_hochberg", "compare_runs", "effect_size", "has_no_answer", "holm", "only_significant", "paired_ci", "paired_p",
    "paired_test", "render",
]

# ----------------------------------------------------------------------------------------------
# comparing run folders

BY: dict[str, str] = {"lang": "by_lang", "category": "by_category", "kind": "by_kind", "kinds_filter": "by_kinds_filter"}
"""``compare --by`` names and the breakdown each selects (``none``: the ``all`` rows only)."""


@dataclass(frozen=True)
class Comparison:
    """Runs compared against the first: per section (all, then each breakdown group) and metric,
    each run's value, its delta against the baseline with a paired bootstrap interval and an effect
    size, p, the p adjusted over every test of the comparison (``correction``) and a significance
    flag; ``tests`` is how many tests the correction counted."""

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
    tests: int = 0
    confidence: float = CONFIDENCE
    n_bootstrap: int = N_BOOTSTRAP
    breakdowns: tuple[str, ...] = ()
    only_significant: bool = False
    identical: int = 0
    """How many comparisons (run x metric x group) had every per-query value the same: reported as
    identical, not tested, not in the family."""
    metrics: tuple[str, ...] = ()

    @property
    def all_identical(self) -> bool:
        """Every comparison made is identical (``compare A A``)."""
        return self.identical > 0 and self.tests == 0

    def methods(self) -> dict[str, str]:
        """How each figure was computed, in words."""
        test = ("Fisher's randomization test of the mean paired difference (scipy permutation_test)"
                if self.test == "fisher" else "paired t-test (scipy ttest_rel)")
        return {
            "test": f"{test}, two-sided, seed {self.seed}",
            "correction": correction_text(self.correction, self.tests, self.identical),
            "ci": (f"{self.confidence:.0%} paired bootstrap interval of the mean difference (scipy bootstrap, BCa, "
                   f"{self.n_bootstrap} resamples, seed {self.seed}); AUROC: stratified paired bootstrap"),
            "effect_size": "Cohen's d for paired values (d_z): mean difference / standard deviation of the differences",
        }

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
            "tests": self.tests,
            "identical": self.identical,
            "all_identical": self.all_identical,
            "metrics": list(self.metrics),
            "confidence": self.confidence,
            "seed": self.seed,
            "by": list(self.breakdowns),
            "only_significant": self.only_significant,
            "methods": self.methods(),
            "sections": [dict(s) for s in self.sections],
            "no_answer": dict(self.no_answer) if self.no_answer is not None else None,
            "notes": list(self.notes),
        }


def correction_text(correction: str, tests: int, identical: int = 0) -> str:
    """How p was adjusted, in words (for the text table, the report and ``methods``)."""
    plural = "s" if tests != 1 else ""
    left = (f"; {identical} identical comparison{'s' if identical != 1 else ''} left out" if identical else "")
    if correction == "none":
        return f"not adjusted for multiple tests ({tests} test{plural}{left})"
    return (f"{CORRECTION_NAMES[correction]}-adjusted over the {tests} test{plural} asked for "
            f"(metrics x groups x runs{left})")


def _label(run: RunFolder) -> str:
    return str(run.path)


def _check_same_queries(runs: Sequence[Any]) -> None:
    base = runs[0]
    for other in runs[1:]:
        if other.query_set != base.query_set:
            (d1, s1, h1), (d2, s2, h2) = base.query_set, other.query_set
            raise InputError(
                f"{_label(base)} ({d1} {s1}, dataset sha256 {h1[:12]}) and {_label(other)} ({d2} {s2}, dataset "
                f"sha256 {h2[:12]}) are over different query sets; compare runs of one dataset split"
            )


def _breakdowns(by: Sequence[str] | None) -> tuple[str, ...]:
    """The breakdowns ``--by`` selects (``None``: all of them; ``none``: only the ``all`` rows)."""
    if by is None:
        return tuple(BREAKDOWNS)
    names = [b.strip() for b in by if b.strip()]
    unknown = [b for b in names if b not in BY and b != "none"]
    if unknown:
        raise InputError(f"unknown --by {unknown[0][:40]!r}; valid: {', '.join([*BY, 'none'])}")
    if "none" in names and len(names) > 1:
        raise InputError("--by none (only the 'all' rows) goes alone")
    return tuple(dict.fromkeys(BY[b] for b in names if b != "none"))


def _groups(rows: Sequence[Mapping[str, Any]], breakdowns: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """(breakdown, group, query ids) of the judged queries: ``all`` first, then each of
    ``breakdowns`` with more than one group (the rule eval uses)."""
    judged = sorted((q for q in rows if q.get("metrics") is not None), key=lambda q: q["id"])
    out = [("all", "all", [q["id"] for q in judged])]
    for name in breakdowns:
        members: dict[str, list[str]] = {}
        for q in judged:
            for g in BREAKDOWNS[name](q):
                members.setdefault(g, []).append(q["id"])
        if len(members) > 1:
            out.extend((name, g, ids) for g, ids in sorted(members.items()))
    return out


def _chosen_metrics(metrics: Sequence[str] | None, available: Sequence[str]) -> tuple[list[Metric], bool]:
    """(per-query metrics, whether the no-answer AUROC is compared) for ``--metric``: any registry name
    (``searchkit.evaluate.measures``); default: every metric the runs' rows share, and AUROC."""
    if metrics is None:
        return [metric(m) for m in available], True
    names = list(dict.fromkeys(m.strip() for m in metrics if m.strip()))
    if not names:
        raise InputError(f"no metric named; these runs have: {', '.join([*available, 'AUROC'])}")
    chosen: list[Metric] = []
    auroc = False
    for name in names:
        try:
            m = metric(name)
        except InputError as exc:  # metric() raises nothing else
            raise InputError(f"{exc}; these runs have: {', '.join([*available, 'AUROC'])}") from None
        if m.name == "AUROC":
            auroc = True
        elif not m.per_query:
            raise InputError(f"metric {name!r} is a figure over all queries, not per query: compare tests "
                               "per-query metrics and the no-answer AUROC")
        elif m not in chosen:
            chosen.append(m)
    return chosen, auroc


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
    by: Sequence[str] | None = None,
    correction: str = DEFAULT_CORRECTION,
    confidence: float = CONFIDENCE,
) -> Comparison:
    """Compare run folders (``runs.load_run``) against the first one.

    Any ``RunFolder`` compares: a TREC run file scored on the same dataset split
    (``any_run.load_any_run``) or an evaluation held in memory (``searchkit.api.evaluate``). Where a
    run holds no no-answer figures (a TREC run: no weak-match probability) the AUROC comparison is
    left out and a note says so.

    Args:
        metrics: the metrics to compare: any registry name (``searchkit.evaluate.measures``: an
            ir_measures measure, a ragas score, ``AUROC`` for the no-answer comparison); default: every
            metric the runs' rows share, and AUROC. A run folder lacking an ir_measures measure gets it
            computed from its ``run.trec`` and its dataset's qrels (``run_values.metric_values``).
        half: ``tune`` or ``report`` (``searchkit.evaluate.tune.half_of`` of ``dataset:query_id``):
            compare that half of the queries only (a setting chosen on the tune half is quoted on
            the report half).
        by: the breakdowns (``lang``, ``category``, ``kind``, ``kinds_filter``; ``none``: only the
            ``all`` rows); None: all of them (``searchkit compare`` asks for none unless ``--by``).
        correction: ``bh`` (default), ``holm`` or ``none``, applied over the tests asked for together
            (each metric x group x run after the first, and the AUROC), identical comparisons left out.

    Each delta carries a paired bootstrap interval (``confidence``, ``n_bootstrap`` resamples) and
    Cohen's d_z; a group of one query has no test, interval or effect size (its ``n`` says why). A
    comparison whose per-query values are all the same is ``identical`` (p 1, no adjusted p, not in
    the family).

    Raises:
        InputError: fewer than two runs, runs over different query sets (dataset hash or
            split differ; the message names both), runs whose per-query values differ in
            their queries, an unknown metric, breakdown or correction, an ``alpha``
            outside (0, 1), or an unknown test.
        InputError: a run lacks a metric asked for that cannot be computed (one line).
    """
    check_test(test)
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must be between 0 and 1, got {alpha}")
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction[:40]!r}; valid: {', '.join(CORRECTIONS)}")
    if len(runs) < 2:
        raise InputError("compare needs at least two run folders")
    _check_same_queries(runs)
    breakdowns = _breakdowns(by)
    keep = _half_filter(runs[0].query_set[0], half)
    per_query = [{q: v for q, v in r.per_query().items() if keep(q)} for r in runs]
    base_rows = [q for q in runs[0].queries if keep(q["id"])]
    if not per_query[0]:
        raise InputError(f"{_label(runs[0])} has no judged queries to compare")
    for r, pq in zip(runs[1:], per_query[1:]):
        if set(pq) != set(per_query[0]):
            raise InputError(f"{_label(runs[0])} and {_label(r)} judge different queries; rerun both with this searchkit")
    available = [m for m in next(iter(per_query[0].values())) if all(m in pq[q] for pq in per_query for q in pq)]
    chosen, with_auroc = _chosen_metrics(metrics, available)
    computed: list[str] = []
    values = metric_values(runs, chosen, sorted(per_query[0]), computed_note=computed)

    sections: list[dict[str, Any]] = []
    for breakdown, group, ids in _groups(base_rows, breakdowns) if chosen else ():
        rows = [_metric_row(m.name, ids, values[m.name], test=test, seed=seed, n_resamples=n_resamples,
                            n_bootstrap=n_bootstrap, confidence=confidence) for m in chosen]
        sections.append({"breakdown": breakdown, "group": group, "n": len(ids), "queries": len(ids), "metrics": rows})

    d, s, h = runs[0].query_set
    notes = [] if half is None else [f"only the {half} half of the queries (half_of of '{d}:query_id')"]
    notes += computed
    for m in chosen:
        scored = min(len(v) for v in values[m.name])
        if scored < len(per_query[0]):
            notes.append(f"{m.name}: {scored} of the {len(per_query[0])} judged queries have a value in every run "
                         "(the others were not scored); its rows are over those")
    no_answer = _no_answer_part(runs, seed, n_bootstrap, keep, confidence, notes) if with_auroc else None
    with_auroc = no_answer is not None
    tests, identical = _correct([row for sec in sections for row in sec["metrics"]] + ([no_answer] if no_answer else []),
                                correction, alpha)
    info = []
    for r in runs:
        m = r.metrics
        info.append({"name": r.name, "path": str(r.path), "config_fingerprint": m.get("config_fingerprint"),
                     "measured": m.get("path", "searcher")})
    if {"searcher", "tool"} <= {i["measured"] for i in info}:
        notes.append("the runs measured different paths (searcher / tool): the tool returns at most 15 cards, "
                     "so R@20 and R@100 differ by construction")
    asked = (*(m.name for m in chosen), *(("AUROC",) if with_auroc else ()))  # what was compared
    return Comparison(tuple(info), d, s, h, test, alpha, correction, seed, tuple(sections), no_answer, tuple(notes),
                      tests=tests, confidence=confidence, n_bootstrap=n_bootstrap, breakdowns=breakdowns,
                      identical=identical, metrics=asked)


def _no_answer_part(runs: Sequence[RunFolder], seed: int, n_bootstrap: int, keep: Callable[[str], bool],
                    confidence: float, notes: list[str]) -> dict[str, Any] | None:
    """The AUROC comparison, or None with a note saying why there is none: a run without weak-match
    probabilities (a TREC run), or queries of one class only."""
    lacking = [r.name for r in runs if not has_no_answer(r)]
    if lacking:
        notes.append(f"no AUROC comparison: {', '.join(lacking)} {'holds' if len(lacking) == 1 else 'hold'} no "
                     "no-answer figures (a TREC run has no weak-match probability); the no-answer comparison is "
                     "left out")
        return None
    no_answer = _compare_no_answer(runs, seed, n_bootstrap, keep, confidence)
    if no_answer is None:
        notes.append("no AUROC comparison: the queries compared are all answerable (or all unanswerable)")
    return no_answer


def has_no_answer(run: RunFolder) -> bool:
    """Whether a run holds what the no-answer comparison reads: a finite weak-match probability
    (``answer_probability``) on every query row. A TREC run file (``any_run``) has none."""
    for q in run.queries:
        p = q.get("answer_probability")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p):
            return False
    return True


def _metric_row(metric: str, ids: Sequence[str], per_run: Sequence[Mapping[str, float]], *,
                test: str, seed: int, n_resamples: int, n_bootstrap: int, confidence: float) -> dict[str, Any]:
    """One metric in one group: each run's mean, and against the baseline its delta, interval,
    effect size, raw p and whether every per-query value is the same (``identical``); ``p_adjusted``
    and ``significant`` are filled by ``_correct``. The queries are those of ``ids`` every run has a
    value for (all of them, but for a score some queries lack)."""
    ids = [q for q in ids if all(q in v for v in per_run)]
    base = [per_run[0][q] for q in ids]
    others = [[v[q] for q in ids] for v in per_run[1:]]
    values = [float(np.mean(base)) if ids else math.nan] + [float(np.mean(o)) if ids else math.nan for o in others]
    return {
        "metric": metric,
        "n": len(ids),
        "values": values,
        "delta": [None] + [v - values[0] for v in values[1:]],
        "ci": [None] + [paired_ci(base, o, confidence=confidence, n_resamples=n_bootstrap, seed=seed) for o in others],
        "effect_size": [None] + [effect_size(base, o) for o in others],
        "p": [None] + [paired_p(base, o, test, seed=seed, n_resamples=n_resamples) for o in others],
        "identical": [None] + [bool(ids) and o == base for o in others],
    }


def _correct(rows: Sequence[dict[str, Any]], correction: str, alpha: float) -> tuple[int, int]:
    """Adjust the p-values of every row together (one family: the metrics, groups and runs asked
    for) and mark the significant ones. A comparison with identical values, or of a group of one
    query, is not tested and stays out of the family (``p_adjusted`` None). Returns (tests in the
    family, identical comparisons left out)."""
    cells, identical = [], 0
    for row in rows:
        same = row.get("identical") or [None] * len(row["p"])
        for i in range(1, len(row["p"])):
            if same[i]:
                identical += 1
            elif row["p"][i] is not None and not math.isnan(row["p"][i]):
                cells.append((row, i))
    adjusted = CORRECTIONS[correction]([row["p"][i] for row, i in cells])
    for row in rows:
        row["p_adjusted"] = [None] + [None if (row.get("identical") or [None] * len(row["p"]))[i] else math.nan
                                      for i in range(1, len(row["p"]))]
        row["significant"] = [None] + [False] * (len(row["p"]) - 1)
    for (row, i), q in zip(cells, adjusted):
        row["p_adjusted"][i] = q
        row["significant"][i] = bool(q < alpha)
    return len(cells), identical


def only_significant(cmp: Comparison) -> Comparison:
    """``cmp`` with only the rows where some run differs significantly from the baseline (after
    the correction, which still counted every test); sections left empty are dropped."""
    def hit(row: Mapping[str, Any]) -> bool:
        return any(row["significant"][1:])

    total = sum(len(s["metrics"]) for s in cmp.sections) + (cmp.no_answer is not None)
    sections = tuple({**s, "metrics": [r for r in s["metrics"] if hit(r)]} for s in cmp.sections)
    sections = tuple(s for s in sections if s["metrics"])
    no_answer = cmp.no_answer if cmp.no_answer is not None and hit(cmp.no_answer) else None
    shown = sum(len(s["metrics"]) for s in sections) + (no_answer is not None)
    note = f"only the rows with a significant difference: {shown} of {total} rows"
    return replace(cmp, sections=sections, no_answer=no_answer, notes=(*cmp.notes, note), only_significant=True)


def _half_filter(dataset: str, half: str | None) -> Any:
    if half is None:
        return _everything
    if half not in ("tune", "report"):
        raise InputError(f"half must be tune or report, got {half!r}")

    return lambda qid: half_of(f"{dataset}:{qid}") == half


def _everything(_qid: str) -> bool:
    return True


def _compare_no_answer(runs: Sequence[RunFolder], seed: int, n_bootstrap: int,
                       keep: Callable[[str], bool] = _everything,
                       confidence: float = CONFIDENCE) -> dict[str, Any] | None:
    rows = [{q["id"]: q for q in r.queries if keep(q["id"])} for r in runs]
    ids = sorted(rows[0])
    if any(set(r) != set(ids) for r in rows[1:]):
        raise InputError(f"{_label(runs[0])} and the other runs hold different queries")
    labels = [bool(rows[0][q]["answerable"]) for q in ids]
    if len(set(labels)) < 2:
        return None
    probs = [[float(r[q].get("answer_probability", 0.0)) for q in ids] for r in rows]
    boots = [auroc_bootstrap(labels, probs[0], p, n_resamples=n_bootstrap, seed=seed, confidence=confidence)
             for p in probs[1:]]
    return {
        "metric": "AUROC",
        "n": len(ids),
        "queries": len(ids),
        "unanswerable": labels.count(False),
        "values": [boots[0]["AUROC_a"]] + [b["AUROC_b"] for b in boots],
        "delta": [None] + [b["delta"] for b in boots],
        "ci": [None] + [[b["ci_low"], b["ci_high"]] for b in boots],
        "effect_size": [None] * len(runs),
        "p": [None] + [b["p"] for b in boots],
        "identical": [None] + [p == probs[0] for p in probs[1:]],
        "method": f"paired stratified bootstrap over queries, {n_bootstrap} resamples, seed {seed}",
    }


# ----------------------------------------------------------------------------------------------
# the text table


def _f(v: float | None, signed: bool = False) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return f"{v:+.4f}" if signed else f"{v:.4f}"


def _ci_text(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


def _d_text(d: float | None) -> str:
    return "" if d is None else f"{d:+.2f}"


def _raw_text(row: Mapping[str, Any], i: int) -> str:
    """The unadjusted p of run ``i`` (blank where there is no test: identical values, one query)."""
    p = row["p"][i]
    if (row.get("identical") or [None] * (i + 1))[i] or p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return f"{p:.4f}"


def _p_text(row: Mapping[str, Any], i: int) -> str:
    """The adjusted p of run ``i`` with ``*`` when significant; ``n=1`` where a group of one query
    has no test."""
    if (row.get("identical") or [None] * (i + 1))[i]:
        return "identical"
    if row["n"] < 2:
        return f"n={row['n']}"
    p = row["p_adjusted"][i]
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return f"{p:.4f}" + ("*" if row["significant"][i] else " ")


def _group_label(breakdown: str, group: str) -> str:
    return "all" if breakdown == "all" else f"{breakdown.removeprefix('by_').replace('_', '-')} {group}"


def render(cmp: Comparison) -> str:
    """The comparison as one text table, a row per metric and group: n, each run's value, and per
    run after the first its delta, the bootstrap interval of the delta, Cohen's d_z, the raw p and the
    adjusted p (``*`` where significant at ``alpha``; ``n=1`` where a group has no test; ``identical``
    where every per-query value is the same: no test)."""
    names = [r["name"] for r in cmp.runs]
    lines = [f"baseline {names[0]}; {cmp.dataset} {cmp.split}; test {cmp.test}, alpha {cmp.alpha}; "
             f"p {correction_text(cmp.correction, cmp.tests, cmp.identical)}"]
    for i, n in enumerate(names):
        lines.append(f"  [{i}] {n}  {cmp.runs[i]['path']}  (config {cmp.runs[i]['config_fingerprint']}, {cmp.runs[i]['measured']})")
    if cmp.all_identical:
        lines.append("identical: every per-query value of every metric compared is the same in "
                     + (" and ".join(names) if len(names) == 2 else "all the runs") + " (nothing to test)")
    rows = [(_group_label(s["breakdown"], s["group"]), s["breakdown"], r) for s in cmp.sections for r in s["metrics"]]
    if cmp.no_answer is not None:
        at = next((k for k, (_, b, _) in enumerate(rows) if b != "all"), len(rows))
        rows.insert(at, ("all", "all", cmp.no_answer))
    if not rows:
        lines += ["", "no rows to show" + (" (no significant difference)" if cmp.only_significant else "")]
    gw = max([5, *(len(g) + 1 for g, _, _ in rows)])
    vw = max(9, *(min(len(n), 12) + 2 for n in names))
    conf = f"{cmp.confidence:.0%} CI"
    mw = max([10, *(len(r["metric"]) + 1 for _, _, r in rows)])
    head = f"{'group':<{gw}}{'n':>5}  {'metric':<{mw}}" + "".join(f"{n[:vw - 2]:>{vw}}" for n in names)
    head += "".join(f"{'Δ' + str(i):>9}  {conf + ' Δ' + str(i):<20}{'d' + str(i):>6}{'raw p' + str(i):>9}"
                    f"{'p' + str(i):>10} "
                    for i in range(1, len(names)))
    previous = None
    for label, breakdown, row in rows:
        if breakdown != previous:
            lines += ["", head]
            previous = breakdown
        line = f"{label[:gw - 1]:<{gw}}{row['n']:>5}  {row['metric']:<{mw}}" + "".join(f"{_f(v):>{vw}}" for v in row["values"])
        for i in range(1, len(names)):
            line += (f"{_f(row['delta'][i], True):>9}  {_ci_text(row['ci'][i]):<20}{_d_text(row['effect_size'][i]):>6}"
                     f"{_raw_text(row, i):>9}{_p_text(row, i):>10} ")
        lines.append(line.rstrip())
    if cmp.no_answer is not None:
        na = cmp.no_answer
        lines.append("")
        lines.append(f"AUROC (no answer): {na['n']} queries, {na['unanswerable']} unanswerable; {na['method']}")
    for n in cmp.notes:
        lines.append(f"note: {n}")
    lines.append(f"* p < {cmp.alpha} after {CORRECTION_NAMES[cmp.correction]}" if cmp.correction != "none"
                 else f"* p < {cmp.alpha} (no correction for multiple tests)")
    lines.append(f"d: Cohen's d_z of the paired differences; {conf}: paired bootstrap ({cmp.n_bootstrap} resamples); "
                 "raw p: before the correction; n=1: one query, no test; identical: every per-query value the same, no test "
                 "(not in the family)")
    return "\n".join(lines) + "\n"
