"""The parts of `searchkit serve` under the transports (issue 30 items 3-7), in process: the tokens
file (owner-only, hashed, compared in constant time, re-read when changed), the session, the
export's replay at start, one call's outcome and log line, the refresh's atomic swap and its
failure, and the flags refused before anything loads. Hashing embedder."""
import json
import logging
import os
import shutil
from pathlib import Path

import pytest

from searchkit import export
from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.errors import DataError, ParameterError, ResourceError
from searchkit.index.cache import EmbeddingCache
from searchkit.serve import startup
from searchkit.serve.auth import Tokens, add_token, bearer, token_digest
from searchkit.serve.calllog import LOGGER, CallLog
from searchkit.serve.service import Service
from searchkit.serve.session import Session
from searchkit.serve.state import Holder, Refresher, Served, refreshed
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})


# ------------------------------------------------------------------------------------ tokens


def test_a_token_is_stored_hashed_and_maps_to_its_session_only(tmp_path):
    path = tmp_path / "tokens.json"
    anna = add_token(path, Session("u-anna", space="acme"), "laptop")
    boris = add_token(path, Session("u-boris"))
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    text = path.read_text()
    assert anna not in text and boris not in text and token_digest(anna) in text
    tokens = Tokens(path)
    assert tokens.session(anna) == Session("u-anna", space="acme")
    assert tokens.session(boris) == Session("u-boris")
    assert tokens.session("x" + anna) is None and tokens.session("") is None and tokens.session(None) is None
    assert bearer({"authorization": f"Bearer {anna}"}) == anna
    assert bearer({"authorization": f"Basic {anna}"}) is None and bearer({}) is None


def test_a_tokens_file_others_may_read_is_refused(tmp_path):
    path = tmp_path / "tokens.json"
    add_token(path, Session("u-anna"))
    os.chmod(path, 0o644)
    with pytest.raises(DataError, match="chmod 600"):
        Tokens(path)
    with pytest.raises(DataError, match="no such tokens file"):
        Tokens(tmp_path / "missing.json")


def test_a_revoked_token_stops_working_and_a_file_gone_bad_refuses_every_token(tmp_path):
    path = tmp_path / "tokens.json"
    anna = add_token(path, Session("u-anna"))
    boris = add_token(path, Session("u-boris"))
    tokens = Tokens(path)
    doc = json.loads(path.read_text())
    doc["tokens"] = [t for t in doc["tokens"] if t["caller"] != "u-anna"]
    path.write_text(json.dumps(doc))
    os.chmod(path, 0o600)
    assert tokens.session(anna) is None and tokens.session(boris) == Session("u-boris")
    os.chmod(path, 0o640)
    assert tokens.session(boris) is None and "chmod 600" in tokens.problem


@pytest.mark.parametrize("entry, says", [
    ({"sha256": "ab"}, "sha256"),
    ({"sha256": "a" * 64, "caller": "u-anna", "password": "x"}, "unknown key"),
    ({"sha256": "a" * 64}, "caller"),
    ({"sha256": "a" * 64, "caller": "u-anna", "container": "shared"}, "caller"),
    ({"sha256": "a" * 64, "caller": "u-anna", "current_task": "12"}, "current_task"),
])
def test_a_bad_entry_is_named_never_quoted(tmp_path, entry, says):
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"format": "searchkit.serve-tokens", "tokens": [entry]}))
    os.chmod(path, 0o600)
    with pytest.raises(DataError) as e:
        Tokens(path)
    assert "tokens[0]" in str(e.value) and says in str(e.value) and "a" * 64 not in str(e.value)


def test_sessions_are_checked():
    with pytest.raises(ParameterError, match="caller"):
        Session(None)
    with pytest.raises(ParameterError, match="caller"):
        Session("u-anna", container="shared", space="acme")
    with pytest.raises(ParameterError, match="space"):
        Session(None, container="shared")
    assert Session("u-anna").tag(b"s1") != Session("u-boris").tag(b"s1") != Session("u-anna").tag(b"s2")


