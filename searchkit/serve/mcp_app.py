"""The MCP server (issue 30): the served tools over the official ``mcp`` SDK's low-level ``Server``.

``tools/list`` gives each tool's name, title, description (written for the assistant), the JSON
Schema generated from its parameter dataclass, the output schema generated from its answer types
and read-only annotations (issue 41 item 6); ``tools/call`` runs it through
:class:`searchkit.serve.service.Service` in a worker thread: the answer's text as content and its
``to_dict()`` (with the index version; no second copy of the text, no scoring internals) as
structured content, or ``isError`` with the message naming the parameter. A call of a tool the
server does not have is a JSON-RPC error ``-32602`` (invalid params), not a tool result.

Resources (issue 41 item 7): the snapshot of each space the caller may read now
(``searchkit://space/<slug>/snapshot``: :mod:`searchkit.tools.snapshot`), listed and read live;
any other slug, a space the caller is not in included, is one ``-32602`` error.

Who is calling is the stdio server's launching session, or the HTTP request's token (set by the
auth middleware of :mod:`searchkit.serve.http_app`). The server info reports the config fingerprint.
"""
from __future__ import annotations

import json
import re
import time
import urllib.parse
from typing import Any, Callable, Mapping

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from searchkit import __version__
from searchkit.serve.admission import Admission
from searchkit.serve.service import Outcome, Service, has_lone_surrogate
from searchkit.errors import SearchkitError
from searchkit.serve.session import Session
from searchkit.tools import snapshot
from searchkit.tools.base import Tool
from searchkit.tools.history_search import is_slug

RequestContext = ServerRequestContext[Any]
"""What the SDK hands each request handler (``session_of`` reads who is calling from it)."""

SESSION_KEY = "searchkit_session"
"""Where the HTTP auth middleware leaves a request's ``Session`` (the ASGI scope's ``state``)."""

INSTRUCTIONS = (
    "History search finds what this space already recorded (chats, turn digests, the work log, files, sources, "
    "dashboards, table rows). Search before saying you do not know or asking the person; one or two precise "
    "queries (names, task numbers like ATL-707, file names) beat reading log.md. Cards are hints, not answers: open "
    "a card's ref before relying on a detail (chat:<ses_id> with chat_read, using find with an exact id or number "
    "from the snippet; app:<table>#<id> with app_row) and answer from the opened source. When no card is about "
    "what was asked, say plainly that the space has no record of it. Task search (where served) reads the other "
    "tasks of this space. Each of your spaces has a snapshot resource (searchkit://space/<slug>/snapshot): a dated "
    "summary of recent history (in work, decisions, waiting for an answer, what appeared); check a detail in its "
    "source before relying on it."
)


