"""``searchkit snapshot SLUG``: the space snapshot (issue 41 item 7; :mod:`searchkit.tools.snapshot`)."""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

from searchkit.errors import InputError
from searchkit.ingest.workspace import load_workspace
from searchkit.tools import snapshot
from searchkit.tools.access import WorkspaceAccess
from searchkit.tools.history import HistoryIndex
from searchkit.tools.terminal import json_text

MAX_DAYS = 366


def run(args: argparse.Namespace) -> int:
    """Build and print the snapshot; a space the reader may not read is one line (exit 2), the same
    whatever the reason."""
    as_of = _as_of(args.as_of)
    if not 1 <= args.days <= MAX_DAYS:
        raise InputError(f"--days: from 1 to {MAX_DAYS}, got {args.days}", usage=True)
    if args.container == "personal" and not args.caller:
        raise InputError("--caller: required in a personal container (the user id of the person reading)", usage=True)
    if args.container == "shared" and args.caller:
        raise InputError("--caller: a shared workspace container has no caller", usage=True)
    space = args.space if args.container == "shared" else None
    kw = dict(caller=args.caller, container=args.container, space=space, as_of=as_of, days=args.days, lang=args.lang)
    if args.index:
        snap = snapshot.build(HistoryIndex.load(args.index), args.slug, **kw)
    else:
        load = load_workspace(args.workspace)  # the records as ingest reads them, redacted; nothing embedded
        snap = snapshot.build_from(load.records, WorkspaceAccess(args.workspace), args.slug, **kw)
    if snap is None:
        raise InputError(snapshot.not_found_text(args.slug, args.lang or "en"), usage=True)
    if args.json:
        print(json_text(json.dumps(snap.to_dict(), ensure_ascii=False, indent=2)))
    else:
        sys.stdout.write(snap.render(args.lang))
    return 0


def _as_of(text: str | None) -> _dt.date | None:
    if text is None:
        return None
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"--as-of: expected a date YYYY-MM-DD, got {text[:40]!r}", usage=True) from None
