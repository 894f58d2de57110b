"""The nouns that flow through searchkit: Record, Passage, Hit, Notice (a warning above the cards), Result.

All are frozen dataclasses. A ``Record`` is one searchable thing of a workspace (a digest,
a chat, a log day, a file, a source entry, a page, a table row) or one document of a dataset.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from searchkit.errors import InputError

KINDS: tuple[str, ...] = ("digest", "chat", "log", "file", "source", "page", "app")
"""The seven kinds of record of a space (SPEC H1). Datasets may use ``doc`` as well."""

VISIBILITIES: tuple[str, ...] = ("shared", "personal")


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class Record:
    """One searchable item.

    Args:
        id: unique id within an index.
        kind: one of ``KINDS`` (or ``doc`` for plain dataset documents).
        space: slug of the space it belongs to ("" when not applicable).
        date: ISO date or date-time (``YYYY-MM-DD[...]``) or None.
        title: short title shown on a card.
        ref: the reference a card shows (H10 forms, e.g. ``chat:ses_1``).
        text: the full card text that is indexed.
        owner: user id of the owner of a personal item, else None.
        visibility: ``shared`` or ``personal`` (H15).
        fields: extra metadata (table name, columns, chat id of a digest, language, ...).
    """

    id: str
    kind: str = "doc"
    space: str = ""
    date: str | None = None
    title: str = ""
    ref: str = ""
    text: str = ""
    owner: str | None = None
    visibility: str = "shared"
    fields: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InputError(f"Record.id must be a non-empty string, got {self.id!r}")
        if self.visibility not in VISIBILITIES:
            raise InputError(
                f"Record {self.id!r}: visibility must be one of {VISIBILITIES}, got {self.visibility!r}"
            )
        object.__setattr__(self, "fields", _frozen_map(self.fields))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "space": self.space,
            "date": self.date,
            "title": self.title,
            "ref": self.ref,
            "text": self.text,
            "owner": self.owner,
            "visibility": self.visibility,
            "fields": dict(self.fields),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Record":
        return cls(**{k: data[k] for k in data})


@dataclass(frozen=True)
class Passage:
    """A slice of a record's text of at most ``max_chars`` characters (H9).

    ``start``/``end`` are character offsets into ``Record.text``; ``index`` is the
    passage's position within its record.
    """

    record_id: str
    index: int
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Hit:
    """A record found by a search, represented by its best passage.

    ``scores`` and ``ranks`` map each retriever's name (``bm25``, ``dense``, ...) to the
    score and 1-based rank that retriever gave this record; a retriever that did not
    return the record is absent. ``score`` is the fused score that ordered the result.
    ``stages`` maps each ranking stage of the search (``fuse``, ``rerank``, ``evidence``,
    ``speaker``, ``date``: ``searchkit.rank.stages``) to the record's score after it.
    """

    record: Record
    score: float
    rank: int
    passage: Passage
    scores: Mapping[str, float] = field(default_factory=dict)
    ranks: Mapping[str, int] = field(default_factory=dict)
    stages: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scores", _frozen_map(self.scores))
        object.__setattr__(self, "ranks", _frozen_map(self.ranks))
        object.__setattr__(self, "stages", _frozen_map(self.stages))

    @property
    def record_id(self) -> str:
        return self.record.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "id": self.record.id,
            "kind": self.record.kind,
            "space": self.record.space,
            "date": self.record.date,
            "title": self.record.title,
            "ref": self.record.ref,
            "score": self.score,
            "scores": dict(self.scores),
            "ranks": dict(self.ranks),
            "stages": dict(self.stages),
            "passage": {
                "index": self.passage.index,
                "start": self.passage.start,
                "end": self.passage.end,
                "text": self.passage.text,
            },
        }


@dataclass(frozen=True)
class Notice:
    """A signal shown above the cards (weak match H11, missing IDs H12, skipped spaces H14).

    Warnings are data: ``code`` is stable (``weak_match``, ``missing_ids``, ...),
    ``message`` is human text, ``detail`` carries the numbers behind it.
    """

    code: str
    message: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", _frozen_map(self.detail))

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "detail": _jsonable(self.detail)}


@dataclass(frozen=True)
class Result:
    """What a search returns: ordered hits, warnings, notes, and the config it ran under."""

    query: str
    hits: tuple[Hit, ...] = ()
    warnings: tuple[Notice, ...] = ()
    notes: tuple[str, ...] = ()
    config_fingerprint: str = ""
    signals: Mapping[str, float] = field(default_factory=dict)
    """Score-shape features and ``answer_probability`` behind the weak-match decision."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "signals", _frozen_map(self.signals))

    def warning(self, code: str) -> Notice | None:
        for w in self.warnings:
            if w.code == code:
                return w
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "config_fingerprint": self.config_fingerprint,
            "warnings": [w.to_dict() for w in self.warnings],
            "notes": list(self.notes),
            "signals": _jsonable(self.signals),
            "hits": [h.to_dict() for h in self.hits],
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    return value
