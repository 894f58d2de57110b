"""The call log (issue 30): one JSON line per tool call, and one per start and refresh.

A call's line holds the tool, a salted hash of who called (``Session.tag``: lines of one caller
link within one run, never to a user id), the outcome (``ok``, the parameter an error named),
the latency, counts (cards, messages, hits, tasks), the config fingerprint and the index version.
Never the query, the arguments or the answer's text, unless the server was started with
``--log-content``. Lines go to the ``searchkit.serve.calls`` logger: to stderr, or to a file made
owner-only (``--log-file``).
"""
from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import secrets
import sys
from pathlib import Path
from typing import Any, Mapping

LOGGER = "searchkit.serve.calls"
COUNTED = ("cards", "messages", "hits", "tasks", "comments", "skipped")
"""Lists of an answer's ``to_dict()`` whose lengths a call's line counts."""


class CallLog:
    """Writes the JSON lines; ``content`` adds the arguments and the answer's text (``--log-content``)."""

    def __init__(self, *, content: bool = False, salt: bytes | None = None) -> None:
        self.content = content
        self.salt = salt if salt is not None else secrets.token_bytes(16)
        self.logger = logging.getLogger(LOGGER)

    def write(self, event: str, **fields: Any) -> None:
        """One line: the time, the event and ``fields`` (JSON values)."""
        line = {"ts": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"), "event": event, **fields}
        self.logger.info(json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":")))

    def call(self, *, tool: str, who: str, transport: str, ok: bool, latency_ms: float, fingerprint: str,
             version: int | None, counts: Mapping[str, int], error: str | None = None,
             arguments: Any = None, text: str | None = None) -> None:
        """The line of one call; the arguments and the text only with ``content``."""
        extra: dict[str, Any] = {}
        if self.content:
            extra = {"arguments": arguments, "text": text}
        self.write("call", tool=tool, caller=who, transport=transport, ok=ok, error=error,
                   latency_ms=round(latency_ms, 2), counts=dict(counts), fingerprint=fingerprint,
                   index_version=version, **extra)


def counts(answer: Mapping[str, Any]) -> dict[str, int]:
    """The lengths of the lists ``COUNTED`` names in an answer's ``to_dict()``."""
    return {k: len(v) for k, v in answer.items() if k in COUNTED and isinstance(v, list)}


def setup(log_file: str | os.PathLike[str] | None = None) -> logging.Handler:
    """Send the call log's lines, bare, to ``log_file`` (appended; created 0600) or to stderr.
    Returns the handler (the caller may remove it)."""
    if log_file is not None:
        p = Path(log_file)
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.close(fd)
        os.chmod(p, 0o600)  # the log may hold caller hashes, and content with --log-content
        handler: logging.Handler = logging.FileHandler(p, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return handler
