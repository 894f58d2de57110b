"""Measuring task search (SPEC T, E4) on a labelled task store.

A labelled task-store set is a folder holding a task store in the JSON-lines form ``searchkit tasks
import`` reads, plus queries and graded judgements over its comments::

    tasks.jsonl, comments.jsonl   the store (WORKSPACE.md "A task store")
    queries.jsonl                 {"_id", "text", "lang", "answerable", "category", "split",
                                   "space", "current_task"}: who asks, from which task
    qrels/<split>.tsv             query-id, corpus-id (``comment:<id>``), score (0-3)

``evaluate_task_search`` imports the store into a temporary file, asks every query of the split
through the task tool itself (``searchkit.tools.tasks.task_search`` with a ``ToolContext``, as the
tools past their membership check: the caller's space, never the current task, the zero-hit split
T5) with the retrievers ``config.tasks.retrievers`` names, and
measures the answers as ``searchkit eval`` measures the Searcher (``run.summarize``: ranx metrics
over the answerable queries, per language and category). The tool has no weak-match probability:
its only way to say "nothing here" is an empty answer, so a query's ``answer_probability`` is 1
when it got hits and 0 when it got none, and the no-answer figures score that. The report can be
written as a run folder (``runs.write_run``) and compared with ``searchkit compare`` or
``compare.compare_runs`` like any other run.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.evaluate.datasets import resolve_dataset
from searchkit.evaluate.run import EvalReport, QueryOutcome, summarize
from searchkit.ingest import tasks as store
from searchkit.records import Record
from searchkit.tools import tasks as tools
from searchkit.tools.base import ToolContext
from searchkit.tools.task_engine import TaskEngine
from searchkit.util import problem_of, read_regular_text

if TYPE_CHECKING:
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedding import Embedder

__all__ = ["TASK_SET_FILES", "TaskQuery", "TaskSet", "evaluate_task_search", "is_task_set", "load_task_set"]

TASK_SET_FILES: tuple[str, ...] = ("tasks.jsonl", "comments.jsonl", "queries.jsonl")
EVAL_OWNER = "eval"
"""The signed-in owner the tool is asked as (T8 needs one; it changes nothing else)."""
PATH = "tasks"
"""What a task-search run measured (``provenance.path``; the Searcher's runs say ``searcher``)."""


@dataclass(frozen=True)
class TaskQuery:
    """One labelled task-search query: who asks (``space``, ``current_task``) and what."""

    id: str
    text: str
    lang: str | None
    answerable: bool
    category: str
    space: str
    current_task: int | None
    kinds: tuple[str, ...] = ()
    id_in_corpus: bool | None = None


@dataclass(frozen=True, eq=False)
class TaskSet:
    """A labelled task-store set loaded for one split. ``records`` are the indexed comments (id
    ``comment:<id>``, the task's shown title, the indexed and redacted text), the documents the
    qrels judge."""

    name: str
    path: Path
    split: str
    records: tuple[Record, ...]
    queries: tuple[TaskQuery, ...]
    qrels: Mapping[str, Mapping[str, int]]

    @property
    def tasks_path(self) -> Path:
        return self.path / "tasks.jsonl"

    @property
    def comments_path(self) -> Path:
        return self.path / "comments.jsonl"


def is_task_set(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder with the files of a labelled task-store set."""
    p = Path(path)
    return p.is_dir() and all((p / f).is_file() for f in TASK_SET_FILES)


def _text(path: Path) -> str:
    """A set's file as text: a regular file only (a FIFO is refused, never waited on); errors name
    the file and the problem, never the content (issue 27, items 8 and 12)."""
    try:
        return read_regular_text(path)
    except DataError as exc:
        raise DataError(f"{path}: {problem_of(exc)}", reason="dataset") from None


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    text = _text(path)
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}, line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})", reason="dataset") from None
        except RecursionError:
            raise DataError(f"{path}, line {lineno}: JSON nested too deeply", reason="dataset") from None
        except ValueError:
            raise DataError(f"{path}, line {lineno}: a number too long to read", reason="dataset") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}, line {lineno}: expected a JSON object, got {type(row).__name__}", reason="dataset")
        out.append((lineno, row))
    return out


def _records(root: Path) -> tuple[Record, ...]:
    tasks = {}
    for lineno, row in _rows(root / "tasks.jsonl"):
        if not isinstance(row.get("id"), int) or not isinstance(row.get("space"), str):
            raise DataError(f"{root / 'tasks.jsonl'}, line {lineno}: a task needs an integer 'id' and a 'space'", reason="dataset")
        tasks[row["id"]] = row
    records = []
    for lineno, row in _rows(root / "comments.jsonl"):
        task = tasks.get(row.get("task"))
        if not isinstance(row.get("id"), int) or task is None:
            raise DataError(f"{root / 'comments.jsonl'}, line {lineno}: a comment needs an integer 'id' and "
                               "the id of a task in tasks.jsonl", reason="dataset")
        text = store.indexed_text(row)
        if text is None:
            continue
        records.append(Record(
            id=f"comment:{row['id']}", kind="comment", space=task["space"], date=str(row.get("ts") or ""),
            title=store.shown_title(str(task.get("title") or "")), ref=f"comment:{row['id']}", text=text,
            fields={"task": task["id"], "author": str(row.get("author") or ""), "comment_kind": str(row.get("kind"))},
        ))
    return tuple(sorted(records, key=lambda r: int(r.id.split(":")[1])))


def _query(path: Path, lineno: int, row: Mapping[str, Any]) -> TaskQuery:
    where = f"{path}, line {lineno}"
    qid, text = row.get("_id"), row.get("text")
    if not isinstance(qid, str) or not qid or not isinstance(text, str) or not text.strip():
        raise DataError(f"{where}: a query needs a non-empty string '_id' and 'text'", reason="dataset")
    space = row.get("space")
    if not isinstance(space, str) or not space:
        raise DataError(f"{where}: the query needs the 'space' it is asked in", reason="dataset")
    current = row.get("current_task")
    if current is not None and (not isinstance(current, int) or isinstance(current, bool)):
        raise DataError(f"{where}: 'current_task' must be a task id (an integer) or absent", reason="dataset")
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        raise DataError(f"{where}: 'answerable' must be true or false", reason="dataset")
    return TaskQuery(id=qid, text=text, lang=row.get("lang"), answerable=answerable,
                     category=str(row.get("category") or ("answerable" if answerable else "unanswerable")),
                     space=space, current_task=current)


def load_task_set(name_or_path: str | os.PathLike[str], split: str = "dev") -> TaskSet:
    """Load a labelled task-store set (a folder, or a name in ``datasets/`` or the shared data
    folder) for ``split``.

    Raises:
        DataError: no such set, a missing file, a bad line (file and line named), a judgement of
            an unknown query or comment, an answerable query without a relevant comment or an
            unanswerable one with one.
    """
    root = resolve_dataset(name_or_path)
    missing = [f for f in TASK_SET_FILES if not (root / f).is_file()]
    if missing:
        raise DataError(f"{root} is not a labelled task-store set: no {', '.join(missing)} "
                           f"(it needs {', '.join(TASK_SET_FILES)} and qrels/<split>.tsv)", reason="dataset")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        have = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        raise DataError(f"{qrels_path} not found: split {split!r} is not in this set; available splits: "
                           f"{', '.join(have) or 'none'}", reason="dataset")
    records = _records(root)
    doc_ids = {r.id for r in records}
    queries: dict[str, TaskQuery] = {}
    declared: dict[str, str] = {}
    qlines: dict[str, int] = {}
    qpath = root / "queries.jsonl"
    for lineno, row in _rows(qpath):
        q = _query(qpath, lineno, row)
        if q.id in queries:
            raise DataError(f"{qpath}, line {lineno}: the query id is given twice (first on line {qlines[q.id]})", reason="dataset")
        queries[q.id] = q
        qlines[q.id] = lineno
        declared[q.id] = str(row.get("split") or "")
    qrels: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(_text(qrels_path).splitlines(), 1):
        if lineno == 1 or not line.strip():
            continue
        cols = [c.strip() for c in line.split("\t")]
        if len(cols) != 3 or not cols[2].lstrip("-").isdigit():
            raise DataError(f"{qrels_path}, line {lineno}: expected query-id, corpus-id, score (tab-separated)", reason="dataset")
        qid, doc, score = cols[0], cols[1], int(cols[2])
        if qid not in queries:
            raise DataError(f"{qrels_path}, line {lineno}: unknown query id (not in queries.jsonl)", reason="dataset")
        if doc not in doc_ids:
            raise DataError(f"{qrels_path}, line {lineno}: the corpus id is not an indexed comment of the store", reason="dataset")
        if declared[qid] and declared[qid] != split:
            raise DataError(f"{qrels_path}, line {lineno}: the query's 'split' (queries.jsonl line {qlines[qid]}) "
                               "names another split", reason="dataset")
        qrels.setdefault(qid, {})[doc] = score
    kept = tuple(q for q in queries.values() if declared[q.id] == split or (not declared[q.id] and q.id in qrels))
    for q in kept:
        positive = any(v > 0 for v in qrels.get(q.id, {}).values())
        if q.answerable and not positive:
            raise DataError(f"{qpath}, line {qlines[q.id]}: the answerable query has no relevant comment in "
                               f"{qrels_path.name}", reason="dataset")
        if not q.answerable and positive:
            raise DataError(f"{qrels_path}: the unanswerable query of queries.jsonl line {qlines[q.id]} has a "
                               "relevant comment", reason="dataset")
    frozen = MappingProxyType({q: MappingProxyType(dict(d)) for q, d in qrels.items()})
    return TaskSet(name=root.resolve().name, path=root, split=split, records=records, queries=kept, qrels=frozen)


def evaluate_task_search(
    task_set: TaskSet,
    config: SearchConfig | None = None,
    *,
    embedder: Embedder | None = None,
    cache: EmbeddingCache | None = None,
    limit: int | None = None,
) -> EvalReport:
    """Ask every query of ``task_set`` through the task tool under ``config`` (its
    ``tasks.retrievers`` and ``fusion``) and measure the answers.

    Args:
        task_set: from ``load_task_set``.
        config: a ``SearchConfig`` (default: the shipped one, FTS5 alone).
        embedder, cache: passed to the engine's in-memory index (``bm25`` / ``dense`` retrievers).
        limit: hits asked per query (default: the tool's maximum, 30).

    Returns:
        An ``EvalReport`` (``path`` ``tasks``, ``depth`` the limit): metrics over the answerable
        queries, ``by_lang`` / ``by_category``, per-query values, the no-answer figures of "no hits".
    """
    config = config or SearchConfig()
    limit = tools.MAX_LIMIT if limit is None else limit
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="searchkit-task-eval-") as tmp:
        db = Path(tmp) / "tasks.sqlite"
        store.import_into(db, task_set.tasks_path, task_set.comments_path)
        conn = store.open_readonly(db)
        try:
            engines: dict[str, Any] = {}
            index_s = 0.0
            for q in task_set.queries:
                if q.space not in engines:
                    s = time.perf_counter()
                    engines[q.space] = TaskEngine(conn, q.space, config, embedder=embedder, cache=cache)
                    index_s += time.perf_counter() - s
                ctx = ToolContext(caller=EVAL_OWNER, space=q.space, current_task=q.current_task, store=conn,
                                  engine=engines[q.space])
                s = time.perf_counter()
                res = tools.task_search(tools.TaskSearchParams(query=q.text, limit=limit), ctx)
                ms = (time.perf_counter() - s) * 1000
                hits = getattr(res, "hits", ())
                ranking = tuple(f"comment:{h.comment_id}" for h in hits)
                relevant = task_set.qrels.get(q.id, {})
                outcomes.append(QueryOutcome(
                    query_id=q.id, lang=q.lang or "", category=q.category, answerable=q.answerable, ranking=ranking,
                    answer_probability=1.0 if ranking else 0.0, weak_match=not ranking, missing_ids=(),
                    latency_ms=ms, signals={"hits": float(len(ranking))},
                    relevant_kinds=("comment",) if any(v > 0 for v in relevant.values()) else (),
                ))
        finally:
            conn.close()
    return summarize(task_set, config, outcomes, index_s=index_s, path=PATH, depth=limit)
