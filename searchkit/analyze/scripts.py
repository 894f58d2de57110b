"""Scripts and language: NFKC with the identifier-friendly fixes, script runs, the language of a text.

Part of ``searchkit.analyze`` (import from there).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

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


