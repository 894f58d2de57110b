"""Tables (pandas) of run folders and comparisons, and why a group can or cannot show a star.

Part of ``searchkit.evaluate.research`` (its docstring says what the notebooks call); import
from there.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from searchkit.errors import InputError
from searchkit.evaluate.compare import CORRECTION_NAMES, N_PERMUTATIONS, TESTS
from searchkit.evaluate.research.base import HEADLINE, _pd

if TYPE_CHECKING:
    from searchkit.evaluate.compare import Comparison
    from searchkit.evaluate.datasets import Dataset
    from searchkit.evaluate.runs import RunFolder
    from searchkit.evaluate.task_eval import TaskSet

# --------------------------------------------------------------------------- tables


def headline_frame(runs: Sequence[Any] | Mapping[str, Any], metrics: Sequence[str] = HEADLINE) -> Any:
    """One row per run (``{label: RunFolder}`` or a list, labelled by folder name): the ranking
    metrics, the no-answer AUROC and the query counts, as ``metrics.json`` holds them."""
    pd = _pd()
    items = runs.items() if isinstance(runs, Mapping) else ((r.name, r) for r in runs)
    rows = []
    for label, run in items:
        m = run.metrics
        row = {"run": label, "dataset": m.get("dataset"), "split": m.get("split")}
        row.update({k: m.get("metrics", {}).get(k, math.nan) for k in metrics})
        row["AUROC"] = m.get("no_answer", {}).get("AUROC", math.nan)
        row["queries"] = m.get("counts", {}).get("queries")
        row["unanswerable"] = m.get("counts", {}).get("unanswerable")
        rows.append(row)
    return pd.DataFrame(rows).set_index("run")


def breakdown_frame(runs: Sequence[Any] | Mapping[str, Any], breakdown: str = "by_lang",
                    metric: str = "nDCG@10") -> Any:
    """``metric`` per group of ``breakdown`` (``by_lang``, ``by_category``, ``by_kind``,
    ``by_kinds_filter``) as ``metrics.json`` holds it: one column per run, one row per group."""
    pd = _pd()
    items = runs.items() if isinstance(runs, Mapping) else ((r.name, r) for r in runs)
    cols = {label: {g: v.get(metric, math.nan) for g, v in (run.metrics.get(breakdown) or {}).items()}
            for label, run in items}
    return pd.DataFrame(cols)


def query_frame(run: RunFolder, dataset: Dataset | TaskSet | None = None) -> Any:
    """One row per query of a run folder: language, category, label, P(answer), the warnings and
    the per-query metrics; with ``dataset`` (the loaded split) the query text too."""
    pd = _pd()
    texts = {q.id: q.text for q in dataset.queries} if dataset is not None else {}
    rows = []
    for q in run.queries:
        row = {"id": q["id"], "lang": q.get("lang"), "category": q.get("category"), "answerable": q.get("answerable"),
               "P(answer)": q.get("answer_probability"), "weak_match": q.get("weak_match"),
               "missing_ids": ", ".join(q.get("missing_ids") or ()), "id_in_corpus": q.get("id_in_corpus")}
        row.update(q.get("metrics") or {})
        if texts:
            row["text"] = texts.get(q["id"], "")
        rows.append(row)
    return pd.DataFrame(rows).set_index("id")


def _cut(text: str, chars: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= chars else text[:chars - 1] + "…"


def worst_frame(run: RunFolder, dataset: Dataset | TaskSet | None = None, metric: str = "nDCG@10", n: int = 10, *,
                metrics: Sequence[str] = ("nDCG@10", "RR@10", "R@10"), text_chars: int = 60) -> Any:
    """The ``n`` judged queries of a run with the lowest ``metric`` (``worst_queries``), in a table
    narrow enough for a notebook: language, category, P(answer), ``metrics`` (``metric`` first)
    and, with ``dataset``, the query text cut to ``text_chars`` characters."""
    pd = _pd()
    texts = {q.id: q.text for q in dataset.queries} if dataset is not None else {}
    shown = list(dict.fromkeys([metric, *metrics]))
    rows = []
    for q in worst_queries(run, metric, n):
        row = {"id": q["id"], "lang": q.get("lang"), "category": q.get("category"),
               "P(answer)": q.get("answer_probability")}
        row.update({m: (q.get("metrics") or {}).get(m, math.nan) for m in shown})
        if texts:
            row["text"] = _cut(texts.get(q["id"], ""), text_chars)
        rows.append(row)
    columns = ["id", "lang", "category", "P(answer)", *shown, *(["text"] if texts else [])]
    return pd.DataFrame(rows, columns=columns).set_index("id")


def group_table(run: RunFolder, breakdown: str = "by_lang",
                metrics: Sequence[str] = ("nDCG@10", "R@10")) -> dict[str, dict[str, float]]:
    """``{metric: {group: value}}`` of one run's ``breakdown`` (for ``plots.grouped_bars``)."""
    groups = run.metrics.get(breakdown) or {}
    return {m: {g: float(v.get(m, math.nan)) for g, v in groups.items()} for m in metrics}


