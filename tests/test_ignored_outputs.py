"""What the research loop writes in the checkout stays out of git (issue 40 item 7): run folders
(``runs/``), an MLflow file store and the artifacts ``mlflow ui`` writes (``mlruns/``, ``mlartifacts/``;
README's ``eval --mlflow file://$PWD/mlruns``) and exported configs (``exports/``, as README's
``config export --out exports``)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and the checkout")
@pytest.mark.parametrize("path", ["runs/mini-default/metrics.json", "mlruns/0/meta.yaml", "mlartifacts/1/a.json",
                                  "exports/bm25-only.v1.json"])
def test_research_outputs_are_ignored(path):
    res = subprocess.run(["git", "-c", "core.fsmonitor=false", "check-ignore", "-q", "--no-index", path], cwd=ROOT,
                         capture_output=True, timeout=30)
    assert res.returncode == 0, f"{path} is not git-ignored"
