"""``searchkit compare``: run folders side by side with paired tests (E4). Runs from
``searchkit.cli.commands.compare``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

BY = ("lang", "category", "kind", "kinds_filter")
CORRECTIONS = ("bh", "holm", "none")
DEFAULT_CORRECTION = "bh"
"""``--by`` and ``--correction``'s names, for the help: those of ``searchkit.evaluate.compare`` (``BY``,
``CORRECTIONS``, ``DEFAULT_CORRECTION``), which imports the harness (tests/test_cli_dispatch.py checks
they agree)."""

cmd_compare = Verb("searchkit.cli.commands.compare:cmd_compare")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset``, ``--split`` and ``--label``: what ``compare`` and ``report`` read TREC run files
    with and name runs by (``searchkit.evaluate.any_run.load_any_runs``)."""
    parser.add_argument("--dataset", metavar="D", help="the dataset (folder or name) a TREC run file is scored on; "
                        "default: the one the first run folder given measured")
    parser.add_argument("--split", metavar="SPLIT", help="with --dataset: its split (default: dev, else its one split)")
    parser.add_argument("--label", action="append", metavar="NAME", help="a run's name in the tables (repeatable, in "
                        "the order of the runs; default: the folder's or file's name)")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pm = sub.add_parser("compare", help="compare runs (run folders, TREC run files) against the first, with paired "
                        "tests")
    pm.add_argument("runs", nargs="+", metavar="RUN", help="run folders (eval --out) or TREC run files (qid Q0 docid "
                    "rank score tag: Pyserini, Elasticsearch, ColBERT, ... output) of one dataset split; the first is "
                    "the baseline")
    add_run_arguments(pm)
    pm.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="paired test over queries: Fisher's randomization test (default) or Student's t")
    pm.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pm.add_argument("--seed", type=int, default=42, help="seed of the randomization test and the bootstraps")
    pm.add_argument("--half", choices=["tune", "report"], help="compare only this half of the queries "
                    "(half_of 'dataset:query_id'; tuned settings are quoted on the report half)")
    pm.add_argument("--metric", action="append", metavar="NAME",
                    help="a metric to compare (repeatable or a comma list: nDCG@10,AP,Judged@10,AUROC): any ir_measures "
                         "measure, a ragas score (ragas:faithfulness@5) or AUROC; a measure a run folder lacks is "
                         "computed from its run.trec and its dataset's qrels; default: every metric the runs hold, "
                         "and AUROC")
    pm.add_argument("--by", action="append", metavar="|".join([*BY, "none"]),
                    help="breakdowns to compare too (repeatable or a comma list; default none: only the 'all' rows)")
    pm.add_argument("--correction", choices=list(CORRECTIONS), default=DEFAULT_CORRECTION,
                    help="adjust p over the tests asked for (metrics x groups x runs; identical comparisons left "
                         "out): bh = Benjamini-Hochberg (default), holm, none")
    pm.add_argument("--only-significant", action="store_true",
                    help="show only the rows where a run differs significantly (after the correction)")
    pm.add_argument("--json", action="store_true", help="print one JSON object (strict JSON: null, never NaN)")
    pm.set_defaults(func=cmd_compare)
