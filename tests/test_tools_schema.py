"""The one dataclass -> JSON Schema generator (searchkit.schema; issue 29 item 3): what the tools'
parameters need beyond the config (Literal, unions, nullable enums, min_items, descriptions,
required fields), and that the config's schema is still the committed file, byte for byte."""
from dataclasses import dataclass, field
from typing import Literal

import jsonschema
import pytest

from searchkit import config, schema


@dataclass(frozen=True)
class Inner:
    """An inner object.

    More text that is not the description."""

    n: int = field(default=1, metadata={"lo": 0, "hi": 9})


@dataclass(frozen=True)
class Toy:
    """A toy parameter set."""

    query: str = field(metadata={"doc": "What to look for."})
    mode: str | None = field(default=None, metadata={"choices": ("any", "all")})
    spaces: Literal["all"] | tuple[str, ...] | None = field(default=None, metadata={"min_items": 1})
    inner: Inner = field(default_factory=Inner)
    weight: float = field(default=0.5, metadata={"above": 0.0})


def toy_schema():
    return schema.dataclass_schema(Toy, title="toy", schema_id="urn:test:toy")


def test_the_generated_schema_is_valid_and_says_what_the_dataclass_says():
    s = toy_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["required"] == ["query"] and s["additionalProperties"] is False
    assert s["description"] == "A toy parameter set."
    assert s["properties"]["query"] == {"type": "string", "description": "What to look for."}
    assert s["properties"]["mode"] == {"type": ["string", "null"], "enum": ["any", "all", None], "default": None}
    assert s["properties"]["spaces"]["anyOf"] == [
        {"enum": ["all"]}, {"type": "array", "items": {"type": "string"}, "minItems": 1}, {"type": "null"}]
    assert s["properties"]["inner"] == {"$ref": "#/$defs/Inner"}
    assert s["$defs"]["Inner"]["description"] == "An inner object."
    assert s["$defs"]["Inner"]["properties"]["n"] == {"type": "integer", "minimum": 0, "maximum": 9, "default": 1}
    assert s["properties"]["weight"]["exclusiveMinimum"] == 0.0


@pytest.mark.parametrize("data", [
    {"query": "x"},
    {"query": "x", "mode": None, "spaces": None},
    {"query": "x", "mode": "all", "spaces": "all", "inner": {"n": 9}},
    {"query": "x", "spaces": ["acme", "legal"]},
])
def test_good_data_passes(data):
    jsonschema.validate(data, toy_schema())


@pytest.mark.parametrize("data, key", [
    ({}, None),                                    # query is required
    ({"query": 3}, "query"),
    ({"query": "x", "mode": "xor"}, "mode"),
    ({"query": "x", "spaces": "some"}, "spaces"),
    ({"query": "x", "spaces": []}, "spaces"),
    ({"query": "x", "inner": {"n": 10}}, "inner"),
    ({"query": "x", "weight": 0}, "weight"),
    ({"query": "x", "caller": "u-anna"}, None),    # unknown key
])
def test_bad_data_is_refused_at_its_key(data, key):
    errors = list(jsonschema.Draft202012Validator(toy_schema()).iter_errors(data))
    assert errors
    if key is not None:
        assert any(e.absolute_path and e.absolute_path[0] == key for e in errors)


def test_a_registry_field_needs_the_builders_registry():
    @dataclass(frozen=True)
    class Named:
        """x"""

        name: str = field(default="a", metadata={"registry": "things"})

    assert schema.SchemaBuilder(lambda what: ("a", "b")).of_class(Named)["properties"]["name"]["enum"] == ["a", "b"]
    with pytest.raises(ValueError, match="things"):
        schema.SchemaBuilder().of_class(Named)


def test_the_config_schema_comes_from_the_same_generator():
    """One generator, no second copy (its byte-for-byte output: tests/test_config_schema.py)."""
    assert config.SchemaBuilder is schema.SchemaBuilder
    assert config.json_schema()["$schema"] == schema.DRAFT
