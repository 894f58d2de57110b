"""The refresh child of ``searchkit serve`` (issue 30; SPEC H3): one ``index --update`` of the
server's private index store from the workspace, at a lower CPU priority, then exit.

``python -m searchkit.serve.refresh_child --index STORE --workspace DIR --config FILE [--nice N]``
prints the update's report line on success; on failure, one line on stderr (never data) and exit
status 1, the store's current version untouched.
"""
from __future__ import annotations

import argparse
import os
import sys

from searchkit.config_file import load_config
from searchkit.tools.history import HistoryIndex


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="searchkit.serve.refresh_child")
    p.add_argument("--index", required=True)
    p.add_argument("--workspace", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--nice", type=int, default=0)
    args = p.parse_args(argv)
    if args.nice > 0:
        os.nice(args.nice)
    try:
        config = load_config(args.config)
        index = HistoryIndex.load(args.index, config)
        report = index.update(args.workspace)
        index.searcher.embed_rerank_sentences()  # as `searchkit index --update`: only new sentences are embedded
        index.save(args.index)
    except Exception as exc:  # one line for the server's log; the store keeps its current version
        print(" ".join(f"{type(exc).__name__}: {exc}".split())[:300], file=sys.stderr)
        return 1
    print(report.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
