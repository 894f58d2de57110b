"""``searchkit history``: the history search tool from the command line (SPEC H6-H15)."""
from __future__ import annotations

import argparse
import json
import sys


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
    from searchkit.cli.common import CLIError, load_config
    from searchkit.tools.history import HistoryIndex, HistorySearchError

    if args.container == "shared" and args.caller is not None:
        raise CLIError("caller: a shared workspace container has no caller (no person behind it); "
                       "leave --caller out, or search in a personal container")
    if args.container == "personal" and not args.caller:
        raise CLIError("caller: --caller is required in a personal container (the user id of the person searching)")
    config = load_config(args.config) if args.config else None
    if args.index:
        idx = HistoryIndex.load(args.index, config)
    else:
        idx = HistoryIndex.build(args.workspace, config, show_progress=sys.stderr.isatty())
    space = args.space
    if space is None:
        if args.container == "shared":
            raise CLIError("space: --space is required in a shared container")
        space = idx.default_space(args.caller)  # membership as the workspace has it now (H14)
        if space is None:
            raise CLIError(f"space: --caller {args.caller!r} is a member of no space; give --space")
    spaces = None
    if args.spaces is not None:
        spaces = "all" if args.spaces == "all" else [s.strip() for s in args.spaces.split(",") if s.strip()]
    try:
        ans = idx.search(
            args.query,
            kinds=[k.strip() for k in args.kinds.split(",")] if args.kinds is not None else None,
            since=args.since,
            until=args.until,
            limit=args.limit,
            spaces=spaces,
            caller=args.caller if args.container == "personal" else None,
            container=args.container,
            space=space,
            lang=args.lang,
        )
    except HistorySearchError as exc:
        raise CLIError(str(exc)) from None
    if args.json:
        print(json.dumps(ans.to_dict(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(ans.text)
    return 0
