"""What a workspace load yields (SPEC H1, H3, H14, H15; part of ``searchkit.ingest.workspace``):
``SpaceInfo``, ``WorkspaceLoad``, a ``Doubt`` (a part that could not be read), the plain-id rule for
anything a ref names (``plain_id``) and the source file of a record (``source_path``).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from searchkit.ingest.policy import CONTAINERS, IndexingReport
from searchkit.records import Record

RUNS: tuple[str, ...] = ("chat", "scheduled", "automatic")
DIGEST_PARTS: tuple[tuple[str, str], ...] = (
    ("asked", "Asked"), ("done", "Done"), ("left", "Left"), ("decided", "Decided"),
)
TITLE_CHARS = 80
DETAIL_CHARS = 300
"""A skip's detail is cut to this many characters (an error message may echo a huge value)."""
ID_CHARS = 200
"""The longest id (``plain_id``) an item may have."""
DOUBT_RULES: tuple[str, ...] = ("unreadable", "load_error", "bad_sqlite")
"""Skips that say a part of the workspace could not be read, not that it is gone or refused."""


@dataclass(frozen=True)
class SpaceInfo:
    """A space's settings from ``.space/space.json``.

    Args:
        slug: the space's folder name.
        title: display title (the slug when none is given).
        members: user ids of its members now (H14).
        container: ``personal`` or ``shared``.
        history_search: False when history search is switched off for the space (H14).
    """

    slug: str
    title: str = ""
    members: tuple[str, ...] = ()
    container: str = "shared"
    history_search: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))
        if self.container not in CONTAINERS:
            raise ValueError(f"space {self.slug!r}: container must be one of {CONTAINERS}, got {self.container!r}")


def plain_id(value: object) -> bool:
    """Whether ``value`` may be an id that a ref names (``chat:ID``, ``digest:ID``, ``source:ID``,
    ``page:ID``, ``app:TABLE#ID``): 1-200 characters, each a letter or digit of any script (with
    its combining marks), ``_``, ``-``, ``.`` or ``:``; it starts with a letter, digit, ``_`` or
    ``-`` and holds no ``..``. So no slash, backslash, ``#``, space, control or format character
    (U+202E) and no path traversal (issue 27 item 15). Numbers (SQLite row ids) count by their text."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    text = str(value)
    if not 0 < len(text) <= ID_CHARS or ".." in text or not (text[0].isalnum() or text[0] in "_-"):
        return False
    return all(ch.isalnum() or ch in "_-.:" or unicodedata.category(ch) in ("Mn", "Mc") for ch in text)


def _bad_id_detail(what: str, value: object) -> str:
    shown = value if isinstance(value, (str, int)) and not isinstance(value, bool) else type(value).__name__
    return (f"{what} {_printable(str(shown))!r} is not a plain id (letters, digits, _ - . : ; no '..', "
            "slash, space or control character); the item is not indexed")


def _printable(text: str, limit: int = 60) -> str:
    """``text`` with control and format characters shown escaped, cut to ``limit`` characters."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else ascii(ch)[1:-1] for ch in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Doubt:
    """A part of a space this load could not read (a skip whose rule is in ``DOUBT_RULES``): what
    the previous index holds from it can be neither confirmed nor dropped, so an update keeps it
    (``carry_over``; issue 27 item 11).

    Args:
        where: the skip's label (``SLUG/path``, ``SLUG/`` for the walk of the space's files).
        space: the space slug.
        path: the space-relative source path (``Record.fields["source_path"]``): ``""`` any
            path, one ending in ``/`` a folder and everything below it, else one file.
        kinds: the record kinds it covers (empty: any).
        table: for ``.space/app.sqlite``, the one table in doubt (None: every table).
    """

    where: str
    space: str
    path: str = ""
    kinds: tuple[str, ...] = ()
    table: str | None = None

    def covers(self, record: Record) -> bool:
        """Whether ``record`` (of a previous index) comes from the part in doubt."""
        if record.space != self.space or (self.kinds and record.kind not in self.kinds):
            return False
        source = source_path(record)
        if self.path and not (source == self.path or (self.path.endswith("/") and source.startswith(self.path))):
            return False
        return self.table is None or record.fields.get("table") == self.table

    @classmethod
    def of(cls, where: str) -> "Doubt | None":
        """The part of a space a skip label names; None for what holds no records (a space's
        settings, ``users.json``): a space whose membership is unknown is left out, never kept."""
        space, sep, rest = where.partition("/")
        if not sep:
            return None
        if not rest:
            return cls(where, space, "", ("file",))
        for prefix, mark in ((".space/sources.jsonl", ":"), ("log.md", "#")):
            if rest.startswith(prefix + mark):
                return cls(where, space, prefix)
        if rest.startswith(".space/app.sqlite:"):
            return cls(where, space, ".space/app.sqlite", table=rest.split(":", 1)[1].split("#", 1)[0] or None)
        if rest in (".space/space.json", ".space/files.json"):
            return None
        return cls(where, space, rest)


_FIXED_SOURCES: Mapping[str, str] = MappingProxyType({
    "source": ".space/sources.jsonl", "app": ".space/app.sqlite", "log": "log.md",
})
_ITEM_FOLDERS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "chat": (".space/chats/", "chat:"), "digest": (".space/digests/", "digest:"), "page": (".space/pages/", "page:"),
})


def source_path(record: Record) -> str:
    """The space-relative file a record was read from (``fields["source_path"]``; for a record
    of an index built before that field, the file its kind and ref name)."""
    given = record.fields.get("source_path")
    if isinstance(given, str) and given:
        return given
    if record.kind in _FIXED_SOURCES:
        return _FIXED_SOURCES[record.kind]
    if record.kind in _ITEM_FOLDERS:
        folder, prefix = _ITEM_FOLDERS[record.kind]
        return f"{folder}{record.ref.removeprefix(prefix)}.json"
    return record.ref


@dataclass(frozen=True)
class WorkspaceLoad:
    """Everything ``load_workspace`` read.

    Args:
        records: every indexable record, ordered by space, then kind (``KINDS`` order), then key.
        spaces: the spaces by slug.
        users: user id -> display name (from ``users.json``; empty when absent).
        report: what was skipped and why, and counts per kind.
        doubts: the parts that could not be read (``Doubt``), whose previous records an update keeps.
        contested: ids that more than one item claims (none of them is indexed, nor kept).
        orphans: ids of the digests read whose chat is missing, unusable or in doubt.
        clean: record id -> the clean verdicts of its texts (``verdicts.Verdicts``; issue 30), what
            the index version holding these records keeps for the next load (``verdicts.memo_text``).
    """

    records: tuple[Record, ...]
    spaces: Mapping[str, SpaceInfo]
    users: Mapping[str, str]
    report: IndexingReport
    doubts: tuple[Doubt, ...] = ()
    contested: frozenset[str] = frozenset()
    orphans: frozenset[str] = frozenset()
    clean: Mapping[str, tuple[tuple[str, bytes], ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))
        object.__setattr__(self, "doubts", tuple(self.doubts))
        object.__setattr__(self, "contested", frozenset(self.contested))
        object.__setattr__(self, "orphans", frozenset(self.orphans))
        object.__setattr__(self, "spaces", MappingProxyType(dict(self.spaces)))
        object.__setattr__(self, "users", MappingProxyType(dict(self.users)))
        object.__setattr__(self, "clean", MappingProxyType(dict(self.clean)))
