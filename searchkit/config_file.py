"""The config file production reads (SPEC E6): an exported file (``searchkit config export``) or a
bare config JSON.

``load_config`` is the one call production uses: it reads either kind, refuses an unknown
``format`` or a ``schema_version`` it cannot read, migrates older versions (a logged note per step),
checks the config against the dataclasses and the committed JSON Schema, and for an exported file
that the config still has the fingerprint it was exported with. ``validate_file`` lists every
problem instead of stopping at the first (``searchkit config validate``).

It sits just above ``searchkit.config`` in the layers (docs/ARCHITECTURE.md), so the tools, the
harness and the server load a config without importing ``searchkit.export``, which writes and
replays exports with the harness's datasets and provenance.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from searchkit.config import (
    ConfigError,
    SearchConfig,
    migrate,
    parse_config_json,
    read_config_bytes,
    read_config_text,
    schema_problems,
)

__all__ = ["FORMAT", "MIGRATIONS", "SCHEMA_VERSION", "Exported", "load_config", "load_export", "validate_file"]

log = logging.getLogger(__name__)

FORMAT = "searchkit.config-export"
SCHEMA_VERSION = 1
"""Version of the export envelope (the config inside carries its own ``schema_version``)."""

MIGRATIONS: dict[int, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {}
"""``{N: (note, fn)}``: ``fn`` turns an export envelope of ``schema_version`` N into N + 1. Empty
while version 1 is the only one ever written."""


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class Exported:
    """A loaded file: its config, the envelope (None for a bare config) and the migration notes."""

    path: Path
    config: SearchConfig
    envelope: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()

    @property
    def replay(self) -> Mapping[str, Any] | None:
        return (self.envelope or {}).get("replay")


def _read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON of a config or export file: a regular file only (a FIFO is refused, never waited
    on), errors that name the file and never quote it (``config.read_config_text``)."""
    p = Path(path)
    return parse_config_json(read_config_text(p), str(p))


def _migrate_envelope(data: Mapping[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    if data.get("format") != FORMAT:
        raise ConfigError(f"{where}: unknown format {data.get('format')!r}; this searchkit reads {FORMAT!r} "
                          "files and bare config JSON")
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ConfigError(f"{where}: export schema_version must be an integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise ConfigError(f"{where}: export schema_version {version} is newer than this searchkit reads "
                          f"({SCHEMA_VERSION}): upgrade searchkit to load it")
    out, notes = dict(data), []
    while version < SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise ConfigError(f"{where}: export schema_version {version} is not supported and no migration "
                              f"leads from it (this searchkit reads {SCHEMA_VERSION})")
        note, fn = MIGRATIONS[version]
        out = dict(fn(dict(out)))
        version += 1
        out["schema_version"] = version
        notes.append(f"export schema_version {version - 1} -> {version}: {note}")
    return out, notes


def _config_of(data: Mapping[str, Any], where: str) -> tuple[SearchConfig, list[str]]:
    """The checked config of plain data (migrated first), and the migration notes."""
    try:
        migrated, notes = migrate(data)
    except ConfigError as exc:
        raise ConfigError(exc.problems, where=where) from None
    try:
        cfg = SearchConfig.from_dict(migrated)
    except ConfigError as exc:
        raise ConfigError(exc.problems, where=where) from None
    extra = schema_problems(migrated)
    if extra:
        raise ConfigError(extra, where=where)
    return cfg, notes


def load_export(path: str | os.PathLike[str]) -> Exported:
    """Read an exported file or a bare config JSON, migrate, validate (see :func:`load_config`)."""
    p = Path(path)
    data = _read_json(p)
    where = str(p)
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: must be a JSON object, got {type(data).__name__}")
    if "format" not in data:
        cfg, notes = _config_of(data, where)
        envelope = None
    else:
        envelope, notes = _migrate_envelope(data, where)
        for key in ("config", "config_fingerprint"):
            if key not in envelope:
                raise ConfigError(f"{where}: exported file has no {key!r}")
        cfg, config_notes = _config_of(envelope["config"], f"{where}: config")
        notes += config_notes
        if not config_notes and cfg.fingerprint() != envelope["config_fingerprint"]:
            raise ConfigError(
                f"{where}: the config was changed after export (fingerprint {envelope['config_fingerprint']} "
                f"recorded, {cfg.fingerprint()} now); export the changed config as a new version"
            )
    for note in notes:
        log.warning("%s: migrated %s", where, note)
    return Exported(p, cfg, envelope, tuple(notes))


def load_config(path: str | os.PathLike[str]) -> SearchConfig:
    """The config production runs: from an exported file (``searchkit config export``) or a bare
    config JSON.

    Validates it (every problem listed, each naming its dotted key; the JSON Schema too), refuses
    an unknown ``format`` or a ``schema_version`` newer than this searchkit or with no migration,
    migrates an older version (a warning logged per step), and refuses an exported config that was
    edited after export (its fingerprint no longer matches).

    Raises:
        ConfigError: any of the above; the message names the file and the problem.
    """
    return load_export(path).config


def validate_file(path: str | os.PathLike[str]) -> tuple[SearchConfig | None, list[str], list[str]]:
    """``(config or None, problems, notes)`` of a file: every problem the dataclasses and the JSON
    Schema find (each once), and notes that are not failures (migrations, advice).

    Raises:
        ConfigError: the file cannot be read."""
    p = Path(path)
    raw = read_config_bytes(p)  # unreadable (missing, a FIFO, too large): ConfigError, exit 2
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [f"not UTF-8 text (bad byte at offset {exc.start})"], []
    try:
        data = parse_config_json(text)
    except ConfigError as exc:
        return None, list(exc.problems), []
    notes: list[str] = []
    envelope = None
    if isinstance(data, dict) and "format" in data:
        try:
            envelope, notes = _migrate_envelope(data, "export")
        except ConfigError as exc:
            return None, [str(exc)], []
        if "config" not in envelope:
            return None, ["export: no 'config'"], notes
        data = envelope["config"]
    try:
        data, more = migrate(data)
    except ConfigError as exc:
        return None, list(exc.problems), notes
    notes += more
    problems: list[str] = []
    cfg = None
    try:
        cfg = SearchConfig.from_dict(data)
    except ConfigError as exc:
        problems.extend(exc.problems)
    for extra in schema_problems(data):  # the schema's view; each key reported once
        key = extra.split(":", 1)[0]
        if not any(key in p for p in problems):
            problems.append(f"{extra} (JSON Schema)")
    if cfg is not None:
        notes += cfg.notes()
        if envelope is not None and not more and cfg.fingerprint() != envelope.get("config_fingerprint"):
            problems.append(f"config_fingerprint: {envelope.get('config_fingerprint')!r} recorded, "
                            f"{cfg.fingerprint()!r} computed: the config was changed after export")
            cfg = None
    return (cfg if not problems else None), problems, notes
