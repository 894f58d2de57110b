"""Labelled queries over a workspace, asked through the history tool (H11 in a real workspace).

A public eval set is a BEIR corpus; a workspace is folders of chats, digests, files, logs, pages,
sources and app tables with members and switches (WORKSPACE.md). This module asks a labelled query
set about a workspace exactly as a person would: ``HistoryIndex.search`` with the query's caller,
current space and ``spaces``, the personal container, the default limit. Scope, privacy (H14, H15),
kind diversity (H8) and the warnings (H11, H12) are the tool's own. The outcomes are scored by
``searchkit.evaluate.run.summarize``, so a report reads like ``searchkit eval``'s (its
``to_dict(with_queries=True)`` is what ``searchkit tune weak-match --runs`` reads).

A query folder (``datasets/demo-workspace-queries/``, documented in datasets/README.md) holds:

- ``queries.jsonl``: ``{"_id", "text", "lang", "answerable", "caller", "space", "spaces"?}`` one a
  line; ``space`` is the space the search runs in, ``spaces`` (a list, or ``"all"``) the other
  spaces the caller asks for;
- ``qrels/dev.tsv``: ``query-id  corpus-id  score`` (a header line, then one judged record id of
  the workspace a line; unanswerable queries have none).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from searchkit.errors import DataError
from searchkit.evaluate.halves import query_shape, run_shape
from searchkit.evaluate.run import EvalReport, QueryOutcome, summarize
from searchkit.tools.history import DEFAULT_LIMIT
from searchkit.util import parse_json_text, read_regular_text

if TYPE_CHECKING:
    from searchkit.tools.history import HistoryIndex

REQUIRED = ("_id", "text", "answerable", "caller", "space")


@dataclass(frozen=True)
class WorkspaceQuery:
    """One labelled question to a workspace, as its caller asks it."""

    id: str
    text: str
    answerable: bool
    caller: str
    space: str
    lang: str = ""
    spaces: tuple[str, ...] | str | None = None


@dataclass(frozen=True)
class WorkspaceQueries:
    """A query folder: its name, the queries and the judgements (``{query: {record id: grade}}``)."""

    name: str
    queries: tuple[WorkspaceQuery, ...]
    qrels: Mapping[str, Mapping[str, int]]
    split: str = "dev"


def load_queries(folder: str | Path) -> WorkspaceQueries:
    """Read a query folder (module doc). A missing file, a bad line or a judgement of an unknown
    query is a ``DataError`` naming the file and the line, never quoting its content."""
    root = Path(folder)
    path = root / "queries.jsonl"
    try:
        lines = read_regular_text(path).splitlines()
    except (DataError, OSError) as exc:
        raise DataError(f"{path}: cannot read the queries ({type(exc).__name__})", reason="dataset") from None
    queries = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = parse_json_text(line, f"{path}, line {n}")
        except DataError as exc:
            raise DataError(str(exc), reason="dataset") from None
        queries.append(_query(row, f"{path}, line {n}"))
    ids = {q.id for q in queries}
    if len(ids) != len(queries):
        raise DataError(f"{path}: a query id is used twice", reason="dataset")
    return WorkspaceQueries(root.name, tuple(queries), _qrels(root / "qrels" / "dev.tsv", ids))


def _query(row: object, where: str) -> WorkspaceQuery:
    if not isinstance(row, dict):
        raise DataError(f"{where}: a query must be a JSON object", reason="dataset")
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise DataError(f"{where}: a query needs {', '.join(missing)}", reason="dataset")
    for key in ("_id", "text", "caller", "space"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise DataError(f"{where}: {key} must be a non-empty string", reason="dataset")
    if not isinstance(row["answerable"], bool):
        raise DataError(f"{where}: answerable must be true or false", reason="dataset")
    spaces = row.get("spaces")
    if spaces is not None and spaces != "all":
        if not isinstance(spaces, list) or not all(isinstance(s, str) for s in spaces):
            raise DataError(f"{where}: spaces must be a list of slugs or \"all\"", reason="dataset")
        spaces = tuple(spaces)
    given = row.get("lang")
    lang = given if isinstance(given, str) else ""
    return WorkspaceQuery(row["_id"], row["text"], row["answerable"], row["caller"], row["space"], lang, spaces)


def _qrels(path: Path, ids: set[str]) -> dict[str, dict[str, int]]:
    try:
        lines = read_regular_text(path).splitlines()
    except (DataError, OSError) as exc:
        raise DataError(f"{path}: cannot read the judgements ({type(exc).__name__})", reason="dataset") from None
    out: dict[str, dict[str, int]] = {}
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[2].strip().lstrip("-").isdigit():
            raise DataError(f"{path}, line {n}: expected query-id, corpus-id and an integer score, tab-separated", reason="dataset")
        if parts[0] not in ids:
            raise DataError(f"{path}, line {n}: judges a query id that queries.jsonl does not have", reason="dataset")
        out.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return out


def evaluate_workspace(index: HistoryIndex, labelled: WorkspaceQueries, *, limit: int | None = None) -> EvalReport:
    """Ask every query through ``index`` (a ``HistoryIndex``) as its caller, in its space, from a
    personal container; score the answers (``searchkit.evaluate.run.summarize``: ranking metrics
    of the answerable queries over the cards, the no-answer figures over all). Returns an
    ``EvalReport``; every judged record of an answerable query must be one the workspace holds."""
    known = {r.id for r in index.searcher.records}
    for qid, judged in labelled.qrels.items():
        unknown = sorted(set(judged) - known)
        if unknown:
            raise DataError(f"{labelled.name}: query {qid} judges a record the workspace does not hold", reason="dataset")
    kind_of = {r.id: r.kind for r in index.searcher.records}
    outcomes = []
    for q in labelled.queries:
        start = time.perf_counter()
        answer = index.search(q.text, limit=limit, spaces=q.spaces, caller=q.caller, container="personal",
                              space=q.space)
        ms = (time.perf_counter() - start) * 1000
        res = answer.result
        mi = res.warning("missing_ids")
        relevant = labelled.qrels.get(q.id, {})
        outcomes.append(QueryOutcome(
            query_id=q.id, lang=q.lang, category="answerable" if q.answerable else "no-record",
            answerable=q.answerable, ranking=tuple(c.hit.record.id for c in answer.cards),
            answer_probability=float(res.signals.get("answer_probability", 0.0)),
            weak_match=res.warning("weak_match") is not None,
            missing_ids=tuple(mi.detail.get("ids", ())) if mi else (), latency_ms=ms,
            signals={k: float(v) for k, v in res.signals.items()},
            relevant_kinds=tuple(sorted({kind_of[d] for d, g in relevant.items() if g > 0})),
        ))
    return summarize(_Shim(labelled, index.searcher.records), index.searcher.config, outcomes, path="tool",
                     depth=limit or DEFAULT_LIMIT, shape=_shape(outcomes))


def _shape(outcomes: Sequence[Any]) -> str:
    return run_shape(query_shape(o.signals) for o in outcomes if o.signals)


@dataclass(frozen=True)
class _Shim:
    """What ``summarize`` reads of a dataset: its name, split, judgements and records."""

    labelled: WorkspaceQueries
    records: Sequence[Any]

    @property
    def name(self) -> str:
        return self.labelled.name

    @property
    def split(self) -> str:
        return self.labelled.split

    @property
    def qrels(self) -> Mapping[str, Mapping[str, int]]:
        return self.labelled.qrels
