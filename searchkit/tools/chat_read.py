"""The ``chat_read`` tool (issue 30; seed 000: ``chat:<ses_id>`` — «прочитайте через chat_read»):
read a chat a card points to.

Without ``find`` it returns the chat's last messages; with ``find`` (an exact, case-sensitive
piece of a message's text: an id, a name or a number from a snippet) the newest messages holding
it, each with its neighbours. Every answer names the position ``before`` to page further back
and says where a message was cut and by how much. The chat is read from its file now (issue 39
item 11; :mod:`searchkit.tools.live_read`: a message added after indexing is read and found),
redacted as ingest redacts it, and the answer says when it changed since it was indexed
(``changed``) or could not be read now, so that it is the index's copy (``as_indexed``). It is
opened under history search's privacy rules (:mod:`searchkit.tools.opening`), and who may read it
is read again from the file its text comes from: a chat the caller may not read, or that is gone
or in doubt when it is read, answers like one that does not exist.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from searchkit.errors import ParameterError
from searchkit.records import Record
from searchkit.tools.base import ToolContext
from searchkit.tools.cards import shown, title_field
from searchkit.tools.live_read import FRESHNESS, LIVE, live_chat
from searchkit.tools.messages import LANGS, counted, message
from searchkit.tools.opening import open_ref
from searchkit.tools.outputs import output_data
from searchkit.tools.terminal import one_line, plain_text

DEFAULT_LIMIT = 20
MAX_LIMIT = 50
DEFAULT_FIND_LIMIT = 5
MAX_FIND_LIMIT = 10
DEFAULT_CONTEXT = 2
MAX_CONTEXT = 5
MESSAGE_CHARS = 1500
"""A message longer than this is cut (a match stays in view); the answer says by how much."""
ANSWER_CHARS = 24_000
"""The messages of one answer hold at most this many characters: older ones are left for the next
page (``before``)."""
MAX_FIND_CHARS = 200

PREFIX = "chat:"


@dataclass(frozen=True)
class ChatReadParams:
    """Read a chat by its ref (chat:<ses_id>, as a card or a digest's Chat: line shows it). Without
    find: its last messages. With find: the newest messages holding that exact text (case-sensitive,
    message text only), each with neighbours. Page back with before."""

    ref: str = field(metadata={"doc": "The chat's ref, chat:<ses_id>."})
    find: str | None = field(default=None, metadata={
        "doc": f"An exact piece of a message's text (an id, a name, a number from the snippet; case-sensitive, at "
               f"most {MAX_FIND_CHARS} characters): the newest messages holding it are returned with neighbours."})
    before: int | None = field(default=None, metadata={
        "lo": 1, "doc": "Only messages before this position (the answer names it to page further back)."})
    limit: int | None = field(default=None, metadata={
        "lo": 1, "hi": MAX_LIMIT,
        "doc": f"Messages, default {DEFAULT_LIMIT} (at most {MAX_LIMIT}); with find, matching messages, default "
               f"{DEFAULT_FIND_LIMIT} (at most {MAX_FIND_LIMIT})."})
    context: int | None = field(default=None, metadata={
        "lo": 0, "hi": MAX_CONTEXT,
        "doc": f"With find: neighbouring messages shown each side of a match, default {DEFAULT_CONTEXT}."})
    in_space: str | None = field(default=None, metadata={
        "doc": "The space a card named (space: <slug>) when it is not the current space; you must be a member."})


@dataclass(frozen=True)
class ChatMessage:
    """One message as shown: its position in the chat (1 = first), author, time (when the
    workspace gave one), the text shown, the characters cut before and after it, and whether it
    holds ``find``."""

    position: int
    author: str
    ts: str | None
    text: str
    cut_before: int = 0
    cut_after: int = 0
    match: bool = False

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        return output_data(self)


@dataclass(frozen=True)
class ChatData:
    """The messages of a chat read by its ref, in order, and where to page back from."""

    ref: str
    space: str = field(metadata={"doc": "The slug of the chat's space."})
    title: str
    total: int = field(metadata={"doc": "How many messages the chat has."})
    find: str | None = field(metadata={"doc": "The text asked for (null: the last messages were asked for)."})
    matches: int = field(metadata={"doc": "With find: how many messages hold it (before the position asked)."})
    before: int | None = field(metadata={"doc": "Pass this as before to read further back (null: nothing older "
                                                "to read)."})
    freshness: str = field(metadata={"choices": FRESHNESS, "doc": "live: read from the chat now; changed: it "
                                                                  "changed since it was indexed (shown as it is "
                                                                  "now); as_indexed: it could not be read now "
                                                                  "(the index's copy, maybe stale)."})
    messages: tuple[ChatMessage, ...]


@dataclass(frozen=True)
class ChatAnswer:
    """What ``chat_read`` returns: the chat (ref, space, title, message count), the messages shown
    in order, ``find`` and how many messages hold it before ``before`` (``matches``), and the
    position to page back from (``before``; None: nothing older to read); how the chat read now
    compares with the index's copy (``freshness``: ``live``, ``changed`` or ``as_indexed``); and the
    ``before`` the request gave (``upto``), which a find that matched nothing names."""

    ref: str
    space: str
    title: str
    total: int
    messages: tuple[ChatMessage, ...]
    lang: str
    find: str | None = None
    matches: int = 0
    before: int | None = None
    freshness: str = LIVE
    upto: int | None = None

    Output = ChatData

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        """The answer as plain JSON data (``ChatData``; the rendered text is ``render()``)."""
        return output_data(ChatData(ref=self.ref, space=self.space, title=self.title, total=self.total, find=self.find,
                                    matches=self.matches, before=self.before, freshness=self.freshness,
                                    messages=self.messages))

    def render(self, lang: str | None = None) -> str:
        """The answer as text, in ``lang`` (``ru``, ``en``, ``ja``; None: the answer's own)."""
        lang = _lang(lang, self.lang)
        lines = [f"{one_line(self.ref)} · {title_field(self.title)} (space: {one_line(self.space)}) · "
                 + counted(lang, "chat.total", self.total)]
        if self.freshness != LIVE:
            lines.append(message(lang, f"chat.{self.freshness}"))
        if self.find is not None and not self.matches:  # issue 39 item 12: simply that no message holds it
            find = one_line(self.find)
            lines.append(message(lang, "chat.found_none_before", find=find, before=str(self.upto)) if self.upto
                         else message(lang, "chat.found_none", find=find))
            return "\n".join(lines) + "\n"
        if self.find is not None:
            lines.append(counted(lang, "chat.found", self.matches, find=one_line(self.find)))
        if not self.messages:
            lines.append(message(lang, "chat.none"))
        for m in self.messages:
            lines.append("")
            mark = " ◀" if m.match else ""
            lines.append(f"[{m.position}] {one_line(m.author)}" + (f" · {one_line(m.ts)}" if m.ts else "") + mark)
            lines.extend("   " + t if t.strip() else "" for t in plain_text(m.text).split("\n"))
            if m.cut_before or m.cut_after:
                lines.append("   " + message(lang, "chat.cut", before=f"{m.cut_before:,}", after=f"{m.cut_after:,}"))
        lines.append("")
        if self.before:
            lines.append(message(lang, "chat.before", before=str(self.before)))
        else:
            lines.append(message(lang, "chat.no_older" if self.find is not None else "chat.start"))
        return "\n".join(lines) + "\n"


def run(params: ChatReadParams, ctx: ToolContext) -> ChatAnswer:
    """chat_read for the caller of ``ctx`` over ``ctx.index``, the chat read from its file now;
    ``ParameterError`` naming the parameter on bad input or a chat the caller cannot read (the same
    message whether it exists)."""
    p = params
    find = _check_find(p.find)
    limit = _check_int("limit", p.limit, DEFAULT_FIND_LIMIT if find else DEFAULT_LIMIT,
                       1, MAX_FIND_LIMIT if find else MAX_LIMIT)
    context = _check_int("context", p.context, DEFAULT_CONTEXT, 0, MAX_CONTEXT)
    if p.context is not None and find is None:
        raise ParameterError("context", "goes with find (neighbours of each matching message)")
    before = _check_int("before", p.before, None, 1, None)
    opened = open_ref(ctx, p.ref, "chat", "chat", p.in_space)
    now = live_chat(ctx.index, opened)  # the chat as its file has it now (or the index's copy, said so)
    r = now.record if now.record is not None else opened.record
    msgs = messages_of(r)
    end = len(msgs) if before is None else min(before - 1, len(msgs))
    if find is None:
        shown_msgs, older = _last(msgs, end, limit)
        matches = 0
    else:
        shown_msgs, older, matches = _found(msgs, end, find, limit, context)
    return ChatAnswer(ref=opened.record.ref, space=opened.space, title=r.title, total=len(msgs),
                      messages=tuple(shown_msgs), lang=opened.lang, find=find, matches=matches, before=older,
                      freshness=now.freshness, upto=before)


@dataclass(frozen=True)
class _Message:
    author: str
    ts: str | None
    text: str


_HEAD = re.compile(r"^(?P<who>[^\s:][^:\n]{0,79}?): (?P<text>.*)$", re.S)


def messages_of(record: Record) -> list[_Message]:
    """The messages of a chat record, in order: where the index says each starts
    (``message_lines``, written at ingest), or, for an index without it or whose redaction joined
    lines, each line that reads ``author: text``."""
    lines = record.text.split("\n")
    starts = record.fields.get("message_lines")
    if isinstance(starts, (list, tuple)) and record.fields.get("lines") == len(lines) and _ordered(starts, len(lines)):
        bounds = [int(s[0]) for s in starts] + [len(lines)]
        out = []
        for (_, ts), a, b in zip(starts, bounds, bounds[1:]):
            who, text = _split_head("\n".join(lines[a:b]))
            out.append(_Message(who, ts if isinstance(ts, str) else None, text))
        return out
    out = []
    for line in lines[1:]:
        head = _HEAD.match(line)
        if head or not out:
            who, text = (head.group("who"), head.group("text")) if head else ("", line)
            out.append(_Message(who, None, text))
        else:
            out[-1] = _Message(out[-1].author, None, out[-1].text + "\n" + line)
    return out


def _ordered(starts: Sequence[Any], n: int) -> bool:
    prev = 0
    for s in starts:
        if not isinstance(s, (list, tuple)) or len(s) != 2 or not isinstance(s[0], int) or not prev <= s[0] < n:
            return False
        prev = s[0] + 1
    return True


def _split_head(text: str) -> tuple[str, str]:
    who, sep, body = text.partition(": ")
    return (who, body) if sep else ("", text)


def _last(msgs: list[_Message], end: int, limit: int) -> tuple[list[ChatMessage], int | None]:
    """The last ``limit`` messages before position ``end + 1``, within the answer's budget."""
    out: list[ChatMessage] = []
    budget = ANSWER_CHARS
    for i in range(end - 1, max(end - limit, 0) - 1, -1):
        m = _shown(msgs[i], i + 1, None)
        if out and len(m.text) > budget:
            break
        budget -= len(m.text)
        out.append(m)
    out.reverse()
    first = out[0].position if out else end + 1
    return out, (first if first > 1 else None)


def _found(msgs: list[_Message], end: int, find: str, limit: int, context: int
           ) -> tuple[list[ChatMessage], int | None, int]:
    """The newest ``limit`` messages before ``end + 1`` holding ``find``, each with ``context``
    neighbours, within the answer's budget; the position to page back from when older matches
    remain; and how many messages before ``end + 1`` hold it."""
    hits = [i for i in range(end) if find in msgs[i].text]
    wanted: dict[int, bool] = {}
    budget = ANSWER_CHARS
    taken: list[int] = []
    for i in reversed(hits[-limit:]):
        window = range(max(i - context, 0), min(i + context + 1, len(msgs)))
        cost = sum(len(msgs[j].text[:MESSAGE_CHARS]) for j in window if j not in wanted)
        if taken and cost > budget:
            break
        budget -= cost
        taken.append(i)
        for j in window:
            wanted[j] = wanted.get(j, False) or j == i or find in msgs[j].text
    out = [_shown(msgs[j], j + 1, find if wanted[j] else None) for j in sorted(wanted)]
    oldest = min(taken) if taken else end
    older = oldest + 1 if any(i < oldest for i in hits) else None
    return out, older, len(hits)


def _shown(m: _Message, position: int, find: str | None) -> ChatMessage:
    """A message as shown: at most ``MESSAGE_CHARS`` characters, the first match of ``find`` kept
    in view."""
    text = m.text
    if len(text) <= MESSAGE_CHARS:
        return ChatMessage(position, m.author, m.ts, text, match=find is not None and find in text)
    at = text.find(find) if find else -1
    start = 0 if at < MESSAGE_CHARS // 2 else min(at - MESSAGE_CHARS // 4, len(text) - MESSAGE_CHARS)
    stop = start + MESSAGE_CHARS
    return ChatMessage(position, m.author, m.ts, text[start:stop], start, len(text) - stop, match=at >= 0)


def _check_find(find: object) -> str | None:
    if find is None:
        return None
    if not isinstance(find, str) or not find.strip():
        raise ParameterError("find", f"must be a non-empty piece of a message's text, got {shown(find)}")
    if len(find) > MAX_FIND_CHARS:
        raise ParameterError("find", f"at most {MAX_FIND_CHARS} characters, got {len(find)}")
    return find


def _check_int(param: str, value: object, default: int | None, lo: int, hi: int | None) -> Any:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        span = f"from {lo} to {hi}" if hi is not None else f"of at least {lo}"
        raise ParameterError(param, f"must be an integer {span}, got {shown(value)}")
    return value


def _lang(lang: str | None, default: str) -> str:
    if lang is None:
        return default
    if lang not in LANGS:
        raise ParameterError("lang", f"must be one of {list(LANGS)}, got {shown(lang)}")
    return lang
