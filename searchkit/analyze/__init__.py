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
from typing import Any, Iterator

from searchkit.analyze.identifiers import (
    NON_ID_PREFIXES,
    NON_ID_WORDS,
    IdentifierMention,
    _iter_ids,
    canonical_identifier,
    extract_identifiers,
    find_identifiers,
    identifier_forms,
    identifier_mentions,
    without_identifiers,
)
from searchkit.analyze.scripts import (
    _WORD_RE,
    ANALYZER_VERSION,
    LANGUAGES,
    _run_spans,
    detect_language,
    normalize,
    script_runs,
)
from searchkit.config import AnalyzerConfig, _to_plain

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
    cache: tuple[int, dict[str, _Sudachi]] | None = getattr(_local, "sudachi", None)
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
    "ANALYZER_VERSION",
    "LANGUAGES",
    "NON_ID_PREFIXES",
    "NON_ID_WORDS",
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
