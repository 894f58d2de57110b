"""Weak-match fitting (H11): held-out split, coefficients folded back to raw features."""
import numpy as np
import pytest

from searchkit.config import WeakMatchConfig
from searchkit.evaluate.tune import LabelledSignals, fit_weak_match, half_of, score_weak_match
from searchkit.rank.signals import answer_probability


def _rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        ans = bool(i % 3)
        top1 = rng.normal(0.86 if ans else 0.80, 0.02)
        margin = rng.normal(0.03 if ans else 0.01, 0.01)
        rows.append(LabelledSignals(f"q{i}", ans, {"dense_top1": top1, "dense_margin": margin, "noise": rng.normal()}))
    return rows


def test_half_split_is_stable_and_roughly_even():
    ids = [f"q{i}" for i in range(2000)]
    halves = [half_of(i) for i in ids]
    assert halves == [half_of(i) for i in ids]
    assert 0.45 < halves.count("tune") / len(ids) < 0.55
    assert half_of("q1", salt="other") in ("tune", "report")


def test_fit_separates_held_out_rows_and_matches_sklearn_probabilities():
    rows = _rows()
    tune = [r for r in rows if half_of(r.query_id) == "tune"]
    report = [r for r in rows if half_of(r.query_id) == "report"]
    cfg = fit_weak_match(tune, ("dense_top1", "dense_margin"))
    assert isinstance(cfg, WeakMatchConfig) and cfg.features == ("dense_top1", "dense_margin")
    assert cfg.coef[0] > 0 and cfg.coef[1] > 0  # higher similarity and margin = more likely answerable
    m = score_weak_match(report, cfg)
    assert m["AUROC"] > 0.9
    assert m["warn-recall"] > 0.7 and m["false-warn-rate"] < 0.3
    # the raw-feature model equals sklearn's pipeline on the same rows
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    X = np.array([[r.signals["dense_top1"], r.signals["dense_margin"]] for r in tune])
    y = np.array([int(r.answerable) for r in tune])
    sc = StandardScaler().fit(X)
    lr = LogisticRegression(class_weight="balanced", max_iter=1000, random_state=0).fit(sc.transform(X), y)
    want = lr.predict_proba(sc.transform(X[:5]))[:, 1]
    got = [answer_probability(r.signals, cfg) for r in tune[:5]]
    assert got == pytest.approx(want, abs=1e-4)


def test_target_false_warn_rate_sets_threshold():
    rows = _rows()
    cfg = fit_weak_match(rows, ("dense_top1", "dense_margin"), target_false_warn=0.05)
    m = score_weak_match(rows, cfg)
    assert m["false-warn-rate"] <= 0.05 + 1e-9


def test_needs_both_classes():
    rows = [r for r in _rows() if r.answerable]
    with pytest.raises(ValueError, match="both"):
        fit_weak_match(rows, ("dense_top1",))
