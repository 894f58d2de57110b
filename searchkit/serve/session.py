"""Who is calling and where (issue 30): a ``Session`` fixed by the session, never by a tool argument.

On stdio the launching flags fix it (``--caller``, ``--container``, ``--space``,
``--current-task``); over HTTP the bearer token of each request does (:mod:`searchkit.serve.auth`).
A tool argument named like one of its fields is refused by the tool (``Tool.parse``).
"""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from searchkit.errors import ParameterError
from searchkit.ports import HistoryIndexPort, TaskEnginePort, TaskStore
from searchkit.tools.base import ToolContext
from searchkit.tools.history_search import CONTAINERS, is_slug
from searchkit.tools.messages import LANGS


@dataclass(frozen=True)
class Session:
    """The caller (a user id; None in a shared workspace container), the container, the current
    space (None: the caller's first space), the current task (the task tools never return it) and
    the answers' language (None: each tool's own choice)."""

    caller: str | None
    container: str = "personal"
    space: str | None = None
    current_task: int | None = None
    lang: str | None = None

    def __post_init__(self) -> None:
        check_session(self)

    def context(self, index: HistoryIndexPort | None, store: TaskStore | None = None,
                engine: TaskEnginePort | None = None) -> ToolContext:
        """The ``ToolContext`` of one call: this session, the index version the call reads, and
        the task store and engine where task search is served. The task tools need a space: the
        session's, else the caller's first space of the index."""
        space = self.space
        if space is None and store is not None and self.caller is not None and index is not None:
            space = index.default_space(self.caller)
        return ToolContext(caller=self.caller, container=self.container, space=space,
                           current_task=self.current_task, lang=self.lang, index=index, store=store, engine=engine)

    def tag(self, salt: bytes) -> str:
        """A salted hash of who is calling, for the call log: lines of one caller link within one
        run of the server (one salt), never to a user id."""
        who = f"{self.container}\x00{self.caller or ''}\x00{self.space or ''}\x00{self.current_task or ''}"
        return hmac.new(salt, who.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def check_session(s: Session) -> None:
    """A session's fields as the tools expect them; ``ParameterError`` naming the field."""
    if s.container not in CONTAINERS:
        raise ParameterError("container", f"must be one of {list(CONTAINERS)}")
    if s.container == "shared" and s.caller is not None:
        raise ParameterError("caller", "a shared workspace container has no caller (no person behind it)")
    if s.container == "personal" and (not isinstance(s.caller, str) or not s.caller.strip()):
        raise ParameterError("caller", "required in a personal container: the user id of the person calling")
    if s.space is not None and not is_slug(s.space):
        raise ParameterError("space", "must be a space slug (a folder name)")
    if s.container == "shared" and s.space is None:
        raise ParameterError("space", "required in a shared workspace container: the slug of its space")
    task = s.current_task
    if task is not None and (isinstance(task, bool) or not isinstance(task, int) or task < 1):
        raise ParameterError("current_task", "must be a task id (a positive integer)")
    if s.lang is not None and s.lang not in LANGS:
        raise ParameterError("lang", f"must be one of {list(LANGS)}")
