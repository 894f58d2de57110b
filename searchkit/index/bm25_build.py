"""Building a BM25 index (part of ``searchkit.index.bm25``): every (document, term) contribution
computed once, in numpy, into the columns of a CSC matrix (bm25s, Lù 2024).
"""
from __future__ import annotations

from collections import defaultdict
from itertools import chain
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence, cast

import numpy as np
import numpy.typing as npt

from searchkit.config import BM25Config
from searchkit.index.bm25_variants import _DTYPES, _dtype_name, _index_config, get_variant

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from searchkit.index.bm25 import BM25Index  # the class these methods belong to (it imports this module)


def _sorted_columns(first: list, flat: np.ndarray) -> tuple[dict[str, int], np.ndarray]:
    """The vocabulary with the terms in sorted order as columns, and ``flat`` (the corpus's term
    numbers in order of first occurrence, ``first``) renumbered to them. So the index depends on
    each document's tokens as a bag, never on their order: a document whose tokens are kept from a
    previous version (``doc_tokens``, in column order) gives the same bytes as one analysed again
    (issue 30)."""
    bad = next((t for t in first if not isinstance(t, str)), None)
    if bad is not None:
        raise ValueError(f"tokens must be str, got {type(bad).__name__} {bad!r} in corpus_tokens")
    order = sorted(range(len(first)), key=first.__getitem__)
    column = np.empty(len(first), dtype=np.int64)
    column[order] = np.arange(len(first), dtype=np.int64)
    return {first[i]: c for c, i in enumerate(order)}, (column[flat] if flat.size else flat)


def _counted(docs: Iterable, bar: tqdm) -> Iterator:
    """``docs``, each counted on ``bar`` as it is handed out (so the bar reaches n/n even when the
    consumer stops without asking past the last one)."""
    for doc in docs:
        bar.update(1)
        yield doc


