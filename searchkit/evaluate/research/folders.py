"""Run folders a notebook evaluates into, or reuses when their origin is the same.

Part of ``searchkit.evaluate.research`` (its docstring says what the notebooks call); import
from there.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.provenance import dataset_hash, git_commit, package_versions
from searchkit.evaluate.run import evaluate_dataset
from searchkit.evaluate.runs import RunFolderError, load_run, write_run
from searchkit.evaluate.task_eval import PATH, evaluate_task_search, load_task_set

# --------------------------------------------------------------------------- run folders


def _same_origin(prov: Mapping[str, Any], dataset_sha256: str, config: Any, path: str) -> bool:
    """Whether a run folder's provenance says it measured this dataset content under this config,
    on this commit with these package versions."""
    return (prov.get("dataset_sha256") == dataset_sha256 and prov.get("config_fingerprint") == config.fingerprint()
            and prov.get("path", "searcher") == path and prov.get("git") == git_commit()
            and prov.get("versions") == package_versions())


def _reuse(target: Path, dataset_sha256: str, config: Any, path: str) -> Any:
    if not (target / "provenance.json").is_file():
        return None
    try:
        run = load_run(target)
    except RunFolderError:
        return None
    return run if _same_origin(run.provenance, dataset_sha256, config, path) else None


def _run_name(dataset: str, split: str, config: Any, suffix: str = "") -> str:
    return f"{dataset}-{split}-{config.fingerprint()[:10]}{suffix}"


def ensure_run(
    dataset: str,
    split: str,
    config: Any,
    runs_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    reuse: bool = True,
    as_tool: bool = False,
    embedder: Any = None,
) -> Any:
    """The run folder of ``dataset`` / ``split`` under ``config`` in ``runs_dir`` (what
    ``searchkit eval --dataset D --split S --config C --out runs_dir/NAME`` writes), as a
    ``RunFolder``.

    With ``reuse`` an existing folder of that name is read instead of evaluating again when its
    provenance matches: the same dataset content hash, config fingerprint, measured path, git
    commit (and dirty flag) and package versions. Otherwise the split is evaluated and the folder
    (re)written atomically. ``name`` defaults to ``DATASET-SPLIT-<config fingerprint>`` (``-tool``
    with ``as_tool``).
    """
    ds = load_dataset(resolve_dataset(dataset), split=split)
    target = Path(runs_dir) / (name or _run_name(ds.name, split, config, "-tool" if as_tool else ""))
    if reuse:
        found = _reuse(target, dataset_hash(ds), config, "tool" if as_tool else "searcher")
        if found is not None:
            return found
    report = evaluate_dataset(ds, config, show_progress=False, as_tool=as_tool, embedder=embedder)
    return load_run(write_run(target, report, ds, config))


def ensure_task_run(
    task_set: str,
    split: str,
    config: Any,
    runs_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    reuse: bool = True,
    embedder: Any = None,
) -> Any:
    """``ensure_run`` for a labelled task-store set (``task_eval.evaluate_task_search``): the task
    tool's answers under ``config`` (its ``tasks.retrievers``) as a run folder."""
    ts = load_task_set(task_set, split)
    target = Path(runs_dir) / (name or _run_name(ts.name, split, config))
    if reuse:
        found = _reuse(target, dataset_hash(ts), config, PATH)
        if found is not None:
            return found
    report = evaluate_task_search(ts, config, embedder=embedder)
    return load_run(write_run(target, report, ts, config))


def find_runs(runs_dir: str | os.PathLike[str], config: Any) -> list[Path]:
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
        except (RunFolderError, OSError):
            continue
        if run.provenance.get("config_fingerprint") == config.fingerprint():
            out.append(p)
    return out


def reported_runs(config: Any, datasets: Iterable[str], split: str, runs_dir: str | os.PathLike[str], *,
                  reuse: bool = True, embedder: Any = None) -> list[Path]:
    """The run folders an export of ``config`` records as the figures it was reported on
    (``searchkit config export --runs``): a run of ``config`` on each of ``datasets`` / ``split``
    (``ensure_run``: reused from ``runs_dir`` when there, else evaluated now), then every other run
    folder of the same config directly in ``runs_dir`` (``find_runs``: those notebooks 01-04
    wrote with ``CONFIG`` set to it). A tuned config that no notebook evaluated has none until
    this runs it."""
    made = [ensure_run(d, split, config, runs_dir, reuse=reuse, embedder=embedder).path for d in datasets]
    found = find_runs(runs_dir, config)
    return list(dict.fromkeys([*made, *found]))


