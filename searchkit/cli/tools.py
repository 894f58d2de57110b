"""``searchkit tools list|schema [NAME]``: the tools the MCP / HTTP server serves, from the one
registry (``searchkit.tools.registry.TOOLS``), with the JSON Schema of each tool's parameters as
generated from its parameter dataclass."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("tools", help="list the tools and print their parameters' JSON Schemas")
    actions = p.add_subparsers(dest="tools_command", required=True, metavar="{list,schema}")
    actions.add_parser("list", help="each tool's name and description")
    sc = actions.add_parser("schema", help="the JSON Schema of a tool's parameters (all tools, by name, without NAME)")
    sc.add_argument("name", nargs="?", metavar="NAME", help="a tool name (see `searchkit tools list`)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the listing or the schema(s); an unknown tool name is one line naming the valid ones."""
    from searchkit.tools.registry import TOOLS, schemas, tool

    if args.tools_command == "list":
        for name, t in TOOLS.items():
            print(f"{name}: {t.description}")
        return 0
    body = tool(args.name).schema() if args.name is not None else schemas()
    sys.stdout.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    return 0
