"""Labeled datasets on disk (SPEC E3; DESIGN.md "Dataset format"): load, validate, split.

Layout (BEIR's, extended)::

    DIR/corpus.jsonl        {"_id", "title", "text", kind?, space?, date?, ref?, owner?, visibility?, ...}
    DIR/queries.jsonl       {"_id", "text", lang?, answerable?, kinds?, since?, until?, spaces?,
                             caller?, category?, split?, id_in_corpus?}
    DIR/qrels/<split>.tsv   header ``query-id<TAB>corpus-id<TAB>score``, graded 0-3

Which queries belong to a split (one rule, applied in order):

1. a query with rows in ``qrels/<split>.tsv`` belongs to that split;
2. else a query with a ``split`` field belongs to the split it names;
3. else an unanswerable query (``answerable: false``) with no rows in any qrels file goes to ``dev``
   or ``test`` by a stable hash of its id (first byte of SHA-256 even -> dev, odd -> test);
4. else (an answerable query without rows anywhere, as in public BEIR sets whose queries file
   lists every split) it belongs to no split and is dropped.

Contradictions are errors: rows in two split files, rows in one split while its ``split`` field names
another, an answerable query whose ``split`` file holds no positive row for it, an unanswerable query
with a positive row.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from searchkit.evaluate.dataset_paths import (
    DATASETS_ENV,
    SHARED_ENV,
    DatasetError,
    _r,
    available_datasets,
    datasets_dir,
    resolve_dataset,
    shared_data_dir,
)
from searchkit.records import KINDS, VISIBILITIES, Record
from searchkit.util import FileProblem, open_regular, parse_iso

__all__ = [
    "DATASETS_ENV",
    "SHARED_ENV",
    "Dataset",
    "DatasetError",
    "Query",
    "QRELS_HEADER",
    "available_datasets",
    "available_splits",
    "datasets_dir",
    "hash_split",
    "load_corpus",
    "load_dataset",
    "resolve_dataset",
    "shared_data_dir",
]

QRELS_HEADER: tuple[str, str, str] = ("query-id", "corpus-id", "score")
MIN_SCORE, MAX_SCORE = 0, 3
QUERY_KINDS: tuple[str, ...] = KINDS + ("doc",)
HASH_SPLITS: tuple[str, str] = ("dev", "test")

_LAYOUT = (
    "expected layout: DIR/corpus.jsonl, DIR/queries.jsonl, DIR/qrels/<split>.tsv "
    "(BEIR format, see DESIGN.md 'Dataset format')"
)
_RECORD_KEYS = ("_id", "title", "text", "kind", "space", "date", "ref", "owner", "visibility")


@dataclass(frozen=True)
class Query:
    """One labeled query.

    Args:
        id: the query's ``_id``.
        text: what is searched.
        lang: language code (``ru``/``ja``/``en``...) or None when the file does not say.
        answerable: False when the corpus holds no answer (the right behaviour is a weak-match warning).
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
    query id to {corpus id: graded score} from ``qrels/<split>.tsv``.
    """

    name: str
    path: Path
    split: str
    records: tuple[Record, ...]
    queries: tuple[Query, ...]
    qrels: Mapping[str, Mapping[str, int]]

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

        def breakdown(key) -> dict[str, dict[str, int]]:
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
    """Names of the splits a dataset folder has (``qrels/<split>.tsv``), sorted."""
    qrels_dir = Path(path) / "qrels"
    if not qrels_dir.is_dir():
        return ()
    return tuple(sorted(p.stem for p in qrels_dir.glob("*.tsv") if p.is_file()))


def load_dataset(path: str | os.PathLike, split: str = "dev") -> Dataset:
    """Load and validate the dataset folder ``path`` for ``split``.

    Raises:
        DatasetError: a missing file (naming it and the expected layout) or a bad line (naming the
            file and the line number).
    """
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"dataset folder {root} does not exist or is not a folder; {_LAYOUT}")
    corpus_path = _required(root, "corpus.jsonl")
    queries_path = _required(root, "queries.jsonl")
    splits = available_splits(root)
    if not splits:
        raise DatasetError(f"dataset folder {root} has no qrels/<split>.tsv file; {_LAYOUT}")
    if split not in splits:
        if (root / "qrels" / f"{split}.tsv").exists():
            _required(root / "qrels", f"{split}.tsv")  # there, but a FIFO or a folder: say so
        raise DatasetError(
            f"{root / 'qrels' / (split + '.tsv')} not found: split {_r(split)} is not in this dataset; "
            f"available splits: {', '.join(splits)}"
        )

    records = _load_corpus(corpus_path)
    doc_ids = {r.id for r in records}
    queries, query_lines, declared = _load_queries(queries_path)

    # every qrels file is validated: split membership depends on all of them
    all_qrels: dict[str, dict[str, dict[str, tuple[int, int]]]] = {}
    for name in splits:
        all_qrels[name] = _load_qrels(root / "qrels" / f"{name}.tsv", query_lines, doc_ids)

    membership = _assign_splits(queries, query_lines, declared, all_qrels, queries_path, root)
    kept = tuple(q for q in queries if membership.get(q.id) == split)
    qrels = MappingProxyType(
        {
            qid: MappingProxyType({doc: score for doc, (score, _line) in rows.items()})
            for qid, rows in all_qrels[split].items()
        }
    )
    return Dataset(name=root.resolve().name, path=root, split=split, records=records,
                   queries=kept, qrels=qrels)


def load_corpus(path: str | os.PathLike) -> tuple[Record, ...]:
    """The records of a dataset folder's ``corpus.jsonl`` alone (what an index needs): no queries
    or qrels are read, so a corpus-only folder works.

    Raises:
        DatasetError: the folder or its corpus is missing, or a corpus line is bad (file and line named).
    """
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"dataset folder {root} does not exist or is not a folder; {_LAYOUT}")
    return _load_corpus(_required(root, "corpus.jsonl"))


def _required(root: Path, name: str) -> Path:
    p = root / name
    if not p.is_file():
        if p.exists():
            raise DatasetError(f"{p} is not a regular file; only regular files are read ({_LAYOUT})")
        raise DatasetError(f"dataset folder {root} has no {name}; {_LAYOUT}")
    return p


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers; a bad byte sequence names its line. A regular
    file only (``util.open_regular``: a FIFO is refused, never waited on)."""
    try:
        fh = open_regular(path, "rb")
    except FileProblem as exc:
        raise DatasetError(f"{path}: {exc.problem}") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{path}, line {lineno}: not valid UTF-8 ({exc.reason})") from None
            if lineno == 1:
                text = text.lstrip("\ufeff")
            if text.strip():
                yield lineno, text.rstrip("\r\n")


