"""Task search is the one search path (issue 42 item 2; SPEC T1, T3, T4).

Every task engine, FTS5 alone included, is a Searcher over the space's comments searched by
``Searcher.search`` inside one scope: a ``TaskScope`` (a ``SqlScope``) that FTS5 pushes down into its
SQL and that the other retrievers read as a candidate mask. No stand-in corpus, no query or method
handed to FTS5 on the side; the answers are those ``test_task_engine_sql.EXPECTED`` holds.
"""
import numpy as np
import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest.tasks import query_terms
from searchkit.retrievers.fts5 import FTS5Retriever, TaskScope, TermQuery
from searchkit.retrievers.scopes import PushesDown, SqlScope
from searchkit.searcher import Searcher
from searchkit.tools import task_engine
from searchkit.tools.task_engine import TaskEngine
from test_task_engine_sql import CASES, CONFIGS, EXPECTED, make_store


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("one-path"))


def engine_of(conn, config):
    return TaskEngine(conn, "acme", SearchConfig.from_dict(CONFIGS[config]), cache=EmbeddingCache(None))


@pytest.mark.parametrize("config", ["fts5", "bm25", "fts5+bm25+dense"])
def test_every_engine_ranks_through_searcher_search(conn, config, monkeypatch):
    scopes = []
    search = Searcher.search

    def spy(self, query, k=10, filters=None, **kw):
        scopes.append(kw.get("scope"))
        return search(self, query, k, filters, **kw)

    monkeypatch.setattr(Searcher, "search", spy)
    engine = engine_of(conn, config)
    for case, (text, mode, scope, limit) in CASES.items():
        got = engine.rank(TermQuery(text, query_terms(text), mode), TaskScope("acme", **scope), limit)
        assert [got[0], got[1]] == EXPECTED[config][case]
    assert len(scopes) == len(CASES) and all(isinstance(s, TaskScope) and s.conn is conn for s in scopes)


def test_the_scope_is_pushed_down_into_fts5_and_a_candidate_mask_for_the_others(conn):
    engine = engine_of(conn, "fts5+bm25")
    s = engine.searcher
    scope = TaskScope("acme", current_task=2).on(conn)
    assert isinstance(scope, SqlScope) and isinstance(s.retrievers["fts5"], PushesDown)
    q = s.query("cache timeout", 10, scope=scope)
    assert q.views["fts5"].scope == scope  # inside its SQL (T1)
    assert q.views["bm25"] is s.retrievers["bm25"]  # not scoped: its statistics stay the space's
    allowed = scope.allowed()
    assert q.scope is None and np.array_equal(q.pmask, np.isin(engine.ids, allowed)[s.passage_record])
    hits = s.search("cache timeout", 10, scope=scope).hits
    assert hits and {int(h.record.id) for h in hits} <= set(allowed.tolist())


def test_a_scope_selecting_nothing_asks_only_what_pushes_it_down(conn):
    s = engine_of(conn, "fts5+bm25").searcher
    scope = TaskScope("acme", task_id=999).on(conn)
    q = s.query("cache", 10, scope=scope)
    assert list(q.views) == ["fts5"] and q.pmask is None
    assert s.search("cache", 10, scope=scope).hits == ()


def test_match_mode_all_is_part_of_the_scope(conn):
    q = TermQuery("cache エラー", query_terms("cache エラー"), "all")
    scope = TaskScope("acme").on(conn, q.terms)
    assert scope.every == ("cache", "エラー") and scope == TaskScope("acme", every=q.terms)
    assert scope.allowed().tolist() == TaskScope("acme").allowed(conn, q).tolist() == [13, 14, 18]
    assert FTS5Retriever(conn).push_down(scope).prepare(q.text).mode == "all"
    assert FTS5Retriever(conn).push_down(TaskScope("acme")).prepare(q.text).mode == "any"


def test_no_stand_in_corpus_and_no_side_channel(conn):
    assert not hasattr(task_engine, "CommentIds")
    r = FTS5Retriever(conn)
    assert not hasattr(r, "for_query") and not hasattr(r, "last_method")
    assert TermQuery("ui db", ("ui", "db")).method == "like" and TermQuery("cache", ("cache",)).method == "fts"
    with pytest.raises(ValueError) as e:  # the scope travels one way: pushed down, never as a passage mask
        r.search(r.prepare("cache"), 10, TaskScope("acme"))
    assert e.value.param == "scope"


def test_a_scope_is_read_once_per_searcher(conn):
    s = engine_of(conn, "bm25").searcher
    scope = TaskScope("acme", kind="result").on(conn)
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        first = s.search("cache", 10, scope=scope)
        again = s.search("cache", 10, scope=TaskScope("acme", kind="result").on(conn))
    finally:
        conn.set_trace_callback(None)
    assert len([sql for sql in seen if "SELECT c.id FROM comments c" in sql]) == 1
    assert [h.record.id for h in first.hits] == [h.record.id for h in again.hits]


def test_fts5_alone_reads_the_space_once_per_store_version(tmp_path):
    conn = make_store(tmp_path)
    one, two = TaskEngine(conn, "acme"), TaskEngine(conn, "acme")
    assert one.searcher is two.searcher
    other = TaskEngine(conn, "acme", SearchConfig.from_dict({"fusion": {"rrf_k": 10}}))
    assert other.searcher is not one.searcher
    conn.execute("UPDATE comments SET indexed = NULL WHERE id = 13")  # a change on this connection
    conn.commit()
    three = TaskEngine(conn, "acme")
    assert three.searcher is not one.searcher and "13" not in {r.id for r in three.searcher.records}
    ids, method = three.rank(TermQuery("cache timeout", ("cache", "timeout")), TaskScope("acme"), 10)
    assert method == "fts" and 13 not in ids and ids
