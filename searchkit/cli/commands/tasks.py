"""``searchkit tasks search|around|list|import``: the task-search tools from the command line.

Its parser is ``searchkit.cli.tasks``; ``run(args)`` executes a parsed command and returns the exit
status (0 done, including the plain "not available here" message of T8, which ``import`` prints too
where SQLite has no FTS5; 2 a bad parameter or store). ``--current-task`` is required by ``search``,
``around`` and ``list`` (who is calling comes from the session, as ``--caller`` for history). The
tools answer only a ``--caller`` who is a member of ``--space`` in the ``--workspace`` now (T1,
``searchkit.tools.task_members``); without a ``--workspace`` they answer that they are not
available, and a line on stderr says why. Nothing the data holds reaches the terminal as a control
character (``searchkit.tools.terminal``).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sqlite3
import sys
from typing import Any

from searchkit.cli.common import load_config
from searchkit.errors import DataError, InputError, ParameterError
from searchkit.ingest import tasks as store
from searchkit.tools.base import ToolContext
from searchkit.tools.history_search import is_slug
from searchkit.tools.messages import message
from searchkit.tools.registry import TOOLS
from searchkit.tools.task_answers import Unavailable
from searchkit.tools.task_engine import TaskEngine
from searchkit.tools.task_members import MEMBERS_UNKNOWN, WorkspaceMembers, refusal
from searchkit.tools.task_tools import TaskAroundParams, TaskListParams, TaskSearchParams
from searchkit.tools.terminal import json_text, one_line


def _context(args: argparse.Namespace, conn: sqlite3.Connection) -> ToolContext:
    """Who is calling and where, from the flags: the signed-in owner (``--caller``; none with
    ``--no-auth``), the space, the current task, a subtask run, the answer's language, the store,
    the members of the spaces (``--workspace``, read at every call; none: the tools answer that
    they cannot know them) and the engine ``--config`` composes (``tasks.retrievers``; none: FTS5
    alone), built only for a member: nothing of a space is read for anyone else."""
    if not is_slug(args.space):  # before anything, whoever asks (issue 39 item 8)
        raise InputError(f"--space: must be a space slug (a folder name), got {one_line(repr(args.space))[:80]}", usage=True)
    members = None
    if args.workspace is not None:
        if not os.path.isdir(args.workspace):
            raise InputError(f"--workspace: not a folder: {one_line(args.workspace)}", usage=True)
        members = WorkspaceMembers.of(args.workspace)
    config = load_config(args.config) if getattr(args, "config", None) else None  # a bare config or an export
    ctx = ToolContext(caller=None if args.no_auth else args.owner, space=args.space, current_task=args.current_task,
                      subtask=args.subtask, lang=args.lang, store=conn, index=members)
    if config is not None and ctx.caller and not ctx.subtask and refusal(ctx) is None:
        ctx = dataclasses.replace(ctx, engine=TaskEngine(conn, args.space, config))
    return ctx


def _import(args: argparse.Namespace) -> int:
    """All or nothing: validated first, one transaction, no file left on failure."""
    if (args.source is None) == (args.tasks is None and args.comments is None):
        raise DataError("give a folder, or both --tasks and --comments (not both forms)", reason="task_store")
    if args.source is not None:
        tasks_path, comments_path = store.source_files(args.source)
    else:
        if not (args.tasks and args.comments):
            raise DataError("--tasks and --comments go together", reason="task_store")
        tasks_path, comments_path = args.tasks, args.comments
    if not args.lock_timeout >= 0 or args.lock_timeout > 86400:
        raise DataError(f"--lock-timeout must be from 0 to 86400 seconds, got {args.lock_timeout:g}", reason="task_store")
    try:
        rep = store.import_into(args.db, tasks_path, comments_path, timeout=args.lock_timeout,
                                max_item_bytes=args.max_item_bytes)
    except DataError as exc:
        if exc.reason != "no_fts5":
            raise
        # T8: a plain message, not an error
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
    name, params = _params(args)
    conn = store.open_readonly(args.db)  # never written, journal mode untouched
    try:
        ctx = _context(args, conn)
        answer = TOOLS[name].run(params, ctx)
    except ParameterError as exc:
        if exc.param in _SESSION_FLAGS:  # the session's flags, named as flags (issue 39 item 8)
            raise InputError(f"{_SESSION_FLAGS[exc.param]}: {exc.message}", usage=True) from None
        raise
    finally:
        conn.close()
    if isinstance(answer, Unavailable) and answer.reason == MEMBERS_UNKNOWN:
        print("searchkit tasks: --workspace: not given, so who the members of --space are cannot be read; "
              "the tools answer nothing without it (SPEC T1)", file=sys.stderr)
    if args.json:
        print(json_text(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2)))
    else:
        sys.stdout.write(answer.render(ctx.lang))
    return 0


_SESSION_FLAGS = {"space": "--space", "current_task": "--current-task"}
"""Parameters that are the session's, named by their flags in an error."""

_COMMANDS = {"search": _tool, "around": _tool, "list": _tool, "import": _import}


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``tasks`` command. Errors go to the CLI's one handler (``searchkit.cli.main``): a
    SQLite error reading the store becomes a ``DataError`` naming the store (reason ``locked``
    when another process holds it), never a traceback."""
    try:
        return _COMMANDS[args.tasks_command](args)
    except sqlite3.Error as e:
        if store.is_lock_error(e):
            raise DataError(f"{one_line(args.db)}: the task store is locked by another process; "
                                        "try again", reason="locked") from None
        raise DataError(f"{one_line(args.db)}: not a readable task store ({one_line(e)})", reason="task_store") from None
