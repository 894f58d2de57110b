"""Labeled datasets on disk (SPEC E3; DESIGN.md "Dataset format"): load, validate, split.

Layout (BEIR's, extended: a plain BEIR folder is one)::

    DIR/corpus.jsonl        {"_id", "title", "text", kind?, space?, date?, ref?, owner?, visibility?, ...}
    DIR/queries.jsonl       {"_id", "text", lang?, answerable?, kinds?, since?, until?, spaces?,
                             caller?, category?, split?, id_in_corpus?}
    DIR/qrels/<split>.tsv   the judgements of one split (any name: train, dev, test, ...): BEIR's
                            ``query-id<TAB>corpus-id<TAB>score`` (header line optional) or TREC qrels
                            ``qid 0 docid grade``; ``<split>.txt`` and ``<split>.qrels`` are read too
                            (``searchkit.evaluate.qrels_files``); a grade is a non-negative integer

What a query's line leaves out is inferred, and the loaded ``Dataset`` says so in its ``notes``:
a missing ``lang`` is detected from the text (``analyze.detect_language``: ru, ja or en); a missing
``answerable`` is read from the judgements: a query judged in its split with no positive judgement
there is unanswerable, one with a positive judgement answerable.

Which queries belong to a split (one rule, applied in order):

1. a query with rows in ``qrels/<split>`` belongs to that split;
2. else a query with a ``split`` field belongs to the split it names;
3. else an unanswerable query (``answerable: false``) with no rows in any qrels file goes to ``dev``
   or ``test`` by a stable hash of its id (first byte of SHA-256 even -> dev, odd -> test);
4. else (a query without rows anywhere, as in public BEIR sets whose queries file lists every split)
   it belongs to no split and is dropped.

Contradictions are errors: rows in two split files, rows in one split while its ``split`` field names
another, a query marked ``answerable: true`` whose split holds no positive row for it, one marked
``answerable: false`` with a positive row.

``check_dataset`` reads a folder whole and returns every problem, each as ``file:line: why``
(``searchkit datasets validate``); ``load_dataset`` raises the first (and says how many more).
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

from searchkit.analyze.scripts import detect_language
from searchkit.errors import DataError
from searchkit.evaluate.dataset_files import QUERY_KINDS, Problem, Problems, QueryLine, read_corpus, read_queries
from searchkit.evaluate.dataset_paths import (
    DATASETS_ENV,
    SHARED_ENV,
    
    _r,
    available_datasets,
    datasets_dir,
    resolve_dataset,
    shared_data_dir,
)
from searchkit.evaluate.qrels_files import QRELS_HEADER, QRELS_SUFFIXES, Judgements, qrels_entries, read_qrels
from searchkit.records import Record

__all__ = [
    "DATASETS_ENV",
    "SHARED_ENV",
    "Dataset",
    "DatasetCheck",
    
    "Problem",
    "Query",
    "QRELS_HEADER",
    "QUERY_KINDS",
    "available_datasets",
    "available_splits",
    "check_dataset",
    "datasets_dir",
    "hash_split",
    "load_corpus",
    "load_dataset",
    "resolve_dataset",
    "shared_data_dir",
]

logger = logging.getLogger(__name__)

HASH_SPLITS: tuple[str, str] = ("dev", "test")

_LAYOUT = (
    "expected layout: DIR/corpus.jsonl, DIR/queries.jsonl, DIR/qrels/<split>.tsv "
    "(BEIR format, header optional, or TREC qrels; see DESIGN.md 'Dataset format')"
)


@dataclass(frozen=True)
class Query:
    """One labeled query.

    Args:
        id: the query's ``_id``.
        text: what is searched.
        lang: language code (``ru``/``ja``/``en``...); ``load_dataset`` detects it where the file does
            not say (None only on a ``Query`` built by hand).
        answerable: False when the corpus holds no answer (the right behaviour is a weak-match warning);
            where the file does not say, ``load_dataset`` infers it from the judgements.
        kinds: only these record kinds are searched (None: all).
        since, until: ISO dates, ``until`` exclusive (None: open).
        spaces: ``"all"``, a tuple of space slugs, or None.
        caller: user id of who searches (privacy, H15), or None.
        category: free label for breakdowns; defaults to ``answerable`` / ``unanswerable``.
        id_in_corpus: on a query that names an identifier (ATL-1655, #412, PR 88): True when the
            corpus mentions every identifier it names, False when it mentions one of them nowhere
            (the label the missing-ID warning, H12, is measured against); None when not labelled.
    """

    id: str
    text: str
    lang: str | None = None
    answerable: bool = True
    kinds: tuple[str, ...] | None = None
    since: str | None = None
    until: str | None = None
    spaces: str | tuple[str, ...] | None = None
    caller: str | None = None
    category: str = "answerable"
    id_in_corpus: bool | None = None


@dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset folder loaded for one split.

    ``records`` holds the whole corpus; ``queries`` only the queries of ``split``; ``qrels`` maps a
    query id to {corpus id: graded score} from the split's judgements file (``qrels/<split>.tsv``).
    """

    name: str
    path: Path
    split: str
    records: tuple[Record, ...]
    queries: tuple[Query, ...]
    qrels: Mapping[str, Mapping[str, int]]
    notes: tuple[str, ...] = ()
    """What was inferred while loading (a ``lang`` detected, ``answerable`` read from the judgements),
    one sentence each; the command line shows them."""

    def answerable_queries(self) -> tuple[Query, ...]:
        """The queries with ``answerable`` true (those ranking metrics are computed over)."""
        return tuple(q for q in self.queries if q.answerable)

    def unanswerable_queries(self) -> tuple[Query, ...]:
        """The queries the corpus cannot answer (no-answer metrics)."""
        return tuple(q for q in self.queries if not q.answerable)

    def to_ranx_qrels(self) -> dict[str, dict[str, int]]:
        """Plain ``{query_id: {doc_id: score}}`` of the answerable queries, for ``ranx.Qrels(...)``.

        ranx is slow to import, so the caller builds the ``Qrels`` object.
        """
        return {q.id: dict(self.qrels.get(q.id, {})) for q in self.answerable_queries()}

    def stats(self) -> dict[str, Any]:
        """Counts: records (by kind, by lang), queries (by lang, by category, answerable or not)."""

        def breakdown(key: Callable[[Query], str]) -> dict[str, dict[str, int]]:
            out: dict[str, dict[str, int]] = {}
            for q in self.queries:
                row = out.setdefault(key(q), {"queries": 0, "answerable": 0, "unanswerable": 0})
                row["queries"] += 1
                row["answerable" if q.answerable else "unanswerable"] += 1
            return dict(sorted(out.items()))

        answerable = sum(q.answerable for q in self.queries)
        return {
            "name": self.name,
            "split": self.split,
            "records": len(self.records),
            "records_by_kind": dict(sorted(Counter(r.kind for r in self.records).items())),
            "records_by_lang": dict(
                sorted(Counter(str(r.fields.get("lang") or "und") for r in self.records).items())
            ),
            "queries": len(self.queries),
            "answerable": answerable,
            "unanswerable": len(self.queries) - answerable,
            "qrels_rows": sum(len(v) for v in self.qrels.values()),
            "by_lang": breakdown(lambda q: q.lang or "und"),
            "by_category": breakdown(lambda q: q.category),
        }


# ---------------------------------------------------------------------------------------------
# loading


def available_splits(path: str | os.PathLike) -> tuple[str, ...]:
    """Names of the splits a dataset folder has (a regular file ``qrels/<split>.tsv``, ``.txt`` or
    ``.qrels``), sorted."""
    return tuple(sorted({split for split, p in qrels_entries(Path(path)) if p.is_file()}))


def load_dataset(path: str | os.PathLike, split: str = "dev") -> Dataset:
    """Load and validate the dataset folder ``path`` for ``split``.

    Every file is read and checked (split membership depends on all the judgements); a query's
    missing ``lang`` is detected and a missing ``answerable`` inferred, each said in ``notes``.

    Raises:
        DataError: a missing file (naming it and the expected layout) or the first bad line
            (naming the file and the line number, and how many more problems there are).
    """
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"dataset folder {root} does not exist or is not a folder; {_LAYOUT}", reason="dataset")
    corpus_path = _required(root, "corpus.jsonl")
    queries_path = _required(root, "queries.jsonl")
    splits = available_splits(root)
    if not splits:
        raise DataError(f"dataset folder {root} has no qrels/<split>.tsv file; {_LAYOUT}", reason="dataset")
    if split not in splits:
        for suffix in QRELS_SUFFIXES:
            if (root / "qrels" / f"{split}{suffix}").exists():
                _required(root / "qrels", f"{split}{suffix}")  # there, but a FIFO or a folder: say so
        raise DataError(
            f"{root / 'qrels' / (split + '.tsv')} not found (nor .txt, .qrels): split {_r(split)} is not in this "
            f"dataset; available splits: {', '.join(splits)}", reason="dataset"
        )
    problems = Problems()
    content = _read(corpus_path, queries_path, _split_files(root, problems, regular_only=True), problems)
    if problems:
        raise DataError(_first(problems, root), reason="dataset")
    ds = _select(content, root, split)
    for note in ds.notes:
        logger.info("%s (%s): %s", ds.name, split, note)
    return ds


