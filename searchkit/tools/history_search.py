"""The ``history_search`` tool (SPEC H6-H15, seed 000): ``HistorySearchParams`` and ``run``.

``run(params, ctx)`` checks every parameter (H7: ``ParameterError`` naming it, nothing searched),
keeps to the spaces and records the caller may see as the workspace has them now (H14, H15: the
``HistoryIndex`` in ``ctx.index`` plans the scope), applies kind diversity with at most two cards a
session (H8), cuts the snippets (H9), adds the weak-match and missing-ID warnings (H11, H12) and
returns a ``HistoryAnswer`` rendered as the seed shows it (H13). Who is calling (``ctx.caller``,
``ctx.container``) and the current space (``ctx.space``) come from the session, never from the
parameters.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence, TypeGuard, cast

from searchkit.analyze import detect_language, without_identifiers
from searchkit.errors import InputError, ParameterError
from searchkit.ingest.policy import MAX_SPACES
from searchkit.ports import HistoryIndexPort, Scope
from searchkit.records import KINDS, Hit, Notice, Result
from searchkit.searcher import Filters, Searcher
from searchkit.strict_json import safe_data
from searchkit.tools.base import ToolContext
from searchkit.tools.cards import TOP_FULL, Card, HistoryAnswer, _header, _snippet, render, shown
from searchkit.tools.messages import LANGS
from searchkit.tools.terminal import CONTROL_CHARS
from searchkit.util import aware, parse_iso

if TYPE_CHECKING:
    from searchkit.tools.history import Plan

DEFAULT_LIMIT = 8
MAX_LIMIT = 10
DEFAULT_LIMIT_SPACES = 10
MAX_LIMIT_SPACES = 15

CONTAINERS: tuple[str, ...] = ("personal", "shared")

HistorySearchError = ParameterError
"""A bad parameter (H7): ``param`` names it; nothing was searched (the one input error)."""


@dataclass(frozen=True)
class HistorySearchParams:
    """Search the history of the current space (chats, digests, logs, files, sources, pages, table
    rows) and, with ``spaces``, other spaces of the caller; cards come by relevance, each naming its
    kind, date, title, ref and space."""

    query: str = field(metadata={"doc": "What to look for: a question or a few words (ru, ja, en); "
                                        "task and document numbers (ATL-1655, #412) are matched as they are."})
    kinds: tuple[str, ...] | None = field(default=None, metadata={
        "choices": KINDS, "min_items": 1, "doc": "Only these kinds of records are searched."})
    since: str | None = field(default=None, metadata={
        "doc": "ISO date (YYYY-MM-DD) or date-time, inclusive; a date-time without an offset is UTC."})
    until: str | None = field(default=None, metadata={
        "doc": "ISO date (YYYY-MM-DD) or date-time, exclusive; later than since."})
    limit: int | None = field(default=None, metadata={
        "lo": 1, "hi": MAX_LIMIT_SPACES,
        "doc": f"Cards: at most {MAX_LIMIT}, default {DEFAULT_LIMIT}; with spaces at most {MAX_LIMIT_SPACES}, "
               f"default {DEFAULT_LIMIT_SPACES}."})
    spaces: Literal["all"] | tuple[str, ...] | None = field(default=None, metadata={
        "min_items": 1,
        "doc": f'"all" (every space the caller is a member of now) or space slugs, searched besides the '
               f"current space; at most {MAX_SPACES} spaces a search. A space the caller is not in, or "
               "with history search switched off, is skipped and named."})


@dataclass(frozen=True)
class Checked:
    """The checked parameters of one search: the query, the filters, who is searching (None: a
    shared container) and the current space."""

    query: str
    filters: Filters
    who: str | None
    space: str


def run(params: HistorySearchParams, ctx: ToolContext) -> HistoryAnswer:
    """history_search (H6-H15) for the caller of ``ctx`` over ``ctx.index`` (a ``HistoryIndex``).

    Raises ``ParameterError`` naming the parameter on bad input (``caller``, ``container``,
    ``space`` and ``lang`` name the context's fields), before anything is searched, and
    ``ResourceError`` (reason ``access``) when who may see what cannot be read from the workspace now. Privacy (H14,
    H15): membership, each space's switch and each chat's owner and visibility are read when the
    search runs; BM25's term statistics are computed over what the caller may see alone."""
    index = _index_of(ctx)
    c = check(index, params.query, params.kinds, params.since, params.until, params.spaces,
              caller=ctx.caller, container=ctx.container, space=ctx.space)
    with_spaces = params.spaces is not None
    lim = _check_limit(params.limit, with_spaces)
    if ctx.lang is not None and ctx.lang not in LANGS:
        raise ParameterError("lang", f"must be one of {list(LANGS)}, got {shown(ctx.lang)}")
    plan = index.plan(c.who, params.spaces, c.space)
    lang = ctx.lang or query_lang(c.query, plan.access.lang(c.space))
    hits: list[Hit] = []
    warnings: list[Notice] = []
    signals: Any = {}
    if plan.searched:
        # diversity.candidates: hits ranked before the cards are picked (at least four a card)
        # the cards are picked inside the search, so its missing-ID notice (H12) reads them
        res = _search(index, c, max(index.searcher.config.diversity.candidates, lim * 4), plan.scope,
                      pick=lambda ranked: index.pick(ranked, lim))
        hits = list(res.hits)
        warnings = list(res.warnings)
        signals = res.signals
    header_shown = with_spaces or bool(plan.skipped) or not plan.searched
    own = _own(plan, c.who)
    header = _header(lang, plan.searched, plan.skipped, own) if header_shown else []
    cards = tuple(Card(h, _snippet(h, full=i < TOP_FULL)) for i, h in enumerate(hits))
    result = Result(
        query=c.query, hits=tuple(hits), warnings=tuple(warnings), notes=tuple(header),
        config_fingerprint=index.searcher.config.fingerprint(), signals=signals,
    )
    text = render(result, cards, lang, header, searched=bool(plan.searched))
    return HistoryAnswer(result, cards, text, lang, tuple(plan.searched), tuple(plan.skipped), own, header_shown)


def check(
    index: HistoryIndexPort, query: object, kinds: Sequence[str] | str | None, since: object, until: object,
    spaces: str | Sequence[str] | None, *, caller: str | None, container: str, space: str | None,
) -> Checked:
    """Every parameter but ``limit`` and ``lang`` checked (H7), nothing searched yet; the current
    space is the caller's first space (``index.default_space``) when ``space`` is None."""
    who, space = check_session(index, caller, container, space)
    if isinstance(spaces, (list, tuple)):
        _check_space_list(space, spaces)
    q = _check_query(query, index.searcher)
    kinds_t = _check_kinds(kinds)
    since_d = _check_date("since", since)
    until_d = _check_date("until", until)
    start, end = (aware(since_d), aware(until_d)) if since_d and until_d else (None, None)
    if start is not None and end is not None and start >= end:  # both ISO (_check_date): both aware
        raise ParameterError("until", f"must be later than since ({since_d}), got {until_d} (until is exclusive)")
    if container == "shared" and spaces is not None:
        raise ParameterError("spaces", "not available in a shared workspace container: it searches its own space only")
    return Checked(q, Filters(kinds=kinds_t, since=since_d, until=until_d), who, space)


def check_session(index: HistoryIndexPort, caller: str | None, container: str,
                  space: str | None) -> tuple[str | None, str]:
    """Who is searching (None: a shared container) and the current space, from the session:
    ``container`` and ``caller`` checked, the space defaulting to the caller's first
    (``index.default_space``). Shared by every history tool (history_search, chat_read, app_row)."""
    if container not in CONTAINERS:
        raise ParameterError("container", f"must be 'personal' or 'shared', got {shown(container)}")
    if container == "shared" and caller is not None:
        raise ParameterError("caller", "a shared workspace container has no caller (no person behind it); leave the "
                                       "caller out, or search in a personal container")
    if container == "personal":
        if caller is None:
            raise ParameterError("caller", "required in a personal container: the user id of the person searching")
        if not isinstance(caller, str) or not caller.strip():
            raise ParameterError("caller", f"must be a user id, got {shown(caller)}")
    if space is None:
        space = _default_space(index, caller, container)
    if not is_slug(space):
        raise ParameterError("space", f"must be a space slug (a folder name), got {shown(space)}")
    return (caller if container == "personal" else None), space


def query_lang(query: str, space_lang: str) -> str:
    """The language of the answer's messages: the query's, or ``space_lang`` (the space's, Russian
    by default) when the query holds no word, only IDs, numbers and signs (``ATL-1655``, ``#412``;
    issue 28 item 8)."""
    if not _LETTER.search(without_identifiers(query)):
        return space_lang if space_lang in LANGS else "ru"
    detected = detect_language(query)
    return detected if detected in LANGS else "en"


_LETTER = re.compile(r"[^\W\d_]")


def is_slug(value: object) -> TypeGuard[str]:
    """A space slug is a folder name: 1-255 characters, no path separator, NUL or control character."""
    return isinstance(value, str) and 0 < len(value) <= 255 and not any(c in value for c in "/\\\x00") \
        and value not in (".", "..") and not CONTROL_CHARS.search(value)


def _index_of(ctx: ToolContext) -> HistoryIndexPort:
    if not isinstance(ctx, ToolContext):
        raise TypeError(f"ctx must be a ToolContext, got {type(ctx).__name__}")
    if ctx.index is None:
        raise TypeError("history_search needs the history index in ctx.index (a HistoryIndex)")
    return cast(HistoryIndexPort, ctx.index)  # the tool needs history_index: the server gives a HistoryIndex


def _search(index: HistoryIndexPort, c: Checked, k: int, scope: Scope,
            pick: Callable[[list[Hit]], list[Hit]] | None = None) -> Result:
    """The searcher's result in ``scope``; the ``kinds`` filter as one mask where the index keeps
    its records' kinds (the same records as ``Filters.accepts`` checks one by one)."""
    filters, mask = c.filters, None
    kinds_mask = getattr(index, "kinds_mask", None)
    if filters.kinds and kinds_mask is not None:
        filters, mask = replace(filters, kinds=None), kinds_mask(filters.kinds)
    try:
        return index.searcher.search(c.query, k=k, filters=filters, record_mask=mask, scope=scope, pick=pick)
    except InputError as exc:  # pragma: no cover - checked before
        if exc.param not in ("query", "k"):  # the searcher's query or k; any other error as it is
            raise
        raise ParameterError("query", str(exc)) from None


def _default_space(index: HistoryIndexPort, caller: str | None, container: str) -> str:
    """The space a caller's search runs in when the session names none (H14: membership now, or as
    indexed, so a removed member is told why nothing was searched)."""
    if container == "shared":
        raise ParameterError("space", "required in a shared workspace container: the slug of the space it belongs to")
    found = index.default_space(caller)
    if found is None:
        raise ParameterError("space", f"the caller {shown(caller)} is a member of no space; give the space the search runs in")
    return found


def _check_space_list(space: str, spaces: Sequence[str]) -> None:
    if not spaces:
        raise ParameterError("spaces", "the list is empty; give at least one space slug or \"all\"")
    for slug in spaces:
        if not is_slug(slug):
            raise ParameterError("spaces", f"every item must be a space slug (a folder name), got {shown(slug)}")
    wanted = dict.fromkeys([space, *spaces])
    if len(wanted) > MAX_SPACES:
        raise ParameterError("spaces", f"at most {MAX_SPACES} spaces a search, the current space included; "
                                       f"got {len(wanted)}")


def _check_query(query: object, searcher: Searcher) -> str:
    try:
        return searcher.validate_query(query)
    except InputError as exc:
        raise ParameterError("query", str(exc).removeprefix("query ").removeprefix("query: ")) from None


def _check_kinds(kinds: Sequence[str] | str | None) -> tuple[str, ...] | None:
    if kinds is None:
        return None
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, (list, tuple)) or not kinds:
        raise ParameterError("kinds", f"give a non-empty list of kinds from {list(KINDS)}")
    for k in kinds:
        if k not in KINDS:
            raise ParameterError("kinds", f"unknown kind {shown(k)}; valid kinds: {list(KINDS)}")
    return tuple(dict.fromkeys(kinds))


