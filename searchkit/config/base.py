"""The ground of the config tree: the schema versions, ``ConfigError``, each knob's allowed values
(``knob``: ranges, choices, registries) and their checks, the ``Section`` base, and how a message
shows a value (never a secret)."""
from __future__ import annotations

import contextvars
import dataclasses
import math
import re
from dataclasses import field
from typing import Any, ClassVar, Mapping, Protocol, Sequence

from searchkit.credentials import shown_url, url_secrets
from searchkit import registries
from searchkit.errors import InputError
from searchkit.ingest.redact import redact


SCHEMA_VERSION = 5
"""2: ``fusion.weights`` by retriever name (was ``bm25_weight`` / ``dense_weight``), ``analyzer.route``.
3: ``fusion.speaker`` on by default (a version-2 file without it keeps it off).
4: ``fusion.date`` on by default (0.5) and ``fusion.speaker``'s default re-picked (0.25 -> 0.3); a
version-3 file without them keeps date off and speaker at 0.25.
5: ``rerank`` on by default for Japanese queries (``rerank.languages``, depth 10); a version-4 file
keeps the keys it leaves out at their version-4 defaults (off, depth 30, every language)."""

INDEX_SCHEMA_VERSION = 2
"""The ``schema_version`` at which a key that decides what an index stores last changed meaning
(part of ``SearchConfig.index_fingerprint``): a version that re-means only query-time keys keeps
every index built before it."""


class ConfigError(InputError):
    """A config file or dict that does not fit the schema; the message names the key.

    ``problems`` lists every problem found (one string each, naming its dotted key); the message
    is that list on one line, after ``where`` (the file) when given."""

    code: ClassVar[str] = "config"

    def __init__(self, message: str | Sequence[str], where: str | None = None):
        problems = (message,) if isinstance(message, str) else tuple(message)
        self.problems: tuple[str, ...] = problems
        self.where = where
        if len(problems) == 1:
            text = problems[0]
        else:
            text = f"{len(problems)} problems: " + "; ".join(problems)
        super().__init__(f"{where}: {text}" if where else text)


# --------------------------------------------------------------------------- field metadata

_OMIT_DEFAULT = {"omit_default": True}
"""Field metadata: left out of ``to_dict`` / ``to_json`` / ``fingerprint`` while it holds its default, so
adding the field changes neither the shipped config's JSON nor its fingerprint."""


def _knob(default: object, *, lo: float | None = None, hi: float | None = None, above: float | None = None,
          choices: tuple[str, ...] | None = None, registry: str | None = None, omit_default: bool = False,
          index: bool = False) -> Any:
    """A dataclass field with its allowed values: ``lo <= x <= hi``, ``x > above``, ``x in choices``,
    or (for a string or each string of a list, or each key of a mapping) a name in ``registry`` (a
    key of ``searchkit.registries.BUILTIN``). ``index``: the value decides what an index stores (it is part of
    ``SearchConfig.index_fingerprint``)."""
    meta: dict[str, Any] = {}
    if index:
        meta["index"] = True
    if lo is not None:
        meta["lo"] = lo
    if hi is not None:
        meta["hi"] = hi
    if above is not None:
        meta["above"] = above
    if choices is not None:
        meta["choices"] = tuple(choices)
    if registry is not None:
        meta["registry"] = registry
    if omit_default:
        meta["omit_default"] = True
    return field(default=default, metadata=meta)


def registry_names(what: str) -> tuple[str, ...]:
    """The sorted names registered in the registry ``what`` (a key of ``searchkit.registries.BUILTIN``),
    read each time, so a variant registered at run time is accepted. The registries live with what they
    register and hand themselves to ``searchkit.registries`` when imported; the config reads them there
    and imports nothing above it (before a registry's module is imported its names are the built-in ones)."""
    return registries.names(what)


_DEFER: contextvars.ContextVar[bool] = contextvars.ContextVar("searchkit_config_defer", default=False)
"""True while ``from_dict`` builds a tree: sections then skip their own checks, and the whole tree
is checked once at the end, so every problem is listed together."""


class _Checked(Protocol):
    """What ``_check_now`` checks: a section or spec that lists its problems."""

    def problems(self) -> list[str]: ...


def _check_now(obj: _Checked) -> None:
    if _DEFER.get():
        return
    problems = obj.problems()
    if problems:
        raise ConfigError(problems)


