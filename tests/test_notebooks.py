"""The research notebooks (E1, E4): committed without outputs, parameterised, and executed headless
(papermill, one fresh kernel each) with quick parameters: the ``mini`` set, the hashing embedder,
run folders in a temporary folder. A notebook that breaks fails here, and so in CI. Only the
notebooks the selected tests read are executed (``-k 00_api`` runs 00 alone)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
NAMES = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
REQUIRED = os.environ.get("SEARCHKIT_NOTEBOOK_TESTS") == "required"
"""``.ci/run`` sets it: there a missing papermill or kernel fails the tests instead of skipping them."""
CELL_TIMEOUT = 600


def _quick(runs: Path) -> dict[str, dict]:
    common = {"EMBEDDER": "hashing", "RUNS": str(runs)}
    tuned = runs / "tuned-fusion.json"  # what 02 writes; 05 exports it
    return {
        "00_api": {"EMBEDDER": "hashing"},  # writes nothing: no RUNS
        "01_eval_overview": dict(common),
        "02_tune_fusion": dict(common, DATASETS=["mini"]),
        "03_no_answer": dict(common, DATASETS=["mini"]),
        "04_error_analysis": dict(common),
        "05_export_and_verify": dict(common, TUNED=str(tuned) if tuned.is_file() else None),
        "06_task_search": dict(common),
    }


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


# --------------------------------------------------------------------------- as committed


def test_the_seven_notebooks_are_there():
    assert NAMES == ["00_api", "01_eval_overview", "02_tune_fusion", "03_no_answer", "04_error_analysis",
                     "05_export_and_verify", "06_task_search"]


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name):
    nb = _load(NOTEBOOKS / f"{name}.ipynb")
    for cell in _code(nb):
        assert cell["outputs"] == [] and cell["execution_count"] is None, f"{name}: clear the outputs before committing"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", NAMES)
def test_parameters_cell_and_no_logic(name):
    nb = _load(NOTEBOOKS / f"{name}.ipynb")
    tagged = [c for c in _code(nb) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{name}: one cell tagged 'parameters' (papermill)"
    src = "".join(tagged[0]["source"])
    assert any(f"{p} = " in src for p in ("DATASET", "DATASETS")), name
    for p in ("SPLIT", "CONFIG", "EMBEDDER"):
        assert f"{p} = " in src, f"{name}: parameter {p}"
    for cell in _code(nb):  # the notebooks call searchkit; anything needed twice is a function there
        lines = "".join(cell["source"]).splitlines()
        assert not [ln for ln in lines if ln.lstrip().startswith(("def ", "class ", "lambda"))], name


# --------------------------------------------------------------------------- executed


def _papermill():
    try:
        import papermill  # noqa: F401
        from jupyter_client.kernelspec import KernelSpecManager

        KernelSpecManager().get_kernel_spec("python3")
    except Exception as exc:  # papermill or a python3 kernel missing
        msg = f"executing notebooks needs papermill and ipykernel (the 'notebooks' extra): {exc}"
        if REQUIRED:
            pytest.fail(msg)
        pytest.skip(msg)
    import papermill

    return papermill


def _execute(pm, name: str, out: Path, parameters: dict) -> None:
    pm.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), parameters=parameters, cwd=str(NOTEBOOKS),
                        kernel_name="python3", progress_bar=False, log_output=False, execution_timeout=CELL_TIMEOUT)


CHAINS = (("00_api",),
          ("01_eval_overview", "03_no_answer", "04_error_analysis"),
          ("02_tune_fusion", "05_export_and_verify", "06_task_search"))
"""Run side by side, each chain in order: 03 and 04 reuse 01's run folder (the notebooks
writing the same run folder are in one chain), 05 exports what 02 tuned; 00 writes nothing."""


def _needed(request) -> set[str]:
    """The notebooks the selected tests of this module read: a test parametrised by ``name`` reads
    that one, ``test_0N_...`` notebook 0N, any other every notebook."""
    wanted: set[str] = set()
    for item in request.session.items:
        if item.module is not request.module or "executed" not in getattr(item, "fixturenames", ()):
            continue
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("name") if callspec is not None else None
        prefix = item.originalname.removeprefix("test_")[:3]
        if name:
            wanted.add(name)
        elif prefix[:2].isdigit() and prefix[2] == "_":
            wanted.update(n for n in NAMES if n.startswith(prefix))
        else:
            return set(NAMES)
    return wanted or set(NAMES)


def _run_chain(chain: tuple[str, ...], runs: Path, outs: Path, env: dict) -> dict:
    """Each notebook of ``chain`` in turn, by papermill's own command (a fresh process and kernel
    each, so the chains share nothing but the runs folder). ``-P``: papermill's process does not
    import from the folder pytest was started in (issue 39 item 1); the kernels run in notebooks/."""
    import subprocess
    import sys

    results = {}
    for name in chain:
        out = outs / f"{name}.ipynb"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-P", "-m", "papermill", str(NOTEBOOKS / f"{name}.ipynb"), str(out), "-k", "python3",
             "--cwd", str(NOTEBOOKS), "--no-progress-bar", "--execution-timeout", str(CELL_TIMEOUT),
             "-y", json.dumps(_quick(runs)[name])],
            env=env, capture_output=True, text=True, timeout=CELL_TIMEOUT * 2, stdin=subprocess.DEVNULL)
        error = None if proc.returncode == 0 else f"papermill exit {proc.returncode}:\n{proc.stderr[-4000:]}"
        results[name] = (error, time.perf_counter() - t0, out)
    return results


@pytest.fixture(scope="module")
def executed(request, tmp_path_factory):
    """The chains holding a notebook the selected tests read (``_needed``), side by side, into one
    runs folder; ``{name: (error or None, seconds, output notebook)}`` and ``_runs``."""
    from concurrent.futures import ThreadPoolExecutor

    _papermill()
    needed = _needed(request)
    chains = [c for c in CHAINS if needed & set(c)]
    base = tmp_path_factory.mktemp("notebooks")
    runs, outs = base / "runs", base / "out"
    outs.mkdir()
    env = dict(os.environ, SEARCHKIT_CACHE=str(base / "cache" / "embeddings.sqlite"))
    with ThreadPoolExecutor(len(chains)) as pool:
        parts = list(pool.map(lambda chain: _run_chain(chain, runs, outs, env), chains))
    results = {k: v for part in parts for k, v in part.items()}
    results["_runs"] = runs
    return results


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_headless(executed, name):
    error, seconds, out = executed[name]
    assert error is None, f"{name} failed after {seconds:.0f}s:\n{error}"
    nb = _load(out)
    outputs = [o for c in _code(nb) for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    if name != "05_export_and_verify":
        assert images, f"{name} drew no figure"


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_notebooks_share_run_folders(executed):
    runs = executed["_runs"]
    folders = sorted(p.name for p in runs.iterdir() if (p / "provenance.json").is_file())
    # 01, 03 and 04 measure mini dev under one config: one folder, written once and reused; 04 adds BM25 only,
    # 05 the tuned config it exports (the run folder the export records)
    assert len([f for f in folders if f.startswith("mini-dev-")]) == 3, folders
    assert sorted(p.name for p in (runs / "tasks-eval-dev").iterdir()) == ["bm25-dense", "fts5", "fts5-dense-rrf"]
    assert (runs / "tuned-fusion.json").is_file() and (runs / "tuned-no-answer.json").is_file()
    assert sorted(p.name for p in (runs / "exports").iterdir()) == ["tuned.v1.json"]
    verified = _load(executed["05_export_and_verify"][2])
    shown = "".join("".join(o.get("text", "")) for c in _code(verified) for o in c["outputs"])
    assert "identical: " in shown
    recorded = _load(runs / "exports" / "tuned.v1.json")["provenance"]["runs"]
    assert recorded, "the export records no run folder"


@pytest.mark.parametrize("name, parameters", [
    ("01_eval_overview", {"DATASET": "no-such-set"}),
    ("06_task_search", {"DATASET": "no-such-tasks"}),
])
def test_missing_dataset_stops_with_one_line(tmp_path, name, parameters):
    pm = _papermill()
    runs = tmp_path / "runs"
    with pytest.raises(pm.PapermillExecutionError) as err:
        _execute(pm, name, tmp_path / "out.ipynb", dict(parameters, EMBEDDER="hashing", RUNS=str(runs)))
    e = err.value
    assert e.ename == "InputError"
    assert e.evalue.startswith(f"DATASET '{parameters['DATASET']}': no dataset folder '{parameters['DATASET']}'")
    assert len(e.traceback) == 1 and "\n" not in e.traceback[0]  # one line, no traceback
    assert not runs.exists()  # nothing written


# --------------------------------------------------------------------------- issue 31 item 6


def _outputs(nb: dict) -> list[dict]:
    return [o for c in _code(nb) for o in c["outputs"]]


def _shown(nb: dict) -> str:
    """Everything a notebook printed or displayed as text or HTML."""
    parts = []
    for o in _outputs(nb):
        parts.append("".join(o.get("text", "")))
        data = o.get("data", {})
        parts.extend("".join(data.get(k, "")) for k in ("text/plain", "text/html"))
    return "\n".join(parts)


def _png_width(b64: str) -> int:
    import base64
    import struct

    raw = base64.b64decode(b64)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">I", raw[16:20])[0]


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_progress_bars_draw_as_widgets(executed):
    """ipywidgets is in the notebooks extra: tqdm.auto draws a widget, never "IProgress not found";
    02's sweep shows its progress."""
    for name in NAMES:
        assert "IProgress not found" not in _shown(_load(executed[name][2])), name
    widgets = [o for o in _outputs(_load(executed["02_tune_fusion"][2]))
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, "02's sweep shows no progress bar"


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_02_shipped_row_is_the_shipped_config_with_its_adaptive_model(executed):
    shown = _shown(_load(executed["02_tune_fusion"][2]))
    assert "shipped: wsum" in shown and "+ adaptive (bm25 share" in shown
    assert "not scored" not in shown and "(not in the grid)" not in shown.split("runner-up")[-1].split("RRF")[0]


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_figures_fit_1400_pixels(executed):
    for name in NAMES:
        for o in _outputs(_load(executed[name][2])):
            if "image/png" in o.get("data", {}):
                assert _png_width(o["data"]["image/png"]) <= 1400, name


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_04_names_columns_by_run_label(executed):
    nb = _load(executed["04_error_analysis"][2])
    html = [("".join(o["data"]["text/html"])) for o in _outputs(nb) if "text/html" in o.get("data", {})]
    comparison = next(h for h in html if "Δ " in h)
    assert ">shipped<" in comparison and ">bm25_only<" in comparison and ">Δ bm25_only<" in comparison
    assert "mini-dev-" not in comparison  # not the run folders' names
    deltas = next(h for h in html if ">delta<" in h)
    assert ">shipped<" in deltas and ">bm25_only<" in deltas and ">a<" not in deltas


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_05_reports_the_run_folders_it_exports(executed):
    import re

    shown = _shown(_load(executed["05_export_and_verify"][2]))
    m = re.search(r"reported on (\d+) run folder\(s\)", shown)
    assert m and int(m.group(1)) >= 1, shown[:400]


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_06_says_why_no_language_gets_a_star(executed):
    shown = _shown(_load(executed["06_task_search"][2]))
    assert "No language group can get a * here" in shown and "at least 0.0312" in shown, shown[:600]
    assert "pooled test over all" in shown


def test_03_default_datasets_give_curves():
    """03's defaults (mini and xquad-ru): every default dataset's split holds answerable and
    unanswerable queries, so each ROC / PR / reliability curve has both classes."""
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset

    nb = _load(NOTEBOOKS / "03_no_answer.ipynb")
    params: dict = {}
    exec("".join(next(c for c in _code(nb) if "parameters" in c["metadata"].get("tags", []))["source"]), params)
    assert len(params["DATASETS"]) >= 2 and "xquad-ru" in params["DATASETS"]
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        for name in params["DATASETS"]:
            try:
                path = resolve_dataset(name)
            except Exception as exc:  # ../shared/data absent on this machine
                pytest.skip(f"{name}: {exc}")
            ds = load_dataset(path, split=params["SPLIT"])
            assert {q.answerable for q in ds.queries} == {True, False}, name
    finally:
        os.chdir(cwd)


# --------------------------------------------------------------------------- issue 40 item 6: the API notebook


def _code_lines(nb: dict) -> list[str]:
    """The lines of code outside the parameters cell (no blank lines, no comment lines)."""
    out = []
    for cell in _code(nb):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        out += [ln for ln in "".join(cell["source"]).splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return out


def test_00_api_is_fifteen_lines_of_the_api():
    """A custom config evaluated on a BEIR folder and compared with a TREC run in at most 15 lines of code,
    through searchkit.api alone (and a figure)."""
    nb = _load(NOTEBOOKS / "00_api.ipynb")
    lines = _code_lines(nb)
    assert len(lines) <= 15, "\n".join(lines)
    imports = [ln for ln in lines if ln.startswith(("import ", "from "))]
    assert imports == ["from searchkit import api", "from searchkit.evaluate import plots"]
    params: dict = {}
    exec("".join(next(c for c in _code(nb) if "parameters" in c["metadata"].get("tags", []))["source"]), params)
    assert isinstance(params["CONFIG"], dict) and params["TREC_RUN"].endswith(".trec")
    root = Path(__file__).resolve().parents[1]
    assert (root / params["TREC_RUN"]).is_file() and (root / params["DATASET"] / "corpus.jsonl").is_file()


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_00_api_compares_the_config_with_the_trec_run(executed):
    nb = _load(executed["00_api"][2])
    html = [("".join(o["data"]["text/html"])) for o in _outputs(nb) if "text/html" in o.get("data", {})]
    comparison = html[0]
    for column in (">custom<", ">rank_bm25<", ">Δ rank_bm25<", ">CI rank_bm25<", ">d rank_bm25<", ">raw p rank_bm25<",
                   ">p rank_bm25<", ">sig rank_bm25<", ">nDCG@10<"):
        assert column in comparison, column
    shown = _shown(nb)
    assert "no AUROC comparison: rank_bm25 holds no no-answer figures" in shown
