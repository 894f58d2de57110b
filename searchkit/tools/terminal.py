"""Text on its way to a terminal: no control character reaches it (issue 27 item 16).

A title, an author or a comment body is data: an ESC or CSI sequence in it could move the cursor,
rewrite lines above, set the window title or hide text; a BEL rings; a bidi override (U+202E) shows
text reversed, so ``exe.txt`` can read ``txt.exe``. The tools strip them on the way out, the stores
keep what was imported. The one sanitiser is ``searchkit.strict_json.safe_text`` (a bottom-layer
module, so every layer can use it): ``searchkit.tools.base.Tool`` applies it (``safe_data``) to
every tool answer's ``render`` and ``to_dict`` (issue 39 item 3); the helpers below are its
one-line and JSON forms.

- ``CONTROL_CHARS``: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
- ``BIDI_CONTROLS``: the invisible bidi marks, embeddings, overrides and isolates (U+061C, U+200E,
  U+200F, U+202A-U+202E, U+2066-U+2069).
- ``one_line(text)``: both removed, a run of controls (a line break too) becomes one space: a card's
  or a result's one line can never be broken or forged (history and task search use it).
- ``plain_text(text)`` (``safe_text``): the same, but line breaks (``\\n``, ``\\r\\n``, ``\\r``, U+2028, U+2029) are kept as
  ``\\n`` and a tab stays a tab: a comment's body as lines.
- ``json_text(s)``: a JSON document (``json.dumps(..., ensure_ascii=False)``) with the controls JSON
  leaves raw (C1, DEL, the separators, the bidi controls) written as ``\\uXXXX`` escapes: the same
  JSON value, nothing raw on the terminal.
"""
from __future__ import annotations

import re

from searchkit.strict_json import BIDI_CONTROLS, CONTROL_CHARS, safe_text

__all__ = ["BIDI_CONTROLS", "CONTROL_CHARS", "json_text", "one_line", "plain_text"]

_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def one_line(text: object) -> str:
    """``text`` as part of one terminal line: controls and line breaks become one space, bidi
    controls go; leading and trailing spaces are trimmed."""
    return CONTROL_CHARS.sub(" ", BIDI_CONTROLS.sub("", str(text))).strip()


plain_text = safe_text
"""``text`` for the terminal, its lines kept (``\\n``) and its tabs: other controls become a
space, bidi controls go (``searchkit.strict_json.safe_text``, the one sanitiser)."""


def json_text(document: str) -> str:
    """A JSON document with every control ``json.dumps(ensure_ascii=False)`` leaves raw escaped as
    ``\\uXXXX`` (they only occur inside strings, so the JSON value is unchanged)."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
