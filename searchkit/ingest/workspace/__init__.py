"""Load a workspace folder (the format of WORKSPACE.md) into Records of the seven kinds (SPEC H1).

One loader per kind; ``policy`` decides what is never indexed (H2). Bad input is reported in the
``IndexingReport`` and the load goes on: nothing else is lost. In particular:

- nothing is read through a symbolic link, and no path is read that resolves outside its own
  space folder (``symlink``); anything that is not a regular file (a FIFO, a socket, a device) is
  never opened (``special_file``), so a load cannot hang;
- every item is capped (``too_large``, ``Policy.max_*``; ``sources.jsonl`` is read line by line)
  and any error reading one item becomes a skip of that item (``load_error``, ``bad_json``,
  ``bad_text``, ...), never a failed build; a folder nested deeper than ``Policy.max_depth`` is
  skipped alone (``too_deep``), the walk goes on beside it;
- an id that names something in a ref (a chat's ``ses_id``, a digest's ``turn_id`` and
  ``ses_id``, a source's or page's ``uuid``, a table name, a row id) must be a plain token
  (``plain_id``), else the item is skipped (``bad_id``): no ``../../etc/passwd`` reaches a ref;
- what could not be read (``unreadable``, ``load_error``, ``bad_sqlite``) is a ``Doubt``: an
  update keeps the previous index's records of that part (``carry_over``), never drops them;
- an id claimed by two items is a skip for both (``duplicate_id``), never a winner: a shared chat
  cannot take over the digests of someone's personal chat by claiming its ``ses_id``;
- a file with more than one hard link is never read (``hard_link``): it may be another space's
  chat or file linked in, and privacy comes first;
- secrets never reach the index: key material is skipped whole (``secret_content``), and every
  indexed text (files, log days, chats, digests, pages, sources, table cells) is redacted
  (``Policy.redact_secrets``; noted ``redacted``, never the value);
- nothing is written into the workspace: ``app.sqlite`` is opened ``immutable``, or, when a
  ``-wal`` / ``-journal`` lies beside it, a private temporary copy is read.

The package: ``model`` (what a load yields), ``collect`` (the collector and its report), ``reading``
(safe reads), one module of loaders per kind (``chats``: chats and digests; ``files``: files and
``log.md``; ``sources``: sources and pages; ``app``: app tables) and ``loader`` (``load_workspace``,
``carry_over``); the names below are its public face.
"""
from __future__ import annotations

from searchkit.ingest.workspace.files import LOG_HEADING
from searchkit.ingest.workspace.loader import carry_over, load_workspace
from searchkit.ingest.workspace.model import (
    DETAIL_CHARS, DIGEST_PARTS, DOUBT_RULES, ID_CHARS, RUNS, TITLE_CHARS, Doubt, SpaceInfo, WorkspaceLoad, plain_id,
    source_path,
)

# private names searchkit.tools.access reads a space's settings and chats with, importable from here as before
from searchkit.ingest.workspace.chats import _chat_problem  # noqa: F401
from searchkit.ingest.workspace.collect import _Collector, _Space, _utf8  # noqa: F401
from searchkit.ingest.workspace.loader import _space_problem  # noqa: F401
from searchkit.ingest.workspace.reading import _MISSING, _as_text, _lkind, _read_json, _str  # noqa: F401

__all__ = [
    "DETAIL_CHARS", "DIGEST_PARTS", "DOUBT_RULES", "ID_CHARS", "LOG_HEADING", "RUNS", "TITLE_CHARS", "Doubt",
    "SpaceInfo", "WorkspaceLoad", "carry_over", "load_workspace", "plain_id", "source_path",
]
