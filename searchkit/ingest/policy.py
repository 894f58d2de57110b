"""What is never indexed (SPEC H2), who may see what (H15) and which spaces a search covers (H14).

The rules are data (a frozen ``Policy``); the loader asks it about each path, table and column
and writes every refusal into an ``IndexingReport`` as a ``Skip`` naming the rule that fired.
No rule ever fails a build.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol, Sequence

from searchkit.records import Record

MAX_SPACES = 60
"""At most this many spaces in one search (H14)."""

CONTAINERS: tuple[str, ...] = ("personal", "shared")
"""Where a search runs: a person's own container, or a shared workspace container (H15)."""

SKIP_REASONS: tuple[str, ...] = ("not_member", "history_search_off", "unknown")
"""Codes ``searchable_spaces`` gives for a space it leaves out (H14)."""

RULES: Mapping[str, str] = MappingProxyType({
    # H2: never indexed
    "excluded_dir": "a folder that is never indexed (uploads/, .git/, node_modules/)",
    "excluded_file": "a file name that is never indexed (.env*, credentials*.json, token.json)",
    "binary": "a binary file (a NUL byte, or not valid UTF-8), whatever its name",
    "journal_table": "a table named like a journal or message history (messages, audit, events, history, logs, ...)",
    "message_history_table": "a table whose columns hold a channel's message history (channel + sender + text)",
    "secret_column": "a column named like a secret (password, token, api_key, secret, ...)",
    "table_cap": "beyond the most recently modified tables (by newest updated_at)",
    "row_cap": "rows beyond the newest of a table (by updated_at)",
    # bad or unusable input: reported, the rest goes on
    "not_a_space": "a folder without .space/space.json",
    "bad_space": "a space whose .space/space.json cannot be used (so membership is unknown)",
    "bad_json": "a JSON / JSON-lines file or line that does not parse",
    "bad_shape": "parsed, but a required field is missing or has the wrong type",
    "orphan_digest": "a digest whose chat is gone or unusable (its owner and visibility are unknown)",
    "duplicate": "a second item with an id already loaded",
    "bad_sqlite": "an unreadable or corrupt SQLite file or table",
    "no_id_column": "a table without an id column",
    "no_updated_at": "a table without updated_at: ranked last among tables, rows taken by id (indexed)",
    "log_no_headings": "log.md without '## YYYY-MM-DD' headings",
    "log_preamble": "text in log.md before the first day heading",
    "unreadable": "a file the operating system would not let us read",
    "symlink": "a symbolic link (never followed)",
    "too_large": "a file larger than the policy's max_file_bytes",
    "empty": "an empty or whitespace-only item",
})
"""Every rule a ``Skip`` can name, with what it means."""


@dataclass(frozen=True)
class Skip:
    """One thing the loader did not index (or indexed with a fallback), and why.

    Args:
        path_or_table: what was skipped: ``SLUG/relative/path``, ``SLUG/app.sqlite:TABLE``,
            ``SLUG/app.sqlite:TABLE.COLUMN`` or a space slug.
        rule: a key of ``RULES``.
        detail: human text (counts, the offending name, the parse error).
    """

    path_or_table: str
    rule: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"Skip rule {self.rule!r} is unknown; valid rules: {sorted(RULES)}")

    def to_dict(self) -> dict[str, str]:
        return {"path_or_table": self.path_or_table, "rule": self.rule, "detail": self.detail}


@dataclass(frozen=True)
class IndexingReport:
    """What a load indexed and what it left out (H2: every skip is listed here).

    Args:
        skips: things not indexed, each with the rule that fired.
        notes: things indexed with a fallback (e.g. log.md without headings indexed whole,
            a table without ``updated_at``); same shape as ``skips``.
        counts: records loaded per kind.
        loaded_at: ISO time of the load.
    """

    skips: tuple[Skip, ...] = ()
    notes: tuple[Skip, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    loaded_at: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "skips", tuple(self.skips))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))

    def by_rule(self, rule: str) -> tuple[Skip, ...]:
        """Skips and notes that name ``rule``."""
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; valid rules: {sorted(RULES)}")
        return tuple(s for s in self.skips + self.notes if s.rule == rule)

    def to_dict(self) -> dict[str, Any]:
        return {
            "loaded_at": self.loaded_at,
            "counts": dict(self.counts),
            "skips": [s.to_dict() for s in self.skips],
            "notes": [s.to_dict() for s in self.notes],
        }


def name_tokens(name: str) -> tuple[str, ...]:
    """Lower-case word tokens of an identifier: ``chatMessages`` -> (chat, messages)."""
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)
    return tuple(t for t in re.split(r"[\W_]+", spaced.lower()) if t)


