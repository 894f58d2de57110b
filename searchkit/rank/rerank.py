"""A reranking stage behind a protocol: ``rerank(query, passages) -> scores`` (shipped: on for
Japanese queries, ``rerank.languages``; evals/README.md says how that was chosen).

After fusion, the best ``rerank.depth`` records are scored again by a reranker looking at their
best passages, and reordered by ``(1 - w) * fused + w * reranked`` (both min-max normalised over
those records; ``w = rerank.weight``); the records below keep their order. A model-based
cross-encoder plugs in as another entry of ``RERANKERS`` (``http``: one served over HTTP,
``searchkit.rank.http_rerank``); the best score of the head is the weak-match feature
``rerank_top1``. ``Searcher.embed_rerank_sentences``
embeds the sentences ahead of the queries (``searchkit index`` runs it).

``sentence_maxsim`` (the offline one, from what ships): every sentence of a passage is embedded
with the Searcher's own embedder (through the embedding cache, so a sentence is embedded once) and
a passage scores the best cosine of one of its sentences with the query: a question answered by one
sentence of a long passage is not diluted by the rest of it. A passage in a language outside
``rerank.languages`` (which a reranked query's head may hold: the dense retriever is multilingual)
is read whole (``reads``): its vector is the dense retriever's, in the cache since the build, so
no query waits for an embedding of what ``searchkit index`` did not embed ahead.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from searchkit import registries
from searchkit.analyze import detect_language
from searchkit.rank.http_rerank import RERANK_APIS, http_reranker

if TYPE_CHECKING:
    from searchkit.config import SearchConfig
    from searchkit.ports import EmbedderPort, EmbeddingCachePort

_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
MAX_SENTENCES = 40
"""Sentences of one passage a reranker reads at most."""


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One score per passage (higher is better)."""


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (sentence ends of ru/en/ja, and line breaks), non-empty."""
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()][:MAX_SENTENCES]


def passage_sentences(text: str) -> list[str]:
    """What a reranker reads of a passage: its sentences, or the whole text when it has none."""
    return sentences(text) or [text]


def reads(text: str, languages: Sequence[str] = (), language: Callable[[str], str] = detect_language) -> list[str]:
    """What ``sentence_maxsim`` reads of a passage: its sentences (``passage_sentences``) when its
    language (``language``: ``analyze.detect_language`` or a memo of it) is one of ``languages`` or
    ``languages`` is empty, else its whole text (the text the dense retriever embeds: the build
    cached its vector)."""
    if not languages or language(text) in languages:
        return passage_sentences(text)
    return [text]


class SentenceMaxSim:
    """Best cosine between the query and one sentence of the passage (cached embeddings); a
    passage outside ``languages`` (empty: none is) scores the cosine of its whole text (``reads``)."""

    name = "sentence_maxsim"

    def __init__(self, embedder: EmbedderPort, cache: EmbeddingCachePort, languages: Sequence[str] = (),
                 language: Callable[[str], str] = detect_language) -> None:
        self.embedder = embedder
        self.cache = cache
        self.languages = tuple(languages)
        self.language = language

    def rerank(self, query: str, passages: Sequence[str]) -> np.ndarray:
        split = [reads(p, self.languages, self.language) for p in passages]
        flat = sorted({s for sents in split for s in sents})
        if not flat:
            return np.zeros(len(passages))
        qv = self.cache.embed(self.embedder, [query], "query", show_progress=False)[0]
        vecs = self.cache.embed(self.embedder, flat, "passage", show_progress=False)
        row = {s: i for i, s in enumerate(flat)}
        sims = vecs @ qv
        return np.array([max(float(sims[row[s]]) for s in sents) for sents in split])


class _Configured(Protocol):
    """A Searcher (a layer above) as the ``http`` factory reads it: its config."""

    @property
    def config(self) -> SearchConfig: ...


def _http(searcher: _Configured) -> Reranker:
    return http_reranker(searcher.config.rerank)


RERANKERS: dict[str, Callable[[Any], Reranker]] = {
    "sentence_maxsim": lambda searcher: SentenceMaxSim(searcher.embedder, searcher.cache,
                                                       searcher.config.rerank.languages, searcher.language_of),
    "http": _http,
}
"""Rerankers by name (``rerank.method``); each factory takes the Searcher (its embedder and cache,
its config's ``rerank`` section). ``http``: a cross-encoder over HTTP (``searchkit.rank.http_rerank``)."""
registries.provide("reranker", RERANKERS)  # the config reads the names there (issue 42 item 3)
registries.provide("rerank API", RERANK_APIS)  # http_rerank's dialects, handed on for it (issue 42 item 3)

TOP_FEATURE = "rerank_top1"
"""The weak-match feature holding the reranker's best score over the head it scored (0 where the
stage did not run): a cross-encoder's score of the best passage says whether anything answers."""


def stage_evidence(scores: Sequence[float]) -> dict[str, float]:
    """What the stage adds to a search's evidence: ``rerank_top1``, the best of ``scores``."""
    return {TOP_FEATURE: float(max(scores))} if len(scores) else {}


def reorder(ranked: list[tuple[int, float]], scores: Mapping[int, float], weight: float) -> list[tuple[int, float]]:
    """The reranked head of ``ranked`` (the records ``scores`` covers) followed by the rest: head
    scores ``(1 - weight) * minmax(fused) + weight * minmax(reranked)``."""
    head = [(ri, s) for ri, s in ranked if ri in scores]
    if not head:
        return ranked
    tail = [(ri, s) for ri, s in ranked if ri not in scores]

    def norm(values: list[float]) -> list[float]:
        lo, hi = min(values), max(values)
        return [(v - lo) / max(hi - lo, 1e-9) for v in values]

    fused = norm([s for _, s in head])
    rr = norm([scores[ri] for ri, _ in head])
    combined = [(ri, (1 - weight) * f + weight * r) for (ri, _), f, r in zip(head, fused, rr)]
    combined.sort(key=lambda t: (-t[1], t[0]))
    # keep the head above the tail whatever the new scale
    top = (max(s for _, s in tail) + 1.0) if tail else 0.0
    return [(ri, top + s) for ri, s in combined] + tail
