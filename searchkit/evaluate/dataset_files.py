"""Reading a dataset folder's files line by line, with every problem collected, not just the first
(issue 40 item 2): ``Problem`` (file, line, why) and ``Problems`` (the list), the line and JSON
readers, and the corpus and query rows.

Part of ``searchkit.evaluate.datasets`` (which loads, assigns splits and infers); split out so that no
module is over 600 lines. A problem names the file, the line and what is wrong, never the line's
content (issue 27, item 8): a dataset may hold private text, and an error message travels further.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from searchkit.errors import DataError
from searchkit.records import KINDS, VISIBILITIES, Record
from searchkit.util import problem_of, open_regular, parse_iso

if TYPE_CHECKING:
    from searchkit.evaluate.datasets import Query

__all__ = ["QUERY_KINDS", "Problem", "Problems", "QueryLine", "json_rows", "lines", "read_corpus", "read_queries",
           "what"]

QUERY_KINDS: tuple[str, ...] = KINDS + ("doc",)
_RECORD_KEYS = ("_id", "title", "text", "kind", "space", "date", "ref", "owner", "visibility")


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a dataset folder: the file, the 1-based line (None: the whole file) and why."""

    path: Path
    line: int | None
    why: str

    def __str__(self) -> str:
        """``file:line: why`` (``file: why`` for the whole file), as compilers and ``datasets validate`` print."""
        return f"{self.path}:{self.line}: {self.why}" if self.line is not None else f"{self.path}: {self.why}"

    def message(self) -> str:
        """``file, line N: why``: the form a ``DataError`` of ``load_dataset`` has always had."""
        return f"{self.path}, line {self.line}: {self.why}" if self.line is not None else f"{self.path}: {self.why}"


@dataclass
class Problems:
    """The problems found so far, in the order found (file by file, line by line)."""

    found: list[Problem] = field(default_factory=list)

    def add(self, path: Path, line: int | None, why: str) -> None:
        self.found.append(Problem(Path(path), line, why))

    def __len__(self) -> int:
        return len(self.found)

    def __bool__(self) -> bool:
        return bool(self.found)


