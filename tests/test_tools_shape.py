"""Tools in one shape (issue 29 item 3): a parameter dataclass with a generated JSON Schema,
``run(params, ctx) -> Answer``, ``Answer.to_dict()`` / ``render(lang)``, who is calling in the
context and never in the parameters, the registry, and the CLI as a thin adapter over them."""
import dataclasses
import json
from pathlib import Path
from dataclasses import replace

import jsonschema
import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.errors import ParameterError
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as store
from searchkit.tools.base import CONTEXT_FIELDS, Answer, ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS, schemas, tool
from searchkit.tools.tasks import (
    TaskAroundParams, TaskListParams, TaskSearchParams, list_tasks, read_around, render, task_search,
)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
TASKS = ROOT / "datasets" / "tasks-demo"
HASHING = ROOT / "tests" / "data" / "hashing.json"
CFG = SearchConfig.load(HASHING)


@pytest.fixture(scope="module")
def index():
    return HistoryIndex.build(DEMO, CFG, cache=EmbeddingCache(None))


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, TASKS)
    return c


@pytest.fixture()
def ctx(index, conn):
    """Anna in acme, in task 30: the index and the store are handles of the session."""
    return ToolContext(caller="u-anna", space="acme", current_task=30, index=index, store=conn)


# -- the registry and the schemas -----------------------------------------------------------------

def test_the_registry_lists_the_four_tools_each_with_a_valid_generated_schema():
    assert list(TOOLS) == ["history_search", "chat_read", "app_row", "task_search", "task_around", "task_list"]
    for name, t in TOOLS.items():
        s = t.schema()
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["title"] == name and s["additionalProperties"] is False and s["description"]
        assert not set(s["properties"]) & set(CONTEXT_FIELDS)
        assert all(p.get("description") for p in s["properties"].values())
        assert set(s["properties"]) == {f.name for f in dataclasses.fields(t.params)}
        assert dataclasses.is_dataclass(t.params) and t.params.__dataclass_params__.frozen
    assert TOOLS["history_search"].schema()["required"] == ["query"]
    assert TOOLS["task_around"].schema()["required"] == ["around_ref"]
    assert "required" not in TOOLS["task_search"].schema()  # exactly one of query and around_ref: the tool checks
    assert schemas() == {n: t.schema() for n, t in TOOLS.items()}
    with pytest.raises(ParameterError) as e:
        tool("nosuch")
    assert e.value.param == "tool" and "history_search" in str(e.value)


GOOD = [
    ("history_search", {"query": "отчёт"}),
    ("history_search", {"query": "отчёт", "kinds": ["log", "file"], "since": "2026-01-01", "until": "2027-01-01",
                        "limit": 3, "spaces": ["legal"]}),
    ("history_search", {"query": "отчёт", "spaces": "all", "limit": 15}),
    ("task_search", {"query": "認証", "match_mode": "all", "context": 2, "limit": 30, "kind": "request",
                     "author": "user", "task_id": 12}),
    ("task_search", {"around_ref": "comment:88", "context": 1}),
    ("task_around", {"around_ref": "comment:88"}),
    ("task_list", {"state": "open", "limit": 50}),
    ("task_list", {}),
]


@pytest.mark.parametrize("name, args", GOOD)
def test_good_parameters_pass_the_schema_and_the_tool(name, args, ctx):
    jsonschema.validate(args, TOOLS[name].schema())
    answer = TOOLS[name](args, ctx)
    assert isinstance(answer, Answer)


BAD = [
    ("history_search", {"query": 5}, "query"),
    ("history_search", {"query": "отчёт", "limit": 0}, "limit"),
    ("history_search", {"query": "отчёт", "limit": "5"}, "limit"),
    ("history_search", {"query": "отчёт", "kinds": ["email"]}, "kinds"),
    ("history_search", {"query": "отчёт", "kinds": []}, "kinds"),
    ("history_search", {"query": "отчёт", "spaces": []}, "spaces"),
    ("history_search", {"query": "отчёт", "since": 20260101}, "since"),
    ("task_search", {"query": "認証", "limit": 31}, "limit"),
    ("task_search", {"query": "認証", "match_mode": "xor"}, "match_mode"),
    ("task_search", {"query": "認証", "context": 6}, "context"),
    ("task_search", {"query": "認証", "kind": "bad"}, "kind"),
    ("task_search", {"query": "認証", "task_id": 0}, "task_id"),
    ("task_around", {"around_ref": 88}, "around_ref"),
    ("task_around", {"around_ref": "comment:88", "context": -1}, "context"),
    ("task_list", {"state": "bad"}, "state"),
    ("task_list", {"limit": 51}, "limit"),
]


