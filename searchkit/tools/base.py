"""The one shape of a tool (issue 29 item 3): parameters, context, answer.

A tool is a frozen **parameter dataclass** (what the assistant asks: its JSON Schema is generated
from the dataclass by :mod:`searchkit.schema`, as the config's is), a function
``run(params, ctx) -> Answer``, and an **answer** with ``to_dict()`` (JSON-able) and
``render(lang)`` (the markdown the seeds show), both sanitised where they leave the tool
(:class:`SafeAnswer`: no terminal control of the data reaches a terminal, a JSON value, an MCP
result or the HTTP API). Who is calling and where — the caller, the
container, the current space and task, the language preference, the index or store to search —
comes in :class:`ToolContext`, from the session (command-line flags, a launching process, a
token), **never** from the parameters: a parameter named ``caller``, ``space`` or
``current_task`` is an unknown parameter.

Values are checked by the tool's ``run`` alone (one place); :meth:`Tool.parse` only turns JSON
arguments into the dataclass, refusing unknown and missing keys. Either raises
:class:`searchkit.errors.ParameterError` naming the parameter, before anything is searched. The
command line, and the MCP / HTTP server built on the same tools, are thin adapters over
:data:`searchkit.tools.registry.TOOLS`.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from searchkit.errors import ParameterError
from searchkit.schema import dataclass_schema
from searchkit.ports import TaskEnginePort, TaskStore, WorkspacePort
from searchkit.strict_json import safe_data, safe_text
from searchkit.tools.outputs import output_schema


@dataclass(frozen=True)
class ToolContext:
    """Who is calling and where: set by the session, never by a tool parameter.

    Attributes:
        caller: the user id of the person calling. History search: None in a shared workspace
            container (no person behind it). Task search: the signed-in owner; None is a no-auth
            run, where the task tools answer that they are unavailable (T8).
        container: ``personal`` (a person's container) or ``shared`` (a workspace container).
        space: the slug of the current space; None lets history search run in the caller's first
            space (by slug) as the workspace has it now.
        current_task: the task the caller is in (task search never returns it, T1).
        subtask: a subtask run (the task tools are unavailable there, T8).
        lang: the language of the answer's messages (``ru``, ``en``, ``ja``); None: history
            search answers in the query's language, task search in Japanese (the seed's).
        index: the ``HistoryIndex`` history search reads.
        store: the open task store (``sqlite3.Connection``) the task tools read.
        engine: the ``TaskEngine`` composing ``tasks.retrievers``; None: FTS5 alone (the seed's).
    """

    caller: str | None = None
    container: str = "personal"
    space: str | None = None
    current_task: int | None = None
    subtask: bool = False
    lang: str | None = None
    index: WorkspacePort | None = dataclasses.field(default=None, repr=False, compare=False)
    store: TaskStore | None = dataclasses.field(default=None, repr=False, compare=False)
    engine: TaskEnginePort | None = dataclasses.field(default=None, repr=False, compare=False)


CONTEXT_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ToolContext)) + ("owner",)
"""Names that belong to the session, never to a tool's parameters (``owner`` is the task tools'
older name for the caller)."""


@runtime_checkable
class Answer(Protocol):
    """What a tool returns: ``to_dict()`` (JSON-able, what ``--json`` prints) and ``render(lang)``
    (the markdown the seeds show; None: the answer's own language)."""

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """The answer as plain JSON data (answers with scoring internals take ``explain=True`` to
        include them; :mod:`searchkit.tools.outputs`)."""
        ...

    def render(self, lang: str | None = None) -> str:
        """The answer as the seed shows it, in ``lang``."""
        ...


READ_ONLY: Mapping[str, bool] = MappingProxyType({
    "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
"""The MCP annotations of a tool that only reads this workspace: it changes nothing, the same call
twice does nothing more, and it reaches nothing outside (issue 41 item 6)."""


NEEDS: Mapping[str, str] = MappingProxyType({
    "caller": "who is calling and where (ctx.caller, container, space, lang): from the session, never a parameter",
    "current_task": "the task the caller is in (ctx.current_task, ctx.subtask): from the session",
    "workspace": "the workspace's spaces and who may see them, read now (ctx.index.access)",
    "history_index": "the history index (ctx.index, a HistoryIndex): what the workspace has recorded",
    "task_store": "the task store (ctx.store) and, for a member of the space, its engine (ctx.engine); "
                  "served with --tasks-db",
})
"""What a tool may declare it needs (:attr:`Tool.needs`), each with what it puts in the ``ToolContext``
(issue 42 item 4). The server serves a tool only when it has everything the tool declares (a task
store only with ``serve --tasks-db``), and a call's context holds only what its tool declared: the
index for ``workspace`` / ``history_index``, the store and engine for ``task_store``, the current
task for ``current_task``; the rest stays None. The caller, container, space and language are the
session's in every context (never withheld, never a parameter)."""


@dataclass(frozen=True)
class Tool:
    """One tool: its name, parameter dataclass, ``run``, a description for a tool listing (written
    for the assistant that calls it: what it finds, when to use it, what to open next), a title
    for people, the answer types ``run`` may return (their output schema), its MCP hints and what
    it needs from the session and the server (``needs``, names of :data:`NEEDS`; none: a tool that
    reads nothing but its parameters).

    ``run`` is kept wrapped (:func:`sanitising`): its answer is a :class:`SafeAnswer`, whose
    ``render`` and ``to_dict`` pass the one sanitiser (issue 39 item 3), for every tool, the
    registry's and any other."""

    name: str
    params: type
    run: Callable[[Any, ToolContext], Answer]
    description: str
    title: str = ""
    answers: tuple[type, ...] = ()
    hints: Mapping[str, bool] = dataclasses.field(default_factory=lambda: READ_ONLY, compare=False)
    needs: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        needs = frozenset(self.needs)
        unknown = sorted(needs - NEEDS.keys())
        if unknown:
            raise ValueError(f"tool {self.name}: unknown needs {unknown}; valid: {sorted(NEEDS)}")
        object.__setattr__(self, "needs", needs)
        # every answer leaves sanitised (issue 39 item 3): ``run`` as given, its answer wrapped; and
        # ``run`` sees only what the tool declared, whoever calls it (the CLI, the server; issue 42 item 4)
        object.__setattr__(self, "run", given_only(sanitising(self.run), self.context))

    def context(self, ctx: ToolContext) -> ToolContext:
        """``ctx`` with only what this tool declared (:data:`NEEDS`): the index without
        ``workspace`` / ``history_index``, the store and engine without ``task_store``, the current
        task without ``current_task`` are None. Who is calling and where stay the session's."""
        drop: dict[str, Any] = {}
        if not self.needs & {"workspace", "history_index"}:
            drop["index"] = None
        if "task_store" not in self.needs:
            drop.update(store=None, engine=None)
        if "current_task" not in self.needs:
            drop.update(current_task=None, subtask=False)
        return dataclasses.replace(ctx, **drop) if drop else ctx

    def schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of the tool's parameters, generated from ``params``,
        with the rules that tie parameters together (``params.SCHEMA_RULES``: a ``oneOf`` ...)."""
        out = dataclass_schema(self.params, title=self.name, schema_id=f"urn:searchkit:tool:{self.name}")
        out.update(copy.deepcopy(dict(getattr(self.params, "SCHEMA_RULES", None) or {})))
        return out

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the tool's structured result, generated from its answer types
        (:func:`searchkit.tools.outputs.output_schema`); None for a tool that names none."""
        if not self.answers:
            return None
        return output_schema(self.answers, title=f"{self.name} answer",
                             schema_id=f"urn:searchkit:tool:{self.name}:output")

    def annotations(self) -> dict[str, Any]:
        """The MCP ``annotations`` of the tool: its title and hints (``readOnlyHint``...)."""
        return {"title": self.title or self.name, **self.hints}

    def parse(self, arguments: object) -> Any:
        """``params`` from JSON arguments (an object): unknown keys and missing required ones are
        a ``ParameterError`` naming the key; JSON arrays become tuples. Values are checked by
        ``run``."""
        return parse_params(self.params, arguments)

    def __call__(self, arguments: object, ctx: ToolContext) -> Answer:
        """``run(parse(arguments), ctx)``: JSON arguments in, an answer out."""
        return self.run(self.parse(arguments), ctx)


def given_only(run: Callable[[Any, ToolContext], Answer],
               narrow: Callable[[ToolContext], ToolContext]) -> Callable[[Any, ToolContext], Answer]:
    """``run`` called with ``narrow(ctx)`` (:meth:`Tool.context`: what the tool declared, nothing else)."""

    @functools.wraps(run)
    def wrapped(params: object, ctx: ToolContext) -> Answer:
        return run(params, narrow(ctx))

    return wrapped


def sanitising(run: Callable[[Any, ToolContext], Answer]) -> Callable[[Any, ToolContext], Answer]:
    """``run`` whose answer is a :class:`SafeAnswer` (a ``run`` already wrapped is returned as is)."""
    if getattr(run, "sanitised", False):
        return run

    @functools.wraps(run)
    def wrapped(params: object, ctx: ToolContext) -> Answer:
        return SafeAnswer.of(run(params, ctx))

    wrapped.sanitised = True  # type: ignore[attr-defined]
    return wrapped


class SafeAnswer:
    """A tool's answer as it leaves the tool: ``render`` and ``to_dict`` through the one sanitiser
    (``searchkit.strict_json.safe_text`` / ``safe_data``: line breaks and tabs kept, every other
    control and the bidi controls removed), whatever the tool and whoever prints it (the command
    line's text and ``--json``, the MCP result, the HTTP API; issue 39 item 3). Everything else is
    the answer's own: its fields (as stored, unsanitised), its methods, ``isinstance`` (the answer's
    class), equality and ``repr``; ``answer`` is the answer itself."""

    __slots__ = ("answer",)

    def __init__(self, answer: Answer) -> None:
        object.__setattr__(self, "answer", answer)

    @classmethod
    def of(cls, answer: Answer | None) -> Any:
        """``answer`` wrapped (once; None stays None)."""
        return answer if answer is None or type(answer) is SafeAnswer else cls(answer)

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """The answer's ``to_dict()`` (``to_dict(explain=True)`` when ``explain``: with its scoring
        internals), every string sanitised."""
        return safe_data(self.answer.to_dict(explain=True) if explain else self.answer.to_dict())

    def render(self, lang: str | None = None, *args: object, **kwargs: object) -> str:
        """The answer's ``render(lang)``, sanitised."""
        return safe_text(self.answer.render(lang, *args, **kwargs))

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(answer, ItsClass) holds, as for the answer itself
        return type(object.__getattribute__(self, "answer"))

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "answer"), name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a tool's answer is read-only ({name})")

    def __eq__(self, other: object) -> bool:
        other = other.answer if type(other) is SafeAnswer else other
        return bool(self.answer == other)

    def __hash__(self) -> int:
        return hash(self.answer)

    def __bool__(self) -> bool:
        return bool(self.answer)

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: the wrapper around the answer
        return (SafeAnswer, (self.answer,))

    def __repr__(self) -> str:
        return repr(self.answer)


def parse_params(cls: type, arguments: object) -> Any:
    """An instance of the parameter dataclass ``cls`` from ``arguments`` (see :meth:`Tool.parse`)."""
    if not isinstance(arguments, Mapping):
        raise ParameterError("arguments", f"must be an object of named parameters, got {_type_name(arguments)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in arguments:
        if key not in fields:
            raise ParameterError(_key_shown(key), _unknown(key, fields))
    for name, f in fields.items():
        if name not in arguments and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ParameterError(name, "is required")
    return cls(**{k: _frozen(v) for k, v in arguments.items()})


def _unknown(key: object, fields: Mapping[str, Any]) -> str:
    valid = ", ".join(fields)
    if key in CONTEXT_FIELDS:
        return (f"is not a parameter of this tool: who is calling and where (caller, container, space, current "
                f"task) come from the session, never from the parameters; valid parameters: {valid}")
    return f"unknown parameter; valid parameters: {valid}"


def _frozen(value: object) -> object:
    """A JSON array as a tuple (the parameter dataclasses are frozen)."""
    return tuple(value) if isinstance(value, list) else value


_KEY_SHOWN = 40


def _key_shown(key: object) -> str:
    """A key as an error may name it: short and printable, else described (never a long or
    control-holding string quoted back)."""
    if isinstance(key, str) and 0 < len(key) <= _KEY_SHOWN and key.isprintable():
        return key
    return f"a parameter name of {len(key)} characters" if isinstance(key, str) else "a parameter name"


def _type_name(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else type(value).__name__
