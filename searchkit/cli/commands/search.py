"""``searchkit search``: search an index folder, each retriever's score and rank shown.

A dataset index is searched as a whole. A history index (built with ``index --workspace``) holds
people's chats and spaces, so it is searched only as the history tool would search it for one
caller (H14, H15; issue 27 item 3): ``--caller`` (or ``--container shared``), ``--space`` and
``--spaces`` as for ``searchkit history``, the scope read from the workspace at query time, and
the header line saying where it searched and what it skipped and why.
"""
from __future__ import annotations

import argparse
import json
from typing import Any, Iterable

from searchkit.cli.common import date_arg, kinds_arg, load_config
from searchkit.errors import InputError, ParameterError
from searchkit.records import Result
from searchkit.searcher import Filters
from searchkit.strict_json import safe_data
from searchkit.tools.history import HistoryIndex, open_index
from searchkit.tools.terminal import one_line  # no control character reaches the terminal

_HISTORY_FLAGS = ("caller", "space", "spaces")


def cmd_search(args: argparse.Namespace) -> int:
    kinds = kinds_arg(args.kinds)
    since, until = date_arg("--since", args.since), date_arg("--until", args.until)
    if since and until and since >= until:
        raise InputError(f"--until must be later than --since ({since}), got {until} (until is exclusive)", usage=True)
    if not 1 <= args.k <= 1000:
        raise InputError(f"--k must be from 1 to 1000, got {args.k}", usage=True)
    config = load_config(args.config) if args.config else None
    index = open_index(args.index, config)
    if isinstance(index, HistoryIndex):
        return _search_history(index, args, kinds, since, until)
    given = [f"--{flag}" for flag in _HISTORY_FLAGS if getattr(args, flag) is not None]
    if given or args.container != "personal":
        flag = given[0] if given else "--container"
        raise InputError(f"{flag}: {args.index} is a dataset index (no callers or spaces); {flag} applies to a "
                       "history index (built with `searchkit index --workspace`)", usage=True)
    res = index.search(args.query, k=args.k, filters=Filters(kinds=kinds, since=since, until=until))
    _print(res, (), args.json, res.to_dict())
    return 0


def _search_history(index: HistoryIndex, args: argparse.Namespace, kinds: tuple[str, ...] | None,
                    since: str | None, until: str | None) -> int:
    """The searcher's ranking within what ``--caller`` may see of the searched spaces now; who is
    calling and where are checked by the history tool (``HistoryIndex.raw_search``), whose
    errors name the flag."""
    spaces = None
    if args.spaces is not None:
        spaces = "all" if args.spaces == "all" else [s.strip() for s in args.spaces.split(",") if s.strip()]
    try:
        ans = index.raw_search(
            args.query, k=args.k, kinds=list(kinds) if kinds else None, since=since, until=until, spaces=spaces,
            caller=args.caller, container=args.container, space=args.space,
        )
    except ParameterError as exc:
        hint = _WHO_HINT.format(index=args.index) if exc.param == "caller" else ""
        raise InputError(f"--{exc.param}: {exc.message}{hint}", usage=True) from None
    _print(ans.result, ans.header, args.json, ans.to_dict())
    return 0


_WHO_HINT = (" ({index} is a history index, searched only as `searchkit history` would search it for one caller; "
             "or give --container shared --space SLUG)")


def _print(res: Result, header: Iterable[str], as_json: bool, body: dict[str, Any]) -> None:
    if as_json:
        print(json.dumps(safe_data(body), ensure_ascii=False, indent=2))
        return
    for line in header:
        print(one_line(line))
    for w in res.warnings:
        print(f"! {one_line(w.message)}")
    for h in res.hits:
        parts = " ".join(f"{n}={h.scores[n]:.4f}(#{h.ranks[n]})" for n in sorted(h.scores))
        ref = one_line(h.record.ref or h.record.id)
        print(f"{h.rank:>3}. {h.score:.4f}  {ref}  {one_line(h.record.title)[:60]}  [{parts}]")