def load_corpus(path: str | os.PathLike) -> tuple[Record, ...]:
    """The records of a dataset folder's ``corpus.jsonl`` alone (what an index needs): no queries
    or qrels are read, so a corpus-only folder works.

    Raises:
        DataError: the folder or its corpus is missing, or a corpus line is bad (file and line named).
    """
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"dataset folder {root} does not exist or is not a folder; {_LAYOUT}", reason="dataset")
    problems = Problems()
    records, _ids = read_corpus(_required(root, "corpus.jsonl"), problems)
    if problems:
        raise DataError(_first(problems, root), reason="dataset")
    return records


def _required(root: Path, name: str) -> Path:
    p = root / name
    if not p.is_file():
        if p.exists():
            raise DataError(f"{p} is not a regular file; only regular files are read ({_LAYOUT})", reason="dataset")
        raise DataError(f"dataset folder {root} has no {name}; {_LAYOUT}", reason="dataset")
    return p


def _first(problems: Problems, root: Path) -> str:
    """The first problem, as ``load_dataset`` has always named it, and how many more there are."""
    more = len(problems) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''}: `searchkit datasets validate {root}` lists them all)"
    return problems.found[0].message() + (tail if more else "")


def _split_files(root: Path, problems: Problems, *, regular_only: bool) -> dict[str, Path]:
    """``{split: judgements file}``; a second file for one split is a problem."""
    files: dict[str, Path] = {}
    for split, p in qrels_entries(root):
        if regular_only and not p.is_file():
            continue
        if split in files:
            problems.add(p, None, f"a second judgements file for split {_r(split)} beside {files[split].name}; keep one")
            continue
        files[split] = p
    return files


