"""Whether a file's bytes are text, and in which encoding (SPEC H1, H2; part of ``searchkit.ingest.policy``).

``decode_text`` reads a byte-order mark, known binary signatures, ISO-2022-JP, UTF-8 (also with a
few stray bytes) and then lets charset-normalizer choose among the policy's encodings;
``binary_reason`` says why bytes are not text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from searchkit.ingest.policy.never_index import DEFAULT_POLICY


BINARY_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "PNG"), (b"GIF87a", 0, "GIF"), (b"GIF89a", 0, "GIF"), (b"\xff\xd8\xff", 0, "JPEG"),
    (b"%PDF-", 0, "PDF"), (b"PK\x03\x04", 0, "ZIP"), (b"PK\x05\x06", 0, "ZIP"), (b"PK\x07\x08", 0, "ZIP"),
    (b"\x1f\x8b", 0, "gzip"), (b"\xfd7zXZ\x00", 0, "xz"), (b"7z\xbc\xaf\x27\x1c", 0, "7-Zip"),
    (b"Rar!\x1a\x07", 0, "RAR"), (b"\x7fELF", 0, "ELF"), (b"SQLite format 3\x00", 0, "SQLite"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 0, "OLE (doc/xls)"), (b"ftyp", 4, "MP4/HEIC"), (b"OggS", 0, "Ogg"),
    (b"fLaC", 0, "FLAC"), (b"ID3", 0, "MP3"), (b"\x1a\x45\xdf\xa3", 0, "Matroska"), (b"wOFF", 0, "WOFF"),
    (b"wOF2", 0, "WOFF2"), (b"\xca\xfe\xba\xbe", 0, "Java class / Mach-O"), (b"\xcf\xfa\xed\xfe", 0, "Mach-O"),
    (b"II*\x00", 0, "TIFF"), (b"MM\x00*", 0, "TIFF"), (b"BZh", 0, "bzip2"), (b"\x28\xb5\x2f\xfd", 0, "zstd"),
)
"""Magic numbers of common binary formats: ``(bytes, offset, format)``."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\x00\x00\xfe\xff", "utf_32_be"), (b"\xff\xfe\x00\x00", "utf_32_le"), (b"\xef\xbb\xbf", "utf_8"),
    (b"\xfe\xff", "utf_16_be"), (b"\xff\xfe", "utf_16_le"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]")


@dataclass(frozen=True)
class Decoded:
    """What ``decode_text`` made of some bytes.

    Args:
        text: the decoded text, or None for binary data.
        encoding: the encoding it was decoded from (``utf_8``, ``cp1251``, ``utf_16_le``,
            ``iso2022_jp``, ...).
        reason: why the data is binary (None for text).
        replaced: how many invalid byte sequences were replaced by U+FFFD (0 but for UTF-8 text
            with a few stray bytes).
    """

    text: str | None
    encoding: str | None = None
    reason: str | None = None
    replaced: int = 0
    """Invalid byte sequences replaced by U+FFFD (UTF-8 text with a few stray bytes)."""


def _text_like(text: str, share: int = 100) -> bool:
    """No NUL, and at most one in ``share`` characters a control (C0 other than whitespace, C1, U+FFFD)."""
    if "\x00" in text:
        return False
    return len(_CONTROL.findall(text)) <= len(text) // share


def _halfwidth_kana_heavy(text: str) -> bool:
    """More than 30% of the non-ASCII characters (of the first 100,000) are half-width katakana."""
    wide = [ch for ch in text[:100_000] if ord(ch) > 0x7F]
    kana = sum(1 for ch in wide if 0xFF61 <= ord(ch) <= 0xFF9F)
    return bool(wide) and kana > 0.3 * len(wide)


def _ascii_with_nuls(data: bytes) -> bool:
    """True for ASCII bytes with stray NULs, which UTF-16 would misread as CJK.

    In UTF-16 text the code units without a NUL byte are non-ASCII characters (Cyrillic has a
    0x04 byte, kana 0x30 with a varied second byte, ...); when nearly all of them are two
    printable ASCII bytes, the data is ASCII with NULs in it, i.e. binary.
    """
    printable = range(0x20, 0x7F)
    sample = data[:65_536]
    units = [sample[i:i + 2] for i in range(0, len(sample) - 1, 2)]
    wide = [u for u in units if 0 not in u]
    if not wide:
        return False
    ascii_pairs = sum(1 for u in wide if u[0] in printable and u[1] in printable)
    return ascii_pairs >= 0.8 * len(wide)