def build_server(service: Service, session_of: Callable[[Any], Session | None], transport: str,
                 admission: Admission | None = None) -> Server:
    """The low-level MCP server over ``service``; ``session_of(ctx)`` tells who is calling; its calls
    are admitted by ``admission`` (a full queue: a ``busy`` tool error; issue 41 item 5)."""
    admission = admission or Admission(4, 16)
    info = service.info

    # the schemas are the parameter dataclasses': generated once, not at every call (the SDK reads a
    # called tool's input schema on each tools/call of the HTTP transport)
    schemas = {name: t.schema() for name, t in service.tools.items()}
    listing = types.ListToolsResult(tools=[tool_entry(t, schemas[name]) for name, t in service.tools.items()])

    async def list_tools(ctx: RequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:  # noqa: ARG001 - the SDK's signature
        return listing  # read by the SDK, never changed

    async def call_tool(ctx: RequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = session_of(ctx)
        if session is None:  # an HTTP request the middleware did not admit cannot get here; refuse anyway
            return tool_result(Outcome("unauthorized", "unauthorized: no valid bearer token"))
        out = await admission.call(service, params.name, params.arguments, session, transport)
        if out.status == "unknown_tool":  # no such tool: the request's params are invalid, not a tool result
            raise MCPError(code=types.INVALID_PARAMS, message=out.text)
        return tool_result(out)

    async def list_resources(ctx: RequestContext,
                             params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:  # noqa: ARG001
        session = session_of(ctx)
        if session is None:
            return types.ListResourcesResult(resources=[])
        spaces = await anyio.to_thread.run_sync(snapshot_spaces, service, session, limiter=admission.limiter)
        return types.ListResourcesResult(resources=[snapshot_resource(slug, title) for slug, title in spaces])

    async def list_templates(ctx: RequestContext,  # noqa: ARG001
                             params: types.PaginatedRequestParams | None) -> types.ListResourceTemplatesResult:  # noqa: ARG001
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            name="space-snapshot", title="Space snapshot", uri_template=SNAPSHOT_TEMPLATE, mime_type="text/markdown",
            description=SNAPSHOT_DOC)])

    async def read_resource(ctx: RequestContext, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        session = session_of(ctx)
        slug = snapshot_slug(str(params.uri))
        got = None
        if session is not None and slug is not None:
            got = await anyio.to_thread.run_sync(read_snapshot, service, session, slug, limiter=admission.limiter)
        if got is None:  # no such space, not a member, switched off, no session: one answer
            raise MCPError(code=types.INVALID_PARAMS, message=not_found_text(slug if slug is not None else str(params.uri)))
        snap, version = got
        assert session is not None  # got is None without a session
        uri = snapshot_uri(snap.space)
        data = {**snap.to_dict(), "index_version": version}
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type="text/markdown", text=snap.render(session.lang)),
            types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data, ensure_ascii=False)),
        ])

    return Server(
        "searchkit", version=__version__, title="searchkit history and task search",
        description=f"config {info.get('fingerprint')} (index {info.get('index_fingerprint')}); "
                    f"replay: {info.get('verify')}",
        instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_list_resource_templates=list_templates, on_read_resource=read_resource,
        get_tool_input_schema=schemas.get,
    )


def tool_entry(tool: Tool, input_schema: Mapping[str, Any] | None = None) -> types.Tool:
    """A tool as ``tools/list`` gives it (issue 41 item 6): name, title, the description written for
    the assistant, the input schema (with its ``oneOf`` rules), the output schema generated from its
    answer types, and the annotations of a read-only tool of a closed world."""
    hints = tool.annotations()
    return types.Tool(
        name=tool.name, title=hints["title"], description=tool.description,
        input_schema=dict(input_schema if input_schema is not None else tool.schema()),
        output_schema=tool.output_schema(),
        annotations=types.ToolAnnotations(
            title=hints["title"], read_only_hint=hints["readOnlyHint"], destructive_hint=hints["destructiveHint"],
            idempotent_hint=hints["idempotentHint"], open_world_hint=hints["openWorldHint"]),
    )


# ------------------------------------------------------------------ the space snapshot (issue 41 item 7)

SNAPSHOT_TEMPLATE = "searchkit://space/{slug}/snapshot"
SNAPSHOT_DOC = ("A short state of the space built from its recent history (the last two weeks, rebuilt when read): "
                "what is in work, recent decisions, what waits for an answer, and what appeared (dashboards, "
                "sources, files), each item with its day and the ref to open. In a space of several members it "
                "comes only from shared chats, scheduled and automatic runs, never from personal chats. It may be "
                "out of date: check a figure, number or decision in its source or with history_search before "
                "relying on it; it is not memory.")
_SNAPSHOT_URI = re.compile(r"^searchkit://space/(?P<slug>[^/?#]+)/snapshot$")


def snapshot_uri(slug: str) -> str:
    """The resource URI of a space's snapshot (the slug percent-encoded)."""
    return SNAPSHOT_TEMPLATE.replace("{slug}", urllib.parse.quote(slug, safe=""))


