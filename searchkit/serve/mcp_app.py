"""The MCP server (issue 30): the served tools over the official ``mcp`` SDK's low-level ``Server``.

``tools/list`` gives each tool's name, description and the JSON Schema generated from its
parameter dataclass; ``tools/call`` runs it through :class:`searchkit.serve.service.Service` in a
worker thread: the answer's text as content and its ``to_dict()`` (with the index version) as
structured content, or ``isError`` with the message naming the parameter. Who is calling is the
stdio server's launching session, or the HTTP request's token (set by the auth middleware of
:mod:`searchkit.serve.http_app`). The server info reports the config fingerprint.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from searchkit import __version__
from searchkit.serve.admission import Admission
from searchkit.serve.service import Outcome, Service, has_lone_surrogate
from searchkit.serve.session import Session

SESSION_KEY = "searchkit_session"
"""Where the HTTP auth middleware leaves a request's ``Session`` (the ASGI scope's ``state``)."""

INSTRUCTIONS = (
    "History search finds what this space already recorded (chats, turn digests, the work log, files, sources, "
    "dashboards, table rows). Search before saying you do not know or asking the person; one or two precise "
    "queries (names, task numbers like ATL-707, file names) beat reading log.md. Cards are hints, not answers: open "
    "a card's ref before relying on a detail (chat:<ses_id> with chat_read, using find with an exact id or number "
    "from the snippet; app:<table>#<id> with app_row) and answer from the opened source. When no card is about "
    "what was asked, say plainly that the space has no record of it. Task search (where served) reads the other "
    "tasks of this space."
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
    listing = types.ListToolsResult(tools=[
        types.Tool(name=name, description=t.description, input_schema=schemas[name])
        for name, t in service.tools.items()
    ])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:  # noqa: ARG001 - the SDK's signature
        return listing  # read by the SDK, never changed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = session_of(ctx)
        if session is None:  # an HTTP request the middleware did not admit cannot get here; refuse anyway
            return tool_result(Outcome("unauthorized", "unauthorized: no valid bearer token"))
        return tool_result(await admission.call(service, params.name, params.arguments, session, transport))

    return Server(
        "searchkit", version=__version__, title="searchkit history and task search",
        description=f"config {info.get('fingerprint')} (index {info.get('index_fingerprint')}); "
                    f"replay: {info.get('verify')}",
        instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


def tool_result(out: Outcome) -> types.CallToolResult:
    """The MCP result of one call: its text, its answer (or error) as structured content."""
    data = dict(out.answer) if out.ok else out.to_dict()
    return types.CallToolResult(content=[types.TextContent(text=out.text)], structured_content=data,
                                is_error=not out.ok)


def fixed_session(session: Session) -> Callable[[Any], Session]:
    """stdio: every call is the launching session's."""
    return lambda ctx: session  # noqa: ARG005 - one session for the whole connection


def request_session(ctx: Any) -> Session | None:
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

    def __init__(self, inner: Any, write: Any) -> None:
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

    async def __aexit__(self, *exc: Any) -> None:
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
