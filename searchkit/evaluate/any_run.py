"""Any run a researcher has, as one comparable object (issue 40 item 3; SPEC E4): a searchkit run
folder or another system's TREC run file (Pyserini, Elasticsearch, ColBERT, ... output), for
``compare``, ``report`` and ``gate`` and the Python API (``searchkit.api``).

``load_any_run(path, dataset=..., split=..., label=..., metrics=...)`` returns a
``runs.RunFolder`` either way:

- a **run folder** (``searchkit eval --out``) is read as ``runs.load_run`` reads it; ``metrics``
  adds the ir_measures measures it lacks, computed from its ``run.trec`` against the qrels of the
  dataset it measured (``run_values.with_metrics``);
- a **TREC run file** (six columns: ``qid Q0 docid rank score tag``) is scored on ``dataset`` /
  ``split`` as ``eval`` scores a ranking (``trec_runs.evaluate_trec_run``: trec_eval's tie order,
  every query of the split counted, one the run does not rank scoring 0) and held in memory with its
  per-query rows, provenance and rankings. It has no weak-match probability, so no no-answer or
  missing-ID figures: ``compare`` leaves the AUROC comparison out and says so.

The two then compare alike: the same query set (dataset name, split and content hash), the same
per-query rows (``metrics.json``'s shape) and the same metric values a direct evaluation of the file
gives.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from searchkit.errors import DataError, InputError, SearchkitError
from searchkit.evaluate.datasets import Dataset, available_splits, load_dataset, resolve_dataset
from searchkit.evaluate.measures import metrics_option
from searchkit.evaluate.provenance import dataset_hash, now
from searchkit.evaluate.qrels_files import qrels_entries
from searchkit.evaluate.run_values import with_metrics
from searchkit.evaluate.runs import RunFolder, load_run
from searchkit.evaluate.trec import TrecRun, read_trec_run
from searchkit.evaluate.trec_runs import TREC_PATH, evaluate_trec_run

__all__ = ["TREC_RUN_FORMAT", "is_trec", "load_any_run", "load_any_runs", "open_dataset",
           "trec_file_provenance"]

TREC_RUN_FORMAT = "searchkit-trec-run/1"
"""The ``format`` of the provenance ``load_any_run`` gives a TREC run file (a run folder's is
``runs.RUN_FORMAT``)."""


def open_dataset(dataset: Dataset | str | os.PathLike[str], split: str | None = None) -> Dataset:
    """A loaded split: ``dataset`` itself when it is one (a ``Dataset``; ``split``, when given, must be
    its own), else the folder or name ``dataset`` names (``datasets.resolve_dataset``, as ``searchkit
    eval --dataset`` reads it: a plain BEIR folder, TREC qrels, searchkit's own format) loaded for
    ``split``. ``split`` None: ``dev`` where the folder has it, else its one split.

    Raises:
        InputError: ``split`` is not the split of the ``Dataset`` given.
        DataError: no such dataset or split, or a bad line (file and line named).
    """
    if isinstance(dataset, Dataset):
        if split is not None and split != dataset.split:
            raise InputError(f"split {split!r}: the dataset given is {dataset.name}'s {dataset.split!r} split; "
                                "load the split you mean", param="split")
        return dataset
    root = resolve_dataset(dataset)
    if split is None:
        named = {s for s, _ in qrels_entries(Path(root))}  # any entry: a qrels/dev.tsv that is no file is refused
        splits = available_splits(root)
        split = splits[0] if len(splits) == 1 and "dev" not in named else "dev"
    return load_dataset(root, split=split)


def _relative(path: Path) -> str:
    """A path relative to the working directory (provenance names no machine path where it can)."""
    try:
        return os.path.relpath(Path(path).resolve(), Path.cwd().resolve())
    except ValueError:
        return Path(path).name


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def trec_file_provenance(path: str | os.PathLike[str], run: TrecRun) -> dict[str, Any]:
    """What names a TREC run file in a run's provenance: ``run_file`` (relative to the working
    directory where it can be), ``run_sha256`` and the run's ``tags`` (``run``: its ``TrecRun``)."""
    return {"run_file": _relative(Path(path)), "run_sha256": _file_sha256(Path(path)), "tags": list(run.tags)}


