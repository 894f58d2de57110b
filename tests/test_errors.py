"""Issue 29 item 5: errors by meaning and one CLI handler.

Every error searchkit raises on purpose is a ``SearchkitError`` of one meaning (input, config, data,
resource), keeps the built-in exception it refined, and reaches the terminal through
``searchkit.cli.main`` as one line with exit status 2; a closed stdout ends quietly.
"""
from __future__ import annotations

import ast
import builtins
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

SIX = {"searchkit.errors.SearchkitError", "searchkit.errors.InputError", "searchkit.errors.ParameterError",
       "searchkit.errors.DataError", "searchkit.errors.ResourceError", "searchkit.config.base.ConfigError"}
"""Issue 42 item 6: the error classes searchkit may define, one per meaning (``errors.CODES``)."""


def _import_every_module() -> None:
    """Import every module of the package (the optional extras' modules only where installed)."""
    for mod in pkgutil.walk_packages(searchkit.__path__, "searchkit."):
        if mod.name.startswith("searchkit.cli.__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except ImportError:  # an extra that is not installed (serve, scale, mlflow, research)
            continue


def _searchkit_errors() -> dict[str, type]:
    """Every SearchkitError subclass defined in the package (its modules imported; the optional
    extras' modules only where installed)."""
    _import_every_module()
    found, todo = {}, [SearchkitError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("searchkit."):
                found[f"{sub.__module__}.{sub.__qualname__}"] = sub
            todo.append(sub)
    return found


def _exception_classes_defined_in_searchkit() -> set[str]:
    """Every exception class (any ``BaseException`` subclass, not only ``SearchkitError``'s) that a
    searchkit module defines, found two ways: by import (subclasses of ``BaseException``) and by
    reading every module's source (a class whose bases name an exception or another such class)."""
    _import_every_module()
    found, todo = set(), [BaseException]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("searchkit."):
                found.add(f"{sub.__module__}.{sub.__qualname__}")
            todo.append(sub)
    root = Path(searchkit.__file__).parent
    defs: dict[str, list[tuple[str, list[str]]]] = {}
    for path in root.rglob("*.py"):
        module = ".".join(("searchkit", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                defs.setdefault(node.name, []).append((f"{module}.{node.name}", bases))
    names = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)}
    grew = True
    while grew:
        grew = False
        for name, places in defs.items():
            for qual, bases in places:
                if qual not in found and any(b in names for b in bases):
                    found.add(qual)
                    names.add(name)
                    grew = True
    return found


def test_at_most_six_error_classes_one_per_meaning():
    """Issue 42 item 6: searchkit defines six exception classes, the meanings (``errors.CODES``);
    a module's own refinement, an alias's target or an internal flow-control exception fails here."""
    found = _exception_classes_defined_in_searchkit()
    assert found == SIX, f"{len(found)} exception classes; not a meaning: {sorted(found - SIX)}"
    assert len(found) <= 6
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


def _bad_inputs():
    """A bare ``ValueError`` each raised for a caller's value (issue 42 item 6): now an InputError."""
    from searchkit.evaluate import tune
    from searchkit.passages import split_passages
    from searchkit.rank.fusion import fuse
    from searchkit.rank.http_rerank import HTTPReranker

    return [
        (lambda: fuse({"a": {"d": 1.0}}, method="nosuch"), "unknown fusion method 'nosuch'"),
        (lambda: fuse({"a": {"d": 1.0}}, method="rrf", k=-1), "rrf parameter k must be a finite number >= 0"),
        (lambda: fuse({"a": {"d": 1.0}}, method="rrf", nosuch=1), "got unknown parameter"),
        (lambda: split_passages("text", max_chars=0), "max_chars must be an int"),
        (lambda: tune.operating_rate(1.5, 10), r"the false-warning target must be within \[0, 1\)"),
        (lambda: HTTPReranker(base_url="ftp://x", model="m"), "base_url must be an http"),
    ]


def test_a_bad_value_from_the_caller_is_an_input_error_with_its_message():
    """Issue 42 item 6: input checks raise InputError (still a ValueError), messages unchanged, so
    the command line prints them as one line instead of a traceback."""
    for call, message in _bad_inputs():
        with pytest.raises(InputError, match=message) as err:
            call()
        assert isinstance(err.value, ValueError) and err.value.code == "input"


def test_a_duplicate_record_id_is_an_input_error():
    """Issue 42 item 6: the Searcher refuses records that share an id as an InputError (the message
    as before), so the command line prints one line."""
    from searchkit.records import Record
    from searchkit.searcher import Searcher

    twice = [Record(id="a", kind="doc", text="one"), Record(id="a", kind="doc", text="two")]
    with pytest.raises(InputError, match="duplicate record id 'a'"):
        Searcher.build(twice)


def test_a_bad_record_is_an_input_error():
    """Issue 42 item 6: a Record built from bad input (empty id, unknown visibility) is an InputError
    (still a ValueError), message unchanged."""
    from searchkit.errors import InputError
    from searchkit.records import Record

    with pytest.raises(InputError, match="Record.id must be a non-empty string"):
        Record(id="", text="x")
    with pytest.raises(InputError, match="visibility must be one of"):
        Record(id="r1", text="x", visibility="everyone")
