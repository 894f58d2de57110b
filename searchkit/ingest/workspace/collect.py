"""The collector one load fills (SPEC H1, H2; part of ``searchkit.ingest.workspace``): each record
added once (redacted, capped, an id claimed twice refused for both), each skip and note with its rule,
and ``_guard``, which turns any error of one loader into a ``load_error`` skip.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from searchkit.ingest.policy import Policy, Skip
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
    through ``verdicts`` (``Verdicts``: the clean texts of a previous load, ``memo``)."""

    def __init__(self, policy: Policy, memo: Mapping[str, Any] | None = None) -> None:
        self.policy = policy
        self.verdicts = Verdicts(policy, memo)
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


def _redaction_detail(counts: Mapping[str, int]) -> str:
    """``3 secrets replaced by [redacted] (key_value 2, jwt 1)``: counts per rule, never a value."""
    total = sum(counts.values())
    per_rule = ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items()))
    return f"{total} secret{'s' if total != 1 else ''} replaced by [redacted] ({per_rule})"


def _guard(out: _Collector, where: str, default: T, fn: Callable[..., T], *args: Any) -> T:
    """Run one loader; any error becomes a ``load_error`` skip of ``where`` (H2: never fails the build)."""
    try:
        return fn(*args)
    except RecursionError:
        out.skip(where, "load_error", "nested too deeply")
    except Exception as exc:  # noqa: BLE001 - one bad item never fails the whole build
        out.skip(where, "load_error", f"{type(exc).__name__}: {exc}")
    out.verdicts.drop()  # what the failed item's checks found clean is not indexed
    return default
