"""Task search as a Searcher whose scope is SQL (issue 29 item 2; SPEC T1, T3, T4).

``EXPECTED`` holds the answers (comment ids in order, method) the task engine gave before it became
a Searcher (``tools/task_engine.py`` at 5cfd93c, which fused its own runs and re-implemented the
scope as numpy masks), captured on the store ``STORE`` builds: ties of equal comments, comments
longer than a passage, ids out of time order, three spaces. The redesign must answer the same.
"""
import json

import numpy as np
import pytest

from searchkit import retrievers
from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as store
from searchkit.ingest.tasks import query_terms
from searchkit.retrievers.fts5 import FTS5Retriever, TaskScope, TermQuery
from searchkit.searcher import Searcher
from searchkit.tools.task_engine import TaskEngine
from searchkit.tools.base import ToolContext
from searchkit.tools.tasks import TaskSearchParams, task_search

TASKS = [(1, "acme", "認証の改修"), (2, "acme", "cache timeout"), (3, "acme", "payment"), (9, "globex", "認証 cache")]
LONG = " ".join(["cache timeout 認証 エラー payment"] * 6)
COMMENTS = [  # id, task, author, kind, body, minute (ids are not in time order)
    (10, 1, "user", "request", "認証フローは変更しないでください", 50),
    (11, 1, "agent", "result", "cache timeout を認証のあとに再試行しました", 5),
    (12, 1, "agent", "progress", "cache timeout エラー", 40),
    (13, 2, "bob", "request", "cache timeout エラー", 40),
    (14, 2, "agent", "result", LONG, 30),
    (15, 2, "user", "comment", "認証 cache (not indexed)", 20),
    (16, 2, "agent", "ask", "Straße STRASSE db ok", 10),
    (17, 3, "user", "request", "payment invoice PDF の認証", 15),
    (18, 3, "agent", "result", "cache timeout エラー", 40),
    (19, 3, "bob", "handoff", "ui の改修と db の再試行", 25),
    (20, 3, "agent", "result", "payment timeout 100% a_b", 35),
    (21, 1, "bob", "result", "strasse と STRASSE と ui", 45),
    (30, 9, "user", "request", "認証 cache timeout エラー (globex)", 1),
]


def make_store(folder):
    """The store of ``TASKS`` and ``COMMENTS`` (in memory; its JSON-lines files under ``folder``)."""
    (folder / "tasks.jsonl").write_text("".join(
        json.dumps({"id": t, "space": sp, "title": title, "state": "open", "piece": "default",
                    "created": "2026-01-01T00:00:00Z", "updated": "2026-01-02T00:00:00Z"}, ensure_ascii=False) + "\n"
        for t, sp, title in TASKS), encoding="utf-8")
    (folder / "comments.jsonl").write_text("".join(
        json.dumps({"id": c, "task": t, "author": a, "kind": k, "body": b, "ts": f"2026-03-01T10:{m:02d}:00Z"},
                   ensure_ascii=False) + "\n" for c, t, a, k, b, m in COMMENTS), encoding="utf-8")
    c = store.connect(":memory:")
    store.import_dir(c, folder)
    return c


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("tasks"))


HASH = {"dense": {"embedder": "hashing"}}
CONFIGS = {
    "fts5": {},
    "bm25": {"tasks": {"retrievers": ["bm25"]}},
    "dense": {**HASH, "tasks": {"retrievers": ["dense"]}},
    "fts5+bm25": {"tasks": {"retrievers": ["fts5", "bm25"]}, "fusion": {"weights": {"fts5": 0.5, "bm25": 0.5}}},
    "fts5+bm25+dense": {**HASH, "tasks": {"retrievers": ["fts5", "bm25", "dense"]},
                        "fusion": {"weights": {"fts5": 0.3, "bm25": 0.3, "dense": 0.4}}},
    "bm25+dense/rrf": {**HASH, "tasks": {"retrievers": ["bm25", "dense"]}, "fusion": {"method": "rrf"}},
    "fts5+bm25/nofill-short": {"passages": {"max_chars": 50}, "bm25": {"depth": 2},
                               "tasks": {"retrievers": ["fts5", "bm25"]},
                               "fusion": {"weights": {"fts5": 0.5, "bm25": 0.5}, "fill_missing": False}},
}
CASES = {  # name -> (query, match_mode, TaskScope keywords besides the space, limit)
    "any": ("cache timeout", "any", {}, 10),
    "any-current": ("cache timeout", "any", {"current_task": 2}, 10),
    "all": ("cache エラー", "all", {}, 10),
    "like": ("ui db", "any", {}, 10),
    "like-all": ("ui の", "all", {}, 10),
    "kind": ("認証", "any", {"kind": "result"}, 10),
    "author": ("timeout", "any", {"author": "agent"}, 2),
    "task": ("cache", "any", {"task_id": 3}, 10),
    "fold-all": ("Straße strasse", "all", {}, 10),
    "limit1": ("cache timeout エラー", "any", {}, 1),
}

