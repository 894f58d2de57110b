"""``searchkit datasets validate DIR``: check a dataset folder (ours, a plain BEIR one, or one with TREC
qrels) and name every problem as ``file:line: why`` (issue 40 item 2). Runs from
``searchkit.cli.commands.datasets``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

cmd_validate = Verb("searchkit.cli.commands.datasets:cmd_validate")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pd = sub.add_parser("datasets", help="check a dataset folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)")
    verbs = pd.add_subparsers(dest="datasets_command", required=True)
    v = verbs.add_parser(
        "validate",
        help="name every problem of a dataset folder as file:line: why (exit 1 when any, 0 and a one-line "
             "summary when none, 2 when the folder cannot be read)",
        description="Reads every file of the folder (every split) and prints each problem as file:line: why; "
                    "when there is none, one line of counts per split, and on stderr what was inferred "
                    "(a query's missing 'lang' detected, a missing 'answerable' read from the judgements).")
    v.add_argument("dir", metavar="DIR", help="the dataset folder, or a dataset name (datasets/, ../shared/data)")
    v.add_argument("--json", action="store_true", help="print one JSON object: ok, problems, splits")
    v.set_defaults(func=cmd_validate)
