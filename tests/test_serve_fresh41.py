"""How fresh `searchkit serve`'s answers are (issue 41 items 1-3; SPEC H3): an index built earlier
is brought up to date before the first call (it answered with rows deleted since until the first
refresh, a full interval after start); a refresh that finds nothing changed publishes nothing (a new
version and a scope re-warm every interval before); the schedule starts each refresh ahead of the
bound and a refresh starved at idle priority is started again at normal priority once late, so it
finishes under a saturating load (it finished only after the load stopped). Hashing embedder;
every wait bounded; the load processes are killed by the test that starts them."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import ResourceError
from searchkit.index.cache import EmbeddingCache
from searchkit.serve import freshness, startup
from searchkit.serve.freshness import Freshness, Mark, workspace_signature
from searchkit.serve.state import ChildRefresh, Holder, Refresher, Served
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG_DICT = {"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}}
CFG = SearchConfig.from_dict(CFG_DICT)
GONE = "acme/.space/chats/ses_4f2a.json"


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


def _refs(index):
    return {r.ref for r in index.searcher.records}


# ------------------------------------------------------------------------------- the signature


def test_the_signature_sees_every_change_and_nothing_else(ws):
    first = workspace_signature(ws)
    assert first is not None and workspace_signature(ws) == first
    chat = ws / GONE
    st = os.stat(chat)
    data = chat.read_bytes()
    chat.write_bytes(data.replace(b"a", b"b", 1))  # same size, old mtime given back: ctime still moves
    os.utime(chat, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = workspace_signature(ws)
    assert second != first
    (ws / "acme" / "notes" / "x.md").write_text("new", encoding="utf-8")
    third = workspace_signature(ws)
    assert third != second
    (ws / "acme" / "notes" / "x.md").unlink()
    assert workspace_signature(ws) not in (first, second, third)  # the folder's times moved
    os.stat(ws / "users.json")  # reading changes nothing
    (ws / "users.json").read_bytes()
    assert workspace_signature(ws) == workspace_signature(ws)
    assert workspace_signature(ws / "missing") is None and workspace_signature(ws / "users.json") is None


# --------------------------------------------------------------------- item 3: nothing changed


def test_a_refresh_that_finds_nothing_changed_publishes_nothing(ws):
    index = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    holder = Holder(Served(index, 1, "t0"))
    warmed, done = [], []
    fresh = Freshness(60, Mark.now(ws))
    r = Refresher(holder, ws, 60, lambda s, rep, err: done.append((s, err)), before_publish=warmed.append,
                  freshness=fresh)
    before = fresh.mark
    assert r.refresh_now() is None and r.last_outcome == "unchanged_signature"
    assert holder.current.version == 1 and not warmed and fresh.mark.mono > before.mono  # confirmed fresh
    chat = ws / GONE
    os.utime(chat)  # touched, not changed: read, the same records, still nothing published
    assert r.refresh_now() is None and r.last_outcome == "unchanged"
    assert holder.current.version == 1 and holder.current.index is index and not warmed
    chat.unlink()
    new = r.refresh_now()
    assert new is holder.current and new.version == 2 and warmed == [new] and r.last_outcome == "published"
    assert "chat:ses_4f2a" not in _refs(new.index)
    assert [err for _, err in done] == [None, None, None]


def test_the_refresh_child_saves_nothing_when_nothing_changed(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg_file = tmp_path / "cfg.json"
    cfg_file.write_text(json.dumps(CFG_DICT), encoding="utf-8")
    served = Served(HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None)), 1, "t0")
    store = tmp_path / "state" / "index"
    refresh = ChildRefresh(store, ws, cfg_file, CFG, timeout=300)
    refresh.seed(served)
    versions = sorted(p.name for p in store.iterdir() if p.name.startswith("v"))
    new, line = refresh(served, ws)
    assert new is None and line.startswith("unchanged: ")
    assert sorted(p.name for p in store.iterdir() if p.name.startswith("v")) == versions
    (ws / GONE).unlink()
    new, line = refresh(served, ws)
    assert new is not None and new.version == 2 and "chat:ses_4f2a" not in _refs(new.index)


# ------------------------------------------------------------------- item 1: fresh at start


def test_an_index_built_earlier_is_brought_up_to_date_before_the_first_call(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    folder = tmp_path / "index"
    HistoryIndex.build(ws, CFG).save(folder)
    saved = startup.saved_at(folder)
    opened = startup.open_index(CFG, workspace=None, index=folder)  # nothing changed since the build
    assert opened.outcome == "unchanged" and opened.served.built_at == saved and opened.mark is not None
    assert "chat:ses_4f2a" in _refs(opened.served.index)
    (ws / GONE).unlink()  # deleted after the index was built
    t0 = time.time()
    opened = startup.open_index(CFG, workspace=None, index=folder)
    assert opened.outcome == "updated" and opened.served.version == 1
    assert "chat:ses_4f2a" not in _refs(opened.served.index)  # before any call is answered
    assert opened.mark.wall >= t0 - 1 and opened.served.built_at >= saved
    shutil.rmtree(ws)
    opened = startup.open_index(CFG, workspace=None, index=folder)  # cannot be read: served, not fresh
    assert opened.outcome == "not_refreshed" and opened.mark is None


# ------------------------------------------------------------------------- item 2: the schedule


def test_the_schedule_starts_ahead_of_the_bound_and_late_is_halfway():
    mark = Mark(wall=1000.0, mono=500.0, signature="s")
    f = Freshness(1800, mark)
    assert freshness.lead(1800, 16) == 64 and freshness.lead(1800, 1) == freshness.LEAD_MIN_S
    assert freshness.lead(20, 16) == 10 and freshness.lead(1, 0.1) == 0.5
    start = freshness.next_start(f, 16, 0.0, now=600.0)
    assert start == 500 + 1800 - 64
    assert freshness.late_at(f, start) == start + 32  # halfway to the deadline: normal priority then
    assert freshness.late_at(f, 500 + 1800 - 4) == 500 + 1800 - 4  # under IDLE_MIN_S left: normal at once
    assert freshness.next_start(f, 16, 2400.0, now=600.0) == 2400.0  # a failure's retry waits
    assert freshness.next_start(Freshness(60), 1, 0.0, now=7.0) == 7.0  # never fresh: now
    assert not f.stale(now=500 + 1800) and f.stale(now=500 + 1800 * freshness.STALE_FACTOR + 1)
    assert Freshness(60).stale()


def _busy(n):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(n)]


@pytest.mark.slow  # saturates every core for about half a minute
@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_a_late_refresh_gets_the_cpu_and_finishes_under_a_saturating_load(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg_file = tmp_path / "cfg.json"
    cfg_file.write_text(json.dumps(CFG_DICT), encoding="utf-8")
    served = Served(HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None)), 1, "t0")
    refresh = ChildRefresh(tmp_path / "state" / "index", ws, cfg_file, CFG, timeout=12)
    refresh.seed(served)
    (ws / GONE).unlink()
    load = _busy(len(os.sched_getaffinity(0)) + 1)
    try:
        time.sleep(0.5)
        with pytest.raises(ResourceError, match="took over"):  # the control: idle throughout, it starves
            refresh(served, ws)
        assert refresh.last_priority == "idle"
        refresh.timeout = 150
        t0 = time.monotonic()
        new, _ = refresh(served, ws, late_at=time.monotonic() + 3)
        took = time.monotonic() - t0
        assert all(p.poll() is None for p in load)  # finished while the load still ran
    finally:
        for p in load:
            p.kill()
            p.wait(10)
    assert refresh.last_priority == "idle>normal" and refresh.late_restarts == 1
    assert new is not None and "chat:ses_4f2a" not in _refs(new.index) and took < 150
