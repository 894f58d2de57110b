"""``searchkit tasks search|around|list|import``: the task-search tools from the command line.

``add_parser(subparsers)`` adds the ``tasks`` command to an argparse sub-parser collection;
``run(args)`` executes a parsed command and returns the exit status (0 done, including the plain
"not available here" message of T8, which ``import`` prints too where SQLite has no FTS5; 2 a bad
parameter or store). ``--current-task`` is required by ``search``, ``around`` and ``list`` (who is
calling comes from the session, as ``--caller`` for history); they answer only a ``--caller`` who is
a member of ``--space`` in the ``--workspace`` now (T1), and nothing without a ``--workspace``. Nothing the data holds reaches the
terminal as a control character (``searchkit.tools.terminal``). ``run`` runs from
``searchkit.cli.commands.tasks``.
"""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb
from searchkit.ingest import tasks as store

MAX_CONTEXT, AROUND_DEFAULT_CONTEXT = 5, 1
DEFAULT_LIMIT, MAX_LIMIT = 10, 30
DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT = 20, 50
FILTER_KINDS = ("request", "comment", "interjection", "result", "ask", "progress", "handoff")
"""The task tools' bounds, for the help: those of ``searchkit.tools.tasks``, which imports the task
engine and the searcher (tests/test_cli_dispatch.py checks they agree)."""

run = Verb("searchkit.cli.commands.tasks:run")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="task store (SQLite file)")
    p.add_argument("--lang", default="ja", choices=["ja", "en", "ru"], help="language of the answer (default ja)")
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")


def _scope(p: argparse.ArgumentParser) -> None:
    p.add_argument("--space", required=True, help="space slug searched (the caller's space)")
    p.add_argument("--current-task", type=int, required=True,
                   help="id of the current task (required; never returned: the tool reads the other tasks)")
    p.add_argument("--caller", "--owner", dest="owner", default=None, metavar="USER",
                   help="user id of the signed-in owner of the run; a member of --space now (SPEC T1). None: a "
                        "no-auth run (the tool is unavailable)")
    p.add_argument("--workspace", default=None, metavar="DIR",
                   help="the workspace whose SPACE/.space/space.json says who the members of --space are, read at "
                        "every call (SPEC T1); without it the tools answer that they are not available here")
    p.add_argument("--no-auth", action="store_true", help="run as a no-auth context (the tool is unavailable)")
    p.add_argument("--subtask", action="store_true", help="run as a subtask (the tool is unavailable)")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``tasks`` with ``search``, ``around``, ``list`` and ``import`` to ``subparsers``."""
    p = subparsers.add_parser("tasks", help="workspace task search over a task store (SPEC T)")
    sub = p.add_subparsers(dest="tasks_command", required=True, metavar="{search,around,list,import}")

    s = sub.add_parser("search", help="search the other tasks' comments")
    s.add_argument("query")
    _common(s)
    _scope(s)
    s.add_argument("--match-mode", default=None, help="any (default, OR) or all (AND)")
    s.add_argument("--context", type=int, default=None, help=f"neighbouring comments per hit, 0-{MAX_CONTEXT}")
    s.add_argument("--limit", type=int, default=None, help=f"hits, 1-{MAX_LIMIT} (default {DEFAULT_LIMIT})")
    s.add_argument("--kind", default=None, help=f"one of {', '.join(FILTER_KINDS)}")
    s.add_argument("--author", default=None)
    s.add_argument("--task-id", type=int, default=None)
    s.add_argument("--config", default=None,
                   help="SearchConfig JSON: tasks.retrievers composes fts5, bm25 and dense (fused by fusion.*)")

    a = sub.add_parser("around", help='read a comment and its neighbours: "comment:<id>"')
    a.add_argument("ref")
    _common(a)
    _scope(a)
    a.add_argument("--context", type=int, default=None,
                   help=f"neighbours each side, 0-{MAX_CONTEXT} (default {AROUND_DEFAULT_CONTEXT}, "
                        "as the seed's example)")

    ls = sub.add_parser("list", help="list the other tasks of the space, newest first")
    _common(ls)
    _scope(ls)
    ls.add_argument("--state", default=None,
                    help="open or closed: the class of each task's state (running/実行中/open -> open; "
                         "done/完了/interrupted/中断/closed -> closed; unknown -> open)")
    ls.add_argument("--limit", type=int, default=None,
                    help=f"tasks, 1-{MAX_LIST_LIMIT} (default {DEFAULT_LIST_LIMIT})")

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
