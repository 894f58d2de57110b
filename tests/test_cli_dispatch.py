"""Issue 29 item 4: the CLI dispatches its verbs lazily, in one place (``searchkit.cli.dispatch``).

Each verb's parser (``searchkit/cli/VERB.py``) imports nothing heavy; what runs the verb
(``searchkit/cli/commands/VERB.py``) imports its machinery at the top and loads only when the verb
runs, through the ``Verb`` its parser names as ``func``."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from searchkit import cli
from searchkit.cli import compare as compare_parser
from searchkit.cli import tasks as tasks_parser
from searchkit.cli.dispatch import PACKAGE, Verb

REPO = Path(__file__).resolve().parents[1]

HEAVY = ("numpy", "scipy", "searchkit.cli.commands", "searchkit.evaluate", "searchkit.searcher", "searchkit.index",
         "searchkit.retrievers", "searchkit.rank", "searchkit.serve", "searchkit.scale", "searchkit.export",
         "searchkit.tools.history", "searchkit.tools.registry", "searchkit.tools.tasks")
"""Modules no verb's parser needs: ``import searchkit.cli`` and ``searchkit --help`` load none of them."""


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), func=None):
    """``(command words, func)`` for every parser that runs something (no sub-commands of its own);
    ``func`` is its own default or the nearest parent's (``config`` sets it for its actions)."""
    func = parser.get_default("func") or func
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, func
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, path + (name,), func)


def _loaded(code: str) -> list[str]:
    """The modules a fresh interpreter holds after ``code``."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.splitlines()[-1])


def test_every_verb_runs_from_a_commands_module():
    leaves = list(_leaves(cli.build_parser()))
    assert len(leaves) >= 20  # the walk sees the verbs and their actions (config show, tasks list, ...)
    for path, func in leaves:
        assert isinstance(func, Verb), f"searchkit {' '.join(path)}: func is {func!r}, not a Verb"
        module = func.target.partition(":")[0]
        assert module.startswith(PACKAGE + "."), func
        fn = func.load()
        assert callable(fn) and fn.__module__ == module, f"searchkit {' '.join(path)}: {func} names no function of its module"


def test_start_loads_no_verb_machinery():
    for code in ("import searchkit.cli",
                 "from searchkit.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
                 "from searchkit.cli import main\ntry:\n    main(['history', '--help'])\nexcept SystemExit:\n    pass"):
        heavy = [m for m in _loaded(code) if m.startswith(HEAVY)]
        assert not heavy, f"{code!r} loads {heavy[:10]}"


def test_a_verb_loads_its_own_commands_module_only():
    code = "import io, contextlib\nfrom searchkit.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n" \
           "    assert main(['tools', 'list']) == 0"
    commands = [m for m in _loaded(code) if m.startswith(PACKAGE + ".")]
    assert commands == [f"{PACKAGE}.tools"]


def test_a_verb_is_a_function_of_a_commands_module():
    assert Verb("searchkit.cli.commands.tools:run").load().__name__ == "run"
    for bad in ("os:system", "searchkit.cli.commands.tools", "searchkit.cli.commandsx.tools:run",
                "searchkit.cli.commands.tools:not a name"):
        with pytest.raises(ValueError, match="searchkit.cli.commands.MODULE:FUNCTION"):
            Verb(bad)


def test_the_names_the_help_shows_are_their_sources():
    """The parsers keep the few names their help shows rather than import the modules that define them
    (the task engine, the harness): they must stay the same."""
    from searchkit.evaluate import compare
    from searchkit.tools import tasks

    for name in ("MAX_CONTEXT", "AROUND_DEFAULT_CONTEXT", "DEFAULT_LIMIT", "MAX_LIMIT", "DEFAULT_LIST_LIMIT",
                 "MAX_LIST_LIMIT", "FILTER_KINDS"):
        assert getattr(tasks_parser, name) == getattr(tasks, name), name
    assert compare_parser.BY == tuple(compare.BY)
    assert compare_parser.CORRECTIONS == tuple(compare.CORRECTIONS)
    assert compare_parser.DEFAULT_CORRECTION == compare.DEFAULT_CORRECTION