EXPECTED = {  # config -> case -> [comment ids, method], as the engine before the redesign answered
    'fts5': {
        'any': [[18, 13, 14, 11, 20], 'fts'],
        'any-current': [[18, 11, 20], 'fts'],
        'all': [[18, 13, 14], 'fts'],
        'like': [[21, 19, 16], 'like'],
        'like-all': [[19], 'like'],
        'kind': [[14, 11], 'like'],
        'author': [[18, 14], 'fts'],
        'task': [[18], 'fts'],
        'fold-all': [[16], 'fts'],
        'limit1': [[18], 'fts'],
    },
    'bm25': {
        'any': [[13, 18, 14, 11, 20], 'hybrid'],
        'any-current': [[18, 11, 20], 'hybrid'],
        'all': [[13, 18, 14], 'hybrid'],
        'like': [[19, 21, 16], 'hybrid'],
        'like-all': [[19], 'hybrid'],
        'kind': [[14, 11], 'hybrid'],
        'author': [[11, 14], 'hybrid'],
        'task': [[18], 'hybrid'],
        'fold-all': [[16, 21], 'hybrid'],
        'limit1': [[13], 'hybrid'],
    },
    'dense': {
        'any': [[13, 18, 11, 14, 20, 17, 21, 16, 19, 10], 'hybrid'],
        'any-current': [[18, 11, 20, 17, 21, 19, 10], 'hybrid'],
        'all': [[13, 18, 14], 'hybrid'],
        'like': [[19, 16, 21, 17, 14, 20, 11, 13, 18, 10], 'hybrid'],
        'like-all': [[19], 'hybrid'],
        'kind': [[14, 11, 18, 20, 21], 'hybrid'],
        'author': [[18, 11], 'hybrid'],
        'task': [[18, 17, 19, 20], 'hybrid'],
        'fold-all': [[16, 21], 'hybrid'],
        'limit1': [[13], 'hybrid'],
    },
    'fts5+bm25': {
        'any': [[13, 18, 14, 11, 20], 'hybrid'],
        'any-current': [[18, 11, 20], 'hybrid'],
        'all': [[13, 18, 14], 'hybrid'],
        'like': [[19, 21, 16], 'hybrid'],
        'like-all': [[19], 'hybrid'],
        'kind': [[14, 11], 'hybrid'],
        'author': [[18, 14], 'hybrid'],
        'task': [[18], 'hybrid'],
        'fold-all': [[16, 21], 'hybrid'],
        'limit1': [[13], 'hybrid'],
    },
    'fts5+bm25+dense': {
        'any': [[13, 18, 14, 11, 20, 17, 21, 16, 19, 10], 'hybrid'],
        'any-current': [[18, 11, 20, 17, 21, 19, 10], 'hybrid'],
        'all': [[13, 18, 14], 'hybrid'],
        'like': [[19, 21, 16, 17, 14, 20, 11, 13, 18, 10], 'hybrid'],
        'like-all': [[19], 'hybrid'],
        'kind': [[14, 11, 18, 20, 21], 'hybrid'],
        'author': [[18, 11], 'hybrid'],
        'task': [[18, 17, 19, 20], 'hybrid'],
        'fold-all': [[16, 21], 'hybrid'],
        'limit1': [[13], 'hybrid'],
    },
    'bm25+dense/rrf': {
        'any': [[13, 18, 11, 14, 20, 17, 21, 16, 19, 10], 'hybrid'],
        'any-current': [[18, 11, 20, 17, 21, 19, 10], 'hybrid'],
        'all': [[13, 18, 14], 'hybrid'],
        'like': [[19, 16, 21, 17, 14, 20, 11, 13, 18, 10], 'hybrid'],
        'like-all': [[19], 'hybrid'],
        'kind': [[14, 11, 18, 20, 21], 'hybrid'],
        'author': [[11, 18], 'hybrid'],
        'task': [[18, 17, 19, 20], 'hybrid'],
        'fold-all': [[16, 21], 'hybrid'],
        'limit1': [[13], 'hybrid'],
    },
    'fts5+bm25/nofill-short': {
        'any': [[13, 18, 14, 11, 20], 'hybrid'],
        'any-current': [[18, 11, 20], 'hybrid'],
        'all': [[13, 18, 14], 'hybrid'],
        'like': [[19, 21, 16], 'hybrid'],
        'like-all': [[19], 'hybrid'],
        'kind': [[14, 11], 'hybrid'],
        'author': [[18, 14], 'hybrid'],
        'task': [[18], 'hybrid'],
        'fold-all': [[16, 21], 'hybrid'],
        'limit1': [[13], 'hybrid'],
    },
}


