"""Issue 29 item 4: an honest import graph. The layers in ``.importlinter`` hold (``lint-imports``,
which sees function-level imports too), and no module of searchkit imports searchkit's own modules
inside a function except where the lists below say why."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "searchkit"

ALLOWED = {
    ("searchkit/__init__.py", "__getattr__"):
        "the package's face: Searcher and Filters load on first use, so `import searchkit.config` stays light",
    ("searchkit/index/bm25.py", "_kernels"): "searchkit.index._bm25_numba imports numba, which is slow to import",
    ("searchkit/scale/__init__.py", "_ray_engine"):
        "the registered 'ray' engine loads scale.ray_engine (the searcher, the harness, the HTTP clients) when made",
    ("searchkit/serve/runner.py", "_stdio"):
        "serve.mcp_app is the MCP SDK's wiring (mcp, anyio streams): it loads only for the transport asked",
    ("searchkit/serve/runner.py", "_http"):
        "serve.http_app is Starlette's and uvicorn's wiring (and the MCP SDK's HTTP transport): loaded only for --transport http",
    ("searchkit/retrievers/__init__.py", "_builtins"):
        "a plugin registry: the built-in retrievers' modules register themselves on import and import the registry "
        "first; loading them on first lookup keeps BM25's index (scipy) out of `import searchkit.cli`",
}
"""Function-level imports of searchkit's own modules that stay, by (file, function), and why."""

PENDING = {
}
"""Modules not cleaned yet (each entry goes when its module is): their function-level imports are not
checked here. The layer contract above still holds for them."""


def _own_imports_in_functions(path: Path) -> list[tuple[str, int, str]]:
    """``(function, line, import)`` for each import of a searchkit module inside a function."""
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.ImportFrom):
                names = ["searchkit"]  # a relative import is always one of ours
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n == "searchkit" or n.startswith("searchkit.") for n in names):
                out.append((fn.name, node.lineno, ast.unparse(node)))
    return out


def _targets(stmt: str) -> set[str]:
    """The modules an import statement loads (``from searchkit.index import store``: ``searchkit.index.store``)."""
    node = ast.parse(stmt).body[0]
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    out = set()
    for a in node.names:
        sub = f"{node.module}.{a.name}"
        file = REPO.joinpath(*sub.split("."))
        out.add(sub if file.is_dir() or file.with_suffix(".py").is_file() else node.module)
    return out


def _pending(rel: str) -> bool:
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in PENDING)


def test_no_function_level_import_of_searchkit_outside_the_allow_list():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if _pending(rel):
            continue
        for fn, line, stmt in _own_imports_in_functions(path):
            if (rel, fn) in ALLOWED:
                continue
            found.append(f"{rel}:{line} in {fn}: {stmt}")
    assert not found, "function-level imports of searchkit's own modules:\n" + "\n".join(found)


def test_the_lists_name_only_what_exists():
    for rel, fn in ALLOWED:
        path = REPO / rel
        assert path.is_file(), rel
        assert any(f == fn for f, _, _ in _own_imports_in_functions(path)), f"{rel}:{fn} no longer needs its entry"
    for rel in PENDING:
        assert (REPO / rel).exists(), rel
        paths = sorted((REPO / rel).rglob("*.py")) if rel.endswith("/") else [REPO / rel]
        assert any(_own_imports_in_functions(p) for p in paths), f"{rel} is clean: drop it from PENDING"


def test_the_scan_sees_a_function_level_import(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\n\ndef f():\n    from searchkit.util import parse_iso\n    import json\n    return 1\n")
    assert _own_imports_in_functions(path) == [("f", 4, "from searchkit.util import parse_iso")]


def _lint_imports() -> str:
    exe = Path(sys.executable).with_name("lint-imports")
    found = str(exe) if exe.is_file() else shutil.which("lint-imports")
    if found is None:
        pytest.skip("import-linter is not installed (the test extra: pip install -e '.[test]')")
    return found


def test_the_layers_hold():
    res = subprocess.run([_lint_imports(), "--config", str(REPO / ".importlinter")], capture_output=True, text=True,
                         cwd=REPO)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "1 kept, 0 broken" in res.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    """The contract catches an edge it forbids: a copy of the package where index imports the CLI."""
    exe = _lint_imports()
    pkg = tmp_path / "searchkit"
    shutil.copytree(ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "index" / "store.py").write_text((ROOT / "index" / "store.py").read_text(encoding="utf-8")
                                            + "\n\ndef _bad():\n    from searchkit.cli import main\n\n    return main\n",
                                            encoding="utf-8")
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    res = subprocess.run([exe, "--config", str(tmp_path / ".importlinter")], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert res.returncode != 0
    assert "searchkit.index is not allowed to import searchkit.cli" in res.stdout


def test_scale_registers_its_engine_and_index_never_imports_scale():
    from searchkit import scale  # noqa: F401
    from searchkit.index import engine

    assert engine.names() == ("local", "ray")
    with pytest.raises(ValueError, match="unknown engine 'nope'; valid: local, ray"):
        engine.make_engine("nope")
    tree = ast.parse((ROOT / "index" / "engine.py").read_text(encoding="utf-8"))
    imported = set().union(*(_targets(ast.unparse(n)) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))))
    assert not {m for m in imported if m.startswith("searchkit.scale")}
