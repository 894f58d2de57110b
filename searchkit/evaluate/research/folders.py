"""Run folders a notebook evaluates into, or reuses when their origin is the same.

Part of ``searchkit.evaluate.research`` (its docstring says what the notebooks call); import
from there.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from searchkit.errors import DataError
from searchkit.evaluate.any_run import open_dataset
from searchkit.evaluate.metrics import RANKING_METRICS
from searchkit.evaluate.provenance import dataset_hash, git_commit, package_versions
from searchkit.evaluate.run import evaluate_dataset
from searchkit.evaluate.runs import load_run, write_run
from searchkit.evaluate.datasets import Dataset
from searchkit.evaluate.run import EvalReport
from searchkit.evaluate.runs import RunFolder
from searchkit.evaluate.task_eval import PATH, TaskSet, evaluate_task_search, load_task_set

if TYPE_CHECKING:
    from searchkit.config import SearchConfig
    from searchkit.index.embedding import Embedder
    from searchkit.searcher import Searcher

# --------------------------------------------------------------------------- run folders


def _same_origin(prov: Mapping[str, Any], dataset_sha256: str, config: SearchConfig, path: str) -> bool:
    """Whether a run folder's provenance says it measured this dataset content under this config,
    on this commit with these package versions."""
    return (prov.get("dataset_sha256") == dataset_sha256 and prov.get("config_fingerprint") == config.fingerprint()
            and prov.get("path", "searcher") == path and prov.get("git") == git_commit()
            and prov.get("versions") == package_versions())


def _reuse(target: Path, dataset_sha256: str, config: SearchConfig, path: str) -> RunFolder | None:
    if not (target / "provenance.json").is_file():
        return None
    try:
        run = load_run(target)
    except DataError:  # load_run raises no other
        return None
    return run if _same_origin(run.provenance, dataset_sha256, config, path) else None


def _run_name(dataset: str, split: str, config: SearchConfig, suffix: str = "") -> str:
    return f"{dataset}-{split}-{config.fingerprint()[:10]}{suffix}"


def measure(dataset: Dataset | TaskSet, config: SearchConfig, *, as_tool: bool = False,
            embedder: Embedder | None = None, searcher: Searcher | None = None,
            metrics: Sequence[str] = RANKING_METRICS, show_progress: bool = False) -> EvalReport:
    """The ``EvalReport`` of a loaded split under ``config``: ``run.evaluate_dataset`` for a dataset
    (what ``searchkit eval`` runs: the same Searcher, ``metrics`` and, with ``as_tool``, the history
    tool's path), ``task_eval.evaluate_task_search`` for a labelled task-store set (its default
    metrics; ``metrics`` beyond them are for ``run_values.with_metrics``)."""
    if isinstance(dataset, TaskSet):
        return evaluate_task_search(dataset, config, embedder=embedder)
    return evaluate_dataset(dataset, config, searcher=searcher, show_progress=show_progress, as_tool=as_tool,
                            embedder=embedder, metrics=metrics)


def run_folder(dataset: Dataset | TaskSet, config: SearchConfig, runs_dir: str | os.PathLike[str], *,
               name: str | None = None, reuse: bool = True, as_tool: bool = False,
               embedder: Embedder | None = None, searcher: Searcher | None = None,
               metrics: Sequence[str] = RANKING_METRICS,
               show_progress: bool = False) -> tuple[RunFolder, EvalReport | None]:
    """``ensure_run`` for a loaded split (a ``Dataset`` or a ``TaskSet``): ``(RunFolder, EvalReport)``,
    the report None where the folder was reused."""
    tasks = isinstance(dataset, TaskSet)
    path = PATH if tasks else ("tool" if as_tool else "searcher")
    target = Path(runs_dir) / (name or _run_name(dataset.name, dataset.split, config, "-tool" if as_tool else ""))
    if reuse:
        found = _reuse(target, dataset_hash(dataset), config, path)
        if found is not None:
            return found, None
    report = measure(dataset, config, as_tool=as_tool, embedder=embedder, searcher=searcher, metrics=metrics,
                     show_progress=show_progress)
    return load_run(write_run(target, report, dataset, config)), report


def ensure_run(
    dataset: str | os.PathLike[str] | Dataset,
    split: str | None,
    config: SearchConfig,
    runs_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    reuse: bool = True,
    as_tool: bool = False,
    embedder: Embedder | None = None,
) -> RunFolder:
    """The run folder of ``dataset`` / ``split`` under ``config`` in ``runs_dir`` (what
    ``searchkit eval --dataset D --split S --config C --out runs_dir/NAME`` writes), as a
    ``RunFolder``. ``dataset``: a name or folder (``any_run.open_dataset``; ``split`` None: ``dev``,
    else its one split) or a loaded split.

    With ``reuse`` an existing folder of that name is read instead of evaluating again when its
    provenance matches: the same dataset content hash, config fingerprint, measured path, git
    commit (and dirty flag) and package versions. Otherwise the split is evaluated and the folder
    (re)written atomically. ``name`` defaults to ``DATASET-SPLIT-<config fingerprint>`` (``-tool``
    with ``as_tool``).
    """
    ds = open_dataset(dataset, split)
    return run_folder(ds, config, runs_dir, name=name, reuse=reuse, as_tool=as_tool, embedder=embedder)[0]


def ensure_task_run(
    task_set: str | os.PathLike[str] | TaskSet,
    split: str,
    config: SearchConfig,
    runs_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    reuse: bool = True,
    embedder: Embedder | None = None,
) -> RunFolder:
    """``ensure_run`` for a labelled task-store set (``task_eval.evaluate_task_search``): the task
    tool's answers under ``config`` (its ``tasks.retrievers``) as a run folder. ``task_set``: a name,
    a folder or a loaded ``TaskSet``."""
    ts = task_set if isinstance(task_set, TaskSet) else load_task_set(task_set, split)
    return run_folder(ts, config, runs_dir, name=name, reuse=reuse, embedder=embedder)[0]


def find_runs(runs_dir: str | os.PathLike[str], config: SearchConfig) -> list[Path]:
    """Run folders directly under ``runs_dir`` written under ``config`` (same fingerprint), by name.
    A folder being written or replaced (``.NAME.*`` beside it) or one that cannot be read is
    passed over."""
    root = Path(runs_dir)
    out = []
    for p in sorted(root.iterdir()) if root.is_dir() else ():
        if p.name.startswith(".") or not (p / "provenance.json").is_file():
            continue
        try:
            run = load_run(p)
        except (DataError, OSError):
            continue
        if run.provenance.get("config_fingerprint") == config.fingerprint():
            out.append(p)
    return out


def reported_runs(config: SearchConfig, datasets: Iterable[str], split: str, runs_dir: str | os.PathLike[str], *,
                  reuse: bool = True, embedder: Embedder | None = None) -> list[Path]:
    """The run folders an export of ``config`` records as the figures it was reported on
    (``searchkit config export --runs``): a run of ``config`` on each of ``datasets`` / ``split``
    (``ensure_run``: reused from ``runs_dir`` when there, else evaluated now), then every other run
    folder of the same config directly in ``runs_dir`` (``find_runs``: those notebooks 01-04
    wrote with ``CONFIG`` set to it). A tuned config that no notebook evaluated has none until
    this runs it."""
    made = [ensure_run(d, split, config, runs_dir, reuse=reuse, embedder=embedder).path for d in datasets]
    found = find_runs(runs_dir, config)
    return list(dict.fromkeys([*made, *found]))


