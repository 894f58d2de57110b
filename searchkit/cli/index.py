"""``searchkit index``: build an index folder from a dataset or a workspace (H2, H3). Runs from
``searchkit.cli.commands.index``."""
from __future__ import annotations

import argparse

from searchkit.cli import engine
from searchkit.cli.dispatch import Verb
from searchkit.ingest.policy import CAPS

cmd_index = Verb("searchkit.cli.commands.index:cmd_index")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pi = sub.add_parser("index", help="build an index folder from a dataset or a workspace")
    src = pi.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="dataset folder (BEIR layout) or name")
    src.add_argument("--workspace", help="workspace folder (WORKSPACE.md layout)")
    pi.add_argument("--out", required=True, help="index folder to write (atomically)")
    pi.add_argument("--split", default="dev", help=argparse.SUPPRESS)  # ignored: an index reads the corpus only
    pi.add_argument("--config", help="SearchConfig JSON file")
    pi.add_argument("--update", action="store_true", help="with --workspace: update the index at --out in place (H3)")
    pi.add_argument("--cap", action="append", default=[], metavar="NAME=VALUE",
                    help="with --workspace: change a size cap of the never-index policy (repeatable; "
                         f"{', '.join(CAPS)}); give the same caps to --update")
    pi.add_argument("--quiet", action="store_true", help="no progress bars")
    engine.add_arguments(pi)
    pi.set_defaults(func=cmd_index)
