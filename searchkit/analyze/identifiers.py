"""Identifiers: ``ATL-1655``, ``#412``, ``v2.3.1``, ``PR 88``, ``MR !55``, ``ticket 4521``, links to them; the forms a
text mentions and the ones the missing-ID warning reads (SPEC E2, H12).

Part of ``searchkit.analyze`` (import from there).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterator

from searchkit.analyze.scripts import _ID_RE, _NUMERO_RE

NON_ID_PREFIXES: frozenset[str] = frozenset({
    "UTF", "ISO", "IEC", "IEEE", "ECMA", "SHA", "MD", "CRC", "AES", "RSA", "DES", "TLS", "SSL", "HTTP", "HTTPS",
    "IPV", "USB", "PCIE", "DDR", "LPDDR", "HDMI", "MPEG", "CP", "KOI", "WINDOWS", "WIN", "GPT", "COVID", "SARS",
    "CJK", "UCS", "ASCII", "EBCDIC", "BASE", "INT", "UINT", "FLOAT", "ES",
})
"""Letter prefixes of encodings, standards, hashes and model names (``UTF-8``, ``ISO-8601``,
``SHA-256``, ``Windows-1251``, ``GPT-4``, ``COVID-19``): never task or document numbers."""


_DIGIT_RE = re.compile(r"\d")
"""Every form ``_ID_RE`` reads holds a digit (``\\d``, the same class): a text without one has no
identifier, found by one scan instead of trying the pattern at every position (a quarter of the
analysis of a line of chat)."""


def _id_matches(text: str) -> Iterator[re.Match[str]]:
    """Identifier matches in normalised ``text``, without standards and encodings, and without a
    "capitals space number" that is a year (``NDA 2026``)."""
    if _DIGIT_RE.search(text) is None:
        return
    for m in _ID_RE.finditer(text):
        whole = m.group(0)
        prefix = re.match(r"[A-Za-z]+", whole.lstrip("#"))
        if prefix and prefix.group(0).upper() in NON_ID_PREFIXES and not m.group("kw"):
            continue
        if m.group("sp") and len(m.group("spn")) == 4 and m.group("spn")[:2] in ("19", "20"):
            continue
        yield m


def _canonical_id(m: re.Match[str]) -> str:
    if m.group("kw"):
        return f"{m.group('kw').upper()}-{int(m.group('kwn'))}"
    if m.group("ver"):
        return "v" + m.group("ver")[1:]
    if m.group("cat"):
        return f"{m.group('cat')}-{m.group('catn')}"
    if m.group("sp"):
        return f"{m.group('sp')}-{m.group('spn')}"
    if m.group("key"):
        return m.group("key")
    if m.group("lkey"):
        return m.group("lkey").upper()
    return m.group("num")


def _aliases(m: re.Match[str], canonical: str) -> tuple[str, ...]:
    """Other canonical forms the same mention stands for: ``Issue #412`` also names ``#412``."""
    if m.group("kw") and m.group("hash"):
        return (canonical, f"#{int(m.group('kwn'))}")
    return (canonical,)


def _iter_ids(text: str) -> Iterator[tuple[int, int, str]]:
    for m in _id_matches(text):
        yield m.start(), m.end(), _canonical_id(m)


# --- identifiers the missing-ID warning reads (H12) ------------------------------------------
#
# A wider net than the tokenizer's ``_ID_RE`` (which decides BM25 tokens, so it stays as it is:
# changing it would move every ranking): Cyrillic prefixes (``ЗАК-1655``, ``зак-1655``), a
# capital-letter suffix part (``DOC-2026-117-A``, another document than ``DOC-2026-117``), and
# numbers listed after one keyword (``PR 88/89`` and ``PR-88, 89 и 90`` name each PR; a shorter
# count after them, ``PR 88 и 3 теста``, is no PR). A mention keeps what the
# user typed, so the warning quotes it as typed (``PR 89``, not ``PR-89``).

