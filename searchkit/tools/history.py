"""History search (SPEC H, seed 000): the tool over a workspace index.

``HistoryIndex`` holds a loaded workspace and the ``Searcher`` over its records;
``HistoryIndex.search(query, kinds, since, until, limit, spaces, *, caller, container, space)``
checks the parameters (H6, H7) before anything is searched, keeps to the caller's spaces and
privacy (H14, H15), applies kind diversity (H8), cuts snippets (H9), adds the weak-match and
missing-ID warnings (H11, H12) and renders the answer as the seed shows it (H13).
"""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from searchkit.config import SearchConfig
from searchkit.records import KINDS, Hit, Record, Result, Warning
from searchkit.tools.messages import LANGS, message
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

    def line(self) -> str:
        return (
            f"update: {self.added} added, {self.changed} changed, {self.removed} removed, "
            f"{self.unchanged} unchanged; {self.embedded} passages embedded"
        )


class HistoryIndex:
    """A workspace's records, its spaces, and the Searcher over them."""

    def __init__(self, searcher: Any, spaces: Mapping[str, Any], report: Any = None) -> None:
        self.searcher = searcher
        self.spaces = dict(spaces)
        self.report = report

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
    ) -> "HistoryIndex":
        from searchkit.ingest.workspace import load_workspace
        from searchkit.searcher import Searcher

        load = load_workspace(workspace)
        s = Searcher.build(load.records, config, embedder=embedder, cache=cache, show_progress=show_progress)
        return cls(s, load.spaces, load.report)

    def update(self, workspace: str | Path, *, show_progress: bool = False) -> UpdateReport:
        """Re-read the workspace (H3): records whose source is gone leave (a deleted row; a
        deleted chat with its turns' digests), new and changed ones come in, and only new or
        changed passage text is embedded (the embedding cache holds the rest)."""
        from searchkit.ingest.workspace import load_workspace
        from searchkit.searcher import Searcher

        load = load_workspace(workspace)
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
        return UpdateReport(added, changed, removed, unchanged, int(after - before))

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
        from searchkit.ingest.workspace import SpaceInfo
        from searchkit.searcher import Searcher

        folder = Path(folder)
        wpath = folder / "workspace.json"
        if not wpath.is_file():
            raise FileNotFoundError(f"{folder} is not a history index (no workspace.json); build one with `searchkit index --workspace`")
        s = Searcher.load(folder, config, embedder=embedder, cache=cache)
        raw = json.loads(wpath.read_text(encoding="utf-8"))["spaces"]
        spaces = {
            slug: SpaceInfo(
                slug=d["slug"], title=d.get("title", ""), members=tuple(d.get("members", ())),
                container=d.get("container", "shared"), history_search=bool(d.get("history_search", True)),
            )
            for slug, d in raw.items()
        }
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
        """history_search (H6-H15). ``container`` is ``personal`` (a person's container, where
        ``spaces`` may name other spaces of the caller) or ``shared`` (a workspace container:
        no person behind it, only ``space`` is searched, personal chats never returned);
        ``space`` is the slug of the space the search runs in. Raises ``HistorySearchError``
        naming the parameter on bad input, before anything is searched."""
        from searchkit.analyze import detect_language
        from searchkit.ingest.policy import can_see, searchable_spaces
        from searchkit.rank.diversity import diversify
        from searchkit.rank.signals import missing_ids_warning
        from searchkit.searcher import Filters, QueryError

        q = _check_query(query, self.searcher)
        kinds_t = _check_kinds(kinds)
        since_d = _check_date("since", since)
        until_d = _check_date("until", until)
        if since_d and until_d and since_d >= until_d:
            raise HistorySearchError("until", f"must be later than since ({since_d}), got {until_d} (until is exclusive)")
        if container not in ("personal", "shared"):
            raise HistorySearchError("container", f"must be 'personal' or 'shared', got {container!r}")
        if container == "shared" and spaces is not None:
            raise HistorySearchError("spaces", "not available in a shared workspace container: it searches its own space only")
        lim = _check_limit(limit, spaces is not None)
        if lang is not None and lang not in LANGS:
            raise HistorySearchError("lang", f"must be one of {list(LANGS)}, got {lang!r}")
        lang = lang or _lang_of(detect_language(q))
        who = caller if container == "personal" else None
        try:
            searched, skipped = searchable_spaces(self.spaces, who, spaces, space)
        except ValueError as exc:
            text = str(exc)
            param = "spaces" if text.startswith("spaces") else "space"
            raise HistorySearchError(param, text.split(": ", 1)[-1]) from None

        hits: list[Hit] = []
        warnings: list[Warning] = []
        signals: Mapping[str, float] = {}
        if searched:
            filters = Filters(
                kinds=kinds_t,
                since=since_d,
                until=until_d,
                spaces=tuple(searched),
                visible=lambda r: can_see(r, who, container),
            )
            try:
                res = self.searcher.search(q, k=max(CANDIDATES, lim * 4), filters=filters)
            except QueryError as exc:  # pragma: no cover - checked above
                raise HistorySearchError("query", str(exc)) from None
            d = self.searcher.config.diversity
            if d.enabled:
                hits = diversify(res.hits, lim, per_kind=d.per_kind, min_relative_score=d.min_relative_score)
            else:
                hits = list(res.hits[:lim])
            warnings = [w for w in res.warnings if w.code == "weak_match"]
            m = missing_ids_warning(q, hits)
            if m is not None:
                warnings.append(m)
            signals = res.signals
        if spaces is not None:
            header = _header(lang, searched, skipped)
        else:
            header = []
        cards = tuple(Card(h, _snippet(h, full=i < TOP_FULL)) for i, h in enumerate(hits))
        result = Result(
            query=q, hits=tuple(hits), warnings=tuple(warnings), notes=tuple(header),
            config_fingerprint=self.searcher.config.fingerprint(), signals=signals,
        )
        text = render(result, cards, lang, header)
        return HistoryAnswer(result, cards, text, lang, tuple(searched), tuple(skipped))


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
            raise HistorySearchError("kinds", f"unknown kind {k!r}; valid kinds: {list(KINDS)}")
    return tuple(dict.fromkeys(kinds))


