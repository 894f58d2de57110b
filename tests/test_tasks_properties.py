"""Property tests for task search (SPEC T1, T4): scope invariants and terms searched as text."""
import unicodedata

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from searchkit.ingest import tasks as store
from searchkit.tools.tasks import TaskContext, TaskSearchError, query_terms, task_search

WORDS = ["認証", "ログイン", "画面", "満月", "周期", "計算", "ошибка", "импорт", "report", "CSV", "AND", "OR",
         "NEAR", "a*", '"q"', "50%", "x_y", "id", "Ж"]
SPACES = ["a", "b", "c"]
KINDS = ["request", "result", "ask", "comment", "interjection_ack"]

comment_st = st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), st.sampled_from(KINDS))
store_st = st.lists(  # one entry per task: (space, [comments])
    st.tuples(st.sampled_from(SPACES), st.lists(comment_st, max_size=4)), min_size=1, max_size=6
)


def build(tasks):
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": i, "space": sp, "title": f"t{i}", "state": "open",
                            "updated": f"2026-01-01T00:{i:02d}:00Z"} for i, (sp, _) in enumerate(tasks, 1)])
    rows, cid = [], 0
    for tid, (_, comments) in enumerate(tasks, 1):
        for words, kind in comments:
            cid += 1
            rows.append({"id": cid, "task": tid, "author": "user", "kind": kind, "body": " ".join(words),
                         "ts": f"2026-01-01T01:{cid:02d}:00Z"})
    store.add_comments(conn, rows)
    return conn


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tasks=store_st,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    mode=st.sampled_from(["any", "all"]),
    space=st.sampled_from(SPACES),
    current=st.one_of(st.none(), st.integers(1, 6)),
)
def test_hits_stay_in_space_and_out_of_the_current_task(tasks, query, mode, space, current):
    conn = build(tasks)
    ctx = TaskContext(space, current, "u")
    r = task_search(conn, ctx, query=query, match_mode=mode, limit=30)
    got = {h.comment_id for h in r.hits}
    task_of = dict(conn.execute("SELECT c.id, t.space FROM comments c JOIN tasks t ON t.id = c.task"))
    for h in r.hits:
        assert task_of[h.comment_id] == space
        assert h.task_id != current
    if r.split_from is None:  # exact reference: case-folded substring over the indexed text
        combine = any if mode == "any" else all
        expected = {
            cid for cid, text, sp, tid in conn.execute(
                "SELECT c.id, c.indexed, t.space, t.id FROM comments c JOIN tasks t ON t.id = c.task"
                " WHERE c.indexed IS NOT NULL")
            if sp == space and tid != current and combine(t.casefold() in text.casefold() for t in r.terms)
        }
        assert got == expected


@pytest.fixture(scope="module")
def base_rows():
    return [
        {"id": 1, "task": 1, "author": "user", "kind": "request", "body": "既存の認証フロー AND OR NEAR", "ts": "2026-01-01T00:00:00Z"},
        {"id": 2, "task": 2, "author": "agent", "kind": "result", "body": "report ошибка 50% x_y", "ts": "2026-01-01T00:01:00Z"},
    ]


TERM = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=15
)


@settings(max_examples=150, deadline=None)
@example('"')
@example('""')
@example("AND")
@example("a OR b")
@example("NEAR(x y)")
@example("*")
@example("ab*")
@example("%")
@example("_")
@example("'")
@example("\\")
@example("'); DROP TABLE comments; --")
@example("^col:")
@given(term=TERM)
def test_any_term_is_searched_as_text(base_rows, term):
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 1, "space": "s", "state": "open"}, {"id": 2, "space": "s", "state": "open"},
                           {"id": 3, "space": "s", "state": "open"}])
    row = {"id": 3, "task": 3, "author": "user", "kind": "request", "body": f"前 {term} 後",
           "ts": "2026-01-02T00:00:00Z"}
    store.add_comments(conn, base_rows + [row])
    ctx = TaskContext("s", None, "u")
    if not unicodedata.normalize("NFKC", term).split():
        with pytest.raises(TaskSearchError) as e:
            task_search(conn, ctx, query=term)
        assert e.value.param == "query"
        return
    for mode in ("any", "all"):
        r = task_search(conn, ctx, query=term, match_mode=mode, limit=30)  # never an SQL/FTS error
        indexed = store.indexed_text(row)
        if all(t in indexed for t in query_terms(term)):
            assert 3 in {h.comment_id for h in r.hits}
    assert conn.execute("SELECT count(*) FROM comments").fetchone()[0] == 3


@settings(max_examples=150, deadline=None)
@given(term=st.text(alphabet="abcXYZ認証ログインошибкаЖ%_*\"'() ", min_size=1, max_size=8))
def test_hits_contain_the_terms(base_rows, term):
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 1, "space": "s", "state": "open"}, {"id": 2, "space": "s", "state": "open"}])
    store.add_comments(conn, base_rows)
    terms = query_terms(term)
    if not terms:
        return
    r = task_search(conn, TaskContext("s", None, "u"), query=term, match_mode="all")
    expected = {row["id"] for row in base_rows
                if all(t.casefold() in store.indexed_text(row).casefold() for t in terms)}
    assert {h.comment_id for h in r.hits} == expected
