"""What runs a verb, loaded when the verb runs (issue 29 item 4).

``searchkit`` builds every verb's parser at start (``--help`` lists them all) but runs one verb. So a
verb is two modules: ``searchkit/cli/VERB.py``, its parser (arguments and help), which imports only
argparse and light modules, and ``searchkit/cli/commands/VERB.py``, what runs it, which imports its
machinery (the searcher, the harness, the server, the tools) at the top. A parser's ``func`` is a
:class:`Verb` naming the function that runs the verb (``"searchkit.cli.commands.VERB:run"``); calling
it imports that module: this is the one place the CLI imports a module of its own late.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

PACKAGE = "searchkit.cli.commands"
"""Every verb runs from a module of this package."""


class Verb:
    """A verb's function named by ``"module:function"`` (a module of :data:`PACKAGE`), imported when
    the verb runs: ``Verb(...)(args)`` imports the module and calls the function."""

    __slots__ = ("target",)

    def __init__(self, target: str) -> None:
        module, sep, name = target.partition(":")
        if not (sep and module.startswith(PACKAGE + ".") and name.isidentifier()):
            raise ValueError(f"a verb is named 'searchkit.cli.commands.MODULE:FUNCTION', got {target!r}")
        self.target = target

    def load(self) -> Callable[..., Any]:
        """The function, its module imported now (at most once: ``sys.modules`` keeps it)."""
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return self.load()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Verb({self.target!r})"
