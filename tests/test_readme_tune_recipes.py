"""README's ``tune`` recipes run as written (issue 40 item 1; SPEC E4): every ``$S tune`` line of the
CLI block (and the loop of ``eval --out`` that writes the run folders they read), the ``rerank_top1``
recipe with the HTTP config printed below it, and the research loop's ``tune adaptive-fusion``,
parsed out of README.md and run in a scratch folder. To stay fast, every dataset is ``mini`` and
every eval, index and sweep uses the hashing embedder (``--config`` added where a recipe has none;
a weak-match fit reads the runs' own config, which is then the hashing one); mini's tune half is
too small for a weak-match fit, so those lines are shown refused for that reason and then run with
``--allow-small``; mini has no conversations, so the LoCoMo folder's queries are marked as scored
by the conversation model; the HTTP reranker's runs, which need its server, are synthetic run
folders of the README's own HTTP config."""
from __future__ import annotations

import glob
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MINI = str(ROOT / "datasets" / "mini")


def _cli_block() -> list[str]:
    """The commands of the first bash block under "## The CLI", continuation lines joined."""
    section = README.split("\n## The CLI", 1)[1]
    block = section.split("```bash\n", 1)[1].split("\n```", 1)[0]
    return block.replace("\\\n", " ").splitlines()


def _argv(command: str) -> list[str]:
    """``$S VERB ...`` or ``searchkit VERB ...`` as argv for ``main``: comments dropped, globs expanded
    in the current folder, every dataset ``mini``, the hashing config where none is given (not for a
    weak-match fit, which writes into the runs' own config)."""
    words = shlex.split(command, comments=True)
    assert words[0] in ("$S", "searchkit"), command
    argv: list[str] = []
    for w in words[1:]:
        if w == "...":
            continue
        argv += sorted(glob.glob(w)) or [w] if any(c in w for c in "*?[") else [w]
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--dataset":
            if MINI not in out:
                out += ["--dataset", MINI]
            i += 2
            continue
        out.append(argv[i])
        i += 1
    if "--config" not in out and out[:2] != ["tune", "weak-match"] and out[0] in ("eval", "tune"):
        out += ["--config", "hashing.json"]
    return out


def _conversations(folder: Path) -> None:
    """Mark a run folder's queries as scored by the conversation model (mini has no conversations)."""
    path = folder / "metrics.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for q in data["queries"]:
        q["signals"] = {**q["signals"], "conversation_model": 1.0}
    path.write_text(json.dumps(data), encoding="utf-8")


def _run(argv: list[str], capsys) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().err


@pytest.fixture()
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    SearchConfig().replace(**{"dense.embedder": "hashing"}).save(tmp_path / "hashing.json")
    return tmp_path


def test_the_cli_blocks_tune_recipes_run_as_written(scratch, capsys):
    from searchkit.evaluate.weak_match_runs import fit_fingerprint

    hashing = SearchConfig.load("hashing.json")
    lines = [ln for ln in _cli_block() if " tune " in f" {ln} " or ("for " in ln and " eval " in ln)]
    tune_lines = [ln for ln in lines if ln.startswith("$S tune")]
    assert len(tune_lines) >= 4 and any("weak-match" in ln for ln in tune_lines)
    ran = []
    for line in lines:
        loop = re.match(r"for (\w+) in ([^;]+); do (.+); done", line.split("  #")[0].strip())
        if loop:  # the run folders the weak-match recipes read
            var, values, body = loop.groups()
            for value in values.split():
                argv = _argv(body.replace(f"${var}", value))
                assert argv[0] == "eval" and "--out" in argv, line
                assert _run(argv, capsys)[0] == 0, line
                if value.startswith("locomo"):
                    _conversations(Path(argv[argv.index("--out") + 1]))
            continue
        argv = _argv(line)
        if argv[:2] == ["tune", "weak-match"]:
            runs = argv[argv.index("--runs") + 1:]
            assert runs and all(Path(r, "metrics.json").is_file() for r in runs[:1]), f"{line}: --runs names no run folder"
            rc, err = _run(argv, capsys)
            assert rc == 2 and "fewer than 30" in err and "--allow-small" in err, (line, err)  # mini's tune half
            argv.append("--allow-small")
        rc, err = _run(argv, capsys)
        assert rc == 0, (line, err)
        ran.append(argv)
        if "--out" in argv:
            tuned = SearchConfig.load(argv[argv.index("--out") + 1])
            if argv[:2] == ["tune", "weak-match"]:  # written into the runs' own config
                assert fit_fingerprint(tuned) == fit_fingerprint(hashing)
                if "--refit" in argv and argv[argv.index("--refit") + 1] == "conversation":
                    assert tuned.weak_match.coef == hashing.weak_match.coef  # the documents model kept
        if "--result" in argv:  # README's own grid: every point changes the fusion it runs
            result = json.loads(Path(argv[argv.index("--result") + 1]).read_text(encoding="utf-8"))
            assert not [w for w in result["warnings"] if "does not fuse by" in w], result["warnings"]
    assert len(ran) == len(tune_lines)