def answer(conn, config, case):
    text, mode, scope, limit = CASES[case]
    engine = TaskEngine(conn, "acme", SearchConfig.from_dict(CONFIGS[config]), cache=EmbeddingCache(None))
    return engine.rank(TermQuery(text, query_terms(text), mode), TaskScope("acme", **scope), limit)


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("case", list(CASES))
def test_answers_are_those_of_the_engine_before_it_was_a_searcher(conn, config, case):
    ids, method = answer(conn, config, case)
    assert [ids, method] == EXPECTED[config][case]


# ------------------------------------------------------------------ the scope is SQL, written once

def by_python(conn, scope, query=None):
    """The comments a scope allows, filtered in Python over the store's rows (what the engine's numpy
    masks did before): indexed, in the space, the filters, and with ``all`` every folded term."""
    rows = conn.execute("SELECT c.id, c.task, t.space, c.kind, c.author, c.indexed FROM comments c"
                        " JOIN tasks t ON t.id = c.task WHERE c.indexed IS NOT NULL").fetchall()
    out = []
    for cid, task, space, kind, author, text in rows:
        if space != scope.space or task == scope.current_task:
            continue
        wanted = {"kind": (scope.kind, kind), "author": (scope.author, author), "task_id": (scope.task_id, task)}
        if any(want is not None and want != have for want, have in wanted.values()):
            continue
        if query is not None and query.mode == "all" and not all(store.fold(t) in store.fold(text) for t in query.terms):
            continue
        out.append(cid)
    return sorted(out)


SCOPES = [{}, {"current_task": 2}, {"kind": "result"}, {"author": "bob"}, {"task_id": 3},
          {"current_task": 1, "kind": "request"}]


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("text,mode", [("cache", "any"), ("cache エラー", "all"), ("Straße strasse", "all"),
                                       ("ui の", "all"), ("100% a_b", "all")])
def test_the_sql_scope_allows_what_the_filters_say(conn, scope, text, mode):
    s, q = TaskScope("acme", **scope), TermQuery(text, query_terms(text), mode)
    assert s.allowed(conn, q).tolist() == by_python(conn, s, q)


def test_the_sql_scope_keeps_the_space_and_skips_unindexed_comments(conn):
    assert TaskScope("acme").allowed(conn).tolist() == [10, 11, 13, 14, 16, 17, 18, 19, 20, 21]  # 12, 15: not indexed
    assert TaskScope("globex").allowed(conn).tolist() == [30]
    assert TaskScope("acme", current_task=1, kind="result").allowed(conn).tolist() == [14, 18, 20]
    # all: every folded term is in the folded text (ß folds to ss), whichever retriever ranks
    q = TermQuery("Straße strasse", ("Straße", "strasse"), "all")
    assert TaskScope("acme").allowed(conn, q).tolist() == [16, 21]


