"""What the task store holds (SPEC T, T2, T6): comment kinds and task states, the errors and the
import report, and the text each task and comment is indexed and shown by (NFKC, redacted);
part of ``searchkit.ingest.tasks``.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from searchkit.errors import DataError
from searchkit.ingest.policy import DEFAULT_POLICY
from searchkit.ingest.redact import redact, redact_file_name

FTS_TABLE = "comment_fts"

COMMENT_KINDS: tuple[str, ...] = (
    "request", "interjection", "interjection_ack", "comment", "result", "ask", "progress", "handoff",
)
"""Comment kinds of WORKSPACE.md. Other kinds are stored but never indexed."""

INDEXED_KINDS: frozenset[str] = frozenset({"request", "interjection", "result", "ask", "handoff"})
INDEXED_PROGRESS_TYPES: frozenset[str] = frozenset({"thinking", "summary"})
TOOL_PROGRESS_TYPE = "tool"
TASK_STATES: tuple[str, ...] = ("open", "closed")
"""The two classes a task's state falls in (``tasks.state``; ``list_tasks(state=...)``)."""

STATE_CLASSES: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys((
        "open", "opened", "new", "todo", "to_do", "pending", "queued", "waiting", "running", "in_progress",
        "active", "started", "paused", "blocked", "review", "in_review",
        "実行中", "進行中", "待機中", "未着手", "対応中", "作業中", "保留",
        "открыта", "открыт", "новая", "в_работе", "выполняется", "ожидает",
    ), "open"),
    **dict.fromkeys((
        "closed", "done", "completed", "complete", "finished", "resolved", "interrupted", "aborted",
        "cancelled", "canceled", "failed", "stopped", "archived",
        "完了", "中断", "終了", "失敗", "キャンセル", "取り消し",
        "закрыта", "закрыт", "выполнена", "завершена", "прервана", "отменена",
    ), "closed"),
})
"""A platform's task state (``state_key``: NFKC, case-folded, spaces and hyphens as ``_``) -> its
class. Running, waiting or paused work is ``open``; finished, interrupted, cancelled or failed work
is ``closed``."""
UNKNOWN_STATE_CLASS = "open"
"""The class of a state ``STATE_CLASSES`` does not know: a task counts as closed only when its state
says that it ended, so ``list --state open`` never hides a task that may still be running."""
MAX_STATE_CHARS = 100


STORE_REASONS = ("task_store", "locked", "no_fts5")
"""The ``DataError.reason`` of a task store's errors: bad input to it (a malformed row, a missing
task), a write lock another process held for longer than the importer would wait, no FTS5 to build
with."""


@dataclass(frozen=True)
class SkippedItem:
    """A line of an import file left out, and why: ``too_large`` (over the item cap) or
    ``task_skipped`` (a comment whose task is unknown once a task line was skipped)."""

    where: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"where": self.where, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows written, comments indexed, why the others were not, and the lines
    skipped (``skipped``)."""

    tasks: int = 0
    comments: int = 0
    indexed: int = 0
    not_indexed: Mapping[str, int] = field(default_factory=dict)
    redacted: int = 0
    created: bool = False
    """True when this import created the store file (``import_into``)."""
    titles_redacted: int = 0
    """Task titles that redaction changed (``redacted`` counts comments)."""
    skipped: tuple[SkippedItem, ...] = ()
    searchable: bool = True
    """False when this SQLite has no FTS5: rows were written without the full-text index (T8)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "comments": self.comments,
            "indexed": self.indexed,
            "not_indexed": dict(self.not_indexed),
            "redacted": self.redacted,
            "created": self.created,
            "titles_redacted": self.titles_redacted,
            "skipped": [s.to_dict() for s in self.skipped],
            "searchable": self.searchable,
        }


def normalize(text: str) -> str:
    """NFKC-normalise ``text`` (full-width Latin and digits become ASCII, ideographic space a space)."""
    return unicodedata.normalize("NFKC", text)


def fold(text: str) -> str:
    """The case folding used by the LIKE path (Unicode-aware, unlike SQLite's ASCII-only LIKE)."""
    return text.casefold()


def query_terms(query: str) -> tuple[str, ...]:
    """Terms of a task-search query: NFKC-normalised, split on whitespace, duplicates dropped (order
    kept). Beside ``normalize`` because the store's FTS5 retriever and the task tool both read them."""
    seen: dict[str, None] = {}
    for t in normalize(query).split():
        seen.setdefault(t, None)
    return tuple(seen)