def snapshot_slug(uri: str) -> str | None:
    """The slug a snapshot URI names, or None for any other URI."""
    m = _SNAPSHOT_URI.match(uri)
    if m is None:
        return None
    try:
        slug = urllib.parse.unquote(m.group("slug"), errors="strict")
    except UnicodeDecodeError:
        return None
    return slug if is_slug(slug) else None


def snapshot_resource(slug: str, title: str) -> types.Resource:
    """A space's snapshot as ``resources/list`` gives it."""
    return types.Resource(uri=snapshot_uri(slug), name=f"snapshot-{slug}", title=f"{title}: space snapshot",
                          description=SNAPSHOT_DOC, mime_type="text/markdown")


def snapshot_spaces(service: Service, session: Session) -> list[tuple[str, str]]:
    """The spaces whose snapshot ``session`` may read now, as ``(slug, title)`` (an access source
    that cannot be read: none)."""
    index = service.holder.current.index
    try:
        access = index.access.snapshot()
    except SearchkitError:
        return []
    return snapshot.readable_spaces(access, session.caller, session.container, session.space)


def read_snapshot(service: Service, session: Session, slug: str) -> tuple[Any, int] | None:
    """The snapshot of ``slug`` for ``session`` and the index version it was built from; None when
    the session may not read it (or who may see what cannot be read now)."""
    served = service.holder.current  # one version for the whole read
    t0 = time.perf_counter()
    try:
        snap = snapshot.build(served.index, slug, caller=session.caller, container=session.container,
                              space=session.space, lang=session.lang)
    except SearchkitError:
        snap = None
    # one line a read, as for a call: never the slug asked for (the caller's text)
    service.log.write("snapshot", caller=session.tag(service.log.salt), ok=snap is not None,
                      latency_ms=round((time.perf_counter() - t0) * 1000, 2), index_version=served.version)
    return None if snap is None else (snap, served.version)


async def snapshot_reply(service: Service, session: Session, slug: str,
                         limiter: anyio.CapacityLimiter | None = None) -> tuple[int, dict[str, Any]]:
    """``snapshot_response`` in a worker thread (``limiter``: the calls' workers)."""
    return await anyio.to_thread.run_sync(snapshot_response, service, session, slug, limiter=limiter)


def snapshot_response(service: Service, session: Session, slug: str) -> tuple[int, dict[str, Any]]:
    """The JSON API's ``GET /api/spaces/{slug}/snapshot``: ``200`` with the snapshot, its text and
    the index version, or ``404`` with the one answer for a snapshot the caller may not have."""
    got = read_snapshot(service, session, slug) if is_slug(slug) else None
    if got is None:
        return 404, {"error": {"status": "not_found", "param": "slug", "message": not_found_text(slug)}}
    snap, version = got
    return 200, {"snapshot": snap.to_dict(), "text": snap.render(session.lang), "index_version": version}


SNAPSHOT_PATH: dict[str, Any] = {"get": {
    "operationId": "space_snapshot", "summary": SNAPSHOT_DOC,
    "parameters": [{"name": "slug", "in": "path", "required": True, "schema": {"type": "string"},
                    "description": "The space's slug (a space you are a member of now)."}],
    "responses": {
        "200": {"description": "the snapshot, its text and the index version it was built from",
                "content": {"application/json": {"schema": {"type": "object", "properties": {
                    "snapshot": {"type": "object"}, "text": {"type": "string"}, "index_version": {"type": "integer"}}}}}},
        "401": {"description": "no valid bearer token"},
        "404": {"description": "no snapshot for you there: no such space, not a member, or history search off (one "
                               "answer for all)"},
    },
}}
"""``GET /api/spaces/{slug}/snapshot`` in the JSON API's OpenAPI document."""


def not_found_text(slug: str) -> str:
    """One line for every snapshot the reader may not have (no such space, not a member, off)."""
    return snapshot.not_found_text(slug, "en")