@pytest.mark.parametrize("config", [c for c in CONFIGS if c != "fts5"])
def test_no_retriever_answers_outside_the_scope(conn, config):
    engine = TaskEngine(conn, "acme", SearchConfig.from_dict(CONFIGS[config]), cache=EmbeddingCache(None))
    fts = FTS5Retriever(conn)
    for text, mode, scope, _limit in CASES.values():
        s, q = TaskScope("acme", **scope), TermQuery(text, query_terms(text), mode)
        ids, _ = engine.rank(q, s, 30)
        allowed = set(s.allowed(conn, q).tolist())
        if "fts5" in engine.retrievers:  # FTS5's own matches, inside the same scope in its own SQL
            allowed |= set(fts.push_down(s).search(q, 100)[0].tolist())
        assert set(ids) <= allowed and len(ids) == len(set(ids))


# ------------------------------------------------------------------ a Searcher, its stages, FTS5 registered

def test_fts5_is_a_registered_scopable_retriever_without_a_config_section(conn):
    spec = retrievers.get("fts5")
    assert spec.section is None and spec.config is None
    assert "fts5" not in SearchConfig().retriever_sections()
    assert SearchConfig().fingerprint() == "c8a2b91f72a01671"  # the shipped config's, unchanged
    r = FTS5Retriever(conn)
    assert isinstance(r, retrievers.Scopable) and isinstance(r, retrievers.Retriever)
    with pytest.raises(ValueError) as e:
        r.scoped(np.ones(3, dtype=bool))  # its scope is SQL, not a passage mask
    assert e.value.param == "scope"
    with pytest.raises(ValueError):
        r.search(r.prepare("cache"), 10)  # task search is always inside one space


def test_the_engine_is_a_searcher_over_the_comments(conn):
    cfg = SearchConfig.from_dict(CONFIGS["fts5+bm25+dense"])
    engine = TaskEngine(conn, "acme", cfg, cache=EmbeddingCache(None))
    s = engine.searcher
    assert isinstance(s, Searcher) and list(s.retrievers) == ["fts5", "bm25", "dense"]
    assert list(engine.retrievers) == ["fts5", "bm25", "dense"]
    assert [r.id for r in s.records] == [str(c) for c in engine.ids] == [str(c) for c in sorted(engine.ids)]
    assert engine.ids.tolist() == TaskScope("acme").allowed(conn).tolist()
    # FTS5 answers with the Searcher's rows, a row scoring as its comment
    fts = s.retrievers["fts5"].scoped(TaskScope("acme"))
    q = fts.prepare("cache timeout")
    rows, scores = fts.search(q, 10)
    assert [int(engine.ids[s.passage_record[r]]) for r in rows] == FTS5Retriever(conn).push_down(TaskScope("acme")).search(q, 10)[0].tolist()
    long_rows = s.record_passages(int(np.flatnonzero(engine.ids == 14)[0]))
    assert len(set(fts.scores_for(q, long_rows).tolist())) == 1
    # its search path is the Searcher's stages
    assert engine.pipeline.names == ("retrieve", "fuse", "cut")


def test_fts5_alone_is_a_searcher_keeping_its_order_and_method(conn):
    # issue 42 item 2: no stand-in corpus; FTS5 alone is a Searcher over the comments, one passage each
    engine = TaskEngine(conn, "acme")
    s = engine.searcher
    assert isinstance(s, Searcher) and list(s.retrievers) == list(engine.retrievers) == ["fts5"]
    assert len(s.passages) == len(s.records) and engine.pipeline.names == ("retrieve", "keep", "cut")
    ids, method = engine.rank(TermQuery("認証", ("認証",)), TaskScope("acme"), 10)
    assert method == "like" and ids == [10, 14, 17, 11]  # two characters: LIKE, newest first (T4)
    r = task_search(TaskSearchParams(query="認証"), ToolContext(caller="u", space="acme", current_task=None, store=conn))
    assert [h.comment_id for h in r.hits] == ids and r.method == "like"
