"""Workspace ingest under the update (issue 27 items 11, 15, 17; issue 28 item 3; SPEC H1-H3).

- a folder nested thousands of levels deep is skipped alone (``too_deep``); the rest of the space
  is read, and ``--update`` keeps every other file;
- what an update cannot read (an unreadable folder or chat, a loader that fails, a damaged
  database) is never taken for deleted: the previous records of that part stay (``kept_previous``),
  while what was really deleted leaves;
- ids that a ref names must be plain tokens (``bad_id``): no ``../../../etc/passwd`` in a ref;
- size caps: one message, a sources.jsonl line (streamed), configurable with ``--cap``;
- deleted means erased: after ``index --update`` a deleted chat's, digest's and row's text is in no
  file of the index folder, and the embedding cache holds hashes only.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import searchkit.ingest.workspace as ws_module
from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_corpus
from searchkit.index import store
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest.policy import CAPS, DEFAULT_POLICY, Policy
from searchkit.ingest.workspace import load_workspace, plain_id
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
MINI = ROOT / "datasets" / "mini"
HASHING = ROOT / "tests" / "data" / "hashing.json"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
EXE = str(Path(sys.executable).parent / "searchkit")


def write(root: Path, rel: str, content) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return path


def space(root: Path, slug: str = "s", members=("u-anna",)) -> Path:
    write(root, f"{slug}/.space/space.json", {"slug": slug, "members": list(members)})
    return root / slug


def chat(ses: str, text: str = "hello", *, owner=None, visibility="shared", **extra) -> dict:
    doc = {"ses_id": ses, "title": f"chat {ses}", "visibility": visibility, "messages": [
        {"id": "m1", "role": "user", "author": "Анна", "ts": "2026-10-21T10:00:00+03:00", "text": text}], **extra}
    if owner is not None:
        doc["owner"] = owner
    return doc


def digest(turn: str, ses: str, asked: str = "what?") -> dict:
    return {"turn_id": turn, "ses_id": ses, "ts": "2026-10-22T09:00:00+03:00", "asked": asked, "done": "this"}


def ids(records) -> set[str]:
    return {r.id for r in records}


def rules(load) -> set[tuple[str, str]]:
    return {(s.path_or_table, s.rule) for s in load.report.skips + load.report.notes}


def cli(*args, env=None, timeout=300):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "SEARCHKIT_CACHE": "", **(env or {})})


def build(ws: Path) -> HistoryIndex:
    return HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


# -- issue 27 item 11: a deep folder is skipped alone ---------------------------------------------

def _deep(folder: Path, levels: int) -> Path:
    """A chain of ``levels`` nested folders under ``folder`` (made without recursion)."""
    folder.mkdir()
    here = folder
    for _ in range(levels):
        here = here / "d"
        os.mkdir(here)
    return here


def _remove_deep(folder: Path) -> None:
    """Remove a deep chain bottom-up (shutil.rmtree recurses and would fail on it)."""
    chain = [folder]
    while (chain[-1] / "d").is_dir():
        chain.append(chain[-1] / "d")
    for here in reversed(chain):
        for entry in os.scandir(here):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        os.rmdir(here)


SEVEN = ["a.md", "deeq/b.md", "m/c.md", "m/n/d.md", "x.md", "z/e.md", "zz/y/f.md"]


@pytest.fixture()
def seven(tmp_path):
    ws = tmp_path / "ws"
    sp = space(ws)
    for i, rel in enumerate(SEVEN):
        write(sp, rel, f"заметка {i} про отчёт")
    yield ws
    if (sp / "deep").exists():
        _remove_deep(sp / "deep")


def test_a_folder_1100_levels_deep_is_skipped_alone(seven):
    bottom = _deep(seven / "s" / "deep", 1100)
    (bottom / "bottom.md").write_text("the bottom")
    load = load_workspace(seven)
    assert ids(load.records) == {f"s/file:{rel}" for rel in SEVEN}
    deep = [s for s in load.report.skips if s.rule == "too_deep"]
    assert len(deep) == 1 and deep[0].path_or_table == "s/deep/" + "d/" * DEFAULT_POLICY.max_depth
    assert "max_depth 64" in deep[0].detail
    assert not load.report.by_rule("load_error") and not load.doubts


def test_update_after_a_deep_folder_appears_keeps_every_file(seven):
    idx = build(seven)
    assert len(idx.searcher.records) == 7
    bottom = _deep(seven / "s" / "deep", 1100)
    (bottom / "bottom.md").write_text("the bottom")
    rep = idx.update(seven)
    assert ids(idx.searcher.records) == {f"s/file:{rel}" for rel in SEVEN}
    assert rep.removed == 0 and rep.unchanged == 7
    assert [s.rule for s in idx.report.skips] == ["too_deep"]


def test_the_depth_cap_is_a_policy_knob(seven):
    load = load_workspace(seven, policy=Policy(max_depth=1))
    assert ids(load.records) == {"s/file:a.md", "s/file:x.md", "s/file:deeq/b.md", "s/file:m/c.md", "s/file:z/e.md"}
    assert {s.path_or_table for s in load.report.by_rule("too_deep")} == {"s/m/n/", "s/zz/y/"}


# -- issue 27 item 11: what cannot be read is never taken for deleted -----------------------------

@pytest.fixture()
def mixed(tmp_path):
    ws = tmp_path / "ws"
    sp = space(ws)
    for rel in ("notes/a.md", "notes/b.md", "other/c.md", "other/gone.md", "top.md"):
        write(sp, rel, f"{rel} про выгрузку")
    write(sp, ".space/chats/ses_a.json", chat("ses_a", "чат А про выгрузку"))
    write(sp, ".space/chats/ses_b.json", chat("ses_b", "чат Б про выгрузку"))
    write(sp, ".space/chats/ses_p.json", chat("ses_p", "личный чат", owner="u-anna", visibility="personal"))
    write(sp, ".space/digests/t_a.json", digest("t_a", "ses_a", "про А"))
    write(sp, ".space/digests/t_a2.json", digest("t_a2", "ses_a", "ещё про А"))
    write(sp, ".space/digests/t_b.json", digest("t_b", "ses_b", "про Б"))
    conn = sqlite3.connect(sp / ".space" / "app.sqlite")
    conn.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, updated_at TEXT)")
    conn.executemany("INSERT INTO tasks VALUES (?, ?, '2026-10-01')", [(1, "задача один"), (2, "задача два")])
    conn.commit()
    conn.close()
    return ws


def _refuse(monkeypatch, name: str, *, fn: str = "open") -> None:
    """Make the operating system refuse to open (or list) paths ending with ``name``."""
    real = getattr(os, fn)

    def refusing(path, *args, **kwargs):
        if os.fspath(path).rstrip("/").endswith(name):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, fn, refusing)


def test_an_unreadable_folder_keeps_its_files_and_a_deleted_file_elsewhere_leaves(mixed, monkeypatch):
    idx = build(mixed)
    before = ids(idx.searcher.records)
    (mixed / "s" / "other" / "gone.md").unlink()
    _refuse(monkeypatch, "/s/notes", fn="scandir")
    rep = idx.update(mixed)
    after = ids(idx.searcher.records)
    assert after == before - {"s/file:other/gone.md"}
    assert rep.kept == 2 and rep.removed == 1 and "2 kept from the previous index" in rep.line()
    assert ("s/notes/", "unreadable") in {(s.path_or_table, s.rule) for s in idx.report.skips}
    assert ("s/notes/", "kept_previous") in {(s.path_or_table, s.rule) for s in idx.report.notes}


def test_an_unreadable_chat_keeps_it_and_its_digests_a_deleted_chat_leaves_with_its_own(mixed, monkeypatch):
    idx = build(mixed)
    (mixed / "s" / ".space" / "chats" / "ses_b.json").unlink()  # deleted: leaves with its digest (H3)
    (mixed / "s" / ".space" / "digests" / "t_a2.json").unlink()  # deleted while its chat cannot be read
    _refuse(monkeypatch, "ses_a.json")
    rep = idx.update(mixed)
    after = ids(idx.searcher.records)
    assert {"s/chat:ses_a", "s/digest:t_a"} <= after
    assert not after & {"s/chat:ses_b", "s/digest:t_b", "s/digest:t_a2"}
    assert rep.kept == 2


def test_a_kept_digest_takes_its_chats_current_visibility(mixed, monkeypatch):
    idx = build(mixed)
    assert {r.id: r.visibility for r in idx.searcher.records}["s/digest:t_a"] == "shared"
    write(mixed / "s", ".space/chats/ses_a.json", chat("ses_a", "теперь личный", owner="u-boris", visibility="personal"))
    _refuse(monkeypatch, "t_a.json")
    idx.update(mixed)
    kept = {r.id: r for r in idx.searcher.records}["s/digest:t_a"]
    assert (kept.visibility, kept.owner) == ("personal", "u-boris")  # H15: never more visible than its chat


def test_a_failing_loader_or_a_damaged_database_keeps_their_records(mixed, monkeypatch):
    idx = build(mixed)
    before = ids(idx.searcher.records)

    def boom(*_args):
        raise RuntimeError("disk error")

    monkeypatch.setattr(ws_module.loader, "_load_app", boom)  # where _load_space looks them up
    monkeypatch.setattr(ws_module.loader, "_load_chats", boom)
    rep = idx.update(mixed)
    assert ids(idx.searcher.records) == before
    assert rep.kept == 2 + 3 + 3  # two rows; three chats and their three digests
    monkeypatch.undo()
    (mixed / "s" / ".space" / "app.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # damaged
    idx.update(mixed)
    assert {"s/app:tasks#1", "s/app:tasks#2"} <= ids(idx.searcher.records)


def test_a_space_whose_settings_cannot_be_read_is_not_kept(mixed, monkeypatch):
    idx = build(mixed)
    _refuse(monkeypatch, "space.json")
    _refuse(monkeypatch, "/s/notes", fn="scandir")
    idx.update(mixed)
    assert not idx.searcher.records  # who may see it is unknown: nothing of it stays (privacy first)


def test_carry_over_is_a_no_op_when_everything_was_read(mixed):
    load = load_workspace(mixed)
    assert ws_module.carry_over(load.records, load) == (load, 0)


# -- issue 27 item 15: ids are plain tokens --------------------------------------------------------

BAD_IDS = ["../../../etc/passwd", "a/b", "a\\b", "..", "x..y", "a b", "a#b", "ses\x1b[31m", "ses\u202e", ".hidden",
           "x" * 201]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_chat_with_a_path_in_its_ses_id_is_skipped(tmp_path, bad):
    sp = space(tmp_path)
    write(sp, ".space/chats/c.json", chat(bad, "текст"))
    write(sp, ".space/digests/d.json", digest("d", bad))
    load = load_workspace(tmp_path)
    assert not [r for r in load.records if r.kind in ("chat", "digest")]
    assert ("s/.space/chats/c.json", "bad_id") in rules(load)
    assert ("s/.space/digests/d.json", "bad_id") in rules(load)
    assert not any(bad in r.ref for r in load.records)


def test_every_kind_of_id_is_checked(tmp_path):
    sp = space(tmp_path)
    write(sp, ".space/chats/ok.json", chat("ok"))
    write(sp, ".space/digests/x.json", {**digest("../up", "ok")})
    write(sp, ".space/digests/y.json", digest("fine", "ok"))
    write(sp, ".space/pages/p.json", {"uuid": "../../p", "title": "t", "body": "b"})
    write(sp, ".space/pages/q.json", {"uuid": "q-1", "title": "t", "body": "b"})
    write(sp, ".space/sources.jsonl", json.dumps({"uuid": "/etc/passwd", "title": "t"}) + "\n"
          + json.dumps({"uuid": "s-1", "title": "t"}) + "\n")
    conn = sqlite3.connect(sp / ".space" / "app.sqlite")
    conn.execute('CREATE TABLE "a/b" (id INTEGER PRIMARY KEY, title TEXT, updated_at TEXT)')
    conn.execute('INSERT INTO "a/b" VALUES (1, "x", "2026-10-01")')
    conn.execute("CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT, updated_at TEXT)")
    conn.executemany("INSERT INTO tasks VALUES (?, 'x', '2026-10-01')", [("../7",), ("7",), ("ЗАК-1655",)])
    conn.commit()
    conn.close()
    load = load_workspace(tmp_path)
    assert ids(load.records) == {"s/chat:ok", "s/digest:fine", "s/page:q-1", "s/source:s-1", "s/app:tasks#7",
                                 "s/app:tasks#ЗАК-1655"}
    bad = {s.path_or_table for s in load.report.by_rule("bad_id")}
    assert bad == {"s/.space/digests/x.json", "s/.space/pages/p.json", "s/.space/sources.jsonl:1",
                   "s/.space/app.sqlite:a/b", "s/.space/app.sqlite:tasks"}
    assert all("../" not in r.ref and not r.ref.startswith("/") for r in load.records)


def test_the_ids_of_the_demo_workspace_and_mini_are_plain():
    load = load_workspace(DEMO)
    assert not load.report.by_rule("bad_id")
    for r in load.records:
        if r.kind not in ("file", "log"):
            assert plain_id(r.ref.split(":", 1)[1].split("#")[-1]), r.ref
    for r in load_corpus(MINI):
        if r.ref and r.kind not in ("file", "log"):
            for part in r.ref.split(":", 1)[1].split("#"):
                assert plain_id(part), r.ref


@pytest.mark.parametrize("good", ["ses_4f2a", "3c6e0b8a-5f0e-4a8b-9d1c-7e2f4a6b8c01", "t_4f2a_01", "57", "1.5",
                                  "ЗАК-1655", "メッセージ履歴", "v1.2:3", "-1", "café", "e\u0301"])
def test_plain_ids(good):
    assert plain_id(good)


# -- issue 27 item 17: caps, streaming, configurable ---------------------------------------------

def test_one_huge_message_is_left_out_of_its_chat(tmp_path):
    sp = space(tmp_path)
    doc = chat("c", "первое сообщение")
    doc["messages"].append({"role": "assistant", "text": "x" * 150_000})
    doc["messages"].append({"role": "user", "text": "третье сообщение"})
    write(sp, ".space/chats/c.json", doc)
    load = load_workspace(tmp_path)
    text = {r.id: r.text for r in load.records}["s/chat:c"]
    assert "первое" in text and "третье" in text and "xxxx" not in text
    assert ("s/.space/chats/c.json:message 2", "too_large") in rules(load)
    assert "max_message_chars 100000" in load.report.by_rule("too_large")[0].detail


def test_sources_jsonl_is_streamed_a_huge_line_is_skipped_without_being_held(tmp_path):
    sp = space(tmp_path)
    path = sp / ".space" / "sources.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"uuid": "first", "title": "первый источник"}) + "\n")
        fh.write('{"uuid": "huge", "summary": "' + "я" * 30_000_000 + '"}\n')  # 60 MB on one line
        fh.write(json.dumps({"uuid": "after", "title": "после огромной строки"}) + "\n")
    tracemalloc.start()
    try:
        load = load_workspace(tmp_path, policy=Policy(max_item_chars=100_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert {"s/source:first", "s/source:after"} <= ids(load.records)
    assert ("s/.space/sources.jsonl:2", "too_large") in rules(load)
    assert peak < 16_000_000, peak  # the 60 MB line was never held whole (today: read whole, or skipped whole)


def test_sources_past_max_log_bytes_are_skipped_together(tmp_path):
    sp = space(tmp_path)
    write(sp, ".space/sources.jsonl", "".join(json.dumps({"uuid": f"s{i}", "title": "источник " * 10}) + "\n"
                                              for i in range(100)))
    load = load_workspace(tmp_path, policy=Policy(max_log_bytes=2_000))
    kept = sorted(int(r.id.split(":s")[1]) for r in load.records)
    assert kept and kept == list(range(len(kept))) and len(kept) < 100
    assert [s.path_or_table for s in load.report.by_rule("too_large")] == [f"s/.space/sources.jsonl:{len(kept) + 1}"]


def test_a_non_utf8_sources_file_is_still_decoded(tmp_path):
    sp = space(tmp_path)
    write(sp, ".space/sources.jsonl", (json.dumps({"uuid": "u1", "title": "Курсы валют"}, ensure_ascii=False)
                                       + "\n").encode("utf-16"))
    load = load_workspace(tmp_path)
    assert "Курсы валют" in {r.id: r.text for r in load.records}["s/source:u1"]


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_caps_are_stated_in_the_report_and_set_from_the_command_line(tmp_path):
    ws = tmp_path / "ws"
    sp = space(ws)
    doc = chat("c", "короткое")
    doc["messages"].append({"role": "assistant", "text": "длинное сообщение " * 10})
    write(sp, ".space/chats/c.json", doc)
    out = tmp_path / "idx"
    p = cli("index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet",
            "--cap", "max_message_chars=50")
    assert p.returncode == 0, p.stderr
    assert "s/.space/chats/c.json:message 2: too_large" in p.stderr
    report = json.loads((store.current_dir(out) / "indexing_report.json").read_text())
    assert report["caps"] == {**DEFAULT_POLICY.caps(), "max_message_chars": 50} and set(report["caps"]) == set(CAPS)
    for bad in ("max_message_chars=0", "max_message_chars=lots", "no_such_cap=3", "max_depth", "max_depth=" + "9" * 30):
        p = cli("index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet", "--cap", bad)
        assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "--cap" in p.stderr
    with pytest.raises(ValueError, match="unknown cap"):
        DEFAULT_POLICY.with_caps({"max_nothing": 1})


# -- issue 28 item 3: deleted means erased ----------------------------------------------------------

PHRASES = ("ZEBRAQUOKKA-7781", "зебраквокка-семь", "消えた会話の合言葉")


TOKENS = ("zebraquokka", "зебраквокк", "合言葉")
"""Parts of the phrases as BM25's vocabulary may hold them (lower-cased, stemmed, split)."""


