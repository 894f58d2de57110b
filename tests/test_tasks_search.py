"""Workspace task search on the bundled demo store (SPEC T1, T3–T8; seed 003's own examples)."""
import sqlite3
from pathlib import Path
from dataclasses import replace

import pytest

from searchkit.ingest import tasks as store
from searchkit.tools import tasks as T
from searchkit.tools.base import ToolContext
from searchkit.tools.tasks import (
    TaskAroundParams, TaskListParams, TaskSearchError, TaskSearchParams, list_tasks, render, task_search,
)

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"
CTX = ToolContext(caller="u-anna", space="acme", current_task=30)


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, DEMO)
    return c


def ids(result):
    return [h.comment_id for h in result.hits]


# ------------------------------------------------------------------ the seed's examples

def test_seed_example_ninsho(conn):
    r = task_search(TaskSearchParams(query="認証"), replace(CTX, store=conn))
    # 認証 is two characters: LIKE path, newest first; 86 (comment) and 90 (status) are not indexed,
    # 140/141 are the current task, 150/152 another space.
    assert r.method == "like"
    assert ids(r) == [95, 88]
    md = render(r, "ja")
    assert md.splitlines()[0] == '## Workspace Task Search Results (query: "認証", 2 hit(s))'
    assert '- task:12 "ログイン画面の改修" / comment:88 user/request 2026-06-20T10:00:00Z\n' \
           "  …既存の認証フローは変更しないでください…" in md
    assert '- task:12 "ログイン画面の改修" / comment:95 agent/result 2026-06-20T11:30:00Z\n' \
           "  …認証まわりは touch せず、UI だけ差し替えました…" in md
    assert md.rstrip().splitlines()[-1] == '前後の文脈をさらに確認するには around_ref: "comment:<id>" を指定してください。'


def test_seed_example_login_ninsho_any_and_all(conn):
    any_ = task_search(TaskSearchParams(query="ログイン 認証"), replace(CTX, store=conn))
    assert set(ids(any_)) == {88, 93, 95}  # 88 only 認証, 93 only ログイン, 95 both
    assert ids(any_) == [95, 93, 88]  # LIKE path: newest first
    all_ = task_search(TaskSearchParams(query="ログイン 認証", match_mode="all"), replace(CTX, store=conn))
    assert ids(all_) == [95]


def test_any_on_fts_ranks_comments_with_both_terms_higher(conn):
    r = task_search(TaskSearchParams(query="ログイン 差し替え"), replace(CTX, store=conn))
    assert r.method == "fts"
    assert set(ids(r)[:2]) == {93, 95} and ids(r)[2] == 88  # 88 holds only 差し替え


def test_seed_example_compound_split(conn):
    r = task_search(TaskSearchParams(query="満月の周期の計算"), replace(CTX, store=conn))
    # the phrase is only in the current task (140) and another space (150): zero hits, then split
    assert r.split_from == "満月の周期の計算"
    assert r.terms == ("満月", "周期", "計算")
    assert ids(r) == [101]
    md = render(r, "ja")
    assert md.startswith("注記: 「満月の周期の計算」は 0 件だったため、助詞・句読点で分割した「満月 周期 計算」で再検索しました。")
    assert render(r, "en").startswith('Note: "満月の周期の計算" found nothing, so it was split')


def test_split_only_on_zero_hits_in_any_mode(conn):
    assert task_search(TaskSearchParams(query="満月の周期の計算", match_mode="all"), replace(CTX, store=conn)).split_from is None
    assert ids(task_search(TaskSearchParams(query="満月の周期の計算", match_mode="all"), replace(CTX, store=conn))) == []
    # a phrase that is found is not split
    assert task_search(TaskSearchParams(query="認証フロー"), replace(CTX, store=conn)).split_from is None
    # non-Japanese terms are not split at punctuation
    r = task_search(TaskSearchParams(query="sk-live"), replace(CTX, store=conn))
    assert r.split_from is None and ids(r) == []


