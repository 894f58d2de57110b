"""The loader of a space's ``app.sqlite`` tables (SPEC H1, H2; part of ``searchkit.ingest.workspace``):
the database opened read-only (``immutable``, or a private copy when a journal lies beside it), the
tables the policy allows, the newest rows of each, secret cells left out or redacted. ``read_row``
reads one row as the workspace has it now through the same guards and checks (issue 39 item 11).
"""
from __future__ import annotations

import errno
import os
import re
import sqlite3
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from searchkit.ingest.policy import Policy
from searchkit.ingest.workspace.collect import _Collector, _Space, _guard, _redaction_detail
from searchkit.ingest.workspace.model import _bad_id_detail, _printable, plain_id
from searchkit.ingest.workspace.reading import (
    _OPEN_FLAGS, _hard_link_detail, _inside, _iso_day, _lkind, _special_detail,
)
from searchkit.records import Record


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _load_app(sp: _Space, out: _Collector) -> None:
    """Read ``.space/app.sqlite`` without writing anything into the workspace (``_opened_app``)."""
    with _opened_app(sp, out) as uri:
        if uri is not None:
            _read_app(uri, sp.slug, f"{sp.slug}/.space/app.sqlite", out)


@contextmanager
def _opened_app(sp: _Space, out: _Collector) -> Iterator[str | None]:
    """The URI ``.space/app.sqlite`` is read through, or None (and a skip) when it is not read.

    SQLite opening a WAL-mode database, even read-only, creates ``-wal`` / ``-shm`` beside it. So
    a database with no ``-wal`` / ``-journal`` beside it is opened ``immutable`` (nothing is ever
    written); one with a ``-wal`` (data not yet checkpointed) or a ``-journal`` is copied, with it,
    into a private temporary folder and the copy is read (and removed afterwards). What ingest
    reads and what a live read of one row (``read_row``) reads go through the same guards.
    """
    path = sp.meta / "app.sqlite"
    kind = _lkind(path)
    if kind == "missing":
        yield None
        return
    where = f"{sp.slug}/.space/app.sqlite"
    if kind == "link":
        out.skip(where, "symlink", "a link is never followed")
        yield None
        return
    if kind != "file":
        out.skip(where, "special_file", _special_detail(path))
        yield None
        return
    if not _inside(path, sp.real):
        out.skip(where, "symlink", "resolves outside its own space folder; never opened")
        yield None
        return
    links = _links(path)
    if links > 1:
        out.skip(where, "hard_link", _hard_link_detail(links))
        yield None
        return
    sides: dict[str, Path] = {}
    for suffix in ("-wal", "-shm", "-journal"):  # SQLite opens these too
        side = path.with_name(path.name + suffix)
        side_kind = _lkind(side)
        if side_kind == "link":
            out.skip(where, "symlink", f"app.sqlite{suffix} is a link; the database is not opened")
            yield None
            return
        if side_kind in ("special", "dir"):
            out.skip(where, "special_file", f"app.sqlite{suffix} is not a regular file; the database is not opened")
            yield None
            return
        if side_kind == "file":
            side_links = _links(side)
            if side_links > 1:
                out.skip(where, "hard_link", f"app.sqlite{suffix}: {_hard_link_detail(side_links)}; "
                                             "the database is not opened")
                yield None
                return
            sides[suffix] = side
    if "-wal" not in sides and "-journal" not in sides:
        yield Path(os.path.realpath(path)).as_uri() + "?mode=ro&immutable=1"
        return
    with tempfile.TemporaryDirectory(prefix="searchkit-app-") as tmp:
        copy = Path(tmp) / "app.sqlite"
        for src, dst in [(path, copy)] + [(sides[x], Path(tmp) / f"app.sqlite{x}") for x in ("-wal", "-journal")
                                           if x in sides]:
            problem = _copy_file(src, dst)
            if problem:
                out.skip(where, *problem)
                yield None
                return
        # a private copy: SQLite may replay its -wal / -journal and write beside it, in tmp only
        yield copy.as_uri()


def _links(path: Path) -> int:
    try:
        return os.lstat(path).st_nlink
    except OSError:
        return 1


