"""A tuned config leaves the lab as a versioned, validated file that replays (SPEC E6).

``export_config`` writes ``DIR/NAME.v<N>.json`` (N one above the highest ``NAME.v*.json`` already
there; an existing file is never overwritten)::

    {"format": "searchkit.config-export", "schema_version": 1, "name": NAME, "version": N,
     "config": {...}, "config_fingerprint": ..., "index_fingerprint": ...,
     "provenance": {"exported_at", "git", "versions", "source", "runs": [...], "tuned_on": [...]},
     "replay": {"dataset", "dataset_path", "split", "dataset_sha256", "k": 10, "queries": Q,
                "rankings_sha256", "per_query": {query_id: digest}, "sample": [...], "metrics": {...}}}

``load_config`` (in ``searchkit.config_file``, importable from here too) is the one call production
uses: it reads an exported file or a bare config JSON, refuses an unknown ``format`` or a
``schema_version`` it cannot read, migrates older versions (a logged note per step), checks the
config against the dataclasses and the committed JSON Schema, and for an exported file that the
config still has the fingerprint it was exported with.

``verify`` indexes the replay dataset under the exported config, runs its queries and compares
every query's top-10 ids with the recorded ones; a dataset whose content hash changed is reported
as such, and differing package versions are listed beside the verdict.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from searchkit.config import ConfigError, SearchConfig, read_config_bytes
from searchkit.errors import DataError, ResourceError
from searchkit.config_file import (  # noqa: F401 - loading lives there; importable from here as before
    FORMAT,
    MIGRATIONS,
    SCHEMA_VERSION,
    Exported,
    load_config,
    load_export,
    validate_file,
)
from searchkit.evaluate.datasets import Dataset, load_dataset, resolve_dataset
from searchkit.evaluate.provenance import _relative, dataset_hash, git_commit, now, package_versions
from searchkit.ingest.policy import can_see
from searchkit.records import Record
from searchkit.searcher import Filters, Searcher
from searchkit.util import (
    problem_of,
    check_folder_target,
    make_folders_private,
    read_json_file,
    write_failure_line,
)

__all__ = ["FORMAT", "SCHEMA_VERSION", "Exported", "Verification", "export_config", "load_config", "load_export",
           "replay", "validate_file", "verify"]

log = logging.getLogger(__name__)


REPLAY_K = 10
SAMPLE_QUERIES = 5
DEFAULT_REPLAY = ("mini", "dev")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VERSIONED = re.compile(r"^(?P<name>.+)\.v(?P<n>[0-9]+)\.json$")


# --------------------------------------------------------------------------- replay


def _digest(obj: object) -> str:
    canon = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def replay(config: SearchConfig, dataset: Dataset, *, k: int = REPLAY_K, sample: int = SAMPLE_QUERIES,
           show_progress: bool = False) -> dict[str, Any]:
    """The replay block of ``dataset`` (a loaded split) under ``config``: every query's top-``k``
    record ids, as the Searcher returns them for ``search(text, k)`` with the query's filters
    (what ``searchkit eval`` runs), hashed all together and one digest per query; a readable
    sample; the dataset's content hash."""
    return _replay(config, dataset, k=k, sample=sample, show_progress=show_progress)[0]


def _visible_to(caller: str) -> Callable[[Record], bool]:
    """What a query asked as ``caller`` may see (H15): shared records and ``caller``'s personal ones."""
    return lambda r: can_see(r, caller, "personal")


def _rankings(config: SearchConfig, dataset: Dataset, k: int, show_progress: bool) -> dict[str, list[str]]:
    """``{query_id: top-k record ids}`` of every query of ``dataset`` (index built here)."""
    searcher = Searcher.build(dataset.records, config, show_progress=show_progress)
    queries = list(dataset.queries)
    searcher.warm(sorted({q.text.strip() for q in queries if q.text.strip()}), show_progress=show_progress)
    out = {}
    for q in queries:
        filters = None
        if q.kinds or q.since or q.until or q.spaces or q.caller:
            filters = Filters(
                kinds=tuple(q.kinds) if q.kinds else None, since=q.since, until=q.until,
                spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None,
                visible=_visible_to(q.caller) if q.caller else None,
            )
        out[q.id] = [h.record.id for h in searcher.search(q.text, k=k, filters=filters).hits]
    return out


def _replay(config: SearchConfig, dataset: Dataset, *, k: int, sample: int,
            show_progress: bool) -> tuple[dict[str, Any], dict[str, list[str]]]:
    tops = _rankings(config, dataset, k, show_progress)
    texts = {q.id: q.text for q in dataset.queries}
    order = [q.id for q in dataset.queries]
    block = {
        "dataset": dataset.name,
        "dataset_path": _relative(dataset.path),
        "split": dataset.split,
        "dataset_sha256": dataset_hash(dataset),
        "path": "searcher",
        "k": k,
        "queries": len(tops),
        "rankings_sha256": _digest(sorted(tops.items())),
        "per_query": {qid: _digest([qid, tops[qid]])[:16] for qid in order},
        "rankings": {qid: tops[qid] for qid in order},
        "sample": [{"id": qid, "text": texts[qid], "top": tops[qid]} for qid in order[:sample]],
    }
    return block, tops


