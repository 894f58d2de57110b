"""`searchkit serve` over stdio as MCP hosts expect it (issue 41 items 6 and 7), driven by the
official MCP client: tools/list gives every tool a title, read-only annotations and an output
schema; every call's structured content validates against it (the client validates too) and
holds neither the rendered text nor scoring internals; an unknown tool is JSON-RPC error -32602;
each space the caller is a member of lists its snapshot resource, read live, built only from shared
chats in a space of several members; a space the caller is not in reads exactly like one that does
not exist. Hashing embedder, a copy of the demo workspace, the embedding cache in tmp."""
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

import anyio  # noqa: E402
import jsonschema  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from searchkit.ingest import tasks as task_store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CONFIG = ROOT / "tests" / "data" / "hashing.json"
CALL_S = 60
TODAY = dt.datetime.now(dt.timezone.utc).date().isoformat()

CALLS = {
    "history_search": {"query": "где скрипт выгрузки?"},
    "chat_read": {"ref": "chat:ses_4f2a", "find": "PR 88"},
    "app_row": {"ref": "app:tasks#55"},
    "task_search": {"query": "認証"},
    "task_around": {"around_ref": "comment:88", "context": 1},
    "task_list": {},
}


def _chat(ws, slug, ses, owner, visibility, text, run="chat"):
    ts = f"{TODAY}T09:00:00+00:00"
    (ws / slug / ".space" / "chats" / f"{ses}.json").write_text(json.dumps({
        "ses_id": ses, "title": f"chat {ses}", "owner": owner, "visibility": visibility, "run": run,
        "messages": [{"id": "m1", "role": "user", "author": "Anna", "ts": ts, "text": f"Question about {ses}"},
                     {"id": "m2", "role": "assistant", "author": "assistant", "ts": ts, "text": text}]}),
        encoding="utf-8")
    (ws / slug / ".space" / "digests" / f"t_{ses}.json").write_text(json.dumps({
        "turn_id": f"t_{ses}", "ses_id": ses, "ts": ts, "asked": f"asked {ses}", "done": f"done {ses}",
        "left": f"LEFT-{ses} finish the report", "decided": f"DECIDED-{ses} ship on Monday"}), encoding="utf-8")


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    out = tmp_path_factory.mktemp("ws") / "ws"
    shutil.copytree(DEMO, out)
    _chat(out, "acme", "ses_today_shared", "u-boris", "shared", "Which format should the export use, CSV or XLSX?")
    _chat(out, "acme", "ses_today_anna", "u-anna", "personal", "PRIVATE-ANNA do not share?")
    _chat(out, "acme", "ses_today_boris", "u-boris", "personal", "PRIVATE-BORIS salary talk?", run="scheduled")
    return out


@pytest.fixture(scope="module")
def tasks_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("tasks") / "tasks.sqlite"
    src = ROOT / "datasets" / "tasks-demo"
    task_store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    return db


@pytest.fixture(scope="module")
def served(ws, tasks_db, tmp_path_factory):
    """One stdio session as Anna in acme (task 30): everything the tests look at, gathered once."""
    tmp = tmp_path_factory.mktemp("serve")
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "searchkit.cli", "serve", "--config", str(CONFIG), "--workspace", str(ws), "--tasks-db", str(tasks_db),
        "--caller", "u-anna", "--space", "acme", "--current-task", "30", "--log-file", str(tmp / "calls.log")],
        env={**os.environ, "SEARCHKIT_CACHE": str(tmp / "cache.sqlite"), "PYTHONUNBUFFERED": "1"})

    async def session():
        out = {}
        async with Client(params, read_timeout_seconds=CALL_S) as c:
            out["tools"] = (await c.list_tools()).tools
            out["calls"] = {name: await c.call_tool(name, args) for name, args in CALLS.items()}
            out["bad"] = await c.call_tool("history_search", {"query": "x", "limit": 99})
            try:
                await c.call_tool("no_such_tool", {"query": "x"})
            except MCPError as exc:
                out["unknown"] = exc
            out["after"] = await c.call_tool("task_list", {"limit": 1})
            out["resources"] = (await c.list_resources()).resources
            out["templates"] = (await c.list_resource_templates()).resource_templates
            out["acme"] = await c.read_resource("searchkit://space/acme/snapshot")
            out["refused"] = {}
            for slug in ("legal", "archive", "no-such-space"):  # not a member; history search off; none
                try:
                    await c.read_resource(f"searchkit://space/{slug}/snapshot")
                except MCPError as exc:
                    out["refused"][slug] = exc
        out["log"] = [json.loads(line) for line in (tmp / "calls.log").read_text(encoding="utf-8").splitlines()]
        return out

    async def bounded():
        with anyio.fail_after(CALL_S * 4):
            return await session()
    return anyio.run(bounded)


