"""A retriever with a config section is built and loaded by the Searcher: ``register`` refuses
one without ``build`` or ``load`` (before, ``Searcher.build`` failed later with "'NoneType' object
is not callable" once its section was enabled). Issue 42 item 1 (mypy found it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from searchkit import retrievers
from searchkit.config import Section, knob
from searchkit.retrievers import RetrieverSpec


@dataclass(frozen=True)
class _HalfConfig(Section):
    KEY: ClassVar[str] = "half_made"
    RETRIEVER: ClassVar[bool] = True
    enabled: bool = knob(False)


@pytest.mark.parametrize("given", [{}, {"build": lambda cfg, ctx: None}, {"load": lambda folder, cfg, ctx: None}])
def test_a_sectioned_retriever_needs_build_and_load(given):
    with pytest.raises(ValueError, match="half_made.*needs build and load"):
        retrievers.register(RetrieverSpec(name="half_made", section="half_made", config=_HalfConfig, **given))
    assert "half_made" not in retrievers.RETRIEVERS
    assert "half_made" not in retrievers.names()


def test_a_retriever_without_a_section_needs_neither():
    spec = retrievers.register(RetrieverSpec(name="given_only", section=None))
    try:
        assert retrievers.get("given_only") is spec
    finally:
        retrievers.unregister("given_only")