@pytest.mark.parametrize("name, args, key", BAD)
def test_bad_parameters_are_refused_by_the_schema_and_the_tool_naming_the_key(name, args, key, ctx):
    errors = list(jsonschema.Draft202012Validator(TOOLS[name].schema()).iter_errors(args))
    assert errors and all(list(e.absolute_path)[:1] == [key] for e in errors)
    with pytest.raises(ParameterError) as e:
        TOOLS[name](args, ctx)
    assert e.value.param == key and str(e.value).startswith(f"{key}: ")


@pytest.mark.parametrize("name", list(TOOLS))
@pytest.mark.parametrize("key", ["caller", "space", "current_task", "container", "owner", "subtask"])
def test_who_is_calling_is_never_a_parameter(name, key, ctx):
    """A parameter named like the session's fields is an unknown parameter, before anything runs."""
    assert key not in {f.name for f in dataclasses.fields(TOOLS[name].params)}
    args = {"query": "отчёт"} if name in ("history_search", "task_search") else {}
    if name == "task_around":
        args = {"around_ref": "comment:88"}
    with pytest.raises(ParameterError) as e:
        TOOLS[name]({**args, key: "u-boris"}, ctx)
    assert e.value.param == key and "session" in e.value.message
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**args, key: "u-boris"}, TOOLS[name].schema())


def test_unknown_missing_and_malformed_arguments_name_what_is_wrong(ctx):
    t = TOOLS["history_search"]
    with pytest.raises(ParameterError) as e:
        t({"query": "отчёт", "bogus": 1}, ctx)
    assert e.value.param == "bogus" and "query, kinds" in e.value.message
    with pytest.raises(ParameterError) as e:
        t({}, ctx)
    assert e.value.param == "query" and "required" in e.value.message
    with pytest.raises(ParameterError) as e:
        t(["отчёт"], ctx)
    assert e.value.param == "arguments"
    with pytest.raises(ParameterError) as e:
        t({"query": "отчёт", "x" * 10_000 + "\x1b[2J": 1}, ctx)
    assert len(str(e.value)) < 300 and "\x1b" not in str(e.value) and "xxxxx" not in str(e.value)


# -- run and the answer --------------------------------------------------------------------------

def test_history_run_is_the_library_search_and_its_answer_round_trips(index, ctx):
    answer = TOOLS["history_search"]({"query": "отчёт", "spaces": ["legal"]}, ctx)
    same = index.search("отчёт", spaces=["legal"], caller="u-anna", container="personal", space="acme")
    assert answer == same
    assert answer.render() == answer.text == same.text and answer.text.splitlines()[0].startswith("Искал")
    d = answer.to_dict()
    assert json.loads(json.dumps(d, ensure_ascii=False)) == d and "text" not in d  # the text is render()'s (issue 41)


@pytest.mark.parametrize("space, spaces", [("acme", ("legal",)), ("legal", None), ("acme", None)])
def test_render_in_another_language_is_the_search_asked_in_that_language(index, space, spaces):
    """``render(lang)`` rebuilds the header line, warnings and reminder in ``lang`` from the answer's
    parts: the same text a search run in that language writes (a space the caller is not in
    included, where the header lists the caller's own spaces)."""
    params = TOOLS["history_search"].params(query="отчёт", spaces=spaces)
    base = ToolContext(caller="u-anna", space=space, index=index)
    ru = TOOLS["history_search"].run(params, base)
    assert ru.lang == "ru"
    for lang in ("en", "ja"):
        asked = TOOLS["history_search"].run(params, dataclasses.replace(base, lang=lang))
        assert ru.render(lang) == asked.text != ru.text
    with pytest.raises(ParameterError) as e:
        ru.render("de")
    assert e.value.param == "lang"


def test_the_current_space_defaults_from_the_session_not_the_parameters(index):
    t = TOOLS["history_search"]
    anna = t({"query": "отчёт"}, ToolContext(caller="u-anna", index=index))
    assert anna == t({"query": "отчёт"}, ToolContext(caller="u-anna", space=index.default_space("u-anna"), index=index))
    with pytest.raises(ParameterError) as e:
        t({"query": "отчёт"}, ToolContext(caller=None, container="shared", index=index))
    assert e.value.param == "space"
    with pytest.raises(ParameterError) as e:
        t({"query": "отчёт"}, ToolContext(caller="u-anna", container="shared", space="acme", index=index))
    assert e.value.param == "caller"


def test_task_tools_are_the_library_functions_and_their_answers_round_trip(conn, ctx):
    lib = ToolContext(caller="u-anna", space="acme", current_task=30)
    pairs = [
        (TOOLS["task_search"]({"query": "認証"}, ctx), task_search(TaskSearchParams(query="認証"), replace(lib, store=conn))),
        (TOOLS["task_search"]({"around_ref": "comment:88"}, ctx), task_search(TaskSearchParams(around_ref="comment:88"), replace(lib, store=conn))),
        (TOOLS["task_around"]({"around_ref": "comment:88", "context": 2}, ctx),
         read_around(TaskAroundParams("comment:88", context=2), replace(lib, store=conn))),
        (TOOLS["task_list"]({"state": "closed"}, ctx), list_tasks(TaskListParams(state="closed"), replace(lib, store=conn))),
    ]
    for answer, expected in pairs:
        assert answer == expected
        for lang in ("ja", "en", "ru"):
            assert answer.render(lang) == render(expected, lang)
        assert answer.render() == render(expected, "ja")
        d = answer.to_dict()
        assert json.loads(json.dumps(d, ensure_ascii=False)) == d
    assert "comment:88" in pairs[0][0].render() and pairs[2][0].comments[0].comment_id == 86


