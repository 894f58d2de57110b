"""Run folders: one eval, written once, compared later (SPEC E4-E6).

``searchkit eval --out runs/NAME`` writes::

    runs/NAME/metrics.json      what ``eval --json --queries`` prints (per-query values included)
    runs/NAME/run.trec          the rankings, TREC six columns (qid Q0 docid rank score tag), with the
                                final scores (never tied: see ``searchkit.evaluate.trec``)
    runs/NAME/config.json       the SearchConfig the run used
    runs/NAME/provenance.json   dataset, split content hash, counts, fingerprints, git, versions, time

The folder is written beside its destination under a temporary name and renamed into place, so a
reader never sees half a run. An existing ``--out`` is replaced only when it is an empty folder or
a run folder written here (its ``provenance.json`` carries ``RUN_FORMAT`` and it holds nothing but
run files); anything else is refused, naming the path. The JSON files are strict JSON (an undefined
figure is ``null``; ``load_run`` reads it, and a bare ``NaN`` of an older folder, as ``nan``).
``find_runs`` lists the run folders under a folder (``searchkit runs ls``).
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from searchkit import strict_json
from searchkit.errors import DataError
from searchkit.evaluate.provenance import provenance
from searchkit.evaluate.trec import run_text
from searchkit.util import problem_of, make_folders_private, read_json_file

if TYPE_CHECKING:
    from searchkit.config import SearchConfig
    from searchkit.evaluate.datasets import Dataset
    from searchkit.evaluate.run import EvalReport
    from searchkit.evaluate.task_eval import TaskSet

__all__ = ["HEADLINE", "RUN_FILES", "RUN_FORMAT", "RunFolder", "RunSummary", "check_run_target",
           "find_runs", "load_run", "trec_text", "write_run"]

RUN_FORMAT = "searchkit-run/1"
RUN_FILES: tuple[str, ...] = ("metrics.json", "run.trec", "config.json", "provenance.json")
OPTIONAL_FILES: tuple[str, ...] = ("ragas.json",)


@dataclass(frozen=True)
class RunFolder:
    """A run folder as read back: its metrics (with per-query rows), provenance and config.

    The same object stands for a run that is not a folder of ours (``searchkit.evaluate.any_run``):
    a TREC run file scored on a dataset split (``source`` ``trec``; ``path`` the file, ``config``
    empty, its rankings in ``rankings``) or an evaluation kept in memory (``source`` ``memory``;
    ``searchkit.api.evaluate``). ``compare``, ``report`` and the notebooks' tables read any of them."""

    path: Path
    metrics: Mapping[str, Any]
    provenance: Mapping[str, Any]
    config: Mapping[str, Any]
    label: str | None = None
    """The run's name in tables and comparisons; None: the folder's (or file's) name."""
    rankings: Mapping[str, Mapping[str, float]] | None = None
    """``{query id: {doc id: score}}`` of a run held in memory (ids as the dataset spells them, each
    query's documents in the order trec_eval ranks them); None: the folder's ``run.trec``."""
    source: str = "folder"
    """``folder`` (a run folder written by ``write_run``), ``trec`` (a TREC run file) or ``memory``."""
    dataset: Any = field(default=None, compare=False, repr=False)
    """The loaded split the run was measured on, where it is at hand (a TREC run, an evaluation);
    None: found from the provenance when needed (``run_values``)."""

    @property
    def name(self) -> str:
        return self.label or self.path.name

    @property
    def queries(self) -> list[Mapping[str, Any]]:
        """The per-query rows of ``metrics.json``."""
        return list(self.metrics.get("queries") or [])

    def per_query(self) -> dict[str, dict[str, float]]:
        """``{query_id: {metric: value}}`` over the judged (answerable) queries."""
        return {q["id"]: dict(q["metrics"]) for q in self.queries if q.get("metrics") is not None}

    @property
    def query_set(self) -> tuple[str, str, str]:
        """``(dataset, split, dataset_sha256)``: runs compare only when these are equal."""
        p = self.provenance
        return (str(p.get("dataset")), str(p.get("split")), str(p.get("dataset_sha256")))


