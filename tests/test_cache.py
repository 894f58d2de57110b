"""EmbeddingCache: embed once across calls and runs, order and duplicates, all-or-nothing batches."""
from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.index.cache import EmbeddingCache, default_cache_path
from searchkit.errors import ResourceError
from searchkit.index.embedders import HashingEmbedder


class Counting:
    """Wraps an embedder, records every call; optionally fails on call number ``fail_on`` (1-based)."""

    def __init__(self, inner=None, fail_on: int | None = None, exc: BaseException | None = None) -> None:
        self.inner = inner or HashingEmbedder(dim=16)
        self.name, self.dim = "counting", self.inner.dim
        self.calls: list[tuple[str, list[str]]] = []
        self.fail_on, self.exc = fail_on, exc or RuntimeError("model crashed")

    def fingerprint(self) -> str:
        return self.inner.fingerprint()

    def _call(self, kind, texts):
        self.calls.append((kind, list(texts)))
        if self.fail_on is not None and len(self.calls) == self.fail_on:
            raise self.exc
        out = self.inner.embed_queries(texts)
        return out if kind == "query" else -out  # make the two kinds differ

    def embed_queries(self, texts):
        return self._call("query", texts)

    def embed_passages(self, texts):
        return self._call("passage", texts)

    @property
    def embedded(self) -> list[str]:
        return [t for _, batch in self.calls for t in batch]


TEXTS = ["Выгрузка отчёта", "満月の周期", "ATL-1655", "hello", "мир", "ログイン", "deadline"]


def test_second_call_embeds_nothing_and_returns_the_same_rows():
    cache, emb = EmbeddingCache(None), Counting()
    first = cache.embed(emb, TEXTS, "passage", batch_size=3, show_progress=False)
    assert emb.embedded == TEXTS and [len(b) for _, b in emb.calls] == [3, 3, 1]
    second = cache.embed(emb, TEXTS[::-1], "passage", show_progress=False)
    assert len(emb.calls) == 3
    np.testing.assert_array_equal(second, first[::-1])
    s = cache.stats()
    assert (s.hits, s.misses, s.entries) == (7, 7, 7)


def test_rows_in_input_order_and_duplicates_embedded_once():
    cache, emb = EmbeddingCache(None), Counting()
    texts = ["b", "a", "b", "c", "a", "a"]
    out = cache.embed(emb, texts, "query", batch_size=2, show_progress=False)
    assert emb.embedded == ["b", "a", "c"]
    np.testing.assert_array_equal(out, HashingEmbedder(dim=16).embed_queries(texts))
    assert out.dtype == np.float32 and out.shape == (6, 16)
    # a second call mixing cached and new texts embeds only the new one
    cache.embed(emb, ["c", "d", "b", "d"], "query", show_progress=False)
    assert emb.calls[-1] == ("query", ["d"])


def test_kind_and_fingerprint_are_part_of_the_key():
    cache = EmbeddingCache(None)
    emb = Counting()
    q = cache.embed(emb, ["x"], "query", show_progress=False)
    p = cache.embed(emb, ["x"], "passage", show_progress=False)
    np.testing.assert_array_equal(p, -q)
    other = Counting(HashingEmbedder(dim=16, seed=9))
    cache.embed(other, ["x"], "query", show_progress=False)
    assert other.embedded == ["x"] and len(cache) == 3


def test_persists_across_instances(tmp_path):
    path = tmp_path / "sub" / "emb.sqlite"
    with EmbeddingCache(path) as c1:
        a = c1.embed(Counting(), TEXTS, "passage", show_progress=False)
    emb = Counting()
    with EmbeddingCache(path) as c2:
        b = c2.embed(emb, TEXTS, "passage", show_progress=False)
        assert emb.calls == [] and c2.stats().hits == len(TEXTS)
        assert c2._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    np.testing.assert_array_equal(a, b)


def test_in_memory_cache_persists_nothing():
    EmbeddingCache(None).embed(Counting(), ["a"], "query", show_progress=False)
    emb = Counting()
    EmbeddingCache(None).embed(emb, ["a"], "query", show_progress=False)
    assert emb.embedded == ["a"]


