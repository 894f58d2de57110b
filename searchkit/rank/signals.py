"""Signals above the cards: weak match (H11) and missing IDs (H12).

Weak match reads the *shape* of the score lists, not one absolute score: how far the top record
stands out from the rest (margins, z-score), how close the best passage is in embedding space,
and how much of the query's vocabulary the top record holds. The features are combined by a
logistic model whose coefficients, intercept and threshold live in ``WeakMatchConfig`` (fitted by
the harness with scikit-learn on dev labels): ``p = sigmoid(intercept + coef · x)`` is the
probability that the space has an answer; the warning fires when ``p < threshold``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

from searchkit.errors import InputError
from searchkit import registries, retrievers
from searchkit.analyze import canonical_identifier, find_identifiers, identifier_forms
from searchkit.config import register_feature_readers
from searchkit.rank.candidates import Candidates
from searchkit.records import Hit, Notice
from searchkit.retrievers import z_top1

if TYPE_CHECKING:  # pragma: no cover
    from searchkit.config import WeakMatchConfig


class _Features(Mapping[str, Callable[[Candidates], float]]):
    """The weak-match features, read live from the retriever registry: for each registered
    retriever ``R``, ``R_<shape>`` for each of its score shapes (``dense_top1``, ``bm25_margin``, ...)
    and ``R_<item>`` for each item of its content evidence (``bm25_idf_coverage``, ...); then
    ``fused_z`` (over the fused list), the conversation evidence (``speaker_query``,
    ``speaker_named``, ``speaker_gap``: ``searchkit.rank.conversation``), ``term_coverage``
    (the lexical retriever's coverage, ``bm25_coverage``) and ``rerank_top1`` (the reranking
    stage's best score over the head, 0 where it did not run: ``searchkit.rank.rerank``). Each
    time the table is built it declares which retriever each feature reads to the config
    (``searchkit.config.register_feature_readers``: the config's checks of a weak-match model ask it)."""

    _key: tuple = ()
    _cached: dict = {}

    def _table(self) -> dict[str, tuple[Callable[[Candidates], float], str | None]]:
        key = tuple((n, id(retrievers.get(n))) for n in retrievers.names())
        if key == self._key:
            return self._cached
        table: dict[str, tuple[Callable[[Candidates], float], str | None]] = {}
        for name in retrievers.names():
            spec = retrievers.get(name)
            for shape, fn in spec.shapes.items():
                table[f"{name}_{shape}"] = (_shape_feature(name, fn), name)
            for item in spec.evidence:
                table[f"{name}_{item}"] = (_evidence_feature(f"{name}_{item}"), name)
        table["fused_z"] = (lambda c: z_top1([s for _, s in c.fused]), None)
        for item in ("speaker_query", "speaker_named", "speaker_other", "speaker_gap"):
            table[item] = (_evidence_feature(item), None)
        # the coverage of the first retriever whose query is the query's terms (BM25 in the shipped tree)
        lexical = next((n for n in retrievers.names()
                        if retrievers.get(n).terms and "coverage" in retrievers.get(n).evidence), None)
        table["term_coverage"] = ((_evidence_feature(f"{lexical}_coverage"), lexical) if lexical is not None
                                  else (_evidence_feature("term_coverage"), None))
        table["rerank_top1"] = (_evidence_feature("rerank_top1"), None)  # the reranking stage's best score
        register_feature_readers({f: reads for f, (_, reads) in table.items()})  # the config's checks ask it
        self._key, self._cached = key, table
        return table

    def __getitem__(self, key: str) -> Callable[[Candidates], float]:
        return self._table()[key][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def reads(self, feature: str) -> str | None:
        """The retriever a feature reads (None: the fused list); KeyError for an unknown feature."""
        return self._table()[feature][1]


def _shape_feature(name: str, fn: Callable[[Sequence[float]], float]) -> Callable[[Candidates], float]:
    def feature(c: Candidates) -> float:
        run = c.runs.get(name)
        return float(fn(run.scores())) if run is not None else 0.0

    return feature


def _evidence_feature(name: str) -> Callable[[Candidates], float]:
    return lambda c: float(c.evidence.get(name, 0.0))


FEATURES = _Features()
"""Score-shape features by name; each maps ``Candidates`` to one float (see ``_Features``)."""
registries.provide("weak-match feature", FEATURES)  # read live by the config (issue 42 item 3)


def compute_features(cands: Candidates) -> dict[str, float]:
    """Every registered feature for one search (``cands`` after fusion); a retriever that did not
    run gives 0 for its features."""
    return {name: float(fn(cands)) for name, (fn, _) in FEATURES._table().items()}


def answer_probability(features: Mapping[str, float], cfg: "WeakMatchConfig") -> float:
    """``sigmoid(intercept + sum(coef_i * feature_i))`` over the configured features."""
    unknown = [f for f in cfg.features if f not in FEATURES]
    if unknown:
        raise InputError(f"unknown weak-match feature {unknown[0]!r}; valid: {sorted(FEATURES)}")
    z = cfg.intercept + sum(c * features[f] for f, c in zip(cfg.features, cfg.coef))
    return 1.0 / (1.0 + math.exp(-max(min(z, 500.0), -500.0)))


def weak_match_warning(features: Mapping[str, float], cfg: "WeakMatchConfig") -> Notice | None:
    """H11: a ``weak_match`` warning when no card stands out (P(answer) < threshold)."""
    p = answer_probability(features, cfg)
    if p >= cfg.threshold:
        return None
    detail = {"probability": round(p, 4), "threshold": cfg.threshold}
    detail.update({f: round(features[f], 4) for f in cfg.features})
    return Notice(code="weak_match", message="Weak match: no card stands out from the rest.", detail=detail)


def mentions(text: str, ident: str) -> bool:
    """Whether ``text`` mentions identifier ``ident`` (H12).

    Identifiers are compared in canonical form, never as substrings: ``ATL-1650`` does not
    mention ``ATL-16``, ``#412`` not ``#41``, ``v2.3.1`` not ``v2.3``; ``atl-1656``, ``ATL1656``,
    ``ＡＴＬ－１６５６`` all mention ``ATL-1656``, ``№412`` mentions ``#412``.
    """
    return canonical_identifier(ident) in identifier_forms(text)


def missing_ids(query: str, hits: Sequence[Hit]) -> list[str]:
    """H12: identifiers in the query that no returned card mentions (title or full text), as the
    query has them (``PR 89``, ``ЗАК-1655``; ``PR 88/89`` is checked as PR-88 and PR-89)."""
    return [m.typed for m in _missing(query, hits)]


def _missing(query: str, hits: Sequence[Hit]) -> list:
    wanted = find_identifiers(query)
    if not wanted:
        return []
    found: set[str] = set()
    for h in hits:
        found |= identifier_forms(h.record.title)
        found |= identifier_forms(h.record.text)
    return [m for m in wanted if not found.intersection(m.aliases)]


def missing_ids_warning(query: str, hits: Sequence[Hit]) -> Notice | None:
    """H12: a ``missing_ids`` notice naming each identifier of the query no card mentions, quoted
    as typed (``detail["ids"]``; their canonical forms in ``detail["canonical"]``)."""
    gone = _missing(query, hits)
    if not gone:
        return None
    ids = [m.typed for m in gone]
    return Notice(code="missing_ids", message="No card mentions " + ", ".join(ids) + ".",
                  detail={"ids": ids, "canonical": [m.canonical for m in gone]})
