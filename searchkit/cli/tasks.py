"""``searchkit tasks search|around|list|import``: the task-search tools from the command line.

``add_parser(subparsers)`` adds the ``tasks`` command to an argparse sub-parser collection;
``run(args)`` executes a parsed command and returns the exit status (0 done, including the plain
"not available here" message of T8; 2 a bad parameter or store).
"""
from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any

from searchkit.ingest import tasks as store
from searchkit.tools import tasks as tools


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="task store (SQLite file)")
    p.add_argument("--lang", default="ja", choices=["ja", "en", "ru"], help="language of the answer (default ja)")
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")


def _scope(p: argparse.ArgumentParser) -> None:
    p.add_argument("--space", required=True, help="space slug searched (the caller's space)")
    p.add_argument("--current-task", type=int, default=None, help="id of the current task (excluded)")
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
                   help=f"neighbours each side, 0-{tools.MAX_CONTEXT} (default {tools.AROUND_DEFAULT_CONTEXT})")

    ls = sub.add_parser("list", help="list the other tasks of the space, newest first")
    _common(ls)
    _scope(ls)
    ls.add_argument("--state", default=None, help="open or closed")
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

    p.set_defaults(func=run)
    return p


def _context(args: argparse.Namespace) -> tools.TaskContext:
    owner = None if args.no_auth else args.owner
    return tools.TaskContext(args.space, args.current_task, owner, subtask=args.subtask)


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
    rep = store.import_into(args.db, tasks_path, comments_path, timeout=args.lock_timeout)
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(rep.not_indexed.items())) or "none"
    print(f"imported {rep.tasks} task(s), {rep.comments} comment(s) into {args.db}"
          f"{' (new store)' if rep.created else ''}: "
          f"{rep.indexed} indexed, {rep.redacted} redacted; not indexed: {skipped}")
    return 0


def _tool(args: argparse.Namespace) -> int:
    conn = store.open_readonly(args.db)  # never written, journal mode untouched
    try:
        ctx = _context(args)
        if args.tasks_command == "search":
            engine = None
            if getattr(args, "config", None):
                from searchkit.cli.common import load_config
                from searchkit.tools.task_engine import TaskEngine

                engine = TaskEngine(conn, ctx.space, load_config(args.config))  # a bare config or an export
            result = tools.task_search(
                conn, ctx, query=args.query, match_mode=args.match_mode, context=args.context,
                limit=args.limit, kind=args.kind, author=args.author, task_id=args.task_id, engine=engine,
            )
        elif args.tasks_command == "around":
            result = tools.task_search(conn, ctx, around_ref=args.ref, context=args.context)
        else:
            result = tools.list_tasks(conn, ctx, state=args.state, limit=args.limit)
    finally:
        conn.close()
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(tools.render(result, args.lang))
    return 0


_COMMANDS = {"search": _tool, "around": _tool, "list": _tool, "import": _import}


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``tasks`` command; errors print ``searchkit tasks: error: ...`` and return 2."""
    try:
        return _COMMANDS[args.tasks_command](args)
    except (tools.TaskSearchError, store.TaskStoreError, OSError) as e:
        print(f"searchkit tasks: error: {e}", file=sys.stderr)
        return 2
    except sqlite3.Error as e:
        if store.is_lock_error(e):
            print(f"searchkit tasks: error: {args.db}: the task store is locked by another process; try again",
                  file=sys.stderr)
        else:
            print(f"searchkit tasks: error: {args.db}: not a readable task store ({e})", file=sys.stderr)
        return 2