# ---------------------------------------------------------------------------- the replay at start


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A hashing config exported with a replay on a three-document dataset."""
    base = tmp_path_factory.mktemp("export")
    ds = base / "tiny"
    (ds / "qrels").mkdir(parents=True)
    docs = [("d1", "export script for the sales report"), ("d2", "moon phase calendar"), ("d3", "api key rotation")]
    (ds / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs))
    (ds / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "sales report script"}) + "\n"
                                      + json.dumps({"_id": "q2", "text": "moon calendar"}) + "\n")
    (ds / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t3\nq2\td2\t3\n")
    cfg = base / "hashing.json"
    cfg.write_text(json.dumps({"dense": {"embedder": "hashing", "hashing_dim": 64}}))
    return export.export_config(cfg, base / "exports", replay_dataset=str(ds), replay_split="dev"), ds


def test_the_export_is_replayed_at_start_and_a_different_ranking_refuses_to_start(exported, tmp_path, capsys):
    pytest.importorskip("mcp", reason="the 'serve' extra: `searchkit serve` needs it before it loads anything")
    path, ds = exported
    loaded = startup.load_export(path)
    assert loaded.verify == "identical" and loaded.fingerprint == export.load_config(path).fingerprint()
    assert startup.load_export(path, no_verify=True).verify == "skipped"
    doc = json.loads(path.read_text())
    doc["replay"]["rankings_sha256"] = "0" * 64
    doc["replay"]["per_query"] = {q: "0" * 16 for q in doc["replay"]["per_query"]}
    bad = tmp_path / "tampered.v1.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ResourceError, match="ranks differently"):
        startup.load_export(bad)
    assert main(["serve", "--config", str(bad), "--workspace", str(DEMO), "--caller", "u-anna"]) == 2
    err = capsys.readouterr().err
    assert "ranks differently" in err and "--no-verify" in err and len(err.strip().splitlines()) == 1
    moved = tmp_path / "moved"
    shutil.copytree(path.parent, moved)
    gone = json.loads((moved / path.name).read_text())
    gone["replay"].update(dataset="no-such-dataset", dataset_path="no/such", dataset_path_from_export="no/such")
    (moved / path.name).write_text(json.dumps(gone))
    assert startup.load_export(moved / path.name).verify == "not_verified"


# ------------------------------------------------------------------------------ one call, refresh


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


@pytest.fixture()
def service(ws):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    return Service(Holder(Served(idx, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog())


def test_one_call_is_an_answer_or_an_error_naming_the_parameter_and_one_log_line(service, caplog):
    anna = Session("u-anna", space="acme")
    with caplog.at_level(logging.INFO, logger=LOGGER):
        ok = service.call("history_search", {"query": "выгрузка отчёта"}, anna, "test")
        bad = service.call("history_search", {"query": "выгрузка", "kinds": ["nope"]}, anna, "test")
        unknown = service.call("task_list", {}, anna, "test")  # no task store served
        context = service.call("chat_read", {"ref": "chat:ses_7c19", "current_task": 3}, anna, "test")
    assert ok.ok and ok.answer["cards"] and ok.answer["index_version"] == 1 and ok.to_dict()["index_version"] == 1
    assert (bad.status, bad.param) == ("bad_parameter", "kinds")
    assert (unknown.status, unknown.param) == ("unknown_tool", "tool")
    assert (context.status, context.param) == ("bad_parameter", "current_task")
    lines = [json.loads(r.getMessage()) for r in caplog.records]
    assert [x["ok"] for x in lines] == [True, False, False, False]
    assert lines[0]["counts"]["cards"] == len(ok.answer["cards"]) and lines[1]["error"] == "kinds"
    assert "выгрузка" not in caplog.text and "u-anna" not in caplog.text


def test_log_content_is_only_on_request(service, caplog):
    service.log = CallLog(content=True)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        service.call("history_search", {"query": "выгрузка отчёта"}, Session("u-anna", space="acme"), "test")
    line = json.loads(caplog.records[-1].getMessage())
    assert line["arguments"] == {"query": "выгрузка отчёта"} and line["text"]


def test_a_failing_tool_is_an_internal_error_and_the_service_keeps_serving(service, monkeypatch, caplog):
    from searchkit.tools import registry

    boom = registry.TOOLS["app_row"].__class__(
        "app_row", registry.TOOLS["app_row"].params, lambda p, c: 1 / 0, "broken")
    monkeypatch.setitem(service.tools, "app_row", boom)
    with caplog.at_level(logging.ERROR):
        out = service.call("app_row", {"ref": "app:tasks#55"}, Session("u-anna", space="acme"), "test")
    assert out.status == "internal" and "ZeroDivisionError" not in out.text
    assert service.call("chat_read", {"ref": "chat:ses_4f2a"}, Session("u-anna", space="acme"), "test").ok


def test_a_refresh_publishes_a_new_version_and_leaves_the_old_one_untouched(service, ws):
    old = service.holder.current
    searcher, records = old.index.searcher, list(old.index.searcher.records)
    (ws / "acme" / ".space" / "chats" / "ses_4f2a.json").unlink()
    done = []
    r = Refresher(service.holder, ws, 60, lambda s, rep, err: done.append((s, err)))
    new = r.refresh_now()
    assert new is service.holder.current and new.version == 2 and done == [(new, None)]
    assert old.index.searcher is searcher and list(old.index.searcher.records) == records  # a call on v1 stays on v1
    assert not any(x.ref == "chat:ses_4f2a" for x in new.index.searcher.records)
    assert any(x.ref == "chat:ses_4f2a" for x in old.index.searcher.records)
    out = service.call("chat_read", {"ref": "chat:ses_4f2a"}, Session("u-anna", space="acme"), "test")
    assert out.param == "ref" and out.version == 2


def test_a_failed_refresh_keeps_the_previous_version_and_says_so_once(service, ws, monkeypatch):
    def broken(served, workspace):
        raise OSError("disk on fire")

    monkeypatch.setattr("searchkit.serve.state.refreshed", broken)
    done = []
    r = Refresher(service.holder, ws, 60, lambda s, rep, err: done.append((s, err)))
    assert r.refresh_now() is None and service.holder.current.version == 1
    assert done == [(None, "OSError: disk on fire")] and r.last_error == "OSError: disk on fire"
    assert refreshed is not broken


# ------------------------------------------------------------------------------------- the flags


@pytest.mark.parametrize("argv, says", [
    (["--transport", "http", "--host", "0.0.0.0", "--tokens", "t.json"], "not a loopback address"),
    (["--transport", "http", "--caller", "u-anna", "--tokens", "t.json"], "--caller: over HTTP"),
    (["--transport", "http"], "--tokens: required"),
    (["--tokens", "t.json", "--caller", "u-anna"], "--tokens: only with --transport http"),
    (["--caller", "u-anna", "--refresh-every", "31m"], "--refresh-every"),
    (["--caller", "u-anna", "--refresh-every", "soon"], "--refresh-every"),
    (["--container", "shared", "--caller", "u-anna", "--space", "acme"], "--caller"),
    ([], "--caller: required"),
])
def test_bad_flags_are_one_line_before_anything_loads(argv, says, capsys):
    assert main(["serve", "--config", "nowhere.json", "--workspace", "nowhere", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err


def test_the_refresh_child_reads_sentences_to_embed_only_of_the_new_passages(service, ws):
    """Issue 30 item 9: the refresh child embeds the rerank sentences of the passages no earlier
    version had (in a language the stage runs for), not of every passage again."""
    from searchkit.serve.refresh_child import new_rerank_passages

    s = service.holder.current.index.searcher
    before = {p.text for p in s.passages}
    assert new_rerank_passages(s, before) == []
    note = ws / "acme" / "notes" / "new-ja.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("満月の周期を計算する新しいメモです。月齢は二十九日半です。", encoding="utf-8")
    (ws / "acme" / "notes" / "new-en.md").write_text("A new English note about the moon's cycle.", encoding="utf-8")
    new, _ = refreshed(service.holder.current, ws)
    rows = new_rerank_passages(new.index.searcher, before)
    texts = [new.index.searcher.passages[i].text for i in rows]
    assert len(texts) == 1 and "満月の周期" in texts[0]


def test_a_call_answered_from_the_previous_version_during_a_refresh_leaves_no_erased_text_in_the_cache(tmp_path):
    """Issue 28 item 3 (SPEC H3), residual: while a refresh erases a deleted file's text from the
    embedding cache, a call still answered from the previous version (a Japanese query, reranked
    over the deleted passage) embedded its sentences into the cache again. Once the new version is
    published the previous one is retired (HistoryIndex.retire): the cache holds none of them."""
    import hashlib
    import sqlite3

    from searchkit.rank.rerank import passage_sentences

    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    note = ws / "acme" / "notes" / "gone.md"
    note.write_text("消えた会話の合言葉はシマウマです。次の会議で確認します。", encoding="utf-8")
    path = tmp_path / "cache.sqlite"
    holder = Holder(Served(HistoryIndex.build(ws, CFG, cache=EmbeddingCache(path)), 1, "t0"))
    texts = [p.text for p in holder.current.index.searcher.passages if p.record_id == "acme/file:notes/gone.md"]
    gone = {hashlib.sha256(t.encode("utf-8")).digest() for x in texts for t in passage_sentences(x)}
    assert texts
    note.unlink()

    def cached() -> set[bytes]:
        conn = sqlite3.connect(path)
        try:
            return {bytes(k) for (k,) in conn.execute("SELECT text_sha256 FROM embeddings")}
        finally:
            conn.close()

    def refresh(served, workspace):
        new, line = refreshed(served, workspace)
        assert not gone & cached()  # the update erased them
        served.index.search("消えた会話の合言葉", caller="u-anna", container="personal", space="acme")
        assert gone & cached()  # a call answered meanwhile put them back
        return new, line

    done = []
    Refresher(holder, ws, 60, lambda s, rep, err: done.append(err), refresh=refresh).refresh_now()
    assert done == [None] and holder.current.version == 2
    assert not gone & cached()


@pytest.mark.skipif(not (hasattr(os, "SCHED_IDLE") and os.path.isdir("/proc/self/task")), reason="Linux scheduling")
def test_the_refresh_child_runs_every_thread_at_idle_priority():
    """refresh_child.lower_priority: the threads started before it (OpenBLAS's, at import) and after
    it run at nice 19 in SCHED_IDLE, so a refresh takes only the cores the server's calls leave."""
    import subprocess
    import sys

    code = (
        "import os, threading, json, time\n"
        "stop = threading.Event()\n"
        "before = threading.Thread(target=stop.wait); before.start()\n"
        "from searchkit.serve.refresh_child import lower_priority\n"
        "n = lower_priority(19)\n"
        "after = threading.Thread(target=stop.wait); after.start()\n"
        "tids = sorted(int(t) for t in os.listdir('/proc/self/task'))\n"
        "out = [(os.sched_getscheduler(t), os.getpriority(os.PRIO_PROCESS, t)) for t in tids]\n"
        "stop.set(); before.join(); after.join()\n"
        "print(json.dumps({'n': n, 'threads': out}))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["n"] >= 2 and len(got["threads"]) >= 3  # main, the thread before, the one after
    assert {tuple(t) for t in got["threads"]} == {(os.SCHED_IDLE, 19)}


def test_an_unknown_argument_name_never_reaches_the_log_only_a_count(service, caplog):
    """Issue 39 item 8: an argument *name* is the caller's text (a password typed as a key); the log
    names only the tool's own parameters (and the session's, refused), else says unknown_parameter."""
    anna = Session("u-anna", space="acme")
    with caplog.at_level(logging.INFO, logger=LOGGER):
        named = service.call("history_search", {"query": "x", "pw=Hunter2": 1, "Hunter3": 2}, anna, "test")
        alone = service.call("chat_read", {"ref": "chat:ses_4f2a", "hunter4": True}, anna, "test")
        service.call("history_search", {"query": "x", "caller": "u-boris"}, anna, "test")
    assert named.status == alone.status == "bad_parameter" and named.param == "pw=Hunter2"  # the caller is told
    lines = [json.loads(r.getMessage()) for r in caplog.records]
    assert [(x["error"], x.get("unknown_arguments")) for x in lines] == [
        ("unknown_parameter", 2), ("unknown_parameter", 1), ("caller", 1)]
    assert "unter" not in caplog.text and "pw=" not in caplog.text
