"""Issue 4 item 6: the core Searcher as a second ranker over the task store (hashing embedder)."""
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as store
from searchkit.tools.task_ranker import HybridTaskRanker
from searchkit.tools.tasks import TaskContext, TaskSearchError, render, task_search

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"
CTX = TaskContext(space="acme", current_task=30, owner="u-anna")
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "tasks": {"ranker": "searcher"}})


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, DEMO)
    return c


@pytest.fixture(scope="module")
def ranker(conn):
    return HybridTaskRanker(conn, "acme", CFG, cache=EmbeddingCache(None))


def ids(r):
    return [h.comment_id for h in r.hits]


def test_hybrid_ranks_the_same_indexed_text(conn, ranker):
    r = task_search(conn, CTX, query="認証フロー", ranker=ranker)
    assert r.method == "hybrid" and ids(r)
    assert ids(r)[0] in (88, 95)
    assert "認証" in r.hits[0].excerpt


def test_hybrid_never_leaves_the_space_or_returns_the_current_task(conn, ranker):
    task_of = dict(conn.execute("SELECT id, task FROM comments").fetchall())
    space_of = dict(conn.execute("SELECT id, space FROM tasks").fetchall())
    for q in ["認証ログ", "認証", "API キー", "満月 周期 計算", "login"]:
        r = task_search(conn, CTX, query=q, ranker=ranker, limit=30)
        for h in r.hits:
            assert space_of[task_of[h.comment_id]] == "acme"
            assert h.task_id != 30


def test_all_mode_requires_every_term(conn, ranker):
    r = task_search(conn, CTX, query="ログイン 認証", match_mode="all", ranker=ranker)
    fts = task_search(conn, CTX, query="ログイン 認証", match_mode="all")
    assert set(ids(r)) == set(ids(fts))


def test_filters_apply_before_the_cut(conn, ranker):
    r = task_search(conn, CTX, query="認証", kind="result", ranker=ranker, limit=1)
    assert [h.kind for h in r.hits] == ["result"]
    r = task_search(conn, CTX, query="認証", author="agent", ranker=ranker)
    assert r.hits and {h.author for h in r.hits} == {"agent"}


def test_ranker_of_another_space_is_refused(conn):
    other = HybridTaskRanker(conn, "globex", CFG, cache=EmbeddingCache(None))
    with pytest.raises(TaskSearchError) as e:
        task_search(conn, CTX, query="認証", ranker=other)
    assert e.value.param == "space"


def test_render_works_for_hybrid(conn, ranker):
    text = render(task_search(conn, CTX, query="認証", ranker=ranker), "ja")
    assert "comment:" in text
