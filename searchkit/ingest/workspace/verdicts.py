"""The clean verdicts of the secret checks, kept from one load for the next (issue 30; SPEC H2, H3;
part of ``searchkit.ingest.workspace``).

Reading a workspace is mostly the secret checks (``Policy.secret_content`` on a file, a log day or
a table cell; ``Policy.redact_secrets`` on every indexed text, title and URL): both are functions
of the text alone, for one policy and one version of the rules. ``Verdicts`` asks them through a
memo of the texts a previous load found clean -- no key material, nothing redacted -- named by
their sha256, so a refresh checks only the texts that are new; every other step of the load (the
walk, the reads, the parsing, the ids, the order, the report) runs as before, and what it gives is
exactly what a load without the memo gives.

What is kept (``clean()``, saved with the index version it belongs to) are the sha256 digests of
clean texts of the records that version holds, and (issue 39 item 4, ``known``) the salted digests of
the secret values the load redacted, by scope, for live reads and the next update (never a value:
``searchkit.ingest.redact.known``); nothing else. Of the clean texts: a clean text is what the index
holds already (a record's text, title or URL -- its ``content_hash`` is the same digest -- a table
cell of a row's card, a file or log day as read before its line ends were normalised). A text with
a secret is never named, not even by its digest, and neither is anything that was not indexed, so
what leaves the index (a deleted file, a changed chat) leaves the memo with the version that drops
it (H3); a record the workspace-wide pass changed names none of its texts (a text clean by the rules
may hold a value known from another record). The memo holds for the rules it was made with
(``rules_fingerprint``); any other is ignored.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from searchkit.ingest import policy as _policy_package
from searchkit.ingest import redact as _redact_package
from searchkit.ingest.policy import DEFAULT_POLICY, Policy
from searchkit.ingest.redact.known import KnownSecrets, found_values
from searchkit.util import read_json_file

if TYPE_CHECKING:
    from searchkit.ingest.workspace.model import WorkspaceLoad

SECRET = "secret"
"""The verdict that ``Policy.secret_content`` found no key material in a text."""
REDACT = "redact"
"""The verdict that ``Policy.redact_secrets`` left a text as it was."""
KNOWN = "known"
"""The memo's salted digests of the secret values the load redacted (issue 39 item 4)."""
FORMAT = "searchkit.clean-verdicts"
FORMAT_VERSION = 1
FILE_NAME = "clean_verdicts.json"
"""The memo's file in an index version (``HistoryIndex.save``)."""


