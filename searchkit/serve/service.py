"""One tool call, whatever the transport (issue 30): the MCP server and the JSON API both call here.

``Service.call(name, arguments, session, transport)`` reads the current index version once, builds
the ``ToolContext`` from the session (never from the arguments: ``Tool.parse`` refuses a
``caller``, ``space`` or ``current_task`` argument), runs the tool in the calling thread and
returns an ``Outcome``: the answer (``to_dict()`` plus the version it was served from) and its
text, or an error that names the parameter at fault. A bug in a tool is an ``internal`` error
(logged with its traceback, never shown to the caller); the server keeps serving. Every call
writes one log line (:mod:`searchkit.serve.calllog`).
"""
from __future__ import annotations

import dataclasses
import logging
import re
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from searchkit.errors import DataError, ParameterError, ResourceError, SearchkitError
from searchkit.ingest.tasks import STORE_REASONS
from searchkit.serve.calllog import CallLog, counts
from searchkit.serve.session import Session
from searchkit.serve.state import Holder, Served, TaskStores
from searchkit.tools.base import CONTEXT_FIELDS, NEEDS, Tool, ToolContext
from searchkit.tools import task_members
from searchkit.tools.registry import TOOLS
from searchkit.tools.terminal import one_line

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """The result of one call. ``status``: ``ok``, ``bad_parameter`` (``param`` names it),
    ``unknown_tool``, ``unavailable`` (who may see what, or the store, cannot be read now),
    ``busy`` (refused: the queue of calls is full; ``retry_after`` seconds) or ``internal``."""

    status: str
    text: str
    answer: Mapping[str, Any] = field(default_factory=dict)
    param: str | None = None
    version: int | None = None
    retry_after: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """What the JSON API returns: the answer, or the error."""
        if self.ok:
            return {"answer": dict(self.answer), "text": self.text, "index_version": self.version}
        error: dict[str, Any] = {"status": self.status, "param": self.param, "message": self.text}
        if self.retry_after is not None:
            error["retry_after_s"] = self.retry_after
        return {"error": error, "index_version": self.version}


class Service:
    """The tools served: every tool of the registry (``TOOLS``, in its order) whose declared needs
    (``Tool.needs``) the server has: the session, the workspace and the history index of
    ``holder``'s current version always, the task store only when ``tasks`` is served (issue 42
    item 4). Each call's tool is given what it declared, nothing else (``Tool.context``)."""

    def __init__(self, holder: Holder, *, fingerprint: str, log_: CallLog, tasks: TaskStores | None = None,
                 info: Mapping[str, Any] | None = None, explain: bool = False) -> None:
        self.holder = holder
        self.explain = explain
        """Answers carry their scoring internals (``serve --explain``; issue 41 item 6)."""
        self.tasks = tasks
        self.fingerprint = fingerprint
        self.log = log_
        self.info = dict(info or {})
        self.provides: frozenset[str] = frozenset(NEEDS) - (frozenset() if tasks is not None else {"task_store"})
        """What this server has for its tools (names of ``NEEDS``)."""
        self.tools: dict[str, Tool] = {n: t for n, t in TOOLS.items() if t.needs <= self.provides}

    def call(self, name: Any, arguments: object, session: Session, transport: str) -> Outcome:
        """Run tool ``name`` with JSON ``arguments`` for ``session``; never raises for bad input."""
        t0 = time.perf_counter()
        served = self.holder.current  # one version for the whole call
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            shown = repr(name)[:60] if isinstance(name, str) else "that name"
            out = Outcome("unknown_tool", f"tool: no tool {shown}; valid tools: {', '.join(self.tools)}",
                          param="tool", version=served.version)
        else:
            out = self._run(tool, arguments, session, served)
        unknown = unknown_arguments(tool, arguments)
        self.log.call(tool=name if tool is not None else "?", who=session.tag(self.log.salt), transport=transport,
                      ok=out.ok, error=logged_error(out, tool), latency_ms=(time.perf_counter() - t0) * 1000,
                      fingerprint=self.fingerprint, version=served.version, counts=counts(out.answer),
                      arguments=arguments, text=out.text, unknown_arguments=unknown)
        return out

    def busy(self, name: Any, session: Session, transport: str, retry_after: int) -> Outcome:
        """A call refused because the queue of calls is full (``serve.admission``; issue 41 item 5):
        nothing run, one log line (``error``: ``busy``)."""
        served = self.holder.current
        known = isinstance(name, str) and name in self.tools
        self.log.call(tool=name if known else "?", who=session.tag(self.log.salt), transport=transport, ok=False,
                      error="busy", latency_ms=0.0, fingerprint=self.fingerprint, version=served.version, counts={})
        return Outcome("busy", f"the server is busy: too many calls are waiting; try again in {retry_after} s",
                       version=served.version, retry_after=retry_after)

    def _run(self, tool: Tool, arguments: object, session: Session, served: Served) -> Outcome:
        v = served.version
        try:
            params = tool.parse({} if arguments is None else arguments)
            bad = not_unicode(arguments)
            if bad is not None:  # UTF-8 cannot carry it: an answer echoing it could not be sent at all
                raise ParameterError(bad, "is not valid Unicode text: it holds a lone surrogate (such as \\ud800), "
                                          "which UTF-8 cannot encode; send the text as UTF-8 or as valid JSON escapes")
            ctx = self._context(tool, session, served)
            answer = tool.run(params, ctx)
            data = answer.to_dict(explain=True) if self.explain else answer.to_dict()
            text = answer.render(ctx.lang)
            if has_lone_surrogate(text) or has_lone_surrogate(data):  # a bug: it could not be sent
                log.error("tool %s answered with text that is not valid Unicode", tool.name)
                return Outcome("internal", "internal error: the call failed; the server keeps serving", version=v)
            return Outcome("ok", text, {**data, "index_version": v}, version=v)
        except ParameterError as exc:
            return Outcome("bad_parameter", str(exc), param=exc.param, version=v)
        except SearchkitError as exc:  # who may see what, or the task store, cannot be read now
            # the detail names the server's paths and the operator's commands: the log has it, the
            # caller gets what it may act on (issue 41 item 4)
            log.warning("tool %s unavailable: %s", tool.name, _one_line(exc))
            return Outcome("unavailable", unavailable_text(exc), version=v)
        except sqlite3.Error as exc:
            log.warning("tool %s: the task store cannot be read: %s", tool.name, _one_line(exc))
            return Outcome("unavailable", TASK_STORE_UNAVAILABLE, version=v)
        except Exception:  # a bug: logged with its traceback, the caller told nothing of it
            log.exception("tool %s failed", tool.name)
            return Outcome("internal", "internal error: the call failed; the server keeps serving", version=v)

    def _context(self, tool: Tool, session: Session, served: Served) -> ToolContext:
        """The context of one call of ``tool``: the session and the served index, and the task store
        opened only for a tool that declared ``task_store``, its engine built only for a member of
        the space (T1). ``tool.run`` gives the tool only what it declared (``Tool.context``)."""
        store = None
        if "task_store" in tool.needs and self.tasks is not None:
            store = self.tasks.connection()
        ctx = session.context(served.index, store)
        if store is not None and self.tasks is not None and task_members.refusal(ctx) is None:
            # a non-member's call builds nothing over a space they cannot see (T1): the tool refuses it
            ctx = session.context(served.index, store, self.tasks.engine(ctx.space))
        return ctx