def test_split_compound_uses_parts_of_speech():
    assert T.split_compound("満月の周期の計算") == ("満月", "周期", "計算")
    assert T.split_compound("ログイン画面の改修、認証フロー。") == ("ログイン画面", "改修", "認証フロー")
    assert T.split_compound("変更しないでください") == ("変更",)


# ------------------------------------------------------------------ T1 scope

def test_current_task_and_other_spaces_never_hit(conn):
    r = task_search(TaskSearchParams(query="認証ログ"), replace(CTX, store=conn))  # only in task 30, the current one
    assert ids(r) == []
    other = task_search(TaskSearchParams(query="認証ログ"), ToolContext(caller="u-anna", space="acme", current_task=None, store=conn))
    assert set(ids(other)) == {140, 141}
    g = task_search(TaskSearchParams(query="認証"), ToolContext(caller="u-bob", space="globex", current_task=None, store=conn))
    assert set(ids(g)) == {150, 152}


def test_scope_is_in_the_sql(conn):
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        task_search(TaskSearchParams(query="認証フロー"), replace(CTX, store=conn))
        task_search(TaskSearchParams(query="認証"), replace(CTX, store=conn))
    finally:
        conn.set_trace_callback(None)
    reads = [s for s in seen if "SELECT c.id" in s]
    # the engine's corpus, read once per store version (issue 42 item 2: FTS5 alone is a Searcher over the
    # space's comments), is no search; it stays inside the space
    corpus = [s for s in reads if "c.indexed IS NOT NULL ORDER BY c.ts_utc, c.id" in s]
    searches = [s for s in reads if s not in corpus]
    assert len(searches) == 4  # per search: the retriever's query, then the hits fetched again under the scope
    for sql in reads:
        assert "t.space = 'acme'" in sql
    for sql in searches:
        assert "t.id <> 30" in sql


# ------------------------------------------------------------------ T2 through search

@pytest.mark.parametrize("query", ["Hunter2", "4f9a8b7c6d5e", "ops@acme.example", "intranet", "deploy.sh",
                                   "Noted", "了解しました", "スコープ"])
def test_unindexed_and_redacted_text_is_not_found(conn, query):
    assert ids(task_search(TaskSearchParams(query=query), replace(CTX, store=conn))) == []


def test_tool_runs_and_attachments(conn):
    assert ids(task_search(TaskSearchParams(query="WebFetch"), replace(CTX, store=conn))) == [91]
    r = task_search(TaskSearchParams(query="login-screen.png"), replace(CTX, store=conn))
    assert ids(r) == [95] and r.hits[0].excerpt == "…attachments: login-screen.png…"
    assert ids(task_search(TaskSearchParams(query="calendar.png"), replace(CTX, store=conn))) == [104]


def test_search_excerpt_is_redacted(conn):
    r = task_search(TaskSearchParams(query="キー"), replace(CTX, store=conn))
    hit = {h.comment_id: h for h in r.hits}[110]
    assert "[redacted]" in hit.excerpt and "sk-live" not in hit.excerpt


def test_case_and_width_insensitive_in_three_scripts(conn):
    assert ids(task_search(TaskSearchParams(query="ОШИБКА"), replace(CTX, store=conn))) == [132, 130]  # FTS path
    assert set(ids(task_search(TaskSearchParams(query="ОШИБКА ок"), replace(CTX, store=conn)))) >= {130, 132}  # LIKE path, Unicode folding
    assert 120 in ids(task_search(TaskSearchParams(query="ＷＥＥＫＬＹ"), replace(CTX, store=conn)))  # NFKC of the query


# ------------------------------------------------------------------ T4 matching

@pytest.mark.parametrize("query", ["AND", "OR", "NEAR", "*", '"', "NOT", "a*", "NEAR(a b)", "(", "x OR y",
                                   "%", "_", "\\", "'; DROP TABLE comments; --"])