def _load_split(name_or_path: str, split: str) -> Any:
    return load_dataset(resolve_dataset(name_or_path), split=split)


CHECKOUT = Path(__file__).resolve().parents[1]
"""The checkout this searchkit runs from (its ``datasets/`` holds ``mini``, the default replay set)."""


def _replay_split(name_or_path: str, split: str) -> Any:
    """The replay dataset of an export, whatever the working directory: a folder or a name as ``eval
    --dataset`` resolves it (``datasets/`` and ``../shared/data`` of the working directory), else a
    bare name in the ``datasets/`` folder of the checkout this searchkit runs from (the default,
    ``mini``, is there)."""
    try:
        where = resolve_dataset(name_or_path)
    except DataError:  # resolve_dataset raises no other
        raw = os.fspath(name_or_path)
        beside = CHECKOUT / "datasets" / raw
        if "/" in raw or raw in ("", ".", "..") or not (beside / "corpus.jsonl").is_file():
            raise
        where = beside
    return load_dataset(where, split=split)


# --------------------------------------------------------------------------- export


def _run_summary(folder: str | os.PathLike[str], cfg: SearchConfig) -> dict[str, Any]:
    """What an export records of a run folder (``searchkit eval --out``): its dataset, split and
    content hash, headline metrics, config fingerprint (and whether it is the exported config's),
    commit and time. Missing or damaged files are refused naming the folder."""
    p = Path(folder)
    if not p.is_dir():
        raise ConfigError(f"--runs {p}: not a run folder (no such folder)")

    def read(name: str) -> Mapping[str, Any]:
        try:
            value = read_json_file(p / name)
        except FileNotFoundError:
            raise ConfigError(f"--runs {p}: not a run folder (no {name}; write one with `searchkit eval --out`)") from None
        except DataError as exc:
            raise ConfigError(f"--runs {p}: cannot read {name}: {problem_of(exc)}") from None
        except OSError as exc:
            raise ConfigError(f"--runs {p}: cannot read {name}: {exc.strerror or type(exc).__name__}") from None
        if not isinstance(value, dict):
            raise ConfigError(f"--runs {p}: {name} is not a JSON object")
        return value

    prov, metrics = read("provenance.json"), read("metrics.json")
    fp = prov.get("config_fingerprint") or metrics.get("config_fingerprint")
    out = {
        "run": _relative(p),
        "dataset": prov.get("dataset", metrics.get("dataset")),
        "split": prov.get("split", metrics.get("split")),
        "dataset_sha256": prov.get("dataset_sha256"),
        "config_fingerprint": fp,
        "same_config": fp == cfg.fingerprint(),
        "metrics": dict(metrics.get("metrics") or {}),
        "no_answer": dict(metrics.get("no_answer") or {}),
        "git": prov.get("git"),
        "versions": prov.get("versions"),
        "time": prov.get("time"),
    }
    if not out["same_config"]:
        log.warning("run %s was made under config %s, not the exported %s", p, fp, cfg.fingerprint())
    return out


def _next_version(out_dir: Path, name: str) -> int:
    highest = 0
    if out_dir.is_dir():
        for entry in out_dir.iterdir():
            m = _VERSIONED.match(entry.name)
            if m and m.group("name") == name:
                highest = max(highest, int(m.group("n")))
    return highest + 1


def _write_new(out_dir: Path, name: str, build: Callable[[int], str]) -> Path:
    """Write ``build(N)`` to ``out_dir/name.vN.json`` for the next free N, atomically and without
    ever replacing a file (a hard link from a finished temporary file fails when N is taken)."""
    make_folders_private(out_dir)  # owner-only whatever the umask (issue 27 item 1)
    for _attempt in range(100):
        n = _next_version(out_dir, name)
        target = out_dir / f"{name}.v{n}.json"
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(build(n))
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue  # another export took N meanwhile: take the next one
            return target
        finally:
            os.unlink(tmp)
    raise ConfigError(f"cannot find a free version for {name} in {out_dir}")  # pragma: no cover


