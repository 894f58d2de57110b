"""The HTTP transport (issue 30): one Starlette app holding MCP (streamable HTTP) and a JSON API.

- ``POST /mcp``: MCP, streamable HTTP (the SDK's session manager, stateless, JSON responses).
- ``GET /api/tools``: the tools and their parameters' JSON Schemas.
- ``POST /api/tools/{name}``: call a tool with a JSON object of arguments: 200 with the answer,
  422 naming the bad parameter, 404 for an unknown tool, 503 when who may see what cannot be read.
- ``GET /api/spaces/{slug}/snapshot``: the space snapshot, as the MCP resource (issue 41 item 7):
  200, or one 404 for every space the caller may not read.
- ``GET /openapi.json``: OpenAPI 3.1, each tool's request body the schema generated from its
  parameter dataclass (the same schema ``tools/list`` gives).
- ``GET /health``: liveness: the config fingerprint, the index version, when its index was built
  and served from, since when its answers are known fresh, the replay's verdict, the refresh's
  state. No token needed; it tells nothing about the data.
- ``GET /health/ready``: readiness (issue 41 item 4): 200, or 503 with the reasons (codes only, no
  path): ``tokens_unusable``, ``workspace_unreadable``, ``workspace_unknown``, ``index_stale``.

``/mcp`` and ``/api/*`` need ``Authorization: Bearer <token>``: no token or an unknown one is 401,
before anything is run, and one log line (``unauthorized``: the reason, and the token's name when
the tokens file names it; never the token). The token decides who is calling (its ``Session``);
nothing in a request can name another user.
"""
from __future__ import annotations

import contextlib
import json
import socket
from typing import Any, Callable, Mapping, Sequence

import anyio
from mcp import types
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from searchkit import __version__
from searchkit.serve.admission import Admission
from searchkit.serve.auth import Tokens, bearer
from searchkit.serve.mcp_app import (
    SESSION_KEY, SNAPSHOT_PATH, build_server, not_unicode_request, request_session, snapshot_reply, tool_result,
)
from searchkit.serve.calllog import CallLog
from searchkit.serve.service import Outcome, Service
from searchkit.serve.session import Session

MAX_BODY = 1 << 20
STATUS = {"ok": 200, "bad_parameter": 422, "unknown_tool": 404, "unavailable": 503, "busy": 503, "internal": 500}
PROTECTED = ("/mcp", "/api/")


class BearerAuth:
    """ASGI middleware: ``/mcp`` and ``/api/*`` need a known bearer token; its ``Session`` is left in
    the request's state for the handlers. Anything else passes. A refusal is logged (``log``): the
    reason and, for a token the tokens file names, that name; never the token."""

    def __init__(self, app: ASGIApp, tokens: Tokens, log: CallLog | None = None) -> None:
        self.app, self.tokens, self.log = app, tokens, log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(PROTECTED):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
            session, name, reason = self.tokens.lookup(bearer(headers))
            if session is None:
                if self.log is not None:
                    where = "mcp" if scope["path"].startswith("/mcp") else "api"
                    self.log.write("unauthorized", path=where, reason=reason, **({"token_name": name} if name else {}))
                response = JSONResponse({"error": {"status": "unauthorized", "message": "a valid bearer token is required"}},
                                        status_code=401, headers={"WWW-Authenticate": 'Bearer realm="searchkit"'})
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})[SESSION_KEY] = session
        await self.app(scope, receive, send)


