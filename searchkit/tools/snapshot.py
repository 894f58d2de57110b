"""The space snapshot of seed 000 (issue 41 item 7): a short state of a space built from its recent
history: what is in work, the recent decisions, what waits for an answer and what appeared
(dashboards and reports, sources, files).

Built extractively (no model) from the index's records, redacted as indexed: ``in_work`` is the
``Left:`` part of the window's turn digests, ``decisions`` their ``Decided:`` part (each item once,
its newest digest), ``waiting`` the chats whose last message is a question, ``appeared`` the pages,
sources and files dated in the window. Each item names its day and the ref to open. A snapshot is
dated: the window (``since`` .. ``until``, ``WINDOW_DAYS`` days ending on the build day) and the
time it was built; it is built when read, from the index version being served, so it is never
older than a day's refresh.

Who may read it and what it holds are read from the workspace when it is built (as for a search,
:mod:`searchkit.tools.access`):

- A person's snapshot of a space they are a member of now, where history search is on; a shared
  workspace container's of its own space only. Anything else (not a member, no such space,
  history search switched off, settings that cannot be read) gets the same answer: none.
- In a space of several members it is built only from shared chats (conversations, scheduled and
  automatic runs) and their turns' digests, never from a personal chat or its digests, whoever
  reads it; a chat counts as shared only when both the index's copy and the workspace now say so
  (a chat gone or in doubt now: left out). In a space whose one member is the reader, that
  member's own personal chats count too; a shared container never sees a personal chat.
- Files, sources and pages belong to the whole space (every member sees them).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from searchkit.ports import HistoryIndexPort
from searchkit.records import Record
from searchkit.strict_json import safe_data, safe_text
from searchkit.tools.access import Access, AccessSource
from searchkit.tools.cards import title_field
from searchkit.tools.chat_read import messages_of
from searchkit.tools.messages import LANGS, message
from searchkit.tools.outputs import output_data
from searchkit.tools.terminal import one_line

WINDOW_DAYS = 14
"""The days of history a snapshot covers, ending on the day it is built."""
SECTION_ITEMS = 8
"""Items shown in a section; the rest are counted (``more``)."""
ITEM_CHARS = 300
"""An item's text is cut to this many characters."""
APPEARED_KINDS: tuple[str, ...] = ("page", "source", "file")
QUESTION_ENDS = ("?", "？", "？」", "?\"", "?»")

SECTIONS: tuple[str, ...] = ("in_work", "decisions", "waiting", "appeared")


@dataclass(frozen=True)
class SnapshotItem:
    """One line of a snapshot: what it says, its day, where it comes from and the ref to open."""

    text: str = field(metadata={"doc": "The item, as its source says it (cut to 300 characters)."})
    date: str = field(metadata={"doc": "Its day (YYYY-MM-DD)."})
    kind: str = field(metadata={"doc": "digest, chat, page, source or file."})
    ref: str = field(metadata={"doc": "What to open: digest:<turn_id>, chat:<ses_id>, page:<uuid>, "
                                      "source:<uuid> or a file path."})
    chat: str | None = field(metadata={"doc": "A digest's chat (chat:<ses_id>, to read with chat_read)."})


@dataclass(frozen=True)
class SnapshotSection:
    """The newest items of one part of the snapshot, and how many more there are."""

    items: tuple[SnapshotItem, ...]
    more: int = field(metadata={"doc": "Items of the window not shown."})


