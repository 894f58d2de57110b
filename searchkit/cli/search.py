"""``searchkit search``: search an index folder, each retriever's score and rank shown.

A dataset index is searched as a whole. A history index (built with ``index --workspace``) holds
people's chats and spaces, so it is searched only as the history tool would search it for one
caller (H14, H15; issue 27 item 3): ``--caller`` (or ``--container shared``), ``--space`` and
``--spaces`` as for ``searchkit history``, the scope read from the workspace at query time, and
the header line saying where it searched and what it skipped and why. Runs from
``searchkit.cli.commands.search``.
"""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

cmd_search = Verb("searchkit.cli.commands.search:cmd_search")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ps = sub.add_parser("search", help="search an index folder")
    ps.add_argument("--index", required=True)
    ps.add_argument("query")
    ps.add_argument("--k", type=int, default=10)
    ps.add_argument("--kinds", help="comma-separated kinds")
    ps.add_argument("--since")
    ps.add_argument("--until")
    ps.add_argument("--config", help="query-time config (index part must match)")
    ps.add_argument("--json", action="store_true")
    who = ps.add_argument_group("a history index (searched as `searchkit history` would, for one caller)")
    who.add_argument("--caller", help="user id of the person searching (required in a personal container)")
    who.add_argument("--container", choices=["personal", "shared"], default="personal")
    who.add_argument("--space", help="slug of the space the search runs in (default: the caller's first space)")
    who.add_argument("--spaces", help='"all" or comma-separated slugs (searched besides the current space)')
    ps.set_defaults(func=cmd_search)
