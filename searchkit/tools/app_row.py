"""The ``app_row`` tool (issue 30; seed 000: ``app:<table>#<id>`` — one row of that table): open a
table row's card by its ref.

It returns the row as the history index holds it: each column's value (secret-like columns are
never indexed, H2; values redacted at ingest), ending with the table's name and its columns (H4),
under history search's privacy rules (:mod:`searchkit.tools.opening`): a row of a space the
caller may not read answers like a row that does not exist. Take figures from here, not from a
card's snippet (which may be cut).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from searchkit.errors import ParameterError
from searchkit.tools.base import ToolContext
from searchkit.tools.cards import shown, title_field
from searchkit.tools.messages import LANGS, message
from searchkit.tools.opening import open_ref
from searchkit.tools.terminal import one_line, plain_text

ROW_CHARS = 8000
"""A row's text beyond this is cut (the answer says by how much)."""

PREFIX = "app:"


@dataclass(frozen=True)
class AppRowParams:
    """Open one row of a space's data table by its ref (app:<table>#<id>, as a card shows it): every
    column's value as indexed, and the table's name and columns."""

    ref: str = field(metadata={"doc": "The row's ref, app:<table>#<id>."})
    in_space: str | None = field(default=None, metadata={
        "doc": "The space a card named (space: <slug>) when it is not the current space; you must be a member."})


@dataclass(frozen=True)
class AppRowAnswer:
    """What ``app_row`` returns: the row's ref, space, table, id, date and title, its text (one
    ``column: value`` line each, then ``Table: NAME (columns)``) and the characters cut from it."""

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

    def to_dict(self) -> dict[str, Any]:
        """The answer as plain JSON data."""
        return {"ref": self.ref, "space": self.space, "table": self.table, "id": self.row_id, "date": self.date,
                "title": self.title, "columns": list(self.columns), "text": self.text, "cut": self.cut,
                "rendered": self.render()}

    def render(self, lang: str | None = None) -> str:
        """The row as text, in ``lang`` (``ru``, ``en``, ``ja``; None: the answer's own)."""
        if lang is not None and lang not in LANGS:
            raise ParameterError("lang", f"must be one of {list(LANGS)}, got {shown(lang)}")
        lang = lang or self.lang
        date = one_line((self.date or "")[:10]) or "—"
        lines = [f"{one_line(self.ref)} · {date} · {title_field(self.title)} (space: {one_line(self.space)})"]
        lines.extend(plain_text(self.text).split("\n"))
        if self.cut:
            lines.append(message(lang, "row.cut", n=f"{self.cut:,}"))
        return "\n".join(lines) + "\n"


def run(params: AppRowParams, ctx: ToolContext) -> AppRowAnswer:
    """app_row for the caller of ``ctx`` over ``ctx.index``; ``ParameterError`` naming the
    parameter on bad input or a row the caller cannot read (the same message whether it exists)."""
    opened = open_ref(ctx, params.ref, "app", "table row", params.in_space)
    r = opened.record
    table = r.fields.get("table")
    columns = r.fields.get("columns") or ()
    row_id = r.ref[len(PREFIX):].rpartition("#")[2]
    text = r.text if len(r.text) <= ROW_CHARS else r.text[:ROW_CHARS]
    return AppRowAnswer(
        ref=r.ref, space=opened.space, table=table if isinstance(table, str) else None, row_id=row_id, date=r.date,
        title=r.title, text=text, lang=opened.lang, columns=tuple(str(c) for c in columns),
        cut=len(r.text) - len(text),
    )