def _files_holding(folder: Path, phrase: str) -> list[str]:
    needles = {phrase.encode("utf-8"), phrase.lower().encode("utf-8"), json.dumps(phrase).strip('"').encode("ascii")}
    needles |= {t.encode("utf-8") for t in TOKENS if t in phrase.lower()}
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()
            and any(n in p.read_bytes() for n in needles)]


def test_after_update_a_deleted_chat_its_digests_and_a_deleted_row_are_in_no_file_of_the_index(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    secret = " ".join(PHRASES)
    acme = ws / "acme" / ".space"
    write(acme, "chats/ses_gone.json", chat("ses_gone", f"обсуждали {secret} и выгрузку"))
    write(acme, "digests/t_gone_01.json", digest("t_gone_01", "ses_gone", f"что такое {secret}?"))
    conn = sqlite3.connect(acme / "app.sqlite")
    conn.execute("INSERT INTO tasks (id, title, updated_at) VALUES (999, ?, '2026-11-30')", (f"строка {secret}",))
    conn.commit()
    conn.close()
    out, cache = tmp_path / "idx", tmp_path / "cache.sqlite"
    env = {"SEARCHKIT_CACHE": str(cache)}
    p = cli("index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet", env=env)
    assert p.returncode == 0, p.stderr
    for phrase in PHRASES:
        assert _files_holding(out, phrase), phrase  # indexed: the check below can see them
    (acme / "chats" / "ses_gone.json").unlink()
    (acme / "digests" / "t_gone_01.json").unlink()
    conn = sqlite3.connect(acme / "app.sqlite")
    conn.execute("DELETE FROM tasks WHERE id = 999")
    conn.commit()
    conn.close()
    p = cli("index", "--workspace", str(ws), "--out", str(out), "--update", "--quiet", env=env)
    assert p.returncode == 0, p.stderr
    for phrase in PHRASES:
        assert _files_holding(out, phrase) == [], phrase
        assert phrase.encode("utf-8") not in cache.read_bytes()  # the cache holds hashes and vectors only
    assert [q.name for q in out.iterdir() if q.name.startswith(("v", ".tmp"))] == [store.current_dir(out).name]
    idx = HistoryIndex.load(out, cache=EmbeddingCache(None))
    assert not any("gone" in r.id or r.id == "acme/app:tasks#999" for r in idx.searcher.records)


def test_the_indexing_report_on_the_terminal_carries_no_control_character(tmp_path):
    ws = tmp_path / "ws"
    sp = space(ws)
    write(sp, "notes/\x1b[2J\x1b]0;pwned\x07evil\u202etxt.md", b"\x00\x01binary")  # skipped: binary
    write(sp, ".space/chats/c.json", chat("ses\x1b[31m"))  # skipped: bad_id
    p = cli("index", "--workspace", str(ws), "--out", str(tmp_path / "idx"), "--config", str(HASHING), "--quiet")
    assert p.returncode == 0, p.stderr
    assert "binary" in p.stderr and "bad_id" in p.stderr
    assert not any(ch in p.stderr for ch in "\x1b\x07\u202e")


def _cached_keys(path: Path) -> set[bytes]:
    conn = sqlite3.connect(path)
    try:
        return {bytes(k) for (k,) in conn.execute("SELECT text_sha256 FROM embeddings")}
    finally:
        conn.close()


def test_after_update_the_embedding_cache_forgets_the_deleted_text(tmp_path):
    """Issue 28 item 3 (SPEC H3): the vectors (and text hashes) of a deleted chat's, its digests'
    and a deleted row's passages leave the embedding cache too; what is still indexed stays."""
    import hashlib

    from searchkit.rank.rerank import passage_sentences

    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    secret = " ".join(PHRASES)
    acme = ws / "acme" / ".space"
    write(acme, "chats/ses_gone.json", chat("ses_gone", f"обсуждали {secret} и выгрузку. 消えた会話の合言葉です。"))
    write(acme, "digests/t_gone_01.json", digest("t_gone_01", "ses_gone", f"что такое {secret}?"))
    conn = sqlite3.connect(acme / "app.sqlite")
    conn.execute("INSERT INTO tasks (id, title, updated_at) VALUES (999, ?, '2026-11-30')", (f"строка {secret}",))
    conn.commit()
    conn.close()
    path = tmp_path / "cache.sqlite"
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(path))
    idx.searcher.embed_rerank_sentences()
    gone_ids = {"acme/chat:ses_gone", "acme/digest:t_gone_01", "acme/app:tasks#999"}
    rows = {r.id: i for i, r in enumerate(idx.searcher.records)}
    assert gone_ids <= set(rows)
    texts = [p.text for p in idx.searcher.passages if p.record_id in gone_ids]
    texts += [s for t in texts for s in passage_sentences(t)]
    gone = {hashlib.sha256(t.encode("utf-8")).digest() for t in texts}
    assert gone & _cached_keys(path)
    (acme / "chats" / "ses_gone.json").unlink()
    (acme / "digests" / "t_gone_01.json").unlink()
    conn = sqlite3.connect(acme / "app.sqlite")
    conn.execute("DELETE FROM tasks WHERE id = 999")
    conn.commit()
    conn.close()
    kept = {hashlib.sha256(p.text.encode("utf-8")).digest() for p in idx.searcher.passages
            if p.record_id not in gone_ids} - gone
    idx.update(ws)
    idx.searcher.cache.close()
    left = _cached_keys(path)
    assert not gone & left
    assert kept <= left
    for side in (path, Path(f"{path}-wal")):
        if side.exists():
            assert not any(k in side.read_bytes() for k in gone)


