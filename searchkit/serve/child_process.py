"""Starting the server's child processes (issue 39 items 1 and 7): only the installed searchkit runs
in them, and they die with the server.

``python -m MODULE`` puts the current folder first on ``sys.path``: a server started from a folder
holding a ``searchkit/`` tree ran that tree's ``searchkit.serve.refresh_child`` (or failed every
refresh). A child is started instead as ``python -I -c BOOTSTRAP PATH PPID FD MODULE ARGS...``:

- ``-I`` (isolated): neither the current folder nor the script's is put on ``sys.path``, no
  ``PYTHON*`` variable is read, no user site folder is added (the site-packages of the interpreter
  are, so an installed or an editable install still imports);
- ``BOOTSTRAP`` sets ``sys.path`` to the server's own, absolute entries only, without the current
  folder (``import_path``), with the folder the server's ``searchkit`` came from first where no other
  entry or installed finder gives that same package (an editable install's finder does; a server run
  from its source folder, without an install, needs that folder); then runs ``MODULE`` as ``__main__``;
- the child dies with the server (a ``kill -9`` of the server included, which left the refresh child
  running on the server's private copy of the index): on Linux the kernel kills it when the thread
  that started it ends (``PR_SET_PDEATHSIG``; that thread waits for the child, as ``ChildRefresh``
  does); everywhere, a thread of the child ends it once the pipe ``FD`` reaches its end (the server
  holds the other end, which the kernel closes when the server dies), and it does not start when its
  parent is no longer ``PPID``.
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

ORPHAN_EXIT = 70
"""The exit status of a child whose server is gone."""

BOOTSTRAP = """\
import json, os, sys
path, ppid, fd, module = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path[:] = path
sys.argv = [module, *sys.argv[5:]]
if sys.platform.startswith("linux"):
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
if os.getppid() != ppid:  # the server died before the line above
    os._exit(%(orphan)d)
import threading
def _watch():
    try:
        while os.read(fd, 64):
            pass
    except OSError:
        pass
    os._exit(%(orphan)d)
threading.Thread(target=_watch, name="searchkit-server-watch", daemon=True).start()
import runpy
runpy.run_module(module, run_name="__main__", alter_sys=True)
""" % {"orphan": ORPHAN_EXIT}


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


def child_command(module: str, args: Sequence[str], lifeline: int) -> list[str]:
    """The command line of a child running ``module`` with ``args``; ``lifeline`` is the reading end
    of the pipe whose end tells the child the server is gone."""
    flags = ["-I", "-X", "utf8"]
    if sys.flags.dont_write_bytecode:
        flags.append("-B")
    return [sys.executable, *flags, "-c", BOOTSTRAP, json.dumps(import_path()), str(os.getpid()), str(lifeline),
            module, *args]


class Child:
    """A child started by ``start``: ``proc`` (a ``subprocess.Popen``) and the server's end of its
    lifeline, which ``close`` drops once the child is done (a child still running then ends)."""

    def __init__(self, proc: subprocess.Popen, lifeline: int) -> None:
        self.proc = proc
        self._lifeline: int | None = lifeline

    def close(self) -> None:
        fd, self._lifeline = self._lifeline, None
        if fd is not None:
            os.close(fd)


def start(module: str, args: Sequence[str], **popen: Any) -> Child:
    """Start ``module`` with ``args`` (``child_command``) and ``popen``'s keywords (``stdin``: the null
    device unless given). The calling thread must outlive the child (wait for it): on Linux the
    child is killed when that thread ends. The caller closes the ``Child`` when it is done."""
    read_end, write_end = os.pipe()  # neither end inherited by any other child; the child gets read_end
    try:
        popen.setdefault("stdin", subprocess.DEVNULL)
        proc = subprocess.Popen(child_command(module, args, read_end), pass_fds=(read_end,), **popen)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return Child(proc, write_end)
