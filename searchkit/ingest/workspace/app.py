"""The loader of a space's ``app.sqlite`` tables (SPEC H1, H2; part of ``searchkit.ingest.workspace``):
the database opened read-only (``immutable``, or a private copy when a journal lies beside it), the
tables the policy allows, the newest rows of each, secret cells left out or redacted.
"""
from __future__ import annotations

import errno
import os
import re
import sqlite3
import stat
import tempfile
from pathlib import Path
from typing import Any

from searchkit.ingest.workspace.collect import _Collector, _Space, _guard, _redaction_detail
from searchkit.ingest.workspace.model import _bad_id_detail, _printable, plain_id
from searchkit.ingest.workspace.reading import (
    _OPEN_FLAGS, _hard_link_detail, _inside, _iso_day, _lkind, _special_detail,
)



def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _load_app(sp: _Space, out: _Collector) -> None:
    """Read ``.space/app.sqlite`` without writing anything into the workspace.

    SQLite opening a WAL-mode database, even read-only, creates ``-wal`` / ``-shm`` beside it. So
    a database with no ``-wal`` / ``-journal`` beside it is opened ``immutable`` (nothing is ever
    written); one with a ``-wal`` (data not yet checkpointed) or a ``-journal`` is copied, with it,
    into a private temporary folder and the copy is read (and removed afterwards).
    """
    path = sp.meta / "app.sqlite"
    kind = _lkind(path)
    if kind == "missing":
        return
    where = f"{sp.slug}/.space/app.sqlite"
    if kind == "link":
        out.skip(where, "symlink", "a link is never followed")
        return
    if kind != "file":
        out.skip(where, "special_file", _special_detail(path))
        return
    if not _inside(path, sp.real):
        out.skip(where, "symlink", "resolves outside its own space folder; never opened")
        return
    links = _links(path)
    if links > 1:
        out.skip(where, "hard_link", _hard_link_detail(links))
        return
    sides: dict[str, Path] = {}
    for suffix in ("-wal", "-shm", "-journal"):  # SQLite opens these too
        side = path.with_name(path.name + suffix)
        side_kind = _lkind(side)
        if side_kind == "link":
            out.skip(where, "symlink", f"app.sqlite{suffix} is a link; the database is not opened")
            return
        if side_kind in ("special", "dir"):
            out.skip(where, "special_file", f"app.sqlite{suffix} is not a regular file; the database is not opened")
            return
        if side_kind == "file":
            side_links = _links(side)
            if side_links > 1:
                out.skip(where, "hard_link", f"app.sqlite{suffix}: {_hard_link_detail(side_links)}; "
                                             "the database is not opened")
                return
            sides[suffix] = side
    if "-wal" not in sides and "-journal" not in sides:
        _read_app(Path(os.path.realpath(path)).as_uri() + "?mode=ro&immutable=1", sp.slug, where, out)
        return
    with tempfile.TemporaryDirectory(prefix="searchkit-app-") as tmp:
        copy = Path(tmp) / "app.sqlite"
        for src, dst in [(path, copy)] + [(sides[x], Path(tmp) / f"app.sqlite{x}") for x in ("-wal", "-journal")
                                           if x in sides]:
            problem = _copy_file(src, dst)
            if problem:
                out.skip(where, *problem)
                return
        # a private copy: SQLite may replay its -wal / -journal and write beside it, in tmp only
        _read_app(copy.as_uri(), sp.slug, where, out)


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


def _read_app(uri: str, slug: str, where: str, out: _Collector) -> None:
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
        return
    conn.text_factory = lambda b: b.decode("utf-8", "replace")  # a cell that is not UTF-8 never fails a table
    try:
        _load_tables(conn, slug, where, out)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
    finally:
        conn.close()


