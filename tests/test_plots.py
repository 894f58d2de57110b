"""Figures (E4): every one has a title, axis labels with units; SVG output is stable and refers
to nothing outside itself."""
import math
import re

import pytest

from searchkit.evaluate import plots

Y = [True, True, True, False, False, True, False, True]
P = [0.9, 0.8, 0.4, 0.3, 0.6, 0.7, 0.1, 0.95]
ROWS = [
    {"setting": s, "method": m, "norm": n, "lead": None if w is None else "bm25", "lead_weight": w, "scope": scope,
     "group": g, "half": h, "value": v}
    for s, m, n, w, v in (("rrf k=60", "rrf", None, None, 0.5), ("wsum minmax bm25=0.4", "wsum", "minmax", 0.4, 0.6),
                          ("wsum minmax bm25=0.6", "wsum", "minmax", 0.6, 0.7))
    for scope, g in (("dataset", "mini"), ("lang", "ru"))
    for h in ("tune", "report")
]

FIGURES = {
    "roc": lambda: plots.roc_figure({"a": (Y, P), "b": (Y, [1 - p for p in P])}),
    "pr": lambda: plots.pr_figure({"a": (Y, P)}),
    "reliability": lambda: plots.reliability_figure({"a": (Y, P)}, bins=4),
    "threshold": lambda: plots.threshold_figure(Y, P, threshold=0.35, target_rate=0.2),
    "histogram": lambda: plots.probability_histogram(Y, P, threshold=0.5),
    "bars": lambda: plots.grouped_bars({"a": {"ru": 0.5, "ja": math.nan}, "b": {"ru": 0.7, "en": 0.2}},
                                       title="t", xlabel="language", ylabel="nDCG@10 (0-1)", marks={"b": {"ru": "*"}}),
    "sweep": lambda: plots.fusion_sweep_figure(ROWS, picked="wsum minmax bm25=0.6"),
    "halves": lambda: plots.halves_figure([{"against": "winner", "setting": "x", "tune": 0.7, "report": 0.6},
                                           {"against": "shipped", "setting": "y", "tune": 0.6, "report": math.nan}]),
    "deltas": lambda: plots.delta_histogram([0.1, -0.2, 0.0, math.nan]),
    "missing": lambda: plots.missing_id_figure({"mini": {"id in corpus": 0.0, "id absent": 1.0}}),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_is_labelled(name):
    fig = FIGURES[name]()
    assert fig.axes and plots.labelled(fig) == []


def test_labelled_names_what_is_missing():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.set_xlabel("x (s)")
    assert plots.labelled(fig) == ["axes 0: no title", "axes 0: no y label"]


def test_one_class_draws_a_note_not_a_curve():
    fig = plots.roc_figure({"only answerable": ([True, True], [0.2, 0.9])})
    assert plots.labelled(fig) == []
    assert any("same label" in t.get_text() for t in fig.axes[0].texts)


def test_svg_is_stable_and_self_contained():
    a, b = plots.svg(FIGURES["roc"]()), plots.svg(FIGURES["roc"]())
    assert a == b and a.lstrip().startswith("<?xml")
    assert not re.search(r'href="(?!#)', a)  # links only to ids inside the image
    assert "<text" not in a  # text as paths: no font needed where it is shown
