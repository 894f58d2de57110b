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
"""
from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "finite"]


def finite(value: Any) -> Any:
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


def dumps(value: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``value`` as strict JSON text (no trailing newline): non-finite floats become ``null``
    (``finite``), non-ASCII text stays as it is, and ``allow_nan=False`` makes any NaN that could
    still slip through an error rather than a file other tools refuse."""
    return json.dumps(finite(value), ensure_ascii=False, indent=indent, sort_keys=sort_keys, allow_nan=False)
