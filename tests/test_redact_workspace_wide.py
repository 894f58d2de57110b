"""A value redacted once is redacted wherever it appears again (issue 39 item 4 (a); SPEC H2, T2, H15).

Before: ``Кодовое слово проекта — X`` was redacted in one message and ``Записал: X`` shown in the next.
Checked here: the ingest-level guarantee (every record of a workspace load: chats, digests, files, log
days, sources, pages, table rows, titles, authors), its scope (a value of a personal chat is never
redacted in a shared record: that would tell a member that a guess is someone's password), that no
file of an index holds a value (salted digests only), one end-to-end path per kind of record (history
cards and their JSON, the tools the MCP server calls), the live reader's function, and the task store
(comments, titles, authors, across imports).
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.index import store
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest.redact import SECRET
from searchkit.ingest.tasks import import_into
from searchkit.ingest.workspace import load_workspace
from searchkit.ingest.workspace.verdicts import FILE_NAME
from searchkit.tools.history import HistoryIndex

CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
WORD = "Незабудка"  # redacted in a shared chat, written alone elsewhere
PERSONAL = "Ромашка_55"  # redacted in Anna's personal chat
KEY = "Tr0ub4dor_77"  # redacted in a table cell


def _w(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _chat(ses: str, title: str, texts: list[tuple[str, str]], owner: str = "u-anna", visibility: str = "shared"):
    return {"ses_id": ses, "title": title, "owner": owner, "visibility": visibility, "run": "chat",
            "messages": [{"id": f"m{i}", "role": "user", "author": who, "ts": f"2026-10-21T10:{i:02d}:00+03:00",
                          "text": text} for i, (who, text) in enumerate(texts)]}


def _workspace(root: Path) -> Path:
    sp = root / "acme"
    _w(root / "users.json", [{"id": "u-anna", "name": "Анна"}, {"id": "u-boris", "name": "Борис"}])
    _w(sp / ".space/space.json", {"slug": "acme", "title": "Acme", "members": ["u-anna", "u-boris"],
                                  "container": "personal", "history_search": True})
    _w(sp / ".space/chats/ses_1.json", _chat("ses_1", "Проект Альфа", [
        ("Анна", f"Кодовое слово проекта — {WORD}"), ("Борис", f"Записал: {WORD}")]))
    _w(sp / ".space/chats/ses_2.json", _chat("ses_2", f"про {WORD}", [(WORD, "ок, проект Альфа идёт")]))
    _w(sp / ".space/chats/ses_3.json", _chat("ses_3", "личное", [("Анна", f"мой пароль: {PERSONAL}")],
                                             visibility="personal"))
    _w(sp / ".space/chats/ses_4.json", _chat("ses_4", "личное 2", [("Анна", f"{PERSONAL} не подходит к проекту Альфа")],
                                             visibility="personal"))
    _w(sp / ".space/digests/t_2.json", {"turn_id": "t_2", "ses_id": "ses_2", "ts": "2026-10-21T10:05:00+03:00",
                                        "asked": f"Что значит {WORD} в проекте Альфа?", "done": "Ответили.",
                                        "left": "", "decided": ""})
    _w(sp / ".space/digests/t_4.json", {"turn_id": "t_4", "ses_id": "ses_4", "ts": "2026-10-21T10:06:00+03:00",
                                        "asked": f"{PERSONAL} для проекта Альфа?", "done": "", "left": "", "decided": ""})
    _w(sp / "notes/alpha.md", f"# Проект Альфа\n\nВ заметке: {WORD}, {KEY}. А {PERSONAL} здесь не секрет.\n")
    _w(sp / "log.md", f"## 2026-10-21\nПроект Альфа: {WORD} и {KEY}\n")
    _w(sp / ".space/sources.jsonl", json.dumps({"uuid": "6f1c2a4e-0b1d-4c8e-9a57-1d2e3f4a5b61", "title": f"{WORD} wiki",
                                                "url": f"https://wiki.example.com/{KEY}", "summary": "проект Альфа",
                                                "added": "2026-10-20T11:00:00+03:00"}, ensure_ascii=False) + "\n")
    _w(sp / ".space/pages/3c6e0b8a-5f0e-4a8b-9d1c-7e2f4a6b8c01.json", {
        "uuid": "3c6e0b8a-5f0e-4a8b-9d1c-7e2f4a6b8c01", "title": "Проект Альфа", "type": "dashboard",
        "updated": "2026-10-28T16:00:00+03:00", "body": f"Статус проекта Альфа: {WORD}"})
    db = sqlite3.connect(sp / ".space/app.sqlite")
    db.execute("CREATE TABLE deals (id INTEGER PRIMARY KEY, client TEXT, note TEXT, updated_at TEXT)")
    db.executemany("INSERT INTO deals VALUES (?, ?, ?, ?)", [
        (1, "Альфа", f"пароль к порталу: {KEY}", "2026-10-21T10:00:00+03:00"),
        (2, "Бета", f"проект Альфа, вход {KEY} и {WORD}", "2026-10-22T10:00:00+03:00")])
    db.commit()
    db.close()
    return root


@pytest.fixture
def ws(tmp_path):
    return _workspace(tmp_path / "ws")


def _values_in(text: str) -> list[str]:
    return [v for v in (WORD, KEY) if v in text or v.casefold() in text.casefold()]


def test_every_record_of_a_load_holds_no_value_redacted_elsewhere(ws):
    load = load_workspace(ws)
    kinds = {r.kind for r in load.records}
    assert kinds == {"chat", "digest", "file", "log", "source", "page", "app"}
    for r in load.records:
        shown = "\n".join([r.text, r.title, json.dumps(dict(r.fields), ensure_ascii=False, default=str)])
        assert not _values_in(shown), (r.id, shown)
    chat = next(r for r in load.records if r.id == "acme/chat:ses_1")
    assert chat.text.endswith(f"Записал: {SECRET}")
    ses2 = next(r for r in load.records if r.id == "acme/chat:ses_2")
    assert ses2.title == f"про {SECRET}" and f"{SECRET}: ок" in ses2.text  # a title, an author
    notes = [n for n in load.report.notes if n.rule == "redacted" and "known_value" in n.detail]
    assert {n.path_or_table.split("/", 1)[1] for n in notes} >= {
        ".space/chats/ses_2.json", "notes/alpha.md", "log.md#2026-10-21", ".space/app.sqlite:deals#2"}
    assert not [n for n in load.report.notes if WORD in n.detail or KEY in n.detail]


def test_a_personal_value_stays_in_its_owner_records(ws):
    """A value of Anna's personal chat is redacted in her other personal chat and its digest, never in a
    shared record (Boris could plant a guess in a note and learn from the redaction that it is her password)."""
    load = load_workspace(ws)
    by_id = {r.id: r for r in load.records}
    assert PERSONAL not in by_id["acme/chat:ses_3"].text
    assert PERSONAL not in by_id["acme/chat:ses_4"].text and PERSONAL not in by_id["acme/digest:t_4"].text
    assert PERSONAL in by_id["acme/file:notes/alpha.md"].text


def test_the_index_keeps_salted_digests_and_no_value(ws, tmp_path):
    out = tmp_path / "index"
    HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None)).save(out)
    version = store.current_dir(out)
    for path in version.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for v in (WORD, KEY):  # (PERSONAL is written in a shared note: shown there, by design)
                for form in {v, v.casefold(), v.upper()}:
                    assert form.encode("utf-8") not in data, (path.name, v)
    from searchkit.ingest.workspace.verdicts import known_secrets

    memo = json.loads((version / FILE_NAME).read_text(encoding="utf-8"))
    assert memo["known"]["scopes"] and memo["known"]["salt"]
    idx = HistoryIndex.load(out, CFG, cache=EmbeddingCache(None))
    known = known_secrets(idx)
    assert known is not None and known.redact(f"x {WORD} y", ["acme\0"])[0] == f"x {SECRET} y"


def test_an_update_gives_what_a_fresh_build_gives(ws, tmp_path):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    _w(ws / "acme/notes/later.md", f"Позже: {WORD} снова, проект Альфа\n")
    idx.update(ws)
    fresh = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    assert [(r.id, r.text, r.title) for r in idx.searcher.records] == [(r.id, r.text, r.title) for r in fresh.searcher.records]
    later = next(r for r in idx.searcher.records if r.id == "acme/file:notes/later.md")
    assert WORD not in later.text and SECRET in later.text


@pytest.mark.parametrize("kind", ["chat", "digest", "file", "log", "source", "page", "app"])
def test_history_cards_and_json_of_each_kind_hold_no_value(ws, kind):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    ans = idx.search("проект Альфа", kinds=[kind], caller="u-boris", container="personal", space="acme", limit=10)
    assert ans.cards, kind
    shown = ans.text + json.dumps(ans.to_dict(), ensure_ascii=False)
    assert not _values_in(shown), shown


def test_the_tools_the_mcp_server_calls_hold_no_value(ws):
    """The MCP / HTTP server calls the tools of ``searchkit.tools.registry`` on the index: history_search,
    chat_read (a chat read live: the value redacted in a message, echoed in the next) and app_row."""
    from searchkit.tools.base import ToolContext
    from searchkit.tools.registry import TOOLS

    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    ctx = ToolContext(caller="u-boris", container="personal", space="acme", lang=None, index=idx)
    for name, params in (("history_search", {"query": "проект Альфа", "limit": 10}), ("chat_read", {"ref": "chat:ses_1"}),
                         ("app_row", {"ref": "app:deals#1"})):
        ans = TOOLS[name](params, ctx)
        shown = ans.render() + json.dumps(ans.to_dict(), ensure_ascii=False)
        assert SECRET in shown and not _values_in(shown), (name, shown)


def test_the_live_reader_redacts_as_ingest(ws):
    """``live_collector(known_secrets(index))``: a row or chat read now is redacted as the load of the
    index redacted it, the values known to the index included (``searchkit.tools.live_read``)."""
    from searchkit.ingest.workspace.collect import live_collector
    from searchkit.ingest.workspace.verdicts import known_secrets

    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    indexed = {r.id: r for r in idx.searcher.records}
    for rid, r in indexed.items():
        out = live_collector(known_secrets(idx))
        assert out.add(kind=r.kind, space=r.space, key=rid.split(":", 1)[1], ref=r.ref, date=r.date, title=r.title,
                       text=r.text, where=rid, owner=r.owner, visibility=r.visibility)
        assert out.records[rid].text == r.text  # nothing more to redact in what ingest made
    raw = f"новое сообщение: {WORD}, {KEY}; {PERSONAL}"
    for visibility, owner, left in (("shared", None, PERSONAL), ("personal", "u-anna", None)):
        out = live_collector(known_secrets(idx))
        out.add(kind="chat", space="acme", key="ses_9", ref="chat:ses_9", date=None, title="t", text=raw, where="w",
                owner=owner, visibility=visibility)
        text = out.records["acme/chat:ses_9"].text
        assert not _values_in(text) and (left is None or left in text) and (left is not None or PERSONAL not in text)
    out = live_collector(None)  # no index: the values of the record itself
    out.add(kind="chat", space="acme", key="ses_9", ref="chat:ses_9", date=None, title="t",
            text="пароль: Жираф2025\nда, Жираф2025 подошёл", where="w")
    assert "Жираф2025" not in out.records["acme/chat:ses_9"].text


def _tasks(src: Path, comments: list[dict], title: str = "Проект Альфа") -> Path:
    _w(src / "tasks.jsonl", json.dumps({"id": 1, "space": "acme", "title": title, "state": "open",
                                        "created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z"},
                                       ensure_ascii=False) + "\n")
    _w(src / "comments.jsonl", "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in comments))
    return src


def _comment(cid: int, body: str, author: str = "user") -> dict:
    return {"id": cid, "task": 1, "author": author, "kind": "request", "body": body, "ts": f"2026-01-02T00:{cid:02d}:00Z"}


def test_the_task_store_redacts_a_known_value_across_comments_titles_authors_and_imports(tmp_path):
    db = tmp_path / "t.db"
    # the first import holds only echoes: nothing to redact yet
    import_into(db, *(_tasks(tmp_path / "a", [_comment(10, f"Записал: {WORD}"), _comment(11, "ок", author=WORD)],
                             title=f"Альфа: {WORD}") / n for n in ("tasks.jsonl", "comments.jsonl")))
    # the second brings the value itself
    import_into(db, *(_tasks(tmp_path / "b", [_comment(12, f"Кодовое слово проекта — {WORD}")], title=f"Альфа: {WORD}")
                      / n for n in ("tasks.jsonl", "comments.jsonl")))
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT id, indexed, author, folded FROM comments ORDER BY id").fetchall()
    assert [r[1] for r in rows] == [f"Записал: {SECRET}", "ок", f"Кодовое слово проекта — {SECRET}"]
    assert rows[1][2] == SECRET  # the author as shown
    assert all(WORD.casefold() not in (r[3] or "") for r in rows)
    assert conn.execute("SELECT title FROM tasks").fetchone()[0] == f"Альфа: {SECRET}"
    assert conn.execute("SELECT count(*) FROM comment_fts WHERE comment_fts MATCH ?", (f'"{WORD}"',)).fetchone()[0] == 0
    (data,) = conn.execute("SELECT data FROM known_secrets").fetchone()
    assert WORD not in data and WORD.casefold() not in data
    conn.close()
    # a third import echoes it again: redacted at once
    import_into(db, *(_tasks(tmp_path / "c", [_comment(13, f"{WORD} подошёл")]) / n
                      for n in ("tasks.jsonl", "comments.jsonl")))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT indexed FROM comments WHERE id = 13").fetchone()[0] == f"{SECRET} подошёл"
    conn.close()


def test_a_value_of_one_space_of_the_task_store_stays_in_another(tmp_path):
    db = tmp_path / "t.db"
    src = tmp_path / "s"
    _w(src / "tasks.jsonl", "".join(json.dumps(t) + "\n" for t in (
        {"id": 1, "space": "acme", "title": "a", "state": "open", "created": "2026-01-01T00:00:00Z"},
        {"id": 2, "space": "beta", "title": "b", "state": "open", "created": "2026-01-01T00:00:00Z"})))
    _w(src / "comments.jsonl", "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in (
        _comment(10, f"пароль: {WORD}"), {**_comment(11, f"{WORD} — это цветок"), "task": 2})))
    import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT indexed FROM comments WHERE id = 11").fetchone()[0] == f"{WORD} — это цветок"
    conn.close()


def test_the_report_redacts_the_new_shapes():
    """``searchkit report`` shows record and query text as the tools redact it (``shown_text``)."""
    from searchkit.evaluate.report import shown_text

    for text, value in (("login admin / pass Quokka-55", "Quokka-55"), ("пин-код карты 7351", "7351"),
                        ("db.internal:5432:sales:anna:Vx7pQ2mL", "Vx7pQ2mL")):
        assert value not in shown_text(text)


def test_chat_read_and_app_row_read_live_redact_values_known_from_other_records(ws):
    """A chat or a row read now holds a value redacted elsewhere in its space (a chat's title and author,
    a cell): the live read redacts it as the load did."""
    from searchkit.tools.base import ToolContext
    from searchkit.tools.registry import TOOLS

    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    ctx = ToolContext(caller="u-boris", container="personal", space="acme", lang=None, index=idx)
    for name, params in (("chat_read", {"ref": "chat:ses_2"}), ("app_row", {"ref": "app:deals#2"})):
        ans = TOOLS[name](params, ctx)
        shown = ans.render() + json.dumps(ans.to_dict(), ensure_ascii=False)
        assert not _values_in(shown), (name, shown)
