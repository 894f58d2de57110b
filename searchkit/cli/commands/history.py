"""``searchkit history``: the history search tool from the command line (SPEC H6-H15)."""
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
    """A thin adapter: flags -> ``HistorySearchParams`` and a ``ToolContext`` (who is calling and
    where), ``history_search`` run, its answer printed (``render`` or ``to_dict``, both sanitised by
    the tool: ``searchkit.tools.base.SafeAnswer``). Every check is
    the tool's (``searchkit.tools.history_search``): a bad parameter is one line naming it."""
    config = load_config(args.config) if args.config else None
    if args.index:
        idx = HistoryIndex.load(args.index, config)
    else:
        idx = HistoryIndex.build(args.workspace, config, show_progress=sys.stderr.isatty())
    tool = TOOLS["history_search"]
    params = tool.params(
        query=args.query,
        kinds=None if args.kinds is None else tuple(k.strip() for k in args.kinds.split(",")),
        since=args.since,
        until=args.until,
        limit=args.limit,
        spaces=_spaces(args.spaces),
    )
    ctx = ToolContext(caller=args.caller, container=args.container, space=args.space, lang=args.lang, index=idx)
    answer = tool.run(params, ctx)
    if args.json:
        print(json_text(json.dumps(answer.to_dict(explain=args.explain), ensure_ascii=False, indent=2)))
    else:
        sys.stdout.write(answer.render())
    return 0


def _spaces(flag: str | None) -> str | tuple[str, ...] | None:
    """``--spaces``: ``all``, or the comma-separated slugs (empty items dropped; none left is the
    tool's "empty list" error)."""
    if flag is None:
        return None
    return "all" if flag == "all" else tuple(s.strip() for s in flag.split(",") if s.strip())
