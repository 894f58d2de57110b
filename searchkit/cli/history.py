"""``searchkit history``: the history search tool from the command line (SPEC H6-H15)."""
from __future__ import annotations

import argparse
import json
import sys

from searchkit.tools.base import ToolContext
from searchkit.cli.common import load_config


def add_parser(sub) -> None:
    p = sub.add_parser("history", help="history search over a workspace (SPEC H)")
    p.add_argument("query")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workspace", help="workspace folder (indexed in memory, embeddings cached)")
    src.add_argument("--index", help="an index built by `searchkit index --workspace`")
    p.add_argument("--caller", help="user id of the person searching (omit in a shared container)")
    p.add_argument("--container", choices=["personal", "shared"], default="personal")
    p.add_argument("--space", help="slug of the space the search runs in (default: the caller's first space, "
                   "now or as indexed)")
    p.add_argument("--kinds", help="comma-separated: digest,chat,log,file,source,page,app")
    p.add_argument("--since", help="ISO date, inclusive")
    p.add_argument("--until", help="ISO date, exclusive")
    p.add_argument("--limit", type=int)
    p.add_argument("--spaces", help='"all" or comma-separated slugs (searched besides the current space)')
    p.add_argument("--lang", choices=["ru", "en", "ja"], help="message language (default: the query's)")
    p.add_argument("--config", help="SearchConfig JSON file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """A thin adapter: flags -> ``HistorySearchParams`` and a ``ToolContext`` (who is calling and
    where), ``history_search`` run, its answer printed (``render`` or ``to_dict``). Every check is
    the tool's (``searchkit.tools.history_search``): a bad parameter is one line naming it."""
    from searchkit.tools.history import HistoryIndex
    from searchkit.tools.registry import TOOLS

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
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(answer.render())
    return 0


def _spaces(flag: str | None) -> str | tuple[str, ...] | None:
    """``--spaces``: ``all``, or the comma-separated slugs (empty items dropped; none left is the
    tool's "empty list" error)."""
    if flag is None:
        return None
    return "all" if flag == "all" else tuple(s.strip() for s in flag.split(",") if s.strip())