def build_app(service: Service, tokens: Tokens, *, host: str, health: Callable[[], Mapping[str, Any]],
              admission: Admission | None = None, on_start: Callable[[], Any] | None = None,
              on_stop: Callable[[], Any] | None = None, allowed_hosts: Sequence[str] = (),
              allowed_origins: Sequence[str] = (), ready: Callable[[], list[str]] | None = None) -> Any:
    """The ASGI app; ``health()`` gives ``/health``'s body; ``on_start`` / ``on_stop`` run in the
    app's lifespan (the refresh thread); ``admission`` bounds the calls running and waiting;
    ``allowed_hosts`` / ``allowed_origins`` are what ``/mcp`` answers beyond ``security``'s own."""
    admission = admission or Admission(4, 16)
    server = build_server(service, request_session, "mcp-http", admission)
    manager = StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, max_request_body_size=MAX_BODY,
        security_settings=security(host, allowed_hosts, allowed_origins),
    )

    async def call(request: Request) -> JSONResponse:
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        session = request.scope["state"][SESSION_KEY]
        out = await admission.call(service, request.path_params["name"], body, session, "http")
        return outcome_response(out)

    async def list_tools(request: Request) -> JSONResponse:  # noqa: ARG001 - Starlette's signature
        return JSONResponse({"tools": [{"name": n, "title": t.title, "description": t.description,
                                        "input_schema": t.schema(), "output_schema": t.output_schema(),
                                        "annotations": t.annotations()} for n, t in service.tools.items()]})

    async def space_snapshot(request: Request) -> JSONResponse:  # issue 41 item 7: as the MCP resource
        session = request.scope["state"][SESSION_KEY]
        code, body = await snapshot_reply(service, session, request.path_params["slug"], admission.limiter)
        return JSONResponse(body, status_code=code)

    async def openapi(request: Request) -> JSONResponse:  # noqa: ARG001
        return JSONResponse(openapi_document(service))

    async def health_route(request: Request) -> JSONResponse:  # noqa: ARG001
        return JSONResponse(dict(health()))

    async def ready_route(request: Request) -> JSONResponse:  # noqa: ARG001
        reasons = await anyio.to_thread.run_sync(ready) if ready is not None else []
        if reasons:
            return JSONResponse({"status": "not_ready", "reasons": reasons}, status_code=503,
                                headers={"Retry-After": "5"})
        return JSONResponse({"status": "ready", "reasons": []})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):  # noqa: ARG001
        async with manager.run():
            if on_start is not None:
                on_start()
            try:
                yield
            finally:
                if on_stop is not None:
                    on_stop()

    app = Starlette(routes=[
        Route("/health", health_route, methods=["GET"]),
        Route("/health/ready", ready_route, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/api/tools", list_tools, methods=["GET"]),
        Route("/api/tools/{name}", call, methods=["POST"]),
        Route("/api/spaces/{slug}/snapshot", space_snapshot, methods=["GET"]),
        # stateless: no GET stream (a GET is 405, not an SSE stream held open with nothing to send)
        Route("/mcp", RescueMcp(StreamableHTTPASGIApp(manager), service, admission), methods=["POST", "DELETE"]),
    ], lifespan=lifespan)
    return BearerAuth(app, tokens, service.log)


class RescueMcp:
    """``/mcp``: a ``tools/call`` whose body the SDK's parser refuses for a lone surrogate escape
    (``\\ud800``: it answers a bare "Parse error") is run by the service as Python's parser reads
    it, so the answer is the tool's error naming the parameter, logged not ok (issue 39 item 5);
    every other request goes to the SDK's app as it came."""

    def __init__(self, app: ASGIApp, service: Service, admission: Admission) -> None:
        self.app, self.service, self.admission = app, service, admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= MAX_BODY:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: the SDK's app sees it
                await self.app(scope, _replay(chunks, message, receive), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        request = None if more else not_unicode_request(b"".join(chunks))
        if request is None or request["method"] != "tools/call":
            await self.app(scope, _replay(chunks, None, receive, more), send)
            return
        given = request.get("params")
        params = given if isinstance(given, dict) else {}
        session = (scope.get("state") or {}).get(SESSION_KEY)
        if not isinstance(session, Session):  # not admitted by BearerAuth: cannot get here; the SDK's app refuses
            await self.app(scope, _replay(chunks, None, receive), send)
            return
        out = await self.admission.call(self.service, params.get("name"), params.get("arguments"), session, "mcp-http")
        if out.status == "unknown_tool":  # as mcp_app answers it: invalid params, not a tool result (issue 41 item 6)
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"],
                                    "error": {"code": types.INVALID_PARAMS, "message": out.text}}
        else:
            body = {"jsonrpc": "2.0", "id": request["id"],
                    "result": tool_result(out).model_dump(mode="json", by_alias=True, exclude_none=True)}
        await JSONResponse(body)(scope, receive, send)


def outcome_response(out: Outcome) -> JSONResponse:
    """The JSON API's answer to one call: its status code; a refused call (``busy``) says when to
    try again (``Retry-After``)."""
    headers = {"Retry-After": str(out.retry_after)} if out.retry_after is not None else None
    return JSONResponse(out.to_dict(), status_code=STATUS.get(out.status, 500), headers=headers)


def _replay(chunks: list[bytes], pending: Message | None, receive: Receive, more: bool = False) -> Receive:
    """A ``receive`` that gives the body read so far (one message), then ``pending``, then the rest."""
    queue: list[Any] = [{"type": "http.request", "body": b"".join(chunks), "more_body": more or pending is not None}]
    if pending is not None:
        queue.append(pending)

    async def replayed() -> Any:
        return queue.pop(0) if queue else await receive()
    return replayed


async def _body(request: Request) -> Any:
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            return _error(413, "too_large", f"the request body is over {MAX_BODY:,} bytes")
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return _error(400, "bad_json", "the request body is not JSON: send an object of the tool's arguments")


def _error(code: int, status: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"status": status, "param": None, "message": message}}, status_code=code)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def security(host: str, allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection for MCP: the ``Host`` and ``Origin`` values ``/mcp`` answers (any
    other is the SDK's 421 / 403). Always the loopback names; a server bound beyond loopback also
    answers the address it is bound to (unless a wildcard) and this machine's host name; then every
    ``allowed_hosts`` value (``--allowed-host``: a name or address, with or without a port: what a
    TLS proxy in front forwards). Each host is answered with any port and without one, its origins
    ``http://`` and ``https://`` alike; ``allowed_origins`` (``--allowed-origin``) adds origins."""
    bases: list[str] = list(LOOPBACK_HOSTS)
    if host not in ("127.0.0.1", "localhost", "::1"):
        if host not in WILDCARD_HOSTS:
            bases.append(f"[{host}]" if ":" in host else host)
        name = socket.gethostname()
        if name:
            bases.append(name)
    hosts: list[str] = []
    for value in [*bases, *allowed_hosts]:
        if _has_port(value):
            hosts.append(value)
        else:
            hosts += [value, f"{value}:*"]
    hosts = list(dict.fromkeys(hosts))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    origins = list(dict.fromkeys([*origins, *allowed_origins]))
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _has_port(host: str) -> bool:
    """Whether ``host`` (``name``, ``name:8443``, ``[::1]:*``, ``[::1]``) names a port."""
    tail = host.rsplit("]", 1)[-1] if host.startswith("[") else host
    return ":" in tail


def openapi_document(service: Service) -> dict[str, Any]:
    """OpenAPI 3.1 of the JSON API, each tool's request body its generated parameter schema."""
    paths: dict[str, Any] = {}
    answer: dict[str, Any] = {"type": "object", "properties": {"answer": {"type": "object"}, "text": {"type": "string"},
                                               "index_version": {"type": "integer"}}}
    error = {"type": "object", "properties": {"error": {"type": "object", "properties": {
        "status": {"type": "string"}, "param": {"type": ["string", "null"]}, "message": {"type": "string"}}}}}
    for name, t in service.tools.items():
        schema = {k: v for k, v in t.schema().items() if k not in ("$schema", "$id")}
        output = {k: v for k, v in (t.output_schema() or {"type": "object"}).items() if k != "$schema"}  # $id kept: its $defs
        answer = {**answer, "properties": {**answer["properties"], "answer": output}}
        paths[f"/api/tools/{name}"] = {"post": {
            "operationId": name, "summary": t.description,
            "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
            "responses": {
                "200": {"description": "the answer", "content": {"application/json": {"schema": answer}}},
                "401": {"description": "no valid bearer token"},
                "422": {"description": "a bad parameter, named", "content": {"application/json": {"schema": error}}},
                "503": {"description": "who may see what cannot be read now"},
            },
        }}
    paths["/api/spaces/{slug}/snapshot"] = SNAPSHOT_PATH
    return {
        "openapi": "3.1.0",
        "info": {"title": "searchkit tools", "version": __version__,
                 "description": f"config {service.info.get('fingerprint')}"},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
