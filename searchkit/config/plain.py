"""The registered sections (``register_section``) and the tree as plain JSON data: ``_to_plain``
(what ``to_dict`` and the fingerprints read), ``_build`` (a tree from plain data, every problem
collected), ``_is_default``."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import types
import typing
from collections.abc import Mapping as _AbcMapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from searchkit.config.base import _DEFER, MAX_INT, ConfigError, _Section, _shown_str, _tname

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


_SECTIONS = ("analyzer", "passages", "bm25", "dense", "fusion", "rerank", "weak_match", "diversity", "query", "tasks")

SECTIONS: dict[str, type] = {}
"""The sections registered besides the shipped tree's (``register_section``), by key: the config
section a ``searchkit.retrievers.RetrieverSpec`` owns (``RetrieverSpec.config``)."""
_DEFAULTS: dict[type, Any] = {}


def register_section(cls: type) -> type:
    """Make ``cls`` a section of every ``SearchConfig``: read as ``config.<cls.KEY>``, given in JSON under
    ``cls.KEY``, checked with the tree, in the JSON Schema. A shipped section (a field of
    ``SearchConfig``) is left as it is. A registered section is left out of the JSON and of both
    fingerprints while every key holds its default, and must default to off (``enabled`` false):
    registering a retriever changes no config, index or ranking that does not turn it on."""
    if not (dataclasses.is_dataclass(cls) and issubclass(cls, _Section) and cls.KEY and cls.KEY.isidentifier()):
        raise ConfigError(f"a config section is a dataclass of searchkit.config._Section with a KEY, got {cls!r}")
    if cls.KEY in _SECTIONS or cls.KEY == "schema_version":
        return cls
    names = {f.name: f for f in dataclasses.fields(cls)}
    if cls.RETRIEVER and ("enabled" not in names or names["enabled"].default is not False):
        raise ConfigError(f"the retriever section {cls.KEY!r} must have an 'enabled' key that defaults to false")
    SECTIONS[cls.KEY] = cls
    _DEFAULTS.pop(cls, None)
    return cls


def unregister_section(key: str) -> None:
    """Forget a section ``register_section`` added (nothing for a shipped one)."""
    SECTIONS.pop(key, None)


def _default_of(cls: type) -> Any:
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = cls()
    return _DEFAULTS[cls]


def _is_default(section: DataclassInstance) -> bool:
    """Whether every field of ``section`` holds its class default (no instance is built: building
    one checks it, which reads the registries)."""
    def default(f: Any) -> Any:
        return f.default_factory() if f.default is dataclasses.MISSING else f.default

    return all(getattr(section, f.name) == default(f) for f in dataclasses.fields(section))


class _RunningRetrievers(dict):
    """Retriever name -> enabled; a retriever without a config section is taken as running."""

    def __missing__(self, key: str) -> bool:
        return True


# --------------------------------------------------------------------------- plain data


def _digest(obj: object) -> str:
    canon = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def _dataclass_to_plain(obj: Any, full: bool) -> dict[str, Any]:
    """``_to_plain`` of a dataclass: its fields, and a ``_TREE``'s registered sections."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if not full and f.metadata.get("omit_default") and value == f.default:
            continue
        out[f.name] = _to_plain(value, full)
    if getattr(type(obj), "_TREE", False):  # SearchConfig's registered sections: given ones (every one when full)
        for key in (SECTIONS if full else obj._given()):
            out[key] = _to_plain(getattr(obj, key), full)
    return out


def _to_plain(obj: object, full: bool = False) -> Any:
    """Plain JSON data; a field marked ``_OMIT_DEFAULT`` is left out while at its default unless ``full``."""
    if dataclasses.is_dataclass(obj):
        return _dataclass_to_plain(obj, full)
    if isinstance(obj, (tuple, list)):
        return [_to_plain(v, full) for v in obj]
    if isinstance(obj, _AbcMapping):
        return {str(k): _to_plain(v, full) for k, v in obj.items()}
    return obj


