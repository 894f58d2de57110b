"""BM25Index: parity with rank_bm25, Lucene by hand, top-k rules, persistence, bad input."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import rank_bm25
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.config import BM25Config, SearchConfig
from searchkit.index import bm25 as bm25_module
from searchkit.index.bm25 import VARIANTS, BM25Index, get_variant

try:
    import numba  # noqa: F401

    PATHS = ["numba", "numpy"]
except ImportError:  # the numpy fallback is then the only path
    PATHS = ["numpy"]


@contextlib.contextmanager
def query_path(path):
    """Run queries on the numba kernels or on the numpy fallback."""
    saved = bm25_module.USE_NUMBA
    bm25_module.USE_NUMBA = path == "numba"
    try:
        assert (bm25_module._kernels() is not None) == (path == "numba")
        yield
    finally:
        bm25_module.USE_NUMBA = saved

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# name -> (rank_bm25 class, kwargs for both sides)
RANK_BM25 = {
    "okapi": (rank_bm25.BM25Okapi, {"k1": 1.5, "b": 0.75, "epsilon": 0.25}),
    "bm25l": (rank_bm25.BM25L, {"k1": 1.2, "b": 0.75, "delta": 0.5}),
    "bm25plus": (rank_bm25.BM25Plus, {"k1": 1.5, "b": 0.6, "delta": 1.0}),
}

TINY = [
    ["the", "cat", "sat", "on", "the", "mat"],
    ["the", "dog", "sat"],
    ["кошка", "сидит", "на", "ковре", "кошка"],
    [],
    ["猫", "が", "座る", "the"],
    ["the", "the", "the", "cat"],
    ["dog", "dog", "ковре"],
]
TINY_QUERIES = [
    ["cat"],
    ["the", "cat"],
    ["the"],
    ["cat", "cat", "dog"],
    ["кошка", "ковре", "missing"],
    ["猫", "the", "猫"],
    ["unknown"],
    [],
]


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _assert_parity(corpus, queries, variant):
    cls, kw = RANK_BM25[variant]
    ref = cls(corpus, **kw)
    ours = BM25Index.build(corpus, BM25Config(variant=variant, **kw), dtype=np.float64)
    for q in queries:
        np.testing.assert_allclose(ours.scores(q), ref.get_scores(q), rtol=0, atol=1e-6, err_msg=str(q))


# --------------------------------------------------------------------------- parity


@pytest.mark.parametrize("variant", sorted(RANK_BM25))
def test_tiny_corpus_matches_rank_bm25(variant):
    _assert_parity(TINY, TINY_QUERIES, variant)


@pytest.mark.parametrize("variant", sorted(RANK_BM25))
def test_common_terms_idf_floor_matches_rank_bm25(variant):
    # "x" is in 4 of 5 docs (Okapi idf < 0 -> epsilon floor), "y" in exactly half of 4 docs.
    corpus = [["x", "y"], ["x"], ["x", "z"], ["x", "y", "y"], ["w"]]
    _assert_parity(corpus, [["x"], ["y"], ["x", "y", "w"], ["z", "x", "x"]], variant)
    negative_mean = [["a", "b"], ["a", "b"], ["a"]]  # mean idf < 0: the floor itself is negative
    _assert_parity(negative_mean, [["a"], ["b"], ["a", "b"]], variant)


def _shared_sample() -> tuple[list[list[str]], list[list[str]]]:
    corpus, queries = [], []
    for name in ("xquad-ru", "jsquad-ja", "squad2-en"):
        folder = SHARED_DATA / name
        with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
            for _, line in zip(range(67), fh):
                rec = json.loads(line)
                corpus.append(_tokens(f"{rec.get('title', '')} {rec['text']}"))
        with open(folder / "queries.jsonl", encoding="utf-8") as fh:
            for _, line in zip(range(15), fh):
                queries.append(_tokens(json.loads(line)["text"]))
    return corpus, queries


@pytest.mark.skipif(
    not (SHARED_DATA / "xquad-ru" / "corpus.jsonl").is_file(),
    reason=f"shared datasets not found at {SHARED_DATA} (the tiny-corpus parity tests still run)",
)
@pytest.mark.parametrize("variant", sorted(RANK_BM25))
def test_multilingual_sample_matches_rank_bm25(variant):
    corpus, queries = _shared_sample()
    assert len(corpus) == 201 and len(queries) == 45
    # Query with a repeated term and with document words, besides the real questions.
    queries += [corpus[0][:5] * 2, corpus[80][3:9], corpus[150][:4] + ["zzzz"]]
    _assert_parity(corpus, queries, variant)
    # The default float32 storage stays within float32 rounding of the reference.
    cls, kw = RANK_BM25[variant]
    ref = cls(corpus, **kw)
    f32 = BM25Index.build(corpus, BM25Config(variant=variant, **kw))
    for q in queries[:10]:
        np.testing.assert_allclose(f32.scores(q), ref.get_scores(q), rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=8), min_size=1, max_size=12),
    query=st.lists(st.sampled_from("abcdefgh"), max_size=5),
    variant=st.sampled_from(sorted(RANK_BM25)),
)
def test_random_corpora_match_rank_bm25(corpus, query, variant):
    if not any(corpus):
        return  # rank_bm25 divides by zero on a corpus without tokens
    _assert_parity(corpus, [query], variant)


def test_lucene_hand_computed():
    corpus = [["a", "b"], ["a"], ["c", "c", "a", "b"]]
    ix = BM25Index.build(corpus, BM25Config(variant="lucene", k1=1.2, b=0.75), dtype=np.float64)
    n, avgdl = 3, 7 / 3
    idf_a = math.log(1 + (n - 3 + 0.5) / (3 + 0.5))
    idf_b = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    idf_c = math.log(1 + (n - 1 + 0.5) / (1 + 0.5))

    def tf_part(tf, dl):
        return tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    expected = [
        idf_b * tf_part(1, 2),
        0.0,
        idf_b * tf_part(1, 4) + idf_c * tf_part(2, 4),
    ]
    np.testing.assert_allclose(ix.scores(["b", "c"]), expected, rtol=1e-12)
    # idf of a term in every document stays positive (unlike Okapi's).
    assert ix.scores(["a"])[1] == pytest.approx(idf_a * tf_part(1, 1), rel=1e-12)
    assert idf_a > 0


# --------------------------------------------------------------------------- top_k


def test_top_k_orders_by_score_then_lower_index():
    corpus = [["x", "y"], ["y"], ["x", "y"], ["z"], ["x"], ["x", "y"]]
    ix = BM25Index.build(corpus, dtype=np.float64)
    idx, sc = ix.top_k(["x", "y"], 10)
    full = ix.scores(["x", "y"])
    assert idx[:3].tolist() == [0, 2, 5]  # three identical docs tie at the top
    assert sorted(idx.tolist()) == [0, 1, 2, 4, 5]  # doc 3 matches nothing
    assert sc[0] == sc[2] > sc[3] and np.all(np.diff(sc) <= 0)
    np.testing.assert_array_equal(sc, full[idx])
    assert ix.top_k(["x", "y"], 2)[0].tolist() == [0, 2]  # the cut falls inside a tie


def test_top_k_allowed_mask_never_gives_a_slot_to_filtered_docs():
    corpus = [["x", "x"], ["x"], ["y"], ["x", "y"]]
    ix = BM25Index.build(corpus)
    allowed = np.array([False, True, True, True])
    idx, _ = ix.top_k(["x"], 2, allowed=allowed)
    assert 0 not in idx.tolist() and len(idx) == 2
    assert ix.top_k(["x"], 5, allowed=np.zeros(4, dtype=bool))[0].size == 0


def test_top_k_returns_matching_docs_even_at_zero_idf():
    # Two documents, a term in one of them: Okapi idf = ln(1.5/1.5) = 0 (rank_bm25 scores it 0).
    ix = BM25Index.build([["rare", "x"], ["x", "y"]])
    idx, sc = ix.top_k(["rare"], 5)
    assert idx.tolist() == [0] and sc.tolist() == [0.0]
    assert ix.top_k(["nothing"], 5)[0].size == 0
    assert ix.top_k(["rare"], 0)[0].size == 0


def _brute_top_k(ix, q, k, allowed):
    scores, hits = ix.scores(q), ix.matched_counts(q) > 0
    if allowed is not None:
        hits &= allowed
    cand = np.flatnonzero(hits)
    order = sorted(cand.tolist(), key=lambda d: (-scores[d], d))[:k]
    return order, scores[order]


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(st.lists(st.sampled_from("abcdef"), max_size=6), min_size=1, max_size=25),
    padding=st.integers(0, 120),  # empty docs push queries onto the few-postings path
    query=st.lists(st.sampled_from("abcdefz"), max_size=4),
    k=st.integers(0, 8),
    variant=st.sampled_from(sorted(VARIANTS)),
    mask_seed=st.one_of(st.none(), st.integers(0, 2**16)),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_top_k_equals_brute_force(path, corpus, padding, query, k, variant, mask_seed, dtype):
    corpus = corpus + [[]] * padding
    ix = BM25Index.build(corpus, BM25Config(variant=variant), dtype=dtype)
    allowed = None
    if mask_seed is not None:
        allowed = np.random.default_rng(mask_seed).random(len(corpus)) < 0.6
    with query_path(path):
        idx, sc = ix.top_k(query, k, allowed=allowed)
        want_idx, want_sc = _brute_top_k(ix, query, k, allowed)
    assert idx.dtype == np.int64 and sc.dtype == np.float64
    assert idx.tolist() == want_idx
    np.testing.assert_array_equal(sc, want_sc)  # bit for bit the scores() values


@pytest.mark.parametrize("path", PATHS)
def test_large_corpus_agrees_with_brute_force(path):
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(300)]
    p = 1 / np.arange(1, 301) ** 1.1
    p /= p.sum()
    corpus = [list(rng.choice(vocab, size=rng.integers(0, 40), p=p)) for _ in range(3001)]
    ix = BM25Index.build(corpus, dtype=np.float64)
    allowed = rng.random(3001) < 0.5
    # common terms (many postings: every document read) to rare ones (the postings re-read)
    for q in (["w0", "w1"], ["w250"], ["w3", "w299", "w0"], ["w120", "w121"], ["w7"] * 3 + ["w40"]):
        for mask in (None, allowed):
            for k in (1, 10, 3001):
                with query_path(path):
                    idx, sc = ix.top_k(q, k, allowed=mask)
                    want_idx, want_sc = _brute_top_k(ix, q, k, mask)
                assert idx.tolist() == want_idx
                np.testing.assert_array_equal(sc, want_sc)


@pytest.mark.skipif("numba" not in PATHS, reason="numba is not installed")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=10), min_size=1, max_size=40),
    copies=st.integers(1, 4),  # repeated documents tie exactly
    query=st.lists(st.sampled_from("abcdefghz"), max_size=90),  # > 64 tokens: sort-based dedup
    k=st.integers(1, 200),
    variant=st.sampled_from(sorted(VARIANTS)),
    dtype=st.sampled_from([np.float32, np.float64]),
    mask_seed=st.one_of(st.none(), st.integers(0, 2**16)),
)
def test_numba_and_numpy_paths_give_identical_results(
    docs, copies, query, k, variant, dtype, mask_seed
):
    ix = BM25Index.build(docs * copies, BM25Config(variant=variant), dtype=dtype)
    allowed = None
    if mask_seed is not None:
        allowed = np.random.default_rng(mask_seed).random(ix.n_docs) < 0.5
    out = {}
    for path in ("numba", "numpy"):
        with query_path(path):
            out[path] = (ix.top_k(query, k, allowed=allowed), ix.scores(query))
    (idx_a, sc_a), full_a = out["numba"]
    (idx_b, sc_b), full_b = out["numpy"]
    np.testing.assert_array_equal(full_a, full_b)
    np.testing.assert_array_equal(idx_a, idx_b)
    np.testing.assert_array_equal(sc_a, sc_b)
    np.testing.assert_array_equal(sc_a, full_a[idx_a])
    assert not bm25_module._scratch(ix.n_docs).any()  # the kernel left its buffer clear


@pytest.mark.skipif("numba" not in PATHS, reason="numba is not installed")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(st.tuples(st.sampled_from([-1.5, 0.0, 0.5, 2.0, 7.25]), st.integers(0, 30)),
                     max_size=40, unique_by=lambda e: e[1]),
    capacity=st.integers(1, 12),
)
def test_kernel_heap_keeps_the_best_by_score_then_lower_doc(entries, capacity):
    # The bounded heap of the top_k kernel (offer / sift-up / sift-down / drain), alone.
    from searchkit.index import _bm25_numba as kernels

    hs, hd = np.empty(capacity, dtype=np.float64), np.empty(capacity, dtype=np.int64)
    size = 0
    for score, doc in entries:
        size = kernels._offer(hs, hd, size, score, doc)
    docs, scores = kernels._drain(hs, hd, size)
    want = sorted(entries, key=lambda e: (-e[0], e[1]))[:capacity]
    assert list(zip(scores.tolist(), docs.tolist())) == [(float(s), d) for s, d in want]


@pytest.mark.skipif("numba" not in PATHS, reason="numba is not installed")
@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(-1, 9), max_size=150))  # > 64 ids: found by sorting
def test_kernel_distinct_columns_keep_first_appearance_order(ids):
    from searchkit.index import _bm25_numba as kernels

    cols, mult = kernels._distinct_columns(np.array(ids, dtype=np.int64))
    want: dict[int, int] = {}
    for c in ids:
        if c >= 0:
            want[c] = want.get(c, 0) + 1
    assert cols.tolist() == list(want) and mult.tolist() == list(want.values())


@pytest.mark.parametrize("path", PATHS)
def test_long_queries_with_repeats(path):
    # Over 64 query tokens the kernel finds distinct columns by sorting; the order of first
    # appearance (the summation order) and the multiplicities must not change.
    rng = np.random.default_rng(11)
    vocab = [f"v{i}" for i in range(40)]
    corpus = [list(rng.choice(vocab, size=rng.integers(0, 25))) for _ in range(300)]
    for dtype in (np.float32, np.float64):
        ix = BM25Index.build(corpus, BM25Config(variant="bm25plus"), dtype=dtype)
        for n_tokens in (65, 66, 200, 1000):
            q = list(rng.choice(vocab + ["oov1", "oov2"], size=n_tokens, p=None))
            with query_path(path):
                idx, sc = ix.top_k(q, 15)
                full = ix.scores(q)
            with query_path("numpy"):
                want_full = ix.scores(q)
            want_idx, want_sc = _brute_top_k(ix, q, 15, None)
            np.testing.assert_array_equal(full, want_full)
            assert idx.tolist() == want_idx
            np.testing.assert_array_equal(sc, want_sc)
            ref = rank_bm25.BM25Plus(corpus, k1=1.5, b=0.75, delta=1.0).get_scores(q)
            np.testing.assert_allclose(full, ref, rtol=1e-5 if dtype == np.float32 else 1e-9)


@pytest.mark.skipif("numba" not in PATHS, reason="numba is not installed")
def test_numba_top_k_is_thread_safe():
    rng = np.random.default_rng(3)
    vocab = [f"t{i}" for i in range(60)]
    indexes = [
        BM25Index.build([list(rng.choice(vocab, size=rng.integers(1, 30))) for _ in range(n)])
        for n in (500, 2000)
    ]
    queries = [list(rng.choice(vocab, size=rng.integers(1, 6))) for _ in range(40)]
    with query_path("numba"):
        want = [[ix.top_k(q, 7) for q in queries] for ix in indexes]
        errors = []

        def worker(seed):
            order = np.random.default_rng(seed).permutation(len(queries))
            for _ in range(5):
                for i in order:
                    for ix, expected in zip(indexes, want):
                        got = ix.top_k(queries[i], 7)
                        same = all(np.array_equal(a, b) for a, b in zip(got, expected[i]))
                        if not same:
                            errors.append((seed, i))

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


def test_env_switch_forces_the_numpy_fallback():
    code = (
        "from searchkit.index import bm25; import numpy as np; "
        "ix = bm25.BM25Index.build([['x'], ['y'], ['y'], ['y'], ['x', 'x']]); "
        "print(bm25.USE_NUMBA, bm25._kernels(), ix.warm_up(), ix.top_k(['x'], 5)[0].tolist())"
    )
    env = {**os.environ, "SEARCHKIT_NO_NUMBA": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "None", "False", "[4,", "0]"]


def test_warm_up_reports_the_path():
    ix = BM25Index.build(TINY)
    with query_path("numpy"):
        assert ix.warm_up() is False
    if "numba" in PATHS:
        with query_path("numba"):
            assert ix.warm_up() is True


@pytest.mark.parametrize("path", PATHS)
def test_bm25plus_top_k_scores_include_the_delta_offset(path):
    ix = BM25Index.build(TINY, BM25Config(variant="bm25plus"), dtype=np.float64)
    q = ["cat", "dog", "cat"]
    with query_path(path):
        idx, sc = ix.top_k(q, 10)
        full = ix.scores(q)
    np.testing.assert_array_equal(sc, full[idx])
    assert sorted(idx.tolist()) == [0, 1, 5, 6]  # docs without cat/dog get only the offset
    offset_only = float(ix.idf[ix.vocab["cat"]] * 2 + ix.idf[ix.vocab["dog"]])  # delta = 1
    assert full[2] == full[3] == pytest.approx(offset_only)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("padding", [0, 60])  # 60 empty docs: the few-postings path
def test_ties_across_columns_go_to_the_lower_index(path, padding):
    # "a", "b", "c" each in one doc of the same length: three exactly equal scores, met in
    # query order c, b, a, i.e. the lowest doc index last.
    ix = BM25Index.build([["a"], ["b"], ["c"]] + [["z"]] * 3 + [[]] * padding)
    with query_path(path):
        assert ix.top_k(["c", "b", "a"], 1)[0].tolist() == [0]
        assert ix.top_k(["c", "b", "a"], 2)[0].tolist() == [0, 1]
        assert ix.top_k(["c", "b", "a", "z"], 4)[0].tolist() == [0, 1, 2, 3]
    # the same with zero and negative scores (idf 0 for a and b, Okapi's floor below 0 for
    # x): the general path, which lists the touched docs
    neg = BM25Index.build([["a", "x"], ["b", "x"], ["x"], ["a", "b"]] * 2)
    q = ["x", "b", "a"]
    assert (neg.scores(q) < 0).any() and (neg.scores(["a"]) == 0).all()
    for k in (1, 3, 5, 8):
        with query_path(path):
            idx, sc = neg.top_k(q, k)
            want_idx, want_sc = _brute_top_k(neg, q, k, None)
        assert idx.tolist() == want_idx
        np.testing.assert_array_equal(sc, want_sc)


@pytest.mark.parametrize("path", PATHS)
def test_top_k_with_negative_and_zero_contributions(path):
    # mean idf < 0: Okapi's floor is negative, so matching docs can score below 0 (and 0).
    ix = BM25Index.build([["a", "b"], ["a", "b"], ["a"], ["c"]], dtype=np.float32)
    assert (ix.idf[[ix.vocab["a"], ix.vocab["b"]]] <= 0).all()
    with query_path(path):
        for q in (["a"], ["a", "b"], ["b", "c"], ["a", "c", "a"]):
            for k in (1, 2, 9):
                idx, sc = ix.top_k(q, k)
                want_idx, want_sc = _brute_top_k(ix, q, k, None)
                assert idx.tolist() == want_idx
                np.testing.assert_array_equal(sc, want_sc)


# --------------------------------------------------------------------------- matched terms


def test_matched_terms_counts_distinct_query_terms():
    ix = BM25Index.build(TINY)
    assert ix.matched_terms(["the", "cat", "cat", "zzz"], 0) == 2
    assert ix.matched_terms(["the", "cat"], 3) == 0
    assert ix.matched_terms(["dog", "ковре"], 6) == 2
    assert ix.matched_counts(["the", "cat", "dog"]).tolist() == [2, 2, 0, 0, 1, 2, 1]
    with pytest.raises(ValueError, match="out of range"):
        ix.matched_terms(["the"], 7)


# --------------------------------------------------------------------------- persistence


def test_save_load_round_trip(tmp_path):
    ix = BM25Index.build(TINY, BM25Config(variant="bm25plus", k1=1.3, b=0.6, delta=0.7))
    ix.save(tmp_path / "bm25")
    back = BM25Index.load(tmp_path / "bm25")
    assert back.vocab == ix.vocab and back.params() == ix.params() and back.n_docs == ix.n_docs
    for q in TINY_QUERIES:
        np.testing.assert_array_equal(back.scores(q), ix.scores(q))
        for a, b in zip(back.top_k(q, 3), ix.top_k(q, 3)):
            np.testing.assert_array_equal(a, b)
    assert sorted(p.name for p in (tmp_path / "bm25").iterdir()) == ["bm25.json", "bm25.npz"]
    with np.load(tmp_path / "bm25" / "bm25.npz", allow_pickle=False) as z:
        assert z["data"].dtype == np.float32


def test_load_reports_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="bm25.json"):
        BM25Index.load(tmp_path)
    BM25Index.build(TINY).save(tmp_path)
    meta = json.loads((tmp_path / "bm25.json").read_text(encoding="utf-8"))
    meta["format_version"] = 99
    (tmp_path / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="format_version 99"):
        BM25Index.load(tmp_path)
    (tmp_path / "bm25.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        BM25Index.load(tmp_path)


def test_load_rejects_rows_outside_the_documents(tmp_path):
    BM25Index.build(TINY).save(tmp_path)
    with np.load(tmp_path / "bm25.npz") as z:
        arrays = dict(z)
    arrays["indices"][3] = len(TINY)  # one past the last document
    np.savez(tmp_path / "bm25.npz", **arrays)
    with pytest.raises(ValueError, match=r"indices outside \[0, n_docs=7\)"):
        BM25Index.load(tmp_path)


def test_load_rejects_arrays_that_disagree_with_the_vocabulary(tmp_path):
    BM25Index.build(TINY).save(tmp_path)
    meta = json.loads((tmp_path / "bm25.json").read_text(encoding="utf-8"))
    meta["vocab"] = meta["vocab"][:-1]
    (tmp_path / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="inconsistent BM25 index"):
        BM25Index.load(tmp_path)


# --------------------------------------------------------------------------- registry and bad input


def test_unknown_variant_lists_valid_names():
    with pytest.raises(ValueError, match="valid: bm25l, bm25plus, lucene, okapi"):
        BM25Index.build(TINY, BM25Config(variant="bm42"))
    with pytest.raises(ValueError, match="valid variants: bm25l, bm25plus, lucene, okapi"):
        get_variant("bm42")


@pytest.mark.parametrize(
    "fields, culprit",
    [({"k1": -1}, "k1"), ({"b": 1.5}, "b"), ({"delta": float("nan")}, "delta"),
     ({"epsilon": "x"}, "epsilon"), ({"epsilon": -0.1}, "epsilon"), ({"variant": 3}, "variant")],
)
def test_bad_parameters_name_the_parameter(fields, culprit):
    with pytest.raises(ValueError, match=culprit):
        BM25Index.build(TINY, BM25Config(**fields))


def test_bad_dtype_and_settings_that_are_not_the_config_section():
    with pytest.raises(ValueError, match="dtype"):
        BM25Index.build(TINY, dtype=np.int32)
    with pytest.raises(ValueError, match="BM25Config"):
        BM25Index.build(TINY, {"variant": "okapi", "k1": 1.5})


def test_build_takes_the_config_section_and_stores_its_index_values(tmp_path):
    cfg = SearchConfig().replace(
        **{"bm25.variant": "bm25l", "bm25.k1": 1.2, "bm25.delta": 0.5, "bm25.depth": 7}
    )
    ix = BM25Index.build(TINY, cfg.bm25)
    assert ix.params() == {"variant": "bm25l", "k1": 1.2, "b": 0.75, "epsilon": 0.25, "delta": 0.5,
                           "dtype": "float32"}
    # depth and enabled are the Searcher's, not the index's: they change nothing here
    same = BM25Index.build(
        TINY, BM25Config(variant="bm25l", k1=1.2, delta=0.5, depth=3, enabled=False)
    )
    np.testing.assert_array_equal(same.scores(["cat", "the"]), ix.scores(["cat", "the"]))
    assert BM25Index.build(TINY).params() == BM25Index.build(TINY, BM25Config()).params()
    ix.save(tmp_path)
    assert BM25Index.load(tmp_path).params() == ix.params()


def test_an_index_saved_before_the_config_section_still_loads(tmp_path):
    # bm25.json as format_version 1 has always written it (params with variant, k1, b,
    # epsilon, delta, dtype; an int where the user gave an int)
    ref = BM25Index.build(TINY, BM25Config(variant="bm25plus", k1=1.3, b=0.6, delta=0.7))
    ref.save(tmp_path)
    meta = json.loads((tmp_path / "bm25.json").read_text(encoding="utf-8"))
    assert meta["format_version"] == 1
    meta["params"] = {"variant": "bm25plus", "k1": 1.3, "b": 0.6, "epsilon": 0.25, "delta": 0.7,
                      "dtype": "float32"}
    (tmp_path / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")
    back = BM25Index.load(tmp_path)
    assert back.params() == ref.params()
    np.testing.assert_array_equal(back.scores(["cat", "dog"]), ref.scores(["cat", "dog"]))
    meta["params"]["k1"] = 2
    (tmp_path / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")
    assert BM25Index.load(tmp_path).params()["k1"] == 2.0
    for bad, culprit in (({"k1": "x"}, "k1"), ({"variant": "bm42"}, "bm42"), ({"b": 3}, r"bm25\.b")):
        damaged = {**meta, "params": {**meta["params"], **bad}}
        (tmp_path / "bm25.json").write_text(json.dumps(damaged), encoding="utf-8")
        with pytest.raises(ValueError, match=rf"bm25\.json: .*{culprit}"):
            BM25Index.load(tmp_path)


def test_strings_instead_of_token_lists_are_rejected():
    with pytest.raises(ValueError, match=r"corpus_tokens\[1\] is a string"):
        BM25Index.build([["a"], "raw text"])
    with pytest.raises(ValueError, match="tokens must be str"):
        BM25Index.build([["a", 3]])
    ix = BM25Index.build(TINY)
    with pytest.raises(ValueError, match="analyze the query"):
        ix.scores("the cat")
    with pytest.raises(ValueError, match="k must be"):
        ix.top_k(["cat"], -1)
    with pytest.raises(ValueError, match="allowed must be a bool array"):
        ix.top_k(["cat"], 3, allowed=np.ones(3, dtype=bool))


def test_empty_corpus_and_progress_bar(capsys):
    empty = BM25Index.build([])
    assert empty.n_docs == 0 and empty.scores(["a"]).size == 0 and empty.top_k(["a"], 3)[0].size == 0
    no_tokens = BM25Index.build([[], []])
    assert no_tokens.top_k(["a"], 3)[0].size == 0
    shown = BM25Index.build(TINY, show_progress=True)
    assert "BM25 index" in capsys.readouterr().err
    np.testing.assert_array_equal(shown.scores(["cat"]), BM25Index.build(TINY).scores(["cat"]))


# --------------------------------------------------------------------------- scoped statistics (H15)

@pytest.mark.parametrize("variant", sorted(VARIANTS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_restrict_equals_an_index_of_the_allowed_documents_alone(variant, data):
    words = ["a", "b", "c", "d", "e", "f"]
    docs = data.draw(st.lists(st.lists(st.sampled_from(words), max_size=8), min_size=1, max_size=12))
    allowed = np.array(data.draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs))), dtype=bool)
    query = data.draw(st.lists(st.sampled_from(words + ["zz"]), min_size=1, max_size=4))
    full = BM25Index.build(docs, BM25Config(variant=variant))
    scoped = full.restrict(allowed)
    rows = np.flatnonzero(allowed)
    alone = BM25Index.build([docs[i] for i in rows], BM25Config(variant=variant))
    if rows.size:
        assert np.array_equal(scoped.scores(query)[rows], alone.scores(query))
        assert scoped.avgdl == alone.avgdl
    idx, sc = scoped.top_k(query, 5, allowed)
    idx2, sc2 = alone.top_k(query, 5)
    assert np.array_equal(idx, rows[idx2]) and np.array_equal(sc, sc2)


def test_restrict_survives_save_and_load(tmp_path):
    docs = [["a", "b"], ["b", "c"], ["c", "d", "d"]]
    full = BM25Index.build(docs)
    full.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    mask = np.array([True, False, True])
    assert np.array_equal(loaded.restrict(mask).scores(["c"]), full.restrict(mask).scores(["c"]))


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(st.lists(st.sampled_from("abcdef"), max_size=8), min_size=1, max_size=30),
    query=st.lists(st.sampled_from("abcdefz"), max_size=6),  # repeats and an unknown token
    variant=st.sampled_from(sorted(VARIANTS)),
    dtype=st.sampled_from([np.float32, np.float64]),
    rows_seed=st.integers(0, 2**16),
)
def test_scores_at_equals_scores_bit_for_bit(path, corpus, query, variant, dtype, rows_seed):
    # what fusion fills for the records one retriever missed (issue 13: no full-collection pass)
    ix = BM25Index.build(corpus, BM25Config(variant=variant), dtype=dtype)
    rng = np.random.default_rng(rows_seed)
    rows = rng.integers(0, len(corpus), size=int(rng.integers(0, 2 * len(corpus) + 1)))  # repeats, any order
    with query_path(path):
        want = ix.scores(query)[rows]
    got = ix.scores_at(query, rows)
    assert got.dtype == np.float64 and got.shape == rows.shape
    np.testing.assert_array_equal(got, want)
    # a scoped view (H15: statistics over the caller's documents alone) fills the same way
    allowed = rng.random(len(corpus)) < 0.6
    scoped = ix.restrict(allowed)
    with query_path(path):
        want_scoped = scoped.scores(query)[rows]
    np.testing.assert_array_equal(scoped.scores_at(query, rows), want_scoped)


def test_scores_at_refuses_rows_outside_the_collection():
    ix = BM25Index.build([["a"], ["b"]], BM25Config())
    with pytest.raises(ValueError, match="out of range"):
        ix.scores_at(["a"], [2])
    with pytest.raises(ValueError, match="out of range"):
        ix.scores_at(["a"], [-1])