def _http_runs(cfg: SearchConfig, folder: Path, n=400) -> None:
    """A run folder of ``cfg`` as ``eval --out`` writes it (metrics.json, config.json), its queries'
    signals synthetic: the HTTP reranker's server is not here."""
    rng = np.random.default_rng(1)
    queries = []
    for i in range(n):
        ans = bool(i % 2)
        queries.append({"id": f"q{i}", "answerable": ans, "signals": {
            "dense_top1": float(rng.normal(0.82 if ans else 0.78, 0.03)),
            "bm25_idf_coverage": float(rng.normal(0.7 if ans else 0.6, 0.15)),
            "bm25_sentence_coverage": float(rng.normal(0.6 if ans else 0.5, 0.15)),
            "rerank_top1": float(rng.normal(0.7 if ans else 0.4, 0.2)), "conversation_model": 0.0}})
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"dataset": folder.name, "split": "dev", "queries": queries,
                                                     "config_fingerprint": cfg.fingerprint()}), encoding="utf-8")
    (folder / "config.json").write_text(cfg.to_json() + "\n", encoding="utf-8")


def test_the_rerank_top1_recipe_runs_as_written(scratch, capsys):
    """The recipe names its config (it lacked --config): the model goes into the HTTP config the runs
    were made with, and a config other than theirs is refused."""
    prose = " ".join(README.split())
    (recipe,) = [m for m in re.findall(r"`(searchkit tune weak-match [^`]*)`", prose) if "rerank_top1" in m]
    name = re.search(r"saved as `([^`]+)`", prose).group(1)  # the config printed below the recipe
    config_json = README[README.index("saved as `"):].split("```json\n", 1)[1].split("\n```", 1)[0]
    Path(name).write_text(config_json, encoding="utf-8")
    http = SearchConfig.load(name)
    assert http.rerank.method == "http" and "--config " + name in recipe
    runs = re.search(r"--runs (\S+)", recipe).group(1)
    for d in ("nomiracl-ru", "nomiracl-ja"):
        _http_runs(http, Path(runs.replace("*", d)))
    argv = _argv(recipe)
    rc, err = _run(argv, capsys)
    assert rc == 0, err
    tuned = SearchConfig.load(argv[argv.index("--out") + 1])
    assert tuned.rerank.method == "http" and "rerank_top1" in tuned.weak_match.features
    argv[argv.index("--config") + 1] = "hashing.json"  # another config than the runs': refused
    rc, err = _run(argv, capsys)
    assert rc == 2 and http.fingerprint() in err


def test_the_research_loops_adaptive_fusion_recipe_runs(scratch, capsys):
    prose = " ".join(README.split("\n## Research loop", 1)[1].split())
    (recipe,) = re.findall(r"`(searchkit tune adaptive-fusion [^`]*)`", prose)
    argv = _argv(recipe)
    rc, err = _run(argv, capsys)
    assert rc == 0, err
    assert Path(argv[argv.index("--cases") + 1]).is_file() and SearchConfig.load(argv[argv.index("--out") + 1]).fusion.adaptive
