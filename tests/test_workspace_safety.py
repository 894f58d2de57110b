"""The workspace loader on hostile and damaged input (H1, H2, H15; issue 7 items 7, 13-16; issue 8 items 3-4).

- non-UTF-8 text files are text; binaries stay out (H1);
- a duplicate id is a skip for every claimant, never a winner; the most private visibility wins (H15);
- symbolic links are never followed out of (or inside) a space folder; every one is reported;
- FIFOs and other non-regular files are never opened (no hang); every item has a size cap;
- one bad item (a lone surrogate, deep nesting, wrong types, any exception) is a skip, never a failed build;
- credential files, key material and message-history tables never reach the index (H2).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searchkit.ingest.workspace as ws_module
from searchkit.ingest.policy import RULES, Policy
from searchkit.ingest.workspace import load_workspace

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace"
SECRET = "OUTSIDE-SECRET-7f3a"


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


def chat_doc(ses, owner=None, visibility=None, text="hello", **extra):
    doc = {"ses_id": ses, "title": f"title {ses}", "messages": [
        {"id": "m1", "role": "user", "author": "Анна", "ts": "2026-10-21T10:00:00+03:00", "text": text}]}
    if owner is not None:
        doc["owner"] = owner
    if visibility is not None:
        doc["visibility"] = visibility
    doc.update(extra)
    return doc


def digest_doc(turn, ses, asked="what?", **extra):
    return {"turn_id": turn, "ses_id": ses, "ts": "2026-10-22T09:00:00+03:00", "asked": asked, "done": "this",
            **extra}


def by_id(load):
    return {r.id: r for r in load.records}


def rules(load):
    return {(s.path_or_table, s.rule) for s in load.report.skips + load.report.notes}


def blob(load) -> str:
    return "\n".join(r.text + "\n" + r.title + "\n" + json.dumps(dict(r.fields), default=str) for r in load.records)


@contextmanager
def time_limit(seconds: int):
    """Fail (instead of hanging forever) when the block takes longer than ``seconds``."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"took longer than {seconds}s (a hang)")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def load(root: Path, **kw):
    with time_limit(60):
        result = load_workspace(root, **kw)
    json.dumps([r.to_dict() for r in result.records], ensure_ascii=False).encode("utf-8")  # serialisable
    json.dumps(result.report.to_dict(), ensure_ascii=False).encode("utf-8")
    for s in result.report.skips + result.report.notes:
        assert s.rule in RULES
    return result


