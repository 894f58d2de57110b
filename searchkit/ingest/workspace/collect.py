"""The collector one load fills (SPEC H1, H2; part of ``searchkit.ingest.workspace``): each record
added once (redacted, capped, an id claimed twice refused for both), each skip and note with its rule,
and ``_guard``, which turns any error of one loader into a ``load_error`` skip.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from searchkit.ingest.policy import DEFAULT_POLICY, Policy, Skip
from searchkit.ingest.redact.known import KnownSecrets, scope_of, scopes_for
from searchkit.ingest.workspace.model import DETAIL_CHARS, DOUBT_RULES, Doubt
from searchkit.ingest.workspace.verdicts import Verdicts
from searchkit.records import Record

T = TypeVar("T")



@dataclass(frozen=True)
class _Space:
    slug: str
    folder: Path
    real: str  # the folder's resolved path: nothing outside it is read

    @property
    def meta(self) -> Path:
        return self.folder / ".space"


def _safe(text: str, limit: int | None = None) -> str:
    """Text that can always be encoded (lone surrogates escaped), cut to ``limit`` characters."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _rel(where: str) -> str:
    """The space-relative path of an item's label (``SLUG/.space/chats/x.json`` -> ``.space/chats/x.json``)."""
    return where.partition("/")[2]


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Collector:
    """Mutable accumulator of one load (private; the result is frozen). Its secret checks go
    through ``verdicts`` (``Verdicts``: the clean texts of a previous load, ``memo``).

    A value the rules redact in one record is redacted wherever it appears again in its scope
    (issue 39 item 4; ``searchkit.ingest.redact.known``): in the record itself as it is added, then a
    whole load does it across records once every record is read (``finish``), and a live read of one
    row or chat (``known``: the values of the index it was opened from, ``live_collector``) as that
    record is added: the same steps, so the same text."""

    def __init__(self, policy: Policy, memo: Mapping[str, Any] | None = None,
                 known: KnownSecrets | None = None) -> None:
        self.policy = policy
        self.verdicts = Verdicts(policy, memo)
        self.known = known
        self.records: dict[str, Record] = {}
        self.where: dict[str, str] = {}
        self.contested: set[str] = set()
        self.skips: list[Skip] = []
        self.notes: list[Skip] = []
        self.doubts: list[Doubt] = []
        self.orphans: set[str] = set()

    def skip(self, what: str, rule: str, detail: str = "") -> None:
        self.skips.append(Skip(_safe(what), rule, _safe(detail, DETAIL_CHARS)))
        if rule in DOUBT_RULES:
            doubt = Doubt.of(what)
            if doubt is not None:
                self.doubts.append(doubt)

    def note(self, what: str, rule: str, detail: str = "") -> None:
        self.notes.append(Skip(_safe(what), rule, _safe(detail, DETAIL_CHARS)))

    def add(
        self, *, kind: str, space: str, key: str, ref: str, date: str | None, title: str, text: str,
        where: str, owner: str | None = None, visibility: str = "shared", fields: Mapping[str, Any] | None = None,
    ) -> bool:
        """Add one record; False (and a skip) when it is empty, too large, not Unicode or contested."""
        added = self._add(kind=kind, space=space, key=key, ref=ref, date=date, title=title, text=text, where=where,
                          owner=owner, visibility=visibility, fields=fields)
        if added:
            self.verdicts.take(f"{space}/{kind}:{key}")
        else:
            self.verdicts.drop()
        return added

    def _add(
        self, *, kind: str, space: str, key: str, ref: str, date: str | None, title: str, text: str,
        where: str, owner: str | None, visibility: str, fields: Mapping[str, Any] | None,
    ) -> bool:
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        if not text:
            self.skip(where, "empty", f"{kind} {key!r} has no text")
            return False
        redact = self.verdicts.redact_secrets
        text, counts = redact(text)
        title, title_counts = redact(title) if title else (title, {})
        extra = dict(fields or {})
        if isinstance(extra.get("url"), str):
            extra["url"], url_counts = redact(extra["url"])
        else:
            url_counts = {}
        for more in (title_counts, url_counts):
            for rule, n in more.items():
                counts[rule] = counts.get(rule, 0) + n
        own = self.verdicts.pending_values()
        scopes = scopes_for(space, owner, visibility)
        for known in (_own_values(scope_of(space, owner, visibility), own) if own else None, self.known):
            if known is not None:  # this record's own values, then (a live read) those known to the index
                text, title, extra, n = _redact_known(known, scopes, text, title, extra)
                if n:
                    counts["known_value"] = counts.get("known_value", 0) + n
        if counts:
            self.note(where, "redacted", _redaction_detail(counts))
        cap = self.policy.max_item_chars
        if kind != "file" and len(text) > cap:  # files are capped by max_file_bytes
            self.skip(where, "too_large", f"{kind} text of {len(text)} characters > max_item_chars {cap}")
            return False
        rid = f"{space}/{kind}:{key}"
        if rid in self.contested:
            self.skip(where, "duplicate_id", f"{kind} {key!r} is claimed by more than one item; none is indexed")
            return False
        extra["source_key"] = rid
        try:
            extra["content_hash"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
            record = Record(
                id=rid, kind=kind, space=space, date=date, title=title or key, ref=ref, text=text,
                owner=owner, visibility=visibility, fields=extra,
            )
            json.dumps(record.to_dict(), ensure_ascii=False, default=str).encode("utf-8")
        except UnicodeEncodeError as exc:
            self.skip(where, "bad_text", f"{kind} {key!r}: {exc.reason} at position {exc.start}")
            return False
        if rid in self.records:  # never a winner: both leave (H15: the more private one must not be shadowed)
            del self.records[rid]
            self.verdicts.drop(rid)
            self.contested.add(rid)
            detail = f"{kind} {key!r} is claimed by more than one item; none is indexed"
            self.skip(self.where.pop(rid), "duplicate_id", detail)
            self.skip(where, "duplicate_id", detail)
            return False
        self.records[rid] = record
        self.where[rid] = where
        return True


    def finish(self, salt: bytes, previous: KnownSecrets | None = None) -> KnownSecrets:
        """The workspace-wide pass of a whole load (issue 39 item 4): every value the rules redacted
        in a record, redacted wherever it appears again in the records of its scope (texts, titles,
        URLs); ``previous`` (the values of the index version this load updates, when a part of the
        workspace could not be read now and its records are kept) joins them. Returns the values
        known, as salted digests only (what an index version keeps for live reads)."""
        known = KnownSecrets(salt)
        for rid, values in self.verdicts.values.items():
            record = self.records.get(rid)
            if record is not None:
                for value in values:
                    known.add(scope_of(record.space, record.owner, record.visibility), value)
        if previous is not None:
            known.merge(previous)
        if known:
            for rid, record in list(self.records.items()):
                scopes = scopes_for(record.space, record.owner, record.visibility)
                text, title, fields, n = _redact_known(known, scopes, record.text, record.title, record.fields)
                if not n:
                    continue
                fields = {**fields, "content_hash": hashlib.sha256(text.encode("utf-8")).hexdigest()}
                self.records[rid] = replace(record, text=text, title=title, fields=fields)
                self.verdicts.unclean(rid)
                self.note(self.where.get(rid, rid), "redacted", _redaction_detail({"known_value": n}))
        return known.forget_values()


def _own_values(scope: str, values: list[str]) -> KnownSecrets:
    """The values the rules found in one record, in its scope (in memory only)."""
    own = KnownSecrets(bytes(16))
    for value in values:
        own.add(scope, value)
    return own


def _redact_known(known: KnownSecrets, scopes: tuple[str, ...], text: str, title: str,
                  fields: Mapping[str, Any]) -> tuple[str, str, dict[str, Any], int]:
    """``text``, ``title`` and a ``url`` field with the values of ``scopes`` redacted, and how many."""
    text, n = known.redact(text, scopes)
    if title:
        title, m = known.redact(title, scopes)
        n += m
    extra = dict(fields)
    if isinstance(extra.get("url"), str):
        extra["url"], m = known.redact(extra["url"], scopes)
        n += m
    return text, title, extra, n


def live_collector(known: KnownSecrets | None, policy: Policy | None = None) -> _Collector:
    """The collector a live read of one row or chat goes through (``searchkit.tools.live_read``):
    ingest's own checks and redaction, the values the rules find in that record redacted wherever
    they appear in it again, then ``known`` (the values known to the index the card came from:
    ``verdicts.known_secrets(index)``; None: none), exactly as the load of that index did."""
    return _Collector(policy or DEFAULT_POLICY, known=known)


def _redaction_detail(counts: Mapping[str, int]) -> str:
    """``3 secrets replaced by [redacted] (key_value 2, jwt 1)``: counts per rule, never a value."""
    total = sum(counts.values())
    per_rule = ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items()))
    return f"{total} secret{'s' if total != 1 else ''} replaced by [redacted] ({per_rule})"


def _guard(out: _Collector, where: str, default: T, fn: Callable[..., T], *args: object) -> T:
    """Run one loader; any error becomes a ``load_error`` skip of ``where`` (H2: never fails the build)."""
    try:
        return fn(*args)
    except RecursionError:
        out.skip(where, "load_error", "nested too deeply")
    except Exception as exc:  # noqa: BLE001 - one bad item never fails the whole build
        out.skip(where, "load_error", f"{type(exc).__name__}: {exc}")
    out.verdicts.drop()  # what the failed item's checks found clean is not indexed
    return default