@dataclass(frozen=True)
class _Content:
    """A dataset folder read whole: the corpus, every query line, every split's judgements, and
    each query's split (with ``answerable`` inferred where the line leaves it out)."""

    records: tuple[Record, ...]
    queries: list[QueryLine]
    judgements: Mapping[str, Judgements]
    membership: Mapping[str, tuple[str, Query, bool]]


def _read(corpus_path: Path, queries_path: Path, split_files: Mapping[str, Path],
          problems: Problems) -> _Content:
    records, doc_ids = read_corpus(corpus_path, problems) if corpus_path.exists() else ((), None)
    lines, query_ids = read_queries(queries_path, problems, Query) if queries_path.exists() else ([], None)
    unreadable = {p.path for p in problems.found if p.line is None}
    judgements = {
        s: read_qrels(p, None if query_ids is None or queries_path in unreadable else query_ids,
                      None if doc_ids is None or corpus_path in unreadable else doc_ids, problems)
        for s, p in sorted(split_files.items())
    }
    return _Content(records, lines, judgements, _assign_splits(lines, judgements, queries_path, problems))


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _select(content: _Content, root: Path, split: str) -> Dataset:
    """The dataset of one split: its queries (a missing ``lang`` detected) and judgements, and notes."""
    kept: list[Query] = []
    detected: Counter[str] = Counter()
    inferred = 0
    for line in content.queries:
        got = content.membership.get(line.query.id)
        if got is None or got[0] != split:
            continue
        _split, q, was_inferred = got
        inferred += was_inferred
        if q.lang is None:
            lang = detect_language(q.text)
            q = replace(q, lang=lang)
            detected[lang] += 1
        kept.append(q)
    judgements = content.judgements[split]
    notes = []
    if detected:
        langs = ", ".join(f"{lang} {n}" for lang, n in sorted(detected.items()))
        notes.append(f"{_plural(sum(detected.values()), 'query has', 'queries have')} no 'lang': "
                     f"detected from the text ({langs})")
    if inferred:
        notes.append(f"{_plural(inferred, 'query has', 'queries have')} no 'answerable' and no positive judgement "
                     f"in qrels/{judgements.path.name}: counted as unanswerable")
    qrels = MappingProxyType({
        qid: MappingProxyType({doc: score for doc, (score, _line) in rows.items()})
        for qid, rows in judgements.rows.items()
    })
    return Dataset(name=root.resolve().name, path=root, split=split, records=content.records,
                   queries=tuple(kept), qrels=qrels, notes=tuple(notes))


def hash_split(query_id: str) -> str:
    """The split of an unanswerable query with neither ``split`` field nor qrels rows: SHA-256 parity."""
    return HASH_SPLITS[hashlib.sha256(query_id.encode("utf-8")).digest()[0] % 2]


def _first_line(j: Judgements, query_id: str) -> int:
    rows = list(j.rows.get(query_id, {}).values()) + list(j.refused.get(query_id, ()))
    return min(line for _score, line in rows)


