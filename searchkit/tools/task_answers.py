"""The answers of the task tools (SPEC T, seed 003) and the markdown the seed shows for them.

``SearchResult`` (``task_search``), ``AroundResult`` (``task_around`` / ``around_ref``),
``TaskList`` (``task_list``) and ``Unavailable`` (T8: no signed-in owner, a subtask, no FTS5) each
have ``to_dict()`` (JSON-able, what ``--json`` prints) and ``render(lang)`` (``ja``, the seed's
language, by default; ``en``, ``ru``). ``render`` writes no terminal control character: titles,
authors, states, pieces, queries and comment text pass through ``searchkit.tools.terminal`` (the
helper history search uses), so an ESC, a BEL or a bidi override in the data never reaches the
terminal (issue 27 item 16); ``to_dict`` keeps the text as stored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from searchkit.errors import ParameterError
from searchkit.ingest import tasks as store
from searchkit.tools.messages import LANGS, task_messages
from searchkit.tools.outputs import output_data
from searchkit.tools.terminal import one_line, plain_text

DEFAULT_LANG = "ja"
"""The language of a task tool's answer when none is asked for (the seed's)."""


class _Rendered:
    """``render(lang)`` for the answers below (the module's ``render``)."""

    def render(self, lang: str | None = None) -> str:
        """The answer as the seed shows it, in ``lang`` (``ja``, ``en``, ``ru``; None: ``ja``)."""
        if lang is not None and lang not in LANGS:
            raise ParameterError("lang", f"must be one of {list(LANGS)}, got {lang!r}"[:200])
        return render(self, lang or DEFAULT_LANG)  # type: ignore[arg-type]


UNAVAILABLE_REASONS: tuple[str, ...] = ("no_auth", "subtask", "no_fts5", "not_member", "members_unknown")


@dataclass(frozen=True)
class UnavailableData:
    """The task tools cannot run here; the text says why in a sentence."""

    unavailable: str = field(metadata={
        "choices": UNAVAILABLE_REASONS,
        "doc": "no_auth (no signed-in owner), subtask (a subtask run), no_fts5 (this SQLite has no FTS5), "
               "not_member (you are not a member of this space now) or members_unknown."})


@dataclass(frozen=True)
class Unavailable(_Rendered):
    """The tool cannot run here (T8): ``reason`` is ``no_auth``, ``subtask``, ``no_fts5``, or (T1)
    ``not_member`` (the caller is not a member of the space now, or it has no such space) or
    ``members_unknown`` (nothing in this context says who the space's members are)."""

    reason: str

    Output = UnavailableData

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        return output_data(UnavailableData(self.reason))


@dataclass(frozen=True)
class Comment:
    """One comment, raw (as written, unredacted); is_target marks the one asked for.

    As ``around_ref`` and ``context`` show it."""

    comment_id: int
    task_id: int
    author: str
    kind: str
    ts: str
    text: str
    is_target: bool = False


@dataclass(frozen=True)
class TaskHit:
    """A matching comment (comment:<comment_id> of task:<task_id>): its task's title, author, kind and
    time, a redacted excerpt, and with context its neighbouring comments, raw."""

    task_id: int
    task_title: str
    comment_id: int
    author: str
    kind: str
    ts: str
    excerpt: str
    context: tuple[Comment, ...] = ()


@dataclass(frozen=True)
class SearchResult(_Rendered):
    """The comments of the other tasks that match a query. To read a hit's neighbours, call again
    with around_ref "comment:<id>". method: fts (relevance), like (a term under 3 characters: newest
    first) or hybrid; split_from: the query as given when nothing matched it and it was split at
    particles and punctuation and searched again.

    ``method`` is ``fts`` (bm25 order), ``like`` (newest first) or ``hybrid`` (several retrievers
    fused, ``tasks.retrievers``); ``split_from`` holds the original query when the zero-hit split
    ran (T5)."""

    query: str
    terms: tuple[str, ...]
    match_mode: str
    method: str
    hits: tuple[TaskHit, ...]
    split_from: str | None = None

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        """Plain JSON data (what ``--json`` prints): the fields as they are."""
        return output_data(self)


@dataclass(frozen=True)
class AroundResult(_Rendered):
    """A comment of another task and its neighbours within that task, raw, in time order."""

    task_id: int
    task_title: str
    comment_id: int
    context: int
    comments: tuple[Comment, ...]

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        """Plain JSON data (what ``--json`` prints): the fields as they are."""
        return output_data(self)


@dataclass(frozen=True)
class TaskSummary:
    """One task: state as the platform gave it (実行中, interrupted...), state_class open or closed
    (what the state parameter filters on)."""

    task_id: int
    title: str
    state: str
    piece: str
    updated: str | None
    state_class: str = "open"


@dataclass(frozen=True)
class TaskList(_Rendered):
    """The other tasks of this space, most recently updated first (the current task is never listed).

    T7."""

    space: str
    state: str | None
    tasks: tuple[TaskSummary, ...]

    def to_dict(self, explain: bool = False) -> dict[str, Any]:  # noqa: ARG002 - no scoring internals here
        """Plain JSON data (what ``--json`` prints): the fields as they are."""
        return output_data(self)


# --------------------------------------------------------------------------- rendering

MEMBERSHIP_MESSAGES: dict[str, dict[str, str]] = {
    "ru": {
        "not_member": "Недоступно в этом контексте (вызывающий не участник этого пространства).",
        "members_unknown": "Недоступно в этом контексте (здесь нельзя узнать, кто участники пространства).",
    },
    "en": {
        "not_member": "Not available in this context (the caller is not a member of this space).",
        "members_unknown": "Not available in this context (who the space's members are cannot be read here).",
    },
    "ja": {
        "not_member": "このコンテキストでは利用できません(呼び出し元はこのスペースのメンバーではありません)。",
        "members_unknown": "このコンテキストでは利用できません(スペースのメンバーを確認できません)。",
    },
}
"""The messages of ``Unavailable("not_member")`` and ``Unavailable("members_unknown")`` (T1, issue 39
item 2), until they join the one catalogue (``searchkit.tools.messages``, keys ``task.not_member``
and ``task.members_unknown``); a key the catalogue has wins."""


def _messages(lang: str) -> Mapping[str, str]:
    """Task search's messages in ``lang`` (the ``task.*`` keys of the one catalogue,
    ``searchkit.tools.messages``)."""
    return {**MEMBERSHIP_MESSAGES.get(lang, {}), **task_messages(lang)}


def _q(s: str) -> str:
    """``s`` inside the double quotes of a one-line heading (controls stripped, ``"`` escaped)."""
    return one_line(s).replace("\\", "\\\\").replace('"', '\\"')


def _comment_block(c: Comment, pad: str = "") -> str:
    """One comment in the seed's layout: ``- comment:<id> author/kind ts [← ]text`` on one line.

    The raw text follows inline (after ``← `` for the target comment); a multi-line text continues
    on the lines below, indented under its item. Controls are stripped (``plain_text``).
    """
    first, *rest = plain_text(c.text).rstrip("\n").split("\n")
    parts = [f"{pad}- comment:{c.comment_id} {_who(c.author, c.kind)} {one_line(c.ts)}"]
    if c.is_target:
        parts.append("←")
    if first:
        parts.append(first)
    return "\n".join([" ".join(parts)] + [f"{pad}  {line}" if line else "" for line in rest])


def _who(author: str, kind: str) -> str:
    return f"{one_line(author)}/{one_line(kind)}"


def _render_search(r: SearchResult, m: Mapping[str, str]) -> str:
    out = []
    if r.split_from is not None:
        out += [m["split"].format(original=one_line(r.split_from), split=one_line(r.query)), ""]
    out += [f'## Workspace Task Search Results (query: "{_q(r.query)}", {len(r.hits)} hit(s))', ""]
    if not r.hits:
        out.append(m["none"])
        return "\n".join(out) + "\n"
    for h in r.hits:
        out.append(f'- task:{h.task_id} "{_q(h.task_title)}" / comment:{h.comment_id} {_who(h.author, h.kind)}'
                   f' {one_line(h.ts)}')
        out.append(f"  {one_line(h.excerpt)}")
        out += [_comment_block(c, "  ") for c in h.context]
    out += ["", m["hint"]]
    return "\n".join(out) + "\n"


def _render_around(r: AroundResult, m: Mapping[str, str]) -> str:
    head = m["around"].format(task=r.task_id, title=_q(r.task_title), comment=r.comment_id, n=len(r.comments) - 1)
    return "\n".join([head, ""] + [_comment_block(c) for c in r.comments]) + "\n"


def _render_list(r: TaskList, m: Mapping[str, str]) -> str:
    state = f", state: {r.state}" if r.state else ""
    out = [m["list"].format(space=one_line(r.space), state=state, n=len(r.tasks)), ""]
    if not r.tasks:
        return "\n".join(out + [m["list_none"]]) + "\n"
    for t in r.tasks:
        out.append(
            f'- task:{t.task_id} "{_q(t.title)}" {_state_label(t.state, m)} / piece: {one_line(t.piece) or "-"}'
            f' / {m["updated"]} {one_line(t.updated or "") or "-"}'
        )
    out += ["", m["list_hint"]]
    return "\n".join(out) + "\n"


def _state_label(state: str, m: Mapping[str, str]) -> str:
    """``open`` / ``closed`` in the answer's language; any other state as the platform gave it."""
    return m.get(f"state_{state}", "") if state in store.TASK_STATES else (one_line(state) or "-")


def _render_unavailable(r: Unavailable, m: Mapping[str, str]) -> str:
    return m[r.reason] + "\n"


_RENDERERS: dict[type, Callable[[Any, Mapping[str, str]], str]] = {
    SearchResult: _render_search,
    AroundResult: _render_around,
    TaskList: _render_list,
    Unavailable: _render_unavailable,
}


def render(result: SearchResult | AroundResult | TaskList | Unavailable, lang: str = "ja") -> str:
    """Markdown for a tool result, in the seed's layout; ``lang`` is ``ja``, ``en`` or ``ru``."""
    m = _messages(lang)
    try:
        fn = _RENDERERS[type(result)]
    except KeyError:
        raise TypeError(f"cannot render {type(result).__name__}; expected one of "
                        f"{', '.join(t.__name__ for t in _RENDERERS)}") from None
    return fn(result, m)