def significance_marks(cmp: Comparison | None, breakdown: str = "all", metric: str = "nDCG@10") -> dict[str, dict[str, str]]:
    """``{run name: {group: "*"}}`` where a run differs significantly from the baseline on
    ``metric`` in a group of ``breakdown`` (``compare.Comparison``; for ``plots.grouped_bars``)."""
    out: dict[str, dict[str, str]] = {}
    if cmp is None:
        return out
    names = [r["name"] for r in cmp.runs]
    for sec in cmp.sections:
        if sec["breakdown"] != breakdown:
            continue
        row = next((m for m in sec["metrics"] if m["metric"] == metric), None)
        for i in range(1, len(names)):
            if row is not None and row["significant"][i]:
                out.setdefault(names[i], {})[sec["group"]] = "*"
    return out


def worst_queries(run: RunFolder, metric: str = "nDCG@10", n: int = 10) -> list[Mapping[str, Any]]:
    """The ``n`` judged queries of a run with the lowest ``metric`` (ties by id), as run rows."""
    judged = [q for q in run.queries if q.get("metrics") is not None]
    judged.sort(key=lambda q: (float(q["metrics"].get(metric, math.nan)), q["id"]))
    return judged[:n]


def _run_labels(cmp: Comparison, labels: Mapping[str, str] | Sequence[str] | None) -> list[str]:
    """The column name of each run of a comparison: ``labels`` (a list in the comparison's order,
    or ``{run folder name: label}``), else the run folder's name."""
    names = [r["name"] for r in cmp.runs]
    if labels is None:
        return names
    shown = [labels.get(n, n) for n in names] if isinstance(labels, Mapping) else [str(x) for x in labels]
    if len(shown) != len(names):
        raise InputError(f"{len(shown)} labels for the {len(names)} runs of the comparison")
    if len(set(shown)) != len(shown):
        raise InputError(f"two runs of the comparison have one label ({', '.join(shown)}): name them apart")
    return shown


def _ci_cell(ci: Sequence[float] | None) -> str:
    """A delta's interval as compare's text table writes it: ``[-0.0123, +0.0456]`` (blank: none)."""
    return "" if not ci else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


def _number_or_nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