def test_an_update_whose_cache_erasure_fails_still_erases_the_index_and_says_so(tmp_path, monkeypatch, caplog):
    from searchkit.errors import ResourceError

    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    write(ws / "acme" / ".space", "chats/ses_gone.json", chat("ses_gone", "зебраквокка-семь"))
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(tmp_path / "cache.sqlite"))
    (ws / "acme" / ".space" / "chats" / "ses_gone.json").unlink()

    def fail(self, texts):
        raise ResourceError("embedding cache X: removing erased entries failed, the disk is full", reason="disk")

    monkeypatch.setattr(EmbeddingCache, "forget", fail)
    with caplog.at_level("WARNING", logger="searchkit.tools.history"):
        rep = idx.update(ws)
    assert rep.removed == 1 and not any(r.id == "acme/chat:ses_gone" for r in idx.searcher.records)
    assert "stay in the embedding cache" in caplog.text


def test_after_update_a_deleted_chat_whose_digests_stay_on_disk_is_named_by_no_file_of_the_index(tmp_path):
    """Issue 28 item 3 (SPEC H3), residual: only the chat file is deleted, its turns' digests stay
    on disk and are left out as orphans; the new version's indexing_report.json counted them by
    name (the digest's file is its turn's id, the reason named the chat's id)."""
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    secret = " ".join(PHRASES)
    acme = ws / "acme" / ".space"
    write(acme, "chats/ses_qx7gone.json", chat("ses_qx7gone", f"обсуждали {secret} и выгрузку"))
    write(acme, "digests/t_qx7gone_01.json", digest("t_qx7gone_01", "ses_qx7gone", f"что такое {secret}?"))
    out = tmp_path / "idx"
    env = {"SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite")}
    p = cli("index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet", env=env)
    assert p.returncode == 0, p.stderr
    assert _files_holding(out, "qx7gone")  # named while indexed: the check below can see it
    (acme / "chats" / "ses_qx7gone.json").unlink()
    p = cli("index", "--workspace", str(ws), "--out", str(out), "--update", "--quiet", env=env)
    assert p.returncode == 0, p.stderr
    for needle in ("qx7gone", *PHRASES):
        assert _files_holding(out, needle) == [], needle
    report = json.loads((store.current_dir(out) / "indexing_report.json").read_text())
    assert {"path_or_table": "acme/.space/digests/", "rule": "orphan_digest",
            "detail": "1 digest(s) whose chat is missing, unusable or in doubt; left out with it, not named here"} \
        in report["skips"]