@dataclass(frozen=True)
class SpaceSnapshot:
    """A short state of a space built from its recent history, dated; check a figure, number or
    decision in its source before relying on it."""

    space: str
    title: str
    since: str = field(metadata={"doc": "The first day of the history it covers (YYYY-MM-DD)."})
    until: str = field(metadata={"doc": "The last day it covers, the day it was built (YYYY-MM-DD)."})
    built: str = field(metadata={"doc": "When it was built (ISO 8601, UTC)."})
    shared_only: bool = field(metadata={"doc": "True in a space of several members: built only from shared chats, "
                                               "scheduled and automatic runs, never from personal chats."})
    lang: str
    in_work: SnapshotSection
    decisions: SnapshotSection
    waiting: SnapshotSection
    appeared: SnapshotSection

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        """The snapshot as plain JSON data (sanitised)."""
        return safe_data(output_data(self))

    def render(self, lang: str | None = None) -> str:
        """The snapshot as text (markdown), in ``lang`` (None: the space's language)."""
        lang = lang if lang in LANGS else self.lang
        lines = [message(lang, "snapshot.head", slug=one_line(self.space), title=one_line(self.title),
                         since=self.since, until=self.until, built=self.built[:16].replace("T", " ")),
                 message(lang, "snapshot.note")]
        if self.shared_only:
            lines.append(message(lang, "snapshot.shared_only"))
        for name in SECTIONS:
            section: SnapshotSection = getattr(self, name)
            lines += ["", f"## {message(lang, f'snapshot.{name}')}"]
            if not section.items:
                lines.append(message(lang, "snapshot.empty"))
            for it in section.items:
                where = f"{one_line(it.ref)}" + (f" ({one_line(it.chat)})" if it.chat else "")
                lead = f"{it.kind} · " if name == "appeared" else ""
                lines.append(f"- {it.date} · {lead}{title_field(it.text)} · {where}")
            if section.more:
                lines.append(message(lang, "snapshot.more", n=str(section.more)))
        return safe_text("\n".join(lines) + "\n")


def not_found_text(slug: object, lang: str = "en") -> str:
    """The one answer to a snapshot the reader may not have: the same whether the space does not
    exist, the reader is not a member, history search is off there or its settings cannot be read."""
    shown = one_line(slug)[:80] if isinstance(slug, str) else "?"
    return message(lang if lang in LANGS else "en", "snapshot.none", slug=shown)


def readable_spaces(access: Access, caller: str | None, container: str, space: str | None) -> list[tuple[str, str]]:
    """``(slug, title)`` of every space whose snapshot the session may read now: a person's spaces
    (member now, history search on), or a shared container's own space."""
    out = []
    for slug, info in sorted(access.spaces.items()):
        if _may_read(access, slug, caller, container, space) is not None:
            out.append((slug, info.title))
    return out


def build(index: HistoryIndexPort, slug: object, *, caller: str | None, container: str = "personal", space: str | None = None,
          as_of: _dt.date | None = None, now: _dt.datetime | None = None, days: int = WINDOW_DAYS,
          lang: str | None = None) -> SpaceSnapshot | None:
    """The snapshot of space ``slug`` for the session (``caller``, ``container``, its ``space``) over
    ``index`` (a ``HistoryIndex``: its records and its access source, read now); None when the
    session may not read it (one answer for every reason: ``not_found_text``). ``as_of``: the last
    day of the window (default: today, UTC); ``now``: the build time (default: now, UTC)."""
    return build_from(index.searcher.records, index.access, slug, caller=caller, container=container, space=space,
                      as_of=as_of, now=now, days=days, lang=lang)


