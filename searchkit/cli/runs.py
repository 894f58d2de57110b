"""``searchkit runs ls [DIR]``: the run folders under a folder, one line each (issue 31 item 7). Runs
from ``searchkit.cli.commands.runs``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

cmd_ls = Verb("searchkit.cli.commands.runs:cmd_ls")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pr = sub.add_parser("runs", help="list run folders (eval --out): dataset, split, config, headline metrics, date")
    verbs = pr.add_subparsers(dest="runs_command", required=True)
    ls = verbs.add_parser("ls", help="one line per run folder under DIR (recursively), oldest first")
    ls.add_argument("dir", nargs="?", default="runs", metavar="DIR", help="where to look (default runs/)")
    ls.add_argument("--json", action="store_true", help="print one JSON object (strict JSON: null, never NaN)")
    ls.set_defaults(func=cmd_ls)