def test_concurrent_reader_sees_committed_batches(tmp_path):
    path = tmp_path / "c.sqlite"
    writer, reader = EmbeddingCache(path), EmbeddingCache(path)
    writer.embed(Counting(), ["a", "b"], "query", show_progress=False)
    emb = Counting()
    reader.embed(emb, ["a", "b"], "query", show_progress=False)
    assert emb.calls == []


@pytest.mark.parametrize("exc", [RuntimeError("model crashed"), KeyboardInterrupt()])
def test_failure_midway_keeps_finished_batches_only(tmp_path, exc):
    path = tmp_path / "c.sqlite"
    cache = EmbeddingCache(path)
    with pytest.raises(type(exc)):
        cache.embed(Counting(fail_on=3, exc=exc), TEXTS, "passage", batch_size=2, show_progress=False)
    assert len(cache) == 4
    emb = Counting()
    out = EmbeddingCache(path).embed(emb, TEXTS, "passage", batch_size=2, show_progress=False)
    assert emb.embedded == TEXTS[4:]
    np.testing.assert_array_equal(out, Counting().embed_passages(TEXTS))


def test_a_batch_is_all_or_nothing_when_the_write_fails(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = EmbeddingCache(path)
    import hashlib

    poison = hashlib.sha256("ATL-1655".encode()).hexdigest()
    cache._conn.execute(
        "CREATE TRIGGER poison BEFORE INSERT ON embeddings WHEN hex(NEW.text_sha256) = upper(?) "
        "BEGIN SELECT RAISE(ABORT, 'disk full'); END".replace("?", f"'{poison}'"))
    # batches: [Выгрузка отчёта, 満月の周期] commits; in [hello, ATL-1655] "hello" is inserted, then
    # the insert of ATL-1655 fails: "hello" must not remain either
    with pytest.raises(sqlite3.DatabaseError, match="disk full"):
        cache.embed(Counting(), ["Выгрузка отчёта", "満月の周期", "hello", "ATL-1655"], "query",
                    batch_size=2, show_progress=False)
    rows = cache._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    assert rows == 2


@pytest.mark.parametrize("bad, message", [
    (lambda t: np.zeros((len(t) + 1, 16), np.float32), r"shape \(3, 16\) for 2 texts"),
    (lambda t: np.zeros(16, np.float32), r"shape \(16,\)"),
    (lambda t: np.full((len(t), 16), np.nan, np.float32), "NaN"),
])
def test_invalid_embedder_output_raises_and_stores_nothing(bad, message):
    class Bad(Counting):
        def embed_queries(self, texts):
            return bad(texts)

    cache = EmbeddingCache(None)
    with pytest.raises(ResourceError, match=message):
        cache.embed(Bad(), ["a", "b"], "query", show_progress=False)
    assert len(cache) == 0


def test_bad_arguments():
    cache = EmbeddingCache(None)
    with pytest.raises(ValueError, match=r"kind must be one of \('query', 'passage'\), got 'doc'"):
        cache.embed(Counting(), ["a"], "doc")
    with pytest.raises(ValueError, match="batch_size"):
        cache.embed(Counting(), ["a"], "query", batch_size=0)
    with pytest.raises(TypeError, match="single string"):
        cache.embed(Counting(), "abc", "query")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        cache.embed(Counting(), ["a", None], "query")
    assert cache.embed(Counting(), [], "query").shape == (0, 16)


def test_a_file_that_is_not_a_cache_is_refused(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ValueError, match=str(junk)):
        EmbeddingCache(junk)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ValueError, match="expected version 1"):
        EmbeddingCache(other)
    with pytest.raises(ValueError, match="is a folder"):
        EmbeddingCache(tmp_path)


