"""Validation of imported rows, before the store is touched (SPEC T, T2; part of
``searchkit.ingest.tasks``): each task and comment checked and normalised into a ``_Task`` /
``_Comment``, duplicates within an import refused, naming the ids, never quoting a value.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping, Sequence, overload

from searchkit.errors import DataError
from searchkit.ingest.redact.known import found_values
from searchkit.ingest.tasks.model import (
    MAX_STATE_CHARS, SkippedItem, _index_texts, _show, not_indexed_reason, shown_author,
    shown_title, state_class, utc_sort_key,
)


# --------------------------------------------------------------------------- validation (no store)

@dataclass(frozen=True)
class _Task:
    id: int
    space: str
    title: str
    state: str
    """The state as imported (``tasks.state_raw``)."""
    piece: str
    created: str | None
    updated: str | None
    updated_utc: str | None
    where: str
    shown: str = ""
    """The title as shown (``shown_title``), stored in ``tasks.title``."""
    state_class: str = "open"
    """``open`` or ``closed`` (``state_class``), stored in ``tasks.state``."""
    found: tuple[str, ...] = ()
    """The values redaction replaced in the title (in memory only: the store-wide pass, ``known_pass``)."""


@dataclass(frozen=True)
class _Comment:
    id: int
    task: int
    author: str
    """The author as imported (``comments.author_raw``)."""
    kind: str
    progress_type: str | None
    tool: str | None
    body: str
    attachments: str
    ts: str
    ts_utc: str
    indexed: str | None
    skip_reason: str | None
    redacted: bool
    where: str
    shown_author: str = ""
    """The author as shown (``shown_author``), stored in ``comments.author``."""
    found: tuple[str, ...] = ()
    """The values redaction replaced in the text and the author (in memory only: ``known_pass``)."""


@dataclass(frozen=True)
class _Batch:
    """What an import writes: validated tasks and comments, and the lines it skipped."""

    tasks: tuple[_Task, ...] = ()
    comments: tuple[_Comment, ...] = ()
    skipped: tuple[SkippedItem, ...] = ()
    tasks_skipped: bool = False
    """A task line was skipped: a comment of an unknown task may belong to it."""


def _req(row: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in row or row[key] is None:
        raise DataError(f"{where}: field {key!r} is required", reason="task_store")
    return row[key]


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (1 <= value < 2**63):
        raise DataError(f"{what} must be a positive integer, got {_show(value)}", reason="task_store")
    return value


@overload
def _str(value: object, what: str, *, optional: Literal[False] = False, nonempty: bool = False) -> str: ...
@overload
def _str(value: object, what: str, *, optional: bool, nonempty: bool = False) -> str | None: ...
def _str(value: object, what: str, *, optional: bool = False, nonempty: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise DataError(f"{what} must be a string, got {_show(value)}", reason="task_store")
    if nonempty and not value.strip():
        raise DataError(f"{what} must be a non-empty string, got {_show(value)}", reason="task_store")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise DataError(f"{what} is not valid Unicode text (a lone surrogate)", reason="task_store") from None
    return value


def _state(row: Mapping[str, Any], where: str) -> str:
    """The task's state as the platform gives it (default ``open``): a non-empty string of at most
    ``MAX_STATE_CHARS`` characters; any value is kept (``STATE_CLASSES`` classifies it)."""
    state = row.get("state")
    if state is None:
        return "open"
    state = _str(state, f"{where}: state", nonempty=True)
    assert state is not None
    if len(state) > MAX_STATE_CHARS:
        raise DataError(f"{where}: state is {len(state):,} characters long; at most {MAX_STATE_CHARS} "
                             "(a state is a word such as open, running, 完了)", reason="task_store")
    return state


def _validate_task(row: Mapping[str, Any], where: str) -> _Task:
    if not isinstance(row, Mapping):
        raise DataError(f"{where}: a task must be a JSON object, got {_show(row)}", reason="task_store")
    tid = _int(_req(row, "id", where), f"{where}: id")
    space = _req(row, "space", where)
    if not isinstance(space, str) or not space.strip():
        raise DataError(f"{where}: space must be a non-empty string, got {_show(space)}", reason="task_store")
    _str(space, f"{where}: space")
    state = _state(row, where)
    title = _str(row.get("title"), f"{where}: title", optional=True) or ""
    piece = _str(row.get("piece"), f"{where}: piece", optional=True) or ""
    created = row.get("created")
    if created is not None:
        utc_sort_key(created, f"{where}: created")
    updated = row.get("updated") or created
    updated_utc = utc_sort_key(updated, f"{where}: updated") if updated else None
    with found_values() as found:
        shown = shown_title(title)
    return _Task(tid, space, title, state, piece, created, updated, updated_utc, where, shown,
                 state_class(state), _secrets(found))


def _validate_comment(row: Mapping[str, Any], where: str) -> _Comment:
    if not isinstance(row, Mapping):
        raise DataError(f"{where}: a comment must be a JSON object, got {_show(row)}", reason="task_store")
    cid = _int(_req(row, "id", where), f"{where}: id")
    task = _int(_req(row, "task", where), f"{where}: task")
    author = _str(_req(row, "author", where), f"{where}: author", nonempty=True)
    assert author is not None
    kind = _str(_req(row, "kind", where), f"{where}: kind", nonempty=True)
    ts = _req(row, "ts", where)
    ts_utc = utc_sort_key(ts, f"{where}: ts")
    progress_type = _str(row.get("progress_type"), f"{where}: progress_type", optional=True)
    tool = _str(row.get("tool"), f"{where}: tool", optional=True)
    body = _str(row.get("body"), f"{where}: body", optional=True) or ""
    attachments = row.get("attachments") or []
    if not isinstance(attachments, (list, tuple)):
        raise DataError(f"{where}: attachments must be a list of file names, got {_show(attachments)}", reason="task_store")
    for i, a in enumerate(attachments):
        _str(a, f"{where}: attachments[{i}]")
    clean = {"kind": kind, "progress_type": progress_type, "tool": tool, "body": body, "attachments": attachments}
    with found_values() as found:
        texts = _index_texts(clean)
        shown = shown_author(author)
    raw, text = (None, None) if texts is None else texts
    return _Comment(
        cid, task, author, kind, progress_type, tool, body, json.dumps(list(attachments), ensure_ascii=False),
        ts, ts_utc, text, None if text is not None else (not_indexed_reason(clean) or "unknown"),
        text is not None and text != raw, where, shown, _secrets(found),
    )


def _secrets(found: list[tuple[str, str]]) -> tuple[str, ...]:
    """The values the rules replaced (not e-mail addresses: they are not secrets)."""
    return tuple(dict.fromkeys(value for rule, value in found if rule != "email"))


def _no_duplicates(items: Sequence[_Task] | Sequence[_Comment], what: str) -> None:
    first: dict[int, str] = {}
    for item in items:
        if item.id in first:
            raise DataError(
                f"{item.where}: {what} id {item.id} appears more than once in this import "
                f"(also at {first[item.id]}); nothing imported", reason="task_store"
            )
        first[item.id] = item.where


def _validate(
    task_rows: Iterable[tuple[str, Any]], comment_rows: Iterable[tuple[str, Any]]
) -> tuple[list[_Task], list[_Comment]]:
    """Validate every row (``(where, row)`` pairs) and the ids within the import; touches no store."""
    tasks = [_validate_task(row, where) for where, row in task_rows]
    _no_duplicates(tasks, "task")
    comments = [_validate_comment(row, where) for where, row in comment_rows]
    _no_duplicates(comments, "comment")
    return tasks, comments


def _numbered(rows: Iterable[Mapping[str, Any]], where: str) -> list[tuple[str, Any]]:
    return [(f"{where} {i}", row) for i, row in enumerate(rows, 1)]