_CAPS = "A-Z\u0410-\u042f\u0401"  # Latin and Cyrillic capitals
_SMALL = "a-z\u0430-\u044f\u0451"
_ID_WORDS = (
    "(?i:tickets?|orders?|invoices?|bugs?|incidents?|contracts?|deals?|epics?|defects?"
    "|тикет(?:а|у|ом|е|ы|ов)?|заказ(?:а|у|ом|е|ы|ов)?|заявк(?:а|и|у|е|ой)|договор(?:а|у|ом|е|ы|ов)?"
    "|контракт(?:а|у|ом|е|ы|ов)?|задач(?:а|и|у|е|ей)|инцидент(?:а|у|ом|е|ы|ов)?|обращени(?:е|я|ю|ем|и)"
    "|баг(?:а|у|ом|е|и|ов)?|сделк(?:а|и|у|е|ой)|накладн(?:ая|ой|ую))"
    "|チケット|注文|受注|発注|案件|課題|請求書|契約|問い合わせ|問合せ|障害|タスク|バグ|インシデント|伝票"
)
"""Words that name a numbered thing (a ticket, an order, a contract...; en, ru, ja): followed by a
number (``ticket 4521``, ``заказ № 1655``, ``チケット 4521``) they make an identifier whose number a
card must name in some prefixed form (``NUMBER_FORM``; issue 39 item 12b)."""
_ID_WORD_GAP = r"[ :]{0,2}(?:(?:番号|No\.|no\.|номер)[ :]{0,2})?"
"""What may come between such a word and its number (``№`` is ``#`` by then): ``ticket: 4521``,
``invoice No. 20931``, ``заказ номер 1655``, ``注文番号 1655``."""
_WORD_PART = re.compile(rf"(?:{_ID_WORDS}){_ID_WORD_GAP}")
"""The word of a word-and-number mention, which stays a word of the query (``without_identifiers``)."""
_AMOUNT_AFTER = re.compile(r" ?(?:руб|р\.|₽|\$|€|usd|eur|rub|шт|штук|pcs|units?|тыс|млн|%)", re.I)
"""A unit or currency right after a number: ``заказ 1500 руб`` is an amount, no order number."""

NUMBER_FORM = "*-{}"
"""The form every prefixed identifier ending in a number also has in a card
(``identifier_forms``): ``TCK-4521``, ``#4521``, ``ЗАК-4521``, ``ticket 4521`` all give ``*-4521``.
A word-and-number mention of a query (``ticket 4521``) is satisfied by it: the prefix is the
workspace's, the query's word is not (issue 39 item 12b)."""
_TRAILING_NUMBER = re.compile(r"(?<![.\d])(\d+)$")
_VERSION_FORM = re.compile(r"v\d+(?:\.\d+)+$")


def _number_form(canonical: str) -> str | None:
    """``NUMBER_FORM`` of an identifier ending in a number (not a version), else None."""
    if _VERSION_FORM.match(canonical):
        return None
    n = _TRAILING_NUMBER.search(canonical)
    return NUMBER_FORM.format(int(n.group(1))) if n else None


