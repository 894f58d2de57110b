"""``searchkit history``: the history search tool from the command line (SPEC H6-H15). Runs from
``searchkit.cli.commands.history``."""
from __future__ import annotations

import argparse
from searchkit.cli.dispatch import Verb

run = Verb("searchkit.cli.commands.history:run")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument("--explain", action="store_true",
                   help="with --json: each card's scores and the weak-match signals too (as `serve --explain`)")
    p.set_defaults(func=run)
