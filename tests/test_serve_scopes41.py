"""Issue 41 item 9: a new version served after a refresh reads who may see what through the
previous version's access source (what it parsed of the workspace carries over, each file still
re-checked at every search), so the new version's first calls do not read every chat file again;
and what a caller may see is still read live (H14, H15)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.serve.state import ChildRefresh, Served, refreshed
from searchkit.tools.access import WorkspaceAccess
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG_DICT = {"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}}
CFG = SearchConfig.from_dict(CFG_DICT)
CHAT = "acme/.space/chats/ses_4f2a.json"  # u-anna's, shared
OTHER = "acme/.space/chats/ses_7c19.json"


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


def _boris_sees_the_chat(index: HistoryIndex) -> bool:
    answer = index.search("выгрузка отчёта", kinds=["chat"], caller="u-boris", container="personal", space="acme")
    return "chat:ses_4f2a" in {c.hit.record.ref for c in answer.cards}


def _make_personal(ws: Path) -> None:
    path = ws / CHAT
    data = json.loads(path.read_text(encoding="utf-8"))
    data["visibility"] = "personal"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _touch_other(ws: Path) -> None:
    path = ws / OTHER
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = str(data.get("title", "")) + " (renamed)"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_a_new_version_from_the_refresh_child_shares_the_access_source(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg_file = tmp_path / "cfg.json"
    cfg_file.write_text(json.dumps(CFG_DICT), encoding="utf-8")
    served = Served(HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None)), 1, "t0")
    assert _boris_sees_the_chat(served.index)  # the old version's source has read the chats
    refresh = ChildRefresh(tmp_path / "state" / "index", ws, cfg_file, CFG, timeout=300)
    refresh.seed(served)
    _touch_other(ws)
    new, _line = refresh(served, ws, late_at=0.0)  # late already: normal priority (a busy machine never starves it)
    assert new is not None and new.index.access is served.index.access
    assert isinstance(new.index.access, WorkspaceAccess)
    assert _boris_sees_the_chat(new.index)
    _make_personal(ws)  # anna's chat is hers alone now: the shared source reads it again
    assert not _boris_sees_the_chat(new.index)
    assert not _boris_sees_the_chat(served.index)


def test_an_update_in_the_thread_keeps_the_source_and_reads_changes_live(ws):
    served = Served(HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None)), 1, "t0")
    assert _boris_sees_the_chat(served.index)
    _touch_other(ws)
    new, _line = refreshed(served, ws)
    assert new is not None and new.index.access is served.index.access
    _make_personal(ws)
    assert not _boris_sees_the_chat(new.index)


def test_an_index_of_another_workspace_keeps_its_own_source(ws, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(DEMO, other)
    one = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    two = HistoryIndex.build(other, CFG, cache=EmbeddingCache(None))
    assert not two.share_access(one) and two.access is not one.access
    three = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    assert three.share_access(one) and three.access is one.access


def test_a_new_version_takes_the_line_heads_of_unchanged_records(ws):
    from searchkit.rank import conversation
    from searchkit.tools.history import carry_heads

    old = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    conversation.record_heads(old.searcher)
    path = ws / OTHER
    data = json.loads(path.read_text(encoding="utf-8"))
    data["messages"].append({"role": "user", "text": "Мария Петрова: новая строка\nМария Петрова: ещё одна"})
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    new, _line = refreshed(Served(old, 1, "t0"), ws)
    assert new is not None and new.index.searcher is not old.searcher
    carried = conversation._HEADS.get(new.index.searcher)
    assert carried is not None  # before any search of the new version
    assert carried == [conversation.line_heads(r.text) for r in new.index.searcher.records]
    assert not carry_heads(old.searcher, new.index.searcher)  # once
    loaded = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    loaded.follow(new.index)
    assert loaded.access is new.index.access
    assert conversation._HEADS.get(loaded.searcher) == carried


def test_a_refresh_that_found_nothing_changed_keeps_the_memo_it_learned(ws):
    # an index saved without a memo (or under other secret rules) checks every text at its next
    # refresh; finding nothing changed, the served version keeps the memo of that check, so the
    # refresh after it (and the refresh child's store seeded from it) does not check them again
    index = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    index.memo = None
    served = Served(index, 1, "t0")
    new, line = refreshed(served, ws)
    assert new is None and line.startswith("unchanged: ")
    assert served.index.memo is not None and any(served.index.memo.digests().values())
    again, _line = refreshed(served, ws)
    assert again is None