_MENTION_RE = re.compile(
    rf"(?<![{_CAPS}{_SMALL}0-9_])(?:"
    r"(?P<kw>(?i:PR|MR|ISSUE|TASK))[ \-]?(?P<hash>[#!]?)(?P<kwn>\d+)"  # PR 88, MR !55 (GitLab)
    r"(?P<more>(?:(?: ?[/&\u3001\u30fb\u3068] ?|, ?| (?:и|или|and|or) )[#!]?\d+)*)"  # PR 88/89, PR-88, 89 и 90
    rf"|(?P<idw>{_ID_WORDS}){_ID_WORD_GAP}(?P<idmark>#?) ?(?P<idn>\d+)"  # ticket 4521, заказ № 1655
    rf"|(?P<key>[{_CAPS}]{{2}}[{_CAPS}0-9_]*(?:-\d+)+(?:-[{_CAPS}]\d*)?)"  # ATL-1655, ЗАК-1655, DOC-2026-117-A
    rf"|(?P<lkey>[{_CAPS}{_SMALL}]{{2}}[{_CAPS}{_SMALL}0-9_]*(?:-\d{{3,}})(?:-\d+)*(?:-[{_CAPS}{_SMALL}]\d*)?)"  # atl-1656, зак-1655, doc-2026-117-a
    r"|(?P<lkey2>[A-Za-z]{3,10}-\d\d)"  # abc-13 (three or more Latin letters, two digits; not a common word)
    rf"|(?P<cat>[{_CAPS}]{{2,}})(?P<catn>\d{{3,}})"  # ATL1656, ЗАК1655
    rf"|(?P<sp>[{_CAPS}]{{2,10}}) (?P<spn>\d{{3,6}})"  # ATL 1656, ЗАК 1655 (not a year)
    r"|(?P<ver>[vV]\d+(?:\.\d+)+)"  # v2.3.1
    rf")(?![{_CAPS}{_SMALL}0-9_]|-[{_CAPS}{_SMALL}0-9])"
    r"|(?<![A-Za-z0-9_#&])(?P<num>#\d+)(?![A-Za-z0-9_])"  # #412
)
_MENTION_DASH_RE = re.compile(
    "(?<=[A-Za-z\uff21-\uff3a\uff41-\uff5a\u0410-\u044f\u0401\u0451])[\u2010-\u2015\u2212\ufe58\ufe63](?=[0-9\uff10-\uff19])"
)
_MENTION_NUMBER_RE = re.compile(r"[#!]?(\d+)")
_PREFIX_RE = re.compile(r"[^\W\d_]+")

NON_ID_PREFIXES_CYRILLIC: frozenset[str] = frozenset({
    "ГОСТ", "ОСТ", "СНИП", "СП", "ТУ", "ОКВЭД", "ОКПД", "ОКАТО", "ОКТМО", "ОКПО", "ОКОФ", "ОКЕИ",
})
"""Cyrillic letter prefixes of standards and classifiers (``ГОСТ-34``, ``ОКВЭД 2``): not task or
document numbers (the missing-ID warning's detection only)."""

NON_ID_WORDS: frozenset[str] = frozenset({
    "TOP", "BEST", "LAST", "FIRST", "NEXT", "DAY", "DAYS", "WEEK", "WEEKS", "MONTH", "YEAR", "YEARS", "STEP",
    "PAGE", "PART", "PHASE", "STAGE", "LEVEL", "ROUND", "GRADE", "TYPE", "SIZE", "LINE", "ITEM", "ROW", "ROOM",
    "FLOOR", "ZONE", "TIER", "GEN", "VOL", "CHAPTER", "SEASON", "EPISODE", "UNDER", "OVER", "AGE", "PRE", "POST",
    "MID", "LATE", "EARLY", "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "SEPT", "OCT", "NOV",
    "DEC", "JANUARY", "FEBRUARY", "MARCH", "APRIL", "JUNE", "JULY", "AUGUST", "SEPTEMBER", "OCTOBER", "NOVEMBER",
    "DECEMBER", "WIN", "IOS", "MACOS", "ANDROID", "UBUNTU", "DEBIAN", "CENTOS", "FEDORA", "RHEL", "PYTHON", "NODE",
    "JAVA", "JDK", "PHP", "RUBY", "PERL", "CUDA", "GCC", "QWEN", "LLAMA", "GEMMA", "MISTRAL", "CLAUDE", "GEMINI",
    "YOLO", "RESNET", "IPHONE", "PIXEL", "GALAXY", "OFFICE", "EXCEL", "AMD", "ARM", "AK", "MIG", "ТОП", "КОВИД", "ДЕНЬ", "ШАГ", "ЭТАП", "УРОВЕНЬ", "КЛАСС", "ТИП", "СТР", "ЯНВ", "ФЕВ",
    "МАР", "АПР", "МАЙ", "МАЯ", "ИЮН", "ИЮЛ", "АВГ", "СЕН", "СЕНТ", "ОКТ", "НОЯ", "ДЕК", "АК", "ИЛ", "АН", "СУ",
    "МИГ", "ЯК", "МИ", "КА", "БМП", "БТР", "ЗИЛ", "ГАЗ", "ВАЗ", "УАЗ", "ПАЗ", "МАЗ", "КАМАЗ",
})
"""Words that come before a number without making a task or document number (``top-10``, ``jan-24``,
``python-311``, ``АК-47``, ``ТОП-100``): the missing-ID warning's detection only, any case."""