@dataclass(frozen=True)
class Policy:
    """The never-index rules of H2 as data.

    Args:
        excluded_dirs: folder names never entered, at any depth.
        excluded_files: ``fnmatch`` patterns on a file's name (case-insensitive).
        journal_words: a table is journal-like when any of its name tokens is one of these.
        journal_heads: ... or when its last (non-numeric) name token is one of these.
        message_columns: (channel-like, sender-like, text-like) column names; a table with one
            of each holds a channel's message history.
        secret_words: a column is secret-like when any name token is one of these ...
        secret_pairs: ... or two adjacent tokens are one of these pairs ...
        secret_substrings: ... or its tokens run together contain one of these.
        max_tables: only the most recently modified tables (by newest ``updated_at``).
        max_rows: only the newest rows of each table (by ``updated_at``).
        max_file_bytes: larger files are skipped (``too_large``).
    """

    excluded_dirs: frozenset[str] = frozenset({"uploads", ".git", "node_modules"})
    excluded_files: tuple[str, ...] = (".env*", "credentials*.json", "token.json")
    journal_words: frozenset[str] = frozenset({
        "audit", "audits", "auditlog", "journal", "journals", "changelog", "changelogs",
        "eventlog", "chatlog", "msglog", "activitylog",
    })
    journal_heads: frozenset[str] = frozenset({
        "message", "messages", "msg", "msgs", "event", "events", "history", "histories",
        "log", "logs", "transcript", "transcripts", "trail",
    })
    message_columns: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
        frozenset({"channel", "channel_id", "chat_id", "thread_id", "conversation_id", "room", "room_id"}),
        frozenset({"sender", "sender_id", "author", "author_id", "from", "from_id", "user", "user_id"}),
        frozenset({"message", "text", "body", "content"}),
    )
    secret_words: frozenset[str] = frozenset({
        "password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets", "token",
        "tokens", "apikey", "apikeys", "credential", "credentials", "privatekey", "accesskey",
        "secretkey", "otp", "totp",
    })
    secret_pairs: frozenset[tuple[str, str]] = frozenset({
        ("api", "key"), ("private", "key"), ("access", "key"), ("auth", "key"), ("session", "key"),
        ("ssh", "key"), ("signing", "key"), ("encryption", "key"), ("master", "key"),
    })
    secret_substrings: tuple[str, ...] = ("password", "passwd", "apikey", "privatekey", "accesskey", "secretkey")
    max_tables: int = 30
    max_rows: int = 200
    max_file_bytes: int = 5_000_000

    def __post_init__(self) -> None:
        for name in ("max_tables", "max_rows", "max_file_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Policy.{name} must be a positive integer, got {value!r}")

    # -- files ---------------------------------------------------------------------------
    def excluded_dir(self, name: str) -> bool:
        """True when a folder of this name is never entered (H2)."""
        return name.lower() in self.excluded_dirs

    def excluded_file(self, name: str) -> str | None:
        """The pattern a file name matches among ``excluded_files``, or None."""
        lower = name.lower()
        for pattern in self.excluded_files:
            if fnmatch.fnmatchcase(lower, pattern.lower()):
                return pattern
        return None

    def path_skip(self, rel_path: str) -> tuple[str, str] | None:
        """``(rule, detail)`` when a space-relative path is never indexed by name, else None."""
        parts = [p for p in rel_path.replace("\\", "/").split("/") if p]
        for part in parts[:-1]:
            if self.excluded_dir(part):
                return "excluded_dir", f"inside {part}/"
        if parts and self.excluded_dir(parts[-1]):
            return "excluded_dir", f"{parts[-1]}/"
        if parts:
            pattern = self.excluded_file(parts[-1])
            if pattern:
                return "excluded_file", f"matches {pattern}"
        return None

    # -- tables --------------------------------------------------------------------------
    def journal_table(self, name: str) -> bool:
        """True when a table's name says it is a journal or a message history (H2)."""
        tokens = name_tokens(name)
        if any(t in self.journal_words for t in tokens):
            return True
        words = [t for t in tokens if not t.isdigit()]
        return bool(words) and words[-1] in self.journal_heads

    def message_history_columns(self, columns: Iterable[str]) -> bool:
        """True when the columns hold a channel's message history (channel + sender + text)."""
        names = {"_".join(name_tokens(c)) for c in columns}
        return all(names & group for group in self.message_columns)

    def table_skip(self, name: str, columns: Sequence[str]) -> tuple[str, str] | None:
        """``(rule, detail)`` when a whole table is never indexed, else None."""
        if self.journal_table(name):
            return "journal_table", f"table name {name!r} is journal-like"
        if self.message_history_columns(columns):
            return "message_history_table", f"columns {list(columns)} hold a message history"
        return None

    def secret_column(self, name: str) -> bool:
        """True when a column's name looks like a secret (H2)."""
        tokens = name_tokens(name)
        if any(t in self.secret_words for t in tokens):
            return True
        if any(pair in self.secret_pairs for pair in zip(tokens, tokens[1:])):
            return True
        joined = "".join(tokens)
        return any(s in joined for s in self.secret_substrings)

    def select_tables(self, modified: Mapping[str, str | None]) -> tuple[list[str], list[str]]:
        """Split tables into (kept, dropped): the ``max_tables`` with the newest ``updated_at``.

        ``modified`` maps a table to its newest ``updated_at`` (None when unknown; such tables
        rank last). Ties break by name, so the choice is deterministic.
        """
        known = sorted(t for t, m in modified.items() if m is not None)
        known.sort(key=lambda t: str(modified[t]), reverse=True)  # stable: ties stay by name
        unknown = sorted(t for t, m in modified.items() if m is None)
        ordered = known + unknown
        return ordered[: self.max_tables], ordered[self.max_tables:]


