"""Text analysis: NFKC, script runs and language, identifiers, and the token analyzers.

Japanese runs go through SudachiPy (sudachidict-core); Russian and Latin runs are split into
``\\w+`` words, lower-cased and Snowball-stemmed (PyStemmer). Identifiers such as ``ATL-1655``,
``#412``, ``v2.3.1`` or ``PR 88`` are kept whole as tokens besides their parts (SPEC E2, H12).
SudachiPy and PyStemmer are imported lazily, on the first text that needs them.
"""
from __future__ import annotations

import os
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterator

from searchkit.config import AnalyzerConfig, _to_plain

ANALYZER_VERSION = 3
"""Bumped whenever the tokens produced for the same text and parameters change."""

SPLIT_MODES: tuple[str, ...] = ("A", "B", "C")
LANGUAGES: tuple[str, ...] = ("ja", "ru", "en")
ROUTES: tuple[str, ...] = ("script", "ja", "ru", "en")

# --- scripts ----------------------------------------------------------------------------------

# Kana, kanji, iteration marks, prolonged sound mark: the letters of Japanese.
_JA_LETTERS = (
    "\u3005-\u3007\u303b"  # 々 〆 〇 〻
    "\u3040-\u309f"  # hiragana
    "\u30a0-\u30ff"  # katakana, ・ and ー included
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs (ext. A, unified, compatibility)
    "\uff66-\uff9f"  # half-width katakana (NFKC widens them)
    "\U00020000-\U0003ffff"  # CJK ideographs, supplementary planes
)
# Japanese punctuation and symbols: CJK symbols block (、。「」『』〜 ...), kanbun, enclosed CJK,
# CJK compatibility, the remaining half-width CJK punctuation.
_JA_PUNCT = "\u3001-\u3004\u3008-\u303a\u303c-\u303f\u3190-\u319f\u31c0-\u31ef\u3200-\u33ff\uff61-\uff65"
_JA = _JA_LETTERS + _JA_PUNCT
_CYRILLIC = "\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f"

_RUN_RE = re.compile(
    rf"(?P<ja>[{_JA}]+)|(?P<ru>[{_CYRILLIC}]+)|(?P<en>(?:(?![{_JA}{_CYRILLIC}])[^\W\d_])+)"
)
_JA_LETTER_RE = re.compile(rf"[{_JA_LETTERS}]")
_CYRILLIC_RE = re.compile(rf"[{_CYRILLIC}]")
_LETTER_RE = re.compile(r"[^\W\d_]")

# Weights per character in detect_language: a kana/kanji carries more than a letter, and Latin
# names, code and IDs appear inside Russian and Japanese text far more often than the reverse.
_LANG_WEIGHTS = {"ja": 3.0, "ru": 2.0, "en": 1.0}

_WORD_RE = re.compile(r"\w+")

# --- identifiers ------------------------------------------------------------------------------

_ID_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"(?P<kw>(?i:PR|MR|ISSUE|TASK))[ \-]?(?P<hash>#?)(?P<kwn>\d+)"  # PR 88, PR-88, pr#88, Issue 12
    r"|(?P<key>[A-Z]{2}[A-Z0-9_]*(?:-\d+)+)"  # ATL-1655, DOC-2026-117, AB2-7 (two capitals first)
    r"|(?P<lkey>[A-Za-z]{2}[A-Za-z0-9_]*(?:-\d{3,})(?:-\d+)*)"  # atl-1656, Atl-1656 (hyphen, 3+ digits)
    r"|(?P<cat>[A-Z]{2,})(?P<catn>\d{3,})"  # ATL1656 (capitals run into 3+ digits)
    r"|(?P<sp>[A-Z]{2,10}) (?P<spn>\d{3,6})"  # ATL 1656 (capitals, one space, 3+ digits; not a year)
    r"|(?P<ver>[vV]\d+(?:\.\d+)+)"  # v2.3, v2.3.1
    r")(?![A-Za-z0-9_]|-[A-Za-z0-9])"  # DOC-2026-117-A is another document than DOC-2026-117
    r"|(?<![A-Za-z0-9_#&])(?P<num>#\d+)(?![A-Za-z0-9_])"  # #412 (not C#412, not &#412;)
)
# Before NFKC: "№ 412" / "№412" is "#412" (NFKC would make it "No412"); dashes between a letter and
# a digit ("ATL‐1656", "ATL–1656", "ATL−1656") are hyphens.
_NUMERO_RE = re.compile(r"№[ \t\u00a0]*(?=[0-9０-９])")
_ID_DASH_RE = re.compile(r"(?<=[A-Za-zＡ-Ｚａ-ｚ])[\u2010-\u2015\u2212\ufe58\ufe63](?=[0-9０-９])")