def _check_date(param: str, value: object) -> str | None:
    """An ISO date (``YYYY-MM-DD``) or date-time; a date-time without an offset is UTC."""
    if value is None:
        return None
    t = parse_iso(value) if isinstance(value, str) else None
    if t is None:
        raise ParameterError(param, f"expected an ISO date (YYYY-MM-DD) or date-time, got {shown(value)}")
    if not isinstance(t, _dt.datetime):
        return t.isoformat()
    moment = aware(t)
    assert moment is not None  # a datetime is always made aware
    return moment.isoformat()


def _check_limit(limit: object, with_spaces: bool) -> int:
    hi = MAX_LIMIT_SPACES if with_spaces else MAX_LIMIT
    if limit is None:
        return DEFAULT_LIMIT_SPACES if with_spaces else DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= hi:
        extra = " with spaces" if with_spaces else ""
        raise ParameterError("limit", f"must be an integer from 1 to {hi}{extra}, got {shown(limit)}")
    return limit


@dataclass(frozen=True)
class RawAnswer:
    """``HistoryIndex.raw_search``: the searcher's result within the caller's scope, and the header
    line(s) saying where it searched and which spaces it skipped and why (H14)."""

    result: Result
    header: tuple[str, ...]
    searched: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        """What ``searchkit search --index --json`` prints for a history index (sanitised:
        ``searchkit.strict_json.safe_data``, issue 39 item 3)."""
        return safe_data({
            **self.result.to_dict(),
            "header": list(self.header),
            "searched": list(self.searched),
            "skipped": [{"space": s, "reason": r} for s, r in self.skipped],
        })