def _copy_file(src: Path, dst: Path) -> tuple[str, str] | None:
    """Copy a regular file (never through a link); ``(rule, detail)`` when that cannot be done."""
    try:
        fd = os.open(src, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink", f"{src.name} is a link; the database is not opened"
        return "unreadable", f"{src.name}: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "special_file", f"{src.name} is not a regular file; the database is not opened"
        if st.st_nlink > 1:
            return "hard_link", f"{src.name}: {_hard_link_detail(st.st_nlink)}; the database is not opened"
        with open(dst, "wb") as target:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                target.write(chunk)
    except OSError as exc:
        return "unreadable", f"{src.name}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None


def _connect(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", "replace")  # a cell that is not UTF-8 never fails a table
    return conn


def _read_app(uri: str, slug: str, where: str, out: _Collector) -> None:
    try:
        conn = _connect(uri)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
        return
    try:
        _load_tables(conn, slug, where, out)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
    finally:
        conn.close()


def _catalogue(conn: sqlite3.Connection) -> tuple[list[str], set[str], dict[str, str]]:
    """The database's table names, its virtual tables and each table's type (``PRAGMA
    table_list``, SQLite >= 3.37: ``shadow`` names a virtual table's shadow tables); raises
    ``sqlite3.Error`` when the tables cannot be listed."""
    listed = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    names = [name for name, _ in listed]
    virtual = {name for name, sql in listed if isinstance(sql, str) and re.match(r"\s*CREATE\s+VIRTUAL\s", sql, re.I)}
    types: dict[str, str] = {}
    try:  # SQLite >= 3.37 names shadow tables itself
        types = {row[1]: row[2] for row in conn.execute("PRAGMA table_list") if row[0] == "main"}
    except sqlite3.Error:
        pass
    virtual |= {n for n, t in types.items() if t == "virtual"}
    return names, virtual, types


def _readable_columns(
    conn: sqlite3.Connection, table: str, virtual: set[str], types: dict[str, str], policy: Policy,
) -> tuple[list[str] | None, tuple[str, str] | None]:
    """``(columns, None)`` of a table the policy lets be read (it has an ``id`` column), else
    ``(None, (rule, detail))``: the one test of a table, for ingest and a live read alike (H2)."""
    if table in virtual:
        return None, ("virtual_table", "a virtual table mirrors or indexes other content; never indexed")
    if types.get(table) == "shadow":
        return None, ("shadow_table", "a shadow table of a virtual table")
    try:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})")]
    except sqlite3.Error as exc:
        return None, ("bad_sqlite", str(exc))
    ruled = policy.table_skip(table, cols, virtual)
    if ruled:
        return None, ruled
    if _column(cols, "id") is None:
        return None, ("no_id_column", f"columns: {cols}")
    return cols, None


def _load_tables(conn: sqlite3.Connection, slug: str, where: str, out: _Collector) -> None:
    policy = out.policy
    try:
        names, virtual, types = _catalogue(conn)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", f"cannot list tables: {exc}")
        return
    columns: dict[str, list[str]] = {}
    modified: dict[str, str | None] = {}
    for table in names:
        if not plain_id(table):
            out.skip(f"{where}:{_printable(table)}", "bad_id", _bad_id_detail("table name", table))
            continue
        label = f"{where}:{table}"
        cols, ruled = _readable_columns(conn, table, virtual, types, policy)
        if cols is None:
            assert ruled is not None  # no columns: the rule that refused them
            out.skip(label, *ruled)
            continue
        updated = _column(cols, "updated_at")
        try:
            newest = conn.execute(f"SELECT MAX({_quote(updated)}) FROM {_quote(table)}").fetchone()[0] if updated else None
        except sqlite3.Error as exc:
            out.skip(label, "bad_sqlite", str(exc))
            continue
        if updated is None:
            out.note(label, "no_updated_at", "ranked last among tables; newest rows taken by id")
        columns[table] = cols
        modified[table] = None if newest is None else str(newest)
    kept, dropped = policy.select_tables(modified)
    for table in dropped:
        out.skip(f"{where}:{table}", "table_cap",
                 f"newest updated_at {modified[table]}; only the {policy.max_tables} most recently modified tables")
    for table in kept:
        label = f"{where}:{table}"
        _guard(out, label, None, _load_rows, conn, slug, table, columns[table], label, out)


def _column(cols: list[str], name: str) -> str | None:
    return next((c for c in cols if c.lower() == name), None)


def _shown_columns(cols: list[str], label: str, out: _Collector) -> list[str]:
    """The columns a row's card holds: every one but the secret-like (each a ``secret_column`` skip)."""
    shown: list[str] = []
    for col in cols:
        if out.policy.secret_column(col):
            out.skip(f"{label}.{col}", "secret_column", f"column {col!r} is secret-like; never indexed")
        else:
            shown.append(col)
    return shown


