"""History search (SPEC H, seed 000): the tool over a workspace index.

``HistoryIndex`` holds a loaded workspace and the ``Searcher`` over its records;
``HistoryIndex.search(query, kinds, since, until, limit, spaces, *, caller, container, space)``
checks the parameters (H6, H7) before anything is searched, keeps to the caller's spaces and
privacy (H14, H15), applies kind diversity (H8) with at most one card per session (a chat and
the digests of its turns; issue 11 item 3), cuts snippets (H9), adds the weak-match and
missing-ID warnings (H11, H12) and renders the answer as the seed shows it (H13).
"""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from searchkit.config import SearchConfig
from searchkit.records import KINDS, Hit, Record, Result, Notice
from searchkit.tools.messages import LANGS, message
from searchkit.tools.terminal import CONTROL_CHARS as _CONTROL, one_line
from searchkit.errors import ParameterError

DEFAULT_LIMIT = 8
MAX_LIMIT = 10
DEFAULT_LIMIT_SPACES = 10
MAX_LIMIT_SPACES = 15
TOP_FULL = 3
FULL_CHARS = 1500
SHORT_CHARS = 300
CANDIDATES = 60


class HistorySearchError(ParameterError):
    """A bad parameter (H7): ``param`` names it; nothing was searched."""


@dataclass(frozen=True)
class Card:
    """One rendered card: the hit and the snippet it shows (H9)."""

    hit: Hit
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        r = self.hit.record
        return {
            "rank": self.hit.rank,
            "kind": r.kind,
            "date": (r.date or "")[:10],
            "title": r.title,
            "ref": r.ref,
            "space": r.space,
            "snippet": self.snippet,
            "chat": r.fields.get("chat") if r.kind == "digest" else None,
            "table": r.fields.get("table") if r.kind == "app" else None,
            "score": self.hit.score,
            "scores": dict(self.hit.scores),
            "ranks": dict(self.hit.ranks),
        }


@dataclass(frozen=True)
class HistoryAnswer:
    """The structured result and the rendered text of one history search."""

    result: Result
    cards: tuple[Card, ...]
    text: str
    lang: str
    searched: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.result.query,
            "lang": self.lang,
            "searched": list(self.searched),
            "skipped": [{"space": s, "reason": r} for s, r in self.skipped],
            "warnings": [w.to_dict() for w in self.result.warnings],
            "cards": [c.to_dict() for c in self.cards],
            "signals": dict(self.result.signals),
            "text": self.text,
        }


@dataclass(frozen=True)
class UpdateReport:
    """What an incremental update (H3) changed."""

    added: int
    changed: int
    removed: int
    unchanged: int
    embedded: int
    kept: int = 0
    """Records of the previous index kept because their part could not be read now (issue 27 item 11)."""

    def line(self) -> str:
        kept = f"; {self.kept} kept from the previous index (their part could not be read now)" if self.kept else ""
        return (
            f"update: {self.added} added, {self.changed} changed, {self.removed} removed, "
            f"{self.unchanged} unchanged; {self.embedded} passages embedded{kept}"
        )


