"""Starting the server's child processes (issue 39 item 1): only the installed searchkit runs in them.

``python -m MODULE`` puts the current folder first on ``sys.path``: a server started from a folder
holding a ``searchkit/`` tree ran that tree's ``searchkit.serve.refresh_child`` (or failed every
refresh). A child is started instead as ``python -I -c BOOTSTRAP PATH MODULE ARGS...``:

- ``-I`` (isolated): neither the current folder nor the script's is put on ``sys.path``, no
  ``PYTHON*`` variable is read, no user site folder is added (the site-packages of the interpreter
  are, so an installed or an editable install still imports);
- ``BOOTSTRAP`` sets ``sys.path`` to the server's own, absolute entries only, without the current
  folder (``import_path``), with the folder the server's ``searchkit`` came from first where no other
  entry or installed finder gives that same package (an editable install's finder does; a server run
  from its source folder, without an install, needs that folder); then runs ``MODULE`` as ``__main__``.
"""
from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import searchkit

BOOTSTRAP = """\
import json, sys
path, module = json.loads(sys.argv[1]), sys.argv[2]
sys.path[:] = path
sys.argv = [module, *sys.argv[3:]]
import runpy
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def package_root() -> str:
    """The folder holding the ``searchkit`` package this process runs (site-packages, or the source
    tree of an editable install)."""
    return str(Path(searchkit.__file__).resolve().parent.parent)


def import_path(cwd: str | None = None) -> list[str]:
    """The ``sys.path`` of a child: this process's absolute entries, without the current folder
    (``cwd``) or anything relative (``''``, ``.``), and with ``package_root()`` first where the
    remaining entries would not give this same ``searchkit`` (an editable install's finder does,
    from site-packages; a server run from its source folder needs the folder)."""
    here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    keep: list[str] = []
    for entry in sys.path:
        if not isinstance(entry, str) or not entry or not os.path.isabs(entry):
            continue
        if os.path.realpath(entry) == here or entry in keep:
            continue
        keep.append(entry)
    spec = importlib.machinery.PathFinder.find_spec("searchkit", keep)
    own = os.path.realpath(searchkit.__file__)
    if spec is None or spec.origin is None or os.path.realpath(spec.origin) != own:
        root = package_root()
        keep = [root, *[p for p in keep if p != root]]
    return keep


def child_command(module: str, args: Sequence[str]) -> list[str]:
    """The command line of a child running ``module`` with ``args``."""
    flags = ["-I", "-X", "utf8"]
    if sys.flags.dont_write_bytecode:
        flags.append("-B")
    return [sys.executable, *flags, "-c", BOOTSTRAP, json.dumps(import_path()), module, *args]


def start(module: str, args: Sequence[str], **popen: Any) -> subprocess.Popen:
    """Start ``python -I -c BOOTSTRAP ... module args`` (``child_command``) with ``popen``'s keywords
    (``stdin`` defaults to the null device)."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(child_command(module, args), **popen)