def test_operators_and_metacharacters_are_text(conn, query):
    r = task_search(TaskSearchParams(query=query), replace(CTX, store=conn))
    for h in r.hits:  # never a MATCH that matches everything
        text = conn.execute("SELECT folded FROM comments WHERE id = ?", (h.comment_id,)).fetchone()[0]
        assert any(t.casefold() in text for t in r.terms)
    assert conn.execute("SELECT count(*) FROM comments").fetchone()[0] == 26


def test_like_wildcards_are_literal(conn):
    assert ids(task_search(TaskSearchParams(query="%"), replace(CTX, store=conn))) == []
    assert ids(task_search(TaskSearchParams(query="_"), replace(CTX, store=conn))) == [130, 104]  # импорт_2026-07.csv, moon_phase.py


def test_filters(conn):
    assert ids(task_search(TaskSearchParams(query="CSV", kind="ask"), replace(CTX, store=conn))) == [121]
    assert ids(task_search(TaskSearchParams(query="archived", author="anna"), replace(CTX, store=conn))) == [122]
    assert set(ids(task_search(TaskSearchParams(query="CSV", task_id=24), replace(CTX, store=conn)))) == {130}
    assert ids(task_search(TaskSearchParams(query="CSV", task_id=40), replace(CTX, store=conn))) == []  # another space's task: nothing
    assert ids(task_search(TaskSearchParams(query="report", limit=2), replace(CTX, store=conn))) == ids(task_search(TaskSearchParams(query="report"), replace(CTX, store=conn)))[:2]


def test_context_neighbours_are_raw(conn):
    r = task_search(TaskSearchParams(query="ローテーション", context=1), replace(CTX, store=conn))
    hit = {h.comment_id: h for h in r.hits}[112]
    assert [c.comment_id for c in hit.context] == [111, 112]
    assert "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c" in hit.context[0].text  # raw tool run
    assert [c.is_target for c in hit.context] == [False, True]


# ------------------------------------------------------------------ T3 parameters

@pytest.mark.parametrize(
    "kwargs,param",
    [
        ({}, "query/around_ref"),
        ({"query": "認証", "around_ref": "comment:88"}, "query/around_ref"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "認\x00証"}, "query"),
        ({"query": "あ" * 100_000}, "query"),
        ({"query": "\ud800abc"}, "query"),
        ({"query": 42}, "query"),
        ({"query": " ".join(f"w{i:03d}" for i in range(40))}, "query"),
        ({"query": "認証", "match_mode": "near"}, "match_mode"),
        ({"query": "認証", "context": 6}, "context"),
        ({"query": "認証", "context": -1}, "context"),
        ({"query": "認証", "context": True}, "context"),
        ({"query": "認証", "limit": 0}, "limit"),
        ({"query": "認証", "limit": 31}, "limit"),
        ({"query": "認証", "limit": "10"}, "limit"),
        ({"query": "認証", "kind": "interjection_ack"}, "kind"),
        ({"query": "認証", "author": ""}, "author"),
        ({"query": "認証", "task_id": 0}, "task_id"),
        ({"query": "認証", "task_id": 2**70}, "task_id"),
        ({"query": "認証", "task_id": 30}, "task_id"),
        ({"around_ref": "comment:88", "limit": 5}, "limit"),
        ({"around_ref": "comment:88", "kind": "request"}, "kind"),
        ({"around_ref": "comment:88", "match_mode": "all"}, "match_mode"),
        ({"around_ref": "comment:88", "context": 9}, "context"),
        ({"around_ref": "task:12"}, "around_ref"),
        ({"around_ref": "comment:"}, "around_ref"),
        ({"around_ref": "comment:abc"}, "around_ref"),
        ({"around_ref": "comment:88; DROP TABLE x"}, "around_ref"),
        ({"around_ref": "comment:" + "9" * 30}, "around_ref"),
        ({"around_ref": "comment:١٢"}, "around_ref"),  # non-ASCII digits
        ({"around_ref": 88}, "around_ref"),
    ],
)
def test_bad_parameters_name_the_parameter(conn, kwargs, param):
    with pytest.raises(TaskSearchError) as e:
        task_search(TaskSearchParams(**kwargs), replace(CTX, store=conn))
    assert e.value.param == param
    assert str(e.value).startswith(param + ":")
    assert isinstance(e.value, ValueError)