DEFAULT_POLICY = Policy()


def binary_reason(data: bytes) -> str | None:
    """Why these bytes are binary (a NUL byte, or not valid UTF-8), or None for UTF-8 text."""
    nul = data.find(b"\x00")
    if nul >= 0:
        return f"NUL byte at offset {nul}"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    return None


# -- visibility (H15) and spaces (H14) --------------------------------------------------------

def _check_container(container: str) -> None:
    if container not in CONTAINERS:
        raise ValueError(f"container must be one of {CONTAINERS}, got {container!r}")


def can_see(record: Record, caller: str | None, container: str) -> bool:
    """May ``caller`` see ``record`` in a search run in ``container`` (H15)?

    A personal record (a personal chat, the digests of its turns, its scheduled or automatic
    runs) is seen only by its owner, and never in a ``shared`` container (no person behind it).
    A shared record is seen by every member; membership itself is decided per space by
    ``searchable_spaces``.
    """
    _check_container(container)
    if record.visibility == "shared":
        return True
    if container != "personal" or caller is None or record.owner is None:
        return False
    return record.owner == caller


class SpaceLike(Protocol):
    slug: str
    members: tuple[str, ...]
    history_search: bool


def searchable_spaces(
    spaces: Mapping[str, SpaceLike],
    caller: str | None,
    requested: str | Sequence[str] | None,
    current: str,
) -> tuple[list[str], list[tuple[str, str]]]:
    """The spaces a search covers, and those it skips with a reason code (H14).

    Args:
        spaces: every known space by slug.
        caller: the user id of the person searching; None in a shared workspace container,
            where only ``current`` is searched and ``spaces`` is not available.
        requested: the ``spaces`` parameter: None (only ``current``), ``"all"`` (every space
            the caller is a member of now) or a list of slugs.
        current: the slug of the space the search runs in.

    Returns:
        ``(searched, skipped)``: slugs in request order (``current`` first for ``"all"``), and
        ``(slug, reason)`` with reason ``not_member`` | ``history_search_off`` | ``unknown``.
        With ``"all"`` only the caller's own spaces are considered, so spaces the caller is not
        in are not named.

    Raises:
        ValueError: naming ``spaces`` for a malformed value, more than ``MAX_SPACES`` spaces,
            or ``spaces`` given without a caller; naming ``current`` when it is unknown.
    """
    if requested is None:
        if current not in spaces:
            raise ValueError(f"current: unknown space {current!r}; known spaces: {sorted(spaces)}")
        return _sort_out([current], spaces, caller, member_check=caller is not None)
    if caller is None:
        raise ValueError(
            "spaces: not available in a shared workspace container (no caller); "
            "search the current space by leaving spaces unset"
        )
    if isinstance(requested, str):
        if requested != "all":
            raise ValueError(f"spaces: expected \"all\" or a list of space slugs, got the string {requested!r}")
        mine = sorted(s for s, info in spaces.items() if caller in info.members)
        if current in mine:
            mine.remove(current)
            mine.insert(0, current)
        if len(mine) > MAX_SPACES:
            raise ValueError(
                f"spaces: \"all\" covers {len(mine)} spaces, at most {MAX_SPACES} a search; pass a list of slugs"
            )
        return _sort_out(mine, spaces, caller, member_check=True)
    if not isinstance(requested, (list, tuple)):
        raise ValueError(f"spaces: expected \"all\" or a list of space slugs, got {type(requested).__name__}")
    slugs: list[str] = []
    for slug in requested:
        if not isinstance(slug, str) or not slug:
            raise ValueError(f"spaces: every item must be a non-empty space slug, got {slug!r}")
        if slug not in slugs:
            slugs.append(slug)
    if not slugs:
        raise ValueError("spaces: the list is empty; give at least one space slug or \"all\"")
    if len(slugs) > MAX_SPACES:
        raise ValueError(f"spaces: {len(slugs)} spaces requested, at most {MAX_SPACES} a search")
    return _sort_out(slugs, spaces, caller, member_check=True)


def _sort_out(
    slugs: list[str], spaces: Mapping[str, SpaceLike], caller: str | None, *, member_check: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    searched: list[str] = []
    skipped: list[tuple[str, str]] = []
    for slug in slugs:
        info = spaces.get(slug)
        if info is None:
            skipped.append((slug, "unknown"))
        elif member_check and caller not in info.members:
            skipped.append((slug, "not_member"))
        elif not info.history_search:
            skipped.append((slug, "history_search_off"))
        else:
            searched.append(slug)
    return searched, skipped
