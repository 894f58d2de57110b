"""What the retrievers returned for one query, as a frozen value (``Candidates``).

Each retriever's passage-level answer becomes a record-level ``RetrieverRun``: a record's score
is its best passage's (MaxP), records ranked by it, at most ``depth`` records. Fusion, the choice
of the passage a card shows and the weak-match features (``searchkit.rank.signals``) all read
this value; none of them reaches back into a retriever or the Searcher.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class RetrieverRun:
    """One retriever's answer at record level.

    Args:
        name: the retriever.
        query: its prepared query (tokens, a vector, ...).
        records: record index -> score of its best passage, in the retriever's rank order.
        ranks: record index -> 1-based rank.
        passage_ranks: passage row -> 1-based rank among the passages the retriever returned.
    """

    name: str
    query: Any
    records: Mapping[int, float]
    ranks: Mapping[int, int]
    passage_ranks: Mapping[int, int]

    def __post_init__(self) -> None:
        for name in ("records", "ranks", "passage_ranks"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def scores(self) -> list[float]:
        """Record scores, best first."""
        return sorted(self.records.values(), reverse=True)


@dataclass(frozen=True)
class Candidates:
    """Every retriever's run for one query, the fused ranking, and the content evidence.

    ``record_passages`` maps a record to the passages of it any retriever returned (the card
    shows the best of them); ``fused`` is ``(record index, fused score)`` best first;
    ``evidence`` maps a name (``bm25_idf_coverage``, ``speaker_gap``, ...) to how much of the
    query the top fused records hold (H11's content evidence); ``stages`` maps each ranking stage
    that ran (``fuse``, ``rerank``, ``evidence``, ``speaker``, ``date``; ``searchkit.rank.stages``)
    to the ranking it left, in the order they ran.
    """

    runs: Mapping[str, RetrieverRun] = field(default_factory=dict)
    record_passages: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    fused: tuple[tuple[int, float], ...] = ()
    evidence: Mapping[str, float] = field(default_factory=dict)
    stages: Mapping[str, tuple[tuple[int, float], ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", _frozen(self.runs))
        object.__setattr__(self, "record_passages", _frozen(self.record_passages))
        object.__setattr__(self, "fused", tuple(self.fused))
        object.__setattr__(self, "evidence", _frozen(self.evidence))
        object.__setattr__(self, "stages", _frozen(self.stages))

    def with_fusion(self, fused: Sequence[tuple[int, float]], evidence: Mapping[str, float]) -> "Candidates":
        return replace(self, fused=tuple(fused), evidence=evidence)

    def ranked_by(self, stage: str, fused: Sequence[tuple[int, float]],
                  evidence: Mapping[str, float] | None = None) -> "Candidates":
        """The candidates after ranking stage ``stage``: its ranking ``fused`` (kept in ``stages``
        too) and, when given, the evidence it leaves."""
        ranking = tuple(fused)
        return replace(self, fused=ranking, evidence=self.evidence if evidence is None else evidence,
                       stages={**self.stages, stage: ranking})

    def stage_scores(self, records: Sequence[int]) -> list[dict[str, float]]:
        """For each of ``records``: stage name -> the record's score in the ranking that stage left
        (a stage whose ranking does not hold the record is absent)."""
        tables = {name: dict(ranking) for name, ranking in self.stages.items()}
        return [{name: float(t[ri]) for name, t in tables.items() if ri in t} for ri in records]

    def best_passage(self, record: int, rrf_k: float) -> int | None:
        """The record's passage with the best passage-level RRF over the retrievers (ties: the
        lower row), or None when no retriever returned a passage of it."""
        best, best_score = None, -1.0
        for pi in self.record_passages.get(record, ()):
            s = sum(1.0 / (rrf_k + run.passage_ranks[pi]) for run in self.runs.values() if pi in run.passage_ranks)
            if s > best_score or (s == best_score and best is not None and pi < best):
                best, best_score = pi, s
        return best


def collect(
    answers: Mapping[str, tuple[Any, np.ndarray, np.ndarray, int]], passage_record: np.ndarray
) -> Candidates:
    """``Candidates`` from each retriever's ``(query, passage rows, scores, record depth)``."""
    runs: dict[str, RetrieverRun] = {}
    record_passages: dict[int, list[int]] = {}
    for name, (query, rows, scores, depth) in answers.items():
        pr: dict[int, int] = {}
        recs: dict[int, float] = {}
        for rank, (pi, s) in enumerate(zip(rows.tolist(), scores.tolist()), start=1):
            pr[pi] = rank
            ri = int(passage_record[pi])
            if ri not in recs:
                if len(recs) >= depth:
                    continue
                recs[ri] = float(s)
            seen = record_passages.setdefault(ri, [])
            if pi not in seen:
                seen.append(pi)
        runs[name] = RetrieverRun(name, query, recs, {ri: i for i, ri in enumerate(recs, start=1)}, pr)
    return Candidates(runs, {ri: tuple(p) for ri, p in record_passages.items()})
