"""Property tests for task search (SPEC T1, T4): scope invariants and terms searched as text."""
import unicodedata
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from searchkit.errors import DataError
from searchkit.ingest import tasks as store
from searchkit.tools.base import ToolContext
from searchkit.tools.tasks import TaskSearchError, TaskSearchParams, query_terms, task_search

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
    ctx = ToolContext(caller="u", space=space, current_task=current)
    r = task_search(TaskSearchParams(query=query, match_mode=mode, limit=30), replace(ctx, store=conn))
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
    ctx = ToolContext(caller="u", space="s", current_task=None)
    if not unicodedata.normalize("NFKC", term).split():
        with pytest.raises(TaskSearchError) as e:
            task_search(TaskSearchParams(query=term), replace(ctx, store=conn))
        assert e.value.param == "query"
        return
    for mode in ("any", "all"):
        r = task_search(TaskSearchParams(query=term, match_mode=mode, limit=30), replace(ctx, store=conn))  # never an SQL/FTS error
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
    r = task_search(TaskSearchParams(query=term, match_mode="all"), ToolContext(caller="u", space="s", current_task=None, store=conn))
    expected = {row["id"] for row in base_rows
                if all(t.casefold() in store.indexed_text(row).casefold() for t in terms)}
    assert {h.comment_id for h in r.hits} == expected


# ------------------------------------------------------------------ T6 around_ref layout (issue 7 item 11)

LINE_TEXT = st.text(alphabet=st.one_of(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                                       st.sampled_from("\x1b\x07\x9b\u202e\u2066\u2028\t")), max_size=12)
"""Line text, terminal controls (ESC, BEL, CSI, bidi overrides, separators) often among it."""


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.lists(LINE_TEXT, min_size=1, max_size=4), min_size=1, max_size=4),
    target=st.integers(0, 3),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_around_layout_puts_the_text_inline_and_round_trips(lines, target, newline):
    import re

    from searchkit.tools.tasks import AroundResult, Comment, render
    from searchkit.tools.terminal import plain_text

    texts = [newline.join(ls) for ls in lines]
    target = min(target, len(texts) - 1)
    comments = tuple(
        Comment(100 + i, 7, "user", "request", f"2026-06-20T10:0{i}:00Z", text, is_target=i == target)
        for i, text in enumerate(texts)
    )
    md = render(AroundResult(7, "t", 100 + target, len(texts) - 1, comments), "ja")
    body = md.split("\n\n", 1)[1].rstrip("\n").split("\n")
    heads = [i for i, line in enumerate(body) if line.startswith("- comment:")]
    assert len(heads) == len(comments)  # a comment's own text never starts a new item
    for n, (c, at) in enumerate(zip(comments, heads)):
        end = heads[n + 1] if n + 1 < len(heads) else len(body)
        prefix = f"- comment:{c.comment_id} user/request {c.ts}" + (" ←" if c.is_target else "")
        head = body[at]
        assert head.startswith(prefix)
        first = head[len(prefix) + 1:] if len(head) > len(prefix) else ""
        rest = body[at + 1:end]
        assert all(line == "" or line.startswith("  ") for line in rest)
        shown = "\n".join([first] + [line[2:] for line in rest])
        expected = "\n".join(plain_text(c.text).rstrip("\n").split("\n"))
        assert shown == expected
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", md)


# ------------------------------------------------------------------ import never re-homes (issue 7 item 12)

ID = st.integers(1, 6)
task_rows_st = st.lists(st.tuples(ID, st.sampled_from(SPACES)), max_size=5)
comment_rows_st = st.lists(st.tuples(ID, ID), max_size=5)  # (comment id, task id)


def _dump(conn):
    return [conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
            for t in ("spaces", "tasks", "comments", store.FTS_TABLE)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old_tasks=task_rows_st, old_comments=comment_rows_st, new_tasks=task_rows_st, new_comments=comment_rows_st)
def test_import_is_refused_whole_when_it_would_rehome_or_repeat_an_id(old_tasks, old_comments, new_tasks,
                                                                        new_comments):
    def tasks(rows):
        return [{"id": i, "space": sp, "title": f"{sp}{i}", "state": "open"} for i, sp in rows]

    def comments(rows):
        return [{"id": c, "task": t, "author": "user", "kind": "request", "body": f"body {c} {t}",
                 "ts": "2026-01-01T00:00:00Z"} for c, t in rows]

    conn = store.connect(":memory:")
    old_space = dict(old_tasks)  # the store as built from the old rows (later rows win, as a model)
    store.add_tasks(conn, tasks(old_space.items()))
    old_task_of = {c: t for c, t in old_comments if t in old_space}
    store.add_comments(conn, comments(old_task_of.items()))
    before = _dump(conn)

    # reference model of the rules, in the order they are checked
    reason = None
    ids = [i for i, _ in new_tasks]
    cids = [c for c, _ in new_comments]
    space_after = {**old_space, **dict(new_tasks)}
    if len(set(ids)) < len(ids):
        reason = "task id"
    elif len(set(cids)) < len(cids):
        reason = "comment id"
    elif any(i in old_space and old_space[i] != sp for i, sp in new_tasks):
        reason = "cannot change space"
    else:
        for c, t in new_comments:
            if t not in space_after:
                reason = "does not exist"
                break
            if c in old_task_of and old_space[old_task_of[c]] != space_after[t]:
                reason = "cannot move to another space"
                break

    def run():
        valid = store._validate(store._numbered(tasks(new_tasks), "task"),
                                store._numbered(comments(new_comments), "comment"))
        store._transaction(conn, store._Batch(*map(tuple, valid)))

    if reason is None:
        run()
        got = dict(conn.execute("SELECT id, space FROM tasks"))
        assert got == space_after
        for cid, tid in conn.execute("SELECT id, task FROM comments"):  # no comment changed space
            if cid in old_task_of:
                assert got[tid] == old_space[old_task_of[cid]]
    else:
        # duplicate ids are reported before the store is read; a store conflict names both spaces
        with pytest.raises(DataError) as e:
            run()
        msg = str(e.value)
        if reason in ("task id", "comment id"):
            assert f"{reason} " in msg and "appears more than once" in msg
        else:
            assert reason in msg
        if "space" in reason:
            assert msg.count("space '") >= 2
        assert _dump(conn) == before  # nothing imported
