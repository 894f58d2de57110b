"""JSON as searchkit writes it: strict RFC 8259 JSON that any standard parser reads (issue 31 item 2).

Python's ``json`` writes a float NaN or infinity as a bare ``NaN`` / ``Infinity``, which JSON does
not have: ``jq``, JavaScript's ``JSON.parse``, Go, Rust's serde and ``json.loads(...,
parse_constant=...)`` refuse such a file. A figure that is undefined (nDCG@10 with no answerable
query, AUROC without unanswerable ones, a precision with nothing flagged) is written as ``null``
instead. Every JSON document searchkit writes or prints for the research loop (``metrics.json``
and the rest of a run folder, ``eval --json``, ``compare --json``, ``gate --json``, baselines,
``runs ls --json``, ``tune``'s outputs) goes through ``dumps``.

Reading stays lenient: files written before this (with bare ``NaN``) still load, since
``searchkit.util.parse_json_text`` is ``json.loads``, which accepts them.

Text as searchkit shows it (issue 39 item 3): ``safe_text`` is the one sanitiser of what leaves a
tool (line breaks and tabs kept, every other C0/C1 control and DEL removed, a run of them leaving
one space, the bidi controls removed) and ``safe_data`` applies it to every string of an answer's
data. It sits here, in the bottom layer, so that every layer may use it; ``searchkit.tools.base``
applies it to every tool's ``render`` and ``to_dict``, ``searchkit.tools.terminal`` builds its
one-line form on the same character classes.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["dumps", "finite", "safe_data", "safe_text"]


def finite(value: object) -> Any:
    """``value`` with every non-finite float (NaN, ±infinity; numpy's too) replaced by ``None``,
    numpy scalars and arrays turned into Python numbers and lists, and tuples into lists.
    Mappings keep their keys and order; anything else is returned as it is."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays, without importing numpy
    if callable(tolist) and type(value).__module__ == "numpy":
        return finite(tolist())
    if hasattr(value, "items") and callable(value.items):  # other mappings (MappingProxyType, ...)
        return {k: finite(v) for k, v in value.items()}
    return value


def dumps(value: object, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``value`` as strict JSON text (no trailing newline): non-finite floats become ``null``
    (``finite``), non-ASCII text stays as it is, and ``allow_nan=False`` makes any NaN that could
    still slip through an error rather than a file other tools refuse."""
    return json.dumps(finite(value), ensure_ascii=False, indent=indent, sort_keys=sort_keys, allow_nan=False)


# --------------------------------------------------------------------------- text as searchkit shows it

LINE_BREAKS = re.compile("\r\n|[\r\n\u2028\u2029]")
"""A line break in any of its forms (CR LF, CR, LF, U+2028, U+2029)."""

CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
"""Runs of C0/C1 controls, DEL and the Unicode line/paragraph separators (line breaks and tabs too)."""

BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""The invisible bidi formatting characters: U+061C, U+200E, U+200F (marks), U+202A-U+202E
(embeddings, overrides), U+2066-U+2069 (isolates)."""

_CONTROLS_IN_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]+")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\r\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe_text(text: object) -> str:
    """``text`` as searchkit shows it anywhere (a terminal, ``--json``, MCP, the HTTP API; issue
    39 item 3): line breaks and tabs are kept (layout; every line break is ``\\n``), every other
    control is removed (C0, C1, DEL: a run of them leaves one space, so the words around it stay
    apart), and the bidi controls are removed (U+061C, U+200E, U+200F, U+202A-U+202E,
    U+2066-U+2069: text shows in the order it is stored, ``exe.txt`` never reads ``txt.exe``)."""
    text = str(text)
    if _UNSAFE.search(text) is None:
        return text
    lines = LINE_BREAKS.sub("\n", BIDI_CONTROLS.sub("", text))
    return _CONTROLS_IN_TEXT.sub(" ", lines)


def safe_data(value: object) -> Any:
    """``value`` (JSON-able data: a tool answer's ``to_dict()``) with ``safe_text`` applied to every
    string, mapping keys included; lists stay lists, tuples tuples, other values as they are."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_data(v) for v in value)
    return value
