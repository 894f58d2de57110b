"""``searchkit datasets validate DIR`` (issue 40 item 2)."""
from __future__ import annotations

import argparse
import sys

from searchkit import strict_json
from searchkit.evaluate.datasets import check_dataset, resolve_dataset
from searchkit.tools.terminal import json_text, one_line


def cmd_validate(args: argparse.Namespace) -> int:
    """Print every problem of the dataset folder (exit 1), or a one-line summary (exit 0). A folder
    that cannot be read raises ``DataError``: one line on stderr, exit 2."""
    check = check_dataset(resolve_dataset(args.dir))
    if args.json:
        print(json_text(strict_json.dumps(check.to_dict())))
        return 0 if check.ok else 1
    for problem in check.problems:
        print(one_line(problem))
    print(one_line(check.summary()))
    for name, split in check.splits.items():
        for note in split.get("notes", ()):
            print(f"note: {one_line(name)}: {one_line(note)}", file=sys.stderr)
    return 0 if check.ok else 1