def test_a_query_on_the_retired_version_puts_no_erased_sentence_back_in_the_cache(tmp_path):
    """Issue 28 item 3 (SPEC H3), residual: ``searchkit serve`` answers from the previous version
    while a refresh erases a deleted file's text from the embedding cache; a Japanese query then
    reranked over the deleted passage embedded its sentences into the cache again (the rerank stage
    stores what the cache lacks). ``retire`` seals the old version's cache and erases again. (A
    deleted chat is out of the old version's scope already: its visibility is read live.)"""
    import copy
    import hashlib

    from searchkit.rank.rerank import passage_sentences

    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    note = ws / "acme" / "notes" / "gone.md"
    note.write_text("消えた会話の合言葉はシマウマです。次の会議で確認します。", encoding="utf-8")
    path = tmp_path / "cache.sqlite"
    old = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(path))
    texts = [p.text for p in old.searcher.passages if p.record_id == "acme/file:notes/gone.md"]
    gone = {hashlib.sha256(t.encode("utf-8")).digest() for x in texts for t in passage_sentences(x)}
    assert texts
    note.unlink()

    def ask(index):
        return index.search("消えた会話の合言葉", caller="u-anna", container="personal", space="acme")

    new = copy.copy(old)  # how serve refreshes: the published version stays as it is
    new.update(ws)
    assert not gone & _cached_keys(path)
    ask(old)  # a call still answered from the previous version
    assert gone & _cached_keys(path)  # the erased sentences are back: what retire undoes
    assert new.searcher.cache.shared is old.searcher.cache.shared
    old.retire(new)
    assert not gone & _cached_keys(path)
    assert "gone.md" in ask(old).text  # sealed: it still answers, and stores nothing
    assert not gone & _cached_keys(path)
    ask(new)
    assert not gone & _cached_keys(path)
    assert len(_cached_keys(path)) > 0
