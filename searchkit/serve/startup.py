"""What ``searchkit serve`` does before it answers (issue 30; SPEC E6): load the export, replay it
where its dataset is present (``config verify``), and build or load the index it serves.

A replay that ranks differently refuses to start (``ServeError``) unless ``no_verify``; an export
whose replay dataset is not on this machine, or changed since export, starts and says it was not
verified. The config fingerprint is what the log's start line, ``/health`` and the MCP server info
report.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchkit import export
from searchkit.errors import ResourceError
from searchkit.evaluate.datasets import DatasetError
from searchkit.serve.state import Served, now_iso
from searchkit.tools.history import HistoryIndex


class ServeError(ResourceError, RuntimeError):
    """The server cannot start as asked: the message says why and what to do."""


@dataclass(frozen=True)
class Loaded:
    """The export's config, its fingerprints, and how its replay went (``verify``: ``identical``,
    ``skipped``, ``not_verified``) with a line saying so."""

    config: Any
    fingerprint: str
    index_fingerprint: str
    verify: str
    verify_note: str
    path: str


def load_export(path: str | Path, *, no_verify: bool = False) -> Loaded:
    """The export at ``path`` (an exported ``NAME.vN.json``; a bare config JSON is accepted and has
    no replay), replayed unless ``no_verify``. Raises ``ConfigError`` for a file that does not load
    and ``ServeError`` when the replay differs."""
    ex = export.load_export(path)
    cfg = ex.config
    status, note = _verify(path, ex, no_verify)
    return Loaded(cfg, cfg.fingerprint(), cfg.index_fingerprint(), status, note, str(path))


def _verify(path: str | Path, ex: Any, no_verify: bool) -> tuple[str, str]:
    if no_verify:
        return "skipped", "replay skipped (--no-verify)"
    if ex.envelope is None or not ex.replay:
        return "not_verified", "a bare config has no replay to verify (export it with `searchkit config export`)"
    try:
        v = export.verify(path)
    except DatasetError:
        return "not_verified", "the replay dataset is not on this machine; the ranking was not replayed"
    if v.status == "dataset_changed":
        return "not_verified", f"the replay dataset {v.dataset}/{v.split} changed since export; not replayed"
    if v.status == "differs":
        raise ServeError(
            f"{path}: the export's replay ranks differently here ({len(v.diffs)} of {v.queries} queries differ; "
            "see `searchkit config verify`): refusing to serve a ranking that is not the exported one "
            "(--no-verify starts anyway)")
    return "identical", f"replay identical: {v.queries} queries of {v.dataset}/{v.split}"


def open_index(config: Any, *, workspace: str | Path | None, index: str | Path | None) -> tuple[Served, Path | None]:
    """The first version served: the workspace indexed in memory (embeddings cached), or the index
    folder loaded; and the workspace a refresh re-reads (None: the index names none)."""
    if workspace is not None:
        idx = HistoryIndex.build(workspace, config)
        idx.searcher.embed_rerank_sentences()  # as `searchkit index` does: no query waits for them
    elif index is not None:
        idx = HistoryIndex.load(index, config)
    else:  # pragma: no cover - the CLI requires one
        raise ServeError("give --workspace DIR or --index DIR")
    return Served(idx, 1, now_iso()), idx.workspace


WARM_QUERIES = ("warm up", "ウォームアップ", "прогрев")


def warm(served: Served) -> float:
    """A few searches over the whole index before the first call (the analyzers load, the kernels
    compile): the first caller does not wait for them. Nothing of them is kept or shown. Returns
    the seconds it took."""
    t0 = time.perf_counter()
    searcher = served.index.searcher
    if searcher.records:
        for q in WARM_QUERIES:
            searcher.search(q, k=1)
    return time.perf_counter() - t0