def digest(text: str) -> bytes:
    """The sha256 of a text's UTF-8 (a lone surrogate kept as is, so any str has one)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def rules_fingerprint(policy: Policy) -> str:
    """What the verdicts of ``policy`` depend on: its fields and the source of the rules (every
    module of ``searchkit.ingest.redact`` and ``searchkit.ingest.policy``, and the version of
    detect-secrets, whose plugins they run)."""
    h = hashlib.sha256()
    for package in (_redact_package, _policy_package):
        assert package.__file__ is not None  # a regular package, with its __init__.py
        folder = Path(package.__file__).parent
        for path in sorted(folder.glob("*.py")):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(f"detect-secrets {_detector_version()}\0".encode())  # its plugins redact too (issue 39 item 4)
    fields = {f.name: _canon(getattr(policy, f.name)) for f in dataclasses.fields(policy)}
    h.update(json.dumps([type(policy).__qualname__, fields], sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()


def _detector_version() -> str:
    """The installed detect-secrets' version (its plugins are part of the rules), or ``none``."""
    try:
        return importlib.metadata.version("detect-secrets")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _canon(value: object) -> Any:
    """``value`` as plain JSON in one order whatever the hash seed (a set's order is not)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, re.Pattern):
        return ["re", value.pattern if isinstance(value.pattern, str) else repr(value.pattern), value.flags]
    if isinstance(value, Mapping):
        return sorted([json.dumps(_canon(k), sort_keys=True), _canon(v)] for k, v in value.items())
    if isinstance(value, (set, frozenset)):
        return sorted((_canon(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    return repr(value)


class Verdicts:
    """The secret checks of one load, through the memo of a previous one.

    ``known`` maps ``SECRET`` / ``REDACT`` to the digests a previous load found clean (for the same
    rules: ``read_memo``). Each clean text checked now is noted, and goes to the record the load
    adds next (``take``), or is dropped when that item is not added (``drop``); when any check of
    the item found something (key material, a secret redacted: in a cell, or in the card or file
    as a whole, which may join what each piece alone does not show), the item's notes are dropped
    too. So ``of_records`` names only clean texts of records that were indexed whole."""

    def __init__(self, policy: Policy, known: Mapping[str, Iterable[bytes]] | None = None) -> None:
        self.policy = policy
        known = known or {}
        self._known = {kind: frozenset(known.get(kind, ())) for kind in (SECRET, REDACT)}
        self._pending: list[tuple[str, bytes]] = []
        self._found = False  # a check of the item being read found a secret
        self._clean: dict[str, tuple[tuple[str, bytes], ...]] = {}
        self._pending_values: list[str] = []
        self.values: dict[str, list[str]] = {}
        """Record id -> the values the rules redacted in its texts (in memory only: issue 39 item 4,
        the workspace-wide pass of ``searchkit.ingest.redact.known``)."""
        self.checked = 0
        """Texts actually checked by the policy (not answered by the memo)."""

    def secret_content(self, text: str) -> str | None:
        """``Policy.secret_content(text)``."""
        d = digest(text)
        if d in self._known[SECRET]:
            self._pending.append((SECRET, d))
            return None
        self.checked += 1
        found = self.policy.secret_content(text)
        if found is None:
            self._pending.append((SECRET, d))
        else:
            self._found = True
        return found

    def redact_secrets(self, text: str) -> tuple[str, dict[str, int]]:
        """``Policy.redact_secrets(text)``."""
        d = digest(text)
        if d in self._known[REDACT]:
            self._pending.append((REDACT, d))
            return text, {}
        self.checked += 1
        with found_values() as found:
            out, counts = self.policy.redact_secrets(text)
        self._pending_values += [value for rule, value in found if rule != "email"]
        if not counts and out == text:
            self._pending.append((REDACT, d))
        else:
            self._found = True
        return out, counts

    def take(self, record_id: str) -> None:
        """The clean texts noted since the last item are the indexed record ``record_id``'s."""
        if self._pending and not self._found:
            self._clean[record_id] = (*self._clean.get(record_id, ()), *self._pending)
        if self._pending_values:
            self.values.setdefault(record_id, []).extend(self._pending_values)
        self._pending, self._found, self._pending_values = [], False, []

    def pending_values(self) -> list[str]:
        """The values the rules redacted in the item being read so far."""
        return list(self._pending_values)

    def drop(self, record_id: str | None = None) -> None:
        """The item being read is not indexed (skipped, failed, or ``record_id`` contested)."""
        self._pending, self._found, self._pending_values = [], False, []
        if record_id is not None:
            self._clean.pop(record_id, None)
            self.values.pop(record_id, None)

    def unclean(self, record_id: str) -> None:
        """A record changed by the workspace-wide pass: its texts are not named in the memo (a text
        clean by the rules may hold a value known from another record)."""
        self._clean.pop(record_id, None)

    def of_records(self) -> dict[str, tuple[tuple[str, bytes], ...]]:
        """Record id -> the clean verdicts of its texts."""
        return dict(self._clean)


def memo_text(policy: Policy, clean: Mapping[str, Iterable[tuple[str, bytes]]], record_ids: Iterable[str],
              known: KnownSecrets | None = None) -> str:
    """The memo file of an index version holding ``record_ids``: the clean verdicts of those
    records only (sorted: the same records give the same bytes), and ``known``'s salted digests."""
    sets: dict[str, set[bytes]] = {SECRET: set(), REDACT: set()}
    for rid in record_ids:
        for kind, d in clean.get(rid, ()):
            sets[kind].add(d)
    body = {"format": FORMAT, "format_version": FORMAT_VERSION, "rules": rules_fingerprint(policy),
            **{kind: sorted(d.hex() for d in ds) for kind, ds in sets.items()}}
    if known is not None:
        body[KNOWN] = known.to_dict()
    return json.dumps(body, indent=0) + "\n"