def _cells_select(shown: list[str], cap: int) -> str:
    """The select list of a row's cells: a cell over the cap is never fetched (NULL in its place),
    and each cell's length beside it."""
    return ", ".join(
        f"CASE WHEN length({_quote(c)}) > {cap} THEN NULL ELSE {_quote(c)} END, length({_quote(c)})" for c in shown
    )


def _load_rows(conn: sqlite3.Connection, slug: str, table: str, cols: list[str], label: str, out: _Collector) -> None:
    policy = out.policy
    shown = _shown_columns(cols, label, out)
    id_col = _column(cols, "id")
    assert id_col is not None  # _readable_columns keeps only tables with an id column
    updated = _column(cols, "updated_at")
    order = f"{_quote(updated)} DESC, {_quote(id_col)} DESC" if updated else f"{_quote(id_col)} DESC"
    try:
        total = conn.execute(f"SELECT COUNT(*) FROM {_quote(table)}").fetchone()[0]
        rows = conn.execute(
            f"SELECT {_cells_select(shown, policy.max_cell_chars)} FROM {_quote(table)} ORDER BY {order} LIMIT ?",
            (policy.max_rows,),
        ).fetchall()
    except sqlite3.Error as exc:
        out.skip(label, "bad_sqlite", str(exc))
        return
    if total > policy.max_rows:
        out.skip(label, "row_cap", f"{total - policy.max_rows} of {total} rows beyond the {policy.max_rows} newest")
    for row in rows:
        _take_row(slug, table, shown, id_col, updated, row, label, out)


def _take_row(
    slug: str, table: str, shown: list[str], id_col: str, updated: str | None, row: Sequence[Any], label: str,
    out: _Collector,
) -> None:
    """One fetched row (``_cells_select``'s values) into its card: cells over the cap left out,
    secret cells left out or redacted (``_sniff_cells``), the card added (``_add_row``)."""
    cap = out.policy.max_cell_chars
    values = dict(zip(shown, row[0::2]))
    lengths = dict(zip(shown, row[1::2]))
    row_id = values.get(id_col)
    if row_id is None:
        if (lengths.get(id_col) or 0) > cap:
            out.skip(label, "too_large", f"a row whose id is longer than max_cell_chars {cap}")
        else:
            out.skip(label, "bad_shape", "a row with a NULL id")
        return
    if not plain_id(row_id):
        out.skip(label, "bad_id", _bad_id_detail("row id", row_id))
        return
    where = f"{label}#{row_id}"
    for col, length in lengths.items():
        if isinstance(length, int) and length > cap and values.get(col) is None:
            out.skip(f"{where}.{col}", "too_large", f"a cell of {length} characters > max_cell_chars {cap}; "
                                                    "left out of the card")
    footer = f"Table: {table} ({', '.join(shown)})"  # H4
    _guard(out, where, None, _sniff_cells, values, id_col, label, row_id, out)
    _guard(out, where, None, _add_row, slug, table, shown, values, id_col, updated, footer, where, out)


def _sniff_cells(values: dict[str, Any], id_col: str, label: str, row_id: object, out: _Collector) -> None:
    """Cell contents are checked as file contents are (H2): a cell that is key material (a private
    key block, a service-account key, a dotenv file with a secret, ...) is left out of its row's
    card (``secret_content``); other secrets in a cell (a credential URL, a provider token, a JWT,
    ``password: …``) are replaced by ``[redacted]`` (noted ``redacted``). The report names
    ``TABLE.COLUMN#ROW``, never the value."""
    for col, value in list(values.items()):
        if col == id_col or not isinstance(value, str) or not value.strip():
            continue
        where = f"{label}.{col}#{row_id}"
        secret = out.verdicts.secret_content(value)
        if secret:
            values[col] = None
            out.skip(where, "secret_content", f"the cell holds {secret}; left out of the card")
            continue
        redacted, counts = out.verdicts.redact_secrets(value)
        if counts:
            values[col] = redacted
            out.note(where, "redacted", _redaction_detail(counts))


