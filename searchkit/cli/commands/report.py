"""``searchkit report``: run folders as one self-contained HTML page (E4)."""
from __future__ import annotations

import argparse

from searchkit.errors import InputError
from searchkit.evaluate.report import write_report


def cmd_report(args: argparse.Namespace) -> int:
    """Write the report of the runs (run folders, TREC run files) to ``--out``."""
    if args.worst < 0 or args.cards < 1:
        raise InputError("--worst must be 0 or more and --cards 1 or more", usage=True)
    path = write_report(args.runs, args.out, title=args.title, worst=args.worst, cards=args.cards, test=args.test,
                        alpha=args.alpha, seed=args.seed, text=not args.no_text, dataset=args.dataset, split=args.split,
                        labels=args.label)
    print(f"wrote {path} ({len(args.runs)} run{'s' if len(args.runs) != 1 else ''})")
    return 0