def _field_problems(obj: Any, prefix: str) -> list[str]:
    """Problems of ``obj``'s fields against their metadata (ranges, choices, registries)."""
    out: list[str] = []
    for f in dataclasses.fields(obj):
        m = f.metadata
        value = getattr(obj, f.name)
        key = f"{prefix}.{f.name}" if prefix else f.name
        if value is None:
            continue
        if isinstance(value, Mapping):
            out.extend(_mapping_problems(key, value, m))
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                out.append(f"{key} must be a finite number, got {value!r}")
                continue
            lo, hi, above = m.get("lo"), m.get("hi"), m.get("above")
            if lo is not None and hi is not None and not lo <= value <= hi:
                out.append(f"{key} must be within [{lo:g}, {hi:g}], got {value!r}")
            elif lo is not None and hi is None and value < lo:
                out.append(f"{key} must be at least {lo:g}, got {value!r}")
            elif above is not None and not value > above:
                out.append(f"{key} must be greater than {above:g}, got {value!r}")
        if isinstance(value, tuple) and value and all(isinstance(v, float) for v in value):
            for i, v in enumerate(value):
                if not math.isfinite(v):
                    out.append(f"{key}[{i}] must be a finite number, got {v!r}")
        valid = m.get("choices")
        what = m.get("registry")
        if valid is None and what is not None:
            valid = registry_names(what)
        if valid is None:
            continue
        choices: Sequence[str] = valid

        def bad(k: str, v: object, what: str | None = what, valid: Sequence[str] = choices) -> str:
            shown = (_shown_str(v) if isinstance(v, str) else None) or "a value (not shown)"
            if what is None:
                return f"{k} must be one of {list(valid)}, got {shown}"
            return f"{k}: {shown} is not a known {what}; valid: {', '.join(valid)}"

        if isinstance(value, str):
            if value not in valid:
                out.append(bad(key, value))
        elif isinstance(value, tuple):
            seen: set[str] = set()
            for i, v in enumerate(value):
                if v not in valid:
                    out.append(bad(f"{key}[{i}]", v))
                elif v in seen:
                    out.append(f"{key}[{i}] repeats {v!r}")
                seen.add(v)
    return out


def _mapping_problems(key: str, value: Mapping[str, Any], m: Mapping[str, Any]) -> list[str]:
    """A name -> number mapping: names from the field's registry, numbers within its range."""
    out = []
    what = m.get("registry")
    valid = registry_names(what) if what is not None else None
    for name, v in value.items():
        k = f"{key}.{name}"
        if valid is not None and name not in valid:
            out.append(f"{k}: {name!r} is not a known {what}; valid: {', '.join(valid)}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            out.append(f"{k} must be a finite number, got {v!r}")
        elif m.get("lo") is not None and v < m["lo"]:
            out.append(f"{k} must be at least {m['lo']:g}, got {v!r}")
    return out


class _Section:
    """Shared by the sections of the tree: ``problems()`` and the check in ``__post_init__``."""

    KEY: ClassVar[str] = ""
    RETRIEVER: ClassVar[bool] = False
    """True for a retriever's section (its ``enabled`` says whether the retriever runs)."""
    EMBEDDER: ClassVar[bool] = False
    """True for the section of a retriever that embeds (``RetrieverSpec.embeds``): it names the embedder,
    which the Searcher's embedder (the reranker's ``sentence_maxsim``) is while the retriever runs."""

    def problems(self) -> list[str]:
        """Every problem of this section, each naming its dotted key (empty: valid)."""
        return _field_problems(self, self.KEY) + self._rules()

    def _rules(self) -> list[str]:
        return []

    def __post_init__(self) -> None:
        _check_now(self)


Section = _Section
"""The base of a config section (a frozen dataclass with a ``KEY``); a retriever's sets ``RETRIEVER =
True``, and one registered by its ``RetrieverSpec.config`` becomes part of every config
(``register_section``). Its keys are made with ``knob``."""
knob = _knob


_URL = re.compile(r"^https?://[^/\s]+")


def _shown_url(url: str) -> str:
    """A URL as a message may show it (no user name, password or query values; issue 27 item 5)."""
    return shown_url(url)


def _url_problems(key: str, url: str | None) -> list[str]:
    """A URL holding a credential (``user:password@``, a key in its query string) is refused,
    naming ``key`` and never the credential: the key belongs in ``api_key_env``."""
    if not url:
        return []
    return [f"{key} holds {what}: credentials never go in a URL; put the API key in an environment variable "
            "and name it in api_key_env" for what in url_secrets(url)]


def _join(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


MAX_INT = 2 ** 53
"""The largest integer a config holds (the largest a JSON reader keeps exactly): a 5,000-digit
number is refused with one line, never a traceback (issue 27, item 13)."""

_SHOWN_CHARS = 40


def _tname(value: object) -> str:
    """What a message shows of a bad value: its type, and the value itself only when it is a short
    scalar that does not look like a secret (a list or object is never shown: the file may not be a
    config at all; issue 27, item 8)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"bool {'true' if value else 'false'}"
    if isinstance(value, int) and abs(value) > MAX_INT:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    if isinstance(value, (int, float)):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        shown = _shown_str(value)
        return f"str {shown}" if shown else f"a string of {len(value)} characters (not shown)"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, Mapping):
        return "a JSON object"
    return type(value).__name__


def _shown_str(value: str, limit: int = _SHOWN_CHARS) -> str | None:
    """``repr(value)`` when it is short and nothing in it looks like a secret, else None."""
    if len(value) > limit or any(not c.isprintable() for c in value):
        return None
    if redact(value) != value or re.search(r"(?=\S*\d)(?=\S*[A-Za-z])\S{16,}", value):
        return None
    return repr(value)
