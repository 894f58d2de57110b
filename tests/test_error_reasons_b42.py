"""Issue 42 item 6 (part B): the module error classes are gone; each is its meaning in
``searchkit.errors``, and where callers tell two cases apart the instance's ``reason`` says which.
"""
from __future__ import annotations

import importlib

import pytest

from searchkit.errors import DataError, InputError, ResourceError

REMOVED = {
    "searchkit.serve.auth": ["TokensError"], "searchkit.serve.startup": ["ServeError"],
    "searchkit.serve.calllog": ["LogFileError"], "searchkit.serve.state": ["RefreshError"],
    "searchkit.scale": ["ScaleError", "ClusterUnreachable", "WorkerFailed"],
    "searchkit.ingest.tasks": ["TaskStoreError", "TaskStoreLocked", "FTS5Missing"],
    "searchkit.rank.http_rerank": ["RerankError"], "searchkit.tools.access": ["AccessError"],
    "searchkit.index.writes": ["IndexWriteError"], "searchkit.index.cache": ["CacheError", "CacheWriteError"],
    "searchkit.index.store": ["IndexStoreError", "IndexNotFoundError"],
    "searchkit.index.embedders": ["EmbeddingError"], "searchkit.index.embedding": ["EmbeddingError"],
}


@pytest.mark.parametrize("module", sorted(REMOVED))
def test_the_module_classes_are_gone(module):
    if module.startswith("searchkit.serve"):
        pytest.importorskip("mcp", reason="the 'serve' extra")
    mod = importlib.import_module(module)
    assert [n for n in REMOVED[module] if hasattr(mod, n)] == []


def test_no_index_at_all_is_a_data_error_saying_so(tmp_path):
    from searchkit.index import store

    for folder in (tmp_path / "absent", tmp_path):  # no such folder; a folder without an index
        with pytest.raises(DataError, match="is not a searchkit index") as e:
            with store.reading(folder):
                pass
        assert e.value.reason == "no_index" and e.value.code == "data"


def test_a_failed_index_write_is_a_resource_error_with_reason_disk(tmp_path):
    from searchkit.index.writes import write_failure

    err = write_failure(tmp_path / "x.npz", OSError(28, "No space left on device"))
    assert isinstance(err, ResourceError) and not isinstance(err, OSError)
    assert err.reason == "disk" and str(err).startswith(f"cannot write {tmp_path / 'x.npz'}: the disk is full")


def test_who_may_see_what_unreadable_is_a_resource_error_with_reason_access(tmp_path):
    from searchkit.tools.access import WorkspaceAccess

    with pytest.raises(ResourceError, match="cannot check who may see what") as e:
        WorkspaceAccess(tmp_path / "gone").snapshot()
    assert e.value.reason == "access"


def test_the_command_line_tells_an_embedder_failure_by_its_reason():
    from searchkit.cli import _embedding_failed

    assert _embedding_failed(ResourceError("endpoint down", reason="embedding"))
    assert not _embedding_failed(ResourceError("cluster down"))
    assert not _embedding_failed(ResourceError("disk full", reason="disk"))


def test_an_embedding_of_another_dimension_has_reason_embedding():
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedders import HashingEmbedder

    cache = EmbeddingCache(None)
    cache.embed(HashingEmbedder(dim=8), ["a"], "passage", show_progress=False)
    with pytest.raises(ResourceError) as e:
        cache.put(HashingEmbedder(dim=8), ["b"], HashingEmbedder(dim=16).embed_passages(["b"]), "passage", dim=8)
    assert e.value.reason == "embedding"


def test_the_server_names_the_task_store_and_access_by_reason_only():
    pytest.importorskip("mcp", reason="the 'serve' extra")
    from searchkit.serve.service import ACCESS_UNAVAILABLE, TASK_STORE_UNAVAILABLE, UNAVAILABLE, unavailable_text

    assert unavailable_text(DataError("t.db: locked", reason="locked")) == TASK_STORE_UNAVAILABLE
    assert unavailable_text(DataError("t.db: bad row", reason="task_store")) == TASK_STORE_UNAVAILABLE
    assert unavailable_text(DataError("idx: damaged")) == UNAVAILABLE  # another DataError: not the task store
    assert unavailable_text(ResourceError("ws unreadable", reason="access")) == ACCESS_UNAVAILABLE
    assert unavailable_text(ResourceError("endpoint down", reason="embedding")) == UNAVAILABLE


@pytest.mark.parametrize("make, match", [
    (lambda: __import__("searchkit.index.embedders", fromlist=["x"]).make_embedder("nope"), "unknown embedder"),
    (lambda: __import__("searchkit.index.embedders", fromlist=["x"]).OpenAIEmbedder(base_url="ftp://x", model="m"),
     "base_url must be an http"),
    (lambda: __import__("searchkit.index.engine", fromlist=["x"]).make_engine("nope"), "unknown engine"),
    (lambda: __import__("searchkit.index.bm25", fromlist=["x"]).get_variant("nope"), "unknown BM25 variant"),
    (lambda: __import__("searchkit.tools.messages", fromlist=["x"]).message("xx", "k"), "lang must be one of"),
])
def test_bad_input_values_are_input_errors_with_their_message(make, match):
    with pytest.raises(InputError, match=match) as e:
        make()
    assert e.value.code == "input" and isinstance(e.value, ValueError)


def test_a_bm25_index_without_term_frequencies_is_a_data_error():
    import numpy as np

    from searchkit.config import BM25Config
    from searchkit.index.bm25 import BM25Index
    from searchkit.index.bm25_scope import ScopedBM25

    ix = BM25Index.build([["a", "b"], ["b", "c"]], BM25Config())
    ix._tf = None  # as an index saved by an older searchkit loads
    allowed = np.ones(2, dtype=bool)
    for scope in (lambda: ix.restrict(allowed), lambda: ScopedBM25(ix, allowed)):
        with pytest.raises(DataError, match="no term frequencies .*rebuild it"):
            scope()
