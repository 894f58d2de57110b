"""``searchkit snapshot SLUG``: the space snapshot of seed 000 (issue 41 item 7) from the command line:
what is in work, recent decisions, what waits for an answer and what appeared, built from the
space's recent history under the same rules as the served resource (who may read it, and in a space
of several members only shared chats). Runs from ``searchkit.cli.commands.snapshot``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

run = Verb("searchkit.cli.commands.snapshot:run")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("snapshot", help="a space's snapshot: in work, decisions, waiting, what appeared (seed 000)")
    p.add_argument("slug", metavar="SLUG", help="the space")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workspace", help="workspace folder (read now; nothing is embedded)")
    src.add_argument("--index", help="an index built by `searchkit index --workspace` (its workspace read for access)")
    p.add_argument("--caller", help="user id of the person reading (omit with --container shared)")
    p.add_argument("--container", choices=["personal", "shared"], default="personal")
    p.add_argument("--space", help="with --container shared: the container's own space")
    p.add_argument("--as-of", metavar="YYYY-MM-DD", help="the last day of the window (default: today, UTC)")
    p.add_argument("--days", type=int, default=14, help="days of history, ending on --as-of (default 14)")
    p.add_argument("--lang", choices=["ru", "en", "ja"], help="language of the text (default: the space's)")
    p.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    p.set_defaults(func=run)
