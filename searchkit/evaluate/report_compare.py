"""The comparison section of ``searchkit report`` (SPEC E4; issue 40 item 5).

Two comparisons against the first run (``compare.compare_runs``), each its own family for the
correction, as ``searchkit compare`` makes them:

- the **headline** table: the ``all`` rows of every metric the runs share and the no-answer AUROC
  (``compare_runs(runs, by=["none"])``: the tests asked for there, so a table of 8 rows is adjusted
  over its own tests, not over every group's);
- the **per-group** tables: one per metric for each breakdown (``compare_runs(runs)``: every
  breakdown, adjusted together), and the no-answer AUROC per group, computed but not tested.

Each delta shows the 95% paired bootstrap interval (``row["ci"]``), Cohen's d_z (``row["effect_size"]``),
the raw p (``row["p"]``) and the adjusted p with ``*`` where significant; a comparison whose per-query
values are all the same says ``identical`` (with a tooltip: not tested, not in the family).
"""
from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from searchkit.evaluate.compare import CORRECTION_NAMES, correction_text, has_no_answer
from searchkit.evaluate.run import BREAKDOWNS

if TYPE_CHECKING:
    from searchkit.evaluate.compare import Comparison

__all__ = ["IDENTICAL_TIP", "compare_section", "esc", "group_auroc", "num"]

BAR_METRIC = "nDCG@10"
IDENTICAL_TIP = "every per-query value is the same: not tested, not in the family"
"""The tooltip of an ``identical`` cell."""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def num(v: object, signed: bool = False) -> str:
    """A figure as the page shows it: 4 decimals (signed for a delta), ``nan``, an int as it is."""
    if v is None:
        return ""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:+.4f}" if signed else f"{v:.4f}"
    return esc(v)


def _at(row: Mapping[str, Any], key: str, i: int) -> Any:
    values = row.get(key)
    return values[i] if isinstance(values, (list, tuple)) and i < len(values) else None


def _ci(ci: object) -> str:
    if not isinstance(ci, (list, tuple)) or len(ci) != 2 or any(v is None or not math.isfinite(v) for v in ci):
        return ""
    return f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


def _d(d: float | None) -> str:
    return "" if d is None or (isinstance(d, float) and not math.isfinite(d)) else f"{d:+.2f}"


def _raw(p: float | None) -> str:
    return "" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.4f}"


def _tested_cells(row: Mapping[str, Any], i: int, correction: str, alpha: float) -> str:
    """Δ, the interval, d, raw p and adjusted p of run ``i``: ``identical`` (spanning both p cells) where
    every per-query value is the same, ``n=1`` where a group of one query has no test."""
    delta = row["delta"][i]
    if _at(row, "identical", i):
        return (f'<td class="num">{num(delta, signed=True)}</td><td class="num ci"></td><td class="num"></td>'
                f'<td class="num identical" colspan="2" title="{esc(IDENTICAL_TIP)}">identical</td>')
    sig = bool(_at(row, "significant", i))
    cls = "sig up" if sig and delta is not None and delta > 0 else ("sig down" if sig else "")
    tip = (f"p < {alpha}" + (f" after {CORRECTION_NAMES[correction]}" if correction != "none" else "")) if sig \
        else "not significant"
    n = row.get("n", 2)
    adjusted = f"n={n}" if isinstance(n, int) and n < 2 else num(_at(row, "p_adjusted", i)) + ("*" if sig else "")
    return (f'<td class="num {cls}" title="{esc(tip)}">{num(delta, signed=True)}{"*" if sig else ""}</td>'
            f'<td class="num ci">{esc(_ci(_at(row, "ci", i)))}</td><td class="num">{esc(_d(_at(row, "effect_size", i)))}</td>'
            f'<td class="num raw">{esc(_raw(_at(row, "p", i)))}</td><td class="num {cls} adj">{esc(adjusted)}</td>')


def _untested_cells(row: Mapping[str, Any], i: int) -> str:
    """Δ of a row the comparison did not test (a group's AUROC): no interval or p, and a title saying why."""
    return (f'<td class="num">{num(row["delta"][i], signed=True)}</td><td class="num ci"></td><td class="num"></td>'
            '<td class="num" colspan="2" title="not tested per group: the comparison tests the AUROC over all '
            'queries">–</td>')