def test_tools_list_gives_titles_read_only_annotations_and_output_schemas(served):
    tools = {t.name: t for t in served["tools"]}
    assert list(tools) == list(CALLS)
    for t in tools.values():
        assert t.title and t.annotations is not None and t.annotations.title == t.title
        a = t.annotations
        assert (a.read_only_hint, a.idempotent_hint, a.open_world_hint, a.destructive_hint) == (True, True, False, False)
        assert t.output_schema and t.output_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(t.output_schema)
        assert "SPEC" not in t.description and "seed" not in t.description
    assert [set(o["required"]) for o in tools["task_search"].input_schema["oneOf"]] == [{"query"}, {"around_ref"}]


def test_every_call_validates_against_its_output_schema_without_text_or_internals(served):
    schemas = {t.name: t.output_schema for t in served["tools"]}
    for name, result in served["calls"].items():
        assert not result.is_error, (name, result.content[0].text)
        data = result.structured_content
        jsonschema.validate(data, schemas[name])
        assert data["index_version"] == 1 and result.content[0].text.strip()
        dumped = json.dumps(data, ensure_ascii=False)
        assert result.content[0].text.strip() not in dumped  # no second copy of the rendered text
        assert "rendered" not in data and "signals" not in data
        assert not any(k in card for card in data.get("cards", ()) for k in ("score", "scores", "ranks", "stages"))
    assert served["calls"]["history_search"].structured_content["cards"]
    bad = served["bad"]
    assert bad.is_error and bad.structured_content["error"]["param"] == "limit"
    jsonschema.validate(bad.structured_content, schemas["history_search"])  # the error shape is in the schema


def test_an_unknown_tool_is_invalid_params_and_the_server_keeps_serving(served):
    exc = served["unknown"]
    assert exc.code == -32602 and "no_such_tool" in exc.message and "history_search" in exc.message
    assert not served["after"].is_error
    unknown = [line for line in served["log"] if line.get("event") == "call" and line.get("tool") == "?"]
    assert unknown and unknown[0]["error"] == "tool"  # logged as before


def test_snapshots_listed_for_the_caller_s_spaces_and_read_live(served):
    uris = sorted(r.uri for r in served["resources"])
    assert uris == ["searchkit://space/acme/snapshot", "searchkit://space/research/snapshot"]  # not legal, not archive
    assert all(r.mime_type == "text/markdown" and r.description for r in served["resources"])
    assert [t.uri_template for t in served["templates"]] == ["searchkit://space/{slug}/snapshot"]
    contents = {c.mime_type: c.text for c in served["acme"].contents}
    text, data = contents["text/markdown"], json.loads(contents["application/json"])
    assert data["space"] == "acme" and data["until"] == TODAY and data["built"][:10] == TODAY
    assert data["since"] == (dt.date.fromisoformat(TODAY) - dt.timedelta(days=13)).isoformat()
    assert data["shared_only"] is True and data["index_version"] == 1
    in_work = [it["text"] for it in data["in_work"]["items"]]
    assert "LEFT-ses_today_shared finish the report" in in_work
    assert [it["ref"] for it in data["waiting"]["items"]] == ["chat:ses_today_shared"]
    assert "DECIDED-ses_today_shared ship on Monday" in [it["text"] for it in data["decisions"]["items"]]
    for private in ("ses_today_anna", "ses_today_boris", "PRIVATE-ANNA", "PRIVATE-BORIS"):
        assert private not in text and private not in contents["application/json"]
    assert TODAY in text.splitlines()[0] and "history_search" in text


def test_a_space_the_caller_is_not_in_reads_like_one_that_does_not_exist(served):
    refused = served["refused"]
    assert set(refused) == {"legal", "archive", "no-such-space"}
    shapes = {(e.code, e.message.replace(slug, "SLUG")) for slug, e in refused.items()}
    assert len(shapes) == 1 and next(iter(shapes))[0] == -32602
    lines = [line for line in served["log"] if line.get("event") == "snapshot"]
    assert [line["ok"] for line in lines] == [True, False, False, False]
    assert not any("legal" in json.dumps(line) for line in lines)
