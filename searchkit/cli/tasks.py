"""``searchkit tasks search|around|list|import``: the task-search tools from the command line.

``add_parser(subparsers)`` adds the ``tasks`` command to an argparse sub-parser collection;
``run(args)`` executes a parsed command and returns the exit status (0 done, including the plain
"not available here" message of T8, which ``import`` prints too where SQLite has no FTS5; 2 a bad
parameter or store). ``--current-task`` is required by ``search``, ``around`` and ``list`` (who is
calling comes from the session, as ``--caller`` for history). Nothing the data holds reaches the
terminal as a control character (``searchkit.tools.terminal``).
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any

from searchkit.ingest import tasks as store
from searchkit.tools import tasks as tools
from searchkit.tools.base import ToolContext
from searchkit.tools.messages import message
from searchkit.tools.terminal import json_text, one_line
from searchkit.tools.task_engine import TaskEngine
from searchkit.cli.common import load_config


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="task store (SQLite file)")
    p.add_argument("--lang", default="ja", choices=["ja", "en", "ru"], help="language of the answer (default ja)")
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")


def _scope(p: argparse.ArgumentParser) -> None:
    p.add_argument("--space", required=True, help="space slug searched (the caller's space)")
    p.add_argument("--current-task", type=int, required=True,
                   help="id of the current task (required; never returned: the tool reads the other tasks)")
    p.add_argument("--owner", default="cli", help="signed-in owner of the run (default: cli)")
    p.add_argument("--no-auth", action="store_true", help="run as a no-auth context (the tool is unavailable)")
    p.add_argument("--subtask", action="store_true", help="run as a subtask (the tool is unavailable)")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tasks`` with ``search``, ``around``, ``list`` and ``import`` to ``subparsers``."""
    p = subparsers.add_parser("tasks", help="workspace task search over a task store (SPEC T)")
    sub = p.add_subparsers(dest="tasks_command", required=True, metavar="{search,around,list,import}")

    s = sub.add_parser("search", help="search the other tasks' comments")
    s.add_argument("query")
    _common(s)
    _scope(s)
    s.add_argument("--match-mode", default=None, help="any (default, OR) or all (AND)")
    s.add_argument("--context", type=int, default=None, help=f"neighbouring comments per hit, 0-{tools.MAX_CONTEXT}")
    s.add_argument("--limit", type=int, default=None, help=f"hits, 1-{tools.MAX_LIMIT} (default {tools.DEFAULT_LIMIT})")
    s.add_argument("--kind", default=None, help=f"one of {', '.join(tools.FILTER_KINDS)}")
    s.add_argument("--author", default=None)
    s.add_argument("--task-id", type=int, default=None)
    s.add_argument("--config", default=None,
                   help="SearchConfig JSON: tasks.retrievers composes fts5, bm25 and dense (fused by fusion.*)")

    a = sub.add_parser("around", help='read a comment and its neighbours: "comment:<id>"')
    a.add_argument("ref")
    _common(a)
    _scope(a)
    a.add_argument("--context", type=int, default=None,
                   help=f"neighbours each side, 0-{tools.MAX_CONTEXT} (default {tools.AROUND_DEFAULT_CONTEXT}, "
                        "as the seed's example)")

    ls = sub.add_parser("list", help="list the other tasks of the space, newest first")
    _common(ls)
    _scope(ls)
    ls.add_argument("--state", default=None,
                    help="open or closed: the class of each task's state (running/実行中/open -> open; "
                         "done/完了/interrupted/中断/closed -> closed; unknown -> open)")
    ls.add_argument("--limit", type=int, default=None,
                    help=f"tasks, 1-{tools.MAX_LIST_LIMIT} (default {tools.DEFAULT_LIST_LIMIT})")

    im = sub.add_parser("import", help="import tasks.jsonl and comments.jsonl into a task store")
    im.add_argument("source", nargs="?", default=None, help="folder holding tasks.jsonl and comments.jsonl")
    im.add_argument("--tasks", default=None, help="tasks.jsonl (instead of a folder)")
    im.add_argument("--comments", default=None, help="comments.jsonl (instead of a folder)")
    im.add_argument("--db", required=True, help="task store to create or update (SQLite file)")
    im.add_argument("--lock-timeout", type=float, default=store.DEFAULT_LOCK_TIMEOUT, metavar="SECONDS",
                    help="how long to wait for another importer holding the store "
                         f"(default {store.DEFAULT_LOCK_TIMEOUT:g})")
    im.add_argument("--max-item-bytes", type=int, default=store.DEFAULT_MAX_ITEM_BYTES, metavar="BYTES",
                    help="longest task or comment line read; a longer one is skipped and named in the report "
                         f"(default {store.DEFAULT_MAX_ITEM_BYTES:,})")
    im.add_argument("--lang", default="ja", choices=["ja", "en", "ru"],
                    help="language of the 'not available' message where SQLite has no FTS5 (default ja)")

    p.set_defaults(func=run)
    return p