def _table(cmp: Comparison, rows: Sequence[Mapping[str, Any]], first_col: str, *, metric: str = "") -> str:
    """Rows of a comparison: the first column, ``n`` (the queries the row is over), each run's value
    and, per run after the first, Δ, its interval, d, raw p and adjusted p."""
    names = [r["name"] for r in cmp.runs]
    conf = f"{cmp.confidence:.0%} CI"
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    head += "".join(f"<th>Δ {esc(n)}</th><th>{conf} Δ</th><th>d</th><th>raw p</th><th>p {esc(n)}</th>" for n in names[1:])
    body = []
    for row in rows:
        n = row.get("n", row.get("queries", ""))
        cells = f'<td class="num">{esc(n)}</td>' + "".join(f'<td class="num">{num(v)}</td>' for v in row["values"])
        tested = "p_adjusted" in row
        cells += "".join(_tested_cells(row, i, cmp.correction, cmp.alpha) if tested else _untested_cells(row, i)
                         for i in range(1, len(names)))
        where = f' data-metric="{esc(metric or row.get("metric", ""))}" data-group="{esc(row.get("group", "all"))}"'
        body.append(f'<tr{where} data-n="{esc(n)}"><th scope="row">{esc(row[first_col])}</th>{cells}</tr>')
    return (f'<div class="scroll"><table class="compare"><thead><tr><th>{esc(first_col)}</th><th>n</th>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def _family(cmp: Comparison) -> str:
    return correction_text(cmp.correction, cmp.tests, cmp.identical)


def compare_section(headline: Comparison, groups: Any, runs: Sequence[Any]) -> str:
    """The comparison section: ``headline`` (``compare_runs(runs, by=["none"])``) as the table of all
    judged queries, ``groups`` (``compare_runs(runs)``, or None) as the per-group tables, and the notes
    of both."""
    test = "Fisher randomization test" if headline.test == "fisher" else "paired t-test"
    parts = [f"<p>Baseline <b>{esc(headline.runs[0]['name'])}</b>; {test} over queries, seed {headline.seed}; "
             f"each Δ with its {headline.confidence:.0%} paired bootstrap interval, Cohen's d_z (d) and the raw p "
             f"beside the adjusted one; * marks an adjusted p &lt; {headline.alpha}. Green: significantly better "
             "than the baseline, red: significantly worse; <i>identical</i>: every per-query value is the same "
             "(not tested, not in the family).</p>"]
    allsec = next((s for s in headline.sections if s["breakdown"] == "all"), None)
    rows = [dict(m) for m in allsec["metrics"]] if allsec else []
    if headline.no_answer is not None:
        rows.append(dict(headline.no_answer, metric="AUROC (no answer)"))
    judged = allsec["queries"] if allsec else 0
    parts.append(f"<h3>All judged queries ({judged})</h3><p class=\"family\">p {esc(_family(headline))}.</p>"
                 + _table(headline, rows, "metric"))
    if headline.no_answer is not None:
        parts.append(f"<p class=\"note\">AUROC: {esc(headline.no_answer['method'])}.</p>")
    breakdowns: dict[str, list[Mapping[str, Any]]] = {}
    for s in (groups.sections if groups is not None else ()):
        if s["breakdown"] != "all":
            breakdowns.setdefault(s["breakdown"], []).append(s)
    if breakdowns:
        parts.append("<h3>Per group</h3><p>One table per metric for each breakdown: every group with the judged "
                     "queries it holds (<i>n</i>), each run's value, its delta, interval, d and p (a group of one "
                     "query has no test). These tests are one family of their own: p "
                     f"<span class=\"family\">{esc(_family(groups))}</span>. The no-answer AUROC per group is over "
                     "all its queries, where it holds both answerable and unanswerable ones; it is not tested per "
                     "group.</p>")
    for name, secs in breakdowns.items():
        parts.append(_group_tables(groups, runs, name, secs))
    notes = list(dict.fromkeys([*headline.notes, *(groups.notes if groups is not None else ())]))
    parts.extend(f'<p class="note">{esc(n)}</p>' for n in notes)
    return "".join(parts)


def _group_tables(cmp: Comparison, runs: Sequence[Any], breakdown: str, secs: Sequence[Mapping[str, Any]]) -> str:
    """A ``<details>`` table per metric of one breakdown (nDCG@10 open), then the AUROC per group."""
    label = breakdown.removeprefix("by_").replace("_", " ")
    metrics = list(dict.fromkeys(m["metric"] for s in secs for m in s["metrics"]))
    out = []
    for metric in metrics:
        rows = [dict(m, group=s["group"]) for s in secs for m in s["metrics"] if m["metric"] == metric]
        is_open = " open" if metric == BAR_METRIC else ""
        out.append(f'<details class="groups" data-breakdown="{esc(breakdown)}"{is_open}><summary>{esc(metric)} by '
                   f"{esc(label)} ({len(rows)} groups)</summary>" + _table(cmp, rows, "group", metric=metric)
                   + "</details>")
    auroc = group_auroc(runs, breakdown)
    if auroc:
        out.append(f'<details class="groups" data-breakdown="{esc(breakdown)}"><summary>AUROC (no answer) by '
                   f"{esc(label)} ({len(auroc)} groups with both classes)</summary>"
                   + _table(cmp, auroc, "group", metric="AUROC") + "</details>")
    return "".join(out)


def group_auroc(runs: Sequence[Any], breakdown: str) -> list[dict[str, Any]]:
    """The no-answer AUROC of each run in each group of ``breakdown`` over all the group's queries
    (answerable or not), where the group holds both classes: ``{group, n, unanswerable, values,
    delta}`` rows (scikit-learn's ``roc_auc_score``, as ``metrics.json``'s AUROC). None unless every
    run has a weak-match probability on every query (``compare.has_no_answer``; a TREC run has none)."""
    from sklearn.metrics import roc_auc_score

    if breakdown not in BREAKDOWNS or not all(has_no_answer(r) for r in runs):
        return []
    members: dict[str, list[str]] = {}
    base_rows = {q["id"]: q for q in runs[0].queries}
    for q in base_rows.values():
        for g in BREAKDOWNS[breakdown](q):
            members.setdefault(g, []).append(q["id"])
    rows_by_run = [{q["id"]: q for q in r.queries} for r in runs]
    out = []
    for group, ids in sorted(members.items()):
        y = [bool(base_rows[i].get("answerable")) for i in ids]
        if len(set(y)) < 2 or any(i not in rr for rr in rows_by_run for i in ids):
            continue
        values = [float(roc_auc_score(y, [float(rr[i].get("answer_probability", 0.0)) for i in ids])) for rr in rows_by_run]
        out.append({"group": group, "n": len(ids), "unanswerable": y.count(False), "metric": "AUROC",
                    "values": values, "delta": [None] + [v - values[0] for v in values[1:]]})
    return out
