"""What a tool's answer looks like as data (issue 41 item 6): its output shape, and the JSON Schema
generated from it.

Each answer's ``to_dict()`` is built from an **output dataclass** (``output_data``): the answer's
fields as the caller gets them, nested dataclasses for nested objects. Fields whose metadata says
``explain`` are scoring internals (a card's per-retriever and per-stage scores, the weak-match
signals and their detail): ``to_dict()`` leaves them out unless asked (``explain=True``: the
server's ``--explain``, a researcher's ``--json``). The rendered text is never in the data (the MCP
result carries it as its text content, the JSON API as ``text``), so an answer is not sent twice.

``output_schema(answers)`` is the JSON Schema (draft 2020-12) of a tool's structured result,
generated from the same dataclasses: one object per answer type the tool may return (``anyOf``),
every field required except the ``explain`` ones (optional: present with ``--explain``), no other
key (``additionalProperties: false``), plus ``index_version`` (the index version a served answer
was read from) and the error a served call may answer instead (``error``). The MCP listing gives it
as each tool's ``outputSchema``, the JSON API's OpenAPI document as the answer's schema, and
``searchkit tools schema`` prints it beside the parameters'.
"""
from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping as _AbcMapping
from typing import Any, Mapping, Sequence

from searchkit.schema import DRAFT, SchemaBuilder

EXPLAIN = "explain"
"""The field metadata key marking a scoring internal (shown only when explaining)."""

INDEX_VERSION_DOC = ("The version of the index the answer was read from (the server adds it to every "
                     "answer; it changes when a refresh loads a newer one).")


def explain_only(doc: str) -> dict[str, Any]:
    """Field metadata: a scoring internal, in the data only when explaining."""
    return {EXPLAIN: True, "doc": doc + " Only when the server runs with --explain."}


def output_data(obj: object, explain: bool = False) -> Any:
    """An output dataclass as plain JSON data: its fields by name (an ``explain`` field only when
    ``explain``), tuples and lists as lists, mappings as objects with string keys."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: output_data(getattr(obj, f.name), explain) for f in dataclasses.fields(obj)
                if explain or not f.metadata.get(EXPLAIN)}
    if isinstance(obj, (tuple, list)):
        return [output_data(v, explain) for v in obj]
    if isinstance(obj, _AbcMapping):
        return {str(k): output_data(v, explain) for k, v in obj.items()}
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # a numpy scalar
        return obj.item()
    return obj


class OutputSchemaBuilder(SchemaBuilder):
    """``SchemaBuilder`` for data a tool gives (not parameters it takes): every field is required
    except the ``explain`` ones, no defaults are stated, ``Any`` is any JSON value."""

    def of_class(self, cls: type) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        props: dict[str, Any] = {}
        required = []
        for f in dataclasses.fields(cls):
            prop = self.of_type(hints[f.name], f.metadata)
            if "doc" in f.metadata:
                prop = {**prop, "description": " ".join(str(f.metadata["doc"]).split())}
            props[f.name] = prop
            if not f.metadata.get(EXPLAIN):
                required.append(f.name)
        doc = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        out: dict[str, Any] = {"type": "object", "description": doc, "properties": props,
                               "additionalProperties": False}
        if required:
            out["required"] = required
        return out

    def of_type(self, tp: object, meta: Mapping[str, Any]) -> dict[str, Any]:
        if tp is Any:
            return {}
        return super().of_type(tp, meta)


ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A call that failed: the tool's error (MCP isError; JSON API 4xx/5xx).",
    "properties": {
        "error": {"type": "object", "properties": {
            "status": {"type": "string", "description": "bad_parameter, unknown_tool, unavailable, busy, internal "
                                                        "or unauthorized."},
            "param": {"type": ["string", "null"], "description": "The parameter at fault (bad_parameter)."},
            "message": {"type": "string", "description": "One line saying what was wrong."},
            "retry_after_s": {"type": "integer", "description": "busy: try again after this many seconds."},
        }, "required": ["status", "param", "message"], "additionalProperties": False},
        "index_version": {"type": ["integer", "null"], "description": INDEX_VERSION_DOC},
    },
    "required": ["error"],
    "additionalProperties": False,
}
"""The structured content of a failed call (``Outcome.to_dict`` of :mod:`searchkit.serve.service`)."""


def output_schema(answers: Sequence[type], *, title: str, schema_id: str, errors: bool = True) -> dict[str, Any]:
    """The JSON Schema of a tool's structured result: one of ``answers``' output dataclasses
    (``output_type``), each with the served ``index_version``, or (``errors``) a call's error.
    The root is an object (MCP requires it of an ``outputSchema``)."""
    builder = OutputSchemaBuilder()
    variants = []
    for answer in answers:
        shape = builder.of_class(output_type(answer))
        shape["properties"]["index_version"] = {"type": "integer", "description": INDEX_VERSION_DOC}
        variants.append(shape)
    if errors:
        variants.append(ERROR_SCHEMA)
    out: dict[str, Any] = {"$schema": DRAFT, "$id": schema_id, "title": title, "type": "object"}
    if len(variants) == 1:
        out.update({k: v for k, v in variants[0].items() if k != "type"})
    else:
        out["anyOf"] = variants
    if builder.defs:
        out["$defs"] = builder.sorted_defs()
    return out


def output_type(answer: type) -> type:
    """The output dataclass of an answer type: its ``Output`` attribute, else the answer itself
    (an answer whose ``to_dict`` is its own fields)."""
    shape = getattr(answer, "Output", answer)
    if not dataclasses.is_dataclass(shape):
        raise TypeError(f"{answer.__name__} has no output dataclass (an Output attribute, or be a dataclass)")
    return shape
