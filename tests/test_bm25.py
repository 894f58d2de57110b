"""BM25Index: parity with rank_bm25, Lucene by hand, top-k rules, persistence, bad input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import rank_bm25
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.index.bm25 import VARIANTS, BM25Index, get_variant

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
    ours = BM25Index.build(corpus, variant=variant, dtype=np.float64, **kw)
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
            for i, line in zip(range(67), fh):
                rec = json.loads(line)
                corpus.append(_tokens(f"{rec.get('title', '')} {rec['text']}"))
        with open(folder / "queries.jsonl", encoding="utf-8") as fh:
            for i, line in zip(range(15), fh):
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
    f32 = BM25Index.build(corpus, variant=variant, **kw)
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
    ix = BM25Index.build(corpus, variant="lucene", k1=1.2, b=0.75, dtype=np.float64)
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(st.lists(st.sampled_from("abcdef"), max_size=6), min_size=1, max_size=25),
    padding=st.integers(0, 120),  # empty docs push queries onto the few-postings path
    query=st.lists(st.sampled_from("abcdefz"), max_size=4),
    k=st.integers(0, 8),
    variant=st.sampled_from(sorted(VARIANTS)),
    mask_seed=st.one_of(st.none(), st.integers(0, 2**16)),
)
def test_top_k_equals_brute_force(corpus, padding, query, k, variant, mask_seed):
    corpus = corpus + [[]] * padding
    ix = BM25Index.build(corpus, variant=variant, dtype=np.float64)
    allowed = None
    if mask_seed is not None:
        allowed = np.random.default_rng(mask_seed).random(len(corpus)) < 0.6
    idx, sc = ix.top_k(query, k, allowed=allowed)
    want_idx, want_sc = _brute_top_k(ix, query, k, allowed)
    assert idx.tolist() == want_idx
    np.testing.assert_allclose(sc, want_sc, rtol=1e-12, atol=1e-12)


def test_large_corpus_both_paths_agree_with_brute_force():
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(300)]
    p = 1 / np.arange(1, 301) ** 1.1
    p /= p.sum()
    corpus = [list(rng.choice(vocab, size=rng.integers(0, 40), p=p)) for _ in range(3000)]
    ix = BM25Index.build(corpus, dtype=np.float64)
    allowed = rng.random(3000) < 0.5
    for q in (["w0", "w1"], ["w250"], ["w3", "w299", "w0"], ["w120", "w121"]):
        for mask in (None, allowed):
            idx, sc = ix.top_k(q, 10, allowed=mask)
            want_idx, want_sc = _brute_top_k(ix, q, 10, mask)
            assert idx.tolist() == want_idx
            np.testing.assert_allclose(sc, want_sc)


def test_bm25plus_top_k_scores_include_the_delta_offset():
    ix = BM25Index.build(TINY, variant="bm25plus", dtype=np.float64)
    q = ["cat", "dog"]
    idx, sc = ix.top_k(q, 3)
    np.testing.assert_allclose(sc, ix.scores(q)[idx])
    assert set(idx.tolist()) <= {0, 1, 5, 6}  # docs without cat/dog get only the offset


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
    ix = BM25Index.build(TINY, variant="bm25plus", k1=1.3, b=0.6, delta=0.7)
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


def test_load_rejects_arrays_that_disagree_with_the_vocabulary(tmp_path):
    BM25Index.build(TINY).save(tmp_path)
    meta = json.loads((tmp_path / "bm25.json").read_text(encoding="utf-8"))
    meta["vocab"] = meta["vocab"][:-1]
    (tmp_path / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="inconsistent BM25 index"):
        BM25Index.load(tmp_path)


# --------------------------------------------------------------------------- registry and bad input


def test_unknown_variant_lists_valid_names():
    with pytest.raises(ValueError, match="valid variants: bm25l, bm25plus, lucene, okapi"):
        BM25Index.build(TINY, variant="bm42")
    with pytest.raises(ValueError, match="'bm42'"):
        get_variant("bm42")


@pytest.mark.parametrize(
    "kwargs, culprit",
    [({"k1": -1}, "k1"), ({"b": 1.5}, "b"), ({"delta": float("nan")}, "delta"),
     ({"epsilon": "x"}, "epsilon"), ({"dtype": np.int32}, "dtype")],
)
def test_bad_parameters_name_the_parameter(kwargs, culprit):
    with pytest.raises(ValueError, match=culprit):
        BM25Index.build(TINY, **kwargs)


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
