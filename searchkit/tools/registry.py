"""``TOOLS``: every tool by name, each with its parameter dataclass, ``run`` and generated schema.

The command line (``searchkit history``, ``searchkit chat-read``, ``searchkit app-row``,
``searchkit tasks search|around|list``,
``searchkit tools list|schema``) and the MCP / HTTP server list and call the tools from here; adding a
tool is a parameter dataclass, a ``run(params, ctx) -> Answer`` and one entry below, declaring what it
needs (``Tool.needs``, names of ``searchkit.tools.base.NEEDS``): the server serves it where it has
all of that (a task store only with ``--tasks-db``) and gives each call only that (issue 42 item 4).
"""
from __future__ import annotations

from typing import Any, Mapping

from searchkit.errors import ParameterError
from searchkit.tools import app_row, chat_read, history_search, task_tools
from searchkit.tools.base import Tool
from searchkit.tools.cards import HistoryAnswer
from searchkit.tools.task_answers import AroundResult, SearchResult, TaskList, Unavailable

HISTORY = frozenset({"caller", "workspace", "history_index"})
"""What the history tools need: who is calling and where, who may see what now, the history index."""

TASKS = frozenset({"caller", "current_task", "workspace", "task_store"})
"""What the task tools need: who is calling, the task they are in (never returned, T1), the space's
members now (T1: ``searchkit.tools.task_members``) and the task store."""

TOOLS: Mapping[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool("history_search", history_search.HistorySearchParams, history_search.run,
             "Search what this space has already recorded: past chats, digests of past turns (what was asked, "
             "done, left and decided, scheduled and automatic runs included), the work log (one card a day of "
             "log.md), the space's text files, its sources, dashboards and reports, and its table rows. Search "
             "before saying you do not know, before asking the person, and whenever they point at the past (\"as "
             "last time\", \"didn't we decide\", \"where is the export script\"): one or two precise queries "
             "(names, task numbers like ATL-707, file names, topics) beat reading log.md. Cards come by relevance, "
             "each with its kind, date, title, ref and space. A weak-match warning means no card stands out (the "
             "space probably has no record of it: say so); a missing-number warning names a number of your query "
             "that no card mentions. A card is a hint, not the answer: open its ref before relying on a detail: "
             "chat:<ses_id> with chat_read (find: an exact id, name or number from the snippet), a digest's "
             "\"Chat: chat:<ses_id>\" line the same way, app:<table>#<id> with app_row, a file path with your "
             "file reader, log.md#YYYY-MM-DD by reading that day of log.md. spaces (\"all\" or slugs) searches "
             "your other spaces too.",
             title="History search", answers=(HistoryAnswer,), needs=HISTORY),
        Tool("chat_read", chat_read.ChatReadParams, chat_read.run,
             "Read a chat that a history_search card points to (ref chat:<ses_id>, or the \"Chat: chat:<ses_id>\" "
             "line of a digest card). Without find it returns the chat's last messages; in a long chat the answer "
             "is often much earlier, so pass find with an exact id, name or number from the snippet "
             "(case-sensitive, message text only): you get the newest messages holding it, each with its "
             "neighbours. Every answer names the position to pass as before to page further back, and says "
             "where a message was cut and by how much. Answer from what you read here, not from the card; pass "
             "in_space when the card named another space.",
             title="Read a chat", answers=(chat_read.ChatAnswer,), needs=HISTORY),
        Tool("app_row", app_row.AppRowParams, app_row.run,
             "Open one table row that a history_search card points to (ref app:<table>#<id>): every column's "
             "value as the table has it now, then the table's name and columns; it says when the row changed or "
             "was deleted since it was indexed. Take figures from here, not from the card's snippet. Pass "
             "in_space when the card named another space.",
             title="Open a table row", answers=(app_row.AppRowAnswer,), needs=HISTORY),
        Tool("task_search", task_tools.TaskSearchParams, task_tools.run_search,
             "Search the conversations of the other tasks of this space (requests, interjections, results, asks, "
             "handoffs, progress notes; open or closed tasks; never the current one) by keywords, or read around "
             "one comment: give exactly one of query and around_ref. Hits are redacted excerpts with refs "
             "task:<id> and comment:<id>; to read a hit's neighbouring comments as written, call again with "
             "around_ref \"comment:<id>\" (or use task_around). match_mode all needs every keyword; kind, "
             "author and task_id narrow the search.",
             title="Task search", answers=(SearchResult, AroundResult, Unavailable), needs=TASKS),
        Tool("task_around", task_tools.TaskAroundParams, task_tools.run_around,
             "Read one comment of another task of this space (around_ref \"comment:<id>\", as a task_search hit "
             "shows it) with its neighbouring comments, as written and in time order.",
             title="Read around a task comment", answers=(AroundResult, Unavailable), needs=TASKS),
        Tool("task_list", task_tools.TaskListParams, task_tools.run_list,
             "List the other tasks of this space, most recently updated first: id, state, title, piece and last "
             "update; state open or closed filters them. Use it to find a task to search within (task_search "
             "with query and task_id).",
             title="List tasks", answers=(TaskList, Unavailable), needs=TASKS),
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


def output_schemas() -> dict[str, Any]:
    """Each tool's name -> the JSON Schema of its structured result (issue 41 item 6)."""
    return {name: t.output_schema() for name, t in TOOLS.items()}
