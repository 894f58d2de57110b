"""Opening a card's ref (issue 30; seed 000 "Как открыть карточку"): what ``chat_read`` and
``app_row`` share.

A ref is opened in one space: the current one (from the session), or ``in_space``, the space a
card named (``space: <slug>``), for a caller in a personal container. The record comes from the
history index the tool reads (``ctx.index``: its text was redacted at ingest, as the cards' is),
and it is shown under exactly the rules of history search (H14, H15): the space must be one the
caller is a member of now with history search on, a personal chat (and its digests) only for its
owner, never in a shared container, and the chat as the workspace has it now must allow it too.
What the tools then show is read from the workspace now (:mod:`searchkit.tools.live_read`); a
source found gone or no longer the caller's at that read answers like a ref that names nothing
(``Opened.refused``).

A ref the caller may not see reads exactly like a ref that names nothing: the same
``ParameterError`` naming ``ref``, with the same message, after the same work (the space's plan
and the caller's mask are computed before the record is looked up, whatever the ref).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from searchkit.errors import ParameterError
from searchkit.ports import HistoryIndexPort
from searchkit.records import Record
from searchkit.tools.base import ToolContext
from searchkit.tools.cards import shown
from searchkit.tools.history_search import check_session, is_slug
from searchkit.tools.messages import LANGS, message

MAX_REF_CHARS = 600
"""The longest ref accepted (a table name and a row id, or a chat id, are far shorter)."""


@dataclass(frozen=True)
class Opened:
    """A record the caller may see: the record, the space it was opened in, the language of the
    answer's messages (the session's, else the space's), who is reading (None: a shared
    container) and the message a ref that names nothing gets in that space (``refused``)."""

    record: Record
    space: str
    lang: str
    who: str | None = None
    denial: str = ""

    def refused(self) -> ParameterError:
        """The error of a ref that names nothing the caller can read in this space: for a source
        found gone, in doubt or no longer the caller's when it is read now (``tools.live_read``)."""
        return ParameterError("ref", self.denial or "nothing that you can read")


def open_ref(ctx: ToolContext, ref: object, kind: str, what: str, in_space: object) -> Opened:
    """The record of ``kind`` (``chat``, ``app``) whose ref is ``ref`` (``<kind>:...``) in the
    space the caller opens it in, if the caller may see it.

    Raises ``ParameterError`` naming the parameter at fault: ``ref`` (malformed, or nothing the
    caller can read: one message for both), ``in_space``, or a session field (``caller``,
    ``container``, ``space``, ``lang``) set wrong by the adapter."""
    index = _index_of(ctx)
    prefix = f"{kind}:"
    body = _check_ref(ref, prefix, what)
    who, current = check_session(index, ctx.caller, ctx.container, ctx.space)
    space = _check_in_space(in_space, current, ctx.container)
    if ctx.lang is not None and ctx.lang not in LANGS:
        raise ParameterError("lang", f"must be one of {list(LANGS)}, got {shown(ctx.lang)}")
    plan = index.plan(who, None, space)  # membership, switch and chats read now (H14, H15)
    row = index.find(space, kind, f"{prefix}{body}")
    allowed = bool(plan.searched) and plan.scope is not None and row is not None and bool(plan.scope[row])
    denial = f"no {what} {shown(ref)} that you can read in space {shown(space)}"
    if not allowed:
        # the space's own reason when it was not searched at all (a member removed, history search
        # switched off since the build): it says nothing about the ref, so every ref reads the same
        why = "; ".join(message("en", reason, slug=shown(slug)) for slug, reason in plan.skipped)
        why = f" ({why})" if why and not plan.searched else ""
        raise ParameterError("ref", denial + why)
    record = index.searcher.records[row]
    return Opened(record, space, ctx.lang or plan.access.lang(space), who, denial)


def _index_of(ctx: ToolContext) -> HistoryIndexPort:
    if not isinstance(ctx, ToolContext):
        raise TypeError(f"ctx must be a ToolContext, got {type(ctx).__name__}")
    if ctx.index is None:
        raise TypeError("this tool needs the history index in ctx.index (a HistoryIndex)")
    return cast(HistoryIndexPort, ctx.index)  # the tool needs history_index: the server gives a HistoryIndex


def _check_ref(ref: object, prefix: str, what: str) -> str:
    """The part of ``ref`` after ``prefix``: a non-empty printable string of at most
    ``MAX_REF_CHARS`` characters."""
    if not isinstance(ref, str) or not ref.startswith(prefix) or len(ref) == len(prefix):
        raise ParameterError("ref", f"expected a {what} ref as a card shows it, {prefix}..., got {shown(ref)}")
    if len(ref) > MAX_REF_CHARS or not ref.isprintable():
        raise ParameterError("ref", f"a {what} ref is one printable line of at most {MAX_REF_CHARS} characters")
    return ref[len(prefix):]


def _check_in_space(in_space: object, current: str, container: str) -> str:
    if in_space is None or in_space == current:
        return current
    if not is_slug(in_space):
        raise ParameterError("in_space", f"must be a space slug (a folder name), got {shown(in_space)}")
    if container == "shared":
        raise ParameterError("in_space", "not available in a shared workspace container: it reads its own space only")
    return in_space
