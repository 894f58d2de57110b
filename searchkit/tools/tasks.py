"""Workspace task search (SPEC T, seed 003): ``task_search``, ``read_around``, ``list_tasks``.

Search runs over the indexed (normalised, redacted) text of the other tasks' comments in the
caller's space. The space boundary and the exclusion of the current task are conditions of the
SQL query itself (T1). Terms are quoted one by one for FTS5 (T4); a term shorter than three
characters sends the whole query down the LIKE path, same any/all meaning, newest first. An
``any`` search that finds nothing is split at particles and punctuation (Sudachi parts of
speech) and run once more (T5). ``around_ref`` returns raw comment text with its neighbours (T6):
one comment each side unless ``context`` says otherwise, as the seed's example shows
(``comment:88 前後 2 件``: 86, 88, 90). ``list_tasks`` shows each task's state as the platform gave
it and filters on its class (``searchkit.ingest.tasks.STATE_CLASSES``).

The answers and their rendering are ``searchkit.tools.task_answers`` (``render`` writes no
terminal control character). The parameter dataclasses are here; each function takes its parameters
and the session's ``ToolContext`` (the store ``ctx.store``, the engine ``ctx.engine``, the space,
the current task and the signed-in owner ``ctx.caller``) and asks the task engine
(``searchkit.tools.task_engine``: a Searcher in the search's SQL scope) directly. The tools
(``searchkit.tools.task_tools``: what the CLI and the server run) check the session and the caller's
membership first, then call these; the task eval calls ``task_search`` as they do.
"""
from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Mapping, Sequence

from searchkit.analyze import content_words
from searchkit.errors import ParameterError
from searchkit.ingest.tasks import fts
from searchkit.ingest.tasks.fts import MATCH_OPERATORS
from searchkit.ingest import tasks as store
from searchkit.ingest.tasks import query_terms
from searchkit.ports import TaskEnginePort
from searchkit.retrievers.fts5 import TaskScope, TermQuery
from searchkit.tools.base import ToolContext
from searchkit.tools.history_search import is_slug
from searchkit.tools.task_answers import (  # noqa: F401 - the answers' names, importable from here as before
    AroundResult, Comment, SearchResult, TaskHit, TaskList, TaskSummary, Unavailable, render,
)
from searchkit.tools.task_engine import TaskEngine

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
DEFAULT_LIMIT, MAX_LIMIT = 10, 30
MAX_CONTEXT = 5
AROUND_DEFAULT_CONTEXT = 1
"""``around_ref`` reads the comment *with* its neighbours: one each side unless ``context`` says
otherwise, as the seed's example (``comment:88 前後 2 件``: 86, 88, 90) shows. ``context``'s own
default, 0, is the number of neighbours attached to each *search hit* (T3)."""
DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT = 20, 50
FILTER_KINDS: tuple[str, ...] = ("request", "comment", "interjection", "result", "ask", "progress", "handoff")
LIST_STATES: tuple[str, ...] = ("open", "closed")
EXCERPT_CHARS = 160

_REF = re.compile(r"comment:([0-9]+)", re.ASCII)
_SENTENCE_END = re.compile(r"[。！？!?\n]|\.(?=\s|$)")
_MAX_ID = 2**63 - 1


TaskSearchError = ParameterError
"""A bad parameter; ``param`` names it (``query``, ``around_ref``, ``limit``...): the one input error."""


_REF_DOC = 'A comment ref, "comment:<id>", as a hit shows it.'


