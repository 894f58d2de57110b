"""Figures of the research harness (SPEC E4): what the notebooks and ``searchkit report`` draw.

Every builder returns a ``matplotlib.figure.Figure`` made without pyplot (no global state, no
display needed), with a title, axis labels and their units on every axes. ``svg`` turns one into
SVG text with stable ids and no date, so the same data give the same bytes. Curves come from
scikit-learn (``roc_curve``, ``precision_recall_curve``, ``calibration_curve``); nothing here
computes a metric of its own. Labels stay in ASCII (language codes, kinds), so no CJK font is
needed.

Curves of several runs are drawn in distinct line styles and markers, the first widest, so a curve
drawn over an identical one still shows (``curve_styles``). Bar charts zoom their value axis to the
data (``value_limits``: 0.80-1.00 when every bar sits within 0.85-0.95) and say so on the axes; a
figure is at most ``MAX_WIDTH_IN`` inches wide (1,200 pixels at 100 dpi), so it fits a 1,400-pixel
notebook or page without scrolling sideways.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "MAX_WIDTH_IN", "curve_styles", "delta_histogram", "fusion_sweep_figure", "grouped_bars", "halves_figure",
    "labelled", "missing_id_figure", "pr_figure", "probability_histogram", "reliability_figure", "roc_figure", "svg",
    "threshold_figure", "value_limits",
]

Curves = Mapping[str, tuple[Sequence[bool], Sequence[float]]]
"""``{label: (answerable, answer_probability)}``, one entry per run, dataset or language."""

PROB = "P(answer) from the weak-match model (0-1)"
MAX_WIDTH_IN = 12.0
"""The widest figure, in inches: 1,200 pixels at matplotlib's 100 dpi."""
_LINESTYLES = ("-", (0, (6, 2)), "-.", (0, (1, 1.5)), (0, (8, 2, 1, 2, 1, 2)), (0, (3, 3)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def curve_styles(n: int) -> list[dict[str, Any]]:
    """Matplotlib line keywords for ``n`` curves drawn in turn: each its own line style and marker
    (markers spaced along the curve), the first the widest and each later one thinner, so a curve
    drawn over an identical one leaves the one below showing at its edges."""
    out = []
    for i in range(n):
        out.append({"ls": _LINESTYLES[i % len(_LINESTYLES)], "marker": _MARKERS[i % len(_MARKERS)],
                    "lw": max(1.0, 3.4 - 0.6 * i), "ms": max(3.5, 7.5 - 1.0 * i), "markevery": 0.1,
                    "mfc": "none" if i % 2 else None, "zorder": 2 + i})
    return out


def value_limits(values: Sequence[float], lo: float = 0.0, hi: float = 1.0, *, keep_share: float = 0.2) -> tuple[float, float]:
    """Axis limits for values on a ``lo``-``hi`` scale, zoomed to the data: the data's range with a
    margin (a quarter of it, at least 5% of the scale), on steps of 0.05 of the scale, within
    ``lo``-``hi``. The axis keeps ``lo`` (and ``hi``) where zooming would cut less than
    ``keep_share`` of the scale off that end. No finite value: ``(lo, hi)``."""
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not vals:
        return lo, hi
    scale = hi - lo
    vmin, vmax = min(vals), max(vals)
    margin = max(0.25 * (vmax - vmin), 0.05 * scale)
    step = 0.05 * scale
    bottom = max(lo, math.floor((vmin - margin - lo) / step + 1e-9) * step + lo)
    top = min(hi, math.ceil((vmax + margin - lo) / step - 1e-9) * step + lo)
    if bottom - lo < keep_share * scale:
        bottom = lo
    if hi - top < keep_share * scale:
        top = hi
    return round(bottom, 10), round(top, 10)


def _figure(width: float = 7.0, height: float = 4.0, ncols: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(min(width, MAX_WIDTH_IN), height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _two_classes(answerable: Sequence[bool]) -> bool:
    return len({bool(a) for a in answerable}) == 2


def _note(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9, color="0.4")


def roc_figure(curves: Curves, *, title: str = "No-answer ROC of the weak-match probability") -> Any:
    """ROC curves of P(answer) against the ``answerable`` label, one per entry, AUROC in the legend,
    each in its own line style and marker (``curve_styles``: identical curves stay visible).

    x: share of unanswerable queries whose P(answer) reaches the threshold (false positives);
    y: share of answerable queries that do (true positives). Both axes stay 0-1: every ROC curve
    runs from (0, 0) to (1, 1)."""
    from sklearn.metrics import roc_auc_score, roc_curve

    fig, (ax,) = _figure(6.0, 4.5)
    ax.plot([0, 1], [0, 1], color="0.7", ls="--", lw=1, label="chance (AUROC 0.5)")
    drawn = 0
    shown = {label: c for label, c in curves.items() if _two_classes(c[0])}
    for (label, (y, p)), style in zip(shown.items(), curve_styles(len(shown))):
        fpr, tpr, _ = roc_curve([bool(v) for v in y], [float(v) for v in p])
        ax.plot(fpr, tpr, label=f"{label} (AUROC {roc_auc_score([bool(v) for v in y], p):.3f})", **style)
        drawn += 1
    if not drawn:
        _note(ax, "no curve: every query has the same label")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("false-positive rate (share of unanswerable queries, 0-1)")
    ax.set_ylabel("true-positive rate (share of answerable queries, 0-1)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def pr_figure(curves: Curves, *, title: str = "Precision-recall of the no-answer warning") -> Any:
    """Precision-recall curves of warning on unanswerable queries, scored by 1 - P(answer)."""
    from sklearn.metrics import average_precision_score, precision_recall_curve

    fig, (ax,) = _figure(6.0, 4.5)
    drawn = 0
    shown = {label: c for label, c in curves.items() if _two_classes(c[0])}
    for (label, (y, p)), style in zip(shown.items(), curve_styles(len(shown))):
        target = [not bool(v) for v in y]
        score = [1.0 - float(v) for v in p]
        prec, rec, _ = precision_recall_curve(target, score)
        ax.plot(rec, prec, label=f"{label} (AP {average_precision_score(target, score):.3f}, "
                                 f"base rate {sum(target) / len(target):.2f})", **style)
        drawn += 1
    if not drawn:
        _note(ax, "no curve: every query has the same label")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall (share of unanswerable queries warned, 0-1)")
    ax.set_ylabel("precision (share of warnings that are right, 0-1)")
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize=8)
    return fig


def reliability_figure(curves: Curves, *, bins: int = 10,
                       title: str = "Reliability of P(answer) (calibration)") -> Any:
    """Reliability diagram: mean P(answer) per bin against the share of answerable queries in it
    (``sklearn.calibration.calibration_curve``, uniform bins); the diagonal is perfect calibration."""
    from sklearn.calibration import calibration_curve

    fig, (ax,) = _figure(6.0, 4.5)
    ax.plot([0, 1], [0, 1], color="0.7", ls="--", lw=1, label="perfectly calibrated")
    drawn = 0
    shown = {label: c for label, c in curves.items() if _two_classes(c[0])}
    for (label, (y, p)), style in zip(shown.items(), curve_styles(len(shown))):
        frac, mean = calibration_curve([bool(v) for v in y], [float(v) for v in p], n_bins=bins, strategy="uniform")
        ax.plot(mean, frac, label=label, **{**style, "markevery": None})
        drawn += 1
    if not drawn:
        _note(ax, "no curve: every query has the same label")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"mean predicted {PROB} per bin")
    ax.set_ylabel("observed share of answerable queries (0-1)")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def threshold_figure(answerable: Sequence[bool], prob: Sequence[float], *, threshold: float | None = None,
                     target_rate: float | None = None,
                     title: str = "Weak-match warning rates against the threshold") -> Any:
    """The warning's false-alarm rate (answerable queries warned) and recall (unanswerable queries
    warned) as the threshold moves; a warning fires when P(answer) < threshold. The chosen
    threshold and the target false-alarm rate are marked."""
    import numpy as np

    y = np.asarray([bool(v) for v in answerable])
    p = np.asarray(prob, dtype=float)
    grid = np.linspace(0.0, 1.0, 201)
    fig, (ax,) = _figure(6.5, 4.0)
    if y.any():
        ax.plot(grid, [(p[y] < t).mean() for t in grid], lw=1.8, label="false-alarm rate (answerable warned)")
    if (~y).any():
        ax.plot(grid, [(p[~y] < t).mean() for t in grid], lw=1.8, label="recall (unanswerable warned)")
    if target_rate is not None:
        ax.axhline(target_rate, color="0.5", ls=":", lw=1, label=f"target false-alarm rate {target_rate:.2f}")
    if threshold is not None:
        ax.axvline(threshold, color="k", ls="--", lw=1, label=f"chosen threshold {threshold:.3f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"threshold on {PROB}")
    ax.set_ylabel("share of queries warned (0-1)")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def grouped_bars(table: Mapping[str, Mapping[str, float]], *, title: str, xlabel: str, ylabel: str,
                 ylim: tuple[float, float] | str | None = "auto", marks: Mapping[str, Mapping[str, str]] | None = None,
                 group_width: float = 0.9) -> Any:
    """Bars of ``table[series][group]`` grouped by group (e.g. nDCG@10 per language, one bar per
    run). ``marks[series][group]`` is written above a bar (e.g. ``*`` for a significant difference).
    A missing or nan value draws no bar.

    ``ylim``: ``"auto"`` (default) zooms the value axis to the data on a 0-1 scale
    (``value_limits``) and, when it does not start at 0, says so in the axes (bars then start at
    the axis' bottom, not at 0); a pair fixes it; None leaves it to matplotlib."""
    import numpy as np

    series = list(table)
    groups: list[str] = []
    for s in series:
        groups.extend(g for g in table[s] if g not in groups)
    fig, (ax,) = _figure(min(16.0, max(5.0, 1.0 + group_width * len(groups) * max(1, len(series)) ** 0.5)), 4.0)
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for i, s in enumerate(series):
        vals = [float(table[s].get(g, math.nan)) for g in groups]
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, [0.0 if math.isnan(v) else v for v in vals], width, label=s)
        for xpos, v, g in zip(pos, vals, groups):
            mark = ((marks or {}).get(s) or {}).get(g, "")
            if not math.isnan(v):
                ax.text(xpos, v, f"{v:.2f}{mark}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, groups, rotation=30 if len(groups) > 6 else 0, fontsize=8 if group_width > 1.5 else None)
    if ylim == "auto":
        values = [float(v) for s in series for v in table[s].values() if v is not None and not math.isnan(float(v))]
        lo, hi = min([0.0, *values]), max([1.0, *values])
        bottom, top = value_limits(values, lo, hi)
        ax.set_ylim(bottom, top + 0.04 * (top - bottom))  # room for the values written above the bars
        if bottom > lo:
            ax.text(0.01, 0.99, f"value axis zoomed to the data: from {bottom:.2f}, not {lo:g}", transform=ax.transAxes,
                    ha="left", va="top", fontsize=7, color="0.35")
    elif ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if not groups:
        _note(ax, "no groups to show")
    if len(series) > 1:
        ax.legend(fontsize=8, loc="lower right")
    return fig


def fusion_sweep_figure(rows: Sequence[Mapping[str, Any]], *, picked: str | None = None, metric: str = "nDCG@10",
                        half: str = "tune", title: str | None = None) -> Any:
    """The fusion sweep: ``metric`` on one half against the lead retriever's weight in the weighted
    sums (one line per normalisation and dataset, left; per normalisation and language, right), RRF
    settings as horizontal lines, the picked setting starred.

    ``rows``: ``research.fusion_rows`` rows (``setting``, ``method``, ``norm``, ``lead``,
    ``lead_weight``, ``scope`` (``dataset`` or ``lang``), ``group``, ``half``, ``value``)."""
    leads = sorted({r["lead"] for r in rows if r.get("lead") and r["method"] != "rrf"})
    lead = "/".join(leads) or "lead retriever"
    fig, axes = _figure(12.0, 4.5, ncols=2)
    for ax, scope in zip(axes, ("dataset", "lang")):
        mine = [r for r in rows if r["scope"] == scope and r["half"] == half]
        lines: dict[tuple[str, str], list[tuple[float, float, str]]] = {}
        for r in mine:
            if r["method"] != "rrf" and r.get("lead_weight") is not None:
                lines.setdefault((r["norm"], r["group"]), []).append((float(r["lead_weight"]), float(r["value"]), r["setting"]))
        for (norm, group), pts in sorted(lines.items()):
            pts.sort()
            (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, lw=1.4, label=f"{group} {norm}")
            for w, v, setting in pts:
                if setting == picked:
                    ax.plot([w], [v], marker="*", ms=14, color=line.get_color(), markeredgecolor="k", zorder=5)
        best_rrf: dict[str, tuple[float, str]] = {}
        for r in mine:
            if r["method"] == "rrf" and (r["group"] not in best_rrf or r["value"] > best_rrf[r["group"]][0]):
                best_rrf[r["group"]] = (float(r["value"]), r["setting"])
        for i, (group, (v, setting)) in enumerate(sorted(best_rrf.items())):
            ax.axhline(v, ls=":", lw=1, color="0.4", label="best RRF of each group (dotted)" if i == 0 else None)
            ax.text(0.01, v, f"{group}: {setting}", fontsize=6, va="bottom", ha="left", color="0.3",
                    transform=ax.get_yaxis_transform())
        if not mine:
            _note(ax, "no rows")
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"{lead} weight in the weighted sum (the other retrievers share 1 - it)")
        ax.set_ylabel(f"{metric} on the {half} half (mean over queries, 0-1)")
        ax.set_title(f"per {'dataset' if scope == 'dataset' else 'language'}")
        if lines:
            ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(title or f"Fusion sweep: {metric} against the {lead} weight ({half} half; * = picked)")
    return fig


def halves_figure(rows: Sequence[Mapping[str, Any]], *, metric: str = "nDCG@10",
                  title: str = "Winner, runner-up, RRF and shipped fusion on both halves") -> Any:
    """Bars of each setting's ``metric`` on the tune and the report half; ``rows`` are
    ``research.fusion_significance_rows`` (``against``, ``setting``, ``tune``, ``report``). The
    report half, never used to pick, is the figure to quote."""
    labels = [f"{r['against']}\n{r['setting']}".replace(" + ", "\n+ ") for r in rows]  # the adaptive model below
    return grouped_bars({"tune half": {k: float(r["tune"]) for k, r in zip(labels, rows)},
                         "report half": {k: float(r["report"]) for k, r in zip(labels, rows)}},
                        title=title, xlabel="fusion setting", ylabel=f"{metric} (mean over queries, 0-1)",
                        group_width=2.2)


def probability_histogram(answerable: Sequence[bool], prob: Sequence[float], *, threshold: float | None = None,
                          title: str = "Weak-match probability of answerable and unanswerable queries") -> Any:
    """Histograms of P(answer) for answerable and unanswerable queries, the warning threshold
    marked (a warning fires left of it)."""
    import numpy as np

    y = np.asarray([bool(v) for v in answerable])
    p = np.asarray(prob, dtype=float)
    fig, (ax,) = _figure(7.0, 3.8)
    bins = np.linspace(0, 1, 21)
    for mask, label in ((y, "answerable"), (~y, "unanswerable")):
        if mask.any():
            ax.hist(p[mask], bins=bins, alpha=0.6, label=f"{label} ({int(mask.sum())})")
    if threshold is not None:
        ax.axvline(threshold, color="k", ls="--", lw=1, label=f"threshold {threshold:.3f}")
    ax.set_xlim(0, 1)
    ax.set_xlabel(PROB)
    ax.set_ylabel("queries (count)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def delta_histogram(deltas: Sequence[float], *, metric: str = "nDCG@10", label_a: str = "A", label_b: str = "B",
                    title: str | None = None) -> Any:
    """Histogram of per-query differences ``b - a`` of ``metric``; queries left of 0 lost."""
    import numpy as np

    fig, (ax,) = _figure(6.5, 3.8)
    d = np.asarray([v for v in deltas if not math.isnan(v)], dtype=float)
    ax.hist(d, bins=np.linspace(-1, 1, 41), color="tab:blue", alpha=0.8)
    ax.axvline(0, color="k", lw=1)
    ax.set_xlim(-1, 1)
    ax.set_xlabel(f"{metric} of {label_b} minus {label_a} per query (-1 to 1)")
    ax.set_ylabel("queries (count)")
    ax.set_title(title or f"Per-query {metric} change, {label_b} vs {label_a} "
                 f"({int((d > 0).sum())} up, {int((d < 0).sum())} down, {int((d == 0).sum())} same)")
    return fig


def missing_id_figure(table: Mapping[str, Mapping[str, float]], *,
                      title: str = "Missing-ID warning (H12): share of queries warned") -> Any:
    """``table[series][label]`` = share of queries warned, for the labels ``id in corpus`` and
    ``id absent`` (a good warning fires on the second only)."""
    return grouped_bars(table, title=title, xlabel="queries naming an identifier, by label",
                        ylabel="share warned (0-1)")


def labelled(fig: Figure) -> list[str]:
    """What a figure lacks: ``["axes 0: no title", ...]`` for every axes without a title (its own
    or the figure's), an x label or a y label. Empty when every axes is labelled."""
    problems = []
    has_suptitle = bool(fig.get_suptitle())
    for i, ax in enumerate(fig.axes):
        if not ax.get_title() and not has_suptitle:
            problems.append(f"axes {i}: no title")
        if not ax.get_xlabel():
            problems.append(f"axes {i}: no x label")
        if not ax.get_ylabel():
            problems.append(f"axes {i}: no y label")
    return problems


def svg(fig: Figure) -> str:
    """The figure as SVG text: text drawn as paths (no font needed), no date, ids stable for the
    same figure."""
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "searchkit"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()