def _is_run_folder(path: Path) -> bool:
    try:
        names = {e.name for e in os.scandir(path)}
    except OSError:
        return False
    if not names or not names <= set(RUN_FILES) | set(OPTIONAL_FILES) or "provenance.json" not in names:
        return False

    try:
        prov = read_json_file(path / "provenance.json")
    except (OSError, DataError):  # DataError: a FIFO, bad JSON, too deep
        return False
    return isinstance(prov, dict) and prov.get("format") == RUN_FORMAT


def check_run_target(out: str | os.PathLike[str]) -> Path:
    """Refuse an ``--out`` that is not safe to (re)write; return it.

    Safe: absent (parents are created), an empty folder, or an earlier run folder. Refused: a
    symbolic link, a file, a folder holding anything else.
    """
    path = Path(out).expanduser()
    if path.is_symlink():
        raise DataError(f"--out {str(path)!r} is a symbolic link; give a real folder")
    if not path.exists():
        return path
    if not path.is_dir():
        raise DataError(f"--out {str(path)!r} exists and is not a folder; refusing to replace it")
    try:
        empty = next(os.scandir(path), None) is None
    except OSError as exc:
        raise DataError(f"--out {str(path)!r} cannot be read: {exc.strerror}") from None
    if empty or _is_run_folder(path):
        return path
    raise DataError(
        f"--out {str(path)!r} is a folder that holds other files, not a searchkit run folder; "
        "give a new or empty folder (an earlier run folder is replaced)"
    )


def trec_text(run: Mapping[str, Mapping[str, float]], tag: str) -> str:
    """A run ``{query_id: {doc_id: score}}`` as TREC six-column lines, ranks from 1, best first, the
    scores the run's own made strictly decreasing so that every reader ranks as the run does
    (``searchkit.evaluate.trec.run_text``). Queries without results have no line."""
    return run_text(run, tag)


def _dump(obj: object) -> str:
    """Strict JSON (an undefined figure is ``null``, never a bare ``NaN``; issue 31 item 2)."""
    return strict_json.dumps(obj) + "\n"


class _NoConfig:
    """What made a run's rankings where no searchkit config did (a TREC run file): its fingerprint."""

    def __init__(self, fingerprint: str) -> None:
        self._fingerprint = fingerprint

    def fingerprint(self) -> str:
        return self._fingerprint

    def index_fingerprint(self) -> None:
        return None


