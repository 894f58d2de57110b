"""Issue 40 item 1 (SPEC E4): ``tune fusion`` warns about a grid key the fusion method does not fuse
by (``fusion.rrf_k`` under the shipped ``wsum``) and never picks it on a tie; notebook 02
(``research.fusion_sweep``) shows the same warnings as the CLI, through one function."""
import json

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from test_metrics import HASHING, tiny_workspace

W73 = {"fusion.weights": {"bm25": 0.7, "dense": 0.3}}


@pytest.fixture()
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    return cfg, tiny_workspace(tmp_path / "ws")


def _tune(setup, tmp_path, grid, capsys):
    cfg, data = setup
    out = tmp_path / "tuned.json"
    if out.exists():
        out.unlink()
    assert main(["tune", "fusion", "--dataset", str(data), "--config", str(cfg), "--quiet", "--grid", json.dumps(grid),
                 "--json", "--out", str(out)]) == 0
    cap = capsys.readouterr()
    return json.loads(cap.out), SearchConfig.load(out), cap.err


def test_unread_keys():
    from searchkit.evaluate.tune import unread_keys

    wsum = SearchConfig()
    assert unread_keys({"fusion.rrf_k": 30}, wsum) == ("fusion.rrf_k",)
    assert unread_keys({"fusion.method": "rrf", "fusion.rrf_k": 30}, wsum) == ()
    assert unread_keys({"fusion.method": "rrf", "fusion.norm": "zscore", **W73}, wsum) == ("fusion.norm", "fusion.weights")
    assert unread_keys(W73, wsum) == ()


def test_a_key_wsum_ignores_is_warned_about_and_never_wins_a_tie(setup, tmp_path, capsys):
    """README's own grid: rrf_k 30 under wsum ties with the base config and was written as the winner."""
    base = SearchConfig.load(setup[0])
    out, tuned, err = _tune(setup, tmp_path, [{"fusion.rrf_k": 30}, {"fusion.rrf_k": 10}], capsys)
    assert tuned.fusion.rrf_k == base.fusion.rrf_k and tuned.fingerprint() == base.fingerprint()
    assert out["best_is_base"] is True and out["best"]["settings"] == {}
    unread = [w for w in out["warnings"] if w.startswith("grid point")]
    assert len(unread) == 2 and "fusion.rrf_k" in unread[0] and "wsum" in unread[0]
    assert any("ties with the base config (cfg.json) with its adaptive model" in w for w in out["warnings"])
    assert all(f"tune fusion: warning: {w}" in err for w in out["warnings"])
    assert "the base config (cfg.json) with its adaptive model as it is" in err  # the summary's pick


def test_a_tie_between_points_that_differ_only_in_an_ignored_key_picks_neither(setup, tmp_path, capsys):
    """Two points that set the same weights and differ in rrf_k alone: the pick is the weights without
    rrf_k, scored beside them (fusion_points adds it)."""
    from searchkit.evaluate.tune import fusion_points

    base = SearchConfig.load(setup[0])
    grid = [{**W73, "fusion.rrf_k": 30}, {**W73, "fusion.rrf_k": 10}]
    assert fusion_points(grid, base) == [*grid, W73, {}]
    assert fusion_points([{"fusion.rrf_k": 30}, W73], base) == [{"fusion.rrf_k": 30}, W73, {}]
    out, tuned, _ = _tune(setup, tmp_path, grid, capsys)
    assert out["best"]["settings"] == W73 and tuned.fusion.rrf_k == base.fusion.rrf_k
    assert dict(tuned.fusion.weights) == W73["fusion.weights"]
    assert len(out["trials"]) == 3


def test_rrf_keys_are_warned_about_too(setup, tmp_path, capsys):
    out, tuned, _ = _tune(setup, tmp_path, [{"fusion.method": "rrf", "fusion.rrf_k": 30, "fusion.norm": "zscore"}], capsys)
    assert any("fusion.norm" in w and "fusion.method rrf does not fuse by" in w for w in out["warnings"])
    assert out["best"]["settings"] == {"fusion.method": "rrf", "fusion.rrf_k": 30}
    assert tuned.fusion.norm == SearchConfig.load(setup[0]).fusion.norm


def test_the_notebook_sweep_shows_the_cli_warnings(setup, tmp_path, capsys):
    """research.fusion_sweep (notebook 02, api.tune_fusion) and the CLI: the same lines (edge of the grid,
    adaptive dropped, an ignored key), and the same pick."""
    from searchkit.evaluate import research
    from searchkit.evaluate.datasets import load_dataset

    cfg, data = setup
    grid = [{"fusion.weights": {"bm25": 0.3, "dense": 0.7}}, {"fusion.weights": {"bm25": 0.5, "dense": 0.5}}, {"fusion.rrf_k": 30}]
    out, _, _ = _tune(setup, tmp_path, grid, capsys)
    sweep = research.fusion_sweep([load_dataset(data, split="dev")], SearchConfig.load(cfg), grid, show_progress=False,
                                  base_name="the base config (cfg.json)")
    assert list(sweep.warnings) == out["warnings"] and len(out["warnings"]) >= 3
    assert any("drops fusion.adaptive" in w for w in out["warnings"])
    assert any("is the smallest" in w or "is the largest" in w for w in out["warnings"])
    assert dict(sweep.trials[0].settings) == out["best"]["settings"]


def test_notebook_02_prints_the_cli_warnings(tmp_path, monkeypatch, capsys):
    """Notebook 02 executed (papermill, mini, hashing) with a grid that sets rrf_k under wsum and puts
    the winner on the grid's edge: it prints the lines `searchkit tune fusion` prints for that grid."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("papermill")
    root = Path(__file__).resolve().parents[1]
    grid = [{"fusion.weights": {"bm25": 0.3, "dense": 0.7}}, {"fusion.weights": {"bm25": 0.5, "dense": 0.5}},
            {"fusion.rrf_k": 30}]
    env = {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "c.sqlite")}
    monkeypatch.setenv("SEARCHKIT_CACHE", env["SEARCHKIT_CACHE"])
    cfg = tmp_path / "hashing.json"
    SearchConfig().replace(**{"dense.embedder": "hashing"}).save(cfg)
    assert main(["tune", "fusion", "--dataset", str(root / "datasets" / "mini"), "--config", str(cfg), "--quiet",
                 "--grid", json.dumps(grid), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["warnings"]
    out = tmp_path / "02.ipynb"
    params = {"DATASETS": [str(root / "datasets" / "mini")], "EMBEDDER": "hashing", "RUNS": str(tmp_path / "runs"),
              "GRID": grid}
    proc = subprocess.run([sys.executable, "-P", "-m", "papermill", str(root / "notebooks" / "02_tune_fusion.ipynb"),
                           str(out), "-k", "python3", "--cwd", str(root / "notebooks"), "--no-progress-bar",
                           "-y", json.dumps(params)], env=env, capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")
    shown = [ln.removeprefix("tune fusion: warning: ") for ln in text.splitlines() if ln.startswith("tune fusion: warning: ")]
    # the lines that name the base config name it as each caller does ("the base config (hashing.json)" / "the base config")
    assert [w.replace("the base config (hashing.json)", "the base config") for w in cli] == shown
    assert any("fusion.rrf_k" in w for w in shown) and any("drops fusion.adaptive" in w for w in shown)
    assert any("is the smallest" in w or "is the largest" in w for w in shown)
