"""The ``searchkit`` command: one module per verb, registered explicitly in ``VERBS``.

Every verb module has ``add_parser(subparsers)`` and imports nothing heavy: its parser's ``func`` is
a ``searchkit.cli.dispatch.Verb``, which imports what runs the verb (``searchkit.cli.commands.VERB``,
its machinery imported at the top) only when the verb runs, and returns the exit status; so
``searchkit --help`` loads no verb's machinery. ``main`` is the one error handler of every verb: it
turns a ``SearchkitError`` (an ``InputError``, ``ConfigError``, ``DataError`` or ``ResourceError``:
``searchkit.errors``) or an ``OSError`` (the system refused) into one line on stderr and exit status
2; a closed stdout ends quietly (status 141); any other exception is a bug and shows its traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from searchkit.cli import (
    compare, config, datasets, eval, gate, history, index, refs, report, runs, search, serve, snapshot, tasks, tools, tune,
)
from searchkit._omp import prefer_passive_wait
from searchkit.errors import InputError, ResourceError, SearchkitError
from searchkit.tools.terminal import one_line

VERBS = (index, search, eval, compare, report, runs, datasets, gate, tune, config, history, refs, snapshot, tasks, tools, serve)
"""The verb modules, in the order ``searchkit --help`` lists them."""

__all__ = ["VERBS", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (usage is in ``--help``), cut short so a huge argument is
    never echoed back."""

    def error(self, message: str) -> None:  # type: ignore[override]
        message = " ".join(message.split())
        if len(message) > 300:
            message = message[:297] + "..."
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="searchkit", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for verb in VERBS:
        verb.add_parser(sub)
    return p


EXTRAS: dict[str, str] = {"ir_measures": "eval", "ranx": "test", "sklearn": "eval", "ragas": "research", "matplotlib": "research",
                          "mcp": "serve", "uvicorn": "serve", "starlette": "serve",
                          "pandas": "research", "ray": "scale", "mlflow": "mlflow"}
"""Optional dependencies by the extra that installs them (pyproject.toml)."""


def _one_line(exc: BaseException, limit: int = 500) -> str:
    """The error as one terminal line: controls and bidi marks out (a name or value in it may come
    from a file or a flag), at most ``limit`` characters."""
    text = " ".join(one_line(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _embedding_failed(exc: BaseException) -> bool:
    """Whether ``exc`` is an embedder's failure: a ``ResourceError`` with reason ``embedding``."""
    return isinstance(exc, ResourceError) and exc.reason == "embedding"


def _stdout_gone() -> int:
    """The reader of stdout went away (``searchkit ... | head -1``): end quietly, as Unix tools do,
    with the shell's status for SIGPIPE; stdout points at /dev/null so the interpreter's last flush
    cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


def main(argv: Sequence[str] | None = None) -> int:
    prefer_passive_wait()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rc = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        return _stdout_gone()
    except SearchkitError as exc:
        if isinstance(exc, InputError) and exc.usage:  # a command line whose flags do not go together
            print(f"searchkit: {_one_line(exc)}", file=sys.stderr)
            return 2
        what = "embedding failed: " if _embedding_failed(exc) else ""  # H16: an embedding provider (or all) failed
        print(f"searchkit {args.command}: {what}{_one_line(exc)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"searchkit {args.command}: needs {exc.name}, from the '{extra}' extra: pip install "
              f"'searchkit[{extra}]' (or SEARCHKIT_EXTRAS={extra} bash scripts/setup.sh)", file=sys.stderr)
        return 2
    except OSError as exc:  # the system refused (permissions, a full disk, a missing file)
        print(f"searchkit {args.command}: {_one_line(exc)}", file=sys.stderr)
        return 2
    return int(rc or 0)