def _trec_run(path: Path, dataset: Dataset | str | os.PathLike[str], split: str | None, label: str | None,
              metrics: str | Iterable[str] | None) -> RunFolder:
    choice = metrics_option(metrics)
    if choice.ragas_llm:
        raise InputError(f"{path}: a TREC run holds document ids only, no cards an LLM could judge; "
                            "ragas-llm scores need `searchkit eval`", param="metrics")
    run = read_trec_run(path)  # every bad line named, before the dataset is read
    ds = open_dataset(dataset, split)
    report = evaluate_trec_run(run, ds, metrics=choice.ranking)
    body = report.to_dict(with_queries=True)
    prov = {
        "format": TREC_RUN_FORMAT,
        "dataset": ds.name,
        "dataset_path": _relative(ds.path),
        "split": ds.split,
        "dataset_sha256": dataset_hash(ds),
        "counts": {"records": len(ds.records), "queries": len(ds.queries),
                   "answerable": sum(1 for q in ds.queries if q.answerable),
                   "unanswerable": sum(1 for q in ds.queries if not q.answerable)},
        "config_fingerprint": report.config_fingerprint,
        "path": TREC_PATH,
        **trec_file_provenance(path, run),
        "depth": report.depth,
        "split_counts": dict(report.counts),
        "time": now(),
    }
    return RunFolder(path, body, prov, {}, label=label, rankings=report.run(), source="trec", dataset=ds)


def load_any_run(path: str | os.PathLike[str], *, dataset: Any = None,
                 split: str | None = None,
                 label: str | None = None, metrics: str | Iterable[str] | None = None) -> RunFolder:
    """A run folder or a TREC run file as the ``RunFolder`` that ``compare.compare_runs``,
    ``report.build_report``, ``gate`` and the notebooks' tables take.

    Args:
        path: a run folder (``searchkit eval --out``: ``metrics.json``, ``run.trec``, ...) or a TREC run
            file (any other file: six whitespace-separated columns ``qid Q0 docid rank score tag``; the
            ``rank`` column is ignored, documents rank by score, ties as trec_eval breaks them).
        dataset: what a TREC run file is scored against: a loaded ``Dataset`` or a dataset folder or
            name (``open_dataset``: plain BEIR, TREC qrels, searchkit's format). Required for a TREC
            file; not used for a run folder (its provenance names what it measured, and ``compare`` /
            ``report`` check that runs share one query set).
        split: the split of ``dataset`` (None: the ``Dataset``'s own, else ``dev``, else the folder's
            one split).
        label: the run's name in tables and comparisons (``RunFolder.name``); None: the folder's or
            the file's name.
        metrics: ``eval --metrics`` names (a comma list or an iterable: ir_measures measures,
            ``default``, ``ragas``). A TREC file is scored with exactly these ir_measures measures
            (default nDCG@10, RR@10, R@1/5/10/20/100, as ``eval``); a run folder gets those it lacks
            computed from its ``run.trec``. ragas' ID-based scores of either are computed when
            ``compare`` asks for them.

    Returns:
        A ``RunFolder``. For a TREC file: ``path`` the file, ``source`` ``"trec"``, ``metrics`` what
        ``eval --json --queries`` gives for the same rankings (headline, breakdowns, per-query rows
        with ``answer_probability`` NaN; ``no_answer`` and ``missing_id`` empty; ``counts`` adds
        ``unranked_queries``, ``run_queries_outside_split``, ``unknown_documents``), ``provenance``
        (``format`` ``TREC_RUN_FORMAT``, dataset name / path / split / sha256, ``config_fingerprint``
        ``trec:<content hash>``, ``path`` ``"trec"``, ``run_file``, ``run_sha256``, ``tags``),
        ``config`` ``{}`` (no searchkit config made it), ``rankings`` and ``dataset`` the split.

    Raises:
        InputError: a TREC file without ``dataset`` (one line naming the file), a split that is not
            the given ``Dataset``'s, ragas-llm asked of a TREC file.
        DataError: ``path`` does not exist, or is a folder that is not a run folder.
        DataError: the file holds a bad line (``file:line: why``, content never quoted).
        DataError: the dataset or split cannot be read.
        InputError: a bad metric name. InputError: a measure a run folder lacks cannot be computed.
    """
    p = Path(path)
    if p.is_dir():
        run = load_run(p)
        if metrics is not None:
            run = replace(run, metrics=with_metrics(run, metrics_option(metrics).ranking))
        return replace(run, label=label) if label else run
    if not p.exists():
        raise DataError(f"{str(p)!r}: no such run folder or TREC run file", path=p)
    if dataset is None:
        raise InputError(f"{p}: a TREC run file is scored against a dataset split; give its dataset "
                            "(--dataset NAME or folder, and --split)", param="dataset")
    return _trec_run(p, dataset, split, label, metrics)