def _load_tables(conn: sqlite3.Connection, slug: str, where: str, out: _Collector) -> None:
    policy = out.policy
    try:
        listed = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", f"cannot list tables: {exc}")
        return
    names = [name for name, _ in listed]
    virtual = {name for name, sql in listed if isinstance(sql, str) and re.match(r"\s*CREATE\s+VIRTUAL\s", sql, re.I)}
    types: dict[str, str] = {}
    try:  # SQLite >= 3.37 names shadow tables itself
        types = {row[1]: row[2] for row in conn.execute("PRAGMA table_list") if row[0] == "main"}
    except sqlite3.Error:
        pass
    virtual |= {n for n, t in types.items() if t == "virtual"}
    columns: dict[str, list[str]] = {}
    modified: dict[str, str | None] = {}
    for table in names:
        if not plain_id(table):
            out.skip(f"{where}:{_printable(table)}", "bad_id", _bad_id_detail("table name", table))
            continue
        label = f"{where}:{table}"
        if table in virtual:
            out.skip(label, "virtual_table", "a virtual table mirrors or indexes other content; never indexed")
            continue
        if types.get(table) == "shadow":
            out.skip(label, "shadow_table", "a shadow table of a virtual table")
            continue
        try:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})")]
        except sqlite3.Error as exc:
            out.skip(label, "bad_sqlite", str(exc))
            continue
        ruled = policy.table_skip(table, cols, virtual)
        if ruled:
            out.skip(label, *ruled)
            continue
        if _column(cols, "id") is None:
            out.skip(label, "no_id_column", f"columns: {cols}")
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


def _load_rows(conn: sqlite3.Connection, slug: str, table: str, cols: list[str], label: str, out: _Collector) -> None:
    policy = out.policy
    shown: list[str] = []
    for col in cols:
        if policy.secret_column(col):
            out.skip(f"{label}.{col}", "secret_column", f"column {col!r} is secret-like; never indexed")
        else:
            shown.append(col)
    id_col = _column(cols, "id")
    updated = _column(cols, "updated_at")
    order = f"{_quote(updated)} DESC, {_quote(id_col)} DESC" if updated else f"{_quote(id_col)} DESC"
    cap = policy.max_cell_chars
    # a cell over the cap is never fetched: NULL in its place, and its length beside it
    select = ", ".join(
        f"CASE WHEN length({_quote(c)}) > {cap} THEN NULL ELSE {_quote(c)} END, length({_quote(c)})" for c in shown
    )
    try:
        total = conn.execute(f"SELECT COUNT(*) FROM {_quote(table)}").fetchone()[0]
        rows = conn.execute(
            f"SELECT {select} FROM {_quote(table)} ORDER BY {order} LIMIT ?", (policy.max_rows,)
        ).fetchall()
    except sqlite3.Error as exc:
        out.skip(label, "bad_sqlite", str(exc))
        return
    if total > policy.max_rows:
        out.skip(label, "row_cap", f"{total - policy.max_rows} of {total} rows beyond the {policy.max_rows} newest")
    footer = f"Table: {table} ({', '.join(shown)})"  # H4
    for row in rows:
        values = dict(zip(shown, row[0::2]))
        lengths = dict(zip(shown, row[1::2]))
        row_id = values.get(id_col)
        if row_id is None:
            if (lengths.get(id_col) or 0) > cap:
                out.skip(label, "too_large", f"a row whose id is longer than max_cell_chars {cap}")
            else:
                out.skip(label, "bad_shape", "a row with a NULL id")
            continue
        if not plain_id(row_id):
            out.skip(label, "bad_id", _bad_id_detail("row id", row_id))
            continue
        where = f"{label}#{row_id}"
        for col, length in lengths.items():
            if isinstance(length, int) and length > cap and values.get(col) is None:
                out.skip(f"{where}.{col}", "too_large", f"a cell of {length} characters > max_cell_chars {cap}; "
                                                        "left out of the card")
        _guard(out, where, None, _sniff_cells, values, id_col, label, row_id, out)
        _guard(out, where, None, _add_row, slug, table, shown, values, id_col, updated, footer, where, out)


def _sniff_cells(values: dict[str, Any], id_col: str | None, label: str, row_id: Any, out: _Collector) -> None:
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
    slug: str, table: str, shown: list[str], values: dict[str, Any], id_col: str | None, updated: str | None,
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


def _cell(value: Any) -> str:
    return str(value).replace("\r\n", "\n").strip()
