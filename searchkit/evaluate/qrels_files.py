"""A dataset's relevance judgements: ``qrels/<split>.<ext>``, BEIR or TREC, found and read with every
problem collected (issue 40 item 2).

Where: ``DIR/qrels/<split>.tsv``, ``.txt`` or ``.qrels`` (one file per split; any split name). What
the file holds decides its format, not its name:

- **BEIR**: three tab-separated columns ``query-id<TAB>corpus-id<TAB>score``, with or without the
  header line ``query-id<TAB>corpus-id<TAB>score``;
- **TREC qrels**: four whitespace-separated columns ``qid iteration docid grade``, no header (the
  iteration column, usually ``0``, is ignored as trec_eval ignores it).

The first line decides (the BEIR header, three tab-separated columns, or four columns); every later
line must follow it. A score (grade) is a non-negative integer: 0 is judged not relevant, any higher
value relevant, graded (nDCG's gain). Every line is checked: its columns, its score, that the query
is in ``queries.jsonl`` and the document in ``corpus.jsonl``, that no query-document pair repeats.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from searchkit.evaluate.dataset_files import Problems, lines

__all__ = ["QRELS_HEADER", "QRELS_SUFFIXES", "Judgements", "qrels_entries", "read_qrels"]

QRELS_HEADER: tuple[str, str, str] = ("query-id", "corpus-id", "score")
QRELS_SUFFIXES: tuple[str, ...] = (".tsv", ".txt", ".qrels")
"""The names a split's judgements may have: ``qrels/<split>.tsv`` (BEIR's), ``.txt`` or ``.qrels``."""

_HEADER_TEXT = "'query-id<TAB>corpus-id<TAB>score'"
_COLUMNS = ("3 tab-separated columns (query-id, corpus-id, score; BEIR) or 4 whitespace-separated columns "
            "(qid, iteration, docid, grade; TREC qrels)")


def qrels_entries(root: Path) -> Iterator[tuple[str, Path]]:
    """``(split, path)`` for every entry of ``root/qrels`` named ``<split>.tsv|.txt|.qrels`` (hidden
    names left out), regular files or not, sorted by name."""
    folder = root / "qrels"
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        p = folder / name
        if not name.startswith(".") and p.suffix in QRELS_SUFFIXES and p.stem:
            yield p.stem, p


@dataclass(frozen=True)
class Judgements:
    """One qrels file read: ``rows`` ``{query_id: {doc_id: (score, line)}}``, its ``format``
    (``beir``, ``beir+header`` or ``trec``), and ``refused`` ``{query_id: ((score, line), ...)}``: the
    rows of a known query refused for their document (unknown, or judged twice), so that the query's
    split and answerability are still read from them and one bad row is one problem, not two."""

    path: Path
    format: str
    rows: Mapping[str, Mapping[str, tuple[int, int]]]
    refused: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def judged(self, query_id: str) -> bool:
        """Whether the file has a row for the query (a refused one included)."""
        return query_id in self.rows or query_id in self.refused

    def positive_lines(self, query_id: str) -> list[int]:
        """The lines of the query's rows with a score above 0 (refused ones included)."""
        rows = list(self.rows.get(query_id, {}).values()) + list(self.refused.get(query_id, ()))
        return [line for score, line in rows if score > 0]


def _sniff(first: str) -> tuple[str | None, bool]:
    """The format the first line announces (None: neither), and whether it is the BEIR header."""
    cols = first.split("\t")
    if tuple(c.strip() for c in cols) == QRELS_HEADER:
        return "beir", True
    if len(cols) == 3:
        return "beir", False
    if len(first.split()) == 4:
        return "trec", False
    return None, False


def read_qrels(path: Path, query_ids: set[str] | None, doc_ids: set[str] | None, problems: Problems) -> Judgements:
    """The judgements of one qrels file; every bad line is a problem of ``problems``. ``query_ids`` /
    ``doc_ids`` None: that file could not be read, so ids are not checked against it (one problem,
    not one per row)."""
    rows: dict[str, dict[str, tuple[int, int]]] = {}
    refused: dict[str, list[tuple[int, int]]] = {}
    fmt: str | None = None
    header = False
    seen_any = False
    for lineno, text in lines(path, problems):
        first = not seen_any
        seen_any = True
        if first:
            fmt, header = _sniff(text)
            if header:
                continue
            if fmt is None:
                problems.add(path, lineno, f"neither the BEIR header {_HEADER_TEXT} nor a judgement of {_COLUMNS}")
                fmt = "beir" if path.suffix == ".tsv" else "trec"
                continue
        if fmt == "beir":
            cols = [c.strip() for c in text.split("\t")]
            if len(cols) != 3:
                problems.add(path, lineno, f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(cols)}")
                continue
            qid, did, raw = cols
        else:
            cols = text.split()
            if len(cols) != 4:
                problems.add(path, lineno, f"expected 4 whitespace-separated columns (qid, iteration, docid, grade; "
                                           f"TREC qrels), got {len(cols)}")
                continue
            qid, _iteration, did, raw = cols
        try:
            score = int(raw)
        except ValueError:
            hint = f"; a header must be exactly {_HEADER_TEXT}" if first else ""
            problems.add(path, lineno, f"the score is not an integer (a non-negative integer grade){hint}")
            continue
        if score < 0:
            problems.add(path, lineno, f"score {score} is negative; a grade is a non-negative integer "
                                       "(0: judged not relevant)")
            continue
        if query_ids is not None and qid not in query_ids:
            problems.add(path, lineno, "unknown query id (not in queries.jsonl)")
            if doc_ids is not None and did not in doc_ids:
                problems.add(path, lineno, "unknown corpus id (not in corpus.jsonl)")
            continue
        judged = rows.get(qid, {})
        if doc_ids is not None and did not in doc_ids:
            problems.add(path, lineno, "unknown corpus id (not in corpus.jsonl)")
        elif did in judged:
            problems.add(path, lineno, f"duplicate row for one query and document (first on line {judged[did][1]})")
        else:
            rows.setdefault(qid, {})[did] = (score, lineno)
            continue
        refused.setdefault(qid, []).append((score, lineno))
    if not seen_any and not any(p.path == path for p in problems.found):
        problems.add(path, None, f"empty file; write the judgements (the BEIR header {_HEADER_TEXT} at least)")
    name = "trec" if fmt == "trec" else ("beir+header" if header else "beir")
    return Judgements(path, name, rows, {q: tuple(v) for q, v in refused.items()})
