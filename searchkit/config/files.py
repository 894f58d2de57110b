"""Reading a config file: a regular file of bounded size, UTF-8, JSON without a key given twice;
every failure a ``ConfigError`` that names the file, never its content."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from searchkit.errors import DataError
from searchkit.config.base import ConfigError
from searchkit.util import problem_of, parse_json_text, read_regular_bytes


MAX_CONFIG_BYTES = 64 << 20
"""The largest config file read (an export with its replay block included)."""


def read_config_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a config file: a regular file only (never a FIFO or a device: no hang), at most
    ``MAX_CONFIG_BYTES``. Raises :class:`ConfigError` naming the file and the problem, never its
    content (issue 27, items 8 and 12)."""
    p = Path(path)
    try:
        return read_regular_bytes(p, limit=MAX_CONFIG_BYTES)
    except DataError as exc:
        raise ConfigError(f"config file {p} is {problem_of(exc)}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {p}: {exc.strerror or type(exc).__name__}") from None


def read_config_text(path: str | os.PathLike[str]) -> str:
    """:func:`read_config_bytes` as UTF-8 text (:class:`ConfigError` when it is not)."""
    data = read_config_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {Path(path)} is not UTF-8 text (bad byte at offset {exc.start})") from None


def parse_config_json(text: str, where: str | None = None) -> Any:
    """The JSON of a config (or export) file; a key given twice in one object is an error. Every
    failure is a :class:`ConfigError` after ``where`` that says what is wrong and where (line and
    column), never quoting the text: bad JSON, nesting too deep, a number too long to read."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except ConfigError as exc:
        raise ConfigError(exc.problems, where=where) from None
    except (ValueError, RecursionError):
        try:
            parse_json_text(text, where or "config")
        except DataError as exc:
            raise ConfigError(f"config is {problem_of(exc)}", where=where) from None
        raise ConfigError("config is not usable JSON", where=where) from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a key given twice in one object is an error (JSON would keep the last
    silently, so a config could say two things and mean one)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError(f"config key {key[:60]!r} is given twice in one object; give it once")
        out[key] = value
    return out
