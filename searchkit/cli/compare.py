"""``searchkit compare``: run folders side by side with paired tests (E4)."""
from __future__ import annotations

import argparse
from typing import Any

from searchkit import strict_json


def _names(values: list[str] | None) -> list[str] | None:
    """A repeatable option that also takes comma lists: ``--metric nDCG@10,RR@10 --metric AUROC``."""
    if values is None:
        return None
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


def add_parser(sub: Any) -> None:
    from searchkit.evaluate.compare import BY, CORRECTIONS, DEFAULT_CORRECTION

    pm = sub.add_parser("compare", help="compare run folders (eval --out) against the first, with paired tests")
    pm.add_argument("runs", nargs="+", metavar="RUN", help="run folders; the first is the baseline")
    pm.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="paired test over queries: Fisher's randomization test (default) or Student's t")
    pm.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pm.add_argument("--seed", type=int, default=42, help="seed of the randomization test and the bootstraps")
    pm.add_argument("--half", choices=["tune", "report"], help="compare only this half of the queries "
                    "(half_of 'dataset:query_id'; tuned settings are quoted on the report half)")
    pm.add_argument("--metric", action="append", metavar="NAME",
                    help="a metric to compare (repeatable or a comma list: nDCG@10,RR@10,AUROC; default all)")
    pm.add_argument("--by", action="append", metavar="|".join([*BY, "none"]),
                    help="breakdowns to show (repeatable or a comma list; none: only the 'all' rows; default all)")
    pm.add_argument("--correction", choices=list(CORRECTIONS), default=DEFAULT_CORRECTION,
                    help="adjust p over every test of the comparison (groups x metrics x runs): bh = "
                         "Benjamini-Hochberg (default), holm, none")
    pm.add_argument("--only-significant", action="store_true",
                    help="show only the rows where a run differs significantly (after the correction)")
    pm.add_argument("--json", action="store_true", help="print one JSON object (strict JSON: null, never NaN)")
    pm.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare run folders against the first: per metric and breakdown, with paired tests."""
    from searchkit.evaluate.compare import compare_runs, only_significant, render
    from searchkit.evaluate.runs import load_run

    runs = [load_run(p) for p in args.runs]
    cmp = compare_runs(runs, test=args.test, alpha=args.alpha, seed=args.seed, half=args.half,
                       metrics=_names(args.metric), by=_names(args.by), correction=args.correction)
    if args.only_significant:
        cmp = only_significant(cmp)
    if args.json:
        print(strict_json.dumps(cmp.to_dict()))
    else:
        print(render(cmp), end="")
    return 0
