"""Strict JSON (issue 31 item 2): what searchkit writes parses with a strict parser; an undefined
figure is null. The research loop's outputs are checked where they are made (test_runs, test_compare,
test_gate); here the helper itself and `tune`'s output."""
from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from searchkit.strict_json import dumps, finite

ROOT = Path(__file__).resolve().parents[1]


def _refuse(constant):
    raise ValueError(f"not strict JSON: {constant}")


def test_non_finite_floats_become_null_and_numpy_becomes_plain():
    value = {"nan": float("nan"), "inf": float("inf"), "-inf": -math.inf, "np": np.float32(0.5), "i": np.int64(3),
             "arr": np.array([1.0, np.nan]), "t": (1, np.float64("nan")), "b": np.bool_(False), "ok": 0.25, "s": "NaN",
             "m": MappingProxyType({"x": float("nan")}), "none": None, "yes": True}
    text = dumps(value)
    assert json.loads(text, parse_constant=_refuse) == {
        "nan": None, "inf": None, "-inf": None, "np": 0.5, "i": 3, "arr": [1.0, None], "t": [1, None], "b": False,
        "ok": 0.25, "s": "NaN", "m": {"x": None}, "none": None, "yes": True}
    assert dumps({"ё": "日本"}, indent=None) == '{"ё": "日本"}'  # text stays as it is
    assert finite([float("nan")]) == [None]


def test_tune_weak_match_prints_strict_json(tmp_path, monkeypatch, capsys):
    """An undefined no-answer figure (e.g. a report-half group with one class) was a bare NaN."""
    from searchkit.cli import main
    from searchkit.evaluate import tune

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    run = tmp_path / "run"
    assert main(["eval", "--dataset", "mini", "--config", str(ROOT / "tests" / "data" / "hashing.json"), "--out",
                 str(run), "--quiet"]) == 0
    real = tune.score_weak_match
    monkeypatch.setattr(tune, "score_weak_match", lambda rows, cfg: {**real(rows, cfg), "AUROC": float("nan")})
    capsys.readouterr()
    assert main(["tune", "weak-match", "--runs", str(run), "--allow-small"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert out["report_half"]["all"]["AUROC"] is None


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "evals" / "baselines").glob("*.json")))
def test_committed_baselines_are_strict_json(name):
    json.loads((ROOT / "evals" / "baselines" / name).read_text(encoding="utf-8"), parse_constant=_refuse)
