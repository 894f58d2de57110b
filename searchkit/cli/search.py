"""``searchkit search``: search an index folder, each retriever's score and rank shown."""
from __future__ import annotations

import argparse
import json
from typing import Any

from searchkit.cli.common import CLIError, date_arg, kinds_arg, load_config


def add_parser(sub: Any) -> None:
    ps = sub.add_parser("search", help="search an index folder")
    ps.add_argument("--index", required=True)
    ps.add_argument("query")
    ps.add_argument("--k", type=int, default=10)
    ps.add_argument("--kinds", help="comma-separated kinds")
    ps.add_argument("--since")
    ps.add_argument("--until")
    ps.add_argument("--config", help="query-time config (index part must match)")
    ps.add_argument("--json", action="store_true")
    ps.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    from searchkit.searcher import Filters, Searcher

    kinds = kinds_arg(args.kinds)
    since, until = date_arg("--since", args.since), date_arg("--until", args.until)
    if since and until and since >= until:
        raise CLIError(f"--until must be later than --since ({since}), got {until} (until is exclusive)")
    if not 1 <= args.k <= 1000:
        raise CLIError(f"--k must be from 1 to 1000, got {args.k}")
    config = load_config(args.config) if args.config else None
    s = Searcher.load(args.index, config)
    filters = Filters(kinds=kinds, since=since, until=until)
    res = s.search(args.query, k=args.k, filters=filters)
    if args.json:
        print(json.dumps(res.to_dict(), ensure_ascii=False, indent=2))
        return 0
    for w in res.warnings:
        print(f"! {w.message}")
    for h in res.hits:
        parts = " ".join(f"{n}={h.scores[n]:.4f}(#{h.ranks[n]})" for n in sorted(h.scores))
        print(f"{h.rank:>3}. {h.score:.4f}  {h.record.ref or h.record.id}  {h.record.title[:60]}  [{parts}]")
    return 0