def is_trec(run: RunFolder) -> bool:
    """Whether a run holds another system's TREC rankings: a TREC run file (``source`` ``trec``) or a
    run folder ``eval --run FILE --out`` wrote from one (measured path ``trec``). No searchkit config
    made it, and it has no weak-match probability."""
    return getattr(run, "source", "folder") == "trec" or run.provenance.get("path") == TREC_PATH


def _folder_dataset(run: RunFolder) -> Dataset | None:
    """The dataset split a run folder measured, as its provenance names it (``dataset_path``, else the
    name), for scoring a TREC run file given beside it; None where it cannot be read here."""
    prov = run.provenance
    for where in (prov.get("dataset_path"), prov.get("dataset")):
        if isinstance(where, str) and where:
            try:
                ds = open_dataset(where, str(prov.get("split")))
            except (SearchkitError, OSError, ValueError):
                continue
            if dataset_hash(ds) == prov.get("dataset_sha256"):
                return ds
    return None


def load_any_runs(paths: Sequence[str | os.PathLike[str]], *, dataset: Dataset | str | os.PathLike[str] | None = None,
                  split: str | None = None,
                  labels: Sequence[str] | None = None, metrics: str | Iterable[str] | None = None) -> list[RunFolder]:
    """Runs given together (``compare``, ``report``): run folders and TREC run files, in order.

    A TREC run file is scored on ``dataset`` / ``split`` where given, else on the dataset split the
    first run folder among ``paths`` measured (found from its provenance, with its content hash), so
    ``compare runs/ours theirs.trec`` needs no ``--dataset``. ``labels`` name the runs in order (the
    first ``len(labels)`` of them; the others keep their folder or file names).

    Raises:
        InputError: more labels than runs, an empty label, ``split`` without ``dataset``, or a TREC
            run file with no dataset to be scored on (one line naming the file and ``--dataset``).
        DataError, DataError, DataError, InputError: as ``load_any_run``.
    """
    labels = list(labels or [])
    if len(labels) > len(paths):
        raise InputError(f"{len(labels)} labels for {len(paths)} runs: --label names the runs in order, at most "
                            "one each", param="label")
    if split is not None and dataset is None:
        raise InputError(f"--split {split[:40]!r} names a split of --dataset; give --dataset too", param="split")
    if any(not str(lab).strip() for lab in labels):
        raise InputError("an empty --label: give each run a name", param="label")
    given = [Path(p) for p in paths]
    folders = {i: load_any_run(p, label=labels[i] if i < len(labels) else None, metrics=metrics)
               for i, p in enumerate(given) if p.is_dir()}
    scored_on = dataset
    if scored_on is None and len(folders) < len(given) and folders:
        scored_on = _folder_dataset(folders[min(folders)])
    out = []
    for i, p in enumerate(given):
        if i in folders:
            out.append(folders[i])
            continue
        label = labels[i] if i < len(labels) else None
        if scored_on is None and p.exists() and dataset is None:
            raise InputError(f"{p}: a TREC run file is scored against a dataset split; give its dataset (--dataset "
                                "NAME or folder, and --split), or a run folder of that split beside it", param="dataset")
        out.append(load_any_run(p, dataset=scored_on, split=split if dataset is not None else None, label=label,
                                metrics=metrics))
    return out
