"""``SearchConfig``: the whole tree, its checks across sections, JSON, fingerprints and ``replace``."""
from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping

from searchkit.config.base import INDEX_SCHEMA_VERSION, SCHEMA_VERSION, ConfigError, _check_now, _join
from searchkit.config.files import parse_config_json, read_config_text
from searchkit.config.migrations import migrate
from searchkit.config.models import _BM25_ONLY, _SHIPPED_CONVERSATION, FusionConfig, WeakMatchConfig, _reads
from searchkit.config.plain import (
    _SECTIONS,
    SECTIONS,
    _build,
    _default_of,
    _digest,
    _is_default,
    _RunningRetrievers,
    _to_plain,
)
from searchkit.config.sections import (
    AnalyzerConfig,
    BM25Config,
    DenseConfig,
    DiversityConfig,
    PassageConfig,
    QueryConfig,
    RerankConfig,
    TasksConfig,
)
from searchkit.util import atomic_write_text

log = logging.getLogger("searchkit.config")


def _readers(features: tuple[str, ...]) -> set[str]:
    """The retrievers whose runs ``features`` read (``_reads``)."""
    return {r for r in map(_reads, features) if r is not None}


@dataclass(frozen=True)
class SearchConfig:
    """The whole tree. ``SearchConfig()`` is the shipped default.

    A shipped model or stage that reads a retriever the tree turns off steps aside
    (:meth:`_shipped_stand_ins`): a ``weak_match`` left at the shipped default gets
    :meth:`WeakMatchConfig.bm25_only` when a retriever it reads and that model does not is off (the
    dense one in the shipped tree), the shipped conversation model goes when a retriever it reads
    is off, and the shipped ``rerank`` (which reads the embedder of a retriever that embeds) is off
    when none runs."""

    _TREE: ClassVar[bool] = True
    """The tree (``plain``: its registered sections are read and written with it)."""

    schema_version: int = SCHEMA_VERSION
    analyzer: AnalyzerConfig = field(default_factory=AnalyzerConfig)
    passages: PassageConfig = field(default_factory=PassageConfig)
    bm25: BM25Config = field(default_factory=BM25Config)
    dense: DenseConfig = field(default_factory=DenseConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)
    weak_match: WeakMatchConfig = field(default_factory=WeakMatchConfig)
    diversity: DiversityConfig = field(default_factory=DiversityConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    tasks: TasksConfig = field(default_factory=TasksConfig)

    def __post_init__(self) -> None:
        self._shipped_stand_ins()
        _check_now(self)

    def _shipped_stand_ins(self) -> None:
        """Where a retriever is off, the shipped models and stage that read it step aside. Which
        retriever a model reads is asked of the weak-match feature registry (``_reads``), which
        retriever names an embedder of its section class (``EMBEDDER``): no retriever is named here."""
        off = {n for n, sec in self.retriever_sections().items() if not sec.enabled}
        if not off:
            return
        wm = self.weak_match
        if _is_default(wm) and off & (_readers(wm.features) - _readers(_BM25_ONLY["features"])):
            # the shipped model reads scores of a retriever that is off: the model fitted without them serves
            object.__setattr__(self, "weak_match", WeakMatchConfig.bm25_only())
        elif wm.conversation == _SHIPPED_CONVERSATION and off & _readers(wm.conversation.features):
            # the shipped conversation model reads scores of a retriever that is off: the documents model serves
            object.__setattr__(self, "weak_match", dataclasses.replace(wm, conversation=None))
        if self.rerank.enabled and _is_default(self.rerank) and not self._embedders(running=True):
            # the shipped reranker reads the embedder of a retriever that embeds: without one running, the stage is off
            object.__setattr__(self, "rerank", dataclasses.replace(self.rerank, enabled=False))

    def _embedders(self, running: bool = False) -> list[str]:
        """The retriever sections that name an embedder (``EMBEDDER``; ``dense`` in the shipped tree), in
        order; ``running``: only those whose retriever is on."""
        return [k for k, sec in self.retriever_sections().items() if type(sec).EMBEDDER and (sec.enabled or not running)]

    def embedder_section(self) -> str | None:
        """The key of the section whose embedder the searcher uses (the reranker's ``sentence_maxsim``
        included): the first running retriever's that names one, else the first that names one
        (``dense`` in the shipped tree); None without any."""
        return next(iter(self._embedders(running=True) + self._embedders()), None)

    # -- the registered sections ------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """A registered section (``register_section``): the one this tree was given, else its default."""
        cls = SECTIONS.get(name) if not name.startswith("_") else None
        if cls is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        got = self.__dict__.get("_extra", {}).get(name)
        return got if got is not None else _default_of(cls)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(self)) \
            and all(getattr(self, k) == getattr(other, k) for k in SECTIONS)

    __hash__ = None  # type: ignore[assignment]  # mappings inside: never hashable

    def sections(self) -> tuple[str, ...]:
        """The keys of every section: the shipped tree's, then the registered ones."""
        return _SECTIONS + tuple(SECTIONS)

    def retriever_sections(self) -> dict[str, Any]:
        """Each retriever's section by key (``bm25``, ``dense``, then the registered ones)."""
        return {k: getattr(self, k) for k in self.sections() if type(getattr(self, k)).RETRIEVER}

    def _given(self) -> list[str]:
        """The registered sections that are not at their default (what the JSON and fingerprints hold)."""
        return [k for k in SECTIONS if not _is_default(getattr(self, k))]

    # -- validation -----------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Every problem of the tree (each naming its dotted key); empty when the config is valid."""
        out: list[str] = []
        if self.schema_version != SCHEMA_VERSION:
            out.append(f"schema_version {self.schema_version!r} is not supported (this searchkit reads "
                       f"{SCHEMA_VERSION})")
        for name in self.sections():
            out.extend(getattr(self, name).problems())
        sections = self.retriever_sections()
        running = [n for n, sec in sections.items() if sec.enabled]
        if not running:
            keys = [f"{n}.enabled" for n in sections]
            out.append(f"{', '.join(keys)}: at least one of {_join(keys)} must be true")
        f = self.fusion
        if len(running) > 1 and f.method == "wsum" and not any(w > 0 for w in f.weights.values()):
            out.append(f"fusion.weights: every running retriever ({', '.join(running)}) has weight 0, so the "
                       "weighted sum ranks nothing; give one of them a positive weight")
        out.extend(self._weak_match_contradictions())
        if self.rerank.enabled and self.rerank.method == "sentence_maxsim" and not self._embedders(running=True):
            names = self._embedders()
            out.append(f"rerank.enabled: rerank.method sentence_maxsim reads the {' or '.join(names)} retriever's "
                       f"embedder, which {' or '.join(f'{n}.enabled' for n in names)} false leaves out; turn rerank "
                       f"off or {' or '.join(names)} on" if names else
                       "rerank.enabled: rerank.method sentence_maxsim reads the embedder of a retriever that embeds, "
                       "and no retriever section names one; turn rerank off")
        if not self.rerank.enabled and self.weak_match.enabled:
            for where, model in (("weak_match", self.weak_match), ("weak_match.conversation", self.weak_match.conversation)):
                if model is not None and "rerank_top1" in model.features:
                    out.append(f"{where}.features: 'rerank_top1' is the reranking stage's best score, which "
                               "rerank.enabled false leaves at 0; turn rerank on or fit a model without it")
        return out

    def notes(self) -> list[str]:
        """Advice that is not a failure: knobs whose value has no effect or is not fitted for this tree."""
        out = []
        if self.weak_match.enabled and _is_default(self.weak_match):
            running = _RunningRetrievers({n: sec.enabled for n, sec in self.retriever_sections().items()})
            readers = [f for f in self.weak_match.features if _reads(f) is not None and not running[_reads(f)]]
            if readers:
                off = list(dict.fromkeys(r for f in readers if (r := _reads(f)) is not None))
                on = [n for n, sec in self.retriever_sections().items() if sec.enabled]
                out.append(f"weak_match: the shipped model reads {', '.join(readers)}, which are 0 with "
                           f"{_join(off)} off; no {'-'.join(on)}-only model is shipped: fit one with "
                           "`searchkit tune weak-match`")
        return out

    def _weak_match_contradictions(self) -> list[str]:
        wm = self.weak_match
        if not wm.enabled:
            return []
        enabled = _RunningRetrievers({n: sec.enabled for n, sec in self.retriever_sections().items()})
        if _is_default(wm):
            # the shipped model under a tree that turns off a retriever it reads: a note, not a
            # failure (see notes()); __post_init__ gave the other shipped model where one fits
            return []
        out = []
        models = [("weak_match", wm.features)]
        if wm.conversation is not None:
            models.append(("weak_match.conversation", wm.conversation.features))
        for where, features in models:
            for i, feat in enumerate(features):
                reads = _reads(feat)
                if reads is not None and not enabled[reads]:
                    out.append(
                        f"{where}.features[{i}]: {feat!r} reads the {reads} retriever, which is off "
                        f"({reads}.enabled false); fit a model without it (`searchkit tune weak-match --features`) "
                        "or set weak_match.enabled false"
                    )
        return out

    # -- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _to_plain(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchConfig":
        """Build and check a tree from plain data (missing keys take their defaults; an older
        ``schema_version`` is migrated first, with a logged note); raises one
        :class:`ConfigError` listing every problem."""
        if isinstance(data, Mapping) and data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
            data, notes = migrate(data)
            for note in notes:
                log.info("%s", note)
        fusion = data.get("fusion") if isinstance(data, Mapping) else None
        if isinstance(fusion, Mapping) and "weights" in fusion and "adaptive" not in fusion:
            # fixed weights given without an adaptive model: those weights, for every query
            data = {**data, "fusion": {**fusion, "adaptive": None}}
        return _build(cls, data, "")

    @classmethod
    def from_json(cls, text: str) -> "SearchConfig":
        return cls.from_dict(parse_config_json(text))

    @classmethod
    def load(cls, path: str | Path) -> "SearchConfig":
        """A bare config file (regular files only; see :func:`read_config_text`). Production loads
        ``--config`` through :func:`searchkit.export.load_config`, which reads exports too."""
        p = Path(path)
        try:
            return cls.from_dict(parse_config_json(read_config_text(p), str(p)))
        except ConfigError as exc:
            raise ConfigError(exc.problems, where=exc.where or str(p)) from None

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.to_json() + "\n")

    # -- identity -------------------------------------------------------------------------
    def fingerprint(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of the whole tree."""
        return _digest(self.to_dict())

    def index_fingerprint(self) -> str:
        """Fingerprint of the parts that decide what an index stores: every field marked ``index``
        in its metadata (analysis, passages, BM25 weights, the embedder, the ANN kind)."""
        part: dict[str, Any] = {"schema_version": INDEX_SCHEMA_VERSION}
        for name in _SECTIONS + tuple(self._given()):
            section = getattr(self, name)
            keys = {f.name: _to_plain(getattr(section, f.name), full=True)
                    for f in dataclasses.fields(section) if f.metadata.get("index")}
            if keys:
                part[name] = keys
        return _digest(part)

    def replace(self, **sections: object) -> "SearchConfig":
        """Copy with whole sections or dotted keys replaced: ``cfg.replace(**{"fusion.rrf_k": 10})``."""
        data = _to_plain(self, full=True)
        for key, value in sections.items():
            node = data
            parts = key.split(".")
            for p in parts[:-1]:
                if p not in node or not isinstance(node[p], dict):
                    raise ConfigError(f"unknown config key {key!r}")
                node = node[p]
            if parts[-1] not in node:
                raise ConfigError(f"unknown config key {key!r}")
            node[parts[-1]] = _to_plain(value, full=True)  # dataclasses (and tuples of them) as plain data
        if "fusion.weights" in sections and "fusion.adaptive" not in sections and isinstance(data.get("fusion"), dict):
            data["fusion"]["adaptive"] = None  # fixed weights asked for: the adaptive model steps aside
        return SearchConfig.from_dict(data)