class BM25Builder:
    """``BM25Index.build``: index analysed documents. A base of ``BM25Index`` (``cls`` is the index
    class it builds)."""

    # what ``doc_tokens`` reads, set by ``BM25Index.__init__`` (annotations only: no class attributes)
    _vocab: dict[str, int]
    _n_docs: int
    _indices: np.ndarray
    _indptr: np.ndarray

    @classmethod
    def build(
        cls,
        corpus_tokens: Sequence[Sequence[str]],
        cfg: BM25Config | None = None,
        *,
        dtype: npt.DTypeLike = np.float32,
        show_progress: bool = False,
    ) -> BM25Index:
        """Index ``corpus_tokens`` (one list of analysed tokens per document).

        Args:
            corpus_tokens: documents as token lists; row i of the index is document i.
            cfg: the config's ``bm25`` section (``searchkit.config.BM25Config``; None: its
                defaults). The index uses and stores ``variant`` (a name in ``VARIANTS``),
                ``k1``, ``b``, ``epsilon`` (Okapi only: a negative idf becomes ``epsilon *
                mean idf``) and ``delta`` (BM25L / BM25+ only); ``depth`` and ``enabled`` are
                the Searcher's.
            dtype: float32 (default, half the memory) or float64 (exact parity).
            show_progress: show a tqdm bar over the documents.

        Returns:
            The index. An empty corpus is allowed (every query then finds nothing). Its columns
            are the terms in sorted order: the index depends on each document's tokens as a bag.
        """
        params = _index_config(BM25Config() if cfg is None else cfg)
        spec = get_variant(params.variant)
        dtype_name = _dtype_name(dtype)
        if isinstance(corpus_tokens, (str, bytes)):
            raise ValueError("corpus_tokens must be a sequence of token lists, got a string")
        docs = corpus_tokens if isinstance(corpus_tokens, Sequence) else list(corpus_tokens)
        n_docs = len(docs)
        for i, tokens in enumerate(docs):
            if isinstance(tokens, (str, bytes)):
                raise ValueError(
                    f"corpus_tokens[{i}] is a string ({tokens[:50]!r}), not a list of tokens; "
                    "analyze the documents first"
                )
        doc_len = np.fromiter((len(d) for d in docs), dtype=np.int64, count=n_docs)

        rows: Iterable = docs
        bar = None
        if show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_docs, desc="BM25 index", unit="doc")
            rows = _counted(docs, bar)
        term_ids: defaultdict = defaultdict()
        term_ids.default_factory = term_ids.__len__  # new term -> next column, in C
        flat = np.fromiter(
            map(term_ids.__getitem__, chain.from_iterable(rows)),
            dtype=np.int64,
            count=int(doc_len.sum()),
        )
        if bar is not None:  # fromiter stops at count, before the request that would end a tqdm iterator
            bar.update(n_docs - bar.n)  # trailing documents without a token are never asked for
            bar.close()
        vocab, flat = _sorted_columns(list(term_ids), flat)
        n_terms = len(vocab)

        # (term, doc) pairs sorted term-major -> CSC order; counts are term frequencies.
        if n_docs and flat.size:
            key = flat * n_docs
            key += np.repeat(np.arange(n_docs, dtype=np.int64), doc_len)
            del flat
            pairs, tf = np.unique(key, return_counts=True)
            del key
            term = pairs // n_docs
            doc = pairs - term * n_docs
            del pairs
        else:
            term = doc = tf = np.zeros(0, dtype=np.int64)
        df = np.bincount(term, minlength=n_terms)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])

        idf = np.asarray(spec.idf(df.astype(np.float64), n_docs, params), dtype=np.float64)
        avgdl = float(doc_len.sum()) / n_docs if n_docs else 0.0
        if tf.size:
            rel_len = doc_len[doc] / avgdl
            weight = spec.tf(tf.astype(np.float64), rel_len, params)
            data = (idf[term] * weight).astype(_DTYPES[dtype_name])
        else:
            data = np.zeros(0, dtype=_DTYPES[dtype_name])
        index_dtype = np.int32 if max(n_docs, data.size) < 2**31 - 1 else np.int64
        index_class = cast("type[BM25Index]", cls)  # this base's one subclass (its only user)
        return index_class(
            data=data,
            indices=doc.astype(index_dtype),
            indptr=indptr.astype(index_dtype),
            idf=idf,
            doc_len=doc_len,
            vocab=vocab,
            config=params,
            tf=tf.astype(np.int32),
        )

    def doc_tokens(self, rows: Sequence[int]) -> dict[int, list[str]] | None:
        """The tokens of the documents ``rows`` as a bag (each term repeated as often as it occurs,
        in column order): what ``build`` needs of a document to index it as it was (issue 30: a
        passage whose text is unchanged keeps its analysis). None when the index keeps no term
        frequencies (an index saved before it did)."""
        tf = getattr(self, "_tf", None)
        if tf is None:
            return None
        indptr, indices = np.asarray(self._indptr, dtype=np.int64), np.asarray(self._indices, dtype=np.int64)
        wanted = np.zeros(self._n_docs, dtype=bool)
        picked = np.unique(np.asarray(rows, dtype=np.int64))
        wanted[picked] = True
        term = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
        keep = wanted[indices]
        doc, term, count = indices[keep], term[keep], np.asarray(tf)[keep].astype(np.int64)
        by_doc = np.argsort(doc, kind="stable")  # stable: each document's terms stay in column order
        doc, term, count = doc[by_doc], term[by_doc], count[by_doc]
        names = np.empty(len(self._vocab), dtype=object)
        for t, c in self._vocab.items():
            names[c] = t
        flat = names[np.repeat(term, count)]
        lengths = np.bincount(doc, weights=count, minlength=self._n_docs).astype(np.int64)[picked]
        ends = np.cumsum(lengths)
        return {int(r): flat[e - n:e].tolist() for r, n, e in zip(picked, lengths, ends)}
