"""TREC run files (issue 40 item 3): written with the real final scores, read back with every bad line
named as ``file:line: why``.

A run file has six whitespace-separated columns per line::

    qid Q0 docid rank score tag

Readers rank a query's documents by ``score``, highest first, and ignore the ``rank`` column; where
scores tie they disagree (trec_eval orders tied documents by document id, descending; ranx keeps the
file's order), and trec_eval holds scores in single precision, so scores that differ by less than
about 6e-8 of their size tie there. So ``run_text`` writes scores that never tie, even in single
precision: each query's scores, in our ranking order, are made strictly decreasing with the smallest
change (``strictly_decreasing``: a score that does not fall below the one before it becomes one
float32 step below that one, a relative change of about 6e-8), and printed exactly (Python's
shortest round-trip form), so every reader ranks as we do. The scores are the ranking's own (the
Searcher's final score of each hit), so score fusion over run files (ranx ``fuse``) reads real scores.

``read_trec_run`` reads a run file whoever wrote it; ``TrecRun.ranking`` orders each query's documents
as trec_eval does (score descending, ties by document id descending). An id holding whitespace cannot
be a column: the writer percent-encodes it (and ``%`` itself), as ``%XX`` per UTF-8 byte.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping
from urllib.parse import quote, unquote

import numpy as np

from searchkit.errors import DataError
from searchkit.evaluate.dataset_files import Problem, Problems, lines

__all__ = ["TrecRun", "check_trec_run", "read_trec_run", "below", "run_text", "single",
           "strictly_decreasing", "trec_id", "untrec_id"]


def single(x: float) -> float:
    """``x`` rounded to single precision, as trec_eval (and pytrec_eval, ir_measures' trec_eval
    provider) holds a run's scores: two scores that differ by less than about 6e-8 of their size tie there."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def below(x: float) -> float:
    """The largest single-precision number below ``x`` rounded to single precision (one float32
    step down: about 6e-8 of ``x``'s size)."""
    with np.errstate(over="ignore"):
        return float(np.nextafter(np.float32(x), np.float32(-np.inf)))


def strictly_decreasing(scores: Iterable[float]) -> list[float]:
    """``scores`` in ranking order, made strictly decreasing with the least change, in single
    precision as well (trec_eval reads scores as 32-bit floats): a score that does not fall below the
    one before it there (a tie, a difference finer than single precision tells, or a stage after the
    score that reordered) becomes ``below`` the one before, one float32 step down; a score that is not
    a finite number likewise (the first becomes 0.0). Every other score comes back unchanged."""
    out: list[float] = []
    for raw in scores:
        s = float(raw)
        if not math.isfinite(s) or (out and not single(s) < single(out[-1])):
            s = below(out[-1]) if out else 0.0
        out.append(s)
    return out


def trec_id(value: str) -> str:
    """An id as one TREC column: whitespace and ``%`` percent-encoded (UTF-8 bytes), anything else as is."""
    if any(c.isspace() or c == "%" for c in value):
        return "".join(quote(c, safe="") if (c.isspace() or c == "%") else c for c in value)
    return value


def untrec_id(value: str) -> str:
    """The id ``trec_id`` encoded (``%XX`` sequences decoded)."""
    return unquote(value) if "%" in value else value


def run_text(run: Mapping[str, Mapping[str, float]], tag: str) -> str:
    """A run ``{query_id: {doc_id: score}}`` as TREC six-column lines: each query's documents by score,
    highest first (ties in the mapping's order), ranks from 1, scores made strictly decreasing
    (``strictly_decreasing``) and printed exactly. Queries without documents have no line."""
    out = []
    tag_col = trec_id(tag) or "searchkit"
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: math.inf if math.isnan(float(kv[1])) else -float(kv[1]))
        scores = strictly_decreasing(s for _d, s in ranked)
        for rank, ((doc, _s), score) in enumerate(zip(ranked, scores), 1):
            out.append(f"{trec_id(qid)} Q0 {trec_id(doc)} {rank} {score!r} {tag_col}")
    return "\n".join(out) + ("\n" if out else "")


@dataclass(frozen=True)
class TrecRun:
    """A TREC run file read: ``scores`` ``{query_id: {doc_id: score}}`` (ids as written) and its tags."""

    path: Path
    scores: Mapping[str, Mapping[str, float]]
    tags: tuple[str, ...]

    @property
    def name(self) -> str:
        """The run's name: its one tag, else the file's name."""
        return self.tags[0] if len(self.tags) == 1 else self.path.name

    def ranking(self, query_id: str) -> list[tuple[str, float]]:
        """A query's ``(doc_id, score)`` as trec_eval ranks them: score descending, ties by document id
        descending."""
        docs = self.scores.get(query_id, {})
        return sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)


def check_trec_run(path: str | os.PathLike[str]) -> tuple[TrecRun, tuple[Problem, ...]]:
    """Read a TREC run file, checking every line: six columns, a positive integer rank, a finite
    score, no document twice for one query. Returns the run (the good lines) and every problem."""
    p = Path(path)
    problems = Problems()
    scores: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    tags: dict[str, None] = {}
    for lineno, text in lines(p, problems):
        cols = text.split()
        if len(cols) != 6:
            problems.add(p, lineno, f"expected 6 whitespace-separated columns (qid Q0 docid rank score tag), "
                                    f"got {len(cols)}")
            continue
        qid, _q0, doc, rank, raw, tag = cols
        try:
            ok_rank = int(rank) >= 1
        except ValueError:
            ok_rank = False
        if not ok_rank:
            problems.add(p, lineno, "the rank (column 4) is not a positive integer")
            continue
        try:
            score = float(raw)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            problems.add(p, lineno, "the score (column 5) is not a finite number")
            continue
        if (qid, doc) in first_line:
            problems.add(p, lineno, f"the document is listed twice for this query (first on line {first_line[qid, doc]})")
            continue
        first_line[qid, doc] = lineno
        scores.setdefault(qid, {})[doc] = score
        tags.setdefault(tag)
    if not scores and not problems:
        problems.add(p, None, "no ranking in the file (an empty run)")
    return TrecRun(p, scores, tuple(tags)), tuple(problems.found)


def read_trec_run(path: str | os.PathLike[str]) -> TrecRun:
    """A TREC run file, checked (``check_trec_run``).

    Raises:
        DataError: the file is missing or holds a bad line; the message names the first problem as
            ``file:line: why`` and how many more there are (``check_trec_run`` lists them all).
    """
    p = Path(path)
    if not p.exists():
        raise DataError(f"{p}: no such run file", path=p)
    run, problems = check_trec_run(p)
    if problems:
        more = len(problems) - 1
        tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise DataError(f"{problems[0]}{tail}", path=p)
    return run