def _check_date(param: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise HistorySearchError(param, f"expected an ISO date (YYYY-MM-DD), got {value!r}")
    try:
        if len(value) == 10:
            return _dt.date.fromisoformat(value).isoformat()
        return _dt.datetime.fromisoformat(value).date().isoformat()
    except ValueError:
        raise HistorySearchError(param, f"expected an ISO date (YYYY-MM-DD), got {value!r}") from None


def _check_limit(limit: Any, with_spaces: bool) -> int:
    hi = MAX_LIMIT_SPACES if with_spaces else MAX_LIMIT
    if limit is None:
        return DEFAULT_LIMIT_SPACES if with_spaces else DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= hi:
        extra = " with spaces" if with_spaces else ""
        raise HistorySearchError("limit", f"must be an integer from 1 to {hi}{extra}, got {limit!r}")
    return limit


def _snippet(hit: Hit, *, full: bool) -> str:
    p = hit.passage
    text = hit.record.text[p.start:p.end].strip() if p.end > p.start else p.text.strip()
    n = FULL_CHARS if full else SHORT_CHARS
    if len(text) > n:
        return text[:n].rstrip() + "…"
    return text


def _header(lang: str, searched: Sequence[str], skipped: Sequence[tuple[str, str]]) -> list[str]:
    first = message(lang, "searched", spaces=", ".join(searched)) if searched else message(lang, "searched_none")
    if skipped:
        items = message(lang, "skip_sep").join(message(lang, reason, slug=slug) for slug, reason in skipped)
        first += " " + message(lang, "skipped", items=items)
    return [first]


def render(result: Result, cards: Sequence[Card], lang: str, header: Sequence[str] = ()) -> str:
    """The answer as the seed shows it: header line, warnings, numbered cards, reminder."""
    lines = list(header)
    for w in result.warnings:
        if w.code == "weak_match":
            lines.append(message(lang, "weak_match"))
        elif w.code == "missing_ids":
            lines.append(message(lang, "missing_ids", ids=", ".join(w.detail.get("ids", ()))))
    if not cards:
        lines.append(message(lang, "nothing"))
        return "\n".join(lines) + "\n"
    lines.append("")
    for c in cards:
        r = c.hit.record
        date = (r.date or "")[:10] or "—"
        lines.append(f"{c.hit.rank}. {r.kind} · {date} · {r.title} · {r.ref} (space: {r.space})")
        for sl in c.snippet.splitlines() or [""]:
            lines.append("   " + sl if sl.strip() else "")
    lines.append("")
    lines.append(message(lang, "reminder"))
    return "\n".join(lines) + "\n"
