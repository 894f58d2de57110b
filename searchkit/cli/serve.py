"""``searchkit serve``: the tools to an assistant over MCP (stdio or streamable HTTP) and a JSON HTTP
API, from an exported config, with live refresh (issue 30); ``searchkit serve-token``: a bearer
token for the HTTP transport.

stdio: who is calling is fixed by the flags (``--caller``, ``--container``, ``--space``,
``--current-task``). HTTP: by each request's bearer token (``--tokens FILE``, owner-only), bound to
127.0.0.1 unless ``--allow-non-loopback``. The export is replayed first (``config verify``) where
its dataset is present; a different ranking refuses to start unless ``--no-verify``. Runs from
``searchkit.cli.commands.serve``.
"""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

DEFAULT_PORT = 8765

run = Verb("searchkit.cli.commands.serve:run")
run_token = Verb("searchkit.cli.commands.serve:run_token")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument("--explain", action="store_true",
                   help="answers carry their scoring internals (cards' per-retriever and per-stage scores, the "
                        "weak-match signals); off by default (issue 41)")
    p.add_argument("--workers", type=int, default=2,
                   help="tool calls run at once (default 2: on 2 cores it served the most calls with the shortest "
                        "waits; benchmarks/README.md)")
    p.add_argument("--queue", type=int, default=16,
                   help="tool calls that may wait for a worker (default 16: at 2 workers and ~50 ms a call, a "
                        "waiting call starts within ~0.4 s; 8 shed calls at 20/s during a version swap; "
                        "benchmarks/README.md); beyond it a call is refused at once: HTTP 503 with Retry-After, an "
                        "MCP tool error 'busy' (issue 41)")
    p.add_argument("--allowed-host", action="append", metavar="HOST",
                   help="HTTP: a Host header /mcp also answers (a name or address, optionally :PORT), e.g. the name a "
                        "TLS proxy forwards; repeat for more (loopback names, and beyond loopback the bound address "
                        "and this machine's name, are always answered)")
    p.add_argument("--allowed-origin", action="append", metavar="ORIGIN",
                   help="HTTP: an Origin header /mcp also answers (scheme://host[:port]); repeat for more")
    p.add_argument("--state-dir", help="where the server keeps its private copy of the index for refreshes (a new "
                                       "owner-only folder inside it, removed at stop; default: the system's temp folder)")
    p.set_defaults(func=run)

    t = sub.add_parser("serve-token", help="make a bearer token for `searchkit serve --transport http` (printed once)")
    t.add_argument("--tokens", required=True, help="the tokens file (created owner-only; only the token's sha256 is stored)")
    t.add_argument("--workspace", required=True, metavar="DIR",
                   help="the workspace the server serves: a token is made only for a member of its space (SPEC T1, H14)")
    t.add_argument("--caller", help="user id the token stands for (omit with --container shared)")
    t.add_argument("--container", choices=["personal", "shared"], default="personal")
    t.add_argument("--space", help="the current space of its calls (default: the caller's first)")
    t.add_argument("--current-task", type=int, help="the current task of its calls (task tools)")
    t.add_argument("--lang", choices=["ru", "en", "ja"])
    t.add_argument("--name", default="", help="a label for the token (who holds it)")
    t.set_defaults(func=run_token)
