"""Who may use the task tools in a space: its members, read when the call runs (SPEC T1; issue 39 item 2).

Seed 003 runs ``SearchWorkspaceTasks`` and ``ListWorkspaceTasks`` on the premise that the caller is
the space's owner or a member; T1 reads that live, as history search does (H14). So every call of
``task_search``, ``task_around`` and ``task_list`` asks an access source
(``searchkit.tools.access``: the workspace's ``SLUG/.space/space.json``, re-read when it changed)
for the space's members now, before anything of the task store is read: a member removed from
``space.json`` gets nothing from the next call on, without a refresh or a restart.

The access source is the session's: the history index's (``ctx.index.access``; ``searchkit serve``
always serves one, built from or pointing at the workspace) or a ``WorkspaceMembers`` (the
``searchkit tasks ... --workspace DIR`` verbs). Where the session has none, nothing says who the
members are: the tools answer ``members_unknown`` in T8's form (a plain message, not an error), as
they do where there is no signed-in owner; doubt resolves to not answering.

A caller who is not a member now gets ``not_member``, and so does a caller with no space, a space
the workspace does not have and a space whose settings cannot be read now: one answer whatever the
space or the store holds, so it never tells a space (or a task, or a comment) that exists from one
that does not. A workspace folder that cannot be read at all refuses the call (``ResourceError``, reason ``access``), as
it refuses a history search.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from searchkit.ingest.workspace import SpaceInfo
from searchkit.ports import ToolContextPort
from searchkit.errors import ResourceError
from searchkit.tools.access import WorkspaceAccess
from searchkit.tools.terminal import one_line

NOT_MEMBER = "not_member"
"""The caller is not a member of the space now (or there is no such space, or its settings cannot
be read now)."""

MEMBERS_UNKNOWN = "members_unknown"
"""Nothing in the session says who the space's members are."""


@dataclass(frozen=True)
class WorkspaceMembers:
    """The task tools' access source where no history index is served: a workspace folder's spaces,
    read at every call (``access``: a ``WorkspaceAccess``). Put in ``ToolContext.index``, where the
    task tools look for ``access``; it is no history index (history search cannot use it)."""

    access: Any

    @classmethod
    def of(cls, workspace: str | os.PathLike[str]) -> "WorkspaceMembers":
        """Members read from the workspace folder ``workspace``."""
        return cls(WorkspaceAccess(workspace))


def access_source(ctx: ToolContextPort) -> Any | None:
    """The session's access source: ``ctx.index.access``, or None where the session has none."""
    index = getattr(ctx, "index", None)
    return None if index is None else getattr(index, "access", None)


def is_member(spaces: Mapping[str, SpaceInfo], caller: str | None, space: str | None) -> bool:
    """Is ``caller`` a member of ``space`` among ``spaces`` (slug -> ``SpaceInfo``, as an access
    snapshot has them)? False for no caller, no space, or a space not listed."""
    info = spaces.get(space) if caller is not None and space is not None else None
    return info is not None and caller in info.members


def refusal(ctx: ToolContextPort) -> str | None:
    """None when ``ctx.caller`` is a member of ``ctx.space`` now; else why the task tools answer
    nothing: ``members_unknown`` (no access source) or ``not_member``. Raises ``ResourceError`` (reason ``access``) when
    the workspace cannot be read at all."""
    source = access_source(ctx)
    if source is None:
        return MEMBERS_UNKNOWN
    if ctx.space is None or ctx.caller is None:
        return NOT_MEMBER
    return None if is_member(source.snapshot().spaces, ctx.caller, ctx.space) else NOT_MEMBER


def token_problem(workspace: str | os.PathLike[str], caller: str | None, space: str | None) -> str | None:
    """Why ``searchkit serve-token`` makes no token for ``caller`` in ``space`` (None: the caller's
    first space) of ``workspace`` now, as one line naming the flag; None when it may. A caller who
    is not a member of the space (of any space, without one), and a shared container (no caller)
    whose space the workspace does not have, are refused; a space that does not exist and one the
    caller is not in are refused alike."""
    shown = one_line(os.fspath(workspace))
    if not os.path.isdir(workspace):
        return f"--workspace: not a folder: {shown}"
    try:
        spaces = WorkspaceAccess(workspace).snapshot().spaces
    except ResourceError:  # who may see what cannot be read (nothing else raises one here)
        return f"--workspace: cannot read the spaces of {shown}"
    if caller is None:  # a shared workspace container: its space must be one the workspace has now
        if space in spaces:
            return None
        return f"--space: the workspace has no space {one_line(repr(space))} whose settings can be read now"
    if space is None:
        if any(is_member(spaces, caller, slug) for slug in spaces):
            return None
        return (f"--caller: {one_line(repr(caller))} is not a member of any space of the workspace now; "
                "a token is made only for a member (SPEC H14, T1)")
    if is_member(spaces, caller, space):
        return None
    return (f"--space: {one_line(repr(caller))} is not a member of a space {one_line(repr(space))} of the "
            "workspace now; a token is made only for a member (SPEC H14, T1)")
