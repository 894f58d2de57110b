"""The task tools take their parameters and the session's ``ToolContext`` (issue 42 item 2; SPEC T1, T8).

No context type or keyword API of their own: ``searchkit.tools.tasks.task_search`` / ``read_around`` /
``list_tasks`` take the tool's parameter dataclass and the ``ToolContext`` the CLI and the server
build (the store, the engine, the space, the current task, the caller), and ask the task engine;
the tools (``task_tools.run_*``) check the session and the membership, then call them; the task
eval calls ``task_search`` the same way. The server's ``engine()`` gives the task engine for the
shipped FTS5-alone config too, read again once the store changed.
"""
import inspect
import json
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.evaluate import task_eval
from searchkit.ingest import tasks as store
from searchkit.serve.state import TaskStores
from searchkit.tools import task_tools, tasks
from searchkit.tools.base import ToolContext
from searchkit.tools.task_engine import TaskEngine
from searchkit.tools.tasks import TaskAroundParams, TaskListParams, TaskSearchParams

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "tasks-demo"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("tasks42") / "tasks.sqlite"
    store.import_into(path, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    return path


def test_no_task_context_and_no_keyword_api():
    for name in ("TaskContext", "check_context"):
        assert not hasattr(tasks, name), name
        assert not hasattr(task_tools, name), name
    for fn in (tasks.task_search, tasks.read_around, tasks.list_tasks):
        assert list(inspect.signature(fn).parameters) == ["params", "ctx"], fn.__name__
    # the tools' parameter dataclasses are the functions' parameters
    assert task_tools.TaskSearchParams is TaskSearchParams and task_tools.TaskListParams is TaskListParams


def test_the_functions_read_the_session_from_the_tool_context(db):
    conn = store.open_readonly(db)
    ctx = ToolContext(caller="u-anna", space="acme", current_task=30, store=conn)
    assert [h.comment_id for h in tasks.task_search(TaskSearchParams(query="認証"), ctx).hits] == [95, 88]
    around = tasks.read_around(TaskAroundParams("comment:88"), ctx)
    assert [c.comment_id for c in around.comments] == [86, 88, 90]
    assert [t.task_id for t in tasks.list_tasks(TaskListParams(state="open"), ctx).tasks] == [24, 15]
    # T8 from the session's caller and subtask flag, before any parameter is read
    for unavailable in (ToolContext(space="acme", current_task=30, store=conn),
                        ToolContext(caller="u-anna", space="acme", current_task=30, subtask=True, store=conn)):
        assert isinstance(tasks.task_search(TaskSearchParams(), unavailable), tasks.Unavailable)
    with pytest.raises(TypeError, match="ctx.store"):
        tasks.task_search(TaskSearchParams(query="認証"), ToolContext(caller="u-anna", space="acme", current_task=30))
    conn.close()


def test_the_task_eval_asks_with_the_tool_context(monkeypatch):
    seen = []
    real = tasks.task_search

    def spy(params, ctx):
        seen.append((type(params), type(ctx), ctx.caller, ctx.current_task, ctx.engine is not None))
        return real(params, ctx)

    monkeypatch.setattr(tasks, "task_search", spy)
    report = task_eval.evaluate_task_search(task_eval.load_task_set(ROOT / "datasets" / "tasks-eval", "test"))
    assert seen and set(seen) == {(TaskSearchParams, ToolContext, task_eval.EVAL_OWNER, 213, True)}
    assert report.metrics


def test_serve_gives_the_task_engine_for_fts5_alone(db):
    served = TaskStores(db, SearchConfig())
    assert served.engine(None) is None
    engine = served.engine("acme")
    assert isinstance(engine, TaskEngine) and engine.names == ["fts5"] and engine.config is served.config
    ctx = ToolContext(caller="u-anna", space="acme", current_task=30, store=served.connection(), engine=engine)
    assert [h.comment_id for h in tasks.task_search(TaskSearchParams(query="認証フロー"), ctx).hits] == [88]


def test_serve_fts5_engine_reads_a_changed_store_again(tmp_path):
    path = tmp_path / "tasks.sqlite"
    store.import_into(path, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    served = TaskStores(path, SearchConfig())

    def found():
        ctx = ToolContext(caller="u-anna", space="acme", current_task=30, store=served.connection(),
                          engine=served.engine("acme"))
        return [h.comment_id for h in tasks.task_search(TaskSearchParams(query="認証フロー"), ctx).hits]

    assert found() == [88]
    more = tmp_path / "comments.jsonl"  # an import into the served store: one more comment of task 12
    more.write_text(json.dumps({"id": 97, "task": 12, "author": "agent", "kind": "result",
                                "body": "認証フローはそのままです。", "ts": "2026-06-20T12:00:00Z"},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    store.import_into(path, DEMO / "tasks.jsonl", more)
    assert sorted(found()) == [88, 97]