def _show(value: object) -> str:
    """What ``value`` is, never what it holds (issue 27 item 8: an error about a bad line of an
    imported file must not echo the file, which may hold a secret): ``a string of 12 characters``,
    ``a number``, ``a list of 2 items``; ``true`` / ``false`` / ``null`` as they are."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str):
        return f"a string of {len(value)} character{'s' if len(value) != 1 else ''}" if value else "an empty string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def utc_sort_key(ts: str, what: str = "ts") -> str:
    """An ISO time as a sortable UTC string (naive times are taken as UTC)."""
    if not isinstance(ts, str) or not ts:
        raise DataError(f"{what} must be an ISO 8601 time string, got {_show(ts)}", reason="task_store")
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        raise DataError(f"{what} is not an ISO 8601 time (e.g. 2026-06-20T10:00:00Z)", reason="task_store") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (OverflowError, ValueError):
        raise DataError(f"{what} is an ISO 8601 time out of range", reason="task_store") from None


def not_indexed_reason(comment: Mapping[str, Any]) -> str | None:
    """Why a comment is not indexed (``kind:comment``, ``progress:status``...), or None if it is."""
    kind = comment.get("kind")
    if kind in INDEXED_KINDS:
        return None
    if kind == "progress":
        ptype = comment.get("progress_type")
        if ptype in INDEXED_PROGRESS_TYPES:
            return None
        if ptype == TOOL_PROGRESS_TYPE and comment.get("tool"):
            return None
        return f"progress:{ptype}"
    return f"kind:{kind}"


def _attachment_names(attachments: Iterable[str]) -> list[str]:
    names = []
    for a in attachments:
        name = str(a).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if name:
            names.append(name)
    return names


def indexed_text(comment: Mapping[str, Any]) -> str | None:
    """The text a comment contributes to the index (T2), or None when it is not indexed.

    Body for indexed kinds, ``tool: NAME`` for a tool run (never its arguments or output),
    plus ``attachments: a.pdf, b.png`` (file names only); then NFKC and redaction. Each file
    name is redacted as a file name too (``password=attsecret55.txt`` reads
    ``password=[redacted].txt``: a file name is never a value to the text rules).
    """
    texts = _index_texts(comment)
    return None if texts is None else texts[1]


def _index_texts(comment: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(unredacted, redacted)`` index text of a comment, or None when it is not indexed."""
    if not_indexed_reason(comment) is not None:
        return None
    if comment.get("kind") == "progress" and comment.get("progress_type") == TOOL_PROGRESS_TYPE:
        text = f"tool: {comment['tool']}"
    else:
        text = str(comment.get("body") or "")
    text = _clean(text)
    names = [_clean(n) for n in _attachment_names(comment.get("attachments") or ())]
    if not names:
        return text, redact_text(text)
    shown = [redact_file_name(n) for n in names]
    head = f"{text}\n" if text else ""
    return f"{head}attachments: {', '.join(names)}", redact_text(f"{head}attachments: {', '.join(shown)}")


def redact_text(text: str) -> str:
    """Text as task search indexes and shows it (SPEC T2): ``redact.redact`` (secrets, e-mail
    addresses), then the values assigned to secret-like names (``Policy.redact_assignments``: the
    ``NAME=value`` / ``name: value`` lines history cards already redact: ``secret: blueberry-muffin``,
    ``Cookie: JSESSIONID=…``; issue 27 item 2, round 3)."""
    return DEFAULT_POLICY.redact_assignments(redact(text))[0]


def _clean(text: str) -> str:
    return normalize(text).replace("\x00", " ")


def shown_title(title: str) -> str:
    """A task title as search results, ``list_tasks`` and ``around_ref`` show it (T6): redacted
    like indexed text (secrets, e-mail addresses), otherwise as written (no NFKC). The store keeps
    this in ``tasks.title`` and the title as imported in ``tasks.title_raw``."""
    return redact_text(title)


def shown_author(author: str) -> str:
    """A comment's author as every tool shows it (issue 27 item 7): redacted like titles. The store
    keeps this in ``comments.author`` (the ``author`` filter matches it) and the author as imported
    in ``comments.author_raw``."""
    return redact_text(author)


def state_key(state: str) -> str:
    """A state as ``STATE_CLASSES`` is keyed: NFKC, case-folded, runs of spaces and hyphens as ``_``."""
    return re.sub(r"[\s\-]+", "_", normalize(state).strip().casefold())


def state_class(state: str) -> str:
    """``open`` or ``closed`` for a platform's task state (``STATE_CLASSES``; unknown: ``open``)."""
    return STATE_CLASSES.get(state_key(state), UNKNOWN_STATE_CLASS)