@pytest.fixture()
def demo_copy(tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(DEMO, root)
    return root


# -- H1: text in any supported encoding is text; binaries stay out (issue 7 item 7) ----------------------

def test_the_demo_cp1251_note_is_indexed():
    result = load(DEMO)
    record = by_id(result)["acme/file:notes/old-cp1251.txt"]
    assert record.text == "Старая заметка в кодировке cp1251: выгрузка по пятницам."
    assert ("acme/notes/old-cp1251.txt", "decoded") in rules(result)
    assert ("acme/notes/broken.md", "binary") in rules(result)
    assert ("acme/assets/logo.png", "binary") in rules(result)
    assert not any(r.rule in ("secret_content", "credential_file", "load_error", "bad_text", "duplicate_id",
                              "special_file", "symlink") for r in result.report.skips)


def test_utf16_and_legacy_files_are_text_and_binaries_are_not(tmp_path):
    import gzip
    import io
    import zipfile

    space(tmp_path, "s")
    ru = "Заметка в UTF-16: выгрузка отчёта по пятницам, ATL-1655."
    ja = "満月の周期の計算をしました。観測レポートを更新。"
    files = {
        "notes/ru-utf16-bom.txt": ru.encode("utf-16"),
        "notes/ru-utf16le.txt": ru.encode("utf-16-le"),
        "notes/ru-utf16be.txt": ru.encode("utf-16-be"),
        "notes/ja-utf16le.txt": ja.encode("utf-16-le"),
        "notes/ja-sjis.txt": ja.encode("shift_jis"),
        "notes/ja-eucjp.txt": ja.encode("euc-jp"),
        "notes/ru-koi8.txt": ru.encode("koi8-r"),
        "notes/ru-utf32.txt": ru.encode("utf-32"),
    }
    for rel, data in files.items():
        write(tmp_path, f"s/{rel}", data)
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("a.txt", "hello " * 50)
    binaries = {
        "assets/a.png": (DEMO / "acme/assets/logo.png").read_bytes(),
        "assets/a.zip": zbuf.getvalue(),
        "assets/a.gz": gzip.compress(b"hello " * 50),
        "notes/broken.md": (DEMO / "acme/notes/broken.md").read_bytes(),
        "data/app.db": (DEMO / "acme/.space/app.sqlite").read_bytes(),
    }
    for rel, data in binaries.items():
        write(tmp_path, f"s/{rel}", data)
    result = load(tmp_path)
    records = by_id(result)
    for rel in files:
        expected = ja if "/ja-" in rel else ru
        assert records[f"s/file:{rel}"].text == expected, rel
    for rel in binaries:
        assert f"s/file:{rel}" not in records and (f"s/{rel}", "binary") in rules(result), rel


def test_a_cp1251_log_is_read(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/log.md", "## 2026-10-21 — Выгрузка\nПочинили кириллицу в выгрузке.\n".encode("cp1251"))
    result = load(tmp_path)
    assert "Почини" in by_id(result)["s/log:2026-10-21"].text


# -- H15: a duplicate id is never a winner (issue 7 item 13) -----------------------------------------------

def test_a_decoy_chat_cannot_take_over_a_personal_chat(demo_copy):
    # the reproduction: a shared chat that sorts first claims u-boris's ses_id
    write(demo_copy, "acme/.space/chats/000_decoy.json", {
        "ses_id": "ses_b3d0", "title": "decoy", "visibility": "shared",
        "messages": [{"role": "user", "text": "decoy", "ts": "2026-10-27T18:00:00+03:00"}]})
    result = load(demo_copy)
    records = by_id(result)
    assert "acme/chat:ses_b3d0" not in records and "acme/digest:t_b3d0_01" not in records
    found = rules(result)
    assert ("acme/.space/chats/000_decoy.json", "duplicate_id") in found
    assert ("acme/.space/chats/ses_b3d0.json", "duplicate_id") in found  # both claimants, no winner
    assert ("acme/.space/digests/t_b3d0_01.json", "orphan_digest") in found
    assert "salary review" not in blob(result).lower()
    # nothing else moved
    before = by_id(load(DEMO))
    assert set(before) - set(records) == {"acme/chat:ses_b3d0", "acme/digest:t_b3d0_01"}


def test_an_unusable_chat_file_keeps_its_id_in_doubt(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/ses_p.json", '{"ses_id": "ses_p", "owner": "u-boris", "messages": [')  # broken
    write(tmp_path, "s/.space/chats/decoy.json", chat_doc("ses_p", visibility="shared"))
    write(tmp_path, "s/.space/digests/t1.json", digest_doc("t1", "ses_p", asked="boris private"))
    result = load(tmp_path)
    assert not result.records or all("ses_p" not in r.id and r.kind != "digest" for r in result.records)
    assert ("s/.space/chats/decoy.json", "duplicate_id") in rules(result)
    assert ("s/.space/digests/t1.json", "orphan_digest") in rules(result)


def test_duplicate_turn_ids_page_and_source_uuids_are_skipped_for_both(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/p.json", chat_doc("p", owner="u-boris"))
    write(tmp_path, "s/.space/chats/q.json", chat_doc("q", visibility="shared"))
    write(tmp_path, "s/.space/digests/a.json", digest_doc("t1", "p", asked="boris private digest"))
    write(tmp_path, "s/.space/digests/b.json", digest_doc("t1", "q", asked="shared decoy digest"))
    write(tmp_path, "s/.space/pages/x.json", {"uuid": "pg1", "title": "one", "body": "first"})
    write(tmp_path, "s/.space/pages/y.json", {"uuid": "pg1", "title": "two", "body": "second"})
    write(tmp_path, "s/.space/sources.jsonl", "\n".join(json.dumps(x) for x in [
        {"uuid": "src1", "title": "A"}, {"uuid": "src2", "title": "B"}, {"uuid": "src1", "title": "C"},
        {"uuid": "src1", "title": "D"}]) + "\n")
    result = load(tmp_path)
    records = by_id(result)
    assert "s/digest:t1" not in records and "s/page:pg1" not in records and "s/source:src1" not in records
    assert "s/source:src2" in records and "s/chat:p" in records and "s/chat:q" in records
    found = rules(result)
    for where in ["s/.space/digests/a.json", "s/.space/digests/b.json", "s/.space/pages/x.json",
                  "s/.space/pages/y.json", "s/.space/sources.jsonl:1", "s/.space/sources.jsonl:3",
                  "s/.space/sources.jsonl:4"]:
        assert (where, "duplicate_id") in found, where


def test_a_digest_that_names_its_owner_is_at_least_as_private(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/sh.json", chat_doc("sh", visibility="shared"))
    write(tmp_path, "s/.space/chats/pe.json", chat_doc("pe", owner="u-anna"))
    write(tmp_path, "s/.space/digests/a.json", digest_doc("a", "sh", owner="u-boris", visibility="personal"))
    write(tmp_path, "s/.space/digests/b.json", digest_doc("b", "sh", visibility="shared"))
    write(tmp_path, "s/.space/digests/c.json", digest_doc("c", "pe", visibility="shared"))  # chat is personal
    write(tmp_path, "s/.space/digests/d.json", digest_doc("d", "pe", owner="u-boris"))  # conflicting owner
    records = by_id(load(tmp_path))
    assert (records["s/digest:a"].visibility, records["s/digest:a"].owner) == ("personal", "u-boris")
    assert records["s/digest:b"].visibility == "shared"
    assert (records["s/digest:c"].visibility, records["s/digest:c"].owner) == ("personal", "u-anna")
    assert "s/digest:d" not in records


CHAT_SPECS = st.lists(
    st.tuples(
        st.sampled_from(["c1", "c2", "c3", None]),  # declared ses_id (None: the file name)
        st.sampled_from([("u-anna", "personal"), ("u-boris", "personal"), (None, "shared"), ("u-anna", "shared"),
                         "broken"]),
    ),
    min_size=1, max_size=6,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chats=CHAT_SPECS, digests=st.lists(st.sampled_from(["c1", "c2", "c3"]), max_size=5))
def test_no_chat_file_can_shadow_another(tmp_path_factory, chats, digests):
    root = tmp_path_factory.mktemp("ws")
    space(root, "s", members=("u-anna", "u-boris"))
    claims: dict[str, list] = {}
    names = ["c1", "c2", "c3", "f3", "f4", "f5"]
    for i, (declared, how) in enumerate(chats):
        name = names[i]
        if how == "broken":
            write(root, f"s/.space/chats/{name}.json", "{broken")
            claims.setdefault(name, []).append("broken")
            continue
        owner, visibility = how
        doc = chat_doc(declared or name, owner=owner, visibility=visibility)
        if declared is None:
            del doc["ses_id"]
        write(root, f"s/.space/chats/{name}.json", doc)
        claims.setdefault(declared or name, []).append(how)
    for j, ses in enumerate(digests):
        write(root, f"s/.space/digests/t{j}.json", digest_doc(f"t{j}", ses))
    result = load(root)
    records = by_id(result)
    for ses, claimants in claims.items():
        chat = records.get(f"s/chat:{ses}")
        if len(claimants) > 1 or claimants == ["broken"]:
            assert chat is None, ses
        else:
            owner, visibility = claimants[0]
            assert chat is not None and chat.owner == owner
    for j, ses in enumerate(digests):
        digest = records.get(f"s/digest:t{j}")
        claimants = claims.get(ses, [])
        if len(claimants) != 1 or claimants == ["broken"]:
            assert digest is None, (ses, claimants)
            assert (f"s/.space/digests/t{j}.json", "orphan_digest") in rules(result)
        else:
            owner, visibility = claimants[0]
            assert digest is not None and (digest.owner, digest.visibility) == (owner, visibility)
    dup_files = {s.path_or_table for s in result.report.by_rule("duplicate_id")}
    for claimants in claims.values():
        usable = [c for c in claimants if c != "broken"]
        if len(claimants) > 1:
            assert len([w for w in dup_files if "/chats/" in w]) >= len(usable)


# -- symlinks are never followed (issue 7 item 14) ---------------------------------------------------------

def _two_spaces(root: Path) -> Path:
    space(root, "a", members=("u-anna",))
    space(root, "b", members=("u-boris",))
    write(root, "b/.space/chats/secret.json", chat_doc("secret", owner="u-boris", text=SECRET))
    write(root, "b/.space/digests/sd.json", digest_doc("sd", "secret", asked=SECRET))
    write(root, "b/log.md", f"## 2026-10-01\n{SECRET}\n")
    write(root, "b/.space/pages/bp.json", {"uuid": "bp", "title": "b page", "body": SECRET})
    write(root, "b/.space/sources.jsonl", json.dumps({"uuid": "bs", "title": SECRET}) + "\n")
    conn = sqlite3.connect(root / "b/.space/app.sqlite")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO notes VALUES (1, ?, '2026-10-01')", (SECRET,))
    conn.commit()
    conn.close()
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    write(outside, "secret.md", SECRET)
    write(outside, "page.json", {"uuid": "op", "title": "outside", "body": SECRET})
    write(outside, "chat.json", chat_doc("oc", visibility="shared", text=SECRET))
    write(outside, "digest.json", digest_doc("od", "x", asked=SECRET))
    write(outside, "space.json", {"slug": "c", "members": ["u-anna"]})
    write(outside, "users.json", [{"id": "u-x", "name": SECRET}])
    write(outside, "sub/deep.md", SECRET)
    write(root, "a/notes/ok.md", "an ordinary note")
    return outside


LINKS = {
    # link path (in space a unless said) -> target (relative to the workspace root, or outside/)
    "a/.space/pages/p.json": "outside/page.json",
    "a/.space/chats/c.json": "b/.space/chats/secret.json",
    "a/.space/chats/oc.json": "outside/chat.json",
    "a/.space/digests/d.json": "b/.space/digests/sd.json",
    "a/.space/sources.jsonl": "b/.space/sources.jsonl",
    "a/.space/app.sqlite": "b/.space/app.sqlite",
    "a/.space/files.json": "outside/page.json",
    "a/log.md": "b/log.md",
    "a/notes/x.md": "outside/secret.md",
    "a/notes/inside.md": "a/notes/ok.md",  # a link inside the space: still never followed
    "a/linked": "outside/sub",
    "a/.space/pages": "b/.space/pages",  # a whole folder
}


@pytest.mark.parametrize("link", sorted(LINKS))
def test_no_link_is_followed(tmp_path, link):
    root = tmp_path / "ws"
    outside = _two_spaces(root)
    target = LINKS[link]
    target_path = outside / target.removeprefix("outside/") if target.startswith("outside/") else root / target
    path = root / link
    if path.exists() and path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target_path, path)
    result = load(root)
    in_a = [r for r in result.records if r.space == "a"]
    assert not any(SECRET in r.text for r in in_a), link
    where = link + ("/" if target_path.is_dir() and not link.endswith(".sqlite") else "")
    assert (where, "symlink") in rules(result), (where, sorted(rules(result)))
    assert "a/file:notes/ok.md" in by_id(result)  # the rest of the space is still there


@pytest.mark.parametrize("link, target", [
    ("c/.space", "b/.space"), ("d/.space/space.json", "outside/space.json"),
])
def test_a_linked_space_definition_leaves_the_space_out(tmp_path, link, target):
    root = tmp_path / "ws"
    outside = _two_spaces(root)
    slug = link.split("/")[0]
    write(root, f"{slug}/notes/n.md", "a note of a space whose membership is unknown")
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "space.json" if target.startswith("outside/") else root / target, root / link)
    result = load(root)
    assert slug not in result.spaces
    assert not any(r.space == slug for r in result.records)
    assert (slug, "bad_space") in rules(result)
    assert any(s.rule == "symlink" and s.path_or_table.startswith(slug) for s in result.report.skips)


def test_top_level_links_are_skipped(tmp_path):
    root = tmp_path / "ws"
    outside = _two_spaces(root)
    os.symlink(outside / "users.json", root / "users.json")
    os.symlink(root / "b", root / "b2")
    result = load(root)
    assert "b2" not in result.spaces and dict(result.users) == {}
    assert ("users.json", "symlink") in rules(result) and ("b2", "symlink") in rules(result)


# -- FIFOs and other special files are never opened (issue 8 item 3) --------------------------------------

FIFO_PLACES = [
    "s/notes/pipe.md", "s/.space/chats/pipe.json", "s/.space/digests/pipe.json", "s/.space/pages/pipe.json",
    "s/.space/sources.jsonl", "s/.space/app.sqlite", "s/log.md", "s/.space/files.json", "users.json",
    "s/.space/app.sqlite-wal", "top-level-pipe",
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_anywhere_never_hang(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/notes/ok.md", "still indexed")
    write(tmp_path, "t/.space/space.json", {"members": ["u-anna"]})
    os.mkfifo(tmp_path / "t/.space/chats-pipe")
    for place in FIFO_PLACES:
        (tmp_path / place).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(tmp_path / place)
    os.mkfifo(tmp_path / "t/.space/space.json.fifo")
    result = load(tmp_path)  # time-limited: a hang fails the test
    assert "s/file:notes/ok.md" in by_id(result)
    found = rules(result)
    for place in FIFO_PLACES:
        where = {"s/.space/app.sqlite-wal": "s/.space/app.sqlite"}.get(place, place)
        assert (where, "special_file") in found, place


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_space_json_leaves_the_space_out(tmp_path):
    (tmp_path / "s/.space").mkdir(parents=True)
    os.mkfifo(tmp_path / "s/.space/space.json")
    result = load(tmp_path)
    assert ("s/.space/space.json", "special_file") in rules(result) and ("s", "bad_space") in rules(result)


# -- size caps on every item (issue 8 item 3) --------------------------------------------------------------

def test_a_10_mb_chat_is_skipped_with_the_default_policy(tmp_path):
    space(tmp_path, "s")
    big = "выгрузка отчёта " * 700_000  # ~11 MB of UTF-8
    write(tmp_path, "s/.space/chats/big.json", chat_doc("big", visibility="shared", text=big))
    write(tmp_path, "s/.space/digests/t.json", digest_doc("t", "big"))
    result = load(tmp_path)
    assert "s/chat:big" not in by_id(result)
    assert ("s/.space/chats/big.json", "too_large") in rules(result)


def test_every_kind_has_a_cap(tmp_path):
    space(tmp_path, "s")
    policy = Policy(max_item_chars=2_000, max_cell_chars=100, max_file_bytes=50_000, max_log_bytes=60_000)
    long = "word " * 1_000  # 5,000 characters: over max_item_chars, under max_file_bytes
    write(tmp_path, "s/.space/chats/long.json", chat_doc("long", visibility="shared", text=long))
    write(tmp_path, "s/.space/digests/t.json", digest_doc("t", "long"))  # the chat is known: its digest stays
    write(tmp_path, "s/.space/digests/big.json", digest_doc("big", "long", asked=long))
    write(tmp_path, "s/.space/pages/p.json", {"uuid": "p", "title": "page", "body": long})
    write(tmp_path, "s/.space/pages/huge.json", {"uuid": "huge", "title": "page", "body": "x" * 60_000})
    write(tmp_path, "s/.space/sources.jsonl",
          json.dumps({"uuid": "s1", "title": "ok"}) + "\n" + json.dumps({"uuid": "s2", "summary": long}) + "\n")
    write(tmp_path, "s/log.md", f"## 2026-10-01\nshort day\n## 2026-10-02\n{long}\n")
    write(tmp_path, "s/notes/big.md", "y" * 50_001)
    conn = sqlite3.connect(tmp_path / "s/.space/app.sqlite")
    conn.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, notes TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO tasks VALUES (1, 'short title', ?, '2026-10-01')", ("z" * 5_000,))
    conn.commit()
    conn.close()
    result = load(tmp_path, policy=policy)
    records = by_id(result)
    found = rules(result)
    for where in ["s/.space/chats/long.json", "s/.space/digests/big.json", "s/.space/pages/p.json",
                  "s/.space/pages/huge.json", "s/.space/sources.jsonl:2", "s/log.md#2026-10-02", "s/notes/big.md",
                  "s/.space/app.sqlite:tasks#1.notes"]:
        assert (where, "too_large") in found, where
    assert {"s/digest:t", "s/source:s1", "s/log:2026-10-01", "s/app:tasks#1"} <= set(records)
    assert "zzzz" not in records["s/app:tasks#1"].text and "short title" in records["s/app:tasks#1"].text
    assert all(len(r.text) <= 2_000 for r in result.records if r.kind != "file")


# -- one bad item never fails the build (issue 8 item 4) ---------------------------------------------------

def test_a_lone_surrogate_makes_one_skip(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/bad.json",
          '{"ses_id": "bad", "visibility": "shared", "messages": [{"role": "user", "text": "x \\ud800 y"}]}')
    write(tmp_path, "s/.space/chats/good.json", chat_doc("good", visibility="shared"))
    write(tmp_path, "s/.space/pages/p.json", '{"uuid": "p", "title": "\\udfff", "body": "b"}')
    write(tmp_path, "s/.space/sources.jsonl", '{"uuid": "s1", "title": "\\ud83d"}\n{"uuid": "s2", "title": "ok"}\n')
    write(tmp_path, "s/.space/digests/d.json", '{"turn_id": "d", "ses_id": "good", "asked": "\\udc00"}')
    result = load(tmp_path)
    records = by_id(result)
    assert {"s/chat:good", "s/source:s2"} <= set(records)
    found = rules(result)
    for where in ["s/.space/chats/bad.json", "s/.space/pages/p.json", "s/.space/sources.jsonl:1",
                  "s/.space/digests/d.json"]:
        assert (where, "bad_text") in found, where


def test_deeply_nested_json_is_a_skip(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/deep.json", "[" * 200_000 + "]" * 200_000)
    write(tmp_path, "s/.space/pages/deep.json", '{"uuid": "deep", "body": ' + "[" * 200_000 + "]" * 200_000 + "}")
    nested = "1"
    for _ in range(900):  # parses, but is too deep to turn into text
        nested = "[" + nested + "]"
    write(tmp_path, "s/.space/chats/c.json", chat_doc("c", visibility="shared"))
    write(tmp_path, "s/.space/digests/d.json", '{"turn_id": "d", "ses_id": "c", "asked": ' + nested + "}")
    write(tmp_path, "s/.space/sources.jsonl", '{"uuid": "s", "title": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    write(tmp_path, "s/notes/ok.md", "fine")
    write(tmp_path, "s/.space/pages/big-int.json", '{"uuid": "bi", "title": ' + "9" * 10_000 + "}")
    result = load(tmp_path)
    assert "s/file:notes/ok.md" in by_id(result) and "s/chat:c" in by_id(result)
    found = rules(result)
    assert ("s/.space/chats/deep.json", "bad_json") in found
    assert ("s/.space/pages/deep.json", "bad_json") in found
    assert ("s/.space/sources.jsonl:1", "bad_json") in found
    assert ("s/.space/pages/big-int.json", "bad_json") in found
    assert "s/digest:d" in by_id(result) or ("s/.space/digests/d.json", "load_error") in found


def test_any_error_in_one_item_is_a_load_error_skip(tmp_path, monkeypatch):
    space(tmp_path, "s")
    write(tmp_path, "s/notes/a.md", "# A\nfine")
    write(tmp_path, "s/notes/boom.md", "# Boom\nthis one raises")
    real = ws_module.files._file_title

    def flaky(name, text):
        if name == "boom.md":
            raise RuntimeError("simulated failure")
        return real(name, text)

    monkeypatch.setattr(ws_module.files, "_file_title", flaky)  # where _load_file looks it up
    result = load(tmp_path)
    assert "s/file:notes/a.md" in by_id(result) and "s/file:notes/boom.md" not in by_id(result)
    skip = next(s for s in result.report.skips if s.path_or_table == "s/notes/boom.md")
    assert skip.rule == "load_error" and "simulated failure" in skip.detail


def test_a_failing_kind_loader_does_not_sink_the_space(tmp_path, monkeypatch):
    space(tmp_path, "s")
    write(tmp_path, "s/notes/a.md", "fine")
    write(tmp_path, "s/.space/chats/c.json", chat_doc("c", visibility="shared"))
    write(tmp_path, "s/.space/digests/d.json", digest_doc("d", "c"))

    def boom(*args, **kwargs):
        raise MemoryError("simulated")

    monkeypatch.setattr(ws_module.loader, "_load_chats", boom)  # where _load_space looks it up
    result = load(tmp_path)
    assert "s/file:notes/a.md" in by_id(result)
    assert ("s/.space/chats/", "load_error") in rules(result)
    assert ("s/.space/digests/d.json", "orphan_digest") in rules(result)  # chats unknown: digests stay out


def test_non_utf8_names_and_cells(tmp_path):
    space(tmp_path, "s")
    name = os.fsdecode(b"bad-\xff-name.md")
    try:
        (tmp_path / "s" / name).write_text("text under a name that is not UTF-8", encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system refuses non-UTF-8 names")
    conn = sqlite3.connect(tmp_path / "s/.space/app.sqlite")
    conn.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO tasks VALUES (1, CAST(X'41ff42' AS TEXT), '2026-10-01')")
    conn.execute("INSERT INTO tasks VALUES (2, 'ok', '2026-10-02')")
    conn.commit()
    conn.close()
    result = load(tmp_path)
    assert any(s.rule == "bad_text" and "bad-" in s.path_or_table for s in result.report.skips)
    assert {"s/app:tasks#1", "s/app:tasks#2"} <= set(by_id(result))


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    chat=st.dictionaries(st.sampled_from(["ses_id", "title", "owner", "visibility", "run", "messages", "lang", "ts"]),
                         JSONISH, max_size=8),
    message=st.dictionaries(st.sampled_from(["id", "role", "author", "ts", "text", "lang"]), JSONISH, max_size=6),
    digest=st.dictionaries(st.sampled_from(["turn_id", "ses_id", "ts", "asked", "done", "left", "decided",
                                            "owner", "visibility", "lang"]), JSONISH, max_size=10),
    page=st.dictionaries(st.sampled_from(["uuid", "title", "type", "updated", "body", "lang"]), JSONISH, max_size=6),
    source=st.dictionaries(st.sampled_from(["uuid", "title", "url", "summary", "added", "lang"]), JSONISH, max_size=6),
    space_doc=st.dictionaries(st.sampled_from(["slug", "title", "members", "container", "history_search"]),
                              JSONISH, max_size=5),
    users=JSONISH,
)
def test_wrong_types_never_crash(tmp_path_factory, chat, message, digest, page, source, space_doc, users):
    root = tmp_path_factory.mktemp("ws")
    space(root, "s")
    if isinstance(chat.get("messages"), list):
        chat["messages"].append(message)
    else:
        chat.setdefault("messages", [message])
    write(root, "s/.space/chats/c.json", chat)
    write(root, "s/.space/digests/d.json", digest)
    write(root, "s/.space/pages/p.json", page)
    write(root, "s/.space/sources.jsonl", json.dumps(source) + "\n")
    write(root, "t/.space/space.json", space_doc)
    write(root, "users.json", users)
    write(root, "s/notes/ok.md", "still here")
    result = load(root)  # never raises
    assert "s/file:notes/ok.md" in by_id(result)
    assert not result.report.by_rule("load_error"), result.report.by_rule("load_error")
    for r in result.records:
        assert isinstance(r.title, str) and isinstance(r.text, str)


# -- H2: credentials, key material and message tables never reach the index (issue 7 items 6, 15, 16) ------

CREDENTIALS = {
    "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n"
              "-----END OPENSSH PRIVATE KEY-----\n",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
    "certs/server.pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
    "certs/server.key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
    "certs/client.p12": "KEYSTORE-PLACEHOLDER sk-secret-value",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789\n",
    ".netrc": "machine api.example.com login anna password s3cr3t\n",
    ".pgpass": "db.example.com:5432:sales:anna:s3cr3t\n",
    ".aws/credentials": "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    ".git-credentials": "https://anna:s3cr3t@github.com\n",
    ".docker/config.json": '{"auths": {"ghcr.io": {"auth": "YW5uYTpzM2NyM3Q="}}}',
    "kubeconfig": "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user:\n    token: s3cr3t-kube-token\n",
    "config/secrets.yaml": "db_password: s3cr3t\n",
    "config/secrets.json": '{"db_password": "s3cr3t"}',
    "deploy/app.secret": "s3cr3t",
    ".htpasswd": "anna:$apr1$abc$HqJZimcKQFAMYayBlzkrA/\n",
    "gcp/key-4f2a.json": '{"type": "service_account", "project_id": "p", "private_key_id": "k",'
                         ' "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n"}',
    "notes/backup.txt": "old server key, keep safe:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n"
                        "-----END EC PRIVATE KEY-----\n",
}


def test_credential_files_are_never_indexed(tmp_path):
    space(tmp_path, "s")
    for rel, text in CREDENTIALS.items():
        write(tmp_path, f"s/{rel}", text)
    write(tmp_path, "s/notes/ok.md", "# Keys\nRotate the deploy keys monthly; ask Boris for the vault.")
    result = load(tmp_path)
    files = {r.ref for r in result.records if r.kind == "file"}
    assert files == {"notes/ok.md"}, files
    skipped = {s.path_or_table: s.rule for s in result.report.skips}
    for rel in CREDENTIALS:
        top = rel.split("/")[0]
        rule = skipped.get(f"s/{rel}") or skipped.get(f"s/{top}/")
        assert rule in ("credential_file", "excluded_file", "secret_content"), (rel, rule)
    assert skipped["s/gcp/key-4f2a.json"] == "secret_content"
    assert skipped["s/notes/backup.txt"] == "secret_content"
    assert "s3cr3t" not in blob(result)


def _db(path: Path, tables: dict[str, str], virtual: list[str] = ()) -> None:
    conn = sqlite3.connect(path)
    for name, cols in tables.items():
        conn.execute(f'CREATE TABLE "{name}" (id INTEGER PRIMARY KEY, {cols}, updated_at TEXT)')
        conn.execute(f'INSERT INTO "{name}" (id, updated_at) VALUES (1, "2026-10-01")')
    for sql in virtual:
        conn.execute(sql)
    conn.commit()
    conn.close()


def test_message_history_and_fts_tables_never_reach_the_index(tmp_path):
    space(tmp_path, "s")
    (tmp_path / "s/.space").mkdir(parents=True, exist_ok=True)
    message_tables = ["messages_archive", "chat_messages_v2", "history_old", "messages_backup", "messages2",
                      "msg_archive", "slack_export", "dm", "chat", "chats", "conversations", "inbox", "threads"]
    tables = {name: "body TEXT" for name in message_tables}
    tables["usage"] = "tokens_used INTEGER, pass TEXT, pw TEXT, jwt TEXT, bearer TEXT, authorization TEXT, " \
                      "cookie TEXT, pin TEXT, salt TEXT, pinned INTEGER, shipping TEXT, spinner TEXT"
    _db(tmp_path / "s/.space/app.sqlite", tables, [
        "CREATE VIRTUAL TABLE notes_fts USING fts5(body)",
        "INSERT INTO notes_fts(body) VALUES ('private message text in a full-text index')",
        "CREATE VIRTUAL TABLE docs USING fts4(body)",
        "INSERT INTO docs(body) VALUES ('private message text in an fts4 index')",
        "CREATE VIRTUAL TABLE boxes USING rtree(id, minx, maxx)",
    ])
    result = load(tmp_path)
    tables_in = {r.fields["table"] for r in result.records if r.kind == "app"}
    assert tables_in == {"usage"}, tables_in
    assert "private message text" not in blob(result)
    skipped = {s.path_or_table.rsplit(":", 1)[-1]: s.rule for s in result.report.skips if "app.sqlite:" in s.path_or_table}
    for name in message_tables:
        assert skipped[name] == "journal_table", name
    for name in ["notes_fts", "docs", "boxes"]:
        assert skipped[name] == "virtual_table", name
    for name in ["notes_fts_content", "notes_fts_data", "notes_fts_idx", "notes_fts_docsize", "notes_fts_config",
                 "docs_segments", "docs_segdir", "docs_content", "docs_stat", "docs_docsize", "boxes_node",
                 "boxes_rowid", "boxes_parent"]:
        assert skipped[name] == "shadow_table", name
    columns = next(r for r in result.records if r.kind == "app").fields["columns"]
    assert set(columns) == {"id", "tokens_used", "pinned", "shipping", "spinner", "updated_at"}
