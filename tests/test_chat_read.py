"""chat_read (issue 30; seed 000: «chat:<ses_id> — прочитайте через chat_read»): the last messages,
find with neighbours, paging back with before, truncation stated, redacted text from the index, and
history search's privacy (a chat the caller may not read answers exactly like one that does not
exist, after the same work). Hashing embedder, a small workspace written per test."""
import json
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.errors import ParameterError
from searchkit.index.cache import EmbeddingCache
from searchkit.records import Record
from searchkit.tools import chat_read
from searchkit.tools.access import WorkspaceAccess
from searchkit.tools.base import ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS

CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
TOOL = TOOLS["chat_read"]


def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _space(ws: Path, slug: str, members, **extra) -> None:
    _write(ws / slug / ".space" / "space.json",
           {"slug": slug, "title": slug, "members": members, "container": "shared", **extra})


def _chat(ws: Path, slug: str, ses: str, texts, owner="u-anna", visibility="shared") -> None:
    msgs = [{"id": f"m{i}", "role": "user", "author": "Анна" if i % 2 else "assistant",
             "ts": f"2026-10-21T10:{i % 60:02d}:00+03:00", "text": t} for i, t in enumerate(texts, start=1)]
    _write(ws / slug / ".space" / "chats" / f"{ses}.json",
           {"ses_id": ses, "title": f"chat {ses}", "owner": owner, "visibility": visibility, "messages": msgs})


LONG = "начало " + "x" * 3000 + " MARK-77 " + "y" * 2000


