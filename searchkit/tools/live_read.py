"""A card's source read as the workspace has it now (issue 39 item 11; seed 000: «берите цифры из
таблицы, а не из карточки»): what ``app_row`` and ``chat_read`` show.

The index's copy of a row or a chat says what it held when it was indexed; the answer reads the
row from the space's ``app.sqlite``, the chat from its file, now, through ingest's own guards and
checks (``ingest.workspace.app.read_row``, ``ingest.workspace.chats.read_chat``: the same
never-index rules, secret-like columns never fetched, the same redaction), and says how that
compares with the copy the card came from (``freshness``):

- ``live``: read now, as indexed;
- ``changed``: read now, changed since it was indexed (what is shown is the source now);
- ``gone``: the row is no longer in the table (nothing of it is shown);
- ``withheld``: the never-index rules leave the row's table out now (nothing of it is shown);
- ``as_indexed``: the source could not be read now (the database cannot be opened, the index does
  not say where its workspace is, a chat too large to index now): the index's copy is shown and
  the answer says it may be out of date. No reason that names a path or an error is shown.

A chat that is gone, in doubt, or no longer the caller's to read when it is read answers exactly
like a chat that does not exist (``Opened.refused``): a deleted chat leaves search with it (seed
000), and a chat whose file cannot be read is hidden (H15), as history search does.

Redacting a long chat costs what ingest pays for it (seconds for a few hundred thousand
characters), so a chat read from the file the index read it from is kept per index (the last
``CHAT_MEMO`` of them) under that file's ``lstat`` signature, and read again whenever the file
changes (as ``tools.access.WorkspaceAccess`` re-reads who may see what). Who may read it is
checked against the kept owner and visibility at every call.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from searchkit.ingest.policy import DEFAULT_POLICY
from searchkit.ingest.workspace.app import read_row
from searchkit.ingest.workspace.chats import LiveChat, chat_files, read_chat
from searchkit.ingest.workspace.collect import _Collector, _Space, live_collector
from searchkit.ingest.workspace.verdicts import known_secrets
from searchkit.records import Record
from searchkit.tools.access import ChatAccess, _signature, _space_dir
from searchkit.tools.opening import Opened

T = TypeVar("T")

LIVE = "live"
CHANGED = "changed"
GONE = "gone"
WITHHELD = "withheld"
AS_INDEXED = "as_indexed"
FRESHNESS: tuple[str, ...] = (LIVE, CHANGED, GONE, WITHHELD, AS_INDEXED)
CHAT_MEMO = 16
"""Chats kept read per index (``live_chat``)."""

_memo_lock = threading.Lock()
_memos: "weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, str, tuple[int, ...]], LiveChat]]" = (
    weakref.WeakKeyDictionary())


@dataclass(frozen=True)
class Fresh:
    """What an answer shows: ``record`` (the source now, the index's copy when ``as_indexed``, or
    None when nothing is shown) and how it compares with the index's copy (``freshness``)."""

    freshness: str
    record: Record | None


def redact_as_ingest(index: object, space: str, read: Callable[[_Collector], T]) -> T:
    """Run ``read`` -- ingest's own reader of one row or one chat -- on the collector ingest
    redacts through, and return what it read: the record it makes is capped and redacted exactly
    as ingest does for a row (``_sniff_cells`` on each cell, then ``_Collector.add`` on the card)
    or a chat (``_Collector.add`` on its text and title), under ``DEFAULT_POLICY``.

    This is the one place a live read is redacted, and it redacts as ingest's workspace-wide pass
    does (issue 39 item 4a): a value redacted once in the record's scope (its space's shared
    records, or a personal chat owner's own records) is redacted here too, read from the salted
    digests the index keeps (``known_secrets``); the record's space, owner and visibility choose
    the scopes, so ``space`` is not needed."""
    del space
    return read(live_collector(known_secrets(index), DEFAULT_POLICY))


def _folder(index: object, space: str) -> _Space | None:
    root = getattr(index, "workspace", None)
    return None if root is None else _space_dir(Path(root), space)


def _same(now: Record, indexed: Record) -> bool:
    return now.text == indexed.text and now.title == indexed.title


def live_row(index: object, opened: Opened) -> Fresh:
    """The row of ``opened`` (an ``app:TABLE#ID`` record the caller may read) as its table has it now."""
    indexed = opened.record
    sp = _folder(index, opened.space)
    if sp is None:
        return Fresh(AS_INDEXED, indexed)
    table, _, row_id = indexed.ref[len("app:"):].rpartition("#")
    now = redact_as_ingest(index, opened.space, lambda out: read_row(sp, table, row_id, out))
    if now.state == "found" and now.record is not None:
        return Fresh(LIVE if _same(now.record, indexed) else CHANGED, now.record)
    if now.state == "gone":
        return Fresh(GONE, None)
    if now.state == "refused":
        return Fresh(WITHHELD, None)
    return Fresh(AS_INDEXED, indexed)


def live_chat(index: object, opened: Opened) -> Fresh:
    """The chat of ``opened`` (a ``chat:SES_ID`` record the caller may read) as its file has it
    now; raises ``opened.refused()`` when it is gone, in doubt, or no longer the caller's to read."""
    indexed = opened.record
    sp = _folder(index, opened.space)
    if sp is None:
        return Fresh(AS_INDEXED, indexed)
    ses_id = indexed.ref[len("chat:"):]
    now = _chat_now(index, opened.space, sp, ses_id, indexed.fields.get("source_path"))
    if now.state != "found" or not ChatAccess(now.owner, now.visibility).allows(opened.who):
        raise opened.refused()
    if now.record is None:
        return Fresh(AS_INDEXED, indexed)
    return Fresh(LIVE if _same(now.record, indexed) else CHANGED, now.record)


def _chat_now(index: object, space: str, sp: _Space, ses_id: str, source_path: object) -> LiveChat:
    """``read_chat`` through the redaction seam, or what it gave for the same file unchanged."""
    path = chat_files(sp, ses_id, source_path)[0]
    sig = _signature(str(path))
    key = (space, ses_id, sig)
    try:
        with _memo_lock:
            memo = _memos.setdefault(index, OrderedDict())
            hit = memo.get(key) if sig else None
            if hit is not None:
                memo.move_to_end(key)
    except TypeError:  # an index that cannot be weakly referenced: nothing is kept
        memo, hit = None, None
    if hit is not None and hit.path == path:
        return hit
    now = redact_as_ingest(index, space, lambda out: read_chat(sp, ses_id, source_path, out))
    if memo is not None and sig and now.state == "found" and now.path == path and _signature(str(path)) == sig:
        with _memo_lock:  # the file did not change while it was read
            memo[key] = now
            while len(memo) > CHAT_MEMO:
                memo.popitem(last=False)
    return now
