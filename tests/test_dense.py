"""DenseIndex: flat parity with brute-force numpy, HNSW recall, masks, exact scores, save/load."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from searchkit.config import ConfigError, DenseConfig
from searchkit.index import dense as dense_mod
from searchkit.index.dense import INDEX_KINDS, DenseIndex
from searchkit.index.embedders import HashingEmbedder


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _brute(x: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None = None):
    scores = x.astype(np.float64) @ q.astype(np.float64)
    rows = np.arange(len(x)) if mask is None else np.flatnonzero(mask)
    order = rows[np.lexsort((rows, -scores[rows]))][:k]
    return order, scores[order]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    return _unit(rng, 2000, 48), _unit(rng, 40, 48)


@pytest.fixture(scope="module")
def built(data):
    """One index of each kind over ``data`` (building HNSW is the slow part of these tests)."""
    return {kind: DenseIndex.build(data[0], DenseConfig(index=kind)) for kind in INDEX_KINDS}


def test_flat_equals_brute_force_top_k(data, built):
    x, queries = data
    index = built["flat"]
    assert (index.n, index.dim, index.kind) == (2000, 48, "flat")
    for q in queries:
        for k in (1, 10, 100):
            idx, scores = index.search(q, k)
            exp_idx, exp_scores = _brute(x, q, k)
            np.testing.assert_array_equal(idx, exp_idx)
            np.testing.assert_allclose(scores, exp_scores, atol=1e-6)
            assert idx.dtype == np.int64 and scores.dtype == np.float32


def test_k_larger_than_n_returns_everything_sorted():
    x = _unit(np.random.default_rng(1), 5, 8)
    for kind in INDEX_KINDS:
        idx, scores = DenseIndex.build(x, DenseConfig(index=kind)).search(x[2], 50)
        assert sorted(idx.tolist()) == [0, 1, 2, 3, 4] and idx[0] == 2
        assert np.all(np.diff(scores) <= 0)


def test_hnsw_recall_at_10_vs_flat(data, built):
    x, queries = data
    flat, hnsw = built["flat"], built["hnsw"]
    hits = sum(len(set(flat.search(q, 10)[0]) & set(hnsw.search(q, 10)[0])) for q in queries)
    assert hits / (10 * len(queries)) >= 0.95


@pytest.mark.parametrize("kind, force_selector", [("flat", False), ("hnsw", False), ("hnsw", True)])
def test_allowed_mask_is_honoured(data, built, kind, force_selector, monkeypatch):
    if force_selector:  # take the IDSelectorBitmap path of hnsw, not the exact small-subset path
        monkeypatch.setattr(dense_mod, "_EXACT_MAX_ALLOWED", 0)
    x, queries = data
    index = built[kind]
    rng = np.random.default_rng(3)
    for q in queries[:10]:
        mask = rng.random(len(x)) < 0.3
        idx, scores = index.search(q, 10, allowed=mask)
        assert len(idx) == 10 and mask[idx].all()
        exp_idx, _ = _brute(x, q, 10, mask)
        if kind == "flat" or not force_selector:
            np.testing.assert_array_equal(idx, exp_idx)
        else:
            assert len(set(idx) & set(exp_idx)) >= 8
    # the best doc overall is excluded: it never takes a slot
    best = index.search(queries[0], 1)[0][0]
    mask = np.ones(len(x), bool)
    mask[best] = False
    assert best not in index.search(queries[0], 20, allowed=mask)[0]


@pytest.mark.parametrize("kind", sorted(INDEX_KINDS))
def test_fewer_allowed_than_k_and_none_allowed(data, built, kind):
    x, queries = data
    index = built[kind]
    mask = np.zeros(len(x), bool)
    mask[[5, 17, 1999]] = True
    idx, _ = index.search(queries[0], 10, allowed=mask)
    assert sorted(idx.tolist()) == [5, 17, 1999]
    idx, scores = index.search(queries[0], 10, allowed=np.zeros(len(x), bool))
    assert idx.shape == scores.shape == (0,)


def test_scores_for_is_exact_and_identical_to_search_scores(data, built):
    x, queries = data
    for index in built.values():
        q = queries[4]
        idx, scores = index.search(q, 25)
        np.testing.assert_array_equal(index.scores_for(q, idx), scores)
        some = np.array([1999, 0, 7, 7])
        np.testing.assert_allclose(index.scores_for(q, some), x[some] @ q, atol=1e-6)
        assert index.scores_for(q, np.array([], dtype=np.int64)).shape == (0,)
        with pytest.raises(ValueError, match="doc row 2000 is out of range for an index of 2000 docs"):
            index.scores_for(q, np.array([3, 2000]))


def test_ties_are_ordered_by_row():
    x = np.tile(np.eye(4, dtype=np.float32)[0], (6, 1))
    idx, scores = DenseIndex.build(x).search(x[0], 4)
    assert idx.tolist() == [0, 1, 2, 3] and np.all(scores == 1)


@pytest.mark.parametrize("kind", sorted(INDEX_KINDS))
def test_save_and_load_give_identical_results(data, kind, tmp_path):
    x, queries = data
    index = DenseIndex.build(x, DenseConfig(index=kind, hnsw_m=16, ef_search=64))
    index.save(tmp_path / "idx")
    loaded = DenseIndex.load(tmp_path / "idx")
    assert (loaded.n, loaded.dim, loaded.cfg) == (index.n, index.dim, index.cfg)
    mask = np.random.default_rng(0).random(len(x)) < 0.5
    for q in queries[:10]:
        for allowed in (None, mask):
            a, b = index.search(q, 10, allowed), loaded.search(q, 10, allowed)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(loaded.vectors, x)
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["dense.faiss", "dense.json"]


def test_load_errors_name_the_file(tmp_path, data):
    with pytest.raises(FileNotFoundError, match="dense.json"):
        DenseIndex.load(tmp_path)
    DenseIndex.build(data[0][:50]).save(tmp_path)
    meta = json.loads((tmp_path / "dense.json").read_text())
    (tmp_path / "dense.json").write_text(json.dumps({**meta, "kind": "hnsw"}))
    with pytest.raises(ValueError, match="holds a IndexFlatIP.*kind 'hnsw'"):
        DenseIndex.load(tmp_path)
    (tmp_path / "dense.json").write_text(json.dumps({**meta, "n": 51}))
    with pytest.raises(ValueError, match="n=50.*says n=51"):
        DenseIndex.load(tmp_path)
    (tmp_path / "dense.json").write_text(json.dumps({**meta, "format_version": 99}))
    with pytest.raises(ValueError, match="format_version 99"):
        DenseIndex.load(tmp_path)
    (tmp_path / "dense.json").write_text(json.dumps(meta))
    (tmp_path / "dense.faiss").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="dense.faiss is unreadable"):
        DenseIndex.load(tmp_path)


def test_build_and_search_reject_bad_input(data):
    x, _ = data
    with pytest.raises(ConfigError, match=r"'ivf' is not a known dense index kind; valid: flat, hnsw"):
        DenseIndex.build(x, DenseConfig(index="ivf"))
    with pytest.raises(ConfigError, match="dense.hnsw_m must be at least 2"):
        DenseIndex.build(x, DenseConfig(index="hnsw", hnsw_m=0))
    with pytest.raises(ValueError, match="2-D array"):
        DenseIndex.build(x[0])
    bad = x[:10].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="row 3 holds NaN"):
        DenseIndex.build(bad)
    index = DenseIndex.build(x[:10])
    with pytest.raises(ValueError, match=r"shape \(48,\), got \(47,\)"):
        index.search(x[0, :47], 3)
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        index.search(x[0], -1)
    with pytest.raises(ValueError, match=r"allowed must be a bool array of shape \(10,\)"):
        index.search(x[0], 3, allowed=np.ones(9, bool))
    with pytest.raises(ValueError, match="allowed must be a bool array"):
        index.search(x[0], 3, allowed=np.ones(10, int))
    assert index.search(x[0], 0)[0].shape == (0,)
    assert index.search(x[0][None, :], 2)[0].shape == (2,)  # (1, dim) is accepted


def test_empty_index():
    for kind in INDEX_KINDS:
        index = DenseIndex.build(np.zeros((0, 8), np.float32), DenseConfig(index=kind))
        assert index.n == 0 and index.search(np.ones(8), 5)[0].shape == (0,)


def test_works_with_embedder_vectors():
    emb = HashingEmbedder(dim=64)
    docs = ["выгрузка отчёта по продажам", "満月の周期の計算", "ATL-1655 deadline moved"]
    index = DenseIndex.build(emb.embed_passages(docs))
    idx, _ = index.search(emb.embed_queries(["отчёт по продажам"])[0], 1)
    assert idx.tolist() == [0]


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float32, st.tuples(st.integers(1, 30), st.just(6)),
                    elements=st.floats(-1, 1, width=32)),
       k=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_flat_matches_brute_force_property(x, k, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(6).astype(np.float32)
    mask = rng.random(len(x)) < 0.6
    index = DenseIndex.build(x)
    idx, scores = index.search(q, k, allowed=mask)
    assert mask[idx].all() and len(idx) == min(k, int(mask.sum()))
    # every returned doc scores at least as high as every allowed doc left out
    exact = x.astype(np.float64) @ q.astype(np.float64)
    left_out = np.setdiff1d(np.flatnonzero(mask), idx)
    if len(idx) and len(left_out):
        assert exact[idx].min() >= exact[left_out].max() - 1e-5
    assert np.all(np.diff(scores) <= 0)


def test_a_large_allowed_share_is_scored_through_every_row_with_the_same_result(monkeypatch):
    """Issue 30 item 9: when the allowed rows are a large share (a caller's scope), the rough pass
    scores every row and picks them instead of copying them out; the exact pass decides, so the
    rows and scores are those of the copying path, bit for bit."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3000, 48)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[100] = x[200]  # a tie: broken by row either way
    index = DenseIndex.build(x, DenseConfig(index="flat"))
    for share in (0.3, 0.6, 0.95):
        for i in range(40):
            mask = rng.random(3000) < share
            q = x[i * 7] + 0.01 * rng.standard_normal(48).astype(np.float32)
            k = (1, 10, 60)[i % 3]
            monkeypatch.setattr(dense_mod, "_GATHER_SHARE", 4)
            got = index.search(q, k, mask, exact=True)
            monkeypatch.setattr(dense_mod, "_GATHER_SHARE", 0)  # always copy the rows out (before)
            want = index.search(q, k, mask, exact=True)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_scope_stretch_scores_only_its_rows_and_matches_the_copying_path(monkeypatch):
    """Issue 30: allowed rows within one stretch (a caller's space: its passages are indexed
    together) are scored over that stretch alone, not every row; the result is the copying path's
    bit for bit, blocks at the start, the middle and the end, with holes (chats the caller may not
    see) and a tie."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4000, 40)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[1500] = x[1600]
    index = DenseIndex.build(x, DenseConfig(index="flat"))
    seen = []
    real_matmul = np.ndarray.__matmul__

    class Spy(np.ndarray):
        def __matmul__(self, other):
            seen.append(self.shape[0])
            return real_matmul(np.asarray(self), other)

    for lo, hi in ((0, 1000), (1400, 2400), (3000, 4000)):
        for i in range(12):
            mask = np.zeros(4000, dtype=bool)
            mask[lo:hi] = rng.random(hi - lo) < 0.8
            q = x[lo + i * 9] + 0.01 * rng.standard_normal(40).astype(np.float32)
            k = (1, 10, 60)[i % 3]
            monkeypatch.setattr(index, "_vectors", x.view(Spy))
            seen.clear()
            got = index.search(q, k, mask, exact=True)
            rows = np.flatnonzero(mask)
            assert seen and seen[0] == rows[-1] - rows[0] + 1 < 4000  # the stretch, not every row
            monkeypatch.setattr(dense_mod, "_GATHER_SHARE", 0)  # always copy the rows out
            want = index.search(q, k, mask, exact=True)
            monkeypatch.setattr(dense_mod, "_GATHER_SHARE", 6)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
