"""Retrievers: anything that ranks rows for a query, behind one protocol, in one registry.

A retriever turns a query text into its own representation once (``prepare``: BM25 tokens, a
dense vector, FTS5 terms), then ``search(query, k, mask)`` returns its best rows with their
scores, and ``scores_for(query, rows)`` scores given rows exactly (fusion fills a candidate a
retriever did not return with its exact score). A retriever may also say how much of the query a
row covers (``evidence``) and which score-shape features it offers (``shapes``: feature suffix ->
function of its sorted record scores) for the weak-match model (H11).

The Searcher (``searchkit.searcher``) holds a name -> retriever mapping built from the config
(every registered retriever whose config section is enabled) and composes them by fusion, as
pyserini's ``HybridSearcher`` composes anything with ``.search``: adding a retriever is one module,
one ``register`` call and, for the built-ins, one config section. The task search is such a Searcher
over a space's comments, holding the scopable ``fts5`` (whose scope is SQL) beside the retrievers
with a config section (``searchkit.tools.task_engine``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, TypeVar, runtime_checkable

import numpy as np

from searchkit import registries
from searchkit.config import SearchConfig, Section, register_section, unregister_section
from searchkit.errors import InputError


Q = TypeVar("Q")
"""A retriever's prepared query (``prepare``'s answer, what its other methods take): BM25 tokens, a
dense vector, FTS5 terms. A bare ``Retriever`` is one of any such type."""
Q_in = TypeVar("Q_in", contravariant=True)
"""The prepared query of an ability that only reads it (``HasEvidence``, ``HasTermWeights``)."""


@runtime_checkable
class Retriever(Protocol[Q]):
    """What the Searcher composes. Rows are the Searcher's passage rows (0..n-1)."""

    name: str

    def prepare(self, text: str) -> Q:
        """The query as this retriever searches it (computed once per search)."""

    def search(self, query: Q, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` rows (int64) and their scores (float), best first; a row whose ``mask``
        entry is False never takes a slot."""

    def scores_for(self, query: Q, rows: np.ndarray) -> np.ndarray:
        """Exact scores of ``rows`` (any order; same order back)."""


# --------------------------------------------------------------------------- declared abilities
# What a retriever may do besides the three methods every one has. The Searcher and the stages ask
# ``isinstance(r, Scopable)`` and so on (runtime-checkable protocols), never ``hasattr``; a retriever
# declares an ability by having its method, as PyTerrier's transformers declare theirs.


@runtime_checkable
class Scopable(Protocol):
    """Searches a scope (one caller's records, H14/H15) with statistics over that scope alone."""

    def scoped(self, scope: np.ndarray) -> Any:
        """This retriever over the passage rows where ``scope`` is True."""


@runtime_checkable
class Persistable(Protocol):
    """Saves itself into an index folder (``Searcher.save``) and loads back through its spec's ``load``."""

    def save(self, folder: Path) -> None:
        """Write this retriever's files into ``folder``."""


@runtime_checkable
class HasEvidence(Protocol[Q_in]):
    """Says how much of the query the top records hold (H11's content evidence: ``RetrieverSpec.evidence``)."""

    def evidence(self, query: Q_in, top: Sequence[Sequence[int]], texts: Sequence[str]) -> Mapping[str, float]:
        """The evidence items of the top records (passage rows per record, best first)."""


@runtime_checkable
class HasTermWeights(Protocol[Q_in]):
    """Weighs each query term as evidence (collection rarity): what the speaker attribution reads."""

    def term_weights(self, query: Q_in) -> Mapping[str, float]:
        """Each distinct term of the prepared ``query`` with its weight, in the query's order."""


@runtime_checkable
class Warmable(Protocol):
    """Prepares many queries at once (the dense retriever embeds them in batches)."""

    def warm(self, texts: Sequence[str], *, batch_size: int = 32, show_progress: bool = False) -> None:
        """Prepare ``texts`` ahead of their searches."""


@runtime_checkable
class Embeds(Protocol):
    """Searches by an embedder's vectors, kept in an embedding cache."""

    embedder: Any
    cache: Any
    dim: int
    """The dimension of its vectors."""


@dataclass(frozen=True)
class BuildContext:
    """What building or loading a retriever may need besides its config section."""

    passages: Sequence[Any]
    analyzer: Any = None
    embedder: Any = None
    cache: Any = None
    show_progress: bool = False
    previous: Any = None
    """An update's previous Searcher, built under the same index config and analysis (``Searcher.build``'s
    ``previous``): a retriever may keep what it made of a passage whose text is unchanged."""


@dataclass(frozen=True)
class RetrieverSpec:
    """A registry entry: how to build, load and name the config of one kind of retriever.

    Args:
        name: the retriever's name (a run name in fusion, a key of ``fusion.weights``, the prefix of
            its weak-match features, its folder in an index).
        section: the ``SearchConfig`` section that configures it (``None``: none; such a retriever is
            only ever given to a Searcher directly).
        config: the class of that section (a ``searchkit.config._Section`` dataclass with
            ``KEY = section``, ``RETRIEVER = True``, ``EMBEDDER = embeds`` and an ``enabled`` knob):
            ``register`` makes it a section of every config (``searchkit.config.register_section``; the
            shipped ``bm25`` and ``dense`` are fields of ``SearchConfig``). Its knobs marked ``index`` are the retriever's
            part of the index fingerprint; a section at its default is in neither fingerprint.
        terms: True when its prepared query is the query's analysed terms (the adaptive-fusion
            feature ``query_terms`` counts those of the first such retriever).
        prefusion: name -> function of its ``RetrieverRun`` -> float: its own features for the
            adaptive-fusion model (``searchkit.rank.adaptive.FEATURES``), registered as ``<name>_<key>``.
        build: ``build(section_config, BuildContext) -> Retriever``.
        load: ``load(folder, section_config, BuildContext) -> Retriever``.
        shapes: feature suffix -> function of the record scores (best first) -> float; registered
            as the weak-match features ``<name>_<suffix>`` (``searchkit.rank.signals.FEATURES``).
        evidence: the names of the content evidence the retriever's ``evidence(query, top, texts)``
            gives (how much of the query the top records hold): the features ``<name>_<item>``.
        embeds: True when building or loading it needs the embedder and the embedding cache
            (``BuildContext.embedder`` / ``.cache``); the Searcher makes them only then.
        embedder: ``embedder(section_config) -> embedder``: the embedder its section names
            (``searchkit.searcher.make_embedder`` asks the first retriever that embeds).
    """

    name: str
    section: str | None
    build: Callable[[Any, BuildContext], Any] | None = None
    load: Callable[[Path, Any, BuildContext], Any] | None = None
    shapes: Mapping[str, Callable[[Sequence[float]], float]] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    embeds: bool = False
    embedder: Callable[[Any], Any] | None = None
    config: type[Section] | None = None
    terms: bool = False
    prefusion: Mapping[str, Callable[[Any], float]] = field(default_factory=dict)

    def built(self, config: SearchConfig, ctx: BuildContext) -> Any:
        """``build`` with this retriever's section of ``config`` (an enabled one: it has a section,
        and ``register`` refused a sectioned spec without ``build`` and ``load``)."""
        assert self.section is not None and self.build is not None
        return self.build(getattr(config, self.section), ctx)

    def loaded(self, folder: Path, config: SearchConfig, ctx: BuildContext) -> Any:
        """``load`` of ``folder`` with this retriever's section of ``config`` (as ``built``)."""
        assert self.section is not None and self.load is not None
        return self.load(folder, getattr(config, self.section), ctx)


RETRIEVERS: dict[str, RetrieverSpec] = {}
"""Every registered retriever by name, in the order fusion lists them."""


def register(spec: RetrieverSpec) -> RetrieverSpec:
    """Add ``spec`` to ``RETRIEVERS`` (a name registered twice is replaced)."""
    if not isinstance(spec, RetrieverSpec) or not spec.name or not spec.name.isidentifier():
        raise ValueError(f"a retriever needs a RetrieverSpec with an identifier name, got {spec!r}")
    if spec.config is not None:
        if getattr(spec.config, "KEY", None) != spec.section or not getattr(spec.config, "RETRIEVER", False):
            raise ValueError(f"retriever {spec.name!r}: its config class must have KEY = {spec.section!r} "
                             "and RETRIEVER = True")
        if bool(getattr(spec.config, "EMBEDDER", False)) != bool(spec.embeds):
            raise InputError(f"retriever {spec.name!r}: its config class must have EMBEDDER = {bool(spec.embeds)} "
                             "(= embeds): the config reads it for which section names the searcher's embedder",
                             param="config")
    if spec.section is not None and (spec.build is None or spec.load is None):  # the Searcher builds and loads it
        raise ValueError(f"retriever {spec.name!r}: a retriever with a config section needs build and load")
    if spec.config is not None:
        register_section(spec.config)
    RETRIEVERS[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Forget the retriever ``name`` and the config section it brought (a built-in's stays)."""
    spec = RETRIEVERS.pop(name, None)
    if spec is not None and spec.config is not None and name not in BUILTINS:
        unregister_section(spec.config.KEY)


def get(name: str) -> RetrieverSpec:
    """The registered retriever ``name``; ValueError listing the valid names otherwise."""
    _builtins()
    try:
        return RETRIEVERS[name]
    except KeyError:
        raise InputError(f"unknown retriever {name!r}; valid: {', '.join(RETRIEVERS)}") from None


BUILTINS: tuple[str, ...] = ("bm25", "dense", "fts5")


def names() -> tuple[str, ...]:
    """The registered retriever names: the built-ins in this order, then the others as registered."""
    _builtins()
    return BUILTINS + tuple(n for n in RETRIEVERS if n not in BUILTINS)


registries.provide("retriever", names)  # the config reads the names there (issue 42 item 3)


def enabled(config: SearchConfig) -> list[str]:
    """Names of the registered retrievers whose config section exists and is enabled, in order."""
    out = []
    for spec in (get(n) for n in names()):
        section = getattr(config, spec.section, None) if spec.section else None
        if section is not None and getattr(section, "enabled", False):
            out.append(spec.name)
    return out


def embedding(names: Sequence[str]) -> bool:
    """Whether any of the retrievers ``names`` needs the embedder (``RetrieverSpec.embeds``)."""
    return any(get(n).embeds for n in names)


def first(found: Mapping[str, Any], ability: type) -> str | None:
    """The name of the first retriever of ``found`` (name -> retriever) with ``ability`` (a protocol)."""
    return next((name for name, r in found.items() if isinstance(r, ability)), None)


def _builtins() -> None:
    """Register the built-in retrievers (importing their modules registers them)."""
    if not set(BUILTINS) <= set(RETRIEVERS):
        from searchkit.retrievers import bm25, dense, fts5  # noqa: F401


# --------------------------------------------------------------------------- score shapes


def top1(scores: Sequence[float]) -> float:
    """The best score (0 without any)."""
    return float(scores[0]) if len(scores) else 0.0


def margin(scores: Sequence[float]) -> float:
    """Best minus second best (0 with fewer than two)."""
    return float(scores[0] - scores[1]) if len(scores) > 1 else 0.0


def relative_margin(scores: Sequence[float]) -> float:
    """``(best - second) / best`` for scores on an open scale (0 when the best is not positive)."""
    if len(scores) < 2 or scores[0] <= 0:
        return 0.0
    return float((scores[0] - scores[1]) / scores[0])


def gap10(scores: Sequence[float]) -> float:
    """Best minus the mean of the next nine (0 with fewer than two)."""
    if len(scores) < 2:
        return 0.0
    return float(scores[0] - np.mean(scores[1:10]))


def z_top1(scores: Sequence[float]) -> float:
    """How many standard deviations of the rest the best stands above their mean (0 with fewer
    than three scores or no spread)."""
    if len(scores) < 3:
        return 0.0
    arr = np.asarray(scores, dtype=float)
    sd = arr[1:].std()
    if sd <= 1e-12:
        return 0.0
    return float((arr[0] - arr[1:].mean()) / sd)