def test_progress_bar_only_when_there_is_something_to_embed(capsys):
    cache = EmbeddingCache(None)
    cache.embed(Counting(), ["a", "b"], "passage", desc="indexing corpus")
    assert "indexing corpus" in capsys.readouterr().err
    cache.embed(Counting(), ["a", "b"], "passage", desc="indexing corpus")
    cache.embed(Counting(), ["c"], "passage", desc="indexing corpus", show_progress=False)
    assert "indexing corpus" not in capsys.readouterr().err


def test_default_cache_path(monkeypatch, tmp_path):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("SEARCHKIT_CACHE")
    assert default_cache_path() == Path.home() / ".cache" / "searchkit" / "embeddings.sqlite"


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.sampled_from(["a", "b", "c", "ж", "日本", "", " "]) | st.text(max_size=8), max_size=12),
       batch_size=st.integers(1, 5))
def test_cache_equals_direct_embedding_for_any_texts(texts, batch_size):
    emb, cache = HashingEmbedder(dim=16), EmbeddingCache(None)
    for _ in range(2):
        out = cache.embed(emb, texts, "query", batch_size=batch_size, show_progress=False)
        np.testing.assert_array_equal(out, emb.embed_queries(texts))
    assert len(cache) == len(set(texts))


# --------------------------------------------------------------------------- H15: the cache is private

def _mode(p: Path) -> int:
    return p.stat().st_mode & 0o777


@pytest.fixture
def open_umask():
    old = os.umask(0o022)  # the usual umask: files 0644, folders 0755 unless created tighter
    yield
    os.umask(old)


def test_the_cache_its_side_files_and_a_new_folder_are_private(tmp_path, monkeypatch, open_umask):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SEARCHKIT_CACHE", raising=False)
    path = default_cache_path()
    assert not path.parent.exists()
    with EmbeddingCache(path) as cache:
        cache.embed(Counting(), TEXTS, "passage", show_progress=False)
        side = [Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert all(p.exists() for p in side)  # WAL mode: both exist while the cache is open
        assert [_mode(p) for p in [path, *side]] == [0o600] * 3
    assert _mode(path.parent) == 0o700
    assert _mode(path.parent.parent) == 0o700  # a ~/.cache we create is owner-only (XDG); an existing one keeps its mode


def test_an_existing_folder_is_left_alone(tmp_path, open_umask):
    (tmp_path / "shared").mkdir(mode=0o755)
    with EmbeddingCache(tmp_path / "shared" / "c.sqlite") as cache:
        cache.embed(Counting(), ["a"], "query", show_progress=False)
    assert _mode(tmp_path / "shared") == 0o755 and _mode(tmp_path / "shared" / "c.sqlite") == 0o600


def test_an_existing_cache_readable_by_others_is_tightened_with_a_warning(tmp_path, caplog, open_umask):
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.embed(Counting(), TEXTS, "passage", show_progress=False)
    side = [Path(f"{path}-wal"), Path(f"{path}-shm")]
    path.chmod(0o644)  # as an earlier searchkit left it
    for p in side:  # and side files a crash left behind
        p.touch()
        p.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="searchkit.index.cache"):
        with EmbeddingCache(path) as cache:
            assert [_mode(p) for p in [path, *side]] == [0o600] * 3
            assert len(cache) == len(TEXTS)
    warns = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warns) == 1 and str(path) in warns[0] and "0600" in warns[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="searchkit.index.cache"):
        EmbeddingCache(path).close()
    assert caplog.records == []  # once tightened, nothing more to say


# --------------------------------------------------------------------------- H16: one dimension per family

class Wide(Counting):
    """The same fingerprint as Counting(), but answering in another dimension (a misconfigured fallback)."""

    def __init__(self, dim: int) -> None:
        super().__init__(HashingEmbedder(dim=dim))

    def fingerprint(self) -> str:
        return Counting().fingerprint()


def test_a_vector_of_another_dimension_than_the_cached_family_is_never_stored(tmp_path):
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.embed(Counting(), TEXTS, "passage", show_progress=False)  # the family is 16-dimensional
    with EmbeddingCache(path) as cache:  # another process
        with pytest.raises(ResourceError, match=r"8-dimensional.*16"):
            cache.embed(Wide(8), ["a new query"], "query", show_progress=False)
        assert len(cache) == len(TEXTS)
        assert cache.embed(Counting(), ["a new query"], "query", show_progress=False).shape == (1, 16)


