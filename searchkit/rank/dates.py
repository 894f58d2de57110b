"""When a question names a date: which records are of that day, month or year (``fusion.date``).

"What did Maria donate in December 2023?", "What painting did Melanie show on October 13, 2023?",
"что было 8 мая 2023", "2023年5月に何をした": a question about one's own past chats often names
when. A record's date is its ``date`` (a workspace chat, log day, digest), else the day its title
names (a dataset's chat titles carry it: "Chat A & B, 1:56 pm on 8 May, 2023"). A record matches a
named day when its date is within ``DAY_WINDOW`` days of it ("last weekend before April 10" is a
session of April 10 or a day around it), a named month when it is of that month (and year, when one
is named), a named year when it is of that year. Relative words ("last year", "yesterday") are not
read: they are relative to a date the question does not give.

English, Russian and Japanese forms; digits may be full-width. Only the question and the record's
own date decide, so nothing outside what a caller may see changes a match.
"""
from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from searchkit.util import parse_iso

DAY_WINDOW = 3
"""A record matches a named day when its date is at most this many days from it."""

_EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
              "october", "november", "december")
_EN_SHORT = {m[:3]: i for i, m in enumerate(_EN_MONTHS, 1)} | {"sept": 9}
_RU_STEMS = ("январ", "феврал", "март", "апрел", "ма", "июн", "июл", "август", "сентябр", "октябр", "ноябр",
             "декабр")
# every case form of the Russian month names (мая / мае / май, марта / марте / март, ...)
_RU_FORMS = {f"{s}{end}": i for i, s in enumerate(_RU_STEMS, 1)
             for end in (("й", "я", "е", "ю", "ем") if s == "ма" else ("", "а", "е", "у", "ом", "ь", "я", "ю", "ем", "ём"))}

_EN_MONTH = r"(?P<mon>" + "|".join(_EN_MONTHS) + r"|(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?)"
_RU_MONTH = r"(?P<mon>" + "|".join(sorted(_RU_FORMS, key=len, reverse=True)) + r")"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_NOT_ID = r"(?<![\w#№/.-])"  # a year or a day is not a piece of an identifier (ATL-2044, #2023, 1.2023)
_END = r"(?![\w-])"

_DAY_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    _NOT_ID + r"(?P<year>(?:19|20)\d\d)-(?P<mnum>[01]\d)-(?P<day>[0-3]\d)" + _END,               # 2023-05-08
    _NOT_ID + r"(?P<day>[0-3]?\d)\.(?P<mnum>[01]?\d)\.(?P<year>(?:19|20)\d\d)" + _END,            # 08.05.2023
    r"(?P<year>(?:19|20)\d\d)\s*年\s*(?P<mnum>[01]?\d)\s*月\s*(?P<day>[0-3]?\d)\s*日",              # 2023年5月8日
    _NOT_ID + _DAY + r"(?:\s+of)?\s+" + _EN_MONTH + r",?(?:\s+" + _YEAR + r")?" + _END,          # 8 May, 2023
    r"\b" + _EN_MONTH + r"\s+" + _DAY + r"(?![\d:])" + r"(?:,?\s+" + _YEAR + r")?" + _END,       # May 8, 2023
    _NOT_ID + r"(?P<day>[0-3]?\d)\s+" + _RU_MONTH + r"(?:\s+" + _YEAR + r")?" + _END,            # 8 мая 2023
    r"(?<!\d)(?P<mnum>[01]?\d)\s*月\s*(?P<day>[0-3]?\d)\s*日",                                    # 5月8日
))
_MONTH_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    _NOT_ID + r"(?P<year>(?:19|20)\d\d)-(?P<mnum>[01]\d)" + _END,                                 # 2023-05
    r"(?P<year>(?:19|20)\d\d)\s*年\s*(?P<mnum>[01]?\d)\s*月",                                       # 2023年5月
    r"\b" + _EN_MONTH + r",?\s+(?:of\s+)?" + _YEAR + _END,                                       # May 2023
    r"(?<![\w])" + _RU_MONTH + r"\s+" + _YEAR + _END,                                            # мае 2023
    # a month alone after a word that makes it a time ("in May", not "may I"); Russian: "в мае"
    r"\b(?:in|during|of|since|until|till|by|around|early|late|mid|mid-|this|last|next|that)\s+" + _EN_MONTH + _END,
    r"(?<![\w])(?:в|во|с|до|к|по|конце|начале|середине)\s+" + _RU_MONTH + _END,
    r"(?<![\d年])(?P<mnum>1[0-2]|0?[1-9])\s*月(?!\s*[0-3]?\d\s*日)",                               # 5月
))
_YEAR_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"(?P<year>(?:19|20)\d\d)\s*年",
    _NOT_ID + _YEAR + _END,
))


@dataclass(frozen=True)
class When:
    """The most specific date a text names: a day, a month (of a year or of any year) or a year."""

    year: int | None
    month: int | None = None
    day: int | None = None

    def matches(self, date: _dt.date | None) -> bool:
        """Whether a record of ``date`` is of this day (within ``DAY_WINDOW`` days), month or year."""
        if date is None:
            return False
        if self.day is not None and self.month is not None:
            try:
                ref = _dt.date(self.year or date.year, self.month, self.day)
            except ValueError:
                return False
            return abs((date - ref).days) <= DAY_WINDOW
        if self.month is not None:
            return date.month == self.month and (self.year is None or date.year == self.year)
        return self.year is not None and date.year == self.year


def _month(m: re.Match) -> int | None:
    groups = m.groupdict()
    if groups.get("mnum"):
        n = int(groups["mnum"])
        return n if 1 <= n <= 12 else None
    name = groups["mon"].lower().rstrip(".")
    if name in _EN_MONTHS:
        return _EN_MONTHS.index(name) + 1
    return _EN_SHORT.get(name) or _RU_FORMS.get(name)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def query_when(text: str) -> When | None:
    """The most specific date ``text`` names (first a day, else a month, else a year), or None."""
    if not text:
        return None
    text = _normal(text)
    for rx in _DAY_PATTERNS:
        for m in rx.finditer(text):
            month, day = _month(m), int(m.group("day"))
            year = int(m.group("year")) if m.groupdict().get("year") else None
            if month is not None and 1 <= day <= 31:
                return When(year, month, day)
    for rx in _MONTH_PATTERNS:
        for m in rx.finditer(text):
            month = _month(m)
            if month is not None:
                return When(int(m.group("year")) if m.groupdict().get("year") else None, month)
    for rx in _YEAR_PATTERNS:
        found = rx.search(text)
        if found:
            return When(int(found.group("year")))
    return None


def record_day(record: Any) -> _dt.date | None:
    """A record's day: its ``date`` (ISO), else a whole date (day, month and year) its title names."""
    if getattr(record, "date", None):
        value = parse_iso(record.date)
        return value.date() if isinstance(value, _dt.datetime) else value
    when = query_when(getattr(record, "title", "") or "")
    if when is None or when.day is None or when.month is None or when.year is None:
        return None
    try:
        return _dt.date(when.year, when.month, when.day)
    except ValueError:
        return None