# A link names the task it opens (``…/pull/412``, ``…/merge_requests/55``, ``…/browse/ATL-1655``);
# in a query nothing else inside a link is read (``…/report-2026/…`` is a path, not a number).
_URL_RE = re.compile(
    r"(?:https?://|www\.|(?<![\w@.\-/])[a-z0-9][a-z0-9\-]*(?:\.[a-z0-9\-]+)*\.[a-z]{2,}/)[^\s<>\"'`«»]+", re.I
)
_URL_ID_RE = re.compile(
    r"/(?P<uk>pulls?|pull-requests|issues|merge_requests)/(?P<un>\d+)(?![\w\-])"
    r"|(?<=[/=])(?P<ukey>[A-Z][A-Z0-9_]+-\d+)(?![\w\-])"
)
_URL_KINDS = {"pull": ("PR", "#"), "pulls": ("PR", "#"), "pull-requests": ("PR", "#"), "issues": ("ISSUE", "#"),
              "merge_requests": ("MR", "!")}
_SLASH_NUMBER_RE = re.compile(r" ?/ ?(\d+)(?![^\W_]|[-.,]\d)")
_LAST_NUMBER_RE = re.compile(r"\d+$")
_BANG_RE = re.compile(r"(?<![\w!&])!\d+(?!\w)")
# A card that names a version without its "v" (``version 2.3``, ``2.3.1``) mentions ``v2.3`` / ``v2.3.1``.
_BARE_VERSION_RE = re.compile(
    r"(?<![\w.])(?:(?P<vw>(?i:version|release|ver|версия|версии|версию|релиз|релиза)\.? ?))?(?P<vn>\d+(?:\.\d+)+)(?!\w|\.\d)"
)


@dataclass(frozen=True)
class IdentifierMention:
    """One identifier a text names, for the missing-ID warning (H12).

    Args:
        canonical: the canonical form (``PR-89``, ``ЗАК-1655``, ``DOC-2026-117-A``).
        aliases: the canonical forms the mention stands for, ``canonical`` first (``Issue #412``
            also names ``#412``).
        typed: the mention as the text has it (``PR 89`` of ``PR 88/89``; ``ＡＴＬ－１６５６``).
    """

    canonical: str
    aliases: tuple[str, ...]
    typed: str


def _mention_normalize(text: str) -> str:
    """``normalize`` with a dash after a Cyrillic letter read as a hyphen too (``ЗАК–1655``)."""
    if "№" in text:
        text = _NUMERO_RE.sub("#", text)
    return unicodedata.normalize("NFKC", _MENTION_DASH_RE.sub("-", text))


def _normalize_mapped(text: str) -> tuple[str, list[int], list[int]] | None:
    """``_mention_normalize(text)`` with, for each of its characters, the span of ``text`` it
    came from; None when character-wise NFKC differs from the whole text's (combining marks)."""
    edits = sorted([(m.start(), m.end(), "#") for m in _NUMERO_RE.finditer(text)]
                   + [(m.start(), m.end(), "-") for m in _MENTION_DASH_RE.finditer(text)])
    pieces: list[tuple[str, int, int]] = []
    pos = 0
    for a, b, rep in edits:
        pieces.extend((unicodedata.normalize("NFKC", text[i]), i, i + 1) for i in range(pos, a))
        pieces.append((rep, a, b))
        pos = b
    pieces.extend((unicodedata.normalize("NFKC", text[i]), i, i + 1) for i in range(pos, len(text)))
    norm = "".join(p for p, _, _ in pieces)
    if norm != _mention_normalize(text):
        return None
    starts = [a for p, a, _ in pieces for _ in p]
    ends = [b for p, _, b in pieces for _ in p]
    return norm, starts, ends


