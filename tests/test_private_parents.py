"""The folders a writer creates for private data are owner-only whatever the umask (issue 39 item 8a).

An index holds the text of people's chats (personal ones included) and the embedding cache the
vectors of every passage indexed: under umask 0, ``index --out a/b/idx`` and a new
``SEARCHKIT_CACHE=c1/c2/cache.sqlite`` created ``a``, ``b``, ``c1`` and ``c2`` 0777, so anyone could
rename or replace what is inside them. Every missing parent is now created 0700; folders that
already exist keep their mode."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig

ROOT = Path(__file__).resolve().parents[1]


def _mode(p: Path) -> int:
    return os.stat(p).st_mode & 0o777


@pytest.fixture()
def umask0():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture()
def shared(tmp_path):
    """A folder that exists, group- and world-readable: its mode is kept."""
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o755)
    return d


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_index_out_creates_its_missing_parents_owner_only_under_umask_0(tmp_path, shared, umask0, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}}).save(cfg)
    out = shared / "a" / "b" / "idx"
    assert main(["index", "--dataset", str(ROOT / "datasets" / "mini"), "--config", str(cfg), "--out", str(out),
                 "--quiet"]) == 0
    assert _mode(shared) == 0o755
    assert _mode(shared / "a") == 0o700 and _mode(shared / "a" / "b") == 0o700 and _mode(out) == 0o700


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_a_new_embedding_cache_creates_its_missing_parents_owner_only_under_umask_0(shared, umask0):
    from searchkit.index.cache import EmbeddingCache

    path = shared / "c1" / "c2" / "cache.sqlite"
    EmbeddingCache(path).close()
    assert _mode(shared) == 0o755
    assert _mode(shared / "c1") == 0o700 and _mode(shared / "c1" / "c2") == 0o700
    assert _mode(path) == 0o600


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_atomic_directory_creates_its_missing_parents_owner_only_under_umask_0(shared, umask0):
    from searchkit.util import atomic_directory

    with atomic_directory(shared / "p" / "q" / "out") as tmp:
        (tmp / "f").write_text("x", encoding="utf-8")
    assert _mode(shared) == 0o755
    assert _mode(shared / "p") == 0o700 and _mode(shared / "p" / "q") == 0o700


def test_a_cache_path_under_a_file_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """``SEARCHKIT_CACHE`` under a regular file was a raw ``[Errno 20] Not a directory`` (issue 39
    item 8b): now one line naming the cache and what to do."""
    (tmp_path / "file").write_text("x", encoding="utf-8")
    bad = tmp_path / "file" / "cache.sqlite"
    monkeypatch.setenv("SEARCHKIT_CACHE", str(bad))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}}).save(cfg)
    rc = main(["eval", "--dataset", str(ROOT / "datasets" / "mini"), "--config", str(cfg), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "[Errno" not in err[0] and str(bad) in err[0] and "SEARCHKIT_CACHE" in err[0], err
    assert (tmp_path / "file").read_text(encoding="utf-8") == "x"
