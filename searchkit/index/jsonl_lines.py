"""An index version's JSON-lines files (``records.jsonl``, ``passages.jsonl``) read into objects,
reusing the objects of a version read before for every line whose bytes are the same.

A server loads each new version of its history index after a refresh (issue 41 item 9); between
two versions almost every line is unchanged, and parsing ~140k lines again took 3.7 s at 100k
passages, holding the interpreter while calls wait. ``read_lines`` keys each line by its digest
(BLAKE2b, 16 bytes) and takes the object made from the same bytes last time; the objects are
frozen dataclasses, so two versions share them safely. The answers are those of a fresh read: the
same bytes make the same object.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Mapping

from searchkit.errors import DataError
from searchkit.util import open_regular, problem_of

LineObjects = dict[bytes, Any]
"""A file's objects by their line's digest (``read_lines``' second answer, its ``known`` next time)."""


def read_lines(path: Path, shown: str, make: Callable[[Any], Any],
               known: Mapping[bytes, Any] | None = None) -> tuple[list[Any], LineObjects]:
    """The objects ``make(json.loads(line))`` of every line of ``path`` (``shown`` names the index
    in errors), taking ``known[digest]`` for a line read before; and this file's objects by digest.
    A damaged line or an unreadable file is a one-line ``DataError`` that never quotes the line."""
    out: list[Any] = []
    mine: LineObjects = {}
    known = known or {}
    try:
        with open_regular(path, "rb") as fh:  # a regular file only: a FIFO is refused, never read
            for number, raw in enumerate(fh, 1):
                key = hashlib.blake2b(raw, digest_size=16).digest()
                obj = known.get(key)
                if obj is None:
                    line = raw.decode("utf-8")  # undecodable: "unreadable", as a text read says
                    try:
                        obj = make(json.loads(line))
                    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
                        why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__  # never the line
                        raise DataError(
                            f"{shown}: {path.name} line {number} is damaged ({why}); rebuild the index"
                        ) from None
                mine[key] = obj
                out.append(obj)
    except FileNotFoundError:
        raise DataError(f"{shown}: {path.name} is missing; the index is damaged, rebuild it") from None
    except DataError as exc:
        if exc.path != str(path):  # a damaged line, said above
            raise
        raise DataError(f"{shown}: {path.name} is unreadable ({problem_of(exc)[:100]}); rebuild the index") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or type(exc).__name__
        raise DataError(f"{shown}: {path.name} is unreadable ({str(why)[:100]}); rebuild the index") from None
    return out, mine
