"""``searchkit runs ls [DIR]``: the run folders under a folder, one line each (issue 31 item 7)."""
from __future__ import annotations

import argparse
import math
import sys

from searchkit import strict_json
from searchkit.evaluate.runs import HEADLINE, find_runs
from searchkit.tools.terminal import json_text, one_line


def _fig(v: float | None) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def cmd_ls(args: argparse.Namespace) -> int:
    """List the run folders under ``args.dir``, sorted by the time each was written."""
    runs, problems = find_runs(args.dir)
    if args.json:
        print(json_text(strict_json.dumps({"dir": str(args.dir), "runs": [r.to_dict() for r in runs],
                                           "unreadable": problems})))
        return 0
    if not runs:
        print(f"no run folders under {one_line(args.dir)} (write one with `searchkit eval --out DIR`)")
    else:
        rows = [(r.time.replace("T", " ")[:19], one_line(r.dataset)[:24], one_line(r.split)[:8],
                 one_line(r.config_fingerprint)[:16], one_line(r.measured)[:8],
                 "" if r.queries is None else str(r.queries), *(_fig(r.headline.get(h)) for h in HEADLINE),
                 one_line(r.path)) for r in runs]
        head = ("date (UTC)", "dataset", "split", "config", "path", "queries", *HEADLINE, "run folder")
        widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head) - 1)]
        for row in [head, *rows]:
            cells = [c.rjust(w) if 5 <= i < 5 + 1 + len(HEADLINE) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
            print("  ".join(cells) + "  " + row[-1])
    for line in problems:
        print(f"searchkit runs ls: skipped {one_line(line)}", file=sys.stderr)
    return 0