def tool_result(out: Outcome) -> types.CallToolResult:
    """The MCP result of one call: its text, its answer (or error) as structured content (the
    answer's data, never a second copy of the text: ``to_dict``; issue 41 item 6)."""
    data = dict(out.answer) if out.ok else out.to_dict()
    return types.CallToolResult(content=[types.TextContent(text=out.text)], structured_content=data,
                                is_error=not out.ok)


def fixed_session(session: Session) -> Callable[[Any], Session]:
    """stdio: every call is the launching session's."""
    return lambda ctx: session  # noqa: ARG005 - one session for the whole connection


def request_session(ctx: object) -> Session | None:
    """HTTP: the session the auth middleware found for this request's token."""
    request = getattr(ctx, "request", None)
    if request is None:
        return None
    state = request.scope.get("state") or {}
    session = state.get(SESSION_KEY)
    return session if isinstance(session, Session) else None


async def run_stdio(server: Server) -> None:
    """Serve one MCP connection over this process's stdin and stdout until the client closes it."""
    async with stdio_server() as (read, write):
        await server.run(Rescued(read, write), write, server.create_initialization_options())


_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F][0-9a-fA-F]{2}")


def not_unicode_request(raw: str | bytes) -> dict[str, Any] | None:
    """The JSON-RPC request in ``raw`` when the SDK's parser refused it for a lone surrogate escape
    (``\\ud800``, which no UTF-8 text holds) that Python's parser takes: a request (an object
    with a ``method`` and an ``id`` that can be answered); else None. Issue 39 item 5: the SDK drops
    such a line without an answer, and the client waits for its own timeout."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if not _SURROGATE_ESCAPE.search(data):
        return None
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if (not isinstance(obj, dict) or not isinstance(obj.get("method"), str) or "id" not in obj
            or isinstance(obj["id"], bool) or not isinstance(obj["id"], (int, str)) or has_lone_surrogate(obj["id"])
            or has_lone_surrogate(obj["method"]) or not has_lone_surrogate(obj)):
        return None
    return obj


def not_unicode_error(request: Mapping[str, Any]) -> types.JSONRPCError:
    """The answer to a request other than ``tools/call`` holding text that is not valid Unicode."""
    return types.JSONRPCError(jsonrpc="2.0", id=request["id"], error=types.ErrorData(
        code=types.INVALID_PARAMS, message="invalid params: the request holds text that is not valid Unicode "
                                           "(a lone surrogate such as \\ud800, which UTF-8 cannot encode)"))


class Rescued:
    """The stdio transport's read stream, where a request the SDK could not parse for a lone
    surrogate (``not_unicode_request``) is answered instead of dropped: a ``tools/call`` goes on
    to the tool as parsed by Python (``Service.call`` answers it with an error naming the
    parameter, logged not ok), any other request gets a JSON-RPC "invalid params" error."""

    def __init__(self, inner: MemoryObjectReceiveStream[SessionMessage | Exception],
                 write: MemoryObjectSendStream[SessionMessage]) -> None:
        self._inner, self._write = inner, write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            request = not_unicode_request(_refused_input(item) or b"")
            if request is None:
                return item
            if request["method"] == "tools/call":
                try:
                    return SessionMessage(types.jsonrpc_message_adapter.validate_python(request, by_name=False))
                except ValueError:
                    pass
            await self._write.send(SessionMessage(not_unicode_error(request)))

    def __aiter__(self) -> "Rescued":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "Rescued":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _refused_input(exc: Exception) -> str | bytes | None:
    """The line a ``pydantic.ValidationError`` of the SDK's JSON parser refused (None: another error)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        first = errors()[0]
    except Exception:  # noqa: BLE001 - not a pydantic error after all
        return None
    raw = first.get("input") if isinstance(first, dict) else None
    return raw if first.get("type") == "json_invalid" and isinstance(raw, (str, bytes)) else None
