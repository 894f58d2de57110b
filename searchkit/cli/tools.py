"""``searchkit tools list|schema [NAME]``: the tools the MCP / HTTP server serves, from the one
registry (``searchkit.tools.registry.TOOLS``), with the JSON Schema of each tool's parameters as
generated from its parameter dataclass, and what each needs (``Tool.needs``). Runs from ``searchkit.cli.commands.tools``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

run = Verb("searchkit.cli.commands.tools:run")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tools", help="list the tools and print their parameters' JSON Schemas")
    actions = p.add_subparsers(dest="tools_command", required=True, metavar="{list,schema}")
    actions.add_parser("list", help="each tool's name, description and what it needs (task_store: served with --tasks-db)")
    sc = actions.add_parser("schema", help="the JSON Schema of a tool's parameters (all tools, by name, without NAME)")
    sc.add_argument("name", nargs="?", metavar="NAME", help="a tool name (see `searchkit tools list`)")
    sc.add_argument("--output", action="store_true", help="the JSON Schema of the tool's answer instead")
    p.set_defaults(func=run)
