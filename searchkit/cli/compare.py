"""``searchkit compare``: run folders side by side with paired tests (E4)."""
from __future__ import annotations

import argparse
import json
from typing import Any



def add_parser(sub: Any) -> None:
    pm = sub.add_parser("compare", help="compare run folders (eval --out) against the first, with paired tests")
    pm.add_argument("runs", nargs="+", metavar="RUN", help="run folders; the first is the baseline")
    pm.add_argument("--test", choices=["fisher", "student"], default="fisher",
                    help="paired test over queries: Fisher's randomization test (default) or Student's t")
    pm.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pm.add_argument("--seed", type=int, default=42, help="seed of the randomization test and the bootstrap")
    pm.add_argument("--half", choices=["tune", "report"], help="compare only this half of the queries "
                    "(half_of 'dataset:query_id'; tuned settings are quoted on the report half)")
    pm.add_argument("--json", action="store_true", help="print one JSON object")
    pm.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare run folders against the first: per metric and breakdown, with paired tests."""
    from searchkit.evaluate.compare import compare_runs, render
    from searchkit.evaluate.runs import load_run

    runs = [load_run(p) for p in args.runs]
    cmp = compare_runs(runs, test=args.test, alpha=args.alpha, seed=args.seed, half=args.half)
    if args.json:
        print(json.dumps(cmp.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(render(cmp), end="")
    return 0

