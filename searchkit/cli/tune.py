"""``searchkit tune``: fusion settings and the weak-match model, chosen on the tune half. Runs from
``searchkit.cli.commands.tune``."""
from __future__ import annotations

import argparse

from searchkit.cli import engine
from searchkit.cli.dispatch import Verb

cmd_tune = Verb("searchkit.cli.commands.tune:cmd_tune")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pt = sub.add_parser("tune", help="fit weak match (H11) or pick fusion settings on the tune half; report half held out")
    pt.add_argument("what", choices=["weak-match", "fusion", "adaptive-fusion"])
    pt.add_argument("--runs", nargs="+", metavar="RUN",
                    help="weak-match: run folders of `searchkit eval --out` (or files of `eval --json --queries`), all "
                    "of one config; the model is written into that config: the folders' own, or --config when it "
                    "is the same config but for the weak-match models")
    pt.add_argument("--dataset", action="append", help="fusion, adaptive-fusion: a dataset to tune on (repeatable)")
    pt.add_argument("--cases", help="adaptive-fusion: reuse (if it exists) or write the per-query cases here (JSON)")
    pt.add_argument("--config", help="base SearchConfig (default: the shipped one; weak-match: the runs' own config, "
                    "and a --config other than theirs is refused)")
    pt.add_argument("--features", help="comma-separated feature names of the documents model "
                    "(searchkit.rank.signals.FEATURES)")
    pt.add_argument("--conversation-features", help="comma-separated feature names of the conversation model "
                    "(fitted on the queries it scored: those whose top results were chats and digests)")
    pt.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic model")
    pt.add_argument("--objective", choices=["pointwise", "pairwise"],
                    help="weak-match: how the documents model is fitted (default: the shipped choice, pairwise: "
                    "within-dataset answerable/unanswerable pairs, then Platt scaling)")
    pt.add_argument("--conversation-objective", choices=["pointwise", "pairwise"],
                    help="weak-match: how the conversation model is fitted (default: the shipped choice, pointwise)")
    pt.add_argument("--false-warn-rate", "--target-false-warn", dest="false_warn_rate", type=float, metavar="R",
                    help="weak-match: each threshold is the largest at which at most this share of the tune half's "
                    "answerable queries the model scored is warned, in every dataset (default 0.10: 10%%)")
    pt.add_argument("--check-n", type=int, metavar="N",
                    help="weak-match: hold the rate with a margin, so that a check split of N answerable queries "
                    "shows it with 95%% probability (searchkit.evaluate.tune.operating_rate; 26 for mini's dev split)")
    pt.add_argument("--threshold", type=float, metavar="P",
                    help="weak-match: a fixed threshold instead of the rate (warn when P(answer) < P)")
    pt.add_argument("--allow-small", action="store_true",
                    help="weak-match: fit a model whose tune half holds fewer than 30 answerable or unanswerable "
                    "queries, or whose classes a direction separates (refused without it), with a warning")
    pt.add_argument("--refit", choices=["both", "documents", "conversation"], default="both",
                    help="weak-match: refit only this model (the queries it scored) and keep the other one from "
                    "--config; both: every model that scored some query")
    pt.add_argument("--out", help="write the tuned SearchConfig here")
    pt.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="fusion: paired test of the winner against the runner-up, RRF and the base config (tune half)")
    pt.add_argument("--grid", metavar="JSON_OR_FILE",
                    help="fusion: the settings to try, a JSON list of {dotted config key: value} objects given "
                    "inline or as a file, e.g. '[{\"fusion.method\": \"rrf\", \"fusion.rrf_k\": 30}, {\"fusion.weights\": "
                    "{\"bm25\": 0.7, \"dense\": 0.3}}]' (default: searchkit.evaluate.tune.default_grid, over the retrievers "
                    "the config runs); a key the point's fusion method does not fuse by (fusion.rrf_k under wsum) is warned "
                    "about and never picked on a tie")
    pt.add_argument("--result", metavar="FILE",
                    help="fusion: write every trial, test and warning here (JSON); stdout keeps a short summary")
    pt.add_argument("--json", action="store_true",
                    help="fusion: print the full result (JSON) on stdout instead of the summary")
    pt.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    engine.add_arguments(pt, what="fusion: the indexes are embedded and the grid × datasets runs")
    pt.set_defaults(func=cmd_tune)
