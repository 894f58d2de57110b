"""The MCP server (issue 30): the served tools over the official ``mcp`` SDK's low-level ``Server``.

``tools/list`` gives each tool's name, description and the JSON Schema generated from its
parameter dataclass; ``tools/call`` runs it through :class:`searchkit.serve.service.Service` in a
worker thread: the answer's text as content and its ``to_dict()`` (with the index version) as
structured content, or ``isError`` with the message naming the parameter. Who is calling is the
stdio server's launching session, or the HTTP request's token (set by the auth middleware of
:mod:`searchkit.serve.http_app`). The server info reports the config fingerprint.
"""
from __future__ import annotations

from typing import Any, Callable

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from searchkit import __version__
from searchkit.serve.service import Outcome, Service
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
                 limiter: anyio.CapacityLimiter | None = None) -> Server:
    """The low-level MCP server over ``service``; ``session_of(ctx)`` tells who is calling."""
    limiter = limiter or anyio.CapacityLimiter(4)
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
            return _result(Outcome("unauthorized", "unauthorized: no valid bearer token"))
        out = await anyio.to_thread.run_sync(service.call, params.name, params.arguments, session, transport,
                                             limiter=limiter)
        return _result(out)

    return Server(
        "searchkit", version=__version__, title="searchkit history and task search",
        description=f"config {info.get('fingerprint')} (index {info.get('index_fingerprint')}); "
                    f"replay: {info.get('verify')}",
        instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


def _result(out: Outcome) -> types.CallToolResult:
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
        await server.run(read, write, server.create_initialization_options())
