"""JSON Schema (draft 2020-12) generated from frozen dataclasses: one generator for the config file
(``searchkit.config.json_schema``) and for the tools' parameters (``searchkit.tools.base``).

A field's type gives the schema's type (``bool``, ``int``, ``float``, ``str``, ``tuple[T, ...]``,
``Mapping[str, T]``, a nested dataclass as a ``$ref``, ``Literal[...]``, unions with ``None``); its
metadata gives the rules: ``lo`` / ``hi`` (``minimum`` / ``maximum``), ``above``
(``exclusiveMinimum``), ``choices`` (``enum``), ``registry`` (``enum`` of the names a registry holds,
read through the ``names`` function the builder is given), ``min_items`` (``minItems``) and ``doc``
(the property's ``description``). A field without a default is ``required``; unknown keys are
refused (``additionalProperties: false``).
"""
from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping as _AbcMapping
from typing import Any, Callable, Mapping, Sequence

DRAFT = "https://json-schema.org/draft/2020-12/schema"
"""The ``$schema`` every generated schema names."""

_SCALARS: dict[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


def to_plain(obj: object) -> Any:
    """``obj`` as plain JSON data: a dataclass as an object of its fields, a tuple or list as a list,
    a mapping as an object with string keys; anything else as it is."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, _AbcMapping):
        return {str(k): to_plain(v) for k, v in obj.items()}
    return obj


class SchemaBuilder:
    """Builds the schema of one or more dataclasses; nested dataclasses are collected in ``defs``
    (``$defs``) and referred to by name.

    Args:
        names: ``registry name -> the names it holds``, for fields whose metadata names a
            ``registry`` (the config's fusion methods, embedders...); None: no registries.
    """

    def __init__(self, names: Callable[[str], Sequence[str]] | None = None) -> None:
        self.defs: dict[str, Any] = {}
        self._names = names

    def of_class(self, cls: type) -> dict[str, Any]:
        """The object schema of dataclass ``cls``: its fields' schemas and defaults, the first
        paragraph of its docstring as the description, required fields, no unknown keys."""
        hints = typing.get_type_hints(cls)
        props: dict[str, Any] = {}
        required = []
        for f in dataclasses.fields(cls):
            prop = self.of_type(hints[f.name], f.metadata)
            if f.default is not dataclasses.MISSING and not dataclasses.is_dataclass(f.default):
                prop["default"] = to_plain(f.default)
            elif f.default_factory is not dataclasses.MISSING and not dataclasses.is_dataclass(hints[f.name]):
                prop["default"] = to_plain(f.default_factory())
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
            if "doc" in f.metadata:
                prop["description"] = " ".join(str(f.metadata["doc"]).split())
            props[f.name] = prop
        out: dict[str, Any] = {"type": "object", "description": _first_paragraph(cls), "properties": props,
                               "additionalProperties": False}
        if required:
            out["required"] = required
        return out

    def of_type(self, tp: object, meta: Mapping[str, Any]) -> dict[str, Any]:
        """The schema of one type, with the rules of the field metadata ``meta``."""
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a dataclass type (a field's type, never an instance)
            name = tp.__name__
            if name not in self.defs:
                self.defs[name] = {}
                self.defs[name] = self.of_class(tp)
            return {"$ref": f"#/$defs/{name}"}
        origin = typing.get_origin(tp)
        if origin is _AbcMapping:
            (_kt, vt) = typing.get_args(tp)
            value = self.of_type(vt, {k: v for k, v in meta.items() if k != "registry"})
            out_map: dict[str, Any] = {"type": "object", "additionalProperties": value}
            if "registry" in meta:
                out_map["propertyNames"] = {"enum": list(self._registry(meta["registry"]))}
            return out_map
        if origin is tuple:
            (inner, _ellipsis) = typing.get_args(tp)
            out_list: dict[str, Any] = {"type": "array", "items": self.of_type(inner, meta)}
            if "min_items" in meta:
                out_list["minItems"] = meta["min_items"]
            return out_list
        if origin is typing.Literal:
            return {"enum": list(typing.get_args(tp))}
        if origin in (typing.Union, types.UnionType):
            return self._union(tp, meta)
        return self._scalar(tp, meta)

    def _union(self, tp: object, meta: Mapping[str, Any]) -> dict[str, Any]:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(tp))
        if len(args) > 1:
            return {"anyOf": [self.of_type(a, meta) for a in args] + ([{"type": "null"}] if nullable else [])}
        inner = self.of_type(args[0], meta)
        if "type" not in inner:  # a $ref, or a Literal's enum
            return {"anyOf": [inner, {"type": "null"}]}
        if "enum" in inner:  # null is one of the allowed values too
            inner = {**inner, "enum": [*inner["enum"], None]}
        return {**inner, "type": [inner["type"], "null"]}

    def _scalar(self, tp: object, meta: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": _SCALARS[tp]}
        if tp in (int, float):
            if "lo" in meta:
                out["minimum"] = meta["lo"]
            if "hi" in meta:
                out["maximum"] = meta["hi"]
            if "above" in meta:
                out["exclusiveMinimum"] = meta["above"]
        if tp is str:
            if "choices" in meta:
                out["enum"] = list(meta["choices"])
            elif "registry" in meta:
                out["enum"] = list(self._registry(meta["registry"]))
        return out

    def _registry(self, what: str) -> Sequence[str]:
        if self._names is None:
            raise ValueError(f"field metadata names the registry {what!r}, but the schema builder has none")
        return self._names(what)

    def sorted_defs(self) -> dict[str, Any]:
        """``$defs``, sorted by name."""
        return dict(sorted(self.defs.items()))


def dataclass_schema(cls: type, *, title: str, schema_id: str,
                     names: Callable[[str], Sequence[str]] | None = None) -> dict[str, Any]:
    """The whole schema document of dataclass ``cls``: ``$schema``, ``$id``, ``title``, its object
    schema and (when it nests dataclasses) their ``$defs``."""
    builder = SchemaBuilder(names)
    top = builder.of_class(cls)
    out = {"$schema": DRAFT, "$id": schema_id, "title": title, **top}
    if builder.defs:
        out["$defs"] = builder.sorted_defs()
    return out


def _first_paragraph(cls: type) -> str:
    return " ".join((cls.__doc__ or "").split("\n\n")[0].split())