def normalize(text: str) -> str:
    """Unicode NFKC: full-width ``ＡＴＬ－１６５５`` becomes ``ATL-1655``, half-width kana widen;
    ``№412`` becomes ``#412`` and a dash between a letter and a digit a hyphen (``ATL–1655``)."""
    if not isinstance(text, str):
        raise TypeError(f"normalize expects str, got {type(text).__name__}")
    if "№" in text:
        text = _NUMERO_RE.sub("#", text)
    text = _ID_DASH_RE.sub("-", text)
    return unicodedata.normalize("NFKC", text)


def script_runs(text: str) -> list[tuple[str, str]]:
    """Split ``text`` into maximal runs of one script: ``ja``, ``ru`` (Cyrillic), ``en`` (the rest).

    Letters decide the script; digits, spaces and punctuation join the run before them (or the
    first run, at the start of the text). Japanese punctuation (、。「」) counts as Japanese.
    The runs' texts concatenate back to ``text``; text without letters is one ``en`` run and
    empty text gives ``[]``.
    """
    spans = _run_spans(text)
    return [(lang, text[a:b]) for lang, a, b in spans]


def _run_spans(text: str) -> list[tuple[str, int, int]]:
    if text.isascii():  # no Japanese or Cyrillic letter: one ``en`` run (what the loop below gives)
        return [("en", 0, len(text))] if text else []
    runs: list[list[Any]] = []
    for m in _RUN_RE.finditer(text):
        lang = m.lastgroup
        if not runs:
            runs.append([lang, 0, m.end()])
        elif runs[-1][0] == lang:
            runs[-1][2] = m.end()
        else:
            runs[-1][2] = m.start()
            runs.append([lang, m.start(), m.end()])
    if runs:
        runs[-1][2] = len(text)
    elif text:
        runs.append(["en", 0, len(text)])
    return [(str(lang), a, b) for lang, a, b in runs]


def detect_language(text: str) -> str:
    """The dominant language of ``text``: ``ja``, ``ru`` or ``en``.

    Counts kana/kanji, Cyrillic and other letters after NFKC, identifiers left out, weighted
    3 : 2 : 1 (Latin words are common inside Japanese and Russian text, rarely the reverse);
    ties go ja > ru > en.
    Text without letters is ``en``.
    """
    text = _ID_RE.sub(" ", normalize(text))
    ja = len(_JA_LETTER_RE.findall(text))
    ru = len(_CYRILLIC_RE.findall(text))
    en = len(_LETTER_RE.findall(text)) - ja - ru
    scores = {"ja": ja * _LANG_WEIGHTS["ja"], "ru": ru * _LANG_WEIGHTS["ru"], "en": en * _LANG_WEIGHTS["en"]}
    best = max(scores.values())
    if best <= 0:
        return "en"
    return next(lang for lang in LANGUAGES if scores[lang] == best)


NON_ID_PREFIXES: frozenset[str] = frozenset({
    "UTF", "ISO", "IEC", "IEEE", "ECMA", "SHA", "MD", "CRC", "AES", "RSA", "DES", "TLS", "SSL", "HTTP", "HTTPS",
    "IPV", "USB", "PCIE", "DDR", "LPDDR", "HDMI", "MPEG", "CP", "KOI", "WINDOWS", "WIN", "GPT", "COVID", "SARS",
    "CJK", "UCS", "ASCII", "EBCDIC", "BASE", "INT", "UINT", "FLOAT", "ES",
})
"""Letter prefixes of encodings, standards, hashes and model names (``UTF-8``, ``ISO-8601``,
``SHA-256``, ``Windows-1251``, ``GPT-4``, ``COVID-19``): never task or document numbers."""


