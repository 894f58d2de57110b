"""The task tools need the current task from the session (issue 28 item 6, SPEC T1): without it
they would return the caller's own task, so every entry point (the CLI, ``searchkit serve``, the
tools registry) refuses in one line naming ``current_task``, after T8's unavailable cases."""
from pathlib import Path

import pytest

from searchkit.errors import ParameterError
from searchkit.ingest import tasks as store
from searchkit.tools.base import ToolContext
from searchkit.tools.registry import TOOLS
from searchkit.tools.task_answers import Unavailable
from searchkit.tools.task_members import WorkspaceMembers

TASKS = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"
WS = Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace"


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, TASKS)
    return c


CALLS = [("task_search", {"query": "認証"}), ("task_search", {"around_ref": "comment:88"}),
         ("task_around", {"around_ref": "comment:88"}), ("task_list", {})]


@pytest.mark.parametrize("name, args", CALLS)
def test_a_session_without_the_current_task_is_refused_naming_it(conn, name, args):
    with pytest.raises(ParameterError) as e:
        TOOLS[name](args, ToolContext(caller="u-anna", space="acme", store=conn))
    assert e.value.param == "current_task"
    members = WorkspaceMembers.of(WS)  # Anna is a member of acme (SPEC T1)
    answer = TOOLS[name](args, ToolContext(caller="u-anna", space="acme", current_task=30, store=conn, index=members))
    assert answer and not isinstance(answer, Unavailable)


@pytest.mark.parametrize("name, args", CALLS)
def test_t8_still_answers_first_where_the_tool_cannot_run(conn, name, args):
    for ctx in (ToolContext(caller=None, space="acme", store=conn),
                ToolContext(caller="u-anna", space="acme", subtask=True, store=conn)):
        assert isinstance(TOOLS[name](args, ctx), Unavailable)