def test_task_tools_without_a_signed_in_owner_or_in_a_subtask_are_unavailable(conn):
    for who, sub, reason in ((None, False, "no_auth"), ("u-anna", True, "subtask")):
        c = ToolContext(caller=who, space="acme", current_task=30, subtask=sub, store=conn)
        for name, args in (("task_search", {"query": "認証"}), ("task_around", {"around_ref": "comment:88"}),
                           ("task_list", {})):
            answer = TOOLS[name](args, c)
            assert answer.to_dict() == {"unavailable": reason} and answer.render("en").strip()


def test_a_tool_without_its_handle_in_the_context_says_so(index, conn):
    with pytest.raises(TypeError, match="ctx.index"):
        TOOLS["history_search"]({"query": "отчёт"}, ToolContext(caller="u-anna", space="acme"))
    with pytest.raises(TypeError, match="ctx.store"):
        TOOLS["task_list"]({}, ToolContext(caller="u-anna", space="acme", current_task=30))


# -- the CLI adapter -----------------------------------------------------------------------------

def test_searchkit_tools_schema_prints_the_generated_schemas(capsys):
    assert main(["tools", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == schemas()
    assert main(["tools", "schema", "task_list"]) == 0
    assert json.loads(capsys.readouterr().out) == TOOLS["task_list"].schema()
    assert main(["tools", "list"]) == 0
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()] == list(TOOLS)
    assert main(["tools", "schema", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "tool: no tool 'nosuch'" in err and "task_list" in err


def test_searchkit_tools_schema_output_prints_the_answers_schemas(capsys):
    """Issue 41 item 6: the output schemas the server lists (MCP outputSchema, /api/tools) on the CLI too."""
    from searchkit.tools.registry import output_schemas

    assert main(["tools", "schema", "--output"]) == 0
    assert json.loads(capsys.readouterr().out) == output_schemas()
    assert main(["tools", "schema", "history_search", "--output"]) == 0
    assert json.loads(capsys.readouterr().out) == TOOLS["history_search"].output_schema()


def test_the_history_cli_prints_what_the_tool_answers(index, capsys):
    base = ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--spaces", "acme,legal",
            "--config", str(HASHING)]
    answer = TOOLS["history_search"]({"query": "отчёт", "spaces": ["acme", "legal"]},
                                     ToolContext(caller="u-anna", index=index))
    assert main(base) == 0
    assert capsys.readouterr().out == answer.render()
    assert main([*base, "--json", "--lang", "en"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["lang"] == "en" and d["cards"] == answer.to_dict()["cards"] and "text" not in d


@pytest.mark.parametrize("argv, param, says", [
    (["--caller", None], "caller", "required in a personal container: the user id of the person searching"),
    (["--container", "shared"], "caller", "a shared workspace container has no caller"),
    (["--limit", "11"], "limit", "must be an integer from 1 to 10, got 11"),
])
def test_the_history_cli_checks_nothing_itself_the_tools_error_is_printed(argv, param, says, capsys):
    """The CLI passes the flags on; the one line is the tool's ``ParameterError`` (the CLI had its
    own messages for the caller and the container before)."""
    args = ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--config", str(HASHING)]
    if argv[1] is None:
        args.remove("--caller"), args.remove("u-anna")
    else:
        args += argv
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"searchkit history: {param}: {says}" in err


def test_the_tasks_cli_prints_what_the_tools_answer(conn, index, tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    assert main(["tasks", "import", str(TASKS), "--db", str(db)]) == 0
    capsys.readouterr()
    scope = ["--db", str(db), "--space", "acme", "--current-task", "30", "--workspace", str(DEMO), "--caller", "u-anna"]
    ctx = ToolContext(caller="u-anna", space="acme", current_task=30, store=conn, index=index)
    assert main(["tasks", "list", *scope, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(TOOLS["task_list"]({}, ctx).to_dict()))
    assert main(["tasks", "around", "comment:88", *scope, "--lang", "en"]) == 0
    assert capsys.readouterr().out == TOOLS["task_around"]({"around_ref": "comment:88"}, ctx).render("en")
    assert main(["tasks", "search", "認証", *scope, "--limit", "31"]) == 2
    assert capsys.readouterr().err.startswith("searchkit tasks: limit: ")
