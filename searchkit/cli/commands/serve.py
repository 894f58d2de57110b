"""``searchkit serve``: the tools to an assistant over MCP (stdio or streamable HTTP) and a JSON HTTP
API, from an exported config, with live refresh (issue 30); ``searchkit serve-token``: a bearer
token for the HTTP transport.

stdio: who is calling is fixed by the flags (``--caller``, ``--container``, ``--space``,
``--current-task``). HTTP: by each request's bearer token (``--tokens FILE``, owner-only), bound to
127.0.0.1 unless ``--allow-non-loopback``. The export is replayed first (``config verify``) where
its dataset is present; a different ranking refuses to start unless ``--no-verify``.

The flags are checked here first; the server itself (``serve.runner``: anyio, the MCP SDK's and
Starlette's wiring, the serve extra) loads only then, from ``searchkit.cli.commands.serve_start``.
"""
from __future__ import annotations

import argparse
import ipaddress
import re
import socket
import sys
from pathlib import Path
from typing import Any

from searchkit.cli.dispatch import Verb
from searchkit.errors import DataError, InputError, ParameterError
from searchkit.serve import calllog, statedir
from searchkit.serve.auth import add_token, load_tokens
from searchkit.serve.session import Session
from searchkit.serve.state import MAX_EVERY_S
from searchkit.tools.task_members import token_problem
from searchkit.tools.terminal import one_line
from searchkit.util import check_file_target

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_SERVER = Verb("searchkit.cli.commands.serve_start:start")
_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::(?:\d{1,5}|\*))?$")
_ORIGIN = re.compile(r"^https?://(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::(?:\d{1,5}|\*))?$")


def duration(text: str) -> float:
    """``30m``, ``90s``, ``1h``, ``500ms`` or plain seconds, from 1 s to 30 min (H3's bound)."""
    m = _DURATION.match(text or "")
    if not m:
        raise InputError(f"--refresh-every: expected a duration like 30m, 90s or 1h, got {text[:40]!r}", usage=True)
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if not 1.0 <= seconds <= MAX_EVERY_S:
        raise InputError("--refresh-every: from 1s to 30m (SPEC H3: erased text leaves the answers within 30 minutes)", usage=True)
    return seconds


def run(args: argparse.Namespace) -> int:
    """Check the flags, load and verify the export, open the index, then serve until stopped."""
    every = duration(args.refresh_every)
    stdio_session = _check_flags(args)
    import mcp  # noqa: F401 - the serve extra: "needs mcp, from the 'serve' extra" when missing (cli.EXTRAS)

    start = _SERVER.load()  # serve.runner, with anyio and the transports' wiring
    sock = _bind(args.host, args.port) if args.transport == "http" else None
    return start(args, stdio_session, every, sock)


def _check_flags(args: argparse.Namespace) -> Any:
    if not 1 <= args.workers <= 64:
        raise InputError("--workers: from 1 to 64", usage=True)
    if not 0 <= args.queue <= 4096:
        raise InputError("--queue: from 0 to 4096", usage=True)
    _check_allowed(args)
    _check_paths(args)
    stdio_flags = [f for f, v in (("--caller", args.caller), ("--container", args.container), ("--space", args.space),
                                  ("--current-task", args.current_task)) if v is not None]
    if args.transport == "http":
        if stdio_flags:
            raise InputError(f"{stdio_flags[0]}: over HTTP who is calling comes from each request's bearer token "
                           "(--tokens), never from a flag", usage=True)
        if not args.tokens:
            raise InputError("--tokens: required with --transport http (make one with `searchkit serve-token`)", usage=True)
        if not 0 <= args.port <= 65535:
            raise InputError(f"--port: from 0 to 65535, got {args.port}", usage=True)
        if not _loopback(args.host) and not args.allow_non_loopback:
            raise InputError(f"--host {args.host[:60]}: not a loopback address; serving beyond this machine needs "
                           "--allow-non-loopback (and TLS in front)", usage=True)
        try:  # a bad tokens file is found now, not after the replay and the index (issue 41 item 4)
            load_tokens(args.tokens)
        except DataError as exc:
            raise InputError(f"--tokens {one_line(str(exc))}", usage=True) from None
        return None
    if args.tokens:
        raise InputError("--tokens: only with --transport http; on stdio --caller says who is calling", usage=True)
    try:
        return Session(caller=args.caller, container=args.container or "personal", space=args.space,
                       current_task=args.current_task, lang=args.lang)
    except ParameterError as exc:
        raise InputError(f"--{(exc.param or '').replace('_', '-')}: {exc.message}", usage=True) from None