def _skipped(m: re.Match[str], norm: str) -> bool:
    """A match that is no task or document number: a standard, an encoding or a common word before
    a number (``UTF-8``, ``ГОСТ-34``, ``top-10``), a capitals-and-year (``NDA 2026``) or a number
    going on as a decimal or version (``PM-2.5``, ``ubuntu-22.04``)."""
    if m.group("idw"):
        n = m.group("idn")
        if not m.group("idmark") and (len(n) < 3 or (len(n) == 4 and n[:2] in ("19", "20"))):
            return True  # "order 66", "договор 2026 года": a count or a year
        return bool(_AMOUNT_AFTER.match(norm, m.end()) or re.match(r"[.,]\d", norm[m.end():m.end() + 2]))
    prefix = _PREFIX_RE.match(m.group(0).lstrip("#"))
    if prefix and not m.group("kw"):
        word = prefix.group(0).upper()
        if word in NON_ID_PREFIXES or word in NON_ID_PREFIXES_CYRILLIC or word in NON_ID_WORDS:
            return True
    if m.group("sp") and len(m.group("spn")) == 4 and m.group("spn")[:2] in ("19", "20"):
        return True
    return bool(not m.group("kw") and not m.group("ver") and not m.group("num")
                and re.match(r"\.\d", norm[m.end():m.end() + 2]))


def _listed(m: re.Match[str], norm: str, canonical: str) -> Iterator[tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]]:
    """The numbers a slash lists after a task key: ``ATL-1655/1656`` names ATL-1656 too (the
    prefix up to the last number, then the listed number). A shorter one (``ATL-1655/56``) is not
    read, nor a year after a shorter number (``DOC-117/2026``: document 117 of 2026); nor is a
    slash after ``#`` or ``№`` (``№ 45/2026`` is one document number)."""
    if not (m.group("key") or m.group("lkey") or m.group("lkey2") or m.group("cat") or m.group("sp")):
        return
    last = _LAST_NUMBER_RE.search(m.group(0))
    if last is None:  # DOC-2026-117-A: a letter part ends it
        return
    cut = m.start() + last.start()
    head = canonical[: len(canonical) - len(last.group(0))]
    pos = m.end()
    while (n := _SLASH_NUMBER_RE.match(norm, pos)) is not None:
        listed = n.group(1)
        if len(listed) < max(2, len(last.group(0)) - 1) or (
                len(listed) == 4 and listed[:2] in ("19", "20") and len(last.group(0)) < 4):
            break
        yield head + listed, (head + listed,), ((m.start(), cut), (n.start(1), n.end(1)))
        pos = n.end()


def _url_items(norm: str, a: int, b: int) -> Iterator[tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]]:
    """The tasks a link ``norm[a:b]`` opens: ``…/pull/412`` (PR-412, #412; quoted as the whole
    link), ``…/merge_requests/55`` (MR-55, !55), ``…/browse/ATL-1655`` (ATL-1655, quoted as such)."""
    for u in _URL_ID_RE.finditer(norm, a, b):
        if u.group("uk"):
            kw, mark = _URL_KINDS[u.group("uk")]
            n = int(u.group("un"))
            yield f"{kw}-{n}", (f"{kw}-{n}", f"{mark}{n}"), ((a, u.end()),)
        else:
            key = u.group("ukey")
            if _PREFIX_RE.match(key).group(0).upper() not in NON_ID_PREFIXES | NON_ID_WORDS:  # type: ignore[union-attr]
                yield key, (key,), ((u.start(), u.end()),)


def _links(norm: str) -> list[tuple[int, int]]:
    out = []
    for u in _URL_RE.finditer(norm):
        end = u.end()
        while end > u.start() and norm[end - 1] in ".,;:!?)]}'\"":
            end -= 1
        out.append((u.start(), end))
    return out