def export_config(
    tuned: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    replay_dataset: str = DEFAULT_REPLAY[0],
    replay_split: str = DEFAULT_REPLAY[1],
    runs: Sequence[str | os.PathLike[str]] = (),
    tuned_on: Sequence[str] = (),
    show_progress: bool = False,
) -> Path:
    """Export the config in ``tuned`` (a bare config or an earlier export) to ``out_dir/NAME.vN.json``.

    Args:
        tuned: the config file (validated as :func:`load_config` does).
        out_dir: the folder of versions; created when absent.
        name: the file's base name (default: ``tuned``'s stem without a ``.vN`` suffix).
        replay_dataset, replay_split: the dataset (a name or folder) and split replayed.
        runs: run folders (``searchkit eval --out``) the config was reported on.
        tuned_on: datasets (names or folders) whose dev tune half the config was tuned on.

    Returns:
        The path written.

    Raises:
        ConfigError: an invalid config, a bad name, a run folder that cannot be read.
        DataError: the replay dataset or a ``tuned_on`` dataset is missing.
        InputError, ResourceError: ``out_dir`` is not a folder (a file, a link, a FIFO), or cannot be written;
            one line naming ``--out``, nothing written.
    """
    check_folder_target(out_dir, "--out")  # before the replay: a link, a file, a FIFO is refused now (issue 39 item 6)
    src = load_export(tuned)
    cfg = src.config
    base = name
    if base is None:
        stem = Path(tuned).name
        m = _VERSIONED.match(stem)
        base = m.group("name") if m else (stem[:-5] if stem.endswith(".json") else stem)
    if not _NAME.match(base) or _VERSIONED.match(base + ".json"):
        raise ConfigError(f"--name {base!r}: use letters, digits, '_', '-', '.' (and no .vN suffix)")
    run_rows = [_run_summary(r, cfg) for r in runs]
    tuned_rows = []
    for d in tuned_on:
        ds = _load_split(d, "dev")
        tuned_rows.append({"dataset": ds.name, "dataset_path": _relative(ds.path), "split": "dev", "half": "tune",
                           "dataset_sha256": dataset_hash(ds)})
    ds = _replay_split(replay_dataset, replay_split)  # from any working directory (issue 40 item 7)
    block = replay(cfg, ds, show_progress=show_progress)
    block["dataset_path_from_export"] = os.path.relpath(Path(ds.path).resolve(), Path(out_dir).resolve())
    src_bytes = read_config_bytes(tuned)
    provenance = {
        "exported_at": now(),
        "git": git_commit(),
        "versions": package_versions(),
        "source": {"file": Path(tuned).name, "sha256": hashlib.sha256(src_bytes).hexdigest(),
                   "export": ({"name": src.envelope.get("name"), "version": src.envelope.get("version")}
                              if src.envelope is not None else None)},
        "runs": run_rows,
        "tuned_on": tuned_rows,
        "datasets": sorted({r["dataset"] for r in run_rows if r.get("dataset")} | {t["dataset"] for t in tuned_rows}
                           | {block["dataset"]}),
    }

    def build(n: int) -> str:
        doc = {
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "name": base,
            "version": n,
            "config": cfg.to_dict(),
            "config_fingerprint": cfg.fingerprint(),
            "index_fingerprint": cfg.index_fingerprint(),
            "provenance": provenance,
            "replay": block,
        }
        return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True) + "\n"

    check_folder_target(out_dir, "--out")  # again: the replay took a while
    try:
        path = _write_new(Path(out_dir), base, build)
    except OSError as exc:  # no permission, a full disk: one line naming the flag, never a raw [Errno N]
        raise ResourceError(write_failure_line("--out", out_dir, exc)) from None
    log.info("exported %s (config %s, replay %s/%s: %d queries)", path, cfg.fingerprint(), block["dataset"],
             block["split"], block["queries"])
    return path


# --------------------------------------------------------------------------- verify


@dataclass(frozen=True)
class QueryDiff:
    """One query whose top-k ids differ from the recorded ones (``expected`` when in the sample)."""

    query_id: str
    text: str
    got: tuple[str, ...]
    expected: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Verification:
    """The verdict of :func:`verify`: ``status`` is ``identical``, ``differs`` or ``dataset_changed``."""

    status: str
    queries: int
    dataset: str
    split: str
    diffs: tuple[QueryDiff, ...] = ()
    missing: tuple[str, ...] = ()
    """Recorded query ids the replay did not produce (or produced but were not recorded)."""
    recorded_sha256: str = ""
    dataset_sha256: str = ""
    version_changes: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    """Package -> (recorded version, installed version), where they differ."""