def _workspace(root: Path) -> Path:
    _space(root, "s", ["u-anna", "u-boris"])
    texts = [f"message number {i} about the export" for i in range(1, 31)]
    texts[4] = "line one of five\nline two ATL-707\nline three"
    texts[9] = "the Password: hunter-2-secret is in the vault"
    texts[14] = LONG
    texts[19] = "ATL-707 again, and atl-707 lower"
    texts[24] = "ATL-707 the newest mention"
    _chat(root, "s", "ses_long", texts)
    _chat(root, "s", "ses_boris", ["boris's own notes, ATL-707"], owner="u-boris", visibility="personal")
    _space(root, "off", ["u-anna"], history_search=False)
    _chat(root, "off", "ses_off", ["a chat where history search is off"])
    _space(root, "other", ["u-boris"])
    _chat(root, "other", "ses_other", ["a chat of a space anna is not in"])
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One index for the tests that only read."""
    root = _workspace(tmp_path_factory.mktemp("chat_read") / "ws")
    return root, HistoryIndex.build(root, CFG, cache=EmbeddingCache(None))


@pytest.fixture()
def idx(built):
    return built[1]


@pytest.fixture()
def ws(tmp_path):
    return _workspace(tmp_path / "ws")


def _anna(idx, **kw):
    return ToolContext(caller="u-anna", space="s", index=idx, **kw)


def test_without_find_the_last_messages_come_and_before_pages_back_to_the_start(idx):
    a = TOOL({"ref": "chat:ses_long"}, _anna(idx))
    assert a.total == 30 and [m.position for m in a.messages] == list(range(11, 31))
    assert a.before == 11 and "before=11" in a.render("en")
    b = TOOL({"ref": "chat:ses_long", "before": a.before}, _anna(idx))
    assert [m.position for m in b.messages] == list(range(1, 11)) and b.before is None
    assert "This is the start of the chat." in b.render("en")
    assert b.messages[0].author == "Анна" and b.messages[1].author == "assistant"
    assert b.messages[0].ts == "2026-10-21T10:01:00+03:00"


def test_a_multi_line_message_stays_one_message(idx):
    a = TOOL({"ref": "chat:ses_long", "before": 11, "limit": 10}, _anna(idx))
    fifth = next(m for m in a.messages if m.position == 5)
    assert fifth.text == "line one of five\nline two ATL-707\nline three" and fifth.author == "Анна"


def test_find_gives_the_newest_matches_with_neighbours_case_sensitive_and_pages_back(idx):
    a = TOOL({"ref": "chat:ses_long", "find": "ATL-707", "limit": 2, "context": 1}, _anna(idx))
    assert a.matches == 3  # messages 5, 20, 25; 'atl-707' does not count (case-sensitive)
    assert [m.position for m in a.messages] == [19, 20, 21, 24, 25, 26]
    assert [m.position for m in a.messages if m.match] == [20, 25]
    assert a.before == 20
    older = TOOL({"ref": "chat:ses_long", "find": "ATL-707", "before": a.before, "context": 0}, _anna(idx))
    assert [m.position for m in older.messages] == [5] and older.before is None
    assert "No older message holds this text." in older.render("en")
    none = TOOL({"ref": "chat:ses_long", "find": "atl-707 LOWER"}, _anna(idx))
    assert none.matches == 0 and not none.messages


def test_a_long_message_is_cut_with_the_match_in_view_and_the_cut_stated(idx):
    a = TOOL({"ref": "chat:ses_long", "find": "MARK-77", "context": 0}, _anna(idx))
    (m,) = a.messages
    assert m.position == 15 and "MARK-77" in m.text and len(m.text) == chat_read.MESSAGE_CHARS
    assert m.cut_before > 0 and m.cut_after > 0 and m.cut_before + m.cut_after + len(m.text) == len(LONG)
    assert f"[cut: {m.cut_before:,} characters before, {m.cut_after:,} after]" in a.render("en")
    plain = TOOL({"ref": "chat:ses_long", "before": 16, "limit": 1}, _anna(idx))
    assert plain.messages[0].cut_before == 0 and plain.messages[0].cut_after == len(LONG) - chat_read.MESSAGE_CHARS


def test_the_text_is_the_index_s_redacted_text(idx):
    a = TOOL({"ref": "chat:ses_long", "find": "vault", "context": 0}, _anna(idx))
    assert "hunter-2-secret" not in json.dumps(a.to_dict(), ensure_ascii=False)
    assert "[redacted]" in a.messages[0].text


def test_records_without_message_lines_are_read_line_by_line():
    r = Record(id="s/chat:x", kind="chat", space="s", ref="chat:x", title="t",
               text="t\nАнна: first\ncontinued\nassistant: second")
    msgs = chat_read.messages_of(r)
    assert [(m.author, m.text) for m in msgs] == [("Анна", "first\ncontinued"), ("assistant", "second")]


def _error(idx, ctx, **args):
    with pytest.raises(ParameterError) as e:
        TOOL(args, ctx)
    return e.value


def test_a_chat_the_caller_may_not_read_reads_like_one_that_does_not_exist(idx):
    def said(ref, ctx=None, **kw):
        e = _error(idx, ctx or _anna(idx), ref=ref, **kw)
        assert e.param == "ref"
        return str(e).replace(ref, "REF")

    missing = said("chat:ses_nope")
    assert said("chat:ses_boris") == missing  # another user's personal chat
    assert said("chat:ses_nope", in_space="off") == said("chat:ses_off", in_space="off")  # history search off
    assert said("chat:ses_nope", in_space="other") == said("chat:ses_other", in_space="other")  # not a member
    assert said("chat:ses_nope", in_space="nowhere") == said("chat:ses_other", in_space="nowhere")
    shared = ToolContext(container="shared", space="s", index=idx)
    assert said("chat:ses_boris", shared) == said("chat:ses_nope", shared)  # a shared container: no personal chat
    boris = TOOL({"ref": "chat:ses_boris"}, ToolContext(caller="u-boris", space="s", index=idx))
    assert boris.messages[0].text == "boris's own notes, ATL-707"
    assert TOOL({"ref": "chat:ses_other", "in_space": "other"},
                ToolContext(caller="u-boris", space="s", index=idx)).total == 1


def test_not_readable_and_missing_refs_do_the_same_work(idx, monkeypatch):
    """Same timing class: the space's access and the caller's mask are computed whatever the ref."""
    calls = []
    real = WorkspaceAccess.chats
    monkeypatch.setattr(WorkspaceAccess, "chats", lambda self, slug: calls.append(slug) or real(self, slug))
    work = {}
    for ref in ("chat:ses_boris", "chat:ses_nope", "chat:ses_long"):
        calls.clear()
        try:
            TOOL({"ref": ref}, _anna(idx))
        except ParameterError:
            pass
        work[ref] = list(calls)
    assert work["chat:ses_boris"] == work["chat:ses_nope"] == work["chat:ses_long"] == ["s"]


def test_a_chat_deleted_or_made_personal_after_indexing_is_not_read(ws):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    assert TOOL({"ref": "chat:ses_long"}, _anna(idx)).total == 30
    _chat(ws, "s", "ses_long", ["now personal"], owner="u-boris", visibility="personal")
    assert _error(idx, _anna(idx), ref="chat:ses_long").param == "ref"
    (ws / "s" / ".space" / "chats" / "ses_long.json").unlink()
    assert _error(idx, _anna(idx), ref="chat:ses_long").param == "ref"


@pytest.mark.parametrize("args, param", [
    ({"ref": "digest:t1"}, "ref"),
    ({"ref": "chat:"}, "ref"),
    ({"ref": "chat:ses_long", "find": ""}, "find"),
    ({"ref": "chat:ses_long", "find": "x" * 201}, "find"),
    ({"ref": "chat:ses_long", "limit": 0}, "limit"),
    ({"ref": "chat:ses_long", "limit": 51}, "limit"),
    ({"ref": "chat:ses_long", "find": "a", "limit": 11}, "limit"),
    ({"ref": "chat:ses_long", "context": 1}, "context"),
    ({"ref": "chat:ses_long", "before": 0}, "before"),
    ({"ref": "chat:ses_long", "in_space": "../x"}, "in_space"),
    ({"ref": "chat:ses_long", "caller": "u-boris"}, "caller"),
    ({"find": "x"}, "ref"),
])
def test_bad_parameters_name_the_parameter(idx, args, param):
    assert _error(idx, _anna(idx), **args).param == param


def test_in_space_is_refused_in_a_shared_container(idx):
    e = _error(idx, ToolContext(container="shared", space="s", index=idx), ref="chat:ses_other", in_space="other")
    assert e.param == "in_space"


def test_the_cli_verb_reads_and_refuses_in_one_line(built, capsys):
    ws = built[0]
    assert main(["chat-read", "chat:ses_long", "--workspace", str(ws), "--caller", "u-anna", "--space", "s",
                 "--find", "ATL-707", "--limit", "1", "--context", "0", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "[25] Анна" in out and "before=25" in out
    assert main(["chat-read", "chat:ses_boris", "--workspace", str(ws), "--caller", "u-anna", "--space", "s"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("searchkit chat-read: ref: no chat") and "\n" not in err


def test_a_space_the_caller_cannot_read_now_says_why(ws):
    """Issue 28 item 2: opening a card of a space the caller left (or that switched history search
    off) after the build says why, the same for every ref of that space."""
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    _space(ws, "s", ["u-boris"])
    gone = _error(idx, _anna(idx), ref="chat:ses_long")
    assert gone.param == "ref" and str(gone).endswith("('s' — you are not a member)")
    assert str(_error(idx, _anna(idx), ref="chat:ses_nope")).replace("ses_nope", "ses_long") == str(gone)
    _space(ws, "s", ["u-anna", "u-boris"], history_search=False)
    assert str(_error(idx, _anna(idx), ref="chat:ses_long")).endswith("('s' — history search is switched off)")


def test_a_title_with_a_middle_dot_or_a_line_break_cannot_break_the_first_line(tmp_path):
    """Issue 28 item 8: the first line ``ref · title (space: s) · N messages`` splits into its
    fields whatever the chat's title holds (as a card's line does)."""
    ws = tmp_path / "ws"
    _space(ws, "s", ["u-anna"])
    _write(ws / "s" / ".space" / "chats" / "ses_t.json",
           {"ses_id": "ses_t", "title": "Отчёт · октябрь\nвторая строка", "owner": "u-anna", "visibility": "shared",
            "messages": [{"id": "m1", "role": "user", "author": "Анна", "ts": "2026-10-21T10:00:00+03:00",
                          "text": "привет"}]})
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    first = TOOL({"ref": "chat:ses_t"}, _anna(idx)).render("ru").splitlines()[0]
    assert first.split(" · ")[:2] == ["chat:ses_t", "Отчёт • октябрь вторая строка (space: s)"]


# ---------------------------------------------------------------- issue 39 item 11: the chat as its file has it now
# (a message added after indexing is read and found), redacted as ingest redacts it, under the same privacy rules,
# and the answer says when the chat changed since it was indexed.


def _append(ws: Path, slug: str, ses: str, *texts) -> None:
    path = ws / slug / ".space" / "chats" / f"{ses}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    n = len(data["messages"])
    data["messages"] += [{"id": f"m{n + i}", "role": "user", "author": "Анна", "ts": "2026-10-22T09:00:00+03:00",
                          "text": t} for i, t in enumerate(texts, start=1)]
    _write(path, data)


def test_a_message_added_after_indexing_is_read_and_found(ws):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    a = TOOL({"ref": "chat:ses_long"}, _anna(idx))
    _append(ws, "s", "ses_long", "ATL-999 came in after the index was built")
    b = TOOL({"ref": "chat:ses_long", "find": "ATL-999", "context": 0}, _anna(idx))
    assert b.matches == 1 and [m.position for m in b.messages] == [31] and b.total == 31  # the index held 30
    assert a.freshness == "live" and a.to_dict()["freshness"] == "live"
    assert not any("indexed" in line for line in a.render("en").splitlines())
    assert b.messages[0].ts == "2026-10-22T09:00:00+03:00" and b.messages[0].author == "Анна"
    assert b.freshness == "changed" and b.to_dict()["freshness"] == "changed"
    assert b.render("en").splitlines()[1] == "Changed since it was indexed: this is the chat as it is now."
    assert "изменился" in b.render("ru") and "変更" in b.render("ja")
    last = TOOL({"ref": "chat:ses_long", "limit": 1}, _anna(idx))
    assert last.messages[0].text == "ATL-999 came in after the index was built"


def test_a_live_chat_is_redacted_as_ingest_redacts_it(ws):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    _append(ws, "s", "ses_long", "and the Password: hunter-3-secret for staging")
    b = TOOL({"ref": "chat:ses_long", "find": "staging", "context": 0}, _anna(idx))
    assert "[redacted]" in b.messages[0].text
    dump = json.dumps(b.to_dict(), ensure_ascii=False)
    assert "hunter-3-secret" not in dump and "hunter-2-secret" not in dump


def test_the_live_read_itself_keeps_a_personal_chat_to_its_owner(ws, monkeypatch):
    """Who may read the chat is read again from the file the text comes from: a chat made personal
    between the access check and the read answers like a chat that does not exist."""
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    stale = idx.access.chats("s")
    _chat(ws, "s", "ses_long", ["now boris's own"], owner="u-boris", visibility="personal")
    monkeypatch.setattr(WorkspaceAccess, "chats", lambda self, slug: stale)
    gone = _error(idx, _anna(idx), ref="chat:ses_long")
    assert str(gone).replace("ses_long", "REF") == str(_error(idx, _anna(idx), ref="chat:ses_nope")).replace(
        "ses_nope", "REF")
    shared = ToolContext(container="shared", space="s", index=idx)
    assert _error(idx, shared, ref="chat:ses_long").param == "ref"
    assert TOOL({"ref": "chat:ses_long"}, ToolContext(caller="u-boris", space="s", index=idx)).messages[0].text == (
        "now boris's own")


def test_a_chat_that_cannot_be_read_now_is_not_read_and_one_too_large_to_index_shows_the_indexed_copy(ws, tmp_path):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    path = ws / "s" / ".space" / "chats" / "ses_long.json"
    good = path.read_text(encoding="utf-8")
    path.write_text("{ not json", encoding="utf-8")  # in doubt: hidden, as history search hides it (H15)
    e = _error(idx, _anna(idx), ref="chat:ses_long")
    assert str(e).replace("ses_long", "REF") == str(_error(idx, _anna(idx), ref="chat:ses_nope")).replace(
        "ses_nope", "REF")
    path.write_text(good, encoding="utf-8")
    _append(ws, "s", "ses_long", *["z" * 90_000] * 6)  # over max_item_chars now: ingest would leave it out
    b = TOOL({"ref": "chat:ses_long", "find": "ATL-707", "context": 0}, _anna(idx))
    assert b.freshness == "as_indexed" and b.total == 30 and b.matches == 3
    assert b.render("en").splitlines()[1] == (
        "Could not read the chat now: this is the chat as indexed, and may be out of date.")
    assert str(tmp_path) not in json.dumps(b.to_dict(), ensure_ascii=False)


def test_the_cli_reads_the_chat_now_from_a_saved_index(ws, tmp_path, capsys):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    idx.save(tmp_path / "index")
    _append(ws, "s", "ses_long", "ATL-999 came in later")
    assert main(["chat-read", "chat:ses_long", "--index", str(tmp_path / "index"), "--caller", "u-anna",
                 "--space", "s", "--find", "ATL-999", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches"] == 1 and out["freshness"] == "changed"


# ---------------------------------------------------------------- issue 39 item 12: counts read right in en/ru/ja;
# a find that matches nothing says so simply (it announced neighbours and then said there were none).


def test_one_message_is_one_message_in_every_language(tmp_path):
    ws = tmp_path / "ws"
    _space(ws, "s", ["u-anna"])
    _chat(ws, "s", "ses_one", ["the only message, ATL-5"])
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    a = TOOL({"ref": "chat:ses_one"}, _anna(idx))
    assert a.render("en").splitlines()[0].endswith(" · 1 message")
    assert a.render("ru").splitlines()[0].endswith(" · сообщений: 1")
    assert a.render("ja").splitlines()[0].endswith(" · メッセージ 1 件")
    found = TOOL({"ref": "chat:ses_one", "find": "ATL-5"}, _anna(idx))
    assert found.render("en").splitlines()[1] == 'One message holds "ATL-5"; it is shown with its neighbours.'
    assert found.render("ru").splitlines()[1] == "Одно сообщение с «ATL-5»; оно показано с соседями."
    assert found.render("ja").splitlines()[1] == "「ATL-5」を含むメッセージ: 1 件。前後のメッセージと一緒に表示します。"
    many = TOOL({"ref": "chat:ses_long"}, _anna(HistoryIndex.build(_workspace(tmp_path / "ws2"), CFG,
                                                                   cache=EmbeddingCache(None))))
    assert many.render("en").splitlines()[0].endswith(" · 30 messages")


def test_a_find_with_no_match_says_simply_that_no_message_holds_it(idx):
    none = TOOL({"ref": "chat:ses_long", "find": "ATL-404"}, _anna(idx))
    assert none.matches == 0 and not none.messages
    assert none.render("en").splitlines()[1:] == ['No message holds "ATL-404".']
    assert none.render("ru").splitlines()[1:] == ["Ни одно сообщение не содержит «ATL-404»."]
    assert none.render("ja").splitlines()[1:] == ["「ATL-404」を含むメッセージはありません。"]
    older = TOOL({"ref": "chat:ses_long", "find": "ATL-707", "before": 5}, _anna(idx))
    assert older.matches == 0
    assert older.render("en").splitlines()[1:] == ['No message before position 5 holds "ATL-707".']
    assert older.render("ru").splitlines()[1:] == ["Ни одно сообщение до позиции 5 не содержит «ATL-707»."]
    assert older.render("ja").splitlines()[1:] == ["位置 5 より前に「ATL-707」を含むメッセージはありません。"]


def test_an_unchanged_chat_file_is_not_read_and_redacted_again_and_a_changed_one_is(ws, monkeypatch):
    from searchkit.tools import live_read

    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    reads = []
    real = live_read.read_chat
    monkeypatch.setattr(live_read, "read_chat", lambda *a: reads.append(a[1]) or real(*a))
    for _ in range(3):
        assert TOOL({"ref": "chat:ses_long"}, _anna(idx)).total == 30
    assert reads == ["ses_long"]
    _append(ws, "s", "ses_long", "one more")
    assert TOOL({"ref": "chat:ses_long"}, _anna(idx)).total == 31 and reads == ["ses_long"] * 2
    boris = ToolContext(caller="u-boris", space="s", index=idx)
    assert TOOL({"ref": "chat:ses_long"}, boris).total == 31 and len(reads) == 2  # a member of a shared chat
