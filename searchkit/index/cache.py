"""On-disk embedding cache: nothing is embedded twice across runs (SPEC H16).

SQLite, one row per (embedder fingerprint, kind, sha256 of the text) holding the float32 vector.
Missing texts are embedded in batches; each batch is stored in one transaction as soon as it is
done, so an interrupted run keeps every finished batch and never a partial one.

The vectors are those of every passage indexed, personal chats included (SPEC H15): the file and
its ``-wal`` / ``-shm`` side files are created ``0600`` (a folder searchkit creates for it ``0700``),
and an existing cache that others could read is made ``0600`` with a warning.

One fingerprint, one dimension (SPEC H16): the vectors a fingerprint already has in the cache (or
the dimension the caller expects, e.g. the index's) fix its dimension, and a batch of another
dimension (a misconfigured fallback provider) is refused, never stored.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ContextManager, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from searchkit.errors import DataError, InputError, ResourceError
from searchkit.util import make_folders_private

from .embedders import Embedder

__all__ = ["EmbeddingCache", "CacheStats", "default_cache_path", "KINDS"]

KINDS = ("query", "passage")
_PLURAL = {"query": "queries", "passage": "passages"}
_SCHEMA_VERSION = 1
_LOOKUP_CHUNK = 500  # bound on SQL variables per SELECT
_SIDE_FILES = ("-wal", "-shm", "-journal")

log = logging.getLogger(__name__)


def _write_failure(e: sqlite3.Error) -> str | None:
    """What a failed write says in words (the disk is full, an I/O error, read-only), or None when
    ``e`` is not a write failure."""
    name = getattr(e, "sqlite_errorname", None)
    if name is None:  # an SQLite error without its code: read its standard message
        text = str(e).lower()
        name = next((code for code, words in (("SQLITE_FULL", "database or disk is full"),
                                               ("SQLITE_IOERR", "disk i/o error"),
                                               ("SQLITE_READONLY", "readonly database"),
                                               ("SQLITE_CANTOPEN", "unable to open")) if words in text), "")
    for code, words in _WRITE_FAILURES:
        if name.startswith(code):
            return words
    return None


_WRITE_FAILURES = (
    ("SQLITE_FULL", "the disk is full"),
    ("SQLITE_IOERR", "a write to disk failed (I/O error; is the disk full?)"),
    ("SQLITE_READONLY", "it is read-only"),
    ("SQLITE_CANTOPEN", "it cannot be opened for writing"),
)


def default_cache_path() -> Path:
    """The cache file to use when none is given: ``$SEARCHKIT_CACHE`` or
    ``~/.cache/searchkit/embeddings.sqlite``. Creates nothing."""
    env = os.environ.get("SEARCHKIT_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "searchkit" / "embeddings.sqlite"


@dataclass(frozen=True)
class CacheStats:
    """Counts since this cache object was opened, over distinct texts of each call.

    ``hits``: texts found in the cache; ``misses``: texts that had to be embedded (and were
    stored); ``entries``: rows in the cache now.
    """

    hits: int
    misses: int
    entries: int


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """SQLite cache of embeddings keyed by (embedder fingerprint, kind, sha256(text)).

    Args:
        path: the SQLite file (its folder is created ``0700``, the file and its side files
            ``0600``; an existing cache others could read is made ``0600``, logging a warning), or
            None for an in-memory cache that persists nothing. WAL journal mode, so other
            processes can read while one writes.

    Raises:
        ValueError: ``path`` exists but is not a searchkit embedding cache.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None else Path(path).expanduser()
        self._lock = threading.RLock()
        self._hits = 0
        self._misses = 0
        if self.path is None:
            target = ":memory:"
        else:
            if self.path.is_dir():
                raise DataError(f"embedding cache path {self.path} is a folder; give a file path")
            if self.path.exists() and not self.path.is_file():
                raise DataError(f"embedding cache path {self.path} is not a regular file (a FIFO or a device); "
                                 "give a file path")
            try:  # it and its missing parents 0700 whatever the umask: it holds every passage's vector (issue 39 item 8)
                make_folders_private(self.path.parent)
                _create_private(self.path)
            except OSError as e:  # a file where a folder should be, no permission: one line, never a raw [Errno N]
                raise DataError(f"embedding cache {self.path}: cannot be created ({e.strerror or e}); "
                                 "point $SEARCHKIT_CACHE elsewhere") from None
            target = str(self.path)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per batch.
        try:
            self._conn = sqlite3.connect(target, timeout=60.0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise ResourceError(f"embedding cache {self.path}: {_write_failure(e) or 'cannot be opened'}", reason="disk") from None
        try:
            self._setup()
        except sqlite3.DatabaseError as e:
            self._conn.close()
            failure = _write_failure(e)
            if failure is not None:
                raise ResourceError(f"embedding cache {self.path}: cannot be set up, {failure}; nothing was "
                                      "changed (free some space, or point $SEARCHKIT_CACHE elsewhere)", reason="disk") from None
            raise DataError(f"embedding cache {self.path}: not a usable SQLite cache ({e}); delete it to "
                             "start a new one, or point $SEARCHKIT_CACHE elsewhere") from None
        if self.path is not None:
            _make_private(self.path)

    def _setup(self) -> None:
        c = self._conn
        if self.path is not None:
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")
        version = c.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not tables:
            c.execute("BEGIN IMMEDIATE")
            try:
                c.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings ("
                    " fingerprint TEXT NOT NULL, kind TEXT NOT NULL, text_sha256 BLOB NOT NULL,"
                    " dim INTEGER NOT NULL, vector BLOB NOT NULL,"
                    " PRIMARY KEY (fingerprint, kind, text_sha256)) WITHOUT ROWID"
                )
                c.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    try:
                        c.execute("ROLLBACK")
                    except sqlite3.Error:  # a failed COMMIT may have rolled back already
                        pass
                raise
        elif version != _SCHEMA_VERSION or "embeddings" not in tables:
            raise sqlite3.DatabaseError(
                f"schema version {version} with tables {sorted(tables)}; expected version "
                f"{_SCHEMA_VERSION} with an 'embeddings' table (delete the file to rebuild the cache)"
            )

    # -- public ----------------------------------------------------------------
    def embed(
        self,
        embedder: Embedder,
        texts: Sequence[str],
        kind: str,
        batch_size: int = 32,
        show_progress: bool = True,
        desc: str | None = None,
        dim: int | None = None,
        store_guard: Callable[[], ContextManager[bool]] | None = None,
    ) -> np.ndarray:
        """Embeddings of ``texts`` (float32, ``(len(texts), dim)``, in input order), embedding
        only texts not cached yet under ``embedder.fingerprint()`` and ``kind``.

        The family's dimension is ``dim`` when given (e.g. the dimension of the index the vectors
        are for), else that of the vectors already cached under the fingerprint, else the first
        batch's. It is told to an embedder that has ``expect_dim`` (a
        :class:`~searchkit.index.embedders.FallbackEmbedder` then skips a provider answering in
        another dimension), and a batch of another dimension is a ``ResourceError`` (reason ``embedding``), never
        stored. A cached vector of another dimension (left by a version without this check) is
        embedded again and replaced.

        Identical texts are embedded once. Missing texts go to the embedder in batches of
        ``batch_size`` (a tqdm bar counts them unless ``show_progress`` is false or all are
        cached); each batch is validated (shape, finite values) and committed in its own
        transaction before the next one starts.

        Args:
            embedder: any :class:`~searchkit.index.embedders.Embedder`.
            texts: the texts (a sequence of ``str``).
            kind: ``"query"`` or ``"passage"`` (selects ``embed_queries`` / ``embed_passages``).
            store_guard: None (the default): the cache stays locked while the embedder runs. Else
                the embedder runs with no lock held (other threads' lookups go on) and each batch
                is stored inside ``with store_guard() as may_store:``, only where ``may_store``
                (``tools.version_cache``: a served version that was sealed meanwhile stores nothing).

        Raises:
            ValueError / TypeError: bad ``kind``, ``batch_size`` or texts.
            ResourceError: (reason ``embedding``) the embedder failed or returned a wrong shape, another dimension than
                the family's or non-finite values; batches finished before it stay cached, nothing
                of the failed batch is stored.
        """
        if kind not in KINDS:
            raise InputError(f"kind must be one of {KINDS}, got {kind!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        items = _request(texts, kind, dim)
        fp = embedder.fingerprint()
        with self._lock:
            family = int(dim) if dim is not None else self._stored_dim(fp)
        if not items:
            return np.zeros((0, family if family is not None else embedder.dim), dtype=np.float32)

        keys = [_text_key(t) for t in items]
        with self._lock:
            if family is not None:
                _tell_dim(embedder, family)
            first, found = self._cached(fp, kind, keys, items, family)
            missing = [k for k in first if k not in found]
            self._hits += len(found)
            if missing and store_guard is None:
                self._fill(embedder, fp, kind, [(k, first[k]) for k in missing], found, family,
                           batch_size, show_progress, desc or f"embedding {_PLURAL[kind]} ({embedder.name})")
        if missing and store_guard is not None:
            self._fill(embedder, fp, kind, [(k, first[k]) for k in missing], found, family,
                       batch_size, show_progress, desc or f"embedding {_PLURAL[kind]} ({embedder.name})", store_guard)
        dims = {v.shape[0] for v in found.values()}
        if len(dims) != 1:
            raise ResourceError(
                f"embedding cache {self._where()}: vectors of fingerprint {fp[:12]}… have mixed "
                f"dimensions {sorted(dims)}; the embedder's fingerprint must change with its dim", reason="embedding"
            )
        out = np.empty((len(items), dims.pop()), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def missing(self, embedder: Embedder | str, texts: Sequence[str], kind: str,
                dim: int | None = None) -> tuple[list[str], int | None]:
        """The distinct texts of ``texts`` the cache lacks under ``embedder``'s fingerprint (or the
        fingerprint itself, a ``str``) and ``kind``, in the order :meth:`embed` would embed them
        (first occurrence), and the family's dimension when known (``dim``, else that of the vectors
        cached under the fingerprint, else None). A cached vector of another dimension than the
        family's counts as missing, as in :meth:`embed`. Embeds and stores nothing.

        Raises:
            ValueError / TypeError: bad ``kind``, ``dim`` or texts (as :meth:`embed`).
        """
        items = _request(texts, kind, dim)
        fp = _fingerprint(embedder)
        with self._lock:
            family = int(dim) if dim is not None else self._stored_dim(fp)
            if not items:
                return [], family
            first, found = self._cached(fp, kind, [_text_key(t) for t in items], items, family)
        return [text for key, text in first.items() if key not in found], family

    def put(self, embedder: Embedder | str, texts: Sequence[str], vectors: np.ndarray | Sequence[Sequence[float]], kind: str,
            dim: int | None = None) -> None:
        """Store ``vectors`` (row i for ``texts[i]``), computed elsewhere by ``embedder`` (or under
        the fingerprint given as a ``str``), in one transaction: all of them or nothing. They are
        checked as :meth:`embed` checks an embedder's answer (shape, finite values, the family's
        dimension: ``dim``, else the cached vectors'). Texts already cached keep their vector; of a
        text given twice, the last row is the one stored. Stored texts count as misses, texts already
        cached as hits (as in :meth:`embed`); :meth:`missing` counts neither.

        Raises:
            ValueError / TypeError: bad ``kind``, ``dim``, texts, or as many vectors as texts.
            ResourceError: (reason ``embedding``) a wrong shape, non-finite values or another dimension than the
                family's; nothing is stored.
            ResourceError: the write failed (reason ``disk``); nothing of this call is stored.
        """
        items = _request(texts, kind, dim)
        n = len(vectors) if hasattr(vectors, "__len__") else -1
        if n != len(items):
            raise ValueError(f"{len(items)} texts but {n if n >= 0 else 'no sequence of'} vectors")
        if not items:
            return
        fp = _fingerprint(embedder)
        name = _name(embedder)
        arr = _checked(vectors, len(items), name)
        row_of = {_text_key(t): i for i, t in enumerate(items)}  # first-occurrence order, last row
        with self._lock:
            family = int(dim) if dim is not None else self._stored_dim(fp)
            _check_family(name, fp, arr.shape[1], family)
            found = self._lookup(fp, kind, list(row_of), family)
            self._hits += len(found)
            todo = [key for key in row_of if key not in found]
            if todo:
                self._write(fp, kind, todo, arr[[row_of[key] for key in todo]], family, name)

    def forget(self, texts: Iterable[str]) -> int:
        """Remove the vectors of ``texts`` (every embedder's, as passages) from the cache, so text
        that was erased leaves no vector or hash behind (H3: a deleted chat, its turns' digests, a
        deleted row). Deleted pages are overwritten (``secure_delete``) and the WAL is truncated.
        Returns the number of entries removed. Another index holding the same text only embeds it
        again when it next needs it."""
        keys = sorted({_text_key(t) for t in texts})
        if not keys:
            return 0
        removed = 0
        with self._lock:
            c = self._conn
            try:
                c.execute("PRAGMA secure_delete=ON")
                c.execute("BEGIN IMMEDIATE")
                try:
                    for i in range(0, len(keys), _LOOKUP_CHUNK):
                        chunk = keys[i:i + _LOOKUP_CHUNK]
                        marks = ",".join("?" * len(chunk))
                        removed += c.execute(f"DELETE FROM embeddings WHERE kind='passage' AND text_sha256 IN ({marks})",
                                             chunk).rowcount
                    c.execute("COMMIT")
                except BaseException:
                    if c.in_transaction:
                        try:
                            c.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                    raise
                if self.path is not None:
                    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as e:
                raise ResourceError(f"embedding cache {self._where()}: removing erased entries failed, "
                                      f"{_write_failure(e) or e}", reason="disk") from None
        return removed

    def stats(self) -> CacheStats:
        """Hits and misses since this object was opened, and the number of cached vectors."""
        return CacheStats(self._hits, self._misses, len(self))

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingCache({self._where()})"

    # -- internals -------------------------------------------------------------
    def _where(self) -> str:
        return str(self.path) if self.path is not None else ":memory:"

    def _stored_dim(self, fp: str) -> int | None:
        """The dimension of the vectors cached under ``fp`` (None: none cached). Passages first: a
        cache poisoned before the dimension check held wrong vectors of queries, not passages."""
        row = self._conn.execute("SELECT dim FROM embeddings WHERE fingerprint=? ORDER BY fingerprint, kind"
                                 " LIMIT 1", (fp,)).fetchone()
        return None if row is None else int(row[0])

    def _store(self, fp: str, rows: list[tuple], dim: int, family: int | None, name: str) -> int | None:
        """Store one batch in one transaction (all of it or nothing); returns the family's
        dimension. A write that fails (a full disk) is a ``ResourceError`` (reason ``disk``) naming the file:
        the batch is rolled back and every batch stored before it is kept."""
        c = self._conn
        try:
            c.execute("BEGIN IMMEDIATE")
            try:
                if family is None:  # another process may have stored this family since the lookup
                    family = self._stored_dim(fp)
                _check_family(name, fp, dim, family)
                c.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    try:
                        c.execute("ROLLBACK")
                    except sqlite3.Error:  # a failed COMMIT may have rolled back already
                        pass
                raise
        except sqlite3.Error as e:
            failure = _write_failure(e)
            if failure is None:
                raise
            raise ResourceError(f"embedding cache {self._where()}: storing embeddings failed, {failure}; the "
                                  "vectors stored before are kept (free some space, or point $SEARCHKIT_CACHE "
                                  "elsewhere)", reason="disk") from None
        return family

    def _cached(self, fp: str, kind: str, keys: list[bytes], items: list[str],
                family: int | None) -> tuple[dict[bytes, str], dict[bytes, np.ndarray]]:
        """The distinct texts (key -> text, in first-occurrence order) of ``items`` (whose keys are
        ``keys``) and the vectors of those the cache holds under ``fp``, ``kind`` and ``family``."""
        first: dict[bytes, str] = {}
        for key, text in zip(keys, items):
            first.setdefault(key, text)
        return first, self._lookup(fp, kind, list(first), family)

    def _write(self, fp: str, kind: str, keys: list[bytes], vectors: np.ndarray, family: int | None,
               name: str) -> int:
        """Store ``vectors`` (checked: ``_checked``) for ``keys`` in one transaction (``_store``),
        counted as misses; returns the family's dimension, theirs."""
        rows = [(fp, kind, key, vectors.shape[1], vectors[i].astype("<f4").tobytes()) for i, key in enumerate(keys)]
        self._store(fp, rows, vectors.shape[1], family, name)
        self._misses += len(keys)
        return int(vectors.shape[1])

    def _lookup(self, fp: str, kind: str, keys: list[bytes], family: int | None) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        stale: dict[int, int] = {}
        for i in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[i:i + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT text_sha256, dim, vector FROM embeddings WHERE fingerprint=? AND kind=?"
                f" AND text_sha256 IN ({marks})", (fp, kind, *chunk))
            for key, dim, blob in rows:
                vec = np.frombuffer(blob, dtype="<f4")
                if vec.shape[0] != dim:
                    raise ResourceError(f"embedding cache {self._where()}: a stored vector is corrupt "
                                         f"({vec.shape[0]} floats, expected {dim})", reason="embedding")
                if family is not None and dim != family:
                    stale[dim] = stale.get(dim, 0) + 1
                    continue
                found[bytes(key)] = vec.astype(np.float32, copy=False)
        for d, count in stale.items():
            log.warning("embedding cache %s: %d cached %s vector(s) of fingerprint %s… are %d-dimensional, not "
                        "the family's %d; embedding them again", self._where(), count, kind, fp[:12], d, family)
        return found

    def _fill(self, embedder: Embedder, fp: str, kind: str, todo: list[tuple[bytes, str]],
              found: dict[bytes, np.ndarray], family: int | None, batch_size: int, show_progress: bool,
              desc: str, store_guard: Callable[[], ContextManager[bool]] | None = None) -> None:
        from tqdm.auto import tqdm

        embed = embedder.embed_queries if kind == "query" else embedder.embed_passages
        with tqdm(total=len(todo), desc=desc, unit="text", disable=not show_progress) as bar:
            for start in range(0, len(todo), batch_size):
                batch = todo[start:start + batch_size]
                vectors = _checked(embed([t for _, t in batch]), len(batch), _name(embedder))
                if store_guard is None:
                    family = self._write(fp, kind, [key for key, _ in batch], vectors, family, _name(embedder))
                else:
                    with store_guard() as may_store:
                        if may_store:
                            with self._lock:
                                family = self._write(fp, kind, [key for key, _ in batch], vectors, family,
                                                     _name(embedder))
                        else:  # answered, not stored: the family's dimension is still checked
                            _check_family(_name(embedder), fp, vectors.shape[1], family)
                            family = int(vectors.shape[1])
                for i, (key, _) in enumerate(batch):
                    found[key] = vectors[i]
                bar.update(len(batch))


def _tell_dim(embedder: Embedder, dim: int) -> None:
    hook = getattr(embedder, "expect_dim", None)
    if callable(hook):
        hook(dim)


def _create_private(path: Path) -> None:
    """Create ``path`` empty and ``0600`` unless it exists (SQLite gives its -wal/-shm the same mode)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def _make_private(path: Path) -> None:
    """Make the cache and its side files ``0600`` where others could read them: it is our file.
    Logs one warning when it did (or could not)."""
    if os.name != "posix":
        return
    widened: list[str] = []
    failed: list[str] = []
    for p in [path, *(Path(f"{path}{suffix}") for suffix in _SIDE_FILES)]:
        try:
            mode = stat.S_IMODE(os.stat(p).st_mode)
        except OSError:  # no such side file
            continue
        if not mode & 0o077:
            continue
        try:
            os.chmod(p, mode & 0o700)
            widened.append(f"{p.name} {mode:04o}")
        except OSError as e:
            failed.append(f"{p.name} {mode:04o} ({e.strerror or e})")
    if widened:
        log.warning("embedding cache %s was readable by others (%s): made it 0600; it holds the vectors of every "
                    "passage indexed, personal chats included", path, ", ".join(widened))
    if failed:
        log.warning("embedding cache %s is readable by others and could not be made 0600: %s", path, ", ".join(failed))


def _checked(vectors: npt.ArrayLike, n: int, name: str) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 ``(n, dim)`` array, or a ``ResourceError`` (reason ``embedding``)
    naming the embedder (a wrong shape, not numbers, NaN or infinity)."""
    arr = np.asarray(vectors)
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 1:
        raise ResourceError(f"embedder {name!r} returned shape {arr.shape} for {n} texts; expected ({n}, dim)", reason="embedding")
    if not np.issubdtype(arr.dtype, np.number):
        raise ResourceError(f"embedder {name!r} returned dtype {arr.dtype}", reason="embedding")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise ResourceError(f"embedder {name!r} returned NaN or infinity", reason="embedding")
    return arr


def _check_family(name: str, fp: str, dim: int, family: int | None) -> None:
    """A ``ResourceError`` (reason ``embedding``) when ``dim`` is not the family's (``family``; None: any)."""
    if family is not None and dim != family:
        raise ResourceError(
            f"embedder {name!r} returned {dim}-dimensional vectors, but this family's (fingerprint {fp[:12]}…) "
            f"are {family}-dimensional; a provider of another dimension does not serve the same model "
            f"(nothing was cached)", reason="embedding")


def _name(embedder: Embedder | str) -> str:
    """How messages name ``embedder`` (a fingerprint given as a ``str``: its first characters)."""
    if isinstance(embedder, str):
        return f"fingerprint {embedder[:12]}…"
    return str(getattr(embedder, "name", embedder))


def _fingerprint(embedder: Embedder | str) -> str:
    """The fingerprint of ``embedder``, or ``embedder`` itself when it is one (a non-empty ``str``)."""
    if isinstance(embedder, str):
        if not embedder:
            raise ValueError("the embedder fingerprint must be a non-empty string")
        return embedder
    return embedder.fingerprint()


def _request(texts: Sequence[str], kind: str, dim: int | None) -> list[str]:
    """``texts`` as a list once ``kind``, ``dim`` and every text are checked (ValueError / TypeError)."""
    if kind not in KINDS:
        raise InputError(f"kind must be one of {KINDS}, got {kind!r}")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1):
        raise InputError(f"dim must be a positive integer or None, got {dim!r}")
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a sequence of strings, not a single string")
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be str, got {type(t).__name__}")
    return items
