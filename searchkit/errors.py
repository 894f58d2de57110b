"""One error family: everything searchkit raises for bad input or an unusable resource.

``SearchkitError`` is the root; the command line prints any of them as one line and exits with
status 2, while every other exception is a bug and shows its traceback. Each error also derives
from the built-in exception it refines (``ValueError`` for bad values, ``FileNotFoundError`` for a
missing index, ``RuntimeError`` for a failing embedder), so ``except ValueError`` keeps working.
"""
from __future__ import annotations


class SearchkitError(Exception):
    """Root of the errors searchkit raises on purpose; the message names the input at fault."""


class ParameterError(SearchkitError, ValueError):
    """A bad tool parameter: ``param`` names it, the message says what is wrong; nothing was searched."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message