@dataclass(frozen=True)
class TaskSearchParams:
    """Search the comments of the other tasks of the current space (whatever their state; the
    current task is never searched), or read around one comment. Give exactly one of query and
    around_ref. Hits show redacted excerpts; around_ref and context return the raw comments."""

    SCHEMA_RULES: ClassVar[Mapping[str, Any]] = MappingProxyType({"oneOf": [
        {"title": "search", "required": ["query"], "properties": {"query": {"type": "string"}}},
        {"title": "read around", "required": ["around_ref"], "properties": {"around_ref": {"type": "string"}}},
    ]})
    """Exactly one of query and around_ref (T3), in the generated schema (``Tool.schema``)."""

    query: str | None = field(default=None, metadata={
        "doc": f"One or a few keywords (at most {MAX_QUERY_CHARS} characters); exclusive with around_ref."})
    around_ref: str | None = field(default=None, metadata={
        "doc": f"{_REF_DOC} Read that comment and its neighbours instead of searching; exclusive with query."})
    match_mode: str | None = field(default=None, metadata={
        "choices": MATCH_OPERATORS, "doc": "any (default): comments holding any term; all: every term."})
    context: int | None = field(default=None, metadata={
        "lo": 0, "hi": MAX_CONTEXT,
        "doc": f"Neighbouring comments attached to each hit, each side (default 0; with around_ref "
               f"{AROUND_DEFAULT_CONTEXT})."})
    limit: int | None = field(default=None, metadata={
        "lo": 1, "hi": MAX_LIMIT, "doc": f"Hits, default {DEFAULT_LIMIT} (query mode only)."})
    kind: str | None = field(default=None, metadata={
        "choices": FILTER_KINDS, "doc": "Only comments of this kind (query mode only)."})
    author: str | None = field(default=None, metadata={"doc": "Only comments by this author (query mode only)."})
    task_id: int | None = field(default=None, metadata={
        "lo": 1, "doc": "Only comments of this task (query mode only); never the current task."})


@dataclass(frozen=True)
class TaskAroundParams:
    """Read one comment of another task of the current space and its neighbours, as written."""

    around_ref: str = field(metadata={"doc": _REF_DOC})
    context: int | None = field(default=None, metadata={
        "lo": 0, "hi": MAX_CONTEXT, "doc": f"Neighbours each side, default {AROUND_DEFAULT_CONTEXT}."})


@dataclass(frozen=True)
class TaskListParams:
    """List the other tasks of the current space, most recently updated first: id, state, title,
    piece, last update."""

    state: str | None = field(default=None, metadata={
        "choices": LIST_STATES, "doc": "open (running, 実行中, open) or closed (done, 完了, interrupted, 中断, "
                                       "closed); a state the platform does not name is open."})
    limit: int | None = field(default=None, metadata={
        "lo": 1, "hi": MAX_LIST_LIMIT, "doc": f"Tasks, default {DEFAULT_LIST_LIMIT}."})


# --------------------------------------------------------------------------- validation

def check_session(ctx: ToolContext) -> Unavailable | None:
    """T8's answer where the tools cannot run (no signed-in owner ``ctx.caller``, a subtask), else
    None; raises ``TaskSearchError`` naming ``space`` for a space that is not a slug (a folder name:
    the rule of every space slug, ``history_search.is_slug``; issue 39 item 8) and ``current_task``
    for a bad task id. The caller's membership is the tools' check (``searchkit.tools.task_members``)."""
    if not isinstance(ctx, ToolContext):
        raise TypeError(f"ctx must be a ToolContext, got {type(ctx).__name__}")
    if not ctx.caller:
        return Unavailable("no_auth")
    if ctx.subtask:
        return Unavailable("subtask")
    if not is_slug(ctx.space):
        shown = repr(ctx.space)
        raise TaskSearchError("space", "must be a space slug (a folder name), got "
                                       f"{shown if len(shown) <= 60 else shown[:57] + '...'}")
    if ctx.current_task is not None:
        _check_id(ctx.current_task, "current_task")
    return None


def task_store(ctx: ToolContext) -> sqlite3.Connection:
    """The session's open task store (``ctx.store``)."""
    if not isinstance(ctx, ToolContext):
        raise TypeError(f"ctx must be a ToolContext, got {type(ctx).__name__}")
    if ctx.store is None:
        raise TypeError("the task tools need the open task store in ctx.store (searchkit.ingest.tasks.open_readonly)")
    return ctx.store