def _mention_items(norm: str, lenient: bool = False) -> Iterator[tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]]:
    """``(canonical, aliases, spans)`` for each identifier in normalised text, in order; ``spans``
    are the pieces of ``norm`` that, joined, spell it as typed. ``lenient`` (a card's text) also
    reads everything inside links and a bare GitLab ``!55``; a query's links give only the task
    they open."""
    links = _links(norm)
    items: list[tuple[int, tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]]] = []
    for a, b in links:
        items += [(s[0][0], (c, al, s)) for c, al, s in _url_items(norm, a, b)]
    for m in _MENTION_RE.finditer(norm):
        if not lenient and any(a <= m.start() < b for a, b in links):
            continue
        items += [(spans[0][0], (c, al, spans)) for c, al, spans in _match_items(m, norm)]
    if lenient:
        items += [(g.start(), (g.group(0), (g.group(0),), ((g.start(), g.end()),))) for g in _BANG_RE.finditer(norm)]
        items += [(v.start(), ("v" + v.group("vn"), ("v" + v.group("vn"),), ((v.start(), v.end()),)))
                  for v in _BARE_VERSION_RE.finditer(norm) if v.group("vw") or v.group("vn").count(".") >= 2]
    items.sort(key=lambda item: item[0])
    for _, item in items:
        yield item


def _match_items(m: re.Match[str], norm: str) -> Iterator[tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]]:
    if _skipped(m, norm):
        return
    if m.group("idw"):  # ticket 4521, заказ № 1655: quoted from the № when there is one, as before
        n = int(m.group("idn"))
        start = m.start("idmark") if m.group("idmark") else m.start()
        yield f"#{n}", (f"#{n}", NUMBER_FORM.format(n)), ((start, m.end()),)
        return
    if not m.group("kw"):
        canonical = m.group("lkey2").upper() if m.group("lkey2") else _canonical_id(m)
        yield canonical, _aliases(m, canonical), ((m.start(), m.end()),)
        yield from _listed(m, norm, canonical)
        return
    kw = m.group("kw").upper()
    numbers = [(m.start("kwn"), m.end("kwn"))]
    for nm in _MENTION_NUMBER_RE.finditer(m.group("more")):
        if len(nm.group(1)) < min(2, len(m.group("kwn"))):
            break  # "PR 88 и 3 теста": a count, not PR-3
        numbers.append((m.start("more") + nm.start(1), m.start("more") + nm.end(1)))
    mark = m.group("hash")
    for i, (a, b) in enumerate(numbers):
        canonical = f"{kw}-{int(norm[a:b])}"
        aliases = (canonical, f"{mark}{int(norm[a:b])}") if mark else (canonical,)
        spans = ((m.start(), b),) if i == 0 else ((m.start(), m.start("kwn")), (a, b))
        yield canonical, aliases, spans


def find_identifiers(text: str) -> list[IdentifierMention]:
    """Every distinct identifier ``text`` names, in order, each with what the user typed (the
    first spelling of it): ``ATL-1655``, ``atl-1656``, ``ATL1656``, ``ATL 1656``, ``ЗАК-1655``,
    ``DOC-2026-117``, ``DOC-2026-117-A``, ``#412``, ``№412``, ``v2.3.1``, ``PR 88``, ``PR 88/89``
    (two), ``Issue #412`` (also ``#412``), a word naming a numbered thing and its number
    (``ticket 4521``, ``заказ № 1655``, ``チケット 4521``: ``#4521``, satisfied by ``NUMBER_FORM``, any
    prefixed form of the number in a card); not encodings or standards (``UTF-8``, ``ISO 8601``,
    ``ГОСТ-34``) nor a capitals-and-year (``NDA 2026``)."""
    mapped = _normalize_mapped(text)
    norm = mapped[0] if mapped is not None else _mention_normalize(text)
    seen: dict[str, IdentifierMention] = {}
    for canonical, aliases, spans in _mention_items(norm):
        if mapped is not None:
            _, starts, ends = mapped
            typed = "".join(text[starts[a]:ends[b - 1]] for a, b in spans if b > a).strip()
        else:
            typed = canonical
        old = seen.get(canonical)
        if old is None:
            seen[canonical] = IdentifierMention(canonical, aliases, typed or canonical)
        else:
            seen[canonical] = IdentifierMention(canonical, tuple(dict.fromkeys(old.aliases + aliases)), old.typed)
    return list(seen.values())