_ISO2022_ESCAPES = re.compile(rb"\x1b(?:\$[@AB]|\$\([CDQ]|\([BIJ]|\.[AF]|N)")
_ISO2022_CODECS: tuple[str, ...] = ("iso2022_jp", "iso2022_jp_ext", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3")


def _iso2022(data: bytes) -> Decoded | None:
    """ISO-2022-JP text: 7-bit bytes that switch to JIS X 0208 / 0212 / 0213 with ``ESC $ B`` and
    back with ``ESC ( B`` (valid ASCII, so UTF-8 would read it as escape-sequence garbage)."""
    if max(data) >= 0x80 or not re.search(rb"\x1b\$(?:[@B]|\([DOPQ])", data):
        return None
    for codec in _ISO2022_CODECS:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        if "\x1b" not in text and _text_like(text):
            return Decoded(text, codec)
    return None


def _damaged_utf8(data: bytes) -> Decoded | None:
    """UTF-8 text with a few stray invalid bytes, decoded with U+FFFD in their place; else None.

    At least 99% of the bytes must lie in valid sequences (or the damage is one spot of at most
    4 bytes: a stray byte that also broke the character it fell into), and the rest must show it
    is UTF-8 (at least one valid multi-byte sequence): a legacy 8-bit text that is mostly ASCII
    (cp1252 ``café``) has none and is left to charset-normalizer. ``replaced`` counts the spots.
    """
    escaped = data.decode("utf-8", "surrogateescape")  # one lone surrogate per invalid byte
    runs = list(_STRAY.finditer(escaped))
    invalid = sum(len(r.group()) for r in runs)
    one_spot = bool(runs) and invalid <= 4 and runs[-1].end() - runs[0].start() <= 8
    if not runs or (invalid * 100 > len(data) and not one_spot):
        return None
    if not any(ord(ch) > 0x7F and not 0xDC80 <= ord(ch) <= 0xDCFF for ch in escaped):
        return None
    text = _STRAY.sub("\ufffd", escaped)
    if not _text_like(text, 20):
        return None
    return Decoded(text, "utf_8", replaced=1 if one_spot else len(runs))


_STRAY = re.compile("[\udc80-\udcff]+")


def decode_text(data: bytes, encodings: Sequence[str] | None = None) -> Decoded:
    """Decode the bytes of a file that may be text in any of ``encodings`` (H1), or say why not.

    In order: a byte-order mark (UTF-8/16/32) decides; a known binary signature (PNG, ZIP, PDF,
    ...) is binary; 7-bit text with ISO-2022-JP escapes (``ESC $ B`` ... ``ESC ( B``) is
    ISO-2022-JP; valid UTF-8 without NUL bytes is UTF-8 text; UTF-8 with a few stray invalid
    bytes (at most 1% of the bytes, and at least one valid multi-byte sequence) is UTF-8 with
    U+FFFD in their place (``Decoded.replaced``); otherwise charset-normalizer
    picks among ``encodings`` (default ``Policy.text_encodings``: UTF-16/32 with or without a
    BOM, cp1251, KOI8-R, Shift_JIS, EUC-JP, cp1252, ...), and its pick must read as text (no
    NUL, at most 1% control characters; 5% for UTF-8). Deterministic.
    """
    if not data:
        return Decoded("", "utf_8")
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                break
            if _text_like(text):
                return Decoded(text, encoding)
            break
    for magic, offset, fmt in BINARY_SIGNATURES:
        if data[offset:offset + len(magic)] == magic:
            return Decoded(None, None, f"{fmt} signature")
    nul = data.find(b"\x00")
    if nul < 0 and b"\x1b" in data:
        jis = _iso2022(data)
        if jis is not None:
            return jis
    utf8_error = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf8_error = f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8"
    else:
        if nul < 0:
            if _text_like(text, 20):
                return Decoded(text, "utf_8")
            return Decoded(None, None, "valid UTF-8, but more than 5% control characters")
    if nul < 0:
        damaged = _damaged_utf8(data)
        if damaged is not None:
            return damaged
    candidates = list(encodings if encodings is not None else DEFAULT_POLICY.text_encodings)
    if nul >= 0:  # only UTF-16/32 text has NUL bytes: on one side of each code unit
        quarter = len(data) // 4
        utf32 = len(data) % 4 == 0 and quarter > 0 and quarter in (data[3::4].count(0), data[0::4].count(0))
        even, odd = data[0::2].count(0), data[1::2].count(0)
        utf16 = len(data) % 2 == 0 and min(even, odd) <= 0.1 * max(even, odd) and not _ascii_with_nuls(data)
        candidates = [e for e in candidates if (utf16 and e.startswith("utf_16")) or (utf32 and e.startswith("utf_32"))]
    elif len(data) % 2:
        candidates = [e for e in candidates if not e.startswith(("utf_16", "utf_32"))]
    if candidates:
        from charset_normalizer import from_bytes  # a declared dependency; imported when needed

        fallback: Decoded | None = None
        for match in list(from_bytes(data, cp_isolation=candidates))[:5]:
            text = str(match).removeprefix("\ufeff")
            if not _text_like(text):
                continue
            # KOI8-R / cp1251 bytes also read as Shift_JIS half-width katakana: real Japanese
            # text rarely is mostly half-width katakana, so such a reading loses to the next one
            if not _halfwidth_kana_heavy(text):
                return Decoded(text, str(match.encoding))
            fallback = fallback or Decoded(text, str(match.encoding))
        if fallback is not None:
            return fallback
    if nul >= 0:
        return Decoded(None, None, f"NUL byte at offset {nul}")
    return Decoded(None, None, f"not text in any supported encoding ({utf8_error})")


def binary_reason(data: bytes) -> str | None:
    """Why these bytes are binary (see ``decode_text``), or None when they are text."""
    return decode_text(data).reason
