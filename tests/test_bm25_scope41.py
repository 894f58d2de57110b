"""``ScopedBM25`` (issue 41 item 9): a scope's BM25 made per query answers as ``restrict`` does, bit
for bit (scores, order, term weights, the terms a document holds), on the numba kernels and on
numpy, for every variant and dtype; and nothing outside the scope changes what it answers (H15)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.config import BM25Config
from searchkit.index import bm25 as bm25_module
from searchkit.index.bm25 import VARIANTS, BM25Index
from searchkit.index.bm25_scope import ScopedBM25


@contextlib.contextmanager
def query_path(path):
    saved = bm25_module.USE_NUMBA
    bm25_module.USE_NUMBA = path == "numba"
    try:
        yield
    finally:
        bm25_module.USE_NUMBA = saved


@pytest.mark.parametrize("path", ["numba", "numpy"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=9), min_size=1, max_size=40),
    query=st.lists(st.sampled_from("abcdefgz"), max_size=6),  # repeats and an unknown token
    variant=st.sampled_from(sorted(VARIANTS)),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_scoped_answers_as_restrict_bit_for_bit(path, corpus, query, variant, dtype, seed):
    ix = BM25Index.build(corpus, BM25Config(variant=variant), dtype=dtype)
    rng = np.random.default_rng(seed)
    allowed = rng.random(len(corpus)) < rng.random()
    mask = rng.random(len(corpus)) < 0.7
    rows = rng.integers(0, len(corpus), size=int(rng.integers(0, 2 * len(corpus) + 1)))
    want, got = ix.restrict(allowed), ScopedBM25(ix, allowed)
    with query_path(path):
        for k in (1, 3, 50):
            for m in (None, mask):
                a, b = want.top_k(query, k, m), got.top_k(query, k, m)
                assert np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes()
        assert want.scores(query).tobytes() == got.scores(query).tobytes()
    assert want.scores_at(query, rows).tobytes() == got.scores_at(query, rows).tobytes()
    assert want.term_weights(query) == got.term_weights(query)
    assert list(want.term_weights(query)) == list(got.term_weights(query))
    for d in range(len(corpus)):
        assert want.doc_terms(query, d) == got.doc_terms(query, d)
    assert got.avgdl == want.avgdl


def test_nothing_outside_the_scope_changes_an_answer():
    # H15: the same documents in scope, anything else outside: the same answers
    inside = [["a", "b"], ["b", "c", "c"], ["a", "d"]]
    one = BM25Index.build(inside + [["a", "a", "a"], ["b"]], BM25Config())
    other = BM25Index.build(inside + [["zz"], ["c", "c", "d", "d"]], BM25Config())
    allowed = np.array([True, True, True, False, False])
    for q in (["a"], ["b", "c"], ["d", "a", "a"]):
        x, y = ScopedBM25(one, allowed), ScopedBM25(other, allowed)
        assert x.top_k(q, 5)[0].tolist() == y.top_k(q, 5)[0].tolist()
        assert x.top_k(q, 5)[1].tobytes() == y.top_k(q, 5)[1].tobytes()
        assert x.term_weights(q) == y.term_weights(q)


def test_a_scope_is_checked_and_never_saved(tmp_path):
    ix = BM25Index.build([["a"], ["b"]], BM25Config())
    with pytest.raises(ValueError, match="bool array"):
        ScopedBM25(ix, np.array([1, 0]))
    with pytest.raises(TypeError, match="never|saved|save"):
        ScopedBM25(ix, np.array([True, False])).save(tmp_path)


@pytest.mark.parametrize("path", ["numba", "numpy"])
def test_a_scopes_document_frequencies_on_either_path(path):
    from searchkit.index.bm25_scope import scope_df

    rng = np.random.default_rng(3)
    corpus = [list(rng.choice(list("abcdefghij"), size=int(rng.integers(0, 12)))) for _ in range(200)]
    ix = BM25Index.build(corpus, BM25Config())
    allowed = rng.random(200) < 0.4
    with query_path(path):
        df = scope_df(ix, allowed)
    want = [sum(1 for i, d in enumerate(corpus) if allowed[i] and t in d) for t in sorted(ix.vocab, key=ix.vocab.get)]
    assert df.tolist() == want