def lines(path: Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers. A line that is not UTF-8 is a problem (and
    skipped); a file that cannot be read (a FIFO, no permission) is one problem. A regular file
    only (``util.open_regular``: a FIFO is refused, never waited on)."""
    try:
        fh = open_regular(path, "rb")
    except DataError as exc:
        problems.add(path, None, problem_of(exc))
        return
    except OSError as exc:
        problems.add(path, None, f"cannot be read ({exc.strerror or type(exc).__name__})")
        return
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.add(path, lineno, f"not valid UTF-8 ({exc.reason})")
                continue
            if lineno == 1:
                text = text.lstrip("\ufeff")
            if text.strip():
                yield lineno, text.rstrip("\r\n")


def json_rows(path: Path, problems: Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file; a line that is not one is a problem (and skipped)."""
    for lineno, text in lines(path, problems):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.add(path, lineno, f"malformed JSON ({exc.msg} at column {exc.colno})")
            continue
        except RecursionError:
            problems.add(path, lineno, "JSON nested too deeply")
            continue
        except ValueError:  # a number longer than Python reads
            problems.add(path, lineno, "a number too long to read")
            continue
        if not isinstance(row, dict):
            problems.add(path, lineno, f"expected a JSON object, got {type(row).__name__}")
            continue
        try:
            json.dumps(row, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            problems.add(path, lineno, "text that is not valid Unicode (a lone surrogate escape such as \\ud800)")
            continue
        yield lineno, row


def what(value: object) -> str:
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


class _Row:
    """The checks of one JSON row; each failed check is a problem of the row's line."""

    def __init__(self, row: Mapping[str, Any], path: Path, lineno: int, problems: Problems) -> None:
        self.row, self.path, self.lineno, self.problems = row, path, lineno, problems
        self.bad = False

    def fail(self, why: str) -> None:
        self.bad = True
        self.problems.add(self.path, self.lineno, why)

    def ident(self) -> str | None:
        if "_id" not in self.row:
            self.fail("missing required field '_id'")
            return None
        value = self.row["_id"]
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value.strip():
            self.fail(f"'_id' must be a non-empty string, got {what(value)}")
            return None
        if any(c in value for c in "\t\r\n"):
            self.fail("'_id' contains a tab or newline")
            return None
        return value

    def optional_str(self, key: str) -> str | None:
        value = self.row.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(f"{key!r} must be a string, got {what(value)}")
            return None
        return value

    def iso_date(self, key: str) -> str | None:
        value = self.optional_str(key)
        if value is None:
            return None
        if parse_iso(value) is None:
            self.fail(f"{key!r} must be an ISO date (YYYY-MM-DD[THH:MM:SS]), got another string")
            return None
        return value

    def boolean(self, key: str) -> bool | None:
        value = self.row.get(key)
        if value is not None and not isinstance(value, bool):
            self.fail(f"{key!r} must be true or false (JSON boolean), got {what(value)}")
            return None
        return value


def _first_seen(seen: dict[str, int], ident: str | None, check: _Row, what_id: str) -> bool:
    """Whether ``ident`` is new (a duplicate is a problem of its line, naming the first)."""
    if ident is None:
        return False
    if ident in seen:
        check.fail(f"duplicate {what_id} (first on line {seen[ident]})")
        return False
    seen[ident] = check.lineno
    return True


def read_corpus(path: Path, problems: Problems) -> tuple[tuple[Record, ...], set[str]]:
    """The records of a ``corpus.jsonl``, and the ids of every row that named one (a row with a
    problem included, so that judgements of it are not reported twice)."""
    records: list[Record] = []
    seen: dict[str, int] = {}
    before = len(problems)
    for lineno, row in json_rows(path, problems):
        check = _Row(row, path, lineno, problems)
        ident = check.ident()
        new = _first_seen(seen, ident, check, "document id")
        text = row.get("text")
        if "text" not in row:
            check.fail("the document is missing required field 'text'")
        elif not isinstance(text, str):
            check.fail(f"'text' must be a string, got {what(text)}")
        kind = check.optional_str("kind") or "doc"
        if kind not in QUERY_KINDS:
            check.fail(f"unknown 'kind'; valid kinds: {', '.join(QUERY_KINDS)}")
        visibility = check.optional_str("visibility") or "shared"
        if visibility not in VISIBILITIES:
            check.fail(f"'visibility' must be one of {', '.join(VISIBILITIES)}")
        space, date, title = check.optional_str("space"), check.iso_date("date"), check.optional_str("title")
        ref, owner = check.optional_str("ref"), check.optional_str("owner")
        if check.bad or not new or ident is None:
            continue
        records.append(Record(
            id=ident, kind=kind, space=space or "", date=date, title=title or "", ref=ref or ident,
            text=str(text), owner=owner, visibility=visibility,
            fields={k: v for k, v in row.items() if k not in _RECORD_KEYS},
        ))
    if not records and len(problems) == before:
        problems.add(path, None, "the corpus is empty")
    return tuple(records), set(seen)


@dataclass(frozen=True)
class QueryLine:
    """A query as its line gave it: the query (``answerable`` true where the line does not say),
    its line, whether ``answerable`` / ``category`` / ``lang`` were given, and its ``split`` field."""

    query: Any
    line: int
    answerable_given: bool
    category_given: bool
    split: str | None


def read_queries(path: Path, problems: Problems, query_type: type[Query]) -> tuple[list[QueryLine], set[str]]:
    """The queries of a ``queries.jsonl`` (built with ``query_type``, the ``Query`` class), and the
    ids of every row that named one."""
    out: list[QueryLine] = []
    seen: dict[str, int] = {}
    before = len(problems)
    for lineno, row in json_rows(path, problems):
        check = _Row(row, path, lineno, problems)
        ident = check.ident()
        new = _first_seen(seen, ident, check, "query id")
        text = row.get("text")
        if "text" not in row:
            check.fail("the query is missing required field 'text'")
        elif not isinstance(text, str) or not text.strip():
            check.fail("the query's 'text' must be a non-empty string")
        answerable = check.boolean("answerable")
        kinds = row.get("kinds")
        if kinds is not None:
            if isinstance(kinds, str):
                kinds = [kinds]
            if not isinstance(kinds, list) or not kinds or any(k not in QUERY_KINDS for k in kinds):
                check.fail(f"'kinds' must be a non-empty list of {', '.join(QUERY_KINDS)}")
                kinds = None
            else:
                kinds = tuple(kinds)
        spaces = row.get("spaces")
        if spaces is not None and spaces != "all":
            if not isinstance(spaces, list) or not spaces or not all(isinstance(s, str) and s for s in spaces):
                check.fail(f"'spaces' must be \"all\" or a non-empty list of space slugs, got {what(spaces)}")
                spaces = None
            else:
                spaces = tuple(spaces)
        split = row.get("split")
        if split is not None and (not isinstance(split, str) or not split.strip()):
            check.fail(f"'split' must be a split name, got {what(split)}")
            split = None
        category = check.optional_str("category")
        id_in_corpus = check.boolean("id_in_corpus")
        lang, since, until = check.optional_str("lang"), check.iso_date("since"), check.iso_date("until")
        caller = check.optional_str("caller")
        if check.bad or not new or ident is None:
            continue
        given = answerable is not None
        answerable = True if answerable is None else answerable
        out.append(QueryLine(
            query=query_type(
                id=ident, text=str(text), lang=lang, answerable=answerable, kinds=kinds, since=since, until=until,
                spaces=spaces, caller=caller,
                category=category or ("answerable" if answerable else "unanswerable"), id_in_corpus=id_in_corpus,
            ),
            line=lineno, answerable_given=given, category_given=bool(category), split=split,
        ))
    if not out and len(problems) == before:
        problems.add(path, None, "there are no queries")
    return out, set(seen)
