"""Restrictions a search applies before its top-k is cut (``Filters``; SPEC H7, H10, H15).

``searchkit.searcher`` re-exports ``Filters``: ``from searchkit.searcher import Filters`` keeps working.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from searchkit.records import Record
from searchkit.util import aware as _aware


@dataclass(frozen=True)
class Filters:
    """Restrictions applied before the top-k is cut.

    ``since`` is inclusive and ``until`` exclusive. A date bound (``YYYY-MM-DD``) compares the
    record's day (``Record.date``); a date-time bound compares the record's own time stamp
    (``fields`` ``ts``, ``updated_at`` or ``modified``; a record with only a day counts from its
    midnight, UTC; times without an offset are UTC). A record without a date is excluded
    whenever ``since`` or ``until`` is set. ``visible`` is a predicate over records (privacy, H15).
    """

    kinds: tuple[str, ...] | None = None
    since: str | None = None
    until: str | None = None
    spaces: tuple[str, ...] | None = None
    visible: Callable[[Record], bool] | None = None

    def is_empty(self) -> bool:
        return not (self.kinds or self.since or self.until or self.spaces or self.visible)

    def accepts(self, r: Record) -> bool:
        if self.kinds is not None and r.kind not in self.kinds:
            return False
        if self.spaces is not None and r.space not in self.spaces:
            return False
        if self.since or self.until:
            day = (r.date or "")[:10]
            if not day:
                return False
            if self.since and not _after(r, day, self.since):
                return False
            if self.until and _after(r, day, self.until):
                return False
        if self.visible is not None and not self.visible(r):
            return False
        return True


def _after(r: Record, day: str, bound: str) -> bool:
    """Whether record ``r`` (whose day is ``day``) is at or after ``bound`` (a date or date-time)."""
    if len(bound) <= 10:
        return day >= bound[:10]
    t = _record_time(r, day)
    b = _aware(bound)
    if t is None or b is None:
        return day >= bound[:10]
    return t >= b


def _record_time(r: Record, day: str):
    for key in ("ts", "updated_at", "modified"):
        value = r.fields.get(key)
        if isinstance(value, str) and len(value) > 10:
            t = _aware(value)
            if t is not None:
                return t
    return _aware(day + "T00:00:00")