_NAMED = frozenset(CONTEXT_FIELDS) | {"tool", "arguments"}


def _fields(tool: Tool | None) -> frozenset[str]:
    params = getattr(tool, "params", None)
    return frozenset(f.name for f in dataclasses.fields(params)) if dataclasses.is_dataclass(params) else frozenset()


def logged_error(out: Outcome, tool: Tool | None) -> str | None:
    """What a call's log line says went wrong: the parameter an error named when it is one of the
    tool's own (or of the session's, or ``tool``), ``unknown_parameter`` for any other name (an
    argument's name is the caller's text: a password typed as a key must not reach the log; issue
    39 item 8), else the status."""
    if out.ok:
        return None
    if out.param is None:
        return out.status
    return out.param if out.param in _NAMED or out.param in _fields(tool) else "unknown_parameter"


def unknown_arguments(tool: Tool | None, arguments: object) -> int:
    """How many of ``arguments``' names are not parameters of ``tool`` (the log's count of them)."""
    if tool is None or not isinstance(arguments, Mapping):
        return 0
    fields = _fields(tool)
    return sum(1 for k in arguments if k not in fields)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(value: object, depth: int = 0) -> bool:
    """Whether a JSON value holds a lone surrogate in a string or a key (JSON's ``\\ud800`` escape
    decodes to one; no UTF-8 text holds one)."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if depth > 64:
        return False
    if isinstance(value, Mapping):
        return any(has_lone_surrogate(k, depth + 1) or has_lone_surrogate(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_lone_surrogate(v, depth + 1) for v in value)
    return False


def not_unicode(arguments: object) -> str | None:
    """The name of the first argument whose value is not valid Unicode text (``has_lone_surrogate``),
    or None; the tool's ``parse`` has already refused a name that is not one of its parameters."""
    if not isinstance(arguments, Mapping):
        return None
    for key, value in arguments.items():
        if has_lone_surrogate(value):
            return str(key)
    return None


ACCESS_UNAVAILABLE = "who may see what cannot be read now, so nothing was searched; try again later"
TASK_STORE_UNAVAILABLE = "the task store cannot be read now; try again later"
UNAVAILABLE = "this cannot be answered now; try again later"


def unavailable_text(exc: BaseException) -> str:
    """What a remote caller is told of a resource the server cannot read now: the kind of problem
    only, never the error's own text (it may name a path or an operator's command)."""
    if isinstance(exc, ResourceError) and exc.reason == "access":
        return ACCESS_UNAVAILABLE
    if isinstance(exc, DataError) and exc.reason in STORE_REASONS:
        return TASK_STORE_UNAVAILABLE
    return UNAVAILABLE


def _one_line(exc: BaseException, limit: int = 500) -> str:
    text = " ".join(one_line(str(exc)).split())  # the output sanitiser's line: no control or bidi character (issue 39 item 3)
    return text if len(text) <= limit else text[: limit - 3] + "..."