def test_an_expected_dimension_is_enforced_and_stale_vectors_are_embedded_again(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        with pytest.raises(ResourceError, match=r"8-dimensional.*16"):
            cache.embed(Wide(8), ["q"], "query", show_progress=False, dim=16)
        assert len(cache) == 0
    # a cache poisoned before this check existed: an 8-dimensional query vector under the family's fingerprint
    with EmbeddingCache(path) as cache:
        cache.embed(Wide(8), ["q"], "query", show_progress=False)
    emb = Counting()
    with caplog.at_level(logging.WARNING, logger="searchkit.index.cache"), EmbeddingCache(path) as cache:
        out = cache.embed(emb, ["q", "r"], "query", show_progress=False, dim=16)
        assert out.shape == (2, 16) and emb.embedded == ["q", "r"]
        assert cache.embed(emb, ["q"], "query", show_progress=False, dim=16).shape == (1, 16)
        assert len(emb.calls) == 1 and len(cache) == 2  # the stale vector was replaced
    assert any("are 8-dimensional, not the family's 16" in r.getMessage() for r in caplog.records)
    assert EmbeddingCache(None).embed(Counting(), [], "query", dim=16).shape == (0, 16)


# --------------------------------------------------------------------------- a full disk (issue 27, item 13)

_FULL_DISK = r'''
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing us
from searchkit.errors import ResourceError
from searchkit.index.cache import EmbeddingCache
from searchkit.index.embedders import HashingEmbedder

path, limit, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    with EmbeddingCache(path) as c:
        c.embed(HashingEmbedder(dim=256), [f"text {i}" for i in range(n)], "passage", show_progress=False)
except ResourceError as e:
    assert e.reason == "disk"
    print(e)
    sys.exit(3)
'''


def _fill_on_a_full_disk(path, limit: int, n: int):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", _FULL_DISK, str(path), str(limit), str(n)],
                          capture_output=True, text=True, timeout=120)


def test_a_new_cache_on_a_full_disk_says_so(tmp_path):
    path = tmp_path / "c.sqlite"
    done = _fill_on_a_full_disk(path, 0, 1)
    assert done.returncode == 3, done.stderr[-2000:]
    assert str(path) in done.stdout and ("the disk is full" in done.stdout or "write to disk failed" in done.stdout)
    assert "not a usable SQLite cache" not in done.stdout


def test_storing_on_a_full_disk_says_so_and_keeps_what_was_stored(tmp_path):
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.embed(HashingEmbedder(dim=256), ["kept 1", "kept 2"], "passage", show_progress=False)
    done = _fill_on_a_full_disk(path, 96 << 10, 400)  # 400 vectors of 1 KiB: the WAL outgrows 96 KiB
    assert done.returncode == 3, done.stderr[-2000:]
    assert str(path) in done.stdout and "storing embeddings failed" in done.stdout
    assert "Traceback" not in done.stderr
    with EmbeddingCache(path) as cache:
        assert len(cache) == 2
        got = cache.embed(HashingEmbedder(dim=256), ["kept 1"], "passage", show_progress=False)
        np.testing.assert_array_equal(got, HashingEmbedder(dim=256).embed_passages(["kept 1"]))


def test_a_fifo_as_cache_path_is_refused(tmp_path):
    from searchkit.errors import DataError

    fifo = tmp_path / "c.sqlite"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        EmbeddingCache(fifo)


def test_a_damaged_cache_is_one_line_on_the_command_line(tmp_path, monkeypatch, capsys):
    from searchkit.cli import main

    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    monkeypatch.setenv("SEARCHKIT_CACHE", str(junk))
    rc = main(["eval", "--dataset", "mini", "--config", str(Path(__file__).parent / "data" / "hashing.json"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1 and str(junk) in err
