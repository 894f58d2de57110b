"""The LoCoMo sets measured through the history tool, their sessions as a workspace holds them
(issue 28 item 4: how many cards one session may fill).

``searchkit eval --as-tool`` needs every record in a space, and the public LoCoMo sets have none;
nor do their records say which chat a digest or a turn belongs to, so the tool's session rule
would never see a session there. This script gives every record one space (``locomo``) and, with
``--sessions`` (the default), the session its id names, the way a workspace's records carry it:
a session document ``conv-26:S1`` is the chat ``chat:conv-26:S1`` (``fields.ses_id``), its digest
``conv-26:S1:digest`` names that chat (``fields.chat``, H5), and a turn ``conv-26:D1:3`` is part of
the chat ``conv-26:D1``. Each query then goes through ``HistoryIndex.search`` (``evaluate_dataset``
with ``as_tool``), and a run folder is written for ``searchkit compare --half report``::

    nice .venv/bin/python evals/tool_sessions.py locomo-sessions --out runs/tool-sessions/after
    .venv/bin/searchkit compare runs/tool-sessions/before runs/tool-sessions/after --half report

The relevance judgements, queries and texts are the dataset's own; only ``space``, ``ref`` and
``fields`` change.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

SPACE = "locomo"


def _session_of(record_id: str, kind: str) -> str | None:
    """The chat a LoCoMo record belongs to: ``conv-26:S1`` for ``conv-26:S1`` and its digest
    ``conv-26:S1:digest``, ``conv-26:D1`` for the turn ``conv-26:D1:3``; None when the id has
    no session part."""
    parts = record_id.split(":")
    if len(parts) < 2:
        return None
    if kind == "digest":
        return ":".join(parts[:2])
    if len(parts) == 3 and parts[1].startswith("D"):
        return ":".join(parts[:2])
    return record_id if kind == "chat" else None


def as_workspace(dataset, *, sessions: bool):
    """``dataset`` with every record in ``SPACE`` and, with ``sessions``, its session."""
    records = []
    for r in dataset.records:
        change: dict = {"space": SPACE}
        ses = _session_of(r.id, r.kind) if sessions else None
        if ses is not None and r.kind == "chat":
            change.update(ref=f"chat:{ses}", fields={**r.fields, "ses_id": ses})
        elif ses is not None and r.kind == "digest":
            change.update(ref=f"digest:{r.id}", fields={**r.fields, "chat": ses})
        records.append(dataclasses.replace(r, **change))
    return dataclasses.replace(dataset, records=tuple(records))


def main(argv: list[str] | None = None) -> int:
    from searchkit.config import SearchConfig
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.run import evaluate_dataset
    from searchkit.evaluate.runs import write_run
    from searchkit.evaluate.tune import half_of

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="locomo-sessions or locomo-turns (or a path)")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--config", help="SearchConfig JSON file (default: the shipped defaults)")
    ap.add_argument("--no-sessions", action="store_true", help="one space only, no session structure")
    ap.add_argument("--out", help="write a run folder here (for `searchkit compare --half report`)")
    args = ap.parse_args(argv)
    config = SearchConfig.load(args.config) if args.config else SearchConfig()
    ds = as_workspace(load_dataset(resolve_dataset(args.dataset), split=args.split), sessions=not args.no_sessions)
    report = evaluate_dataset(ds, config, as_tool=True)
    if args.out:
        write_run(args.out, report, ds, config)
    per_q = report.per_query
    out = {"dataset": ds.name, "split": args.split, "sessions": not args.no_sessions}
    for half in ("tune", "report", None):
        vals = [m["nDCG@10"] for q, m in per_q.items()
                if "nDCG@10" in m and (half is None or half_of(f"{ds.name}:{q}") == half)]
        out[half or "all"] = {"nDCG@10": round(sum(vals) / len(vals), 4) if vals else None, "queries": len(vals)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
