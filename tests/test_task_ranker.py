"""Task search on the retriever engine: the hybrid ranker is a config with two retrievers (SPEC T, E2; hashing embedder)."""
from pathlib import Path
from dataclasses import replace

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as store
from searchkit.tools.task_engine import TaskEngine
from searchkit.tools.base import ToolContext
from searchkit.tools.tasks import TaskSearchError, TaskSearchParams, render, task_search

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"
CTX = ToolContext(caller="u-anna", space="acme", current_task=30)
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "tasks": {"retrievers": ["bm25", "dense"]}})


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, DEMO)
    return c


@pytest.fixture(scope="module")
def ranker(conn):
    return TaskEngine(conn, "acme", CFG, cache=EmbeddingCache(None))


def ids(r):
    return [h.comment_id for h in r.hits]


def test_hybrid_ranks_the_same_indexed_text(conn, ranker):
    r = task_search(TaskSearchParams(query="認証フロー"), replace(CTX, store=conn, engine=ranker))
    assert r.method == "hybrid" and ids(r)
    assert ids(r)[0] in (88, 95)
    assert "認証" in r.hits[0].excerpt


def test_hybrid_never_leaves_the_space_or_returns_the_current_task(conn, ranker):
    task_of = dict(conn.execute("SELECT id, task FROM comments").fetchall())
    space_of = dict(conn.execute("SELECT id, space FROM tasks").fetchall())
    for q in ["認証ログ", "認証", "API キー", "満月 周期 計算", "login"]:
        r = task_search(TaskSearchParams(query=q, limit=30), replace(CTX, store=conn, engine=ranker))
        for h in r.hits:
            assert space_of[task_of[h.comment_id]] == "acme"
            assert h.task_id != 30


def test_all_mode_requires_every_term(conn, ranker):
    r = task_search(TaskSearchParams(query="ログイン 認証", match_mode="all"), replace(CTX, store=conn, engine=ranker))
    fts = task_search(TaskSearchParams(query="ログイン 認証", match_mode="all"), replace(CTX, store=conn))
    assert set(ids(r)) == set(ids(fts))


def test_filters_apply_before_the_cut(conn, ranker):
    r = task_search(TaskSearchParams(query="認証", kind="result", limit=1), replace(CTX, store=conn, engine=ranker))
    assert [h.kind for h in r.hits] == ["result"]
    r = task_search(TaskSearchParams(query="認証", author="agent"), replace(CTX, store=conn, engine=ranker))
    assert r.hits and {h.author for h in r.hits} == {"agent"}


def test_ranker_of_another_space_is_refused(conn):
    other = TaskEngine(conn, "globex", CFG, cache=EmbeddingCache(None))
    with pytest.raises(TaskSearchError) as e:
        task_search(TaskSearchParams(query="認証"), replace(CTX, store=conn, engine=other))
    assert e.value.param == "space"


def test_render_works_for_hybrid(conn, ranker):
    text = render(task_search(TaskSearchParams(query="認証"), replace(CTX, store=conn, engine=ranker)), "ja")
    assert "comment:" in text


def test_fts5_fused_with_dense_is_a_config_not_a_code_path(conn):
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "tasks": {"retrievers": ["fts5", "dense"]},
                                  "fusion": {"weights": {"fts5": 0.5, "dense": 0.5}}})
    engine = TaskEngine(conn, "acme", cfg, cache=EmbeddingCache(None))
    r = task_search(TaskSearchParams(query="認証", limit=30), replace(CTX, store=conn, engine=engine))
    assert r.method == "hybrid" and ids(r)
    fts_only = task_search(TaskSearchParams(query="認証", limit=30), replace(CTX, store=conn))
    assert set(ids(fts_only)) <= set(ids(r))  # dense adds candidates, FTS5's hits stay


def test_the_default_engine_is_fts5_alone_in_its_own_order(conn):
    from searchkit.retrievers.fts5 import TaskScope, TermQuery

    engine = TaskEngine(conn, "acme")
    assert list(engine.retrievers) == ["fts5"]
    q = TermQuery("認証", ("認証",), "any")
    got, method = engine.rank(q, TaskScope("acme", 30), 10)
    assert method == "like" and got == ids(task_search(TaskSearchParams(query="認証"), replace(CTX, store=conn)))


def test_a_v1_config_with_the_searcher_ranker_migrates():
    cfg = SearchConfig.from_dict({"schema_version": 1, "tasks": {"ranker": "searcher"}})
    assert cfg.tasks.retrievers == ("bm25", "dense")


def test_one_catalogue_serves_both_tools_in_three_languages(conn):
    from searchkit.tools.messages import CATALOGUE, LANGS

    for lang in LANGS:
        keys = set(CATALOGUE[lang])
        assert {"reminder", "weak_match", "task.none", "task.hint", "task.split"} <= keys
        assert keys == set(CATALOGUE["en"])  # every language says everything
    text = render(task_search(TaskSearchParams(query="満月の周期の計算"), replace(CTX, store=conn)), "ru")
    assert text.startswith("Примечание:") and "満月" in text
