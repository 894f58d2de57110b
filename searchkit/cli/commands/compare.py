"""``searchkit compare``: run folders side by side with paired tests (E4)."""
from __future__ import annotations

import argparse

from searchkit import strict_json
from searchkit.evaluate.any_run import load_any_runs
from searchkit.evaluate.compare import compare_runs, only_significant, render
from searchkit.evaluate.measures import split_names


def _names(values: list[str] | None) -> list[str] | None:
    """A repeatable option that also takes comma lists: ``--metric nDCG@10,RR@10 --metric AUROC`` (a
    comma inside parentheses belongs to the measure: ``P(rel=2,judged_only=True)@10``)."""
    if values is None:
        return None
    return split_names(values)


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare runs (run folders, TREC run files) against the first: per metric (and breakdown, with ``--by``), with paired
    tests; the correction's family is what was asked for (the ``all`` rows unless ``--by``)."""
    runs = load_any_runs(args.runs, dataset=args.dataset, split=args.split, labels=args.label)
    cmp = compare_runs(runs, test=args.test, alpha=args.alpha, seed=args.seed, half=args.half,
                       metrics=_names(args.metric), by=_names(args.by) or ["none"], correction=args.correction)
    if args.only_significant:
        cmp = only_significant(cmp)
    if args.json:
        print(strict_json.dumps(cmp.to_dict()))
    else:
        print(render(cmp), end="")
    return 0
