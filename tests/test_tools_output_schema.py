"""The tools as MCP hosts expect them (issue 41 item 6), at the library level: each tool has a title,
read-only hints and an output schema generated from its answer types (valid JSON Schema 2020-12);
real answers of every tool validate against it, with and without the scoring internals; the data
holds no second copy of the rendered text and no scores or signals unless explaining; task_search's
"exactly one of query and around_ref" is in its schema and agrees with the tool; the descriptions
are written for the assistant (no SPEC / seed / issue tags). Hashing embedder, the demo workspace."""
import json
import re
from pathlib import Path

import jsonschema
import pytest

from searchkit.config import SearchConfig
from searchkit.errors import ParameterError
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as store
from searchkit.tools.base import ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS, output_schemas

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
TASKS = ROOT / "datasets" / "tasks-demo"
CFG = SearchConfig.load(ROOT / "tests" / "data" / "hashing.json")
TAGS = re.compile(r"\bSPEC\b|\bseed\b|\bissue \d|\([HTE]\d+|\b[HTE]\d+\)|\b[HTE]\d+[,:]")

CALLS = [  # (tool, arguments, who): every answer type of every tool
    ("history_search", {"query": "где скрипт выгрузки?"}, "u-anna"),
    ("history_search", {"query": "ATL-1655 премия", "spaces": "all", "limit": 12}, "u-anna"),
    ("history_search", {"query": "отчёт", "spaces": ["legal"]}, "u-anna"),  # legal skipped: not a member
    ("history_search", {"query": "zzqx unknown words"}, "u-anna"),
    ("chat_read", {"ref": "chat:ses_4f2a"}, "u-anna"),
    ("chat_read", {"ref": "chat:ses_4f2a", "find": "PR 88", "context": 1}, "u-anna"),
    ("chat_read", {"ref": "chat:ses_4f2a", "find": "no such text"}, "u-anna"),
    ("app_row", {"ref": "app:tasks#55"}, "u-anna"),
    ("task_search", {"query": "認証"}, "u-anna"),
    ("task_search", {"query": "認証", "context": 1, "match_mode": "all"}, "u-anna"),
    ("task_search", {"around_ref": "comment:88"}, "u-anna"),
    ("task_search", {"query": "認証"}, "u-olga"),  # not a member of acme: unavailable
    ("task_around", {"around_ref": "comment:88", "context": 1}, "u-anna"),
    ("task_around", {"around_ref": "comment:88"}, None),  # no signed-in owner: unavailable
    ("task_list", {}, "u-anna"),
    ("task_list", {"state": "closed", "limit": 2}, "u-anna"),
]


@pytest.fixture(scope="module")
def index():
    return HistoryIndex.build(DEMO, CFG, cache=EmbeddingCache(None))


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, TASKS)
    return c


def _ctx(index, conn, who):
    return ToolContext(caller=who, space="acme", current_task=30 if who else None, index=index, store=conn)


def _validator(name):
    schema = TOOLS[name].output_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_every_tool_has_a_title_read_only_hints_and_a_valid_output_schema():
    for name, t in TOOLS.items():
        assert t.title and t.title != name
        assert t.annotations() == {"title": t.title, "readOnlyHint": True, "destructiveHint": False,
                                   "idempotentHint": True, "openWorldHint": False}
        schema = t.output_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["$id"] == f"urn:searchkit:tool:{name}:output"
        assert output_schemas()[name] == schema
        json.dumps(schema)  # plain JSON


@pytest.mark.parametrize("name, args, who", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_real_answers_validate_against_the_output_schema_with_and_without_explain(index, conn, name, args, who):
    answer = TOOLS[name](args, _ctx(index, conn, who))
    validator = _validator(name)
    public = {**answer.to_dict(), "index_version": 3}
    explained = {**answer.to_dict(explain=True), "index_version": 3}
    assert not list(validator.iter_errors(public)), [e.message for e in validator.iter_errors(public)]
    assert not list(validator.iter_errors(explained)), [e.message for e in validator.iter_errors(explained)]
    assert validator.is_valid(answer.to_dict())  # index_version is the server's addition, not required
    text = answer.render()
    assert "rendered" not in public and text not in json.dumps(public, ensure_ascii=False)
    assert not _internals(public)
    assert json.loads(json.dumps(public, ensure_ascii=False)) == public


def _internals(data):
    """The keys of scoring internals anywhere in ``data``."""
    found = set()
    if isinstance(data, dict):
        found |= {k for k in data if k in ("signals", "score", "scores", "ranks", "stages", "detail")}
        for v in data.values():
            found |= _internals(v)
    elif isinstance(data, list):
        for v in data:
            found |= _internals(v)
    return found


def test_history_internals_only_when_explaining(index, conn):
    answer = TOOLS["history_search"]({"query": "ATL-9999 премия"}, _ctx(index, conn, "u-anna"))
    public, explained = answer.to_dict(), answer.to_dict(explain=True)
    assert "text" not in public and "signals" not in public
    assert explained["signals"] and {"score", "scores", "ranks", "stages"} <= set(explained["cards"][0])
    assert [w["code"] for w in public["warnings"]] and all(set(w) == {"code", "message", "ids"} for w in public["warnings"])
    missing = [w for w in public["warnings"] if w["code"] == "missing_ids"]
    assert missing and missing[0]["ids"] == ["ATL-9999"]
    strip = {k: v for k, v in explained.items() if k != "signals"}
    strip["cards"] = [{k: v for k, v in c.items() if k not in ("score", "scores", "ranks", "stages")} for c in strip["cards"]]
    strip["warnings"] = [{k: v for k, v in w.items() if k != "detail"} for w in strip["warnings"]]
    assert strip == public  # explaining adds, never changes


def test_task_search_says_exactly_one_of_query_and_around_ref_in_its_schema_as_the_tool_does(index, conn):
    schema = TOOLS["task_search"].schema()
    validator = jsonschema.Draft202012Validator(schema)
    ctx = _ctx(index, conn, "u-anna")
    cases = [({"query": "認証"}, True), ({"around_ref": "comment:88"}, True),
             ({"query": None, "around_ref": "comment:88"}, True), ({"query": "認証", "around_ref": None}, True),
             ({}, False), ({"query": "認証", "around_ref": "comment:88"}, False),
             ({"query": None, "around_ref": None}, False), ({"context": 1}, False)]
    for args, ok in cases:
        assert validator.is_valid(args) is ok, args
        if ok:
            TOOLS["task_search"](args, ctx)
        else:
            with pytest.raises(ParameterError) as e:
                TOOLS["task_search"](args, ctx)
            assert "around_ref" in e.value.param, args


def test_descriptions_are_written_for_the_assistant():
    for name, t in TOOLS.items():
        texts = [t.description, t.schema()["description"],
                 *(p.get("description", "") for p in t.schema()["properties"].values())]
        for text in texts:
            assert not TAGS.search(text), (name, text)
        assert len(t.description) >= 150, name
    assert "chat_read" in TOOLS["history_search"].description and "app_row" in TOOLS["history_search"].description
    assert "around_ref" in TOOLS["task_search"].description


def test_an_error_outcome_validates_against_every_output_schema():
    from searchkit.serve.service import Outcome  # the serve layer: the error a served call answers

    err = Outcome("bad_parameter", "limit: must be an integer from 1 to 10", param="limit", version=2).to_dict()
    unauthorized = Outcome("unauthorized", "unauthorized: no valid bearer token").to_dict()
    for name in TOOLS:
        assert _validator(name).is_valid(err) and _validator(name).is_valid(unauthorized)
