"""The no-answer and LLM-judged sections of ``searchkit report`` (SPEC E4, H11; issue 40 items 3 and 5).

**No answer**: the ROC, precision–recall and reliability curves of the weak-match probability
(``plots.roc_figure``, ``pr_figure``, ``reliability_figure``: each run its own line style, the first
widest, so identical curves stay visible), the no-answer figures and the missing-ID warning's, for
the runs that hold a weak-match probability. A run that holds none (another system's TREC run:
``any_run``) draws no curve and the section says so ("no weak-match probability: a TREC run").

**LLM-judged (ragas)**: where a run holds ``ragas_llm`` (``eval --metrics ragas-llm``), each run's mean
faithfulness and answer relevancy over the answerable and the unanswerable queries judged, with how
many queries had each score, as a table and a bar chart.
"""
from __future__ import annotations

import base64
import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from searchkit.evaluate.compare import has_no_answer
from searchkit.evaluate.plots import grouped_bars, pr_figure, reliability_figure, roc_figure, svg
from searchkit.evaluate.ragas_metrics import judge_names
from searchkit.evaluate.report_compare import esc, num

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from searchkit.evaluate.runs import RunFolder

__all__ = ["NO_PROBABILITY", "figure", "llm_section", "no_answer_section"]

NO_PROBABILITY = "no weak-match probability: a TREC run"
"""Said of a run that draws no no-answer curve."""
NO_ANSWER_KEYS = ("AUROC", "AP-noanswer", "warn-precision", "warn-recall", "false-warn-rate")


def figure(fig: Figure, alt: str, caption: str) -> str:
    """A figure inlined as a ``data:`` SVG image with its caption."""
    data = base64.b64encode(svg(fig).encode("utf-8")).decode("ascii")
    return (f'<figure><img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def _float(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def no_answer_section(runs: Sequence[Any]) -> str:
    """The curves and tables of the weak-match probability, for the runs that hold one."""
    held = [r for r in runs if has_no_answer(r)]
    lacking = [r.name for r in runs if not has_no_answer(r)]
    parts = []
    if lacking:
        parts.append(f'<p class="note" data-no-curve="{esc(", ".join(lacking))}">No curve or no-answer figure for '
                     f"{esc(', '.join(lacking))}: {NO_PROBABILITY} (another system's rankings, no P(answer)).</p>")
    if not held:
        return "".join(parts)
    curves = {r.name: ([bool(q.get("answerable")) for q in r.queries],
                       [_float(q.get("answer_probability", 0.0)) for q in r.queries]) for r in held}
    if any(len(set(y)) == 2 for y, _ in curves.values()):
        same = "each run in its own line style and marker, the first widest, so identical curves stay visible"
        parts.append(figure(roc_figure(curves), "ROC curves of the weak-match probability, one per run",
                            f"How well P(answer) separates answerable from unanswerable queries; {same}"))
        parts.append(figure(pr_figure(curves), "precision-recall curves of the no-answer warning, one per run",
                            "Precision and recall of warning on unanswerable queries as the threshold moves (scored by "
                            f"1 - P(answer)); {same}"))
        parts.append(figure(reliability_figure(curves), "reliability diagram of P(answer), one curve per run",
                            "Calibration: mean P(answer) per bin against the share of answerable queries in it (the "
                            f"diagonal is perfect calibration); {same}"))
    else:
        parts.append('<p class="note">No curve: the split has no unanswerable queries.</p>')
    head = "".join(f"<th>{esc(k)}</th>" for k in NO_ANSWER_KEYS)
    rows = "".join(
        f'<tr><th scope="row">{esc(r.name)}</th>'
        + "".join(f'<td class="num">{num(_float((r.metrics.get("no_answer") or {}).get(k, math.nan)))}</td>'
                  for k in NO_ANSWER_KEYS)
        + "</tr>" for r in held)
    parts.append(f'<table class="noanswer"><thead><tr><th>run</th>{head}</tr></thead><tbody>{rows}</tbody></table>')
    mi_rows = [(r.name, r.metrics.get("missing_id") or {}) for r in held]
    if any(m.get("queries") for _, m in mi_rows):
        mk = ("queries", "id_absent", "precision", "recall", "false-warn-rate")
        rows = "".join(f'<tr><th scope="row">{esc(n)}</th>'
                       + "".join(f'<td class="num">{num(m.get(k, math.nan))}</td>' for k in mk) + "</tr>"
                       for n, m in mi_rows)
        parts.append("<h3>Missing-ID warning (H12)</h3><table class=\"missing\"><thead><tr><th>run</th>"
                     + "".join(f"<th>{esc(k)}</th>" for k in mk) + f"</tr></thead><tbody>{rows}</tbody></table>")
    return "".join(parts)


def _llm_block(run: RunFolder) -> Mapping[str, Any] | None:
    block = run.metrics.get("ragas_llm")
    return block if isinstance(block, Mapping) and isinstance(block.get("k"), int) else None


def has_llm(runs: Sequence[Any]) -> bool:
    """Whether any run holds LLM-judged ragas scores (``eval --metrics ragas-llm``)."""
    return any(_llm_block(r) is not None for r in runs)


def llm_section(runs: Sequence[Any]) -> str:
    """Each run's LLM-judged faithfulness and answer relevancy (means over the answerable and the
    unanswerable queries judged, with how many had each score), as a table and a bar chart."""
    rows, bars = [], {}
    for r in runs:
        block = _llm_block(r)
        if block is None:
            rows.append(f'<tr data-run="{esc(r.name)}"><th scope="row">{esc(r.name)}</th><td colspan="7" class="note">'
                        "not judged (no <code>eval --metrics ragas-llm</code> in this run)</td></tr>")
            continue
        k = block["k"]
        faith, rel = judge_names(k)
        cells, series = [], {}
        for group in ("answerable", "unanswerable"):
            g = block.get(group) or {}
            mean, scored = g.get("mean") or {}, g.get("scored") or {}
            for name, short in ((faith, "faithfulness"), (rel, "answer relevancy")):
                v = mean.get(name)
                cells.append(f'<td class="num" data-score="{esc(name)}" data-group="{group}">{num(_float(v)) if v is not None else "n/a"}'
                             f' <span class="note">({esc(scored.get(name, 0))} of {esc(g.get("n", 0))})</span></td>')
                series[f"{short} ({group})"] = _float(v)
        bars[r.name] = series
        rows.append(f'<tr data-run="{esc(r.name)}"><th scope="row">{esc(r.name)}</th><td>{esc(block.get("model", ""))}'
                    f'</td><td class="num">{esc(k)}</td>{"".join(cells)}</tr>')
    head = ("<tr><th>run</th><th>model</th><th>k</th><th>faithfulness (answerable)</th><th>answer relevancy "
            "(answerable)</th><th>faithfulness (unanswerable)</th><th>answer relevancy (unanswerable)</th></tr>")
    parts = ["<p>ragas' LLM-judged scores of an answer an LLM wrote from each query's top <i>k</i> cards: "
             "faithfulness (the share of the answer's statements the cards support) and answer relevancy; means "
             "over the queries judged, with how many had the score.</p>",
             f'<div class="scroll"><table class="llm"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>']
    if bars:
        parts.append(figure(grouped_bars(bars, title="LLM-judged ragas scores", xlabel="score (queries judged)",
                                         ylabel="mean score (0-1)"),
                            "bar chart of the LLM-judged ragas scores, one bar per run",
                            "Mean faithfulness and answer relevancy over the answerable and the unanswerable queries "
                            "judged; the value axis is zoomed to the data where every bar sits high or low."))
    return "".join(parts)