def test_long_query_message_is_actionable(conn):
    with pytest.raises(TaskSearchError, match="100,000 characters long; at most 1,000"):
        task_search(TaskSearchParams(query="x" * 100_000), replace(CTX, store=conn))


# ------------------------------------------------------------------ T6 around_ref

SEED_AROUND = (  # seed 003, the second markdown example, line for line
    '## Workspace Task Search — task:12 "ログイン画面の改修" (comment:88 前後 2 件)\n\n'
    "- comment:86 user/comment 2026-06-20T09:55:00Z 質問なんですが、既存の認証部分は今回のスコープに入りますか?\n"
    "- comment:88 user/request 2026-06-20T10:00:00Z ← 既存の認証フローは変更しないでください。UI 差し替えのみでお願いします。\n"
    "- comment:90 agent/progress 2026-06-20T10:02:00Z 了解しました。認証ロジックには触れずに進めます。\n"
)


def test_seed_example_around(conn):
    # T3: context defaults to 0, for around_ref too; the seed's example reads one comment each side
    r = task_search(TaskSearchParams(around_ref="comment:88", context=1), replace(CTX, store=conn))
    assert [c.comment_id for c in r.comments] == [86, 88, 90]
    assert render(r, "ja") == SEED_AROUND  # T6: text inline, after "← " for the target
    assert "(comment:88, 2 neighbouring comment(s))" in render(r, "en")


def test_around_ref_reads_one_neighbour_each_side_by_default_as_the_seed_shows(conn):
    # issue 28 item 6: seed 003's example "comment:88 前後 2 件" shows 86, 88, 90 (an earlier reading
    # of T3's context default 0 for around was wrong: that default is for the neighbours of a hit)
    r = task_search(TaskSearchParams(around_ref="comment:88"), replace(CTX, store=conn))
    assert r.context == 1 and [c.comment_id for c in r.comments] == [86, 88, 90]
    assert render(r, "ja").startswith(
        '## Workspace Task Search — task:12 "ログイン画面の改修" (comment:88 前後 2 件)\n\n'
        "- comment:86 user/comment 2026-06-20T09:55:00Z 質問なんですが、"
    )
    assert T.read_around(TaskAroundParams("comment:88"), replace(CTX, store=conn)).comments == r.comments
    alone = task_search(TaskSearchParams(around_ref="comment:88", context=0), replace(CTX, store=conn))
    assert [c.comment_id for c in alone.comments] == [88]
    assert [h.context for h in task_search(TaskSearchParams(query="認証フロー"), replace(CTX, store=conn)).hits] == [()]  # a hit's default is 0


def test_context_of_a_hit_uses_the_same_inline_layout(conn):
    md = render(task_search(TaskSearchParams(query="認証フロー", context=1), replace(CTX, store=conn)), "ja")
    assert "  - comment:88 user/request 2026-06-20T10:00:00Z ← 既存の認証フローは変更しないでください。" in md
    assert "  - comment:86 user/comment 2026-06-20T09:55:00Z 質問なんですが、" in md


def test_around_returns_raw_text_and_context(conn):
    r = task_search(TaskSearchParams(around_ref=" comment:110 ", context=0), replace(CTX, store=conn))
    assert [c.comment_id for c in r.comments] == [110]
    assert "password=Hunter2!Secret" in r.comments[0].text and "ops@acme.example" in r.comments[0].text
    wide = task_search(TaskSearchParams(around_ref="comment:88", context=5), replace(CTX, store=conn))
    assert [c.comment_id for c in wide.comments] == [86, 88, 90, 91, 93, 95]