def without_identifiers(text: str) -> str:
    """``text`` normalised, each identifier ``find_identifiers`` reads replaced by a space (what
    is left says whether a query has any word besides its IDs)."""
    norm = _mention_normalize(text)
    out, pos = [], 0
    links = _links(norm)
    for canonical, _, spans in _mention_items(norm):
        start, end = spans[0][0], spans[-1][1]  # the items of "PR 88/89" share their start
        if canonical.startswith("#") and norm[start] != "#":  # "ticket 4521": the word stays a word
            start = _WORD_PART.match(norm, start).end()  # type: ignore[union-attr]
        start, end = next(((a, b) for a, b in links if a <= start < b), (start, end))  # a task's link is all ID
        if start >= pos:
            out += [norm[pos:start], " "]
        pos = max(pos, end)
    out.append(norm[pos:])
    return "".join(out)


def extract_identifiers(text: str) -> list[str]:
    """Task and document numbers named in ``text``, canonical, de-duplicated, in order of appearance.

    Recognised after ``normalize`` (NFKC; ``№412`` is ``#412``): ``LETTERS-digits[-digits...]``
    with two or more Latin or Cyrillic capitals (``ATL-1655``, ``DOC-2026-117``, ``ЗАК-1655``),
    optionally ending in a capital-letter part (``DOC-2026-117-A``), the same in any case with a
    hyphen and at least three digits (``atl-1656`` -> ``ATL-1656``), capitals run into three or
    more digits (``ATL1656`` -> ``ATL-1656``), ``#digits`` (``#412``), versions ``vX.Y[.Z...]``
    (``v2.3.1``), and ``PR|MR|ISSUE|TASK <n>[/<n>...]`` in any case, with a space, hyphen or ``#``
    or nothing before the number, canonicalised to ``PR-88`` (``PR 88/89``: ``PR-88``, ``PR-89``).
    This is the missing-ID warning's reading (``find_identifiers``); BM25's identifier tokens are
    the analyzer's own and narrower.
    """
    return [m.canonical for m in find_identifiers(text)]


def identifier_mentions(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``(canonical, aliases)`` for each distinct identifier ``text`` names, in order; the
    aliases include the canonical form (``Issue #412`` -> ``("ISSUE-412", ("ISSUE-412", "#412"))``)."""
    return [(m.canonical, m.aliases) for m in find_identifiers(text)]


def identifier_forms(text: str) -> frozenset[str]:
    """Every canonical identifier ``text`` mentions, with aliases (``Issue #412`` gives
    ``ISSUE-412`` and ``#412``), and for each one that ends in a number, ``NUMBER_FORM`` (``*-412``:
    what a word-and-number mention of a query, ``ticket 412``, asks for). Two spellings of one identifier have the same canonical form;
    ``ATL-16`` is not ``ATL-1650`` and ``v2.3`` is not ``v2.3.1`` (H12)."""
    forms: set[str] = set()
    for canonical, aliases, _ in _mention_items(_mention_normalize(text), lenient=True):
        forms.update(aliases)
        number = _number_form(canonical)
        if number is not None:
            forms.add(number)
    return frozenset(forms)


def canonical_identifier(ident: str) -> str:
    """The canonical form of one identifier as written (``atl1656`` stays as given when it is
    not recognised; ``ＡＴＬ－１６５６`` and ``ATL1656`` give ``ATL-1656``)."""
    found = extract_identifiers(ident)
    return found[0] if len(found) == 1 else _mention_normalize(ident).strip()