def _context(args: argparse.Namespace, conn: sqlite3.Connection) -> ToolContext:
    """Who is calling and where, from the flags: the signed-in owner (none with ``--no-auth``),
    the space, the current task, a subtask run, the answer's language, the store and the engine
    ``--config`` composes (``tasks.retrievers``; none: FTS5 alone)."""
    engine = None
    if getattr(args, "config", None):
        engine = TaskEngine(conn, args.space, load_config(args.config))  # a bare config or an export
    return ToolContext(caller=None if args.no_auth else args.owner, space=args.space, current_task=args.current_task,
                       subtask=args.subtask, lang=args.lang, store=conn, engine=engine)


def _import(args: argparse.Namespace) -> int:
    """All or nothing: validated first, one transaction, no file left on failure."""
    if (args.source is None) == (args.tasks is None and args.comments is None):
        raise store.TaskStoreError("give a folder, or both --tasks and --comments (not both forms)")
    if args.source is not None:
        tasks_path, comments_path = store.source_files(args.source)
    else:
        if not (args.tasks and args.comments):
            raise store.TaskStoreError("--tasks and --comments go together")
        tasks_path, comments_path = args.tasks, args.comments
    if not args.lock_timeout >= 0 or args.lock_timeout > 86400:
        raise store.TaskStoreError(f"--lock-timeout must be from 0 to 86400 seconds, got {args.lock_timeout:g}")
    try:
        rep = store.import_into(args.db, tasks_path, comments_path, timeout=args.lock_timeout,
                                max_item_bytes=args.max_item_bytes)
    except store.FTS5Missing:  # T8: a plain message, not an error
        print(f"{message(args.lang, 'task.no_fts5')} (nothing imported into {one_line(args.db)})")
        return 0
    not_indexed = ", ".join(f"{k} {v}" for k, v in sorted(rep.not_indexed.items())) or "none"
    print(f"imported {rep.tasks} task(s), {rep.comments} comment(s) into {one_line(args.db)}"
          f"{' (new store)' if rep.created else ''}: "
          f"{rep.indexed} indexed, {rep.redacted} redacted; not indexed: {not_indexed}")
    if rep.skipped:
        print(f"skipped {len(rep.skipped)} line(s): " + "; ".join(
            one_line(f"{s.where} ({s.reason}: {s.detail})") for s in rep.skipped[:_SHOWN_SKIPS])
            + (f"; and {len(rep.skipped) - _SHOWN_SKIPS} more" if len(rep.skipped) > _SHOWN_SKIPS else ""))
    if not rep.searchable:
        print(message(args.lang, "task.no_fts5"))
    return 0


_SHOWN_SKIPS = 5
"""Skipped lines the import report names one by one."""


def _params(args: argparse.Namespace) -> tuple[str, Any]:
    """The tool a ``tasks`` verb calls and its parameters, from the flags (checked by the tool)."""
    from searchkit.tools.task_tools import TaskAroundParams, TaskListParams, TaskSearchParams

    if args.tasks_command == "search":
        return "task_search", TaskSearchParams(
            query=args.query, match_mode=args.match_mode, context=args.context, limit=args.limit,
            kind=args.kind, author=args.author, task_id=args.task_id,
        )
    if args.tasks_command == "around":
        return "task_around", TaskAroundParams(around_ref=args.ref, context=args.context)
    return "task_list", TaskListParams(state=args.state, limit=args.limit)


def _tool(args: argparse.Namespace) -> int:
    """A thin adapter: flags -> parameters and a ``ToolContext``, the tool run on the store
    (opened read-only), its answer printed (``render`` or ``to_dict``)."""
    from searchkit.tools.registry import TOOLS

    name, params = _params(args)
    conn = store.open_readonly(args.db)  # never written, journal mode untouched
    try:
        ctx = _context(args, conn)
        answer = TOOLS[name].run(params, ctx)
    finally:
        conn.close()
    if args.json:
        print(json_text(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2)))
    else:
        sys.stdout.write(answer.render(ctx.lang))
    return 0


_COMMANDS = {"search": _tool, "around": _tool, "list": _tool, "import": _import}


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``tasks`` command. Errors go to the CLI's one handler (``searchkit.cli.main``): a
    SQLite error reading the store becomes a ``TaskStoreError`` naming the store (``TaskStoreLocked``
    when another process holds it), never a traceback."""
    try:
        return _COMMANDS[args.tasks_command](args)
    except sqlite3.Error as e:
        if store.is_lock_error(e):
            raise store.TaskStoreLocked(f"{one_line(args.db)}: the task store is locked by another process; "
                                        "try again") from None
        raise store.TaskStoreError(f"{one_line(args.db)}: not a readable task store ({one_line(e)})") from None
