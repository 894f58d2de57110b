"""``TOOLS``: every tool by name, each with its parameter dataclass, ``run`` and generated schema.

The command line (``searchkit history``, ``searchkit chat-read``, ``searchkit app-row``,
``searchkit tasks search|around|list``,
``searchkit tools schema``) and the MCP / HTTP server list and call the tools from here; adding a
tool is a parameter dataclass, a ``run(params, ctx) -> Answer`` and one entry below.
"""
from __future__ import annotations

from typing import Any, Mapping

from searchkit.errors import ParameterError
from searchkit.tools import app_row, chat_read, history_search, task_tools
from searchkit.tools.base import Tool

TOOLS: Mapping[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool("history_search", history_search.HistorySearchParams, history_search.run,
             "Search the history of the current space and, with spaces, other spaces of the caller "
             "(SPEC H, seed 000)."),
        Tool("chat_read", chat_read.ChatReadParams, chat_read.run,
             "Read a chat a card points to (chat:<ses_id>): its last messages, or with find the newest messages "
             "holding that exact text, each with neighbours; page back with before (seed 000)."),
        Tool("app_row", app_row.AppRowParams, app_row.run,
             "Open one row of a space's data table by its card's ref (app:<table>#<id>): every column's value as "
             "indexed (seed 000)."),
        Tool("task_search", task_tools.TaskSearchParams, task_tools.run_search,
             "Search the other tasks' comments in the current space, or read around one (SPEC T, seed 003)."),
        Tool("task_around", task_tools.TaskAroundParams, task_tools.run_around,
             "Read a comment of another task of the current space and its neighbours (SPEC T6)."),
        Tool("task_list", task_tools.TaskListParams, task_tools.run_list,
             "List the other tasks of the current space, newest first (SPEC T7)."),
    )
}
"""The tools by name, in the order a listing shows them."""


def tool(name: str) -> Tool:
    """The tool called ``name``; an unknown name is a ``ParameterError`` listing the valid ones."""
    try:
        return TOOLS[name]
    except (KeyError, TypeError):
        shown = repr(name) if isinstance(name, str) and len(name) <= 40 else "that name"
        raise ParameterError("tool", f"no tool {shown}; valid tools: {', '.join(TOOLS)}") from None


def schemas() -> dict[str, Any]:
    """Each tool's name -> the JSON Schema of its parameters."""
    return {name: t.schema() for name, t in TOOLS.items()}