def _assign_splits(
    lines: list[QueryLine], judgements: Mapping[str, Judgements], queries_path: Path, problems: Problems,
) -> dict[str, tuple[str, Query, bool]]:
    """``{query_id: (split, query, answerable inferred false)}`` by the rules of the module docstring."""
    membership: dict[str, tuple[str, Query, bool]] = {}
    for line in lines:
        q, lineno = line.query, line.line
        where = [name for name, j in judgements.items() if j.judged(q.id)]
        if len(where) > 1:
            files = " and ".join(f"qrels/{judgements[n].path.name} line {_first_line(judgements[n], q.id)}"
                                 for n in where)
            problems.add(queries_path, lineno, f"the query has rows in {files}; a query belongs to one split")
            continue
        own = line.split
        if where:
            split = where[0]
            if own is not None and own != split:
                problems.add(queries_path, lineno, "the query's 'split' names another split but has rows in "
                                                   f"qrels/{judgements[split].path.name}")
                continue
        elif own is not None:
            split = own
        elif line.answerable_given and not q.answerable:
            split = hash_split(q.id)
        else:
            continue  # judged nowhere: in no split (public BEIR query files list every split's queries)
        j = judgements.get(split)
        positive = j.positive_lines(q.id) if j is not None else []
        inferred = False
        if not line.answerable_given:
            if j is not None and not positive:
                q = replace(q, answerable=False, category=q.category if line.category_given else "unanswerable")
                inferred = True
        elif not q.answerable and positive and j is not None:
            problems.add(j.path, min(positive), f"the query is 'answerable: false' (queries.jsonl line {lineno}) "
                                                "but has a positive relevance score")
            continue
        elif q.answerable and j is not None and not positive:
            problems.add(queries_path, lineno, "the query is 'answerable: true' but has no relevant document "
                                               f"(score > 0) in qrels/{j.path.name}; add one, mark it "
                                               "'answerable: false', or leave 'answerable' out (then it is inferred)")
            continue
        membership[q.id] = (split, q, inferred)
    return membership


# ---------------------------------------------------------------------------------------------
# checking a whole folder (``searchkit datasets validate``)


@dataclass(frozen=True)
class DatasetCheck:
    """A dataset folder checked whole: every problem found, and (when there is none) each split's
    counts and notes."""

    path: Path
    problems: tuple[Problem, ...]
    records: int = 0
    queries: int = 0
    splits: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """One line: the folder, ok or the number of problems, and the counts of each split."""
        if self.problems:
            return f"{self.path}: {_plural(len(self.problems), 'problem', 'problems')}"
        parts = [
            f"{name} {s['queries']} queries ({s['answerable']} answerable, {s['unanswerable']} unanswerable), "
            f"{s['judgements']} judgements ({s['format']})"
            for name, s in self.splits.items()
        ]
        return (f"{self.path}: ok: {_plural(self.records, 'document', 'documents')}, "
                f"{_plural(self.queries, 'query', 'queries')}; " + "; ".join(parts))

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "ok": self.ok,
                "problems": [{"file": str(p.path), "line": p.line, "why": p.why} for p in self.problems],
                "records": self.records, "queries": self.queries,
                "splits": {k: dict(v) for k, v in self.splits.items()}}


def check_dataset(path: str | os.PathLike) -> DatasetCheck:
    """Read a dataset folder whole (every split) and name every problem: a missing file, each bad line
    of every file, each contradiction between queries and judgements.

    Raises:
        DataError: ``path`` is not a folder that can be read (nothing in it can be checked).
    """
    root = Path(path)
    if not root.is_dir():
        raise DataError(f"dataset folder {root} does not exist or is not a folder; {_LAYOUT}", reason="dataset")
    try:
        os.listdir(root)
    except OSError as exc:
        raise DataError(f"dataset folder {root} cannot be read ({exc.strerror or type(exc).__name__})", reason="dataset") from None
    problems = Problems()
    corpus_path, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    for p in (corpus_path, queries_path):
        if not p.exists():
            problems.add(p, None, f"missing; {_LAYOUT}")
    split_files = _split_files(root, problems, regular_only=False)
    if not split_files:
        problems.add(root / "qrels", None, f"no judgements file qrels/<split>.tsv (.txt, .qrels); {_LAYOUT}")
    content = _read(corpus_path, queries_path, split_files, problems)
    if problems:
        return DatasetCheck(root, tuple(problems.found))
    splits = {}
    for name, j in content.judgements.items():
        ds = _select(content, root, name)
        answerable = len(ds.answerable_queries())
        splits[name] = {"queries": len(ds.queries), "answerable": answerable,
                        "unanswerable": len(ds.queries) - answerable,
                        "judgements": sum(len(rows) for rows in j.rows.values()), "format": j.format,
                        "file": j.path.name, "notes": list(ds.notes)}
    return DatasetCheck(root, (), records=len(content.records), queries=len(content.queries), splits=splits)
