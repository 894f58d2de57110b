"""Admission of tool calls (issue 41 item 5): a bounded queue in front of the worker threads.

``--workers`` calls run at once (``anyio.CapacityLimiter``); at most ``--queue`` more wait for a
worker. A call that finds the workers busy and the queue full is refused at once instead of
waiting without bound (an open-loop load beyond capacity grew every wait: p95 15.5 s and rising):
``Service.busy`` answers it (status ``busy``: HTTP 503 with ``Retry-After``, an MCP tool error) and
logs one line. Every transport (stdio, MCP over HTTP, the JSON API) admits its calls here.

The count is read and changed only in the event loop's thread (between awaits), so it needs no lock.
"""
from __future__ import annotations

import anyio

from searchkit.serve.service import Outcome, Service
from searchkit.serve.session import Session

RETRY_AFTER_S = 1
"""What a refused call is told to wait before trying again (seconds; HTTP ``Retry-After``)."""


class Admission:
    """At most ``workers`` calls run and ``queue`` more wait; any further call is refused (busy)."""

    def __init__(self, workers: int, queue: int, retry_after: int = RETRY_AFTER_S) -> None:
        if workers < 1 or queue < 0:
            raise ValueError("workers >= 1 and queue >= 0")
        self.workers, self.queue, self.retry_after = int(workers), int(queue), int(retry_after)
        self.limiter = anyio.CapacityLimiter(self.workers)
        self.inside = 0
        """Calls admitted and not finished: running, or waiting for a worker."""
        self.refused = 0

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    async def call(self, service: Service, name: object, arguments: object, session: Session, transport: str) -> Outcome:
        """``service.call`` in a worker thread, or ``service.busy`` when the queue is full."""
        if self.inside >= self.capacity:
            self.refused += 1
            return service.busy(name, session, transport, self.retry_after)
        self.inside += 1
        try:
            return await anyio.to_thread.run_sync(service.call, name, arguments, session, transport,
                                                  limiter=self.limiter)
        finally:
            self.inside -= 1