def _id_matches(text: str) -> Iterator[re.Match[str]]:
    """Identifier matches in normalised ``text``, without standards and encodings, and without a
    "capitals space number" that is a year (``NDA 2026``)."""
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
_MENTION_RE = re.compile(
    rf"(?<![{_CAPS}{_SMALL}0-9_])(?:"
    r"(?P<kw>(?i:PR|MR|ISSUE|TASK))[ \-]?(?P<hash>[#!]?)(?P<kwn>\d+)"  # PR 88, MR !55 (GitLab)
    r"(?P<more>(?:(?: ?[/&\u3001\u30fb\u3068] ?|, ?| (?:и|или|and|or) )[#!]?\d+)*)"  # PR 88/89, PR-88, 89 и 90
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
    if not m.group("kw"):
        canonical = m.group("lkey2").upper() if m.group("lkey2") else _canonical_id(m)
        yield canonical, _aliases(m, canonical), ((m.start(), m.end()),)
        yield from _listed(m, norm, canonical)
        return
    kw = m.group("kw").upper()
    numbers = [(m.start("kwn"), m.end("kwn"))]
    for n in _MENTION_NUMBER_RE.finditer(m.group("more")):
        if len(n.group(1)) < min(2, len(m.group("kwn"))):
            break  # "PR 88 и 3 теста": a count, not PR-3
        numbers.append((m.start("more") + n.start(1), m.start("more") + n.end(1)))
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
    (two), ``Issue #412`` (also ``#412``); not encodings or standards (``UTF-8``, ``ISO 8601``,
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
    for _, _, spans in _mention_items(norm):
        start, end = spans[0][0], spans[-1][1]  # the items of "PR 88/89" share their start
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
    ``ISSUE-412`` and ``#412``). Two spellings of one identifier have the same canonical form;
    ``ATL-16`` is not ``ATL-1650`` and ``v2.3`` is not ``v2.3.1`` (H12)."""
    forms: set[str] = set()
    for _, aliases, _ in _mention_items(_mention_normalize(text), lenient=True):
        forms.update(aliases)
    return frozenset(forms)


def canonical_identifier(ident: str) -> str:
    """The canonical form of one identifier as written (``atl1656`` stays as given when it is
    not recognised; ``ＡＴＬ－１６５６`` and ``ATL1656`` give ``ATL-1656``)."""
    found = extract_identifiers(ident)
    return found[0] if len(found) == 1 else _mention_normalize(ident).strip()


# --- lazily loaded, per-process / per-thread backends ----------------------------------------

_local = threading.local()
_dict_lock = threading.Lock()
_dictionary: dict[int, Any] = {}  # pid -> sudachipy.Dictionary


def _sudachi_dictionary() -> Any:
    pid = os.getpid()
    d = _dictionary.get(pid)
    if d is None:
        with _dict_lock:
            d = _dictionary.get(pid)
            if d is None:
                try:
                    from sudachipy import Dictionary
                except ImportError as exc:  # pragma: no cover - dependency is required
                    raise ImportError(
                        "Japanese analysis needs SudachiPy: pip install sudachipy sudachidict-core"
                    ) from exc
                d = Dictionary(dict="core")
                _dictionary.clear()
                _dictionary[pid] = d
    return d


class _Sudachi:
    """A SudachiPy tokenizer for one split mode, plus the POS table; one per thread."""

    MAX_CHARS = 12_000  # 4 bytes/char at most in UTF-8: always under Sudachi's 49,149-byte limit

    def __init__(self, mode: str) -> None:
        from sudachipy import SplitMode

        d = _sudachi_dictionary()
        self.mode_a = SplitMode.A
        self.tokenizer = d.tokenizer(getattr(SplitMode, mode), fields={"pos", "normalized_form", "split_a"})
        top: list[str] = []
        while (pos := d.pos_of(len(top))) is not None:
            top.append(pos[0])
        self.pos_top = top

    def morphemes(self, text: str) -> Iterator[tuple[int, Any]]:
        """(offset of the chunk in ``text``, morpheme) pairs; ``m.begin()`` is chunk-relative."""
        offset = 0
        for chunk in _chunks(text, self.MAX_CHARS):
            for m in self.tokenizer.tokenize(chunk):
                yield offset, m
            offset += len(chunk)


_CHUNK_CUTS = re.compile(r"[。！？!?\n]+|\s+")


def _chunks(text: str, size: int) -> Iterator[str]:
    """Cut ``text`` into pieces of at most ``size`` chars, after a sentence end or space if any."""
    start, n = 0, len(text)
    while n - start > size:
        window = text[start : start + size]
        cut = 0
        for m in _CHUNK_CUTS.finditer(window, size // 2):
            cut = m.end()
        end = start + (cut if cut else size)
        yield text[start:end]
        start = end
    if start < n:
        yield text[start:]


def _sudachi(mode: str) -> _Sudachi:
    cache = getattr(_local, "sudachi", None)
    if cache is None or cache[0] != os.getpid():
        cache = (os.getpid(), {})
        _local.sudachi = cache
    tok = cache[1].get(mode)
    if tok is None:
        tok = cache[1][mode] = _Sudachi(mode)
    return tok


def _stemmer(lang: str) -> Any:
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    st = stemmers.get(lang)
    if st is None:
        try:
            import Stemmer
        except ImportError as exc:  # pragma: no cover - dependency is required
            raise ImportError("Russian/English stemming needs PyStemmer: pip install PyStemmer") from exc
        st = stemmers[lang] = Stemmer.Stemmer({"ru": "russian", "en": "english"}[lang])
    return st


# --- the analyzer -----------------------------------------------------------------------------


class Analyzer:
    """Turns text into index or query tokens for BM25, as an ``AnalyzerConfig`` says (the one
    description of the analysis: ``Analyzer.from_config(cfg.analyzer)``; keyword settings build
    that config: ``Analyzer(route="ja")``).

    The settings (``AnalyzerConfig``): ``split_mode`` (Sudachi ``A`` short units, ``B``, ``C``
    long units); ``expand_a_units`` (at index time a unit Sudachi splits into several A units
    also emits them, analysis-sudachi's "search mode"; queries never expand);
    ``use_normalized_form`` (``行き`` -> ``行く``); ``stop_pos`` (first-level Sudachi parts of
    speech dropped); ``stem`` (Snowball stems for Russian and Latin words; lower-cased either
    way); ``keep_identifiers`` (``ATL-1655``, ``#412``, ``v2.3.1``, ``PR 88`` also emitted whole,
    canonical and lower-cased); ``route`` (``script``: each script run by its own language;
    ``ja``/``ru``/``en``: the whole text through that one analyzer).

    The peer baseline (BASELINE.md) is ``Analyzer(route=LANG, expand_a_units=False,
    keep_identifiers=False)``: Sudachi mode C, normalized form, particles / auxiliaries /
    punctuation dropped for ja; Snowball stems of lower-cased ``\\w+`` words for ru/en.
    """

    __slots__ = ("cfg",)

    def __init__(self, cfg: Any = None, /, **settings: Any) -> None:
        if cfg is not None and (settings or not isinstance(cfg, AnalyzerConfig)):
            raise TypeError("Analyzer takes one AnalyzerConfig, or keyword settings (split_mode=..., route=...)")
        self.cfg = cfg if cfg is not None else AnalyzerConfig(**settings)

    @classmethod
    def from_config(cls, cfg: Any) -> "Analyzer":
        """The analyzer an ``AnalyzerConfig`` describes."""
        return cls(cfg)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Analyzer) and other.cfg == self.cfg

    def __hash__(self) -> int:
        return hash(self.cfg)

    def __repr__(self) -> str:
        return f"Analyzer({self.cfg!r})"

    split_mode = property(lambda self: self.cfg.split_mode)
    expand_a_units = property(lambda self: self.cfg.expand_a_units)
    use_normalized_form = property(lambda self: self.cfg.use_normalized_form)
    stop_pos = property(lambda self: self.cfg.stop_pos)
    stem = property(lambda self: self.cfg.stem)
    keep_identifiers = property(lambda self: self.cfg.keep_identifiers)
    route = property(lambda self: self.cfg.route)

    def index_tokens(self, text: str) -> list[str]:
        """Tokens of a document (with A-unit expansion when ``expand_a_units``)."""
        return self._tokens(text, expand=self.expand_a_units and self.split_mode != "A")

    def query_tokens(self, text: str) -> list[str]:
        """Tokens of a query (never A-unit expansion)."""
        return self._tokens(text, expand=False)

    def params(self) -> dict[str, Any]:
        """The analyzer's identity as plain JSON data: its config and ``ANALYZER_VERSION``."""
        return {"analyzer_version": ANALYZER_VERSION, **_to_plain(self.cfg)}

    # -- internals --

    def _tokens(self, text: str, *, expand: bool) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"Analyzer expects str text, got {type(text).__name__}")
        text = normalize(text)
        out: list[str] = []
        if not self.keep_identifiers:
            self._plain(text, expand, out)
            return out
        pos = 0
        for start, end, ident in _iter_ids(text):
            self._plain(text[pos:start], expand, out)
            out.append(ident.lower())
            self._words(ident, "en", out)
            pos = end
        self._plain(text[pos:], expand, out)
        return out

    def _plain(self, text: str, expand: bool, out: list[str]) -> None:
        if not text:
            return
        if self.route != "script":
            self._analyze(self.route, text, expand, out)
            return
        for lang, a, b in _run_spans(text):
            self._analyze(lang, text[a:b], expand, out)

    def _analyze(self, lang: str, text: str, expand: bool, out: list[str]) -> None:
        if lang == "ja":
            self._japanese(text, expand, out)
        else:
            self._words(text, lang, out)

    def _words(self, text: str, lang: str, out: list[str]) -> None:
        words = _WORD_RE.findall(text.lower())
        if words and self.stem:
            words = _stemmer(lang).stemWords(words)
        out.extend(words)

    def _japanese(self, text: str, expand: bool, out: list[str]) -> None:
        sud = _sudachi(self.split_mode)
        pos_top, stop, norm = sud.pos_top, self.stop_pos, self.use_normalized_form
        for _, m in sud.morphemes(text):
            if pos_top[m.part_of_speech_id()] in stop:
                continue
            tok = (m.normalized_form() if norm else m.surface()).lower()
            if tok:
                out.append(tok)
            if expand and m.end() - m.begin() > 1:
                parts = m.split(sud.mode_a)
                if len(parts) > 1:
                    for p in parts:
                        if pos_top[p.part_of_speech_id()] in stop:
                            continue
                        sub = (p.normalized_form() if norm else p.surface()).lower()
                        if sub and sub != tok:
                            out.append(sub)


_CONTENT_STOP = ("助詞", "助動詞", "補助記号", "空白")
_HIRAGANA_ONLY = re.compile("[\u3040-\u309f\u30fc]+")


def content_words(text: str) -> list[str]:
    """Split a (Japanese) phrase at particles, auxiliaries, punctuation and spaces.

    Hiragana-only words other than nouns (``する``, ``つい`` of ``について``) separate pieces too.

    Returns the surface forms (after NFKC) of the contiguous stretches left between them,
    de-duplicated in order: ``満月の周期の計算`` -> ``['満月', '周期', '計算']``. Identifiers
    (``ATL-1655``) stay whole pieces of their own. Used to retry a zero-hit phrase (SPEC T5).
    """
    text = normalize(text)
    pieces: dict[str, None] = {}

    def add(piece: str) -> None:
        piece = piece.strip()
        if piece:
            pieces.setdefault(piece, None)

    def phrase(segment: str) -> None:
        if not segment.strip():
            return
        sud = _sudachi("C")
        span_start = span_end = None
        for offset, m in sud.morphemes(segment):
            top = sud.pos_top[m.part_of_speech_id()]
            if top in _CONTENT_STOP or (top != "名詞" and _HIRAGANA_ONLY.fullmatch(m.surface())):
                if span_start is not None:
                    add(segment[span_start:span_end])
                span_start = None
                continue
            if span_start is None:
                span_start = offset + m.begin()
            span_end = offset + m.end()
        if span_start is not None:
            add(segment[span_start:span_end])

    pos = 0
    for start, end, _ in _iter_ids(text):
        phrase(text[pos:start])
        add(text[start:end])
        pos = end
    phrase(text[pos:])
    return list(pieces)


__all__ = [
    "Analyzer",
    "content_words",
    "detect_language",
    "canonical_identifier",
    "extract_identifiers",
    "find_identifiers",
    "IdentifierMention",
    "identifier_forms",
    "identifier_mentions",
    "normalize",
    "script_runs",
    "without_identifiers",
]