class HistoryIndex:
    """A workspace's records, its spaces, and the Searcher over them."""

    def __init__(self, searcher: Any, spaces: Mapping[str, Any], report: Any = None) -> None:
        self.searcher = searcher
        self.spaces = dict(spaces)
        self.report = report
        self._visibility = _VisibilityTable(searcher.records)

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        workspace: str | Path,
        config: SearchConfig | None = None,
        *,
        embedder: Any = None,
        cache: Any = None,
        show_progress: bool = False,
        policy: Any = None,
    ) -> "HistoryIndex":
        """Index a workspace folder; ``policy`` (``ingest.policy.Policy``) sets what is never
        indexed and the size caps (default ``DEFAULT_POLICY``)."""
        from searchkit.ingest.workspace import load_workspace
        from searchkit.searcher import Searcher

        load = load_workspace(workspace, policy=policy)
        s = Searcher.build(load.records, config, embedder=embedder, cache=cache, show_progress=show_progress)
        return cls(s, load.spaces, load.report)

    def update(self, workspace: str | Path, *, show_progress: bool = False, policy: Any = None) -> UpdateReport:
        """Re-read the workspace (H3): records whose source is gone leave (a deleted row; a
        deleted chat with its turns' digests), new and changed ones come in, and only new or
        changed passage text is embedded (the embedding cache holds the rest). What could not be
        read this time (an unreadable folder, a failed loader, a damaged database) is never taken
        for deleted: its previous records stay (``ingest.workspace.carry_over``)."""
        from searchkit.ingest.workspace import carry_over, load_workspace
        from searchkit.searcher import Searcher

        load, kept = carry_over(self.searcher.records, load_workspace(workspace, policy=policy))
        old = {r.id: r for r in self.searcher.records}
        new = {r.id: r for r in load.records}
        added = sum(1 for i in new if i not in old)
        removed = sum(1 for i in old if i not in new)
        changed = sum(1 for i, r in new.items() if i in old and _content(old[i]) != _content(r))
        unchanged = len(new) - added - changed
        s0 = self.searcher
        cache = s0.cache
        before = cache.stats().misses if cache is not None else 0
        s = Searcher.build(load.records, s0.config, embedder=s0.embedder, cache=cache, show_progress=show_progress)
        after = cache.stats().misses if cache is not None else 0
        self.searcher, self.spaces, self.report = s, dict(load.spaces), load.report
        self._visibility = _VisibilityTable(s.records)
        return UpdateReport(added, changed, removed, unchanged, int(after - before), kept)

    # -- persistence ----------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        spaces = {
            slug: {
                "slug": info.slug,
                "title": info.title,
                "members": list(info.members),
                "container": info.container,
                "history_search": info.history_search,
            }
            for slug, info in self.spaces.items()
        }
        extra = {"workspace.json": json.dumps({"spaces": spaces}, ensure_ascii=False, indent=2) + "\n"}
        if self.report is not None:
            extra["indexing_report.json"] = json.dumps(self.report.to_dict(), ensure_ascii=False, indent=2) + "\n"
        return self.searcher.save(folder, extra_files=extra)

    @classmethod
    def load(cls, folder: str | Path, config: SearchConfig | None = None, *, embedder: Any = None, cache: Any = None) -> "HistoryIndex":
        """Load the current version of a history index folder (its records, spaces and Searcher
        from one version, never mixed with a version a writer publishes meanwhile)."""
        from searchkit.index import store
        from searchkit.searcher import IndexMismatchError, Searcher
        from searchkit.util import read_json_file

        with store.reading(folder) as version:
            if not (version / "workspace.json").is_file():
                raise store.IndexNotFoundError(
                    f"{folder} is not a history index (no workspace.json); build one with `searchkit index --workspace`"
                )
            s = Searcher.load_version(version, config, embedder=embedder, cache=cache, name=str(folder))
            try:
                raw = read_json_file(version / "workspace.json")["spaces"]  # a regular file only: no FIFO hang
                spaces = {slug: _space_info(slug, d) for slug, d in raw.items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
                raise IndexMismatchError(f"{folder}: workspace.json is damaged; rebuild the index") from None
        return cls(s, spaces)

    # -- the tool -------------------------------------------------------------------------
    def search(
        self,
        query: Any,
        kinds: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
        spaces: str | Sequence[str] | None = None,
        *,
        caller: str | None,
        container: str,
        space: str,
        lang: str | None = None,
    ) -> HistoryAnswer:
        """history_search (H6-H15). ``container`` is ``personal`` (a person's container:
        ``caller`` is required, and ``spaces`` may name other spaces of the caller) or ``shared``
        (a workspace container: no person behind it, only ``space`` is searched, personal chats
        never returned); ``space`` is the slug of the space the search runs in. Raises
        ``HistorySearchError`` naming the parameter on bad input, before anything is searched.

        Privacy (H14, H15): the search sees only the records of the searched spaces that the
        caller may see, and BM25's term statistics are computed over those alone, so no card,
        score, count or message depends on anything the caller may not see."""
        from searchkit.analyze import detect_language
        from searchkit.ingest.policy import searchable_spaces
        from searchkit.rank.diversity import diversify, one_per_group, renumber
        from searchkit.rank.signals import missing_ids_warning
        from searchkit.searcher import Filters, QueryError

        if container not in ("personal", "shared"):
            raise HistorySearchError("container", f"must be 'personal' or 'shared', got {_shown(container)}")
        if container == "shared" and caller is not None:
            raise HistorySearchError("caller", "a shared workspace container has no caller (no person behind it); pass None")
        if container == "personal":
            if caller is None:
                raise HistorySearchError("caller", "required in a personal container: the user id of the person searching")
            if not isinstance(caller, str) or not caller.strip():
                raise HistorySearchError("caller", f"must be a user id, got {_shown(caller)}")
        if not _is_slug(space):
            raise HistorySearchError("space", f"must be a space slug (a folder name), got {_shown(space)}")
        if isinstance(spaces, (list, tuple)):
            for slug in spaces:
                if not _is_slug(slug):
                    raise HistorySearchError("spaces", f"every item must be a space slug (a folder name), got {_shown(slug)}")
        q = _check_query(query, self.searcher)
        kinds_t = _check_kinds(kinds)
        since_d = _check_date("since", since)
        until_d = _check_date("until", until)
        if since_d and until_d and _instant(since_d) >= _instant(until_d):
            raise HistorySearchError("until", f"must be later than since ({since_d}), got {until_d} (until is exclusive)")
        if container == "shared" and spaces is not None:
            raise HistorySearchError("spaces", "not available in a shared workspace container: it searches its own space only")
        lim = _check_limit(limit, spaces is not None)
        if lang is not None and lang not in LANGS:
            raise HistorySearchError("lang", f"must be one of {list(LANGS)}, got {_shown(lang)}")
        lang = lang or _lang_of(detect_language(q))
        who = caller if container == "personal" else None
        try:
            searched, skipped = searchable_spaces(
                self.spaces, who, spaces, space, activity=self._visibility.latest(who) if who else None
            )
        except ParameterError as exc:
            raise HistorySearchError(exc.param, exc.message) from None

        hits: list[Hit] = []
        warnings: list[Notice] = []
        signals: Mapping[str, float] = {}
        if searched:
            filters = Filters(kinds=kinds_t, since=since_d, until=until_d)
            scope = self._visibility.scope(searched, who)
            try:
                res = self.searcher.search(q, k=max(CANDIDATES, lim * 4), filters=filters, scope=scope)
            except QueryError as exc:  # pragma: no cover - checked above
                raise HistorySearchError("query", str(exc)) from None
            d = self.searcher.config.diversity
            # one card per session (issue 11 item 3): a chat and its turns' digests are one
            # result group, so a long chat does not crowd out other sessions (H8)
            if d.enabled:
                hits = diversify(res.hits, lim, per_kind=d.per_kind, min_relative_score=d.min_relative_score,
                                 group=session_key)
            else:
                hits = renumber(one_per_group(res.hits, session_key)[:lim])
            warnings = [w for w in res.warnings if w.code == "weak_match"]
            m = missing_ids_warning(q, hits)
            if m is not None:
                warnings.append(m)
            signals = res.signals
        header: list[str] = []
        if spaces is not None or skipped or not searched:
            own = self._own_spaces(who) if who and not searched else None
            header = _header(lang, searched, skipped, own)
        cards = tuple(Card(h, _snippet(h, full=i < TOP_FULL)) for i, h in enumerate(hits))
        result = Result(
            query=q, hits=tuple(hits), warnings=tuple(warnings), notes=tuple(header),
            config_fingerprint=self.searcher.config.fingerprint(), signals=signals,
        )
        text = render(result, cards, lang, header, searched=bool(searched))
        return HistoryAnswer(result, cards, text, lang, tuple(searched), tuple(skipped))

    def _own_spaces(self, caller: str) -> list[str]:
        """The caller's searchable spaces (shown when nothing could be searched)."""
        return sorted(s for s, info in self.spaces.items() if caller in info.members and info.history_search)


class _VisibilityTable:
    """Per-record space, visibility and owner as arrays, for fast scope masks (H14, H15)."""

    def __init__(self, records: Sequence[Record]) -> None:
        import numpy as np

        spaces = sorted({r.space for r in records})
        owners = sorted({r.owner for r in records if r.owner is not None})
        self._space_ix = {s: i for i, s in enumerate(spaces)}
        self._owner_ix = {o: i for i, o in enumerate(owners)}
        self.space = np.fromiter((self._space_ix[r.space] for r in records), dtype=np.int64, count=len(records))
        self.personal = np.fromiter((r.visibility != "shared" for r in records), dtype=bool, count=len(records))
        self.owner = np.fromiter(
            (self._owner_ix.get(r.owner, -1) if r.owner is not None else -1 for r in records),
            dtype=np.int64, count=len(records),
        )
        latest: dict[tuple[str, str | None], str] = {}
        for r in records:
            if not r.date:
                continue
            key = (r.space, r.owner if r.visibility != "shared" else None)
            if r.date > latest.get(key, ""):
                latest[key] = r.date
        self._latest = latest

    def scope(self, spaces: Sequence[str], caller: str | None):
        """Records of ``spaces`` that ``caller`` may see (None: a shared container, no personal
        record at all; else shared records and the caller's own personal ones)."""
        import numpy as np

        wanted = [self._space_ix[s] for s in spaces if s in self._space_ix]
        in_space = np.isin(self.space, np.asarray(wanted, dtype=np.int64))
        own = self._owner_ix.get(caller, -2) if caller is not None else -2
        return in_space & (~self.personal | (self.owner == own))

    def latest(self, caller: str) -> dict[str, str]:
        """Space -> the newest date among the records ``caller`` may see there."""
        out: dict[str, str] = {}
        for (space, owner), day in self._latest.items():
            if owner is None or owner == caller:
                if day > out.get(space, ""):
                    out[space] = day
        return out


def _space_info(slug: str, d: Mapping[str, Any]) -> Any:
    from searchkit.ingest.workspace import SpaceInfo

    members = d.get("members", ())
    if not isinstance(d, Mapping) or not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise ValueError(f"space {slug!r}")
    return SpaceInfo(
        slug=str(d["slug"]), title=str(d.get("title", "")), members=tuple(members),
        container=d.get("container", "shared"), history_search=d.get("history_search", True) is True,
    )


def _content(r: Record) -> tuple:
    return (r.text, r.title, r.date, r.owner, r.visibility, r.kind, r.ref)


def _lang_of(detected: str) -> str:
    return detected if detected in LANGS else "en"


def _check_query(query: Any, searcher: Any) -> str:
    from searchkit.searcher import QueryError

    try:
        return searcher.validate_query(query)
    except QueryError as exc:
        raise HistorySearchError("query", str(exc).removeprefix("query ").removeprefix("query: ")) from None


def _check_kinds(kinds: Any) -> tuple[str, ...] | None:
    if kinds is None:
        return None
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, (list, tuple)) or not kinds:
        raise HistorySearchError("kinds", f"give a non-empty list of kinds from {list(KINDS)}")
    for k in kinds:
        if k not in KINDS:
            raise HistorySearchError("kinds", f"unknown kind {_shown(k)}; valid kinds: {list(KINDS)}")
    return tuple(dict.fromkeys(kinds))


