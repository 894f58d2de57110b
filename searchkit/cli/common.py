"""What the verbs of the ``searchkit`` command share: the one-line error, config loading, and
argument checks."""
from __future__ import annotations

import math

from searchkit.config import SearchConfig
from searchkit.config_file import load_config as load
from searchkit.errors import InputError
from searchkit.records import KINDS
from searchkit.util import parse_iso


def load_config(path: str | None):
    """The config every ``--config`` names: a bare config JSON or an exported ``NAME.vN.json``
    (``searchkit config export``), read, migrated and checked by the one loader,
    :func:`searchkit.config_file.load_config` (an export edited after export is refused); the shipped
    default when ``path`` is None."""
    if not path:
        return SearchConfig()
    return load(path)


def fmt(v: object) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4f}"
    return str(v)


def shown(value: str, limit: int = 60) -> str:
    return repr(value) if len(value) <= limit else repr(value[: limit - 3] + "...")


def kinds_arg(value: str | None) -> tuple[str, ...] | None:
    """``--kinds a,b`` checked against the record kinds (``doc`` for dataset documents)."""
    if value is None:
        return None
    kinds = tuple(k.strip() for k in value.split(","))
    valid = KINDS + ("doc",)
    bad = [k for k in kinds if k not in valid]
    if not value.strip() or bad:
        raise InputError(f"--kinds: unknown kind {shown(bad[0] if bad else value)}; valid kinds: {', '.join(valid)}", usage=True)
    return tuple(dict.fromkeys(kinds))


def date_arg(flag: str, value: str | None) -> str | None:
    """An ISO date (``YYYY-MM-DD``) or date-time for ``flag``."""
    if value is None:
        return None
    parsed = parse_iso(value)
    if parsed is not None:
        return parsed.isoformat()
    raise InputError(f"{flag}: expected an ISO date (YYYY-MM-DD) or date-time, got {shown(value)}", usage=True)
