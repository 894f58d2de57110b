"""SQLite FTS5 with the trigram tokenizer (SPEC T4): availability check, table, query building.

The trigram tokenizer indexes every run of three characters, so a quoted term of three or more
characters matches as a substring (case-insensitively), in any script. A shorter term has no
trigram and cannot use the index: callers use the LIKE path (``like_pattern``) for such a query.

Every term is quoted on its own (``quote_term``) before terms are joined with ``OR``/``AND``
(``match_expression``), so ``AND``, ``OR``, ``NEAR``, ``*``, ``"`` or parentheses inside a term are
text, never FTS5 syntax.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Iterable, Sequence

TRIGRAM_MIN_CHARS = 3
"""A term shorter than this has no trigram and cannot be matched through the index."""

LIKE_ESCAPE = "\\"
"""The escape character used by ``like_pattern``; write ``... LIKE ? ESCAPE '\\'`` in SQL."""

MATCH_OPERATORS: dict[str, str] = {"any": "OR", "all": "AND"}
"""Match mode -> the operator joining the quoted terms (SPEC T3)."""

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROBE = "_searchkit_fts5_probe"

INSTALL_HINT = (
    "SQLite FTS5 with the trigram tokenizer (SQLite >= 3.34 built with FTS5) is required; "
    "use a Python whose sqlite3 module is linked against such a SQLite."
)


def fts5_available(conn: sqlite3.Connection | None = None) -> bool:
    """True when FTS5 with the trigram tokenizer works on ``conn`` (or on a fresh in-memory one).

    The probe creates and drops a table in the connection's ``temp`` schema; the main
    database is never written.
    """
    own = conn is None
    c = sqlite3.connect(":memory:") if conn is None else conn
    try:
        c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_PROBE} USING fts5(x, tokenize='trigram')")
        c.execute(f"DROP TABLE IF EXISTS temp.{_PROBE}")
        return True
    except sqlite3.Error:
        return False
    finally:
        if own:
            c.close()


def _ident(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError(f"{what} must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*), got {name!r}")
    return name


def create_trigram_table(conn: sqlite3.Connection, name: str, columns: Sequence[str] = ("text",)) -> bool:
    """Create (if missing) an FTS5 table ``name`` over ``columns`` with ``tokenize='trigram'``;
    True when this call created it, False when it was there.

    Raises:
        RuntimeError: FTS5 or the trigram tokenizer is not available (message says what to install).
    """
    if not columns:
        raise ValueError("columns must name at least one column")
    cols = ", ".join(_ident(c, "column name") for c in columns)
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (_ident(name, "table name"),)
    ).fetchone()
    if exists:
        return False
    if not fts5_available(conn):
        raise RuntimeError(f"cannot create FTS table {name!r}: {INSTALL_HINT}")
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5({cols}, tokenize='trigram')")
    return True


def quote_term(term: str) -> str:
    """Quote one term as an FTS5 string: wrap in ``"`` and double every ``"`` inside.

    >>> quote_term('say "hi" OR')
    '"say ""hi"" OR"'
    """
    if not isinstance(term, str) or not term:
        raise ValueError(f"term must be a non-empty string, got {term!r}")
    if "\x00" in term:
        raise ValueError("term must not contain NUL characters")
    return '"' + term.replace('"', '""') + '"'


def match_operator(mode: str) -> str:
    """The operator for a match mode; an unknown mode raises ``ValueError`` listing valid ones."""
    try:
        return MATCH_OPERATORS[mode]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown match mode {mode!r}; valid: {', '.join(sorted(MATCH_OPERATORS))}"
        ) from None


def needs_like(terms: Iterable[str]) -> bool:
    """True when any term is shorter than ``TRIGRAM_MIN_CHARS`` (the query must use LIKE)."""
    return any(len(t) < TRIGRAM_MIN_CHARS for t in terms)


def match_expression(terms: Sequence[str], mode: str = "any") -> str:
    """The FTS5 MATCH string for ``terms``: each quoted on its own, joined by OR (any) / AND (all).

    Raises ``ValueError`` for no terms or a term too short for the trigram index: such a
    query has to run on the LIKE path, never as a MATCH that would match everything.
    """
    op = match_operator(mode)
    if not terms:
        raise ValueError("at least one term is required")
    short = [t for t in terms if len(t) < TRIGRAM_MIN_CHARS]
    if short:
        raise ValueError(
            f"terms shorter than {TRIGRAM_MIN_CHARS} characters cannot use the trigram index: {short!r}; "
            "use the LIKE path"
        )
    return f" {op} ".join(quote_term(t) for t in terms)


def like_pattern(term: str) -> str:
    """A ``%term%`` LIKE pattern with ``%``, ``_`` and the escape character escaped.

    Use with ``LIKE ? ESCAPE '\\'``.
    """
    if not isinstance(term, str) or not term:
        raise ValueError(f"term must be a non-empty string, got {term!r}")
    escaped = (
        term.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", LIKE_ESCAPE + "%").replace("_", LIKE_ESCAPE + "_")
    )
    return f"%{escaped}%"