def test_around_ref_to_another_space_is_not_found_like_a_missing_one(conn):
    with pytest.raises(TaskSearchError) as other:
        task_search(TaskSearchParams(around_ref="comment:152"), replace(CTX, store=conn))
    with pytest.raises(TaskSearchError) as missing:
        task_search(TaskSearchParams(around_ref="comment:999999"), replace(CTX, store=conn))
    assert other.value.param == missing.value.param == "around_ref"
    assert str(other.value).replace("152", "N") == str(missing.value).replace("999999", "N")
    assert "globex-admin" not in str(other.value) and "認証基盤" not in str(other.value)


def test_around_ref_to_the_current_task(conn):
    with pytest.raises(TaskSearchError, match="current task") as e:
        task_search(TaskSearchParams(around_ref="comment:140"), replace(CTX, store=conn))
    assert e.value.param == "around_ref"


# ------------------------------------------------------------------ rendering

def test_english_rendering_and_zero_hits(conn):
    md = render(task_search(TaskSearchParams(query="ログイン 認証", match_mode="all"), replace(CTX, store=conn)), "en")
    assert md.splitlines()[0] == '## Workspace Task Search Results (query: "ログイン 認証", 1 hit(s))'
    assert md.rstrip().endswith('To read the surrounding comments, pass around_ref: "comment:<id>".')
    none = render(task_search(TaskSearchParams(query="存在しない語句"), replace(CTX, store=conn)), "ja")
    assert "0 hit(s)" in none and "around_ref" not in none
    with pytest.raises(ValueError, match="en, ja"):
        render(task_search(TaskSearchParams(query="認証"), replace(CTX, store=conn)), "fr")


def test_excerpt_window():
    text = "前置き。" + "あ" * 300 + "認証" + "い" * 300 + "。後書き"
    ex = T.excerpt(text, ["認証"])
    assert ex.startswith("…") and ex.endswith("…") and "認証" in ex and len(ex) == T.EXCERPT_CHARS + 2
    assert T.excerpt("One. Two has it. Three.", ["HAS"]) == "…Two has it…"


# ------------------------------------------------------------------ T7 list_tasks

def test_list_tasks(conn):
    r = list_tasks(TaskListParams(), replace(CTX, store=conn))
    assert [t.task_id for t in r.tasks] == [24, 21, 18, 15, 12]  # newest first, no 30, no globex
    assert [t.task_id for t in list_tasks(TaskListParams(state="open"), replace(CTX, store=conn)).tasks] == [24, 15]
    assert [t.task_id for t in list_tasks(TaskListParams(state="closed", limit=2), replace(CTX, store=conn)).tasks] == [21, 18]
    md = render(r, "ja")
    assert md.splitlines()[0] == "## Workspace Tasks (space: acme, 5 件)"
    assert '- task:12 "ログイン画面の改修" 完了 / piece: default / 最終更新 2026-06-20T11:30:00Z' in md
    assert "## Workspace Tasks (space: acme, state: open, 2 task(s))" in render(list_tasks(TaskListParams(state="open"), replace(CTX, store=conn)), "en")


@pytest.mark.parametrize("kwargs,param", [({"state": "done"}, "state"), ({"limit": 51}, "limit"), ({"limit": 0}, "limit")])
def test_list_tasks_bad_parameters(conn, kwargs, param):
    with pytest.raises(TaskSearchError) as e:
        list_tasks(TaskListParams(**kwargs), replace(CTX, store=conn))
    assert e.value.param == param


def test_list_default_limit_is_20():
    c = store.connect(":memory:")
    store.add_tasks(c, [{"id": i, "space": "s", "state": "open", "updated": f"2026-01-01T00:{i:02d}:00Z"}
                        for i in range(1, 60)])
    ctx = ToolContext(caller="u", space="s", current_task=None)
    assert [t.task_id for t in list_tasks(TaskListParams(), replace(ctx, store=c)).tasks] == list(range(59, 39, -1))
    assert len(list_tasks(TaskListParams(limit=50), replace(ctx, store=c)).tasks) == 50


