"""docs/ARCHITECTURE.md stays a map (issue 42 item 7): every folder of the package and of the repository
has its line, every layer of .importlinter its row, the recipes are there, and it stays short."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
TRACKED_TOP = ["benchmarks", "datasets", "deploy", "docs", "evals", "notebooks", "scripts", "tests"]


def _folders() -> list[str]:
    out = []
    for p in sorted((ROOT / "searchkit").rglob("*")):
        if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py")):
            out.append(p.relative_to(ROOT).as_posix() + "/")
    return out


def test_every_folder_has_its_line():
    rows = set(re.findall(r"^\| `([^`]+)` \|", DOC, re.M))
    missing = [f for f in _folders() if f not in rows]
    missing += [f"{t}/" for t in TRACKED_TOP if (ROOT / t).is_dir() and f"{t}/" not in rows]
    assert not missing, f"docs/ARCHITECTURE.md has no line for {missing}"


def test_every_layer_has_its_row():
    text = (ROOT / ".importlinter").read_text(encoding="utf-8")
    block = text.split("layers =", 1)[1]
    layers = [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    layers = [ln for ln in layers if not ln.startswith("[")]
    for line in layers:
        for name in (n.strip() for n in line.split("|")):
            assert f"`{name}`" in DOC, f"layer {name} has no row in docs/ARCHITECTURE.md"


def test_recipes_and_length():
    for recipe in ("Adding a verb", "Adding a stage", "Adding one", "Adding a tool", "Adding a metric", "Raising one"):
        assert f"**{recipe}" in DOC, recipe
    assert len(DOC.split()) <= 1500
