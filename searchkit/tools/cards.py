"""The history answer (SPEC H8-H13, seed 000): its cards, their snippets, and the text the seed shows.

``Card`` is one hit and the snippet it shows (H9: the whole matched passage for the top three, the
first 300 characters for the others; a digest's ``Chat: chat:<ses_id>`` line and a table row's
``Table: ...`` line always end it, H4, H5). ``HistoryAnswer`` is one search's answer:
``to_dict()`` (what ``--json`` prints) and ``render(lang)`` (header line, warnings, numbered
cards, reminder). ``session_key`` groups a chat and the digests of its turns (two cards a session
at most, issue 28 item 4). Every field of a card line passes through ``tools.terminal.one_line``
and every snippet line through the one sanitiser (``searchkit.strict_json.safe_text``): no control
character of the data reaches the terminal (issue 27 item 16, issue 39 item 3); ``to_dict`` is
sanitised the same way (``safe_data``), so ``--json``, MCP and the HTTP API hold none either.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from searchkit.errors import ParameterError
from searchkit.records import KINDS, Hit, Notice, Record, Result
from searchkit.strict_json import safe_data, safe_text
from searchkit.tools.messages import LANGS, message
from searchkit.tools.outputs import explain_only, output_data
from searchkit.tools.terminal import one_line

TOP_FULL = 3
FULL_CHARS = 1500
SHORT_CHARS = 300


@dataclass(frozen=True)
class CardData:
    """One card: what it is, where it points and the passage it matched."""

    rank: int = field(metadata={"doc": "Its place in the answer, 1 first."})
    kind: str = field(metadata={"choices": KINDS, "doc": "What it is: digest (a past turn's summary), chat, log (a "
                                                         "day of log.md), file, source, page (a dashboard or "
                                                         "report) or app (a table row)."})
    date: str = field(metadata={"doc": "Its day (YYYY-MM-DD); empty when it has none."})
    title: str
    ref: str = field(metadata={"doc": "What to open: chat:<ses_id> (chat_read), app:<table>#<id> (app_row), a file "
                                      "path, log.md#YYYY-MM-DD, digest:<turn_id>, source:<uuid>, page:<uuid>."})
    space: str = field(metadata={"doc": "The slug of the space it belongs to."})
    snippet: str = field(metadata={"doc": "The matched passage: whole (up to 1,500 characters) for the top three "
                                          "cards, its first 300 for the others."})
    chat: str | None = field(metadata={"doc": "A digest's chat (its ses_id: open chat:<ses_id> with chat_read)."})
    table: str | None = field(metadata={"doc": "A table row's table."})
    score: float = field(default=0.0, metadata=explain_only("The fused score that ordered the cards."))
    scores: Mapping[str, float] = field(default_factory=dict, metadata=explain_only(
        "Each retriever's score for it (bm25, dense, ...)."))
    ranks: Mapping[str, int] = field(default_factory=dict, metadata=explain_only("Each retriever's rank for it."))
    stages: Mapping[str, float] = field(default_factory=dict, metadata=explain_only(
        "Its score after each ranking stage."))


@dataclass(frozen=True)
class Card:
    """One rendered card: the hit and the snippet it shows (H9)."""

    hit: Hit
    snippet: str

    Output = CardData

    def data(self) -> CardData:
        """The card as its output dataclass."""
        r = self.hit.record
        return CardData(
            rank=self.hit.rank, kind=r.kind, date=(r.date or "")[:10], title=r.title, ref=r.ref, space=r.space,
            snippet=self.snippet, chat=r.fields.get("chat") if r.kind == "digest" else None,
            table=r.fields.get("table") if r.kind == "app" else None,
            score=self.hit.score, scores=dict(self.hit.scores), ranks=dict(self.hit.ranks), stages=dict(self.hit.stages),
        )

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """The card as plain data (a ``cards`` item of the answer's ``to_dict``); the scores only
        when ``explain``."""
        return output_data(self.data(), explain)


@dataclass(frozen=True)
class SkippedSpace:
    """A space the search did not cover, and why."""

    space: str
    reason: str = field(metadata={"doc": "not_member (you are not a member now, or no such space), "
                                         "history_search_off, space_limit (over 60 spaces) or access_unknown."})


@dataclass(frozen=True)
class WarningData:
    """A warning shown above the cards."""

    code: str = field(metadata={"doc": "weak_match: no card stands out from the rest (what a search looks like when "
                                       "the space has no record of it); missing_ids: a task or document number of "
                                       "the query that no card mentions."})
    message: str
    ids: tuple[str, ...] = field(metadata={"doc": "missing_ids: the numbers no card mentions (else empty)."})
    detail: Mapping[str, Any] = field(default_factory=dict, metadata=explain_only("The figures behind it."))

    @classmethod
    def of(cls, notice: Notice) -> "WarningData":
        ids = notice.detail.get("ids") if notice.code == "missing_ids" else None
        return cls(notice.code, notice.message, tuple(str(i) for i in ids or ()), dict(notice.detail))


@dataclass(frozen=True)
class HistoryData:
    """The cards of one history search, by relevance, with the spaces searched and skipped and the
    warnings above them. A card is a hint: open its ref before relying on a detail."""

    query: str
    lang: str = field(metadata={"doc": "The language of the answer's text (ru, en, ja)."})
    searched: tuple[str, ...] = field(metadata={"doc": "The spaces searched."})
    skipped: tuple[SkippedSpace, ...]
    warnings: tuple[WarningData, ...]
    cards: tuple[CardData, ...]
    signals: Mapping[str, float] = field(default_factory=dict, metadata=explain_only(
        "The score-shape features and the probability behind the weak-match warning."))


@dataclass(frozen=True)
class HistoryAnswer:
    """The structured result and the rendered text of one history search.

    ``text`` is the answer rendered in ``lang`` (the language the search chose: the caller's, else
    the query's); ``render(other)`` writes it in another language from the same parts: the
    ``searched`` and ``skipped`` spaces, the caller's ``own`` searchable spaces (told when nothing
    could be searched) and whether the header line is shown (``header_shown``, H14)."""

    result: Result
    cards: tuple[Card, ...]
    text: str
    lang: str
    searched: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    own: tuple[str, ...] | None = None
    header_shown: bool = False

    def render(self, lang: str | None = None) -> str:
        """The answer as the seed shows it, in ``lang`` (``ru``, ``en``, ``ja``; None: ``self.lang``)."""
        if lang is None or lang == self.lang:
            return safe_text(self.text)
        if lang not in LANGS:
            raise ParameterError("lang", f"must be one of {list(LANGS)}, got {shown(lang)}")
        header = _header(lang, self.searched, self.skipped, self.own) if self.header_shown else []
        return render(self.result, self.cards, lang, header, searched=bool(self.searched))

    Output = HistoryData

    def data(self) -> HistoryData:
        """The answer as its output dataclass (:mod:`searchkit.tools.outputs`)."""
        return HistoryData(
            query=self.result.query, lang=self.lang, searched=tuple(self.searched),
            skipped=tuple(SkippedSpace(s, r) for s, r in self.skipped),
            warnings=tuple(WarningData.of(w) for w in self.result.warnings),
            cards=tuple(c.data() for c in self.cards), signals=dict(self.result.signals),
        )

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """What ``searchkit history --json`` prints and a served call's structured result holds
        (sanitised: ``safe_data``): the cards, spaces and warnings; the scores and signals only
        when ``explain``; never the rendered text (``render``)."""
        return safe_data(output_data(self.data(), explain))


def shown(value: object, limit: int = 60) -> str:
    """A bad value as an error message may show it: its ``repr``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."



def _snippet(hit: Hit, *, full: bool) -> str:
    """The matched passage, cut to 1,500 (top three) or 300 characters (H9); a digest's
    ``Chat: chat:<ses_id>`` line (H5) and a table row's ``Table: …`` line (H4) always end it."""
    p = hit.passage
    r = hit.record
    text = r.text[p.start:p.end] if p.end > p.start else p.text
    footer = pointer_line(r)
    if footer:
        body = text.rstrip()
        if body.endswith(footer):
            body = body[: -len(footer)]
        text = body
    text = text.strip()
    n = FULL_CHARS if full else SHORT_CHARS
    if len(text) > n:
        text = text[:n].rstrip() + "…"
    if footer:
        return f"{text}\n{footer}" if text else footer
    return text


def pointer_line(record: Record) -> str | None:
    """The line that points from a card to its source and must survive any cut: ``Chat:
    chat:<ses_id>`` for a digest (H5), ``Table: NAME (columns)`` for a table row (H4)."""
    last = record.text.rstrip().rsplit("\n", 1)[-1].strip()
    if record.kind == "digest":
        if last.startswith("Chat: chat:"):
            return last
        chat = record.fields.get("chat")
        return f"Chat: chat:{chat}" if chat else None
    if record.kind == "app":
        if last.startswith("Table: "):
            return last
        table = record.fields.get("table")
        if table:
            cols = record.fields.get("columns") or ()
            return f"Table: {table} ({', '.join(str(c) for c in cols)})"
    return None


def session_key(hit: Hit) -> tuple[str, str] | None:
    """The session a card belongs to, ``(space, ses_id)``, for a chat (its ``ses_id``) and a
    digest (the chat its ``Chat: chat:<ses_id>`` line names, H5); None for every other kind.
    The history tool shows at most two cards per session, the second only when close enough
    (issue 28 item 4; issue 11 item 3 had one)."""
    return _record_session(hit.record)


def _record_session(r: Record) -> tuple[str, str] | None:
    """``session_key`` of a record."""
    ses: Any = None
    if r.kind == "chat":
        ses = r.fields.get("ses_id") or (r.ref[len("chat:"):] if r.ref.startswith("chat:") else None)
    elif r.kind == "digest":
        ses = r.fields.get("chat")
        if not ses:
            line = pointer_line(r)
            ses = line[len("Chat: chat:"):].strip() if line else None
    return (r.space, str(ses)) if ses else None


_line = one_line
"""``text`` as part of one line (``searchkit.tools.terminal``, shared with task search): control
characters and line breaks (a title holding a newline could otherwise forge a card or a reminder
line) become one space, bidi controls go."""


def _header(
    lang: str, searched: Sequence[str], skipped: Sequence[tuple[str, str]], own: Sequence[str] | None = None
) -> list[str]:
    searched = [_line(s) for s in searched]
    skipped = [(_line(s), r) for s, r in skipped]
    own = None if own is None else [_line(s) for s in own]
    first = message(lang, "searched", spaces=", ".join(searched)) if searched else message(lang, "searched_none")
    sep = message(lang, "sentence_sep")  # a space between sentences; none in Japanese
    if skipped:
        items = message(lang, "skip_sep").join(message(lang, reason, slug=slug) for slug, reason in skipped)
        first += sep + message(lang, "skipped", items=items)
    if own is not None and not searched:
        first += sep + message(lang, "your_spaces", spaces=", ".join(own) or "—")
    return [first]


_CARD_SEP = re.compile("[\u00b7\u0387]")
"""The middle dot that separates a card line's fields (and U+0387, which NFKC makes one)."""


def _title(text: object) -> str:
    """A title as a card line's field: one line, and a middle dot in it becomes a bullet, so
    ``kind · date · title · ref`` always splits into its four fields (issue 28 item 8)."""
    return _CARD_SEP.sub("•", _line(text))


def title_field(text: object) -> str:
    """A title as one field of a `` · ``-separated line (a card's, and the first line of what
    ``chat_read`` and ``app_row`` open): one line, a middle dot in it a bullet."""
    return _CARD_SEP.sub("•", one_line(text))


_REF_QUOTED = re.compile("[`\u00b7\u0387]|\\(space:")
"""What makes a ref misreadable in a card line: a middle dot (the line's separator, U+0387 too), a
backtick (the quote below) or ``(space:`` (the space field's opening)."""
_BACKTICKS = re.compile("`+")


def ref_field(ref: object) -> str:
    """A ref as the card line's fourth field (issue 39 item 12a). A ref is passed on as it is
    (``chat_read``, ``app_row``), so it cannot be changed like a title: a ref holding a middle dot,
    a backtick or ``(space:`` is shown as a markdown code span, whose content is the ref exactly
    (a fence of one backtick more than the longest run in the ref; a space on each side when the
    ref starts or ends with a backtick, as CommonMark reads a code span). Any other ref is shown as
    it is. ``to_dict()["ref"]`` is always the bare ref."""
    text = _line(ref)
    if not _REF_QUOTED.search(text):
        return text
    fence = "`" * (1 + max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(
    result: Result, cards: Sequence[Card], lang: str, header: Sequence[str] = (), *, searched: bool = True
) -> str:
    """The answer as the seed shows it: header line, warnings, numbered cards, reminder."""
    lines = list(header)
    for w in result.warnings:
        if w.code == "weak_match":
            lines.append(message(lang, "weak_match"))
        elif w.code == "missing_ids":
            ids = message(lang, "id_sep").join(_line(i) for i in w.detail.get("ids", ()))
            lines.append(message(lang, "missing_ids", ids=ids))
    if not cards:
        if searched:
            lines.append(message(lang, "nothing"))
        return "\n".join(lines) + "\n"
    if lines:  # a blank line between the header or warnings and the cards; none at the top
        lines.append("")
    for c in cards:
        r = c.hit.record
        date = _line((r.date or "")[:10]) or "—"
        lines.append(f"{c.hit.rank}. {_line(r.kind)} · {date} · {_title(r.title)} · {ref_field(r.ref)} (space: {_line(r.space)})")
        for sl in safe_text(c.snippet).split("\n"):
            lines.append("   " + sl if sl.strip() else "")
    lines.append("")
    lines.append(message(lang, "reminder"))
    return "\n".join(lines) + "\n"
