"""Cutting record text into passages of at most ``max_chars`` characters (SPEC H9)."""
from __future__ import annotations

import re

from searchkit.errors import InputError
from searchkit.records import Passage, Record

MIN_MAX_CHARS = 50

# Cut points, strongest first; a cut falls at the end of each match, so the separator stays
# with the text before it.
_LEVELS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\n[^\S\n]*\n\s*"),  # paragraph: a blank line
    re.compile(  # sentence end: . ! ? … before a space, 。！？ anywhere, or a newline
        r"(?<![.!?…])[.!?…]++[\"'»”’)\]]*+\s+|[。！？]+[」』）)\"”’]*\s*|\n\s*"
    ),
    re.compile(r"\s+"),  # whitespace
)


def split_passages(text: str, max_chars: int = 1500) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` that cover ``text`` in order, each at most ``max_chars``.

    Paragraphs (split at blank lines) are packed greedily while they fit; a paragraph too long
    on its own is cut the same way at sentence ends (``. ! ? 。 ！ ？`` and newlines), a sentence
    too long at whitespace, and only a run without any of these is cut hard at ``max_chars``.
    So a passage never straddles a paragraph boundary unless it holds whole paragraphs. Spans
    are non-empty and contiguous; empty text gives ``[]``.

    Raises:
        ValueError: ``max_chars`` is below 50.
    """
    if not isinstance(text, str):
        raise TypeError(f"split_passages expects str text, got {type(text).__name__}")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < MIN_MAX_CHARS:
        raise InputError(f"max_chars must be an int >= {MIN_MAX_CHARS}, got {max_chars!r}")
    if not text:
        return []
    return _split(text, 0, len(text), 0, max_chars)


def _split(text: str, start: int, end: int, level: int, max_chars: int) -> list[tuple[int, int]]:
    if end - start <= max_chars:
        return [(start, end)]
    if level == len(_LEVELS):
        return [(a, min(a + max_chars, end)) for a in range(start, end, max_chars)]
    cuts = [m.end() for m in _LEVELS[level].finditer(text, start, end) if start < m.end() < end]
    bounds = [start, *cuts, end]
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for a, b in zip(bounds, bounds[1:]):
        if cur is not None and b - cur[0] <= max_chars:
            cur = (cur[0], b)
            continue
        if cur is not None:
            out.append(cur)
            cur = None
        if b - a <= max_chars:
            cur = (a, b)
        else:
            out.extend(_split(text, a, b, level + 1, max_chars))
    if cur is not None:
        out.append(cur)
    return out


def make_passages(record: Record, max_chars: int = 1500, title_prefix: bool = True) -> list[Passage]:
    """The passages of ``record``: one per span of ``split_passages(record.text, max_chars)``.

    With ``title_prefix`` and a title, a passage's text is ``title + "\\n" + slice``; ``start``
    and ``end`` always refer to ``record.text``. A record with empty text but a title gets one
    passage holding the title alone (``start == end == 0``), so it stays findable.
    """
    if not isinstance(record, Record):
        raise TypeError(f"make_passages expects a Record, got {type(record).__name__}")
    text, title = record.text, record.title
    spans = split_passages(text, max_chars)
    if not spans:
        if title:
            return [Passage(record.id, 0, title, 0, 0)]
        return []
    prefix = f"{title}\n" if title_prefix and title else ""
    return [Passage(record.id, i, prefix + text[a:b], a, b) for i, (a, b) in enumerate(spans)]


__all__ = ["make_passages", "split_passages"]
