"""``searchkit report``: run folders as one self-contained HTML page (E4). Runs from
``searchkit.cli.commands.report``."""
from __future__ import annotations

import argparse

from searchkit.cli.compare import add_run_arguments
from searchkit.cli.dispatch import Verb

cmd_report = Verb("searchkit.cli.commands.report:cmd_report")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pr = sub.add_parser("report", help="write one self-contained HTML page for runs of one dataset split")
    pr.add_argument("runs", nargs="+", metavar="RUN", help="run folders (eval --out) or TREC run files of one dataset "
                    "split; the first is the baseline")
    add_run_arguments(pr)
    pr.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write: a new path, or a report "
                    "this command wrote (replaced atomically); anything else is refused")
    pr.add_argument("--title", help="the page title (default: searchkit report: DATASET (SPLIT))")
    pr.add_argument("--worst", type=int, default=10, metavar="N", help="worst queries of the baseline shown with "
                    "their cards (default 10)")
    pr.add_argument("--cards", type=int, default=5, metavar="K", help="cards per run and query (default 5)")
    pr.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="paired test over queries: Fisher's randomization test (default) or Student's t")
    pr.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pr.add_argument("--seed", type=int, default=42, help="seed of the randomization test and the bootstrap")
    pr.add_argument("--no-text", action="store_true", help="leave record and query text out (ids, refs, redacted "
                    "titles and scores only), for a report that leaves the lab; by default text is shown redacted")
    pr.set_defaults(func=cmd_report)
