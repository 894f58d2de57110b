"""Driving the server's ASGI app in process (tests of serve/): its lifespan run, an httpx client on it,
every call bounded in time. Shared by test_serve_transport41 and test_toy_tool_served."""
from __future__ import annotations

from typing import Any, Awaitable, Callable

import anyio
import httpx

BASE = "http://127.0.0.1:8765"
LIMIT_S = 60


def run_bounded(fn: Callable[[], Awaitable[Any]], limit_s: float = LIMIT_S) -> Any:
    """``fn()`` run on a fresh event loop, failing after ``limit_s`` seconds."""
    async def bounded() -> Any:
        with anyio.fail_after(limit_s):
            return await fn()
    return anyio.run(bounded)


async def serving(app: Any, fn: Callable[[httpx.AsyncClient], Awaitable[Any]], base: str = BASE) -> Any:
    """``fn(client)`` with the app's lifespan running (the MCP session manager)."""
    starlette = app.app
    async with starlette.router.lifespan_context(starlette):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base) as client:
            return await fn(client)