def read_memo(data: object, policy: Policy) -> dict[str, frozenset[bytes]]:
    """The digests of a memo file's JSON ``data``, when it is one made under ``policy``'s rules;
    else empty (a memo that does not fit is never an error: the texts are checked again)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
        return {}
    if data.get("rules") != rules_fingerprint(policy):
        return {}
    out: dict[str, frozenset[bytes]] = {}
    for kind in (SECRET, REDACT):
        values = data.get(kind)
        if not isinstance(values, list):
            return {}
        try:
            out[kind] = frozenset(bytes.fromhex(v) for v in values if isinstance(v, str) and len(v) == 64)
        except ValueError:
            return {}
    return out


class Memo:
    """What one version of a history index keeps of the clean verdicts for the next load: those of
    the load that made it (``of``), or the file of a version read from disk (``read``); and the
    salted digests of the secret values that load redacted (``known_secrets``), for live reads."""

    def __init__(self, policy: Policy | None = None, clean: Mapping[str, Any] | None = None, data: object = None,
                 known: KnownSecrets | None = None) -> None:
        self.policy = policy if policy is not None else DEFAULT_POLICY
        self.clean = clean
        self.data = data
        self.known = known

    @classmethod
    def of(cls, load: WorkspaceLoad, policy: Policy | None = None) -> "Memo":
        """The verdicts of ``load`` (a ``WorkspaceLoad`` read under ``policy``), and the salted
        digests of the secret values it redacted (``report.known_secrets``; issue 39 item 4)."""
        known = getattr(load.report, "known_secrets", None)
        return cls(policy, clean=load.clean, known=known if isinstance(known, KnownSecrets) else None)

    def known_secrets(self) -> KnownSecrets | None:
        """The secret values known to this index version, as salted digests (issue 39 item 4: what a
        live read redacts besides the rules, ``collect.live_collector``); None when it has none."""
        if self.known is None and isinstance(self.data, dict):
            self.known = KnownSecrets.from_dict(self.data.get(KNOWN))  # read once, kept
        return self.known

    @classmethod
    def read(cls, version: Path) -> "Memo | None":
        """The memo file of an index version folder; None when it has none or it is unreadable
        (never an error: the next load checks every text)."""
        try:
            data = read_json_file(version / FILE_NAME)
        except (OSError, ValueError, RecursionError):
            return None
        return cls(data=data) if isinstance(data, dict) and data.get("format") == FORMAT else None

    def digests(self, policy: Policy | None = None) -> dict[str, frozenset[bytes]]:
        """The digests of clean texts, for a load under ``policy``: empty when this memo was
        made under other rules."""
        policy = policy if policy is not None else DEFAULT_POLICY
        known = self.known_secrets()
        extra: dict[str, Any] = {KNOWN: known} if known is not None else {}
        if self.clean is None:
            return {**read_memo(self.data, policy), **extra}
        if rules_fingerprint(self.policy) != rules_fingerprint(policy):
            return extra
        return {**{kind: frozenset(d for ds in self.clean.values() for k, d in ds if k == kind)
                   for kind in (SECRET, REDACT)}, **extra}

    def text(self, record_ids: Iterable[str]) -> str:
        """The memo file of an index version holding the records ``record_ids``."""
        if self.clean is None:  # read from the version these records come from, unchanged
            return json.dumps(self.data, indent=0) + "\n"
        return memo_text(self.policy, self.clean, record_ids, self.known)


def known_secrets(index: object) -> KnownSecrets | None:
    """The secret values known to a history index (``HistoryIndex``: its ``memo``), as salted
    digests, or None (issue 39 item 4): what ``collect.live_collector`` takes for a live read."""
    memo = getattr(index, "memo", None)
    return memo.known_secrets() if isinstance(memo, Memo) else None