# ------------------------------------------------------------------ T8 plain messages

@pytest.mark.parametrize(
    "ctx,reason,ja",
    [
        (ToolContext(caller=None, space="acme", current_task=30), "no_auth", "このコンテキストでは利用できません"),
        (ToolContext(caller="u-anna", space="acme", current_task=30, subtask=True), "subtask", "このコンテキストでは利用できません"),
    ],
)
def test_no_auth_and_subtask_get_a_plain_message(conn, ctx, reason, ja):
    for result in (task_search(TaskSearchParams(query="認証"), replace(ctx, store=conn)), task_search(TaskSearchParams(around_ref="comment:88"), replace(ctx, store=conn)),
                   list_tasks(TaskListParams(), replace(ctx, store=conn)), task_search(TaskSearchParams(), replace(ctx, store=conn))):  # even bad parameters
        assert result == T.Unavailable(reason)
        assert render(result, "ja").startswith(ja)


class NoFts5(sqlite3.Connection):
    def execute(self, sql, *args):
        if "fts5" in sql.lower() or store.FTS_TABLE in sql:
            raise sqlite3.OperationalError("no such module: fts5")
        return super().execute(sql, *args)


def test_missing_fts5_answers_a_plain_message(tmp_path):
    db = tmp_path / "t.db"
    store.import_dir(store.connect(db), DEMO)
    conn = sqlite3.connect(db, factory=NoFts5)
    r = task_search(TaskSearchParams(query="認証フロー"), replace(CTX, store=conn))
    assert r == T.Unavailable("no_fts5")
    assert "FTS5" in render(r, "ja") and "FTS5" in render(r, "en")
    # reading and listing need no FTS5
    assert [c.comment_id for c in task_search(TaskSearchParams(around_ref="comment:88", context=1), replace(CTX, store=conn)).comments] == [86, 88, 90]
    assert len(list_tasks(TaskListParams(), replace(CTX, store=conn)).tasks) == 5


# ------------------------------------------------------------------ the LIKE path's plan (issue 13)

_LIKE_QUERIES = ("認証", "ログイン 認証", "ui", "ログ")


def test_like_path_walks_comments_newest_first_through_the_covering_index(conn):
    # the LIKE path stops at the k-th match of a newest-first walk of comments_ts (which holds the
    # folded text: no table row is read) instead of testing every comment and sorting the matches
    from searchkit.retrievers import fts5

    r = fts5.FTS5Retriever(conn).push_down(fts5.TaskScope(space="acme", current_task=30))
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        r.search(r.prepare("認証"), 10)
    finally:
        conn.set_trace_callback(None)
    sql = next(s for s in seen if "LIKE" in s)
    plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql))
    assert "SCAN c USING COVERING INDEX comments_ts" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


def test_like_path_answers_the_same_without_the_index(conn, tmp_path):
    # a store imported before comments_ts existed (read-only until its next import) gets the same
    # rows in the same order, by a full scan
    path = tmp_path / "tasks.sqlite"
    c = store.connect(path)
    store.import_dir(c, DEMO)
    before = {q: ids(task_search(TaskSearchParams(query=q), replace(CTX, store=c))) for q in _LIKE_QUERIES}
    with c:
        c.execute("DROP INDEX comments_ts")
    c.close()
    old = store.open_readonly(path)
    assert old.execute("SELECT count(*) FROM sqlite_master WHERE name = 'comments_ts'").fetchone()[0] == 0
    for q in _LIKE_QUERIES:
        res = task_search(TaskSearchParams(query=q), replace(CTX, store=old))
        assert res.method == "like"
        assert ids(res) == before[q], q
    old.close()
    assert before["認証"] == [95, 88] and before == {q: ids(task_search(TaskSearchParams(query=q), replace(CTX, store=conn))) for q in _LIKE_QUERIES}
