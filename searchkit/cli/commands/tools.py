"""``searchkit tools list|schema [NAME]``: the tools the MCP / HTTP server serves, from the one
registry (``searchkit.tools.registry.TOOLS``), with the JSON Schema of each tool's parameters as
generated from its parameter dataclass; ``list`` names what each tool needs (``Tool.needs``: a tool that
needs ``task_store`` is served only with ``serve --tasks-db``)."""
from __future__ import annotations

import argparse
import json
import sys

from searchkit.tools.registry import TOOLS, output_schemas, schemas, tool


def run(args: argparse.Namespace) -> int:
    """Print the listing or the schema(s); an unknown tool name is one line naming the valid ones."""
    if args.tools_command == "list":
        for name, t in TOOLS.items():
            print(f"{name}: {t.description} (needs: {', '.join(sorted(t.needs)) or 'nothing'})")
        return 0
    if args.output:
        body = tool(args.name).output_schema() if args.name is not None else output_schemas()
    else:
        body = tool(args.name).schema() if args.name is not None else schemas()
    sys.stdout.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    return 0
