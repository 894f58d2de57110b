"""Issue 29 item 5: errors by meaning and one CLI handler.

Every error searchkit raises on purpose is a ``SearchkitError`` of one meaning (input, config, data,
resource), keeps the built-in exception it refined, and reaches the terminal through
``searchkit.cli.main`` as one line with exit status 2; a closed stdout ends quietly.
"""
from __future__ import annotations

import importlib
import pkgutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import searchkit
from searchkit import cli
from searchkit.config import ConfigError
from searchkit.errors import DataError, InputError, ParameterError, ResourceError, SearchkitError

REPO = Path(__file__).resolve().parents[1]
MEANINGS = (InputError, DataError, ResourceError)

# the built-in exception each refinement must still be (``except ValueError`` etc. keeps working)
BUILTIN = {
    "ConfigError": ValueError, "DatasetError": ValueError, "RunFolderError": ValueError, "TuneError": ValueError,
    "CompareError": ValueError, "GateError": ValueError, "TaskStoreError": ValueError, "CacheError": ValueError,
    "IndexStoreError": ValueError, "IndexNotFoundError": FileNotFoundError, "IndexMismatchError": ValueError,
    "QueryError": ValueError, "EmbeddingError": RuntimeError, "RerankError": RuntimeError, "ScaleError": RuntimeError,
    "ClusterUnreachable": ConnectionError, "IndexWriteError": OSError, "CacheWriteError": OSError,
    "AccessError": RuntimeError, "ServeError": RuntimeError, "RefreshError": RuntimeError,
}


def _searchkit_errors() -> dict[str, type]:
    """Every SearchkitError subclass defined in the package (its modules imported; the optional
    extras' modules only where installed)."""
    for mod in pkgutil.walk_packages(searchkit.__path__, "searchkit."):
        if mod.name.startswith("searchkit.cli.__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except ImportError:  # an extra that is not installed (serve, scale, mlflow, research)
            continue
    found, todo = {}, [SearchkitError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("searchkit."):
                found[f"{sub.__module__}.{sub.__qualname__}"] = sub
            todo.append(sub)
    return found


def test_every_error_has_one_meaning_and_keeps_its_builtin():
    errors = _searchkit_errors()
    assert len(errors) >= 20  # the scan sees the package's errors
    for name, cls in errors.items():
        if cls in MEANINGS or cls is ParameterError:
            continue
        meanings = [m for m in MEANINGS if issubclass(cls, m)]
        assert len(meanings) == 1, f"{name} has no single meaning: {meanings}"
        builtin = BUILTIN.get(cls.__name__)
        if builtin is not None:
            assert issubclass(cls, builtin), f"{name} is no longer a {builtin.__name__}"
    assert issubclass(ConfigError, InputError) and issubclass(ParameterError, InputError)


def test_meanings_carry_what_they_name():
    assert InputError("bad", param="--limit").param == "--limit"
    p = ParameterError("limit", "must be from 1 to 30")
    assert (p.param, p.message, str(p)) == ("limit", "must be from 1 to 30", "limit: must be from 1 to 30")
    assert DataError("damaged", path=Path("/x/y")).path == "/x/y"
    assert DataError("damaged").path is None
    assert ConfigError(["a: bad", "b: bad"], where="c.json").problems == ("a: bad", "b: bad")


@pytest.mark.parametrize("exc, shown", [
    (InputError("--k must be >= 1"), "searchkit search: --k must be >= 1"),
    (DataError("index '/i' is damaged"), "searchkit search: index '/i' is damaged"),
    (ResourceError("endpoint refused"), "searchkit search: endpoint refused"),
    (ConfigError(["fusion.rrf_k: must be > 0"], where="c.json"), "searchkit search: c.json: fusion.rrf_k: must be > 0"),
    (DataError("name\x1b[31m red\u202e"), "searchkit search: name [31m red"),
])
def test_one_handler_prints_one_line_for_every_meaning(exc, shown, monkeypatch, capsys):
    def boom(_args):
        raise exc

    parser = cli.build_parser()
    args = parser.parse_args(["search", "--index", "/nonexistent", "q"])
    monkeypatch.setattr(cli, "build_parser", lambda: _Fixed(args, boom))
    assert cli.main(["search", "--index", "/nonexistent", "q"]) == 2
    err = capsys.readouterr().err
    assert err == shown + "\n"


class _Fixed:
    """A parser stand-in that returns ``args`` with ``func`` replaced."""

    def __init__(self, args, func):
        self.args, self.func = args, func

    def parse_args(self, _argv):
        self.args.func = self.func
        return self.args


def test_tasks_errors_go_through_the_one_handler(tmp_path, capsys):
    """`searchkit tasks` has no handler of its own: a file that is not a task store is a DataError
    printed by main, one line, exit 2 (was 'searchkit tasks: error: ...' from its own handler)."""
    bad = tmp_path / "not-a-store.sqlite"
    con = sqlite3.connect(bad)
    con.execute("create table x(y)")
    con.commit()
    con.close()
    assert cli.main(["tasks", "list", "--db", str(bad), "--space", "acme", "--current-task", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("searchkit tasks: ") and "error:" not in err
    assert "Traceback" not in err


def test_a_closed_stdout_ends_quietly():
    """`searchkit config schema | head -c 0`: the reader is gone before the verb writes; no error
    line, no traceback, the shell's SIGPIPE status."""
    code = ("import subprocess, sys\n"
            "p = subprocess.Popen([sys.executable, '-m', 'searchkit.cli', 'config', 'schema'],"
            " stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
            "p.stdout.close()\n"
            "err = p.stderr.read().decode(); rc = p.wait()\n"
            "print(rc); print(repr(err))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    rc, err = res.stdout.splitlines()[:2]
    assert rc == "141" and err == "''", res.stdout + res.stderr


def test_every_error_carries_its_meaning_s_stable_code():
    """Issue 42 item 6 (first step): a machine reads what went wrong from ``code``, one of ``CODES``,
    the same for a refinement as for its meaning; a wrong code on any class fails here."""
    from searchkit.errors import CODES

    expected = {SearchkitError: "error", InputError: "input", ParameterError: "parameter",
                ConfigError: "config", DataError: "data", ResourceError: "resource"}
    for cls in expected:
        assert cls.code == expected[cls]
    for name, cls in _searchkit_errors().items():
        assert cls.code in CODES, name
        meaning = next(m for m in (ParameterError, ConfigError, InputError, DataError, ResourceError, SearchkitError)
                       if issubclass(cls, m))
        assert cls.code == expected[meaning], f"{name}: {cls.code} is not its meaning's code {expected[meaning]}"
    assert InputError("x", param="k").code == "input" and ParameterError("q", "bad").code == "parameter"