def _check_id(value: object, param: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_ID:
        raise TaskSearchError(param, f"must be a positive integer task id, got {value!r}")
    return value


def _check_int(value: object, param: str, lo: int, hi: int, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise TaskSearchError(param, f"must be an integer from {lo} to {hi}, got {value!r}")
    if not lo <= value <= hi:
        raise TaskSearchError(param, f"must be from {lo} to {hi}, got {value}")
    return value


def _check_text(value: object, param: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise TaskSearchError(param, f"must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise TaskSearchError(param, "must not contain NUL characters")
    if not value.strip():
        raise TaskSearchError(param, "must not be empty")
    if len(value) > max_chars:
        raise TaskSearchError(
            param, f"is {len(value):,} characters long; at most {max_chars:,} are allowed (use one or a few keywords)"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise TaskSearchError(param, "is not valid Unicode text (lone surrogate)") from None
    return value


def parse_ref(ref: object) -> int:
    """The comment id of an ``around_ref`` (``comment:<id>``); anything else is a TaskSearchError."""
    if not isinstance(ref, str):
        raise TaskSearchError("around_ref", f'must be a string "comment:<id>", got {type(ref).__name__}')
    m = _REF.fullmatch(ref.strip())
    if not m or not 1 <= int(m.group(1)) <= _MAX_ID:
        shown = ref if len(ref) <= 60 else ref[:57] + "..."
        raise TaskSearchError("around_ref", f'must look like "comment:88", got {shown!r}')
    return int(m.group(1))


# --------------------------------------------------------------------------- zero-hit split (T5)

def split_compound(text: str) -> tuple[str, ...]:
    """Split ``text`` at particles, auxiliary verbs, punctuation and spaces (Sudachi POS, T5).

    ``満月の周期の計算`` -> ``("満月", "周期", "計算")``; runs of other morphemes stay whole
    (``ログイン画面の改修`` -> ``("ログイン画面", "改修")``). Delegates to
    ``searchkit.analyze.content_words``.
    """
    return tuple(content_words(text))


_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _split_terms(terms: Sequence[str]) -> tuple[str, ...]:
    """Split the Japanese terms (those holding kana or kanji); other terms stay as they are."""
    seen: dict[str, None] = {}
    for t in terms:
        for p in split_compound(t) if _JAPANESE.search(t) else (t,):
            seen.setdefault(p, None)
    return tuple(seen)


# --------------------------------------------------------------------------- excerpts

def _fold_map(text: str) -> tuple[str, list[int]]:
    out, pos = [], []
    for i, ch in enumerate(text):
        f = store.fold(ch)
        out.append(f)
        pos.extend([i] * len(f))
    return "".join(out), pos


def excerpt(text: str, terms: Sequence[str], max_chars: int = EXCERPT_CHARS) -> str:
    """The sentence of ``text`` holding the first match of any term, cut to ``max_chars``, as ``…s…``."""
    folded, pos = _fold_map(text)
    hits = [folded.find(store.fold(t)) for t in terms]
    hits = [h for h in hits if h >= 0]
    at = pos[min(hits)] if hits else 0
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() <= at:
            start = m.end()
        else:
            break
    stop = _SENTENCE_END.search(text, max(at, start))
    end = stop.start() if stop else len(text)
    if end - start > max_chars:
        start = max(start, min(at - max_chars // 3, end - max_chars))
        end = min(end, start + max_chars)
    snippet = " ".join(text[start:end].split())
    return f"…{snippet}…"


# --------------------------------------------------------------------------- SQL

_HIT_COLUMNS = "c.id, c.task, t.title, c.author, c.kind, c.ts, c.indexed"


def _run(
    conn: sqlite3.Connection, engine: TaskEnginePort, query: str, terms: Sequence[str], mode: str, limit: int,
    scope: TaskScope,
) -> tuple[str, list[tuple]]:
    """The engine's comment ids, fetched again under the same SQL scope (T1), in its order."""
    ids, method = engine.rank(TermQuery(query, tuple(terms), mode), scope, limit)
    if not ids:
        return method, []
    where, params = scope.sql()
    marks = ",".join("?" for _ in ids)
    sql = (
        f"SELECT {_HIT_COLUMNS} FROM comments c JOIN tasks t ON t.id = c.task"
        f" WHERE c.indexed IS NOT NULL AND c.id IN ({marks}) AND {where}"
    )
    found = {int(r[0]): r for r in conn.execute(sql, list(ids) + params).fetchall()}
    return method, [found[i] for i in ids if i in found]


def _comment(row: tuple, target: int | None = None) -> Comment:
    cid, task, author, kind, ts, body = row
    return Comment(int(cid), int(task), author, kind, ts, body, is_target=cid == target)


def _neighbours(conn: sqlite3.Connection, comment_id: int, context: int) -> tuple[Comment, ...]:
    """The comment and ``context`` comments of its task either side, in time order."""
    row = conn.execute("SELECT task, ts_utc FROM comments WHERE id = ?", (comment_id,)).fetchone()
    task, ts_utc = row
    cols = "id, task, author, kind, ts, body"
    before = conn.execute(
        f"SELECT {cols} FROM comments WHERE task = ? AND (ts_utc, id) < (?, ?)"
        " ORDER BY ts_utc DESC, id DESC LIMIT ?",
        (task, ts_utc, comment_id, context),
    ).fetchall()
    this = conn.execute(f"SELECT {cols} FROM comments WHERE id = ?", (comment_id,)).fetchone()
    after = conn.execute(
        f"SELECT {cols} FROM comments WHERE task = ? AND (ts_utc, id) > (?, ?)"
        " ORDER BY ts_utc, id LIMIT ?",
        (task, ts_utc, comment_id, context),
    ).fetchall()
    rows = list(reversed(before)) + [this] + after
    return tuple(_comment(r, comment_id) for r in rows)


# --------------------------------------------------------------------------- the tools

def task_search(params: TaskSearchParams, ctx: ToolContext) -> SearchResult | AroundResult | Unavailable:
    """Search the other tasks of ``ctx.space`` (SPEC T1–T6), or read around a comment.

    ``params``: exactly one of ``query`` and ``around_ref`` (``"comment:<id>"``). ``match_mode``
    ``any`` (default, OR) or ``all`` (AND); ``context`` 0–5 raw neighbours per hit (default 0; 1
    for ``around_ref``); ``limit`` 1–30 (default 10, query mode only); filters ``kind``,
    ``author``, ``task_id`` (query mode only). ``ctx.engine`` (a ``TaskEngine`` for ``ctx.space``;
    None: FTS5 alone under the shipped config, the seed's ranking) composes the retrievers
    ``tasks.retrievers`` names; whatever it proposes is fetched again under the SQL scope, so the
    scope always decides what may come back (T1).

    Returns:
        ``SearchResult`` / ``AroundResult``, or ``Unavailable`` where the tool cannot run (T8).
    Raises:
        TaskSearchError: a bad parameter; ``.param`` names it. Nothing is searched.
    """
    unavailable = check_session(ctx)
    if unavailable:
        return unavailable
    conn = task_store(ctx)
    p = params
    query, author = p.query, p.author
    if (query is None) == (p.around_ref is None):
        got = "both" if query is not None else "neither"
        raise TaskSearchError("query/around_ref", f"give exactly one of query and around_ref (got {got})")
    if p.around_ref is not None:
        for name, value in (("match_mode", p.match_mode), ("limit", p.limit), ("kind", p.kind),
                            ("author", author), ("task_id", p.task_id)):
            if value is not None:
                raise TaskSearchError(name, "applies to query mode only; it cannot be used with around_ref")
        return read_around(TaskAroundParams(p.around_ref, p.context), ctx)

    kind, task_id = p.kind, p.task_id
    query = _check_text(query, "query", MAX_QUERY_CHARS)
    mode = "any" if p.match_mode is None else p.match_mode
    if mode not in fts.MATCH_OPERATORS:
        raise TaskSearchError("match_mode", f"must be one of {', '.join(fts.MATCH_OPERATORS)}, got {mode!r}")
    ctx_n = _check_int(p.context, "context", 0, MAX_CONTEXT, 0)
    lim = _check_int(p.limit, "limit", 1, MAX_LIMIT, DEFAULT_LIMIT)
    if kind is not None and kind not in FILTER_KINDS:
        raise TaskSearchError("kind", f"must be one of {', '.join(FILTER_KINDS)}, got {kind!r}")
    if author is not None:
        author = _check_text(author, "author", 200).strip()
    if task_id is not None:
        _check_id(task_id, "task_id")
        if task_id == ctx.current_task:
            raise TaskSearchError(
                "task_id", f"{task_id} is the current task; this tool searches the other tasks of the space"
            )
    terms = query_terms(query)
    if len(terms) > MAX_TERMS:
        raise TaskSearchError("query", f"has {len(terms)} terms; at most {MAX_TERMS} (use one or a few keywords)")
    if not store.check_fts(conn):  # a store without its FTS table where FTS5 exists raises, naming the file
        return Unavailable("no_fts5")

    space = ctx.space
    assert space is not None  # check_session: a slug
    engine = ctx.engine if ctx.engine is not None else TaskEngine(conn, space)
    if engine.space != space:
        raise TaskSearchError("space", f"the engine was built for space {engine.space!r}, not {space!r}")
    scope = TaskScope(space, ctx.current_task, kind, author, task_id)
    method, rows = _run(conn, engine, query, terms, mode, lim, scope)
    split_from = None
    if not rows and mode == "any":
        parts = _split_terms(terms)
        if parts and parts != terms:
            split_from = " ".join(terms)
            terms = parts
            method, rows = _run(conn, engine, " ".join(parts), terms, mode, lim, scope)

    hits = tuple(
        TaskHit(
            task_id=int(r[1]), task_title=r[2], comment_id=int(r[0]), author=r[3], kind=r[4], ts=r[5],
            excerpt=excerpt(r[6], terms),
            context=_neighbours(conn, int(r[0]), ctx_n) if ctx_n else (),
        )
        for r in rows
    )
    return SearchResult(" ".join(terms), terms, mode, method, hits, split_from)


def read_around(params: TaskAroundParams, ctx: ToolContext) -> AroundResult | Unavailable:
    """The raw text of comment ``params.around_ref`` (``"comment:<id>"``) and ``params.context``
    neighbours each side.

    A comment outside ``ctx.space`` answers exactly as one that does not exist.
    """
    unavailable = check_session(ctx)
    if unavailable:
        return unavailable
    conn = task_store(ctx)
    cid = parse_ref(params.around_ref)
    n = _check_int(params.context, "context", 0, MAX_CONTEXT, AROUND_DEFAULT_CONTEXT)
    row = conn.execute(
        "SELECT c.task, t.title FROM comments c JOIN tasks t ON t.id = c.task WHERE c.id = ? AND t.space = ?",
        (cid, ctx.space),
    ).fetchone()
    if row is None:
        raise TaskSearchError("around_ref", f"comment:{cid} was not found in space {ctx.space!r}")
    if row[0] == ctx.current_task:
        raise TaskSearchError(
            "around_ref", f"comment:{cid} belongs to the current task; this tool reads the other tasks of the space"
        )
    return AroundResult(int(row[0]), row[1], cid, n, _neighbours(conn, cid, n))


def list_tasks(params: TaskListParams, ctx: ToolContext) -> TaskList | Unavailable:
    """Other tasks of ``ctx.space``, most recently updated first (T7); ``params.limit`` 1–50, default 20.

    ``params.state`` (``open`` / ``closed``) filters on the class of each task's state
    (``searchkit.ingest.tasks.STATE_CLASSES``: running / 実行中 / open are open; done / 完了 /
    interrupted / 中断 / closed are closed; a state it does not know is open)."""
    unavailable = check_session(ctx)
    if unavailable:
        return unavailable
    conn = task_store(ctx)
    state = params.state
    if state is not None and state not in LIST_STATES:
        raise TaskSearchError("state", f"must be one of {', '.join(LIST_STATES)}, got {state!r}")
    lim = _check_int(params.limit, "limit", 1, MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT)
    where = ["space = ?"]
    space = ctx.space
    assert space is not None  # check_session: a slug
    args: list[Any] = [space]
    if ctx.current_task is not None:
        where.append("id <> ?")
        args.append(ctx.current_task)
    if state is not None:
        where.append("state = ?")
        args.append(state)
    rows = conn.execute(
        f"SELECT id, title, coalesce(state_raw, state), piece, updated, state FROM tasks WHERE {' AND '.join(where)}"
        " ORDER BY updated_utc IS NULL, updated_utc DESC, id DESC LIMIT ?",
        args + [lim],
    ).fetchall()
    return TaskList(space, state, tuple(TaskSummary(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows))