def _check_allowed(args: argparse.Namespace) -> None:
    """``--allowed-host`` / ``--allowed-origin``: HTTP only, each a host (``name``, ``name:8443``,
    ``[::1]:*``) or an origin (``https://name[:port]``)."""
    hosts, origins = args.allowed_host or [], args.allowed_origin or []
    if (hosts or origins) and args.transport != "http":
        raise InputError(f"{'--allowed-host' if hosts else '--allowed-origin'}: only with --transport http", usage=True)
    for h in hosts:
        if not _HOST.match(h):
            raise InputError(f"--allowed-host: expected a host name or address, optionally with :PORT or :*, "
                           f"got {one_line(h)[:60]!r}", usage=True)
    for o in origins:
        if not _ORIGIN.match(o):
            raise InputError(f"--allowed-origin: expected http(s)://HOST[:PORT], got {one_line(o)[:60]!r}", usage=True)


def _check_paths(args: argparse.Namespace) -> None:
    """``--log-file`` and ``--state-dir`` before anything runs (issue 39 items 6 and 8): the log a
    regular file or a new one in an existing folder (a FIFO would hang the start, a device be
    chmod-ed); the state folder an existing folder this user may write in. Nothing is touched."""
    if args.log_file is not None:
        problem = calllog.log_file_problem(args.log_file)
        if problem is not None:
            raise InputError(f"--log-file {problem}", usage=True)
    if args.state_dir is not None:
        problem = statedir.problem(args.state_dir)
        if problem is not None:
            raise InputError(f"--state-dir {problem}", usage=True)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything slow runs (a taken port fails at once)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"--host/--port: cannot listen on {host}:{port} ({exc.strerror or exc})", usage=True) from None
    sock.listen(128)
    return sock


def run_token(args: argparse.Namespace) -> int:
    """Add a token's hash to the tokens file and print the token (shown only this once).

    With ``--workspace DIR`` (the workspace the server serves), a token is made only for a member
    of its space as ``DIR/SLUG/.space/space.json`` has it now (T1, H14; issue 39 item 2): a caller
    who is not a member of ``--space`` (or of any space, without one) and a shared container's
    ``--space`` the workspace does not have are refused in one line, nothing written; a space that
    does not exist and one the caller is not in are refused alike. The server checks membership
    again at every call (a member may leave after the token is made); the parser requires
    ``--workspace``. ``--tokens`` is refused (one line, the file untouched) unless it is a new path or
    a tokens file: a link (a loop included), a FIFO, a device, a folder, any other file (issue 39 item 6)."""
    try:
        session = Session(caller=args.caller, container=args.container, space=args.space,
                          current_task=args.current_task, lang=args.lang)
    except ParameterError as exc:
        raise InputError(f"--{(exc.param or '').replace('_', '-')}: {exc.message}", usage=True) from None
    workspace = getattr(args, "workspace", None)
    problem = None if workspace is None else token_problem(workspace, session.caller, session.space)
    if problem is not None:
        raise InputError(problem, usage=True)
    check_file_target(args.tokens, "--tokens", what="a tokens file", ours=_is_tokens_file,
                      ours_text="a tokens file searchkit serve-token wrote")
    token = add_token(args.tokens, session, args.name)
    print(token)
    print(f"searchkit serve-token: added to {args.tokens} (only its sha256 is stored; this is the one time it is shown)",
          file=sys.stderr)
    return 0


def _is_tokens_file(path: Path) -> bool | str:
    """Whether ``path`` is a usable tokens file (``check_file_target``'s ``ours``)."""
    try:
        load_tokens(path)
    except DataError as exc:
        return one_line(str(exc))
    return True