def _add_row(
    slug: str, table: str, shown: list[str], values: dict[str, Any], id_col: str, updated: str | None,
    footer: str, where: str, out: _Collector,
) -> None:
    row_id = values.get(id_col)
    lines = [f"{c}: {_cell(v)}" for c, v in values.items() if v is not None and not isinstance(v, bytes)]
    lines.append(footer)
    stamp = values.get(updated) if updated else None
    fields: dict[str, Any] = {"table": table, "columns": tuple(shown), "row_id": row_id,
                              "source_path": ".space/app.sqlite"}
    if stamp is not None:
        fields["updated_at"] = str(stamp)
    out.add(
        kind="app", space=slug, key=f"{table}#{row_id}", ref=f"app:{table}#{row_id}",
        date=_iso_day(str(stamp)) if stamp is not None else None, title=f"{table} #{row_id}",
        text="\n".join(lines), where=where, fields=fields,
    )


def _cell(value: object) -> str:
    return str(value).replace("\r\n", "\n").strip()


@dataclass(frozen=True)
class LiveRow:
    """One row of a space's table as the workspace has it now (``read_row``; issue 39 item 11).

    ``state``: ``found`` (``record``: the row's card, made, capped and redacted exactly as ingest
    makes it), ``gone`` (no ``app.sqlite``, no such table, or no row with this id now),
    ``refused`` (the never-index rules leave the table out now: nothing of it is read) or
    ``unreadable`` (the database or the table cannot be read now, more than one row has this id,
    or its card cannot be made). ``why``: the rule behind it, never a value or a path."""

    state: str
    record: Record | None = None
    why: str = ""


def read_row(sp: _Space, table: str, row_id: str, out: _Collector) -> LiveRow:
    """The row ``row_id`` of ``table`` in the space's ``app.sqlite`` now, through ingest's own
    guards and checks: the database opened read-only as ingest opens it (``_opened_app``), the
    table tested as ingest tests it (``_readable_columns``: a table the rules never index is not
    read), secret-like columns never fetched, the card made by ``_take_row`` into ``out``."""
    before = len(out.skips)
    with _opened_app(sp, out) as uri:
        if uri is None:
            fresh = out.skips[before:]
            return LiveRow("unreadable", why=fresh[0].rule) if fresh else LiveRow("gone", why="no app.sqlite")
        try:
            conn = _connect(uri)
        except sqlite3.Error:
            return LiveRow("unreadable", why="bad_sqlite")
        try:
            return _read_one(conn, sp.slug, table, row_id, out)
        except sqlite3.Error:
            return LiveRow("unreadable", why="bad_sqlite")
        finally:
            conn.close()


def _read_one(conn: sqlite3.Connection, slug: str, table: str, row_id: str, out: _Collector) -> LiveRow:
    names, virtual, types = _catalogue(conn)
    if table not in names:
        return LiveRow("gone", why="no such table")
    if not plain_id(table):
        return LiveRow("refused", why="bad_id")
    cols, ruled = _readable_columns(conn, table, virtual, types, out.policy)
    if cols is None:
        rule = ruled[0] if ruled else "bad_sqlite"
        return LiveRow("unreadable" if rule == "bad_sqlite" else "refused", why=rule)
    label = f"{slug}/.space/app.sqlite:{table}"
    shown = _shown_columns(cols, label, out)
    id_col = _column(cols, "id")
    assert id_col is not None  # _readable_columns keeps only tables with an id column
    keys = _id_keys(row_id)
    rows = conn.execute(
        f"SELECT {_cells_select(shown, out.policy.max_cell_chars)} FROM {_quote(table)} "
        f"WHERE {_quote(id_col)} IN ({', '.join('?' for _ in keys)})", keys,
    ).fetchall()
    at = 2 * shown.index(id_col)
    rows = [r for r in rows if r[at] is not None and not isinstance(r[at], bytes) and str(r[at]) == row_id]
    if not rows:
        return LiveRow("gone", why="no such row")
    if len(rows) > 1:
        return LiveRow("unreadable", why="duplicate_id")
    before = len(out.skips)
    _take_row(slug, table, shown, id_col, _column(cols, "updated_at"), rows[0], label, out)
    record = out.records.get(f"{slug}/app:{table}#{row_id}")
    if record is None:
        fresh = out.skips[before:]
        return LiveRow("unreadable", why=fresh[-1].rule if fresh else "not made")
    return LiveRow("found", record)


def _id_keys(row_id: str) -> list[Any]:
    """What a row id of a ref (its text) may be stored as: the text, an integer, a real."""
    keys: list[Any] = [row_id]
    if re.fullmatch(r"-?\d{1,19}", row_id) and -(2 ** 63) <= int(row_id) < 2 ** 63:
        keys.append(int(row_id))
    elif re.fullmatch(r"-?\d+\.\d+(e[-+]?\d+)?", row_id):
        keys.append(float(row_id))
    return keys
