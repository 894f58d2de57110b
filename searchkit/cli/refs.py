"""``searchkit chat-read REF`` and ``searchkit app-row REF``: open a history card's ref from the
command line (issue 30; seed 000), as ``searchkit history`` searches: the same index flags, who is
calling from ``--caller`` / ``--container`` / ``--space``, the tool's own checks and answer. Runs from
``searchkit.cli.commands.refs``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

run = Verb("searchkit.cli.commands.refs:run")


def _common(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workspace", help="workspace folder (indexed in memory, embeddings cached)")
    src.add_argument("--index", help="an index built by `searchkit index --workspace`")
    p.add_argument("--caller", help="user id of the person reading (omit in a shared container)")
    p.add_argument("--container", choices=["personal", "shared"], default="personal")
    p.add_argument("--space", help="slug of the current space (default: the caller's first space)")
    p.add_argument("--in-space", help="the space the card named, when it is not the current one")
    p.add_argument("--lang", choices=["ru", "en", "ja"], help="message language (default: the space's)")
    p.add_argument("--config", help="SearchConfig JSON file or an exported NAME.vN.json")
    p.add_argument("--json", action="store_true")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser("chat-read", help="read a chat by its card's ref, chat:<ses_id> (issue 30)")
    c.add_argument("ref", help="chat:<ses_id>")
    c.add_argument("--find", help="exact, case-sensitive text of a message: the newest messages holding it")
    c.add_argument("--before", type=int, help="only messages before this position (page back)")
    c.add_argument("--limit", type=int, help="messages (default 20), or matching messages with --find (default 5)")
    c.add_argument("--context", type=int, help="with --find: neighbours each side (default 2)")
    _common(c)
    c.set_defaults(func=run, tool="chat_read")
    a = sub.add_parser("app-row", help="open a table row by its card's ref, app:<table>#<id> (issue 30)")
    a.add_argument("ref", help="app:<table>#<id>")
    _common(a)
    a.set_defaults(func=run, tool="app_row")
