"""The BM25 retriever: analysed query tokens over ``searchkit.index.bm25.BM25Index``.

Under a scope (what one caller may see, H14/H15) it searches an index whose collection statistics
cover the scope's passages alone (``ScopedBM25``: ``BM25Index.restrict``'s answers, bit for bit,
its matrix made per query; cached per scope), so nothing outside the scope changes a score.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

import numpy as np

from searchkit.config import BM25Config
from searchkit.index.bm25 import BM25Index
from searchkit.index.bm25_scope import ScopedBM25
from searchkit.retrievers import BuildContext, RetrieverSpec, register, relative_margin, top1, z_top1

if TYPE_CHECKING:
    from searchkit.analyze import Analyzer

_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+|[。！？]|\n+")

SCOPE_CACHE = 64
"""Scoped indexes kept per retriever (one per distinct scope: a caller and the spaces searched).
A scope holds two arrays of the vocabulary's length (``ScopedBM25``), not a copy of its postings, so
a server keeps the scopes of many callers (issue 41 item 9: 17 callers' scopes cycling through 16
places rebuilt one at nearly every search)."""


class BM25Retriever:
    """``prepare`` gives the analyser's query tokens; rows are passage rows of the index."""

    name = "bm25"

    def __init__(self, index: BM25Index | ScopedBM25, analyzer: Analyzer) -> None:
        self.index = index
        self.analyzer = analyzer
        self._scoped: OrderedDict[bytes, "BM25Retriever"] = OrderedDict()
        self._lock = threading.Lock()

    def prepare(self, text: str) -> list[str]:
        return self.analyzer.query_tokens(text)

    def search(self, query: Sequence[str], k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.index.top_k(query, k, mask)

    def scores_for(self, query: Sequence[str], rows: np.ndarray) -> np.ndarray:
        return self.index.scores_at(query, rows)

    def term_weights(self, query: Sequence[str]) -> dict[str, float]:
        """``BM25Index.term_weights``: each distinct query token's rarity, in the query's order."""
        return self.index.term_weights(query)

    def evidence(self, query: Sequence[str], top: Sequence[Sequence[int]], texts: Sequence[str]) -> dict[str, float]:
        """How much of the query the top records hold (H11's content evidence).

        ``top`` lists the passage rows of the best fused records (best first), ``texts`` their
        best passages' text. ``coverage``: the largest share of the query's distinct terms one
        passage of the top record holds; ``idf_coverage``: the same weighted by each term's
        ``term_weights`` (a term the collection lacks weighs most), for the top record and
        (``idf_coverage3``) the best of the top three; ``sentence_coverage``: the weighted share
        the best single sentence of the top record's passage holds."""
        distinct = set(query)
        zero = {"coverage": 0.0, "idf_coverage": 0.0, "idf_coverage3": 0.0, "sentence_coverage": 0.0}
        if not distinct or not top:
            return zero
        w = self.term_weights(query)
        total = sum(w.values()) or 1.0

        def weighted(terms: set[str]) -> float:
            # in the query's order, never a set's: a float sum over a set's order would change its
            # last digit with PYTHONHASHSEED, and so the signals from one process to the next
            return sum(w[t] for t in w if t in terms) / total

        held = [set().union(*(self.index.doc_terms(query, int(r)) for r in rows)) if len(rows) else set()
                for rows in top]
        best_rows = [max((len(self.index.doc_terms(query, int(r))) for r in top[0]), default=0)]
        sentence = 0.0
        if texts:
            for piece in _SENTENCES.split(texts[0]):
                if piece.strip():
                    sentence = max(sentence, weighted(distinct & set(self.analyzer.query_tokens(piece))))
        return {
            "coverage": best_rows[0] / len(distinct),
            "idf_coverage": weighted(held[0]),
            "idf_coverage3": max(weighted(h) for h in held),
            "sentence_coverage": sentence,
        }

    def scoped(self, scope: np.ndarray) -> "BM25Retriever":
        """This retriever with statistics over the passages in ``scope`` only (cached)."""
        if bool(scope.all()):
            return self
        key = hashlib.sha256(np.packbits(scope).tobytes()).digest()
        with self._lock:
            hit = self._scoped.get(key)
            if hit is not None:
                self._scoped.move_to_end(key)
                return hit
        if not isinstance(self.index, BM25Index):  # pragma: no cover - a scope of a scope is never asked for
            raise TypeError("a scoped BM25 retriever cannot be scoped again")
        view = BM25Retriever(ScopedBM25(self.index, scope), self.analyzer)
        with self._lock:
            self._scoped[key] = view
            while len(self._scoped) > SCOPE_CACHE:
                self._scoped.popitem(last=False)
        return view

    def save(self, folder: Path) -> None:
        self.index.save(folder)


def _build(cfg: BM25Config, ctx: BuildContext) -> BM25Retriever:
    passages = ctx.passages
    if ctx.show_progress:
        from tqdm.auto import tqdm

        passages = tqdm(passages, desc="analyse", unit="passage")
    kept = _kept_tokens(ctx)
    tokens = [kept.get(p.text) or ctx.analyzer.index_tokens(p.text) for p in passages]
    return BM25Retriever(BM25Index.build(tokens, cfg, show_progress=ctx.show_progress), ctx.analyzer)


def _kept_tokens(ctx: BuildContext) -> dict[str, list[str]]:
    """Passage text -> its tokens as the previous version of the index holds them (a bag: issue 30),
    for the passages of this build whose text the previous one has; empty without one."""
    previous = getattr(ctx.previous, "retrievers", {}).get("bm25")
    if not isinstance(previous, BM25Retriever) or not isinstance(previous.index, BM25Index):
        return {}
    rows: dict[str, int] = {}
    for i, p in enumerate(ctx.previous.passages):
        rows.setdefault(p.text, i)
    wanted = {p.text: rows[p.text] for p in ctx.passages if p.text in rows}
    bags = previous.index.doc_tokens(sorted(set(wanted.values())))
    if bags is None:
        return {}
    return {text: bags[row] for text, row in wanted.items() if bags[row]}


def _load(folder: Path, cfg: BM25Config, ctx: BuildContext) -> BM25Retriever:  # noqa: ARG001 - the index holds its settings

    index = BM25Index.load(folder)
    index.warm_up()  # compile (or load from numba's cache) now, not in the first live query
    return BM25Retriever(index, ctx.analyzer)


class _TermsRun(Protocol):
    """What ``_top1_per_term`` reads of a ``searchkit.rank.candidates.RetrieverRun`` (a layer above)."""

    @property
    def query(self) -> Any: ...  # the prepared query: this retriever's tokens

    @property
    def records(self) -> Mapping[int, float]: ...


def _top1_per_term(run: _TermsRun) -> float:
    """The best BM25 score per distinct query term (the query's IDF mass the top record holds)."""
    if not run.records:
        return 0.0
    n = len(set(run.query or ()))
    return max(run.records.values()) / max(1, n)


SPEC = register(RetrieverSpec(
    name="bm25",
    section="bm25",
    build=_build,
    load=_load,
    shapes={"top1": top1, "margin": relative_margin, "z": z_top1},
    evidence=("coverage", "idf_coverage", "idf_coverage3", "sentence_coverage"),
    config=BM25Config,
    terms=True,
    prefusion={"top1_per_term": _top1_per_term},
))
