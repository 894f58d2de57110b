"""``searchkit chat-read REF`` and ``searchkit app-row REF``: open a history card's ref from the
command line (issue 30; seed 000), as ``searchkit history`` searches: the same index flags, who is
calling from ``--caller`` / ``--container`` / ``--space``, the tool's own checks and answer."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from searchkit.tools.base import ToolContext
from searchkit.tools.terminal import json_text
from searchkit.cli.common import load_config


def _common(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workspace", help="workspace folder (indexed in memory, embeddings cached)")
    src.add_argument("--index", help="an index built by `searchkit index --workspace`")
    p.add_argument("--caller", help="user id of the person reading (omit in a shared container)")
    p.add_argument("--container", choices=["personal", "shared"], default="personal")
    p.add_argument("--space", help="slug of the current space (default: the caller's first space)")
    p.add_argument("--in-space", help="the space the card named, when it is not the current one")
    p.add_argument("--lang", choices=["ru", "en", "ja"], help="message language (default: the space's)")
    p.add_argument("--config", help="SearchConfig JSON file or an exported NAME.vN.json")
    p.add_argument("--json", action="store_true")


def add_parser(sub: Any) -> None:
    c = sub.add_parser("chat-read", help="read a chat by its card's ref, chat:<ses_id> (issue 30)")
    c.add_argument("ref", help="chat:<ses_id>")
    c.add_argument("--find", help="exact, case-sensitive text of a message: the newest messages holding it")
    c.add_argument("--before", type=int, help="only messages before this position (page back)")
    c.add_argument("--limit", type=int, help="messages (default 20), or matching messages with --find (default 5)")
    c.add_argument("--context", type=int, help="with --find: neighbours each side (default 2)")
    _common(c)
    c.set_defaults(func=run, tool="chat_read")
    a = sub.add_parser("app-row", help="open a table row by its card's ref, app:<table>#<id> (issue 30)")
    a.add_argument("ref", help="app:<table>#<id>")
    _common(a)
    a.set_defaults(func=run, tool="app_row")


def run(args: argparse.Namespace) -> int:
    """A thin adapter: flags -> the tool's parameters and a ``ToolContext``; every check is the
    tool's (a bad parameter, or a ref the caller cannot read, is one line naming it)."""
    from searchkit.tools.history import HistoryIndex
    from searchkit.tools.registry import TOOLS

    config = load_config(args.config) if args.config else None
    if args.index:
        idx = HistoryIndex.load(args.index, config)
    else:
        idx = HistoryIndex.build(args.workspace, config, show_progress=sys.stderr.isatty())
    tool = TOOLS[args.tool]
    extra = {} if args.tool == "app_row" else {
        "find": args.find, "before": args.before, "limit": args.limit, "context": args.context}
    params = tool.params(ref=args.ref, in_space=args.in_space, **extra)
    ctx = ToolContext(caller=args.caller, container=args.container, space=args.space, lang=args.lang, index=idx)
    answer = tool.run(params, ctx)
    if args.json:
        print(json_text(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2)))
    else:
        sys.stdout.write(answer.render())
    return 0
