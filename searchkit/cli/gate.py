"""``searchkit gate``: the regression gate (E5). Runs from ``searchkit.cli.commands.gate``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

cmd_gate = Verb("searchkit.cli.commands.gate:cmd_gate")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pg = sub.add_parser("gate", help="regression gate (E5): exit 1 when a gated metric drops below its baseline "
                       "by more than its margin, or significantly by more than its tolerance")
    pg.add_argument("--baseline", action="append", required=True, metavar="FILE",
                    help="a baseline file (evals/baselines/NAME.json); repeatable")
    pg.add_argument("--run", metavar="RUN", help="read this run instead of running the eval: a run folder (eval --out) "
                    "or another system's TREC run file (qid Q0 docid rank score tag), scored on the baseline's split; "
                    "a TREC run has no weak-match probability, so its no-answer figures are 'not measured'")
    pg.add_argument("--config", help="gate this config instead of the baseline's (with --update: the config to record)")
    pg.add_argument("--update", action="store_true", help="rewrite the baseline(s) on purpose (records commit and date)")
    pg.add_argument("--dataset", help="with --update of a new baseline: the dataset it measures")
    pg.add_argument("--split", metavar="SPLIT", help="with --update of a new baseline: the split, any the dataset has "
                    "(default: dev, else the dataset's one split)")
    pg.add_argument("--as-tool", action="store_true", help="with --update: measure through the history tool's path "
                    "(eval --as-tool) and record it; a check measures a baseline on the path it records")
    pg.add_argument("--skip-missing", action="store_true",
                    help="skip a baseline whose dataset is not on this machine (../shared/data): listed in the JSON's "
                         "'skipped' (--json), else one line each on stderr; when every baseline is skipped the gate "
                         "fails (exit 2): it gated nothing")
    pg.add_argument("--margin", action="append", metavar="METRIC=DROP", default=[],
                    help="non-inferiority margin of a gated metric: a drop larger than DROP fails even when not "
                         "significant (repeatable; default nDCG@10, RR@10, R@100 0.02, AUROC 0.03; with --update: "
                         "recorded in the baseline)")
    pg.add_argument("--json", action="store_true", help="print one JSON object (strict JSON: null, never NaN)")
    pg.add_argument("--quiet", action="store_true", help="no progress bars")
    pg.set_defaults(func=cmd_gate)