def write_run(
    out: str | os.PathLike[str],
    report: EvalReport,
    dataset: Dataset | TaskSet,
    config: SearchConfig | None,
    *,
    metrics: Mapping[str, Any] | None = None,
    extra_files: Mapping[str, Any] | None = None,
    extra_provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``report`` (an ``EvalReport`` of ``dataset`` under ``config``) as a run folder at
    ``out``, atomically. ``metrics`` replaces the default ``report.to_dict(with_queries=True)``
    (e.g. with ragas figures added); ``extra_files`` maps an optional file name
    (``OPTIONAL_FILES``) to a JSON-able value; ``extra_provenance`` is added to ``provenance.json``.
    ``config`` None: no searchkit config made the rankings (``eval --run``: another system's TREC
    run file, ``report.path`` ``trec``): ``config.json`` is ``{}`` and the provenance's
    ``config_fingerprint`` the report's (``trec:<content hash>``). Returns the folder.

    Raises:
        DataError: ``out`` is not safe to write (see ``check_run_target``).
    """
    path = check_run_target(out)
    for name in extra_files or {}:
        if name not in OPTIONAL_FILES:
            raise ValueError(f"unknown run file {name!r}; optional files: {', '.join(OPTIONAL_FILES)}")
    body = dict(metrics) if metrics is not None else report.to_dict(with_queries=True)
    prov = provenance(dataset, config if config is not None else _NoConfig(report.config_fingerprint), extra={
        "format": RUN_FORMAT,
        "path": report.path,
        "depth": report.depth,
        "split_counts": dict(report.counts),
        **dict(extra_provenance or {}),
    })
    files = {
        "metrics.json": _dump(body),
        "run.trec": trec_text(report.run(), tag=path.name or "searchkit"),
        "config.json": _dump({}) if config is None else config.to_json() if hasattr(config, "to_json") else _dump(config),
        "provenance.json": _dump(prov),
    }
    files.update({name: _dump(value) for name, value in (extra_files or {}).items()})

    parent = path.parent
    make_folders_private(parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent))
    try:
        for name, text in files.items():
            # owner-only whatever the umask: query texts and rankings may be private (issue 27)
            fd = os.open(tmp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text if text.endswith("\n") else text + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o700)
        old = None
        if path.exists():
            check_run_target(path)  # still ours (or empty) just before the switch
            old = parent / f".{path.name}.old-{uuid.uuid4().hex[:8]}"
            os.replace(path, old)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return path


def load_run(path: str | os.PathLike[str]) -> RunFolder:
    """Read a run folder written by ``write_run``.

    Raises:
        DataError: the path is not a run folder, or a file is missing or damaged.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise DataError(f"{str(folder)!r} is not a run folder (no such folder); write one with `searchkit eval --out`")
    parts: dict[str, Any] = {}
    for name in ("metrics.json", "provenance.json", "config.json"):
        f = folder / name
        if not f.exists():
            raise DataError(f"{str(folder)!r} is not a run folder (no {name}); write one with `searchkit eval --out`")
        try:
            parts[name] = read_json_file(f)  # a regular file only: a FIFO is refused, never waited on
        except DataError as exc:
            raise DataError(f"{f}: unreadable ({problem_of(exc)})") from None
        except OSError as exc:
            raise DataError(f"{f}: unreadable ({exc.strerror or type(exc).__name__})") from None
        if not isinstance(parts[name], dict):
            raise DataError(f"{f}: expected a JSON object")
    if parts["provenance.json"].get("format") != RUN_FORMAT:
        raise DataError(f"{folder / 'provenance.json'}: not a {RUN_FORMAT} run folder")
    problem = metrics_problem(parts["metrics.json"])
    if problem:
        raise DataError(f"{folder / 'metrics.json'}: {problem}; rewrite the run with `searchkit eval --out`")
    return RunFolder(folder, _nan_for_null(parts["metrics.json"]), parts["provenance.json"], parts["config.json"])


def _nan_for_null(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """``metrics.json`` as read, with an undefined figure (``null`` in a strict file, ``NaN`` in
    one written before issue 31) as ``nan`` in the headline, no-answer, missing-ID and breakdown
    figures, so readers compute with floats whichever way the file spelled it."""
    def figures(obj: object) -> object:
        return {k: (math.nan if v is None else v) for k, v in obj.items()} if isinstance(obj, dict) else obj

    out = dict(metrics)
    for key in ("metrics", "no_answer", "missing_id"):
        if key in out:
            out[key] = figures(out[key])
    for key in _BREAKDOWN_KEYS:
        if isinstance(out.get(key), dict):
            out[key] = {g: figures(v) for g, v in out[key].items()}
    if isinstance(out.get("queries"), list) and any(isinstance(q, dict) and q.get("answer_probability", 0) is None
                                                   for q in out["queries"]):  # a TREC run's rows
        out["queries"] = [{**q, "answer_probability": math.nan} if q.get("answer_probability", 0) is None else q
                          for q in out["queries"]]
    return out


_BREAKDOWN_KEYS = ("by_lang", "by_category", "by_kind", "by_kinds_filter")


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _figures(v: object) -> bool:
    """A ``{name: number or null}`` object."""
    return isinstance(v, dict) and all(isinstance(k, str) and (x is None or _number(x)) for k, x in v.items())


def metrics_problem(metrics: Mapping[str, Any]) -> str | None:
    """What makes a ``metrics.json`` (``eval --json --queries``, a run folder's) unusable by
    ``compare``, ``report``, ``gate --run`` and ``tune``, in words naming the part and never quoting
    it; None when it has the shape ``eval`` writes: ``queries`` a list of objects, each with a
    string ``id``, a boolean ``answerable``, ``metrics`` null or ``{name: number}``, a number
    ``answer_probability`` (null in a TREC run's: ``path`` ``trec``), strings (or null) for ``lang`` /
    ``category`` and lists of strings for
    ``kinds`` / ``relevant_kinds``; the headline ``metrics``, ``no_answer`` and breakdowns objects of
    figures (issue 27, item 13)."""
    rows = metrics.get("queries")
    if not isinstance(rows, list):
        return "no per-query rows ('queries' is not a list)"
    for key in ("metrics", "no_answer", "missing_id", "counts"):
        if key in metrics and not _figures(metrics[key]):
            return f"'{key}' is not an object of numbers"
    for key in _BREAKDOWN_KEYS:
        groups = metrics.get(key)
        if groups is not None and not (isinstance(groups, dict) and all(_figures(g) for g in groups.values())):
            return f"'{key}' is not an object of groups of numbers"
    seen: set[str] = set()
    trec = metrics.get("path") == "trec"  # another system's TREC run (eval --run): no weak-match probability
    for i, q in enumerate(rows):
        where = f"queries[{i}]"
        if not isinstance(q, dict):
            return f"{where} is not an object"
        if not isinstance(q.get("id"), str) or q["id"] in seen:
            return f"{where} has no string 'id' of its own"
        seen.add(q["id"])
        if not isinstance(q.get("answerable"), bool):
            return f"{where}.answerable is not true or false"
        if q.get("metrics") is not None and not (_figures(q["metrics"]) and all(
                x is not None for x in q["metrics"].values())):
            return f"{where}.metrics is not an object of numbers"
        if not _number(q.get("answer_probability")) and not (q.get("answer_probability") is None and trec):
            return f"{where}.answer_probability is not a number"
        for key in ("lang", "category"):
            if q.get(key) is not None and not isinstance(q[key], str):
                return f"{where}.{key} is not a string"
        for key in ("kinds", "relevant_kinds", "ranking"):
            if q.get(key) is not None and not (isinstance(q[key], list) and all(isinstance(x, str) for x in q[key])):
                return f"{where}.{key} is not a list of strings"
    return None


# -- listing run folders (``searchkit runs ls``; issue 31 item 7) ---------------------------------

HEADLINE: tuple[str, ...] = ("nDCG@10", "RR@10", "AUROC")
"""The figures ``runs ls`` shows for each run (AUROC from ``no_answer``)."""


@dataclass(frozen=True)
class RunSummary:
    """One run folder as ``runs ls`` lists it."""

    path: Path
    dataset: str
    split: str
    config_fingerprint: str
    measured: str
    time: str
    queries: int | None
    headline: Mapping[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "dataset": self.dataset, "split": self.split,
                "config_fingerprint": self.config_fingerprint, "measured": self.measured, "time": self.time,
                "queries": self.queries, "headline": dict(self.headline)}


def _summary(run: RunFolder) -> RunSummary:
    m, p = run.metrics, run.provenance
    figures = {**(m.get("metrics") or {}), "AUROC": (m.get("no_answer") or {}).get("AUROC")}
    headline = {k: (float(figures[k]) if _number(figures.get(k)) and math.isfinite(figures[k]) else None)
                for k in HEADLINE}
    counts = m.get("counts") or {}
    return RunSummary(run.path, str(p.get("dataset")), str(p.get("split")), str(p.get("config_fingerprint")),
                      str(p.get("path") or m.get("path") or "searcher"), str(p.get("time") or ""),
                      int(counts["queries"]) if _number(counts.get("queries")) else None, headline)


def find_runs(root: str | os.PathLike[str]) -> tuple[list[RunSummary], list[str]]:
    """Every run folder under ``root`` (``root`` itself included; a folder holding ``metrics.json``
    and ``provenance.json``), sorted by the time it was written, then path; and one line for each
    such folder that could not be read (the problem named, its content never quoted). Hidden
    folders (a write in progress: ``.NAME.*.tmp``) and symbolic links are not followed.

    Raises:
        DataError: ``root`` is not a folder.
    """
    top = Path(root)
    if not top.is_dir():
        raise DataError(f"{str(top)!r} is not a folder; give the folder that holds run folders (default runs/)")
    found: list[RunSummary] = []
    problems: list[str] = []
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if "metrics.json" in files and "provenance.json" in files:
            dirs[:] = []  # a run folder holds no run folders
            try:
                found.append(_summary(load_run(folder)))
            except DataError as exc:  # load_run raises no other
                problems.append(str(exc))
    found.sort(key=lambda r: (r.time, str(r.path)))
    return found, problems
