"""Who may see what is read when the search runs, never frozen in an index (H14, H15; issue 28
item 2), and ``searchkit search --index`` over a history index keeps to the same rules (issue 27
item 3). Hashing embedder, a copy of the demo workspace per test."""
import json
import shutil
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.index.store import current_dir
from searchkit.errors import ResourceError
from searchkit.tools.access import ACCESS_UNKNOWN
from searchkit.tools.history import HistoryIndex
from searchkit.tools.messages import message

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}})
HASHING = ROOT / "tests" / "data" / "hashing.json"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The demo workspace indexed once; each test points a copy of the index at its own copy."""
    ws = tmp_path_factory.mktemp("built") / "ws"
    shutil.copytree(DEMO, ws)
    return HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


def _on(built, ws):
    """The built index (records and spaces as indexed), reading access from ``ws`` now."""
    return HistoryIndex(built.searcher, built.spaces, workspace=ws)


def _edit_space(ws, slug, **changes):
    path = ws / slug / ".space" / "space.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _edit_chat(ws, slug, ses, **changes):
    path = ws / slug / ".space" / "chats" / f"{ses}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _session_of(card):
    r = card.hit.record
    return r.fields.get("ses_id") if r.kind == "chat" else r.fields.get("chat") if r.kind == "digest" else None


def _anna(idx, query, **kw):
    kw.setdefault("space", "acme")
    return idx.search(query, caller="u-anna", container="personal", **kw)


def test_a_member_removed_after_the_build_finds_nothing_there_and_is_told_why(ws, tmp_path):
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    idx.save(tmp_path / "index")
    assert {c.hit.record.space for c in _anna(idx, "выгрузка отчёта").cards} == {"acme"}
    _edit_space(ws, "acme", members=["u-boris"])
    old = HistoryIndex.load(tmp_path / "index", CFG, cache=EmbeddingCache(None))
    for index in (old, idx, HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))):  # old, in memory, fresh
        ans = _anna(index, "выгрузка отчёта")
        assert not ans.cards and ans.searched == ()
        assert ans.skipped == (("acme", "not_member"),)
        assert message("ru", "not_member", slug="acme") in ans.text.splitlines()[0]
        every = _anna(index, "выгрузка отчёта", spaces="all", space="research")
        assert "acme" not in every.searched and all(c.hit.record.space != "acme" for c in every.cards)


def test_a_member_added_after_the_build_searches_the_space(built, ws):
    idx = _on(built, ws)
    assert _anna(idx, "выгрузка", space="acme").cards
    assert not idx.search("выгрузка", caller="u-kenji", container="personal", space="acme").cards
    _edit_space(ws, "acme", members=["u-anna", "u-boris", "u-kenji"])
    assert idx.search("выгрузка", caller="u-kenji", container="personal", space="acme").cards


def test_a_space_switched_off_after_the_build_is_skipped_and_named(built, ws):
    idx = _on(built, ws)
    before = _anna(idx, "満月 周期", spaces="all", limit=15)
    assert "research" in before.searched and any(c.hit.record.space == "research" for c in before.cards)
    _edit_space(ws, "research", history_search=False)
    after = _anna(idx, "満月 周期", spaces="all", limit=15, lang="ru")
    assert "research" not in after.searched and all(c.hit.record.space != "research" for c in after.cards)
    assert ("research", "history_search_off") in after.skipped
    assert message("ru", "history_search_off", slug="research") in after.text.splitlines()[0]
    # the space's own container (no caller) finds nothing either
    shared = idx.search("満月", caller=None, container="shared", space="research")
    assert not shared.cards and shared.skipped == (("research", "history_search_off"),)


def test_a_chat_deleted_or_made_personal_leaves_at_once_with_its_digests(built, ws):
    idx = _on(built, ws)
    query = "выгрузка отчёта кодировка CSV export last row"
    seen = {_session_of(c) for c in _anna(idx, query, limit=10, kinds=["chat", "digest"]).cards}
    assert {"ses_4f2a", "ses_e7d1"} <= seen  # Anna's shared chat and Boris's shared chat
    (ws / "acme" / ".space" / "chats" / "ses_e7d1.json").unlink()
    _edit_chat(ws, "acme", "ses_4f2a", owner="u-boris", visibility="personal")
    for kinds in (None, ["chat", "digest"], ["digest"]):
        ans = _anna(idx, query, limit=10, kinds=kinds)
        assert not {"ses_4f2a", "ses_e7d1"} & {_session_of(c) for c in ans.cards}
    boris = idx.search(query, caller="u-boris", container="personal", space="acme", limit=10,
                       kinds=["chat", "digest"])
    got = {_session_of(c) for c in boris.cards}
    assert "ses_4f2a" in got and "ses_e7d1" not in got
    shared = idx.search(query, caller=None, container="shared", space="acme", limit=10, kinds=["chat", "digest"])
    assert not {"ses_4f2a", "ses_e7d1"} & {_session_of(c) for c in shared.cards}


def test_a_chat_claimed_twice_or_unreadable_is_in_doubt(built, ws):
    idx = _on(built, ws)
    chats = ws / "acme" / ".space" / "chats"
    (chats / "copy.json").write_text((chats / "ses_7c19.json").read_text(encoding="utf-8"), encoding="utf-8")
    (chats / "ses_4f2a.json").write_text("{not json", encoding="utf-8")
    ans = _anna(idx, "выгрузка отчёта расписание кодировка", limit=10, kinds=["chat", "digest"])
    assert not {"ses_4f2a", "ses_7c19"} & {_session_of(c) for c in ans.cards}


def test_a_workspace_that_cannot_be_read_refuses_the_search(built, ws, tmp_path, capsys):
    idx = _on(built, ws)
    idx.save(tmp_path / "index")
    ws.rename(tmp_path / "moved")
    with pytest.raises(ResourceError, match="cannot be read"):
        _anna(idx, "выгрузка")
    rc = main(["history", "выгрузка", "--index", str(tmp_path / "index"), "--caller", "u-anna", "--space", "acme"])
    err = capsys.readouterr()
    assert rc == 2 and not err.out and len(err.err.strip().splitlines()) == 1 and "cannot be read" in err.err
    assert "Traceback" not in err.err


def test_an_index_that_does_not_name_its_workspace_refuses_the_search(built, ws, tmp_path):
    _on(built, ws).save(tmp_path / "index")
    meta = current_dir(tmp_path / "index") / "workspace.json"
    data = json.loads(meta.read_text(encoding="utf-8"))
    assert data["workspace"] == str(ws.absolute())
    del data["workspace"]
    meta.write_text(json.dumps(data), encoding="utf-8")
    idx = HistoryIndex.load(tmp_path / "index", CFG, cache=EmbeddingCache(None))
    with pytest.raises(ResourceError, match="Rebuild it"):
        _anna(idx, "выгрузка")


def test_a_space_whose_settings_cannot_be_read_is_skipped_in_doubt(built, ws):
    idx = _on(built, ws)
    (ws / "research" / ".space" / "space.json").write_text("{broken", encoding="utf-8")
    ans = _anna(idx, "満月", spaces="all", lang="en")
    assert "research" not in ans.searched and all(c.hit.record.space != "research" for c in ans.cards)
    assert ("research", ACCESS_UNKNOWN) in ans.skipped
    assert message("en", ACCESS_UNKNOWN, slug="research") in ans.text.splitlines()[0]
    # someone who was not a member is told only what a missing space tells: not a member
    boris = idx.search("満月", caller="u-boris", container="personal", space="acme", spaces=["research"])
    assert ("research", "not_member") in boris.skipped and not any(c.hit.record.space == "research" for c in boris.cards)


def test_a_list_of_spaces_searches_the_current_space_too(built, ws):
    idx = _on(built, ws)
    ans = _anna(idx, "выгрузка отчёта", space="acme", spaces=["research"])
    assert ans.searched == ("acme", "research")
    assert any(c.hit.record.space == "acme" for c in ans.cards)
    assert ans.text.splitlines()[0].startswith(message("ru", "searched", spaces="acme, research"))


# -- `searchkit search --index` over a history index (issue 27 item 3) ----------------------------

@pytest.fixture()
def history_index(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    out = tmp_path / "h.index"
    assert main(["index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet"]) == 0
    return out


def _boris_session(hit):
    return hit["ref"] == "chat:ses_b3d0" or hit["ref"] == "digest:t_b3d0_01"


def test_raw_search_of_a_history_index_needs_a_caller(history_index, capsys):
    capsys.readouterr()
    rc = main(["search", "--index", str(history_index), "salary review"])
    err = capsys.readouterr()
    assert rc == 2 and not err.out and len(err.err.strip().splitlines()) == 1
    assert "--caller" in err.err and "history" in err.err


def test_raw_search_of_a_history_index_keeps_to_the_callers_scope(history_index, capsys):
    capsys.readouterr()
    for who, sees in (("u-anna", False), ("u-boris", True)):
        assert main(["search", "--index", str(history_index), "salary review", "--caller", who, "--space", "acme",
                     "--k", "50", "--json"]) == 0
        hits = json.loads(capsys.readouterr().out)["hits"]
        assert hits and all(h["space"] == "acme" for h in hits)
        assert any(_boris_session(h) for h in hits) == sees
    assert main(["search", "--index", str(history_index), "salary review", "--container", "shared",
                 "--space", "acme", "--k", "50", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    personal = {"chat:ses_b3d0", "digest:t_b3d0_01", "chat:ses_7c19", "chat:ses_sch1"}
    assert hits and not personal & {h["ref"] for h in hits} and all(h["space"] == "acme" for h in hits)
    # spaces the caller is not in are skipped and named, as `history` does
    assert main(["search", "--index", str(history_index), "NDA Globex", "--caller", "u-anna", "--space", "acme",
                 "--spaces", "legal"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == message("en", "searched", spaces="acme") + " " + message(
        "en", "skipped", items=message("en", "not_member", slug="legal"))
    assert all(" legal/" not in line for line in out[1:])


def test_raw_search_scores_ignore_what_the_caller_may_not_see(history_index, ws, tmp_path, capsys):
    """BM25's statistics are the caller's scope's: an index without Boris's personal chat gives
    Anna the very same ranking and scores."""
    capsys.readouterr()
    args = ["salary review премия", "--caller", "u-anna", "--space", "acme", "--k", "50", "--json"]
    assert main(["search", "--index", str(history_index), *args]) == 0
    with_boris = json.loads(capsys.readouterr().out)["hits"]
    other = tmp_path / "ws2"
    shutil.copytree(ws, other)
    (other / "acme" / ".space" / "chats" / "ses_b3d0.json").unlink()
    (other / "acme" / ".space" / "digests" / "t_b3d0_01.json").unlink()
    assert main(["index", "--workspace", str(other), "--out", str(tmp_path / "i2"), "--config", str(HASHING),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "--index", str(tmp_path / "i2"), *args]) == 0
    without = json.loads(capsys.readouterr().out)["hits"]
    assert with_boris and [(h["id"], round(h["score"], 9)) for h in with_boris] == \
        [(h["id"], round(h["score"], 9)) for h in without]


def test_raw_search_of_a_dataset_index_is_as_before_and_refuses_caller_flags(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    idx = tmp_path / "mini.index"
    assert main(["index", "--dataset", "mini", "--out", str(idx), "--config", str(HASHING), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "--index", str(idx), "отчёт", "--k", "3"]) == 0
    assert capsys.readouterr().out.count("\n") >= 1
    assert main(["search", "--index", str(idx), "отчёт", "--caller", "u-anna"]) == 2
    err = capsys.readouterr().err
    assert "--caller" in err and "dataset index" in err and len(err.strip().splitlines()) == 1


def test_a_chat_edited_in_place_is_seen_by_the_very_next_search(built, ws):
    """The chats' access is cached by each file's lstat signature (issue 30 item 9: a search reads
    a few thousand chat files), never by the folder's: a file rewritten in place, to the same size,
    the folder's listing unchanged, is read again at the next search, each time."""
    idx = _on(built, ws)
    query = "выгрузка отчёта кодировка CSV export last row"
    path = ws / "acme" / ".space" / "chats" / "ses_4f2a.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    size = len(json.dumps({**data, "owner": "u-boris", "visibility": "personal"}, ensure_ascii=False).encode())

    def write(**changes):
        raw = json.dumps({**data, **changes}, ensure_ascii=False).encode()
        with open(path, "r+b") as fh:  # in place: same inode, same folder listing
            fh.write(raw.ljust(size))
            fh.truncate(size)

    for visibility in ("personal", "shared", "personal", "shared"):
        write(owner="u-boris", visibility=visibility)
        seen = {_session_of(c) for c in _anna(idx, query, limit=10, kinds=["chat", "digest"]).cards}
        assert ("ses_4f2a" in seen) == (visibility == "shared"), visibility


def test_all_spaces_says_why_the_current_space_was_not_searched(built, ws):
    """Issue 28 item 2: "all" from a space the caller has left since the build names it as skipped
    (the header says why), as a search of that space alone does."""
    _edit_space(ws, "acme", members=["u-boris"])
    ans = _anna(_on(built, ws), "выгрузка отчёта", spaces="all", space="acme")
    assert "acme" not in ans.searched and all(c.hit.record.space != "acme" for c in ans.cards)
    assert ("acme", "not_member") in ans.skipped
    assert message("ru", "not_member", slug="acme") in ans.text.splitlines()[0]
    _edit_space(ws, "acme", members=["u-anna", "u-boris"], history_search=False)
    off = _anna(_on(built, ws), "выгрузка отчёта", spaces="all", space="acme")
    assert off.skipped.count(("acme", "history_search_off")) == 1