def _dataset_folders(replay_block: Mapping[str, Any], export_file: Path) -> list[Path]:
    """Where the replay dataset may be, most likely first, whatever the working directory: the
    path recorded relative to the export file's folder; the path recorded relative to the working
    directory at export (``dataset_path``, the repository root when run as README.md says) tried
    against the working directory, each folder above the export file and the checkout this
    searchkit runs from; then the dataset's name in the ``datasets/`` and ``../shared/data``
    folders of each of those."""
    here = export_file.resolve().parent
    bases = list(dict.fromkeys([Path.cwd(), *[here, *here.parents], CHECKOUT]))
    out: list[Path] = []
    beside = replay_block.get("dataset_path_from_export")
    if isinstance(beside, str) and beside:
        out.append(here / beside)
    rel = replay_block.get("dataset_path")
    if isinstance(rel, str) and rel:
        out += [base / rel for base in bases]
    name = replay_block.get("dataset")
    if isinstance(name, str) and name and "/" not in name and name not in (".", ".."):
        for base in bases:
            out += [parent / name for parent in (base / "datasets", base.parent / "shared" / "data")
                    if (parent / name / "corpus.jsonl").is_file()]
    seen: dict[Path, None] = {}
    for p in out:
        if p.is_dir():
            seen.setdefault(p.resolve(), None)
    return list(seen)


def _dataset_for(replay_block: Mapping[str, Any], override: str | None, export_file: Path) -> Any:
    """The replay dataset: ``override`` when given; else the first of :func:`_dataset_folders`
    whose content is the recorded one (else the first found, reported as changed)."""
    split: str = replay_block["split"]  # verify checked it is a string (_REPLAY_TYPES)
    if override:
        return _load_split(override, split)
    first = None
    for folder in _dataset_folders(replay_block, export_file):
        ds = _load_split(str(folder), split)
        if dataset_hash(ds) == replay_block.get("dataset_sha256"):
            return ds
        first = first or ds
    if first is not None:
        return first
    return _load_split(str(replay_block.get("dataset")), split)  # not found: the error lists the names


_REPLAY_TYPES = {"dataset": str, "split": str, "dataset_sha256": str, "k": int, "queries": int, "rankings_sha256": str,
                 "per_query": dict}


def _recorded_rankings(rb: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The recorded top-k of each query: every query's (``rankings``, written since issue 28) or,
    in an older export, the sample's."""
    out: dict[str, tuple[str, ...]] = {}
    for s in rb.get("sample") or ():
        if isinstance(s, Mapping) and isinstance(s.get("id"), str) and isinstance(s.get("top"), list):
            out[s["id"]] = tuple(map(str, s["top"]))
    rankings = rb.get("rankings")
    if isinstance(rankings, Mapping):
        out.update({str(q): tuple(map(str, top)) for q, top in rankings.items() if isinstance(top, list)})
    return out


def verify(path: str | os.PathLike[str], *, dataset: str | None = None, show_progress: bool = False) -> Verification:
    """Re-run the replay of an exported file: index its dataset under its config, run the queries,
    compare each query's top-k ids with the recorded digests.

    Args:
        path: an exported file.
        dataset: the replay dataset's folder or name, when it is not where the file says.

    Raises:
        ConfigError: the file is not an export with a replay block, or fails to load.
        DataError: the dataset cannot be found.
    """
    ex = load_export(path)
    rb = ex.replay
    if ex.envelope is None or not isinstance(rb, Mapping) or any(k not in rb for k in _REPLAY_TYPES):
        raise ConfigError(f"{path}: no replay block to verify (export the config with `searchkit config export`)")
    bad = [k for k, t in _REPLAY_TYPES.items() if not isinstance(rb[k], t) or isinstance(rb[k], bool)]
    if bad or not 1 <= rb["k"] <= 1000:
        raise ConfigError(f"{path}: the replay block is damaged ({(bad or ['k'])[0]} is not what an export writes); "
                          "export the config again")
    recorded_versions = ((ex.envelope.get("provenance") or {}).get("versions") or {})
    now_versions = package_versions()
    changes = {k: (recorded_versions.get(k), now_versions.get(k))
               for k in sorted(set(recorded_versions) | set(now_versions))
               if recorded_versions.get(k) != now_versions.get(k)}
    ds = _dataset_for(rb, dataset, Path(path))
    h = dataset_hash(ds)
    common = dict(dataset=ds.name, split=ds.split, recorded_sha256=rb["dataset_sha256"], dataset_sha256=h,
                  version_changes=changes)
    if h != rb["dataset_sha256"]:
        return Verification("dataset_changed", int(rb["queries"]), **common)
    now, tops = _replay(ex.config, ds, k=int(rb["k"]), sample=0, show_progress=show_progress)
    if now["rankings_sha256"] == rb["rankings_sha256"]:
        return Verification("identical", now["queries"], **common)
    recorded = dict(rb["per_query"])
    expected = _recorded_rankings(rb)
    texts = {q.id: q.text for q in ds.queries}
    diffs = tuple(
        QueryDiff(qid, texts.get(qid, ""), tuple(tops[qid]), expected.get(qid))
        for qid, digest in now["per_query"].items()
        if qid in recorded and recorded[qid] != digest
    )
    missing = tuple(sorted(set(recorded) ^ set(now["per_query"])))
    return Verification("differs", now["queries"], diffs=diffs, missing=missing, **common)
