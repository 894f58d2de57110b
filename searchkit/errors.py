"""One error family, by meaning: everything searchkit raises for bad input or an unusable resource.

``SearchkitError`` is the root; the command line prints any of them as one line and exits with
status 2 (one handler, ``searchkit.cli.main``), while every other exception is a bug and shows its
traceback. Below the root, an error says what kind of thing went wrong, never which module found it:

- ``InputError``: a value the caller gave (a flag, a tool parameter, a grid point, a query) is
  wrong; ``param`` names it where there is one. ``ParameterError`` is the tool parameters' form.
- ``ConfigError`` (``searchkit.config``, an ``InputError``): a config lists every problem it has.
- ``DataError``: a file or folder the caller pointed at (a dataset, a run folder, an index, a task
  store, a cache) is missing, damaged or not what it should be; ``path`` names it where known, and
  the message never quotes its content.
- ``ResourceError``: something searchkit depends on failed or refused (an embedding or reranking
  endpoint, a cluster, a lock, a full disk, a judge model, a server); retrying may help.

No module adds classes of its own: where a caller must tell two cases apart, the error's
``reason`` says which (``DataError``: ``task_store``, ``locked``, ``no_fts5``, ``no_index``,
``dataset``; ``ResourceError``: ``access``, ``disk``, ``embedding``), as ``InputError.usage`` marks a
command line whose flags do not go together and ``ResourceError.retry`` an attempt that may be tried
again (``late``: a deadline cut it). ``InputError`` and ``DataError`` are
``ValueError``s, so ``except ValueError`` keeps working.

Every error has a stable ``code`` for machines, its meaning's (``CODES``): ``input``, ``parameter``,
``config``, ``data``, ``resource`` (``error`` for the root).
"""
from __future__ import annotations

import os
from typing import ClassVar

__all__ = ["CODES", "DataError", "InputError", "ParameterError", "ResourceError", "SearchkitError"]

CODES: tuple[str, ...] = ("error", "input", "parameter", "config", "data", "resource")
"""The stable codes an error may carry (``SearchkitError.code``), one per meaning."""


class SearchkitError(Exception):
    """Root of the errors searchkit raises on purpose; the message names the input at fault.
    IPython (a notebook) shows one as its one line instead of a traceback."""

    code: ClassVar[str] = "error"

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class InputError(SearchkitError, ValueError):
    """A value the caller gave is wrong; ``param`` names it (a flag, a parameter, a key) when known;
    ``usage`` is true for a command line whose flags do not go together (the CLI shows it without
    its verb: ``searchkit: ...``)."""

    code: ClassVar[str] = "input"

    def __init__(self, *args: object, param: str | None = None, usage: bool = False) -> None:
        super().__init__(*args)
        self.param = param
        self.usage = usage


class ParameterError(InputError):
    """A bad tool parameter: ``param`` names it, the message says what is wrong; nothing was searched."""

    code: ClassVar[str] = "parameter"

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}", param=param)
        self.message = message


class DataError(SearchkitError, ValueError):
    """A file or folder the caller pointed at is missing, damaged or of the wrong kind; ``path``
    names it when known (the message names it too, and never quotes its content); ``reason`` says
    which case where callers tell them apart (``task_store``, ``locked``, ``no_fts5``: a task store;
    ``no_index``: no searchkit index there at all)."""

    code: ClassVar[str] = "data"

    def __init__(self, *args: object, path: str | os.PathLike[str] | None = None, reason: str | None = None) -> None:
        super().__init__(*args)
        self.path = None if path is None else os.fspath(path)
        self.reason = reason


class ResourceError(SearchkitError):
    """Something searchkit depends on failed or refused: an endpoint, a cluster, a lock, the disk.

    ``retry`` is true where the very attempt may be tried again now (no answer, HTTP 429/5xx);
    ``late`` where a deadline cut it; ``cause`` is what the transport raised, where known; ``reason``
    says which case where callers tell them apart (``access``: who may see what cannot be read;
    ``disk``: a write failed, the previous state kept; ``embedding``: an embedder gave no valid
    vectors, the command line says "embedding failed")."""

    code: ClassVar[str] = "resource"

    def __init__(self, *args: object, retry: bool = False, late: bool = False,
                 cause: BaseException | None = None, reason: str | None = None) -> None:
        super().__init__(*args)
        self.reason = reason
        self.retry = retry
        self.late = late
        self.cause = cause
