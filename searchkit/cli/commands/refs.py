"""``searchkit chat-read REF`` and ``searchkit app-row REF``: open a history card's ref from the
command line (issue 30; seed 000), as ``searchkit history`` searches: the same index flags, who is
calling from ``--caller`` / ``--container`` / ``--space``, the tool's own checks and answer."""
from __future__ import annotations

import argparse
import json
import sys

from searchkit.cli.common import load_config
from searchkit.tools.base import ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS
from searchkit.tools.terminal import json_text


def run(args: argparse.Namespace) -> int:
    """A thin adapter: flags -> the tool's parameters and a ``ToolContext``; every check is the
    tool's (a bad parameter, or a ref the caller cannot read, is one line naming it)."""
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
