"""The open-loop load of ``bench_serve.py`` (issue 41 item 9): calls arrive at a fixed rate whatever
the server does, and each call's latency runs from its *scheduled* send time.

A closed loop (N clients, each sending its next call when the last one answers) slows its own
arrivals down when the server slows: the queue it measures never grows, and a server that lets
calls wait without bound looks fine. Here arrival ``i`` is scheduled at ``i / rate`` seconds
(``uniform``) or at the sums of seeded exponential gaps (``poisson``), sent then in its own task
(no pool waits in front of it: the HTTP client's connection limit is far above what a window
sends), and timed from its scheduled time to its answer: time spent behind a late client counts,
as it would for a real caller. ``lag_ms`` reports how late the client itself sent (its own share);
a window whose p95 lag is over ``CLIENT_LAG_OK_MS`` is flagged ``client_kept_up: false`` (one
Python client sends about 100 calls/s per core: beyond that it measures itself).

Each answer is classified apart: ``ok`` (an answer), ``refused`` (a tool error naming ``ref``: a
chat or row the caller may not read, which the mix asks for on purpose), ``busy`` (the server's
queue was full: HTTP 503 / the MCP tool error), ``unavailable``, ``bad_parameter`` (a bench bug),
``error`` (anything else: a transport failure, a 5xx, a JSON-RPC error). Throughput and latency
percentiles are of ``ok`` answers only; the others are counted, never as throughput.

Calls go alternately to the JSON API (``POST /api/tools/NAME``) and to MCP (``POST /mcp``, a
JSON-RPC ``tools/call`` in the SDK's stateless streamable-HTTP transport), each with the bearer
token of the next caller in turn. The window runs ``seconds``; when no answer has yet come from a
version newer than the first answer's, it goes on (the same arrivals) until one has and
``after_swap`` seconds more, so a refresh's swap happens inside the measured window (at most
``swap_wait`` seconds more).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

OUTCOMES = ("ok", "refused", "busy", "unavailable", "bad_parameter", "error")
TARGET_P95_MS = 250.0
CLIENT_LAG_OK_MS = 50.0
"""A window whose client sent its calls later than this (p95) measured the client too: flagged."""


@dataclass
class Answer:
    tool: str
    transport: str
    at: float
    """Scheduled send time, seconds from the window's start."""
    ms: float
    """From the scheduled send time to the answer."""
    lag_ms: float
    """How late the client sent it."""
    outcome: str
    version: int | None = None
    data: Any = None
    error: str = ""


def arrivals(rate: float, kind: str, seed: int) -> Iterator[float]:
    """Send times (seconds from the start) of an arrival process of ``rate`` calls a second."""
    if rate <= 0:
        raise ValueError("rate must be positive")
    if kind == "uniform":
        i = 0
        while True:
            yield i / rate
            i += 1
    rng = np.random.default_rng([seed, 11])
    t = 0.0
    while True:
        yield t
        t += float(rng.exponential(1.0 / rate))


def classify_json(status: int, body: Any) -> tuple[str, int | None, Any, str]:
    """(outcome, index version, answer, error text) of a JSON API answer."""
    body = body if isinstance(body, dict) else {}
    version = body.get("index_version")
    if status == 200:
        return "ok", version, body.get("answer"), ""
    err = body.get("error") or {}
    return _error_outcome(status, err), version, None, f"{status} {json.dumps(err, ensure_ascii=False)[:160]}"


def classify_mcp(status: int, body: Any) -> tuple[str, int | None, Any, str]:
    """(outcome, index version, structured answer, error text) of an MCP ``tools/call`` answer."""
    if status != 200 or not isinstance(body, dict):
        return "error", None, None, f"HTTP {status}"
    if "error" in body:
        return "error", None, None, f"JSON-RPC {json.dumps(body['error'], ensure_ascii=False)[:160]}"
    result = body.get("result") or {}
    data = result.get("structuredContent") or {}
    version = data.get("index_version") if isinstance(data, dict) else None
    if not result.get("isError"):
        return "ok", version, data, ""
    err = (data.get("error") or {}) if isinstance(data, dict) else {}
    return _error_outcome(None, err), version, None, json.dumps(err, ensure_ascii=False)[:160]


def _error_outcome(status: int | None, err: dict[str, Any]) -> str:
    kind = err.get("status")
    if kind == "bad_parameter":
        return "refused" if err.get("param") == "ref" else "bad_parameter"
    if kind in ("busy", "unavailable"):
        return kind
    if status == 503:
        return "busy"
    return "error"


class Window:
    """When the window ends: ``seconds``, or later until an answer came from a newer version than
    the first answer's and ``after_swap`` more seconds passed (at most ``swap_wait`` more)."""

    def __init__(self, seconds: float, after_swap: float, swap_wait: float) -> None:
        self.seconds, self.after_swap, self.swap_wait = seconds, after_swap, swap_wait
        self.first: int | None = None
        self.swap_at: float | None = None

    def saw(self, version: int | None, at: float) -> None:
        if version is None:
            return
        if self.first is None:
            self.first = version
        elif version > self.first and (self.swap_at is None or at < self.swap_at):
            self.swap_at = at

    def end(self) -> float:
        if self.swap_at is None:
            return self.seconds + self.swap_wait
        return min(max(self.seconds, self.swap_at + self.after_swap), self.seconds + self.swap_wait)