def build_from(records: Sequence[Record], source: AccessSource, slug: object, *, caller: str | None, container: str = "personal",
               space: str | None = None, as_of: _dt.date | None = None, now: _dt.datetime | None = None,
               days: int = WINDOW_DAYS, lang: str | None = None) -> SpaceSnapshot | None:
    """``build`` over ``records`` and an access source (``snapshot()``, ``chats(slug)``, ``live_chats``)."""
    if not isinstance(slug, str):
        return None
    access = source.snapshot()
    info = _may_read(access, slug, caller, container, space)
    if info is None:
        return None
    now = now or _dt.datetime.now(_dt.timezone.utc)
    until = as_of or now.astimezone(_dt.timezone.utc).date()
    since = until - _dt.timedelta(days=max(1, days) - 1)
    members = set(info.members)
    owner = caller if container == "personal" and caller is not None and members == {caller} else None
    allowed = _chat_rule(source, slug, owner)
    first, last = since.isoformat(), until.isoformat()
    mine = [r for r in records if r.space == slug and first <= (r.date or "")[:10] <= last]
    in_work, decisions, waiting, appeared = [], [], [], []
    for r in mine:
        if r.kind == "digest" and allowed(r, str(r.fields.get("chat") or "")):
            parts = digest_parts(r.text)
            chat = f"chat:{r.fields['chat']}" if r.fields.get("chat") else None
            if parts.get("Left"):
                in_work.append(_item(parts["Left"], r, chat))
            if parts.get("Decided"):
                decisions.append(_item(parts["Decided"], r, chat))
        elif r.kind == "chat" and allowed(r, str(r.fields.get("ses_id") or r.ref.removeprefix("chat:"))):
            msgs = messages_of(r)
            if msgs and msgs[-1].text.strip().endswith(QUESTION_ENDS):
                waiting.append(_item(msgs[-1].text, r, None))
        elif r.kind in APPEARED_KINDS:
            appeared.append(_item(r.title or r.ref, r, None))
    return SpaceSnapshot(
        space=slug, title=info.title, since=first, until=last,
        built=now.astimezone(_dt.timezone.utc).replace(microsecond=0).isoformat(), shared_only=len(members) > 1,
        lang=lang if lang in LANGS else access.lang(slug),
        in_work=_section(in_work, unique=True), decisions=_section(decisions, unique=True),
        waiting=_section(waiting), appeared=_section(appeared),
    )


def digest_parts(text: str) -> dict[str, str]:
    """A digest record's parts by label (``Asked``, ``Done``, ``Left``, ``Decided``): each ``Label:
    value`` line and the lines after it up to the next label or the ``Chat:`` line."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        label, sep, value = line.partition(": ")
        if sep and label in ("Asked", "Done", "Left", "Decided"):
            current = parts.setdefault(label, [])
            current.append(value)
        elif line.startswith("Chat: chat:"):
            current = None
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v).strip() for k, v in parts.items()}


def _may_read(access: Access, slug: str, caller: str | None, container: str, space: str | None) -> Any:
    """The space's settings when the session may read its snapshot now, else None."""
    info = access.spaces.get(slug)
    if info is None or slug in access.doubtful or not info.history_search:
        return None
    if container == "shared":
        return info if caller is None and slug == space else None
    return info if container == "personal" and isinstance(caller, str) and caller in info.members else None


def _chat_rule(source: AccessSource, slug: str, owner: str | None) -> Callable[[Record, str], bool]:
    """Whether a chat or digest record may feed the snapshot: shared in the index's copy and in the
    workspace now; or, with ``owner`` (the one member, reading), that member's own."""
    table: Mapping[str, Any] | None = None
    live = bool(getattr(source, "live_chats", False))
    if live:
        table = source.chats(slug)

    def allowed(r: Record, ses_id: str) -> bool:
        if live:
            now = table.get(ses_id) if table is not None and ses_id else None
            if now is None:  # gone, or in doubt: left out
                return False
            visibility, chat_owner = now.visibility, now.owner
        else:
            visibility, chat_owner = r.visibility, r.owner
        if r.visibility == "shared" and visibility == "shared":
            return True
        return owner is not None and r.owner == owner and (visibility == "shared" or chat_owner == owner)

    return allowed


def _item(text: str, r: Record, chat: str | None) -> SnapshotItem:
    text = " ".join(text.split())
    if len(text) > ITEM_CHARS:
        text = text[: ITEM_CHARS - 1].rstrip() + "…"
    return SnapshotItem(text=text, date=(r.date or "")[:10], kind=r.kind, ref=r.ref, chat=chat)


def _section(items: Iterable[SnapshotItem], unique: bool = False) -> SnapshotSection:
    ordered = sorted(items, key=lambda it: (it.date, it.ref), reverse=True)
    if unique:  # the same words from several turns: once, its newest
        seen: set[str] = set()
        kept = []
        for it in ordered:
            key = it.text.casefold()
            if key not in seen:
                seen.add(key)
                kept.append(it)
        ordered = kept
    return SnapshotSection(items=tuple(ordered[:SECTION_ITEMS]), more=max(0, len(ordered) - SECTION_ITEMS))
