"""The refresh child of ``searchkit serve`` (issue 30; SPEC H3): one ``index --update`` of the
server's private index store from the workspace, at a lower CPU priority, then exit.

``python -m searchkit.serve.refresh_child --index STORE --workspace DIR --config FILE [--nice N]``
prints the update's report line on success; when the update changed nothing (the same records and
spaces: issue 41 item 3) it saves nothing, prints ``unchanged: ...`` and exits ``UNCHANGED_EXIT``;
on failure, one line on stderr (never data) and exit status 1, the store's current version untouched.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Mapping, Sequence, Set

from searchkit.analyze import detect_language
from searchkit.config_file import load_config
from searchkit.searcher import Searcher
from searchkit.tools.history import HistoryIndex
from searchkit.tools.history_files import space_dicts

UNCHANGED_EXIT = 3
"""The exit status of a refresh that found nothing changed (and saved nothing)."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="searchkit.serve.refresh_child")
    p.add_argument("--index", required=True)
    p.add_argument("--workspace", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--nice", type=int, default=0)
    args = p.parse_args(argv)
    if args.nice > 0:
        lower_priority(args.nice)
    try:
        config = load_config(args.config)
        index = HistoryIndex.load(args.index, config)
        before = {p.text for p in index.searcher.passages}
        records, spaces = list(index.searcher.records), space_dicts(index.spaces)
        report = index.update(args.workspace)
        if same_records(records, index.searcher.records) and space_dicts(index.spaces) == spaces:
            print("unchanged: " + report.line())
            return UNCHANGED_EXIT
        # as `searchkit index --update`, but only the new passages are read for sentences to embed: the
        # others' were embedded when they came in (a query embeds a missing one when it first reaches it)
        index.searcher.embed_rerank_sentences(new_rerank_passages(index.searcher, before))
        index.save(args.index)
    except Exception as exc:  # one line for the server's log; the store keeps its current version
        print(" ".join(f"{type(exc).__name__}: {exc}".split())[:300], file=sys.stderr)
        return 1
    print(report.line())
    return 0


def lower_priority(nice: int) -> int:
    """Every thread of this process (the imports started some: OpenBLAS's) at CPU priority ``nice``
    and, where the OS has it (Linux), in ``SCHED_IDLE``: a core runs the refresh only when no
    thread of the server wants it, so the refresh takes what queries leave. Threads started later
    inherit both. Returns the number of threads lowered (a thread gone meanwhile is skipped)."""
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:  # not Linux: this thread (which the others were started from, on such systems)
        tids = [0]
    lowered = 0
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
            if hasattr(os, "SCHED_IDLE"):
                os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            continue
        lowered += 1
    return lowered


def same_content(old: HistoryIndex, new: HistoryIndex) -> bool:
    """Whether two versions of a history index hold the same records (every field, in the same
    order) and the same spaces: a refresh that found this changed nothing (issue 41 item 3)."""
    return same_records(old.searcher.records, new.searcher.records) and space_dicts(old.spaces) == space_dicts(new.spaces)


def same_records(old: Sequence[Any], new: Sequence[Any]) -> bool:
    """Whether two lists of records are the same, field by field; a list and a tuple of the same
    items are the same (a saved index gives back as lists what a build holds as tuples)."""
    if len(old) != len(new):
        return False
    return all(a == b or _canon(a) == _canon(b) for a, b in zip(old, new))


_FIELDS = ("id", "kind", "space", "date", "title", "ref", "text", "owner", "visibility", "fields")


def _canon(value: object, depth: int = 0) -> Any:
    if depth == 0:
        return tuple(_canon(getattr(value, f, None), 1) for f in _FIELDS)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _canon(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("[", *(_canon(v, depth + 1) for v in value))
    return value


def new_rerank_passages(searcher: Searcher, before: Set[str]) -> list[int]:
    """The rows of ``searcher``'s passages whose text was not among ``before`` and whose language
    the rerank stage runs for (``rerank.languages``; every passage when empty): the passages
    ``Searcher.embed_rerank_sentences()`` would read that no earlier version had."""
    langs = searcher.config.rerank.languages
    return [i for i, p in enumerate(searcher.passages)
            if p.text not in before and (not langs or detect_language(p.text) in langs)]


if __name__ == "__main__":
    sys.exit(main())