def _check_date(param: str, value: Any) -> str | None:
    """An ISO date (``YYYY-MM-DD``) or date-time; a date-time without an offset is UTC."""
    if value is None:
        return None
    from searchkit.util import aware, parse_iso

    t = parse_iso(value) if isinstance(value, str) else None
    if t is None:
        raise HistorySearchError(param, f"expected an ISO date (YYYY-MM-DD) or date-time, got {_shown(value)}")
    return t.isoformat() if not isinstance(t, _dt.datetime) else aware(t).isoformat()


def _instant(value: str) -> _dt.datetime:
    """A checked since/until as an aware time (a date is its midnight, UTC)."""
    from searchkit.util import aware

    return aware(value)


def _is_slug(value: Any) -> bool:
    """A space slug is a folder name: 1-255 characters, no path separator or NUL."""
    return isinstance(value, str) and 0 < len(value) <= 255 and not any(c in value for c in "/\\\x00") \
        and value not in (".", "..") and not _CONTROL.search(value)


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_limit(limit: Any, with_spaces: bool) -> int:
    hi = MAX_LIMIT_SPACES if with_spaces else MAX_LIMIT
    if limit is None:
        return DEFAULT_LIMIT_SPACES if with_spaces else DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= hi:
        extra = " with spaces" if with_spaces else ""
        raise HistorySearchError("limit", f"must be an integer from 1 to {hi}{extra}, got {_shown(limit)}")
    return limit


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
    The history tool shows at most one card per session (issue 11 item 3)."""
    r = hit.record
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
    if skipped:
        items = message(lang, "skip_sep").join(message(lang, reason, slug=slug) for slug, reason in skipped)
        first += " " + message(lang, "skipped", items=items)
    if own is not None and not searched:
        first += " " + message(lang, "your_spaces", spaces=", ".join(own) or "—")
    return [first]


def render(
    result: Result, cards: Sequence[Card], lang: str, header: Sequence[str] = (), *, searched: bool = True
) -> str:
    """The answer as the seed shows it: header line, warnings, numbered cards, reminder."""
    lines = list(header)
    for w in result.warnings:
        if w.code == "weak_match":
            lines.append(message(lang, "weak_match"))
        elif w.code == "missing_ids":
            lines.append(message(lang, "missing_ids", ids=", ".join(w.detail.get("ids", ()))))
    if not cards:
        if searched:
            lines.append(message(lang, "nothing"))
        return "\n".join(lines) + "\n"
    lines.append("")
    for c in cards:
        r = c.hit.record
        date = _line((r.date or "")[:10]) or "—"
        lines.append(f"{c.hit.rank}. {_line(r.kind)} · {date} · {_line(r.title)} · {_line(r.ref)} (space: {_line(r.space)})")
        for sl in c.snippet.splitlines() or [""]:
            lines.append("   " + sl if sl.strip() else "")
    lines.append("")
    lines.append(message(lang, "reminder"))
    return "\n".join(lines) + "\n"