async def run_window(url: str, tokens: list[str], next_call: Callable[[int], tuple[str, dict[str, Any]]], rate: float,
                     window: Window, *, kind: str = "uniform", seed: int = 0,
                     on_answer: Callable[[Answer], None] | None = None) -> list[Answer]:
    """Send calls at ``rate`` for the ``window`` (see the module's docstring); the answers."""
    import anyio
    import httpx

    answers: list[Answer] = []
    # an idle connection is dropped before the server's keep-alive (uvicorn: 5 s) can close it under a send
    limits = httpx.Limits(max_connections=4096, max_keepalive_connections=256, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        t0 = time.perf_counter()

        async def one(i: int, at: float) -> None:
            name, args = next_call(i)
            token = tokens[i % len(tokens)]
            transport = "mcp" if i % 2 else "json"
            sent = time.perf_counter()
            try:
                if transport == "json":
                    r = await client.post(f"/api/tools/{name}", json=args, headers={"Authorization": f"Bearer {token}"})
                    outcome, version, data, error = classify_json(r.status_code, _json(r))
                else:
                    r = await client.post("/mcp", json={"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                                        "params": {"name": name, "arguments": args}},
                                          headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                                                   "Accept": "application/json, text/event-stream"})
                    outcome, version, data, error = classify_mcp(r.status_code, _json(r))
            except Exception as exc:  # a transport failure is an error answer
                outcome, version, data, error = "error", None, None, f"{type(exc).__name__}: {exc}"[:200]
            done = time.perf_counter()
            a = Answer(name, transport, at, (done - t0 - at) * 1000, (sent - t0 - at) * 1000, outcome, version, data, error)
            window.saw(version, at)
            answers.append(a)
            if on_answer is not None:
                on_answer(a)

        async with anyio.create_task_group() as tg:
            for i, at in enumerate(arrivals(rate, kind, seed)):
                if at >= window.end():
                    break
                delay = t0 + at - time.perf_counter()
                if delay > 0:
                    await anyio.sleep(delay)
                tg.start_soon(one, i, at)
    return answers


def _json(r: Any) -> Any:
    try:
        return r.json()
    except ValueError:
        return None


def percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else math.nan


def summarize(answers: list[Answer], rate: float, seconds: float) -> dict[str, Any]:
    """The figures of one window: offered and answered rates, outcomes apart, latency of ``ok``
    answers per tool (p50/p95/p99, from the scheduled send time), the client's own lag."""
    counts = {k: sum(a.outcome == k for a in answers) for k in OUTCOMES}
    tools: dict[str, Any] = {}
    for name in sorted({a.tool for a in answers}):
        mine = [a for a in answers if a.tool == name]
        ok = [a.ms for a in mine if a.outcome == "ok"]
        tools[name] = {"calls": len(mine), "ok": len(ok), **{k: sum(a.outcome == k for a in mine) for k in OUTCOMES[1:]},
                       "p50_ms": _r(percentile(ok, 50)), "p95_ms": _r(percentile(ok, 95)), "p99_ms": _r(percentile(ok, 99))}
    busy = [a.ms for a in answers if a.outcome == "busy"]
    versions = sorted({a.version for a in answers if a.version is not None})
    return {
        "offered_per_s": rate, "seconds": round(seconds, 1), "calls": len(answers),
        "ok_per_s": round(counts["ok"] / seconds, 2) if seconds > 0 else math.nan, "outcomes": counts,
        "error_examples": [a.error for a in answers if a.outcome in ("error", "bad_parameter", "unavailable")][:5],
        "tools": tools, "busy_p95_ms": _r(percentile(busy, 95)),
        "client_lag_p95_ms": _r(lag95 := percentile([a.lag_ms for a in answers], 95)),
        "client_kept_up": bool(lag95 <= CLIENT_LAG_OK_MS) if not math.isnan(lag95) else None,
        "versions": versions,
    }


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 1)


def crossing(points: list[tuple[float, float | None]], target: float = TARGET_P95_MS) -> dict[str, Any]:
    """The offered rate at which p95 crosses ``target``: interpolated linearly between the last rate
    at or under it and the first over it (``points``: (rate, p95) in increasing rate; a None p95, no
    ok answer at all, counts as over)."""
    points = sorted(points)
    prev = None
    for rate, p95 in points:
        over = p95 is None or p95 > target
        if over:
            if prev is None:
                return {"rate": None, "note": f"p95 over {target:g} ms already at the lowest rate, {rate:g}/s"}
            r0, p0 = prev
            if p95 is None:
                return {"rate": None, "between": [r0, rate], "note": f"between {r0:g}/s and {rate:g}/s (no ok answer at {rate:g}/s)"}
            est = r0 + (target - p0) * (rate - r0) / (p95 - p0)
            return {"rate": round(est, 1), "between": [r0, rate],
                    "note": f"p95 crosses {target:g} ms at about {est:.1f}/s (interpolated between {r0:g} and {rate:g}/s)"}
        prev = (rate, p95)
    top = points[-1][0] if points else None
    return {"rate": None, "note": f"p95 stays at or under {target:g} ms up to {top:g}/s" if top else "no rates"}
