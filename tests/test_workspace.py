"""Loading a workspace into Records of the seven kinds (H1-H5, H10, H15; searchkit.ingest.workspace)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from searchkit.ingest.policy import Policy
from searchkit.ingest.workspace import SpaceInfo, load_workspace
from searchkit.records import KINDS

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace"
NOW = datetime(2026, 11, 6, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO, now=NOW)


def by_id(load):
    return {r.id: r for r in load.records}


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


def space(root: Path, slug: str, members=("u-anna",), **extra) -> Path:
    write(root, f"{slug}/.space/space.json", {"slug": slug, "title": slug, "members": list(members), **extra})
    return root / slug


def chat(root: Path, slug: str, ses: str, owner="u-anna", visibility="shared", run="chat", text="hello"):
    write(root, f"{slug}/.space/chats/{ses}.json", {
        "ses_id": ses, "title": f"title {ses}", "owner": owner, "visibility": visibility, "run": run,
        "messages": [{"id": "m1", "role": "user", "author": "Анна", "ts": "2026-10-21T10:00:00+03:00", "text": text}],
    })


def digest(root: Path, slug: str, turn: str, ses: str):
    write(root, f"{slug}/.space/digests/{turn}.json", {
        "turn_id": turn, "ses_id": ses, "ts": "2026-10-22T09:00:00+03:00",
        "asked": "what?", "done": "this", "left": "", "decided": "that",
    })


# -- the demo workspace: each kind -------------------------------------------------------------------

@pytest.mark.parametrize("rid, kind, ref, date, title, owner, visibility", [
    ("acme/chat:ses_4f2a", "chat", "chat:ses_4f2a", "2026-10-21", "Выгрузка отчёта", "u-anna", "shared"),
    ("acme/chat:ses_7c19", "chat", "chat:ses_7c19", "2026-10-24", "Премия команды — черновик", "u-anna", "personal"),
    ("acme/digest:t_4f2a_02", "digest", "digest:t_4f2a_02", "2026-10-21", "Как часто запускать выгрузку отчёта?",
     "u-anna", "shared"),
    ("acme/log:2026-10-21", "log", "log.md#2026-10-21", "2026-10-21", "Выгрузка отчёта", None, "shared"),
    ("acme/file:notes/vygruzka-otcheta.md", "file", "notes/vygruzka-otcheta.md", "2026-11-02",
     "vygruzka-otcheta.md · Как выгрузить отчёт по продажам", None, "shared"),
    ("research/source:5b2d7e4f-8a1c-4d3e-b6f7-2a9c0e1d3f45", "source", "source:5b2d7e4f-8a1c-4d3e-b6f7-2a9c0e1d3f45",
     "2026-10-22", "国立天文台 暦計算室", None, "shared"),
    ("research/page:7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "page", "page:7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
     "2026-11-05", "観測レポート 2026年10月", None, "shared"),
    ("acme/app:tasks#57", "app", "app:tasks#57", "2026-11-02", "tasks #57", None, "shared"),
])
def test_each_kind_loads(demo, rid, kind, ref, date, title, owner, visibility):
    record = by_id(demo)[rid]
    assert (record.kind, record.ref, record.date, record.title, record.owner, record.visibility) == (
        kind, ref, date, title, owner, visibility)


def test_demo_has_every_kind_and_unique_ids(demo):
    assert all(demo.report.counts[kind] > 0 for kind in KINDS)
    assert len({r.id for r in demo.records}) == len(demo.records)
    assert sum(demo.report.counts.values()) == len(demo.records)
    assert demo.report.loaded_at == "2026-11-06T12:00:00+00:00"


REF_FORMS = {
    "chat": r"chat:[\w-]+", "digest": r"digest:[\w-]+", "log": r"log\.md#\d{4}-\d{2}-\d{2}",
    "file": r"[^:#]+", "source": r"source:[0-9a-f-]{36}", "page": r"page:[0-9a-f-]{36}", "app": r"app:\w+#\w+",
}


def test_refs_ids_and_hashes(demo):
    for r in demo.records:
        assert re.fullmatch(REF_FORMS[r.kind], r.ref), (r.kind, r.ref)
        assert r.id.startswith(f"{r.space}/{r.kind}:")
        assert r.fields["source_key"] == r.id
        assert r.fields["content_hash"] == hashlib.sha256(r.text.encode("utf-8")).hexdigest()
        assert r.date is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", r.date)


def test_chat_text_is_title_and_author_lines(demo):
    text = by_id(demo)["acme/chat:ses_4f2a"].text.splitlines()
    assert text[0] == "Выгрузка отчёта"
    assert text[1].startswith("Анна: Выгрузка отчёта по продажам снова ломает кириллицу, это задача ATL-1650.")
    assert text[2].startswith("assistant: Скрипт выгрузки — scripts/export_report.py.")


def test_digest_card_ends_with_its_chat_h5(demo):
    digests = [r for r in demo.records if r.kind == "digest"]
    assert digests
    for r in digests:
        assert r.text.splitlines()[-1] == f"Chat: chat:{r.fields['chat']}"
    lines = by_id(demo)["acme/digest:t_4f2a_02"].text.splitlines()
    assert lines == ["Asked: Как часто запускать выгрузку отчёта?", "Done: Договорились о расписании.",
                     "Left: Проверить выгрузку за октябрь.", "Decided: Выгрузка по понедельникам в 09:00 МСК.",
                     "Chat: chat:ses_4f2a"]


def test_app_row_card_ends_with_table_and_columns_h4(demo):
    rows = [r for r in demo.records if r.kind == "app"]
    for r in rows:
        assert r.text.splitlines()[-1] == f"Table: {r.fields['table']} ({', '.join(r.fields['columns'])})"
    assert by_id(demo)["acme/app:tasks#57"].text.splitlines()[-1] == (
        "Table: tasks (id, title, status, score, deadline, updated_at)")
    assert "status: done" in by_id(demo)["acme/app:tasks#57"].text
    assert by_id(demo)["acme/app:tasks#57"].fields["row_id"] == 57


def test_log_one_record_per_day(demo):
    days = sorted(r.date for r in demo.records if r.kind == "log" and r.space == "acme")
    assert days == ["2026-10-19", "2026-10-21", "2026-10-28", "2026-11-02"]
    day = by_id(demo)["acme/log:2026-10-28"].text
    assert "Churn dashboard" in day and "ATL-1655" not in day and "кириллицу" not in day


def test_digests_inherit_owner_and_visibility_h15(demo):
    records = by_id(demo)
    for r in demo.records:
        if r.kind == "digest":
            parent = records[f"{r.space}/chat:{r.fields['chat']}"]
            assert (r.owner, r.visibility) == (parent.owner, parent.visibility)
    scheduled = records["acme/digest:t_sch1_01"]
    assert scheduled.fields["run"] == "scheduled" and scheduled.visibility == "personal" and scheduled.owner == "u-anna"
    automatic = records["research/digest:t_9a04_01"]
    assert automatic.fields["run"] == "automatic" and automatic.visibility == "personal"
    assert records["acme/digest:t_b3d0_01"].owner == "u-boris"


def test_spaces_and_users(demo):
    assert set(demo.spaces) == {"acme", "research", "legal", "archive"}
    assert demo.spaces["archive"].history_search is False
    assert "u-anna" not in demo.spaces["legal"].members
    assert isinstance(demo.spaces["acme"], SpaceInfo) and demo.spaces["acme"].container == "shared"
    assert demo.users["u-kenji"] == "健二"


# -- H2 on the demo -------------------------------------------------------------------------------------

@pytest.mark.parametrize("what, rule", [
    ("acme/uploads/", "excluded_dir"),
    ("acme/node_modules/", "excluded_dir"),
    ("acme/.env", "excluded_file"),
    ("acme/credentials.json", "excluded_file"),
    ("acme/scripts/token.json", "excluded_file"),
    ("acme/assets/logo.png", "binary"),
    ("acme/notes/broken.md", "binary"),
    ("acme/.space/app.sqlite:messages", "journal_table"),
    ("acme/.space/app.sqlite:audit_log", "journal_table"),
    ("research/.space/app.sqlite:events", "journal_table"),
    ("acme/.space/app.sqlite:clients.api_key", "secret_column"),
    ("research/.space/app.sqlite:observers.password_hash", "secret_column"),
    ("acme/.space/app.sqlite:settings", "no_id_column"),
])
def test_demo_skips_are_reported(demo, what, rule):
    assert (what, rule) in {(s.path_or_table, s.rule) for s in demo.report.skips}


def test_nothing_excluded_is_indexed(demo):
    refs = {r.ref for r in demo.records if r.kind == "file"}
    assert not {"uploads/contract-scan.txt", "node_modules/x.js", ".env", "credentials.json",
                "scripts/token.json", "notes/broken.md", "assets/logo.png"} & refs
    tables = {r.fields["table"] for r in demo.records if r.kind == "app"}
    assert tables == {"tasks", "clients", "deals", "experiments", "observers"}
    blob = "\n".join(r.text for r in demo.records)
    assert "demo-key-not-real" not in blob and "demo-hash-not-real" not in blob and "api_key" not in blob


# -- caps ------------------------------------------------------------------------------------------------

def _caps_workspace(root: Path) -> Path:
    space(root, "big")
    db = root / "big" / ".space" / "app.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    for t in range(32):  # table tNN's newest row is on day NN+1 of October
        conn.execute(f"CREATE TABLE t{t:02d} (id INTEGER PRIMARY KEY, title TEXT, updated_at TEXT)")
        n = 210 if t in (31, 10) else 2
        rows = [(i, f"row {i}", f"2026-10-{t + 1:02d}T{(i * 11) % n // 60:02d}:{(i * 11) % n % 60:02d}:00")
                for i in range(n)]
        conn.executemany(f"INSERT INTO t{t:02d} VALUES (?, ?, ?)", rows)
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, text TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO messages VALUES (1, 'hi', '2026-12-31')")  # newest of all, still never indexed
    conn.commit()
    conn.close()
    return root


def test_table_and_row_caps(tmp_path):
    load = load_workspace(_caps_workspace(tmp_path))
    tables = {r.fields["table"] for r in load.records}
    assert tables == {f"t{t:02d}" for t in range(2, 32)}
    capped = {s.path_or_table for s in load.report.by_rule("table_cap")}
    assert capped == {"big/.space/app.sqlite:t00", "big/.space/app.sqlite:t01"}
    rows = [r for r in load.records if r.fields["table"] == "t31"]
    assert len(rows) == 200
    # row i is stamped i*11 mod 210 minutes into the day (all distinct): the 10 lowest stamps are dropped
    stamps = sorted(((i * 11) % 210, i) for i in range(210))
    assert {r.fields["row_id"] for r in rows} == {i for _, i in stamps[10:]}
    row_caps = {s.path_or_table: s.detail for s in load.report.by_rule("row_cap")}
    assert set(row_caps) == {"big/.space/app.sqlite:t31", "big/.space/app.sqlite:t10"}
    assert "10 of 210" in row_caps["big/.space/app.sqlite:t31"]
    assert load.report.by_rule("journal_table")[0].path_or_table == "big/.space/app.sqlite:messages"


def test_policy_caps_are_knobs(tmp_path):
    load = load_workspace(_caps_workspace(tmp_path), policy=Policy(max_tables=2, max_rows=5))
    assert {r.fields["table"] for r in load.records} == {"t30", "t31"}
    assert len([r for r in load.records if r.fields["table"] == "t31"]) == 5


# -- bad input: reported, nothing else lost -----------------------------------------------------------------

def _bad_workspace(root: Path) -> Path:
    space(root, "s")
    chat(root, "s", "ses_good", text="good chat ATL-1655")
    digest(root, "s", "t_good", "ses_good")
    write(root, "s/.space/chats/ses_bad.json", '{"ses_id": "ses_bad", "messages": [')
    digest(root, "s", "t_bad", "ses_bad")  # its chat is unreadable: owner unknown -> never indexed
    write(root, "s/.space/chats/ses_noowner.json", {"ses_id": "ses_noowner", "visibility": "personal", "messages": []})
    write(root, "s/log.md", "just some notes\nwithout any day heading\n")
    write(root, "s/notes/binary.md", b"# looks like markdown\x00\x00")
    write(root, "s/notes/latin1.txt", "café crème".encode("latin-1"))
    write(root, "s/notes/ok.md", "# fine\n\nstill here")
    write(root, "s/.space/sources.jsonl", '{"uuid": "u1", "title": "one"}\n{broken\n{"title": "no uuid"}\n{"uuid": "u2", "title": "two"}\n')
    write(root, "s/.space/pages/p1.json", "[not json")
    write(root, "s/.space/pages/p2.json", {"uuid": "p2", "title": "page two", "body": {"widgets": [1, 2]}})
    db = root / "s" / ".space" / "app.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE kv (k TEXT, v TEXT, updated_at TEXT)")
    conn.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO tasks VALUES (1, 'task one', '2026-10-01')")
    conn.execute("CREATE TABLE plain (id INTEGER PRIMARY KEY, title TEXT)")
    conn.executemany("INSERT INTO plain VALUES (?, ?)", [(1, "a"), (2, "b")])
    conn.commit()
    conn.close()
    space(root, "corrupt")
    write(root, "corrupt/.space/app.sqlite", b"this is not a database " * 200)
    write(root, "corrupt/notes/a.md", "survives the corrupt database")
    write(root, "notaspace/readme.md", "no .space here")
    write(root, "badspace/.space/space.json", {"members": "u-anna"})
    write(root, "badspace/notes/secret-plan.md", "must not be indexed: membership unknown")
    return root


@pytest.fixture()
def bad(tmp_path):
    return load_workspace(_bad_workspace(tmp_path), now=NOW)


def _rules(load):
    return {(s.path_or_table, s.rule) for s in load.report.skips + load.report.notes}


def test_bad_inputs_are_reported(bad):
    rules = _rules(bad)
    for expected in [
        ("s/.space/chats/ses_bad.json", "bad_json"),
        ("s/.space/digests/t_bad.json", "orphan_digest"),
        ("s/.space/chats/ses_noowner.json", "bad_shape"),
        ("s/log.md", "log_no_headings"),
        ("s/notes/binary.md", "binary"),
        ("s/notes/latin1.txt", "decoded"),  # H1: text in a legacy encoding is text
        ("s/.space/sources.jsonl:2", "bad_json"),
        ("s/.space/sources.jsonl:3", "bad_shape"),
        ("s/.space/pages/p1.json", "bad_json"),
        ("s/.space/app.sqlite:kv", "no_id_column"),
        ("s/.space/app.sqlite:plain", "no_updated_at"),
        ("corrupt/.space/app.sqlite", "bad_sqlite"),
        ("notaspace", "not_a_space"),
        ("badspace", "bad_space"),
    ]:
        assert expected in rules, expected


def test_bad_inputs_lose_nothing_else(bad):
    ids = set(by_id(bad))
    assert {
        "s/chat:ses_good", "s/digest:t_good", "s/file:notes/ok.md", "s/source:u1", "s/source:u2",
        "s/page:p2", "s/app:tasks#1", "s/app:plain#1", "s/app:plain#2", "corrupt/file:notes/a.md", "s/log:log.md",
    } <= ids
    assert not any(i.startswith(("badspace/", "notaspace/")) for i in ids)
    assert set(bad.spaces) == {"s", "corrupt"}
    whole = by_id(bad)["s/log:log.md"]
    assert (whole.kind, whole.ref, whole.fields["whole_file"]) == ("log", "log.md", True)
    assert "without any day heading" in whole.text
    assert '"widgets"' in by_id(bad)["s/page:p2"].text


def test_missing_workspace_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        load_workspace(tmp_path / "nope")


def test_git_dir_symlink_and_empty_file(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.git/config", "[core]")
    write(tmp_path, "s/lib/.git/HEAD", "ref")
    write(tmp_path, "s/empty.md", "   \n")
    write(tmp_path, "s/real.md", "real text")
    os.symlink(tmp_path / "s" / "real.md", tmp_path / "s" / "link.md")
    load = load_workspace(tmp_path)
    rules = _rules(load)
    assert ("s/.git/", "excluded_dir") in rules and ("s/lib/.git/", "excluded_dir") in rules
    assert ("s/link.md", "symlink") in rules and ("s/empty.md", "empty") in rules
    assert [r.ref for r in load.records] == ["real.md"]


# -- log.md details, dates ----------------------------------------------------------------------------------

def test_log_duplicate_days_merge_and_preamble_is_reported(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/log.md", "# Log\nloose preamble text\n## 2026-10-01 — first\nA\n## 2026-10-02\nB\n## 2026-10-01\nC\n"
                                "## 2026-13-40 not a date\nD\n")
    load = load_workspace(tmp_path)
    logs = by_id(load)
    assert sorted(logs) == ["s/log:2026-10-01", "s/log:2026-10-02"]
    first = logs["s/log:2026-10-01"]
    assert first.title == "first" and "A" in first.text and "C" in first.text and "B" not in first.text
    assert "D" in first.text  # a bad date is not a heading: its text stays with the day above
    assert ("s/log.md", "log_preamble") in _rules(load) and ("s/log.md", "duplicate") in _rules(load)


def test_file_date_from_files_json_else_mtime(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/files.json", {"a.md": "2026-10-21T23:30:00-05:00"})
    write(tmp_path, "s/a.md", "listed")
    b = write(tmp_path, "s/b.md", "unlisted")
    stamp = datetime(2025, 5, 17, 12, tzinfo=timezone.utc).timestamp()
    os.utime(b, (stamp, stamp))
    records = by_id(load_workspace(tmp_path))
    assert records["s/file:a.md"].date == "2026-10-21"  # the day in its own offset
    assert records["s/file:b.md"].date == "2025-05-17"


# -- H3 support: deletions and changes are visible to an incremental update ----------------------------------------

def test_deleted_chat_takes_its_digests_and_deleted_row_leaves(tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(DEMO, root)
    before = by_id(load_workspace(root))
    assert "acme/digest:t_4f2a_01" in before and "acme/app:tasks#51" in before
    (root / "acme" / ".space" / "chats" / "ses_4f2a.json").unlink()
    conn = sqlite3.connect(root / "acme" / ".space" / "app.sqlite")
    conn.execute("DELETE FROM tasks WHERE id = 51")
    conn.execute("UPDATE tasks SET status = 'reopened' WHERE id = 57")
    conn.commit()
    conn.close()
    after_load = load_workspace(root)
    after = by_id(after_load)
    gone = set(before) - set(after)
    assert gone == {"acme/chat:ses_4f2a", "acme/digest:t_4f2a_01", "acme/digest:t_4f2a_02", "acme/app:tasks#51"}
    changed = {i for i in set(before) & set(after)
               if before[i].fields["content_hash"] != after[i].fields["content_hash"]}
    assert changed == {"acme/app:tasks#57"}
    assert {s.path_or_table for s in after_load.report.by_rule("orphan_digest")} == {
        "acme/.space/digests/t_4f2a_01.json", "acme/.space/digests/t_4f2a_02.json"}


def test_load_is_deterministic(demo):
    again = load_workspace(DEMO, now=NOW)
    assert again.records == demo.records
    assert again.report.skips == demo.report.skips


def test_personal_chat_without_owner_is_refused_and_its_digests_too(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/c.json", {"ses_id": "c", "visibility": "personal", "messages": [{"text": "x"}]})
    digest(tmp_path, "s", "t1", "c")
    chat(tmp_path, "s", "d", owner="u-boris", visibility="personal", run="scheduled")
    digest(tmp_path, "s", "t2", "d")
    load = load_workspace(tmp_path)
    records = by_id(load)
    assert set(records) == {"s/chat:d", "s/digest:t2"}
    assert records["s/digest:t2"].owner == "u-boris" and records["s/digest:t2"].visibility == "personal"
