"""``searchkit serve`` from start to stop (issue 30): log, export, index, refresh, transport."""
from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from searchkit import __version__
from searchkit.serve import calllog, startup
from searchkit.serve.session import Session
from searchkit.serve.service import Service
from searchkit.serve.state import Holder, Refresher, Served, TaskStores


@dataclass(frozen=True)
class Options:
    """The checked flags of ``searchkit serve``."""

    config: str
    workspace: str | None
    index: str | None
    tasks_db: str | None
    transport: str
    host: str
    port: int
    tokens: str | None
    session: Session | None
    every: float
    no_verify: bool = False
    log_file: str | None = None
    log_content: bool = False
    workers: int = 4


def serve(opts: Options, sock: socket.socket | None = None) -> int:
    """Load, verify, index, then serve on stdio or on ``sock`` (HTTP) until stopped; 0 at a clean stop."""
    calllog.setup(opts.log_file)
    log = calllog.CallLog(content=opts.log_content)
    loaded = startup.load_export(opts.config, no_verify=opts.no_verify)
    log.write("verify", fingerprint=loaded.fingerprint, verify=loaded.verify, note=loaded.verify_note)
    served, workspace = startup.open_index(loaded.config, workspace=opts.workspace, index=opts.index)
    log.write("warm", took_s=round(startup.warm(served), 3))
    tasks = TaskStores(opts.tasks_db, loaded.config) if opts.tasks_db else None
    holder = Holder(served)
    info = {"fingerprint": loaded.fingerprint, "index_fingerprint": loaded.index_fingerprint,
            "verify": loaded.verify, "config": Path(loaded.path).name}
    service = Service(holder, fingerprint=loaded.fingerprint, log_=log, tasks=tasks, info=info)
    refresher = _refresher(holder, workspace, opts.every, log, tasks)
    log.write("start", transport=opts.transport, version=__version__, index_version=served.version,
              records=len(served.index.searcher.records), tools=list(service.tools), refresh_every_s=opts.every,
              refresh=refresher is not None, **info)
    health = _health(holder, refresher, service, opts.every)
    limiter = anyio.CapacityLimiter(opts.workers)
    if opts.transport == "stdio":
        return _stdio(service, opts.session, refresher, limiter)
    return _http(service, opts, sock, health, refresher, limiter, log)


def _refresher(holder: Holder, workspace: Path | None, every: float, log: calllog.CallLog,
               tasks: TaskStores | None) -> Refresher | None:
    if workspace is None:
        log.write("refresh", ok=False, error="the index names no workspace: nothing to refresh from")
        return None

    def done(served: Served | None, report: Any, error: str | None) -> None:
        if error is not None:
            log.write("refresh", ok=False, error=error, index_version=holder.current.version)
        else:
            log.write("refresh", ok=True, index_version=served.version, took_s=round(served.took_s, 3),
                      update=report.line() if report is not None else None)

    return Refresher(holder, workspace, every, done, on_publish=(lambda _s: tasks.reset()) if tasks else None)


def _health(holder: Holder, refresher: Refresher | None, service: Service, every: float):
    def body() -> dict[str, Any]:
        cur = holder.current
        return {
            "status": "ok", "searchkit": __version__, **service.info,
            "index_version": cur.version, "index_built_at": cur.built_at, "tools": list(service.tools),
            "refresh": None if refresher is None else {
                "every_s": every, "running": refresher.running, "last_ok": refresher.last_ok,
                "last_error": refresher.last_error},
        }
    return body


def _stdio(service: Service, session: Session | None, refresher: Refresher | None,
           limiter: anyio.CapacityLimiter) -> int:
    from searchkit.serve.mcp_app import build_server, fixed_session, run_stdio

    if session is None:  # pragma: no cover - the CLI checks it
        raise startup.ServeError("stdio needs the launching session (--caller, or --container shared --space)")
    server = build_server(service, fixed_session(session), "mcp-stdio", limiter)
    if refresher is not None:
        refresher.start()
    try:
        anyio.run(run_stdio, server)
    finally:
        if refresher is not None:
            refresher.stop()
    return 0


def _http(service: Service, opts: Options, sock: socket.socket | None, health: Any, refresher: Refresher | None,
          limiter: anyio.CapacityLimiter, log: calllog.CallLog) -> int:
    import uvicorn

    from searchkit.serve.auth import Tokens
    from searchkit.serve.http_app import build_app

    tokens = Tokens(opts.tokens)
    app = build_app(service, tokens, host=opts.host, health=health, limiter=limiter,
                    on_start=refresher.start if refresher else None, on_stop=refresher.stop if refresher else None)
    if sock is None:  # pragma: no cover - the CLI binds first
        raise startup.ServeError("no listening socket")
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    log.write("listening", url=f"http://{shown}:{port}", mcp=f"http://{shown}:{port}/mcp")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    server.run(sockets=[sock])
    return 0