MAX_RAW_K = 1000


def raw(
    index: HistoryIndexPort, query: object, *, k: object = 10, kinds: Sequence[str] | str | None = None,
    since: object = None, until: object = None, spaces: str | Sequence[str] | None = None,
    caller: str | None, container: str, space: str | None,
) -> RawAnswer:
    """``HistoryIndex.raw_search``: the searcher's own top ``k`` within exactly the scope ``run``
    uses for the same caller, container, space and spaces (checked the same way, by ``check``)."""
    c = check(index, query, kinds, since, until, spaces, caller=caller, container=container, space=space)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_RAW_K:
        raise ParameterError("k", f"must be an integer from 1 to {MAX_RAW_K}, got {shown(k)}")
    plan = index.plan(c.who, spaces, c.space)
    lang = query_lang(c.query, plan.access.lang(c.space))
    result = Result(query=c.query, hits=(), config_fingerprint=index.searcher.config.fingerprint())
    if plan.searched:
        result = _search(index, c, k, plan.scope)
    header: list[str] = []
    if spaces is not None or plan.skipped or not plan.searched:
        header = _header(lang, plan.searched, plan.skipped, _own(plan, c.who))
    return RawAnswer(result, tuple(header), tuple(plan.searched), tuple(plan.skipped))


def _own(plan: Plan, who: str | None) -> tuple[str, ...] | None:
    """The caller's searchable spaces as they are now, told when nothing could be searched."""
    if plan.searched or who is None:
        return None
    return tuple(sorted(s for s, info in plan.access.spaces.items() if who in info.members and info.history_search))
