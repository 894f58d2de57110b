"""Where datasets are: a folder path or a bare name (``datasets/``, then ``../shared/data``), and the
error of a dataset that cannot be used (``DataError``).

Part of ``searchkit.evaluate.datasets`` (which re-exports every name); split out so that no module
is over 600 lines (issue 29 item 5).
"""
from __future__ import annotations

import os
from pathlib import Path

from searchkit.errors import DataError

__all__ = ["DATASETS_ENV", "SHARED_ENV", "available_datasets", "datasets_dir", "resolve_dataset",
           "shared_data_dir"]


def _r(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut short: for what the user typed (a split, a dataset name), never for
    what a file holds (see ``_what``)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


DATASETS_ENV = "SEARCHKIT_DATASETS"
SHARED_ENV = "SEARCHKIT_SHARED_DATA"


def datasets_dir() -> Path:
    """Our own datasets folder: ``$SEARCHKIT_DATASETS``, else ``datasets/`` in the working directory
    (the repository root when run as README.md says). Nothing is looked up inside the package."""
    env = os.environ.get(DATASETS_ENV)
    return Path(env).expanduser() if env else Path.cwd() / "datasets"


def shared_data_dir() -> Path | None:
    """The real public dev sets: ``$SEARCHKIT_SHARED_DATA``, else ``../shared/data`` from the working
    directory; None when that folder is absent."""
    p = _shared_candidate()
    return p if p.is_dir() else None


def _shared_candidate() -> Path:
    env = os.environ.get(SHARED_ENV)
    return Path(env).expanduser() if env else Path.cwd().parent / "shared" / "data"


def _dataset_folders(parent: Path | None) -> dict[str, Path]:
    if parent is None or not parent.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(parent.iterdir())
        if p.is_dir() and (p / "corpus.jsonl").is_file() and (p / "queries.jsonl").is_file()
    }


def available_datasets() -> dict[str, Path]:
    """Bare names ``resolve_dataset`` accepts: ``datasets/`` first, then the shared data folder."""
    found = _dataset_folders(shared_data_dir())
    found.update(_dataset_folders(datasets_dir()))
    return dict(sorted(found.items()))


def resolve_dataset(name_or_path: str | os.PathLike) -> Path:
    """A dataset folder from a path or a bare name (looked up in ``datasets/``, then ``../shared/data``).

    Raises:
        DataError: nothing found; the message lists the available names.
    """
    p = Path(name_or_path)
    if p.is_dir():
        return p
    raw = os.fspath(name_or_path)
    is_bare = raw and os.sep not in raw and (os.altsep is None or os.altsep not in raw) and raw not in (".", "..")
    if is_bare:
        for parent in (datasets_dir(), shared_data_dir()):
            if parent is not None and (parent / raw).is_dir():
                return parent / raw
    names = available_datasets()
    shared = shared_data_dir()
    shared_note = (
        f"shared data folder: {shared}" if shared is not None
        else f"the shared data folder {_shared_candidate()} is absent (set ${SHARED_ENV} to point at it)"
    )
    listing = ", ".join(names) if names else "none"
    raise DataError(
        f"no dataset folder {_r(raw)}: give a folder path or one of the names: {listing} "
        f"(looked in {datasets_dir()}; {shared_note})", reason="dataset"
    )
