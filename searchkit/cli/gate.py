"""``searchkit gate``: the regression gate (E5). Runs from ``searchkit.cli.commands.gate``."""
from __future__ import annotations

from typing import Any

from searchkit.cli.dispatch import Verb

cmd_gate = Verb("searchkit.cli.commands.gate:cmd_gate")


def add_parser(sub: Any) -> None:
    pg = sub.add_parser("gate", help="regression gate (E5): exit 1 when a gated metric drops below its baseline "
                       "by more than its margin, or significantly by more than its tolerance")
    pg.add_argument("--baseline", action="append", required=True, metavar="FILE",
                    help="a baseline file (evals/baselines/NAME.json); repeatable")
    pg.add_argument("--run", help="read this run folder (eval --out) instead of running the eval")
    pg.add_argument("--config", help="gate this config instead of the baseline's (with --update: the config to record)")
    pg.add_argument("--update", action="store_true", help="rewrite the baseline(s) on purpose (records commit and date)")
    pg.add_argument("--dataset", help="with --update of a new baseline: the dataset it measures")
    pg.add_argument("--split", choices=["dev", "test"], help="with --update of a new baseline: the split")
    pg.add_argument("--skip-missing", action="store_true",
                    help="skip, with one line, a baseline whose dataset is not on this machine (../shared/data); "
                         "when every baseline is skipped the gate fails (exit 2): it gated nothing")
    pg.add_argument("--margin", action="append", metavar="METRIC=DROP", default=[],
                    help="non-inferiority margin of a gated metric: a drop larger than DROP fails even when not "
                         "significant (repeatable; default nDCG@10, RR@10, R@100 0.02, AUROC 0.03; with --update: "
                         "recorded in the baseline)")
    pg.add_argument("--json", action="store_true", help="print one JSON object (strict JSON: null, never NaN)")
    pg.add_argument("--quiet", action="store_true", help="no progress bars")
    pg.set_defaults(func=cmd_gate)