def _json_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, text in _lines(path):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise DatasetError(f"{path}, line {lineno}: JSON nested too deeply") from None
        except ValueError:  # a number longer than Python reads
            raise DatasetError(f"{path}, line {lineno}: a number too long to read") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{path}, line {lineno}: expected a JSON object, got {type(row).__name__}")
        try:
            json.dumps(row, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise DatasetError(f"{path}, line {lineno}: text that is not valid Unicode (a lone surrogate escape such as \\ud800)") from None
        yield lineno, row


def _what(value: Any) -> str:
    """What kind of value a file holds where it should not, without the value: an error names the
    file, the line and the problem, never the content (issue 27, item 8)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a JSON boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value)} character{'s' if len(value) != 1 else ''}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _id_of(row: Mapping[str, Any], path: Path, lineno: int) -> str:
    if "_id" not in row:
        raise DatasetError(f"{path}, line {lineno}: missing required field '_id'")
    value = row["_id"]
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{path}, line {lineno}: '_id' must be a non-empty string, got {_what(value)}")
    if any(c in value for c in "\t\r\n"):
        raise DatasetError(f"{path}, line {lineno}: '_id' contains a tab or newline")
    return value


def _optional_str(row: Mapping[str, Any], key: str, path: Path, lineno: int) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DatasetError(f"{path}, line {lineno}: {key!r} must be a string, got {_what(value)}")
    return value


def _iso_date(row: Mapping[str, Any], key: str, path: Path, lineno: int) -> str | None:
    value = _optional_str(row, key, path, lineno)
    if value is None:
        return None

    if parse_iso(value) is None:
        raise DatasetError(
            f"{path}, line {lineno}: {key!r} must be an ISO date (YYYY-MM-DD[THH:MM:SS]), got another string"
        )
    return value


def _check_duplicate(seen: dict[str, int], ident: str, path: Path, lineno: int, what: str) -> None:
    if ident in seen:
        raise DatasetError(f"{path}, line {lineno}: duplicate {what} (first on line {seen[ident]})")
    seen[ident] = lineno


def _load_corpus(path: Path) -> tuple[Record, ...]:
    records: list[Record] = []
    seen: dict[str, int] = {}
    for lineno, row in _json_rows(path):
        ident = _id_of(row, path, lineno)
        _check_duplicate(seen, ident, path, lineno, "document id")
        if "text" not in row:
            raise DatasetError(f"{path}, line {lineno}: the document is missing required field 'text'")
        text = row["text"]
        if not isinstance(text, str):
            raise DatasetError(f"{path}, line {lineno}: 'text' must be a string, got {_what(text)}")
        kind = _optional_str(row, "kind", path, lineno) or "doc"
        if kind not in QUERY_KINDS:
            raise DatasetError(
                f"{path}, line {lineno}: unknown 'kind'; valid kinds: {', '.join(QUERY_KINDS)}"
            )
        visibility = _optional_str(row, "visibility", path, lineno) or "shared"
        if visibility not in VISIBILITIES:
            raise DatasetError(
                f"{path}, line {lineno}: 'visibility' must be one of {', '.join(VISIBILITIES)}"
            )
        records.append(
            Record(
                id=ident,
                kind=kind,
                space=_optional_str(row, "space", path, lineno) or "",
                date=_iso_date(row, "date", path, lineno),
                title=_optional_str(row, "title", path, lineno) or "",
                ref=_optional_str(row, "ref", path, lineno) or ident,
                text=text,
                owner=_optional_str(row, "owner", path, lineno),
                visibility=visibility,
                fields={k: v for k, v in row.items() if k not in _RECORD_KEYS},
            )
        )
    if not records:
        raise DatasetError(f"{path}: the corpus is empty")
    return tuple(records)


def _load_queries(path: Path) -> tuple[list[Query], dict[str, int], dict[str, str]]:
    queries: list[Query] = []
    lines: dict[str, int] = {}
    declared: dict[str, str] = {}
    for lineno, row in _json_rows(path):
        ident = _id_of(row, path, lineno)
        _check_duplicate(lines, ident, path, lineno, "query id")
        if "text" not in row:
            raise DatasetError(f"{path}, line {lineno}: the query is missing required field 'text'")
        text = row["text"]
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(f"{path}, line {lineno}: the query's 'text' must be a non-empty string")
        answerable = row.get("answerable", True)
        if not isinstance(answerable, bool):
            raise DatasetError(
                f"{path}, line {lineno}: 'answerable' must be true or false (JSON boolean), got {_what(answerable)}"
            )
        kinds = row.get("kinds")
        if kinds is not None:
            if isinstance(kinds, str):
                kinds = [kinds]
            if not isinstance(kinds, list) or not kinds or any(k not in QUERY_KINDS for k in kinds):
                raise DatasetError(
                    f"{path}, line {lineno}: 'kinds' must be a non-empty list of {', '.join(QUERY_KINDS)}"
                )
            kinds = tuple(kinds)
        spaces = row.get("spaces")
        if spaces is not None and spaces != "all":
            if not isinstance(spaces, list) or not spaces or not all(isinstance(s, str) and s for s in spaces):
                raise DatasetError(
                    f"{path}, line {lineno}: 'spaces' must be \"all\" or a non-empty list of space slugs, "
                    f"got {_what(spaces)}"
                )
            spaces = tuple(spaces)
        split = row.get("split")
        if split is not None:
            if not isinstance(split, str) or not split.strip():
                raise DatasetError(f"{path}, line {lineno}: 'split' must be a split name, got {_what(split)}")
            declared[ident] = split
        category = _optional_str(row, "category", path, lineno) or ("answerable" if answerable else "unanswerable")
        id_in_corpus = row.get("id_in_corpus")
        if id_in_corpus is not None and not isinstance(id_in_corpus, bool):
            raise DatasetError(
                f"{path}, line {lineno}: 'id_in_corpus' must be true or false (JSON boolean), got {_what(id_in_corpus)}"
            )
        queries.append(
            Query(
                id=ident,
                text=text,
                lang=_optional_str(row, "lang", path, lineno),
                answerable=answerable,
                kinds=kinds,
                since=_iso_date(row, "since", path, lineno),
                until=_iso_date(row, "until", path, lineno),
                spaces=spaces,
                caller=_optional_str(row, "caller", path, lineno),
                category=category,
                id_in_corpus=id_in_corpus,
            )
        )
    if not queries:
        raise DatasetError(f"{path}: there are no queries")
    return queries, lines, declared


def _load_qrels(
    path: Path, query_lines: Mapping[str, int], doc_ids: set[str]
) -> dict[str, dict[str, tuple[int, int]]]:
    """{query_id: {doc_id: (score, line)}} of one qrels file, validated."""
    rows: dict[str, dict[str, tuple[int, int]]] = {}
    header_seen = False
    for lineno, text in _lines(path):
        cols = text.split("\t")
        if not header_seen:
            if tuple(c.strip() for c in cols) != QRELS_HEADER:
                raise DatasetError(
                    f"{path}, line {lineno}: the header must be "
                    f"{_r(chr(9).join(QRELS_HEADER))} (tab-separated), got another line"
                )
            header_seen = True
            continue
        if len(cols) != 3:
            raise DatasetError(
                f"{path}, line {lineno}: expected 3 tab-separated columns "
                f"(query-id, corpus-id, score), got {len(cols)}"
            )
        qid, did, raw = (c.strip() for c in cols)
        try:
            score = int(raw)
        except ValueError:
            raise DatasetError(f"{path}, line {lineno}: the score is not an integer (expected 0-3)") from None
        if not MIN_SCORE <= score <= MAX_SCORE:
            raise DatasetError(f"{path}, line {lineno}: score {score} is outside 0-3")
        if qid not in query_lines:
            raise DatasetError(f"{path}, line {lineno}: unknown query id (not in queries.jsonl)")
        if did not in doc_ids:
            raise DatasetError(f"{path}, line {lineno}: unknown corpus id (not in corpus.jsonl)")
        judged = rows.setdefault(qid, {})
        if did in judged:
            raise DatasetError(
                f"{path}, line {lineno}: duplicate row for one query and document "
                f"(first on line {judged[did][1]})"
            )
        judged[did] = (score, lineno)
    if not header_seen:
        raise DatasetError(f"{path}: empty file; the header must be {_r(chr(9).join(QRELS_HEADER))}")
    return rows


def hash_split(query_id: str) -> str:
    """The split of an unanswerable query with neither ``split`` field nor qrels rows: SHA-256 parity."""
    return HASH_SPLITS[hashlib.sha256(query_id.encode("utf-8")).digest()[0] % 2]


def _assign_splits(
    queries: list[Query],
    query_lines: Mapping[str, int],
    declared: Mapping[str, str],
    all_qrels: Mapping[str, Mapping[str, Mapping[str, tuple[int, int]]]],
    queries_path: Path,
    root: Path,
) -> dict[str, str]:
    membership: dict[str, str] = {}
    for q in queries:
        lineno = query_lines[q.id]
        where = [name for name, rows in all_qrels.items() if q.id in rows]
        if len(where) > 1:
            files = " and ".join(
                f"qrels/{n}.tsv line {min(line for _s, line in all_qrels[n][q.id].values())}" for n in where
            )
            raise DatasetError(
                f"{queries_path}, line {lineno}: the query has rows in {files}; "
                "a query belongs to one split"
            )
        own = declared.get(q.id)
        if where:
            split = where[0]
            if own is not None and own != split:
                raise DatasetError(
                    f"{queries_path}, line {lineno}: the query's 'split' names another split "
                    f"but has rows in qrels/{split}.tsv"
                )
        elif own is not None:
            split = own
        elif not q.answerable:
            split = hash_split(q.id)
        else:
            continue  # answerable and judged nowhere: in no split (public BEIR query files list all)
        rows = all_qrels.get(split, {}).get(q.id, {})
        positive = [line for score, line in rows.values() if score > 0]
        if not q.answerable and positive:
            raise DatasetError(
                f"{root / 'qrels' / (split + '.tsv')}, line {min(positive)}: the query is "
                f"'answerable: false' (queries.jsonl line {lineno}) but has a positive relevance score"
            )
        if q.answerable and split in all_qrels and not positive:
            raise DatasetError(
                f"{queries_path}, line {lineno}: the answerable query has no relevant document "
                f"(score > 0) in qrels/{split}.tsv; add one or mark it 'answerable: false'"
            )
        membership[q.id] = split
    return membership
