"""Fusion: hand-computed RRF / weighted sums, registries, and parity with ranx.fuse."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.rank.fusion import (
    FUSION_METHODS,
    NORMALIZERS,
    fuse,
    minmax,
    rank_fused,
    ranks,
    zscore,
)

# ranx's own numba code warns on a uint64 hash cast; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64")

# Several queries, per query: run name -> {doc: score}. Scores are distinct within a run (ranx
# orders tied documents by insertion, searchkit by doc id), runs overlap partly, q3 has a run
# with one document (min-max maps it to 0 in both libraries).
FIXTURE = {
    "q1": {
        "bm25": {"d1": 12.5, "d2": 9.0, "d3": 7.25, "d4": 1.0},
        "dense": {"d3": 0.91, "d5": 0.88, "d1": 0.5, "d6": 0.2},
    },
    "q2": {
        "bm25": {"a": 3.0, "b": 2.0},
        "dense": {"c": 0.7, "b": 0.6, "a": 0.1},
    },
    "q3": {
        "bm25": {"x": 4.0},
        "dense": {"y": 0.3, "x": 0.2, "z": -0.4},
    },
}


def test_rrf_hand_computed():
    runs = {"bm25": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "dense": {"d2": 0.9, "d9": 0.8, "d1": 0.1}}
    fused = fuse(runs, "rrf")
    assert fused["d1"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 3))
    assert fused["d2"] == pytest.approx(1 / (60 + 2) + 1 / (60 + 1))
    assert fused["d3"] == pytest.approx(1 / (60 + 3))
    assert fused["d9"] == pytest.approx(1 / (60 + 2))
    assert [d for d, _ in rank_fused(fused)] == ["d2", "d1", "d9", "d3"]
    assert fuse(runs, "rrf", k=0)["d1"] == pytest.approx(1 / 1 + 1 / 3)


def test_rrf_ties_rank_by_doc_id():
    assert ranks({"b": 1.0, "a": 1.0, "c": 2.0}) == {"c": 1, "a": 2, "b": 3}
    fused = fuse({"r": {"b": 1.0, "a": 1.0}}, "rrf")
    assert fused == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 62)}


def test_wsum_minmax_hand_computed():
    runs = {"bm25": {"d1": 10.0, "d2": 6.0, "d3": 2.0}, "dense": {"d2": 0.9, "d4": 0.5}}
    fused = fuse(runs, "wsum", weights={"bm25": 0.7, "dense": 0.3})
    # bm25 min-max: d1 1, d2 0.5, d3 0; dense: d2 1, d4 0; a missing doc adds 0.
    assert fused == {
        "d1": pytest.approx(0.7),
        "d2": pytest.approx(0.7 * 0.5 + 0.3 * 1),
        "d3": pytest.approx(0.0),
        "d4": pytest.approx(0.0),
    }
    # Weights are a convex combination: scaling them all changes nothing.
    assert fuse(runs, "wsum", weights={"bm25": 7, "dense": 3}) == pytest.approx(fused)
    # Default: equal weights.
    assert fuse(runs, "wsum")["d2"] == pytest.approx(0.5 * 0.5 + 0.5 * 1)


def test_normalisers_hand_computed():
    assert minmax({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert minmax({"a": 5.0}) == {"a": 0.0}  # as ranx: max - min floored at 1e-9
    z = zscore({"a": 1.0, "b": 3.0})  # mean 2, population std 1
    assert z == {"a": -1.0, "b": 1.0}
    assert fuse({"r": {"a": 1.0, "b": 3.0}}, "wsum", norm="none") == {"a": 1.0, "b": 3.0}
    assert minmax({}) == {} and zscore({}) == {}


def test_numpy_scores_come_back_as_python_floats():
    fused = fuse({"dense": {"a": np.float32(0.5), "b": np.float32(0.25)}, "bm25": {"a": np.int64(2)}}, "wsum")
    assert all(type(v) is float for v in fused.values())
    assert fused["a"] == pytest.approx(0.5)  # dense min-max 1, the lone bm25 doc 0


def test_empty_runs():
    assert fuse({}, "rrf") == {} and fuse({}, "wsum") == {}
    assert fuse({"bm25": {}, "dense": {"a": 1.0}}, "rrf") == {"a": pytest.approx(1 / 61)}


def test_rank_fused_is_deterministic():
    assert rank_fused({"b": 0.5, "a": 0.5, "c": 0.9}) == [("c", 0.9), ("a", 0.5), ("b", 0.5)]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: fuse({}, "borda"), "unknown fusion method 'borda'; valid: rrf, wsum"),
        (lambda: fuse({}, "wsum", norm="max"), "unknown normaliser 'max'; valid: minmax, none, zscore"),
        (lambda: fuse({}, "rrf", norm="minmax"), "'rrf' got unknown parameter"),
        (lambda: fuse({"r": {"a": 1.0}}, "rrf", k=-1), "k must be"),
        (lambda: fuse({"r": {"a": float("nan")}}), "run 'r': score of 'a'"),
        (lambda: fuse({"r": [("a", 1.0)]}), "run 'r' must map"),
        (lambda: fuse({"r": {"a": 1.0}}, "wsum", weights={"s": 1.0}), "missing \\['r'\\], unknown \\['s'\\]"),
        (lambda: fuse({"r": {"a": 1.0}}, "wsum", weights={"r": -1.0}), "weight of run 'r'"),
        (lambda: fuse({"r": {"a": 1.0}}, "wsum", weights={"r": 0.0}), "all 0"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_registries_hold_the_documented_names():
    assert set(FUSION_METHODS) == {"rrf", "wsum"}
    assert set(NORMALIZERS) == {"minmax", "zscore", "none"}


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["bm25", "dense", "fts"]),
        st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-5, 5, allow_nan=False), max_size=6),
        max_size=3,
    )
)
def test_rrf_properties(runs):
    fused = fuse(runs, "rrf")
    assert set(fused) == set().union(*runs.values()) if runs else fused == {}
    for doc, s in fused.items():
        held = [ranks(r)[doc] for r in runs.values() if doc in r]
        assert s == pytest.approx(sum(1 / (60 + r) for r in held))
        assert 0 < s <= len(runs) / 61
    ordered = rank_fused(fused)
    assert all((-a[1], a[0]) <= (-b[1], b[0]) for a, b in zip(ordered, ordered[1:]))


# --------------------------------------------------------------------------- ranx parity


@pytest.fixture(scope="module")
def ranx():
    return pytest.importorskip("ranx")


def _ranx_fused(ranx, method, norm, params):
    names = ["bm25", "dense"]
    runs = [ranx.Run({q: FIXTURE[q][n] for q in FIXTURE}, name=n) for n in names]
    out = ranx.fuse(runs, norm=norm, method=method, params=params)
    return {q: dict(out.run[q]) for q in FIXTURE}


def _assert_same(ours, theirs):
    assert set(ours) == set(theirs)
    for q in ours:
        assert set(ours[q]) == set(theirs[q]), q
        for doc in ours[q]:
            assert ours[q][doc] == pytest.approx(theirs[q][doc], abs=1e-12), (q, doc)


@pytest.mark.parametrize("k", [60, 10])
def test_rrf_matches_ranx(ranx, k):
    theirs = _ranx_fused(ranx, "rrf", None, {"k": k})
    ours = {q: fuse(runs, "rrf", k=k) for q, runs in FIXTURE.items()}
    _assert_same(ours, theirs)


@pytest.mark.parametrize("weights", [(0.5, 0.5), (0.8, 0.2)])
def test_minmax_wsum_matches_ranx(ranx, weights):
    theirs = _ranx_fused(ranx, "wsum", "min-max", {"weights": list(weights)})
    w = dict(zip(["bm25", "dense"], weights))
    ours = {q: fuse(runs, "wsum", weights=w, norm="minmax") for q, runs in FIXTURE.items()}
    _assert_same(ours, theirs)


def test_zscore_wsum_matches_ranx_zmuv(ranx):
    theirs = _ranx_fused(ranx, "wsum", "zmuv", {"weights": [0.3, 0.7]})
    ours = {q: fuse(runs, "wsum", weights={"bm25": 0.3, "dense": 0.7}, norm="zscore") for q, runs in FIXTURE.items()}
    _assert_same(ours, theirs)


def test_fixture_rankings_agree_with_ranx(ranx):
    theirs = _ranx_fused(ranx, "rrf", None, {"k": 60})
    for q, runs in FIXTURE.items():
        ours = [d for d, _ in rank_fused(fuse(runs, "rrf"))]
        assert ours == sorted(theirs[q], key=lambda d: (-theirs[q][d], d)), q
        assert math.isclose(sum(theirs[q].values()), sum(fuse(runs, "rrf").values()))