def _comparison_cells(row: dict[str, Any], m: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """Each run's value in ``row``, and for each run after the first its delta, interval, d_z, raw
    and adjusted p and mark."""
    same = m.get("identical") or [None] * len(names)
    for i, name in enumerate(names):
        row[name] = m["values"][i]
        if not i:
            continue
        row[f"Δ {name}"] = m["delta"][i]
        row[f"CI {name}"] = _ci_cell(m["ci"][i])
        row[f"d {name}"] = _number_or_nan(m["effect_size"][i])
        row[f"raw p {name}"] = math.nan if same[i] else _number_or_nan(m["p"][i])
        row[f"p {name}"] = m["p_adjusted"][i]
        row[f"sig {name}"] = "identical" if same[i] else ("*" if m["significant"][i] else "")
    return row


def comparison_frame(cmp: Comparison, breakdown: str = "all", *, labels: Mapping[str, str] | Sequence[str] | None = None) -> Any:
    """A ``compare.Comparison`` as a table: for each section of ``breakdown`` and each metric, every
    run's value, and for each run after the first (columns named by the run) its delta (``Δ``), the
    bootstrap interval of the delta (``CI``, as compare's text table writes it), Cohen's d_z (``d``),
    the raw p (``raw p``: before the correction; NaN where there is no test), the p adjusted by the
    comparison's correction over every test of the comparison (``p``) and ``sig``: ``*`` where
    significant at the comparison's alpha, ``identical`` where every per-query value is the same (no
    test, not in the correction's family). Runs are named by ``labels`` (a list in the comparison's
    order, or ``{run name: label}``; default the runs' names: folder names or their labels)."""
    pd = _pd()
    names = _run_labels(cmp, labels)
    rows = []
    for sec in cmp.sections:
        if sec["breakdown"] != breakdown:
            continue
        for m in sec["metrics"]:
            rows.append(_comparison_cells({"group": sec["group"], "queries": sec["queries"], "metric": m["metric"]},
                                          m, names))
    if cmp.no_answer is not None and breakdown == "all":
        na = cmp.no_answer
        rows.append(_comparison_cells({"group": "all", "queries": na["queries"], "metric": "AUROC (no answer)"},
                                      na, names))
    return pd.DataFrame(rows)


def min_p(n: int, test: str = "fisher", n_resamples: int | None = None) -> float:
    """The smallest two-sided p ``compare``'s paired test can give over ``n`` queries, whatever
    their values (nan below 2 queries: no test).

    ``fisher``: the randomization test enumerates the ``2**n`` sign flips when they are at most
    ``n_resamples`` (``compare.N_PERMUTATIONS``): only no flip and the flip of every sign reach
    the observed mean difference's size, and only when every query moved the same way, so p is
    at least ``2 / 2**n`` (0.031 for 6 queries). Beyond that it samples ``n_resamples`` flips and
    p is at least ``2 / (n_resamples + 1)``. ``student``: no floor (0.0): a t statistic grows
    without bound."""
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; valid: {', '.join(TESTS)}")
    if n < 2:
        return math.nan
    if test == "student":
        return 0.0
    resamples = N_PERMUTATIONS if n_resamples is None else n_resamples
    return 2.0 / 2 ** n if 2 ** n <= resamples else 2.0 / (resamples + 1)


def _needed_below_alpha(floor: float, tests: int, alpha: float, correction: str) -> int | None:
    """How many tests of a family of ``tests`` must have p below ``alpha`` (this one included)
    before a test whose p is at least ``floor`` can be significant after ``correction``; None
    when it never can. Benjamini-Hochberg rejects p_(k) when p_(k) * m / k < alpha, so with
    p >= floor it needs k > m * floor / alpha; Holm's step-down needs (m - r + 1) * p < alpha at
    every rank up to its own, so every test ranked before it too."""
    if math.isnan(floor) or floor >= alpha:
        return None
    if correction == "none":
        return 1
    if correction == "holm":
        ranked_before = max(0, math.floor(tests + 1 - alpha / floor))
        return ranked_before + 1
    return min(tests, math.floor(tests * floor / alpha) + 1)


def star_reach(cmp: Comparison, breakdown: str = "by_lang") -> Any:
    """Whether a group of ``breakdown`` can get a ``*`` at all in a ``compare.Comparison``: per
    group its judged queries ``n``, the smallest p its paired test can give (``min_p``), how
    many of the comparison's tests would need p below alpha for that p to survive the
    correction (this one included), how many have it here, and ``star possible`` (False: no
    ``*`` can appear; True: not ruled out, which is a necessary condition only). With 6
    queries a group the randomization test's p is at least 0.031, and Benjamini-Hochberg over
    100 tests lets it through only when 63 of them are below 0.05."""
    pd = _pd()
    below = sum(1 for row in _family(cmp) for p in row["p"][1:] if p is not None and not math.isnan(p) and p < cmp.alpha)
    rows = []
    for sec in cmp.sections:
        if sec["breakdown"] != breakdown:
            continue
        floor = min_p(int(sec["n"]), cmp.test)
        needed = _needed_below_alpha(floor, cmp.tests, cmp.alpha, cmp.correction)
        rows.append({"group": sec["group"], "n": sec["n"], "smallest p possible": floor,
                     "tests needed below alpha": needed if needed is not None else math.nan,
                     "tests below alpha here": below,
                     "star possible": needed is not None and below >= needed})
    columns = ["group", "n", "smallest p possible", "tests needed below alpha", "tests below alpha here", "star possible"]
    return pd.DataFrame(rows, columns=columns).set_index("group")


def _family(cmp: Comparison) -> list[Mapping[str, Any]]:
    """Every row of a comparison whose tests its correction counted (metrics in every group, the AUROC)."""
    rows = [m for sec in cmp.sections for m in sec["metrics"]]
    return rows + ([cmp.no_answer] if cmp.no_answer is not None else [])


def star_reach_note(cmp: Comparison, breakdown: str = "by_lang") -> str:
    """``star_reach`` in words: why a group of ``breakdown`` cannot get a ``*`` in this comparison
    (or that it can), and the pooled test (the ``all`` rows) to read instead."""
    frame = star_reach(cmp, breakdown)
    if frame.empty:
        return f"no {breakdown} groups in this comparison"
    blocked = frame[~frame["star possible"]]
    pooled = next((s["n"] for s in cmp.sections if s["breakdown"] == "all"), None)
    what = {"by_lang": "language"}.get(breakdown, breakdown.removeprefix("by_").replace("_", " "))
    if blocked.empty:
        return (f"every {what} group can show a significant difference here (the smallest p of each is "
                f"below {cmp.alpha} and enough tests are)")
    sizes = ", ".join(f"{g} {int(r['n'])}" for g, r in blocked.iterrows())
    floors = sorted({float(r["smallest p possible"]) for _, r in blocked.iterrows()})
    lines = [f"No {what} group can get a * here ({sizes} judged queries): with n queries the {cmp.test} test's "
             f"p is at least {', '.join(f'{f:.3g}' for f in floors)} (2 / 2^n for the randomization test)."]
    if cmp.correction != "none" and all(f < cmp.alpha for f in floors):
        need = sorted({int(r["tests needed below alpha"]) for _, r in blocked.iterrows()
                       if not math.isnan(r["tests needed below alpha"])})
        lines.append(f"After {CORRECTION_NAMES[cmp.correction]} over the comparison's {cmp.tests} tests such a p is "
                     f"significant only when at least {', '.join(map(str, need))} of them have p < {cmp.alpha}; "
                     f"{int(frame['tests below alpha here'].iloc[0])} do.")
    if pooled is not None:
        lines.append(f"The pooled test over all {pooled} judged queries (the 'all' rows) is the one that can show a "
                     f"difference; the {what} rows give each group's size and direction.")
    return " ".join(lines)


