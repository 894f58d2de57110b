"""Config files written at an older ``schema_version``, brought to the current one (``migrate``)."""
from __future__ import annotations

from typing import Any, Mapping

from searchkit.config.base import SCHEMA_VERSION, ConfigError, _tname


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
