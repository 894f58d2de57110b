"""The ``app_row`` tool (issue 30; seed 000: ``app:<table>#<id>`` — one row of that table; «берите
цифры из таблицы, а не из карточки»): open a table row's card by its ref.

It returns the row as its table has it now (issue 39 item 11; :mod:`searchkit.tools.live_read`):
each column's value (secret-like columns never, H2; values redacted as ingest redacts them), ending
with the table's name and its columns (H4), and says when the row changed since it was indexed
(``changed``), is no longer in the table (``gone``), is in a table the never-index rules leave out
now (``withheld``) or could not be read now, so that the values are the index's copy
(``as_indexed``). The ref is opened under history search's privacy rules
(:mod:`searchkit.tools.opening`): a row of a space the caller may not read answers like a row that
does not exist. Take figures from here, not from a card's snippet (which may be cut or stale).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from searchkit.errors import ParameterError
from searchkit.tools.base import ToolContext
from searchkit.tools.cards import ref_field, shown, title_field
from searchkit.tools.live_read import FRESHNESS, LIVE, live_row
from searchkit.tools.messages import LANGS, message
from searchkit.tools.opening import open_ref
from searchkit.tools.outputs import output_data
from searchkit.tools.terminal import one_line, plain_text

ROW_CHARS = 8000
"""A row's text beyond this is cut (the answer says by how much)."""

PREFIX = "app:"


@dataclass(frozen=True)
class AppRowParams:
    """Open one row of a space's data table by its ref (app:<table>#<id>, as a card shows it): every
    column's value as the table has it now, and the table's name and columns; the answer says when
    the row changed or is gone since it was indexed."""

    ref: str = field(metadata={"doc": "The row's ref, app:<table>#<id>."})
    in_space: str | None = field(default=None, metadata={
        "doc": "The space a card named (space: <slug>) when it is not the current space; you must be a member."})


@dataclass(frozen=True)
class AppRowData:
    """One table row as its table has it now: one "column: value" line each, then the table's name
    and columns. Take figures from here, not from a card's snippet."""

    ref: str
    space: str = field(metadata={"doc": "The slug of the row's space."})
    table: str | None
    id: str = field(metadata={"doc": "The row's id in its table."})
    date: str | None = field(metadata={"doc": "When the row was last updated (its updated_at)."})
    title: str
    columns: tuple[str, ...]
    text: str = field(metadata={"doc": "The row: a \"column: value\" line each (secret-like columns never), then "
                                       "\"Table: NAME (columns)\"."})
    cut: int = field(metadata={"doc": "Characters cut from the end of text (0: none)."})
    freshness: str = field(metadata={"choices": FRESHNESS, "doc": "live: read from the table now; changed: changed "
                                                                  "since it was indexed (shown as it is now); gone: "
                                                                  "deleted since; withheld: its table is left out "
                                                                  "now; as_indexed: the table could not be read now "
                                                                  "(the index's copy, maybe stale)."})


@dataclass(frozen=True)
class AppRowAnswer:
    """What ``app_row`` returns: the row's ref, space, table, id, date and title, its text (one
    ``column: value`` line each, then ``Table: NAME (columns)``), the characters cut from it, and
    how the row read now compares with the index's copy (``freshness``: ``live``, ``changed``,
    ``gone``, ``withheld`` or ``as_indexed``; :mod:`searchkit.tools.live_read`)."""

    ref: str
    space: str
    table: str | None
    row_id: str
    date: str | None
    title: str
    text: str
    lang: str
    columns: tuple[str, ...] = ()
    cut: int = 0
    freshness: str = LIVE

    Output = AppRowData

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        """The answer as plain JSON data (``AppRowData``; the rendered text is ``render()``)."""
        return output_data(AppRowData(ref=self.ref, space=self.space, table=self.table, id=self.row_id,
                                      date=self.date, title=self.title, columns=self.columns, text=self.text,
                                      cut=self.cut, freshness=self.freshness))

    def render(self, lang: str | None = None) -> str:
        """The row as text, in ``lang`` (``ru``, ``en``, ``ja``; None: the answer's own)."""
        if lang is not None and lang not in LANGS:
            raise ParameterError("lang", f"must be one of {list(LANGS)}, got {shown(lang)}")
        lang = lang or self.lang
        date = one_line((self.date or "")[:10]) or "—"
        lines = [f"{ref_field(self.ref)} · {date} · {title_field(self.title)} (space: {one_line(self.space)})"]
        if self.freshness != LIVE:
            lines.append(message(lang, f"row.{self.freshness}"))
        if self.text:
            lines.extend(plain_text(self.text).split("\n"))
        if self.cut:
            lines.append(message(lang, "row.cut", n=f"{self.cut:,}"))
        return "\n".join(lines) + "\n"


def run(params: AppRowParams, ctx: ToolContext) -> AppRowAnswer:
    """app_row for the caller of ``ctx`` over ``ctx.index``, the row read from its table now;
    ``ParameterError`` naming the parameter on bad input or a row the caller cannot read (the same
    message whether it exists)."""
    opened = open_ref(ctx, params.ref, "app", "table row", params.in_space)
    indexed = opened.record
    now = live_row(ctx.index, opened)
    r = now.record or indexed
    full = now.record.text if now.record is not None else ""
    table = indexed.fields.get("table")
    columns = r.fields.get("columns") or ()
    row_id = indexed.ref[len(PREFIX):].rpartition("#")[2]
    text = full[:ROW_CHARS]
    return AppRowAnswer(
        ref=indexed.ref, space=opened.space, table=table if isinstance(table, str) else None, row_id=row_id,
        date=r.date, title=r.title, text=text, lang=opened.lang, columns=tuple(str(c) for c in columns),
        cut=len(full) - len(text), freshness=now.freshness,
    )