def _build(cls: type, data: object, path: str) -> Any:
    """``cls`` from plain data, every problem (types, unknown keys, values, contradictions) collected
    and raised as one :class:`ConfigError`."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path or 'config'} must be a JSON object, got {_tname(data)}")
    problems: list[str] = []
    token = _DEFER.set(True)
    try:
        obj = _from_plain(cls, data, path, problems)
    finally:
        _DEFER.reset(token)
    if hasattr(obj, "problems"):
        problems.extend(p for p in obj.problems() if p not in problems)
    if problems:
        raise ConfigError(problems)
    return obj


def _from_plain(cls: type, data: object, path: str, problems: list[str]) -> Any:
    """``cls`` from ``data``; a field that fails is reported into ``problems`` and left at its default."""
    where = path or "config"
    if not isinstance(data, Mapping):
        problems.append(f"{where} must be a JSON object, got {_tname(data)}")
        return cls()
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    extra_keys = list(SECTIONS) if cls.__dict__.get("_TREE", False) else []  # SearchConfig itself
    extra = {k: SECTIONS[k] for k in extra_keys if k in data}
    for name in sorted(set(data) - set(names) - set(extra), key=str):
        shown = _shown_str(str(name), 100)  # a key of the file: never a secret-shaped one
        key = (f"{path}.{name}" if path else str(name)) if shown is not None else None
        problems.append((f"unknown config key {key!r}" if key is not None else
                         f"unknown config key of {len(str(name))} characters (not shown) in {where}")
                        + f"; valid keys here: {sorted([*names, *extra_keys])}")
    kwargs = {}
    for name in names:
        if name not in data:
            continue
        key = f"{path}.{name}" if path else name
        try:
            kwargs[name] = _coerce(hints[name], data[name], key, problems)
        except ConfigError as exc:
            problems.extend(exc.problems)
    sections = {}
    for name, sec in extra.items():
        try:
            sections[name] = _coerce(sec, data[name], name, problems)
        except ConfigError as exc:
            problems.extend(exc.problems)
    try:
        obj = cls(**kwargs)
        if sections:
            object.__setattr__(obj, "_extra", sections)
        return obj
    except ConfigError as exc:
        problems.extend(exc.problems)
    except (TypeError, ValueError) as exc:
        problems.append(f"{where}: {exc}")
    return cls()


def _coerce(tp: object, value: object, key: str, problems: list[str]) -> Any:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a dataclass type (a field's type, never an instance)
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key} must be a JSON object, got {_tname(value)}")
        return _from_plain(tp, value, key, problems)
    origin = typing.get_origin(tp)
    if origin is _AbcMapping:
        if not isinstance(value, Mapping):
            raise ConfigError(f"config key {key!r} must be a JSON object (name -> value), got {_tname(value)}")
        (_kt, vt) = typing.get_args(tp)
        return MappingProxyType({str(k): _coerce(vt, v, f"{key}.{k}", problems) for k, v in value.items()})
    if origin is tuple:
        (inner, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"config key {key!r} must be a list, got {_tname(value)}")
        out: list[Any] = []
        bad: list[str] = []
        for i, v in enumerate(value):
            try:
                out.append(_coerce(inner, v, f"{key}[{i}]", problems))
            except ConfigError as exc:
                bad.extend(exc.problems)
        if bad:
            raise ConfigError(bad)
        return tuple(out)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return _coerce(arg, value, key, problems)
            except ConfigError:
                continue
        raise ConfigError(f"config key {key!r} has the wrong type {_tname(value)}")
    if tp is type(None):
        if value is not None:
            raise ConfigError(f"config key {key!r} must be null")
        return None
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"config key {key!r} must be true or false, got {_tname(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"config key {key!r} must be an integer, got {_tname(value)}")
        if abs(value) > MAX_INT:
            raise ConfigError(f"config key {key!r} must be an integer within ±{MAX_INT}, got {_tname(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"config key {key!r} must be a number, got {_tname(value)}")
        if isinstance(value, int) and abs(value) > MAX_INT:
            raise ConfigError(f"config key {key!r} must be a number within ±{MAX_INT}, got {_tname(value)}")
        if not math.isfinite(value):
            raise ConfigError(f"config key {key!r} must be a finite number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"config key {key!r} must be a string, got {_tname(value)}")
        return value
    raise ConfigError(f"config key {key!r}: unsupported type {tp!r}")  # pragma: no cover
