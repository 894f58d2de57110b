"""The task tools answer only a member of the space, read live (issue 39 items 2 and 8; SPEC T1, T8, H14).

Seed 003 runs ``SearchWorkspaceTasks`` / ``ListWorkspaceTasks`` on the premise that the caller is the
space's owner or a member; T1 reads that live, as history search does (H14). A non-member, a caller
with no space, a space the workspace does not have and a space whose settings cannot be read all get
the same plain message (T8's form), whatever the space or the store holds; where nothing says who the
members are (no workspace, no index) the tools do not answer either. Through the library tools, the
``searchkit tasks`` verbs, ``searchkit serve`` (stdio and HTTP) and ``searchkit serve-token``.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.errors import InputError
from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as store
from searchkit.tools.base import ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "datasets" / "demo-workspace"
TASKS = ROOT / "datasets" / "tasks-demo"
HASHING = ROOT / "tests" / "data" / "hashing.json"

CALLS = [("task_search", {"query": "認証"}), ("task_search", {"around_ref": "comment:88"}),
         ("task_search", {"query": "認証", "task_id": 12}), ("task_around", {"around_ref": "comment:88"}),
         ("task_around", {"around_ref": "comment:152"}), ("task_list", {})]
"""Every tool and mode, with refs of acme (88, task 12) and of globex (152)."""


@pytest.fixture(scope="module")
def conn():
    c = store.connect(":memory:")
    store.import_dir(c, TASKS)
    return c


@pytest.fixture(scope="module")
def index():
    return HistoryIndex.build(WS, SearchConfig.load(HASHING), cache=EmbeddingCache(None))


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(WS, out)
    return out


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "tasks.sqlite"
    store.import_into(path, TASKS / "tasks.jsonl", TASKS / "comments.jsonl")
    return str(path)


def _answers(conn, index, caller, space):
    ctx = ToolContext(caller=caller, space=space, current_task=30, index=index, store=conn)
    return [TOOLS[name](args, ctx) for name, args in CALLS]


# -- the tools -----------------------------------------------------------------------------------

def test_a_member_is_answered_a_non_member_gets_the_same_plain_message_whatever_the_space_holds(conn, index):
    anna = ToolContext(caller="u-anna", space="acme", current_task=30, index=index, store=conn)
    assert "comment:88" in TOOLS["task_search"]({"query": "認証"}, anna).render()
    assert TOOLS["task_list"]({}, anna).to_dict()["tasks"]
    refused = {(who, space): _answers(conn, index, who, space)
               for who, space in (("u-olga", "acme"), ("u-nobody", "acme"), ("u-olga", "globex"),
                                  ("u-anna", "globex"), ("u-anna", "nosuch"), ("u-nobody", None))}
    for answers in refused.values():
        assert [a.to_dict() for a in answers] == [{"unavailable": "not_member"}] * len(CALLS)
        for lang in ("ja", "en", "ru"):
            assert {a.render(lang) for a in answers} == {answers[0].render(lang)}
    texts = {answers[0].render("en") for answers in refused.values()}
    assert len(texts) == 1 and "member" in texts.pop()
    # u-olga is a member of legal, not of acme: the tools still answer nothing of acme
    assert all("認証" not in a.render() for answers in refused.values() for a in answers)


def test_membership_is_read_live_at_every_call(conn, ws):
    idx = HistoryIndex.build(ws, SearchConfig.load(HASHING), cache=EmbeddingCache(None))
    ctx = ToolContext(caller="u-anna", space="acme", current_task=30, index=idx, store=conn)
    assert TOOLS["task_list"]({}, ctx).to_dict()["tasks"]
    meta = ws / "acme" / ".space" / "space.json"
    data = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**data, "members": ["u-boris"]}), encoding="utf-8")
    for name, args in CALLS:
        assert TOOLS[name](args, ctx).to_dict() == {"unavailable": "not_member"}
    meta.write_text("{not json", encoding="utf-8")  # settings that cannot be read: as a non-member
    assert TOOLS["task_list"]({}, ctx).to_dict() == {"unavailable": "not_member"}
    meta.write_text(json.dumps(data), encoding="utf-8")
    assert TOOLS["task_list"]({}, ctx).to_dict()["tasks"]


def test_without_anything_that_says_who_the_members_are_the_tools_do_not_answer(conn):
    ctx = ToolContext(caller="u-anna", space="acme", current_task=30, store=conn)
    for name, args in CALLS:
        answer = TOOLS[name](args, ctx)
        assert answer.to_dict() == {"unavailable": "members_unknown"}
        assert answer.render("en").startswith("Not available in this context")


def test_t8_and_the_session_s_own_errors_come_first(conn, index):
    for who, sub, reason in ((None, False, "no_auth"), ("u-olga", True, "subtask")):
        ctx = ToolContext(caller=who, space="acme", current_task=30, subtask=sub, index=index, store=conn)
        assert TOOLS["task_list"]({}, ctx).to_dict() == {"unavailable": reason}


# -- item 8: the space is a slug ---------------------------------------------------------------------

@pytest.mark.parametrize("space", ["../acme", "acme/..", "..", ".", "a\\b", "ac\x1bme", "a\x00b"])
def test_a_space_that_is_not_a_slug_is_refused_naming_it(conn, index, space):
    from searchkit.errors import ParameterError

    for name, args in CALLS:
        with pytest.raises(ParameterError) as e:
            TOOLS[name](args, ToolContext(caller="u-anna", space=space, current_task=30, index=index, store=conn))
        assert e.value.param == "space"


@pytest.mark.parametrize("verb", [["search", "認証"], ["around", "comment:88"], ["list"]])
def test_the_cli_refuses_a_space_that_is_not_a_slug_in_one_line_naming_space(db, verb, capsys):
    for space in ("../acme", "acme/../acme", ".."):
        rc = main(["tasks", *verb, "--db", db, "--space", space, "--current-task", "30",
                   "--workspace", str(WS), "--caller", "u-anna"])
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert rc == 2 and captured.out == "" and len(lines) == 1 and "--space" in lines[0], captured
        assert "Traceback" not in captured.err


# -- the CLI verbs -------------------------------------------------------------------------------------

def _cli(capsys, *argv):
    rc = main(["tasks", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("verb", [["search", "認証"], ["search", "認証", "--task-id", "12"], ["around", "comment:88"],
                                  ["around", "comment:152"], ["list"]])
def test_the_cli_answers_a_member_and_nothing_else_to_anyone_else(db, ws, verb, capsys):
    base = [*verb, "--db", db, "--current-task", "30", "--workspace", str(ws)]
    rc, member, _ = _cli(capsys, *base, "--space", "acme", "--caller", "u-anna", "--json")
    assert rc == (2 if "comment:152" in verb else 0)
    if rc == 0:
        assert "unavailable" not in json.loads(member)
    outs = set()
    for who, space in (("u-olga", "acme"), ("u-nobody", "acme"), ("u-olga", "globex"), ("u-anna", "nosuch")):
        rc, out, err = _cli(capsys, *base, "--space", space, "--caller", who, "--lang", "en")
        assert rc == 0 and err == "" and out.startswith("Not available in this context")
        outs.add(out)
        rc, out, _ = _cli(capsys, *base, "--space", space, "--caller", who, "--json")
        assert json.loads(out) == {"unavailable": "not_member"}
    assert len(outs) == 1
    # a member removed from space.json gets nothing from the next call on
    meta = ws / "acme" / ".space" / "space.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text(encoding="utf-8")), "members": ["u-boris"]}),
                    encoding="utf-8")
    rc, out, _ = _cli(capsys, *base, "--space", "acme", "--caller", "u-anna", "--lang", "en")
    assert rc == 0 and {out} == outs


def test_the_cli_without_a_workspace_does_not_answer(db, capsys):
    for verb in (["search", "認証"], ["around", "comment:88"], ["list"]):
        rc, out, err = _cli(capsys, *verb, "--db", db, "--space", "acme", "--current-task", "30",
                            "--caller", "u-anna", "--json")
        assert rc == 0 and json.loads(out) == {"unavailable": "members_unknown"}
        assert "--workspace" in err and len(err.strip().splitlines()) == 1
        rc, out, _ = _cli(capsys, *verb, "--db", db, "--space", "acme", "--current-task", "30")
        assert rc == 0 and out.startswith("このコンテキストでは利用できません")  # no signed-in owner (T8)


def test_the_cli_refuses_a_workspace_that_is_not_a_folder(db, tmp_path, capsys):
    rc, out, err = _cli(capsys, "list", "--db", db, "--space", "acme", "--current-task", "30",
                        "--caller", "u-anna", "--workspace", str(tmp_path / "nowhere"))
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--workspace" in err


# -- serve-token -----------------------------------------------------------------------------------

def _token_args(tmp_path, **kw):
    base = dict(tokens=str(tmp_path / "tokens.json"), caller=None, container="personal", space=None,
                current_task=None, lang=None, name="", workspace=str(WS))
    return argparse.Namespace(**{**base, **kw})


def test_serve_token_refuses_a_caller_who_is_not_a_member_of_the_space(tmp_path, capsys):
    from searchkit.cli.commands.serve import run_token

    refused = {}
    for caller, space in (("u-olga", "acme"), ("u-olga", "nosuch"), ("u-nobody", "acme"), ("u-nobody", None),
                          ("u-anna", "legal")):
        with pytest.raises(InputError) as e:
            run_token(_token_args(tmp_path, caller=caller, space=space))
        refused[(caller, space)] = str(e.value)
        assert len(str(e.value).splitlines()) == 1 and e.value.usage  # printed as "searchkit: ..."
    assert not (tmp_path / "tokens.json").exists()  # nothing written
    assert refused[("u-olga", "acme")].replace("acme", "S") == refused[("u-olga", "nosuch")].replace("nosuch", "S")
    assert refused[("u-nobody", None)].startswith("--caller")
    assert all(v.startswith("--space") for k, v in refused.items() if k[1] is not None)
    with pytest.raises(InputError, match="--space"):
        run_token(_token_args(tmp_path, caller=None, container="shared", space="nosuch"))
    with pytest.raises(InputError, match="--workspace"):
        run_token(_token_args(tmp_path, caller="u-anna", space="acme", workspace=str(tmp_path / "nowhere")))
    capsys.readouterr()
    for caller, space in (("u-anna", "acme"), ("u-olga", "legal"), ("u-olga", None)):
        assert run_token(_token_args(tmp_path, caller=caller, space=space)) == 0
        assert len(capsys.readouterr().out.strip()) >= 32
    assert run_token(_token_args(tmp_path, container="shared", space="acme")) == 0
    assert len(json.loads((tmp_path / "tokens.json").read_text())["tokens"]) == 4


# -- searchkit serve -------------------------------------------------------------------------------

needs_serve = pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                                 reason="the 'serve' extra (pip install -e '.[serve]')")


def _env(tmp_path):
    return {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite"), "PYTHONUNBUFFERED": "1"}


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
@needs_serve
def test_served_over_stdio_a_non_member_s_task_tools_answer_nothing(db, tmp_path):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    def serve(space):
        return StdioServerParameters(command=sys.executable, args=[
            "-m", "searchkit.cli", "serve", "--config", str(HASHING), "--workspace", str(WS), "--tasks-db", db,
            "--caller", "u-olga", "--space", space, "--current-task", "30", "--lang", "en"], env=_env(tmp_path))

    async def session(space):
        async with Client(serve(space), read_timeout_seconds=60) as c:
            calls = [await c.call_tool(name, args) for name, args in CALLS]
            history = await c.call_tool("history_search", {"query": "отчёт"})
            return calls, history

    async def both():
        with anyio.fail_after(240):
            return await session("acme"), await session("globex")

    (acme, history), (globex, _) = anyio.run(both)
    assert "not a member" in history.content[0].text  # history search: not_member, as before
    for calls in (acme, globex):
        for r in calls:
            assert not r.is_error and r.structured_content["unavailable"] == "not_member", r.content[0].text
    assert {r.content[0].text for r in acme + globex} == {acme[0].content[0].text}
    assert "認証" not in acme[0].content[0].text


@needs_serve
def test_served_over_http_every_token_is_checked_live(db, ws, tmp_path):
    import httpx

    from searchkit.serve.auth import add_token
    from searchkit.serve.session import Session

    tokens = tmp_path / "tokens.json"
    made = {who: add_token(tokens, Session(caller=c, space=s, current_task=30), who)
            for who, c, s in (("anna", "u-anna", "acme"), ("olga", "u-olga", "acme"), ("olga-globex", "u-olga", "globex"),
                              ("nobody", "u-nobody", None))}
    log = tmp_path / "calls.log"
    proc = subprocess.Popen([sys.executable, "-m", "searchkit.cli", "serve", "--transport", "http", "--port", "0",
                             "--config", str(HASHING), "--workspace", str(ws), "--tasks-db", db, "--tokens", str(tokens),
                             "--log-file", str(log), "--lang", "en"], env=_env(tmp_path),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = None
        deadline = time.monotonic() + 90
        while url is None and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else ():
                if json.loads(line)["event"] == "listening":
                    url = json.loads(line)["url"]
            time.sleep(0.2)
        assert url, "the server did not start in time"
        with httpx.Client(base_url=url, timeout=60) as h:
            def call(who, name, args):
                r = h.post(f"/api/tools/{name}", json=args, headers={"Authorization": f"Bearer {made[who]}"})
                assert r.status_code == 200, r.text
                return r.json()

            assert call("anna", "task_list", {})["answer"]["tasks"]
            texts = set()
            for who in ("olga", "olga-globex", "nobody"):
                for name, args in CALLS:
                    out = call(who, name, args)
                    assert out["answer"] == {"unavailable": "not_member", "index_version": out["index_version"]}
                    texts.add(out["text"])
            meta = ws / "acme" / ".space" / "space.json"
            meta.write_text(json.dumps({**json.loads(meta.read_text(encoding="utf-8")), "members": ["u-boris"]}),
                            encoding="utf-8")
            for name, args in CALLS:  # Anna removed: nothing from the next call on, with no refresh
                out = call("anna", name, args)
                assert out["answer"]["unavailable"] == "not_member"
                texts.add(out["text"])
            assert len(texts) == 1
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait(5)


@pytest.mark.parametrize("kind", ["link", "loop", "fifo", "other_file", "folder"])
def test_serve_token_refuses_a_tokens_path_it_must_not_replace(tmp_path, kind, capsys):
    """Issue 39 item 6: ``serve-token --tokens`` writes a new file or a tokens file, nothing else;
    the CLI's line names ``--tokens`` and the target is left as it was."""
    from searchkit.cli import main

    target = tmp_path / "tokens.json"
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    if kind == "link":
        target.symlink_to(other)
    elif kind == "loop":
        target.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "other_file":
        target.write_text("not a tokens file\n")
    else:
        target.mkdir()
    before = os.lstat(target)
    assert main(["serve-token", "--tokens", str(target), "--caller", "u-anna", "--space", "acme",
                 "--workspace", str(WS)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--tokens" in err
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode, after.st_size) == (before.st_ino, before.st_mode, before.st_size)
    assert other.read_text() == "mine\n"


def test_serve_token_requires_the_workspace(tmp_path, capsys):
    from searchkit.cli import main

    with pytest.raises(SystemExit) as e:
        main(["serve-token", "--tokens", str(tmp_path / "t.json"), "--caller", "u-anna", "--space", "acme"])
    assert e.value.code == 2 and "--workspace" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()
