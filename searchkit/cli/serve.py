"""``searchkit serve``: the tools to an assistant over MCP (stdio or streamable HTTP) and a JSON HTTP
API, from an exported config, with live refresh (issue 30); ``searchkit serve-token``: a bearer
token for the HTTP transport.

stdio: who is calling is fixed by the flags (``--caller``, ``--container``, ``--space``,
``--current-task``). HTTP: by each request's bearer token (``--tokens FILE``, owner-only), bound to
127.0.0.1 unless ``--allow-non-loopback``. The export is replayed first (``config verify``) where
its dataset is present; a different ranking refuses to start unless ``--no-verify``.
"""
from __future__ import annotations

import argparse
import ipaddress
import re
import socket
import sys
from typing import Any

from searchkit.cli.common import CLIError
from searchkit.errors import ParameterError

DEFAULT_PORT = 8765
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve the tools to an assistant: MCP (stdio, HTTP) and a JSON API (issue 30)")
    p.add_argument("--config", required=True, help="the exported config (searchkit config export: NAME.vN.json)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workspace", help="workspace folder, indexed in memory at start (embeddings cached)")
    src.add_argument("--index", help="a history index (searchkit index --workspace); refreshed from its workspace")
    p.add_argument("--tasks-db", help="a task store (searchkit tasks import): serves task_search/around/list too")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP: port (default {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--allow-non-loopback", action="store_true",
                   help="HTTP: allow a --host other than a loopback address (put TLS in front of it)")
    p.add_argument("--tokens", help="HTTP: the tokens file (bearer token -> caller), owner-only (searchkit serve-token)")
    p.add_argument("--caller", help="stdio: user id of the person the assistant works for")
    p.add_argument("--container", choices=["personal", "shared"], default=None,
                   help="stdio: personal (default) or shared (a workspace container: no caller)")
    p.add_argument("--space", help="stdio: slug of the current space (default: the caller's first)")
    p.add_argument("--current-task", type=int, help="stdio: the current task (the task tools never return it)")
    p.add_argument("--lang", choices=["ru", "en", "ja"], help="language of the answers' messages (default: each tool's)")
    p.add_argument("--refresh-every", default="30m", metavar="DURATION",
                   help="re-read the workspace this often, e.g. 30m, 90s (default 30m, at most 30m: SPEC H3)")
    p.add_argument("--no-verify", action="store_true", help="start even when the export's replay ranks differently")
    p.add_argument("--log-file", help="append the JSON log lines here (default: stderr)")
    p.add_argument("--log-content", action="store_true", help="log each call's arguments and answer text too")
    p.add_argument("--workers", type=int, default=4, help="tool calls run at once (default 4)")
    p.add_argument("--state-dir", help="where the server keeps its private copy of the index for refreshes (a new "
                                       "owner-only folder inside it, removed at stop; default: the system's temp folder)")
    p.set_defaults(func=run)

    t = sub.add_parser("serve-token", help="make a bearer token for `searchkit serve --transport http` (printed once)")
    t.add_argument("--tokens", required=True, help="the tokens file (created owner-only; only the token's sha256 is stored)")
    t.add_argument("--caller", help="user id the token stands for (omit with --container shared)")
    t.add_argument("--container", choices=["personal", "shared"], default="personal")
    t.add_argument("--space", help="the current space of its calls (default: the caller's first)")
    t.add_argument("--current-task", type=int, help="the current task of its calls (task tools)")
    t.add_argument("--lang", choices=["ru", "en", "ja"])
    t.add_argument("--name", default="", help="a label for the token (who holds it)")
    t.set_defaults(func=run_token)


def duration(text: str) -> float:
    """``30m``, ``90s``, ``1h``, ``500ms`` or plain seconds, from 1 s to 30 min (H3's bound)."""
    from searchkit.serve.state import MAX_EVERY_S

    m = _DURATION.match(text or "")
    if not m:
        raise CLIError(f"--refresh-every: expected a duration like 30m, 90s or 1h, got {text[:40]!r}")
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if not 1.0 <= seconds <= MAX_EVERY_S:
        raise CLIError("--refresh-every: from 1s to 30m (SPEC H3: erased text leaves the answers within 30 minutes)")
    return seconds


def run(args: argparse.Namespace) -> int:
    """Check the flags, load and verify the export, open the index, then serve until stopped."""
    every = duration(args.refresh_every)
    stdio_session = _check_flags(args)
    import mcp  # noqa: F401 - the serve extra: "needs mcp, from the 'serve' extra" when missing (cli.EXTRAS)

    from searchkit.serve.runner import Options, serve

    opts = Options(config=args.config, workspace=args.workspace, index=args.index, tasks_db=args.tasks_db,
                   transport=args.transport, host=args.host, port=args.port, tokens=args.tokens,
                   session=stdio_session, every=every, no_verify=args.no_verify, log_file=args.log_file,
                   log_content=args.log_content, workers=args.workers, state_dir=args.state_dir)
    sock = _bind(args.host, args.port) if args.transport == "http" else None
    return serve(opts, sock)


def _check_flags(args: argparse.Namespace) -> Any:
    from searchkit.serve.session import Session

    if not 1 <= args.workers <= 64:
        raise CLIError("--workers: from 1 to 64")
    stdio_flags = [f for f, v in (("--caller", args.caller), ("--container", args.container), ("--space", args.space),
                                  ("--current-task", args.current_task)) if v is not None]
    if args.transport == "http":
        if stdio_flags:
            raise CLIError(f"{stdio_flags[0]}: over HTTP who is calling comes from each request's bearer token "
                           "(--tokens), never from a flag")
        if not args.tokens:
            raise CLIError("--tokens: required with --transport http (make one with `searchkit serve-token`)")
        if not 0 <= args.port <= 65535:
            raise CLIError(f"--port: from 0 to 65535, got {args.port}")
        if not _loopback(args.host) and not args.allow_non_loopback:
            raise CLIError(f"--host {args.host[:60]}: not a loopback address; serving beyond this machine needs "
                           "--allow-non-loopback (and TLS in front)")
        return None
    if args.tokens:
        raise CLIError("--tokens: only with --transport http; on stdio --caller says who is calling")
    try:
        return Session(caller=args.caller, container=args.container or "personal", space=args.space,
                       current_task=args.current_task, lang=args.lang)
    except ParameterError as exc:
        raise CLIError(f"--{exc.param.replace('_', '-')}: {exc.message}") from None


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
        raise CLIError(f"--host/--port: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.listen(128)
    return sock


def run_token(args: argparse.Namespace) -> int:
    """Add a token's hash to the tokens file and print the token (shown only this once)."""
    from searchkit.serve.auth import add_token
    from searchkit.serve.session import Session

    try:
        session = Session(caller=args.caller, container=args.container, space=args.space,
                          current_task=args.current_task, lang=args.lang)
    except ParameterError as exc:
        raise CLIError(f"--{exc.param.replace('_', '-')}: {exc.message}") from None
    token = add_token(args.tokens, session, args.name)
    print(token)
    print(f"searchkit serve-token: added to {args.tokens} (only its sha256 is stored; this is the one time it is shown)",
          file=sys.stderr)
    return 0
