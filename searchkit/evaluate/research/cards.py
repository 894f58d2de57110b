"""Error analysis (notebook 04: cards side by side, per-query deltas) and config diffs (05).

Part of ``searchkit.evaluate.research`` (its docstring says what the notebooks call); import
from there.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

from searchkit.config import SearchConfig
from searchkit.errors import InputError, SearchkitError
from searchkit.evaluate.research.base import _pd
from searchkit.evaluate.research.tables import _cut
from searchkit.ingest.policy import can_see
from searchkit.searcher import Filters, Searcher
from searchkit.util import dotted_leaves

if TYPE_CHECKING:
    from searchkit.evaluate.datasets import Dataset, Query
    from searchkit.evaluate.runs import RunFolder
    from searchkit.index.embedding import Embedder
    from searchkit.records import Record

# --------------------------------------------------------------------------- error analysis (04)


def _filters_for(q: Query) -> Filters | None:
    """The filters ``searchkit eval`` applies for a query (kinds, dates, spaces, caller's privacy)."""
    if not (q.kinds or q.since or q.until or q.spaces or q.caller):
        return None
    visible = None
    if q.caller:
        def visible(r: Record, caller: str | None = q.caller) -> bool:
            return can_see(r, caller, "personal")
    return Filters(kinds=tuple(q.kinds) if q.kinds else None, since=q.since, until=q.until,
                   spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None, visible=visible)


def cards_side_by_side(dataset: Dataset, query_id: str, configs: Mapping[str, SearchConfig], *, k: int = 10,
                       embedder: Embedder | None = None, title_chars: int = 28) -> Any:
    """For one query of a loaded split, the cards of every config's top ``k`` side by side, one
    row a card (its best rank first; the row label is its record id): the card (kind, title cut
    to ``title_chars``, relevance grade), where each config ranked it (empty: not in its top
    ``k``) with its fused score, and each retriever's score and rank (what made it win) — once
    (``"bm25 retriever"``) where every config that ran it scored the card alike, else once a
    config (``"bm25 retriever · label"``), so a config labelled like a retriever keeps its own
    columns. Columns are two-level: ``("card", field)``, ``(config label, "rank" | "fused")``,
    ``("<name> retriever", "score" | "rank")``. One row a card, not one column block a config,
    keeps the table within a notebook's width.

    Raises:
        KeyError: ``query_id`` is not a query of the split.
    """
    pd = _pd()
    by_id = {q.id: q for q in dataset.queries}
    if query_id not in by_id:
        raise KeyError(f"query {query_id!r} is not in {dataset.name} {dataset.split}")
    grades = dataset.qrels.get(query_id, {})
    hits = _top_hits(dataset, by_id[query_id], configs, k, embedder)
    order = sorted({rid for mine in hits.values() for rid in mine},
                   key=lambda rid: (min(mine[rid][0] for mine in hits.values() if rid in mine), rid))
    retrievers = sorted({n for mine in hits.values() for _, h in mine.values() for n in h.scores})
    alike = {n: _scored_alike(hits, n) for n in retrievers}
    rows = []
    for rid in order:
        first = next(h for mine in hits.values() for r, (_, h) in mine.items() if r == rid)
        row: dict[tuple[str, str], Any] = {("card", "kind"): first.record.kind,
                                           ("card", "title"): _cut(first.record.title or "", title_chars),
                                           ("card", "grade"): grades.get(rid, 0)}
        for label, mine in hits.items():
            rank, h = mine.get(rid, (None, None))
            row[(label, "rank")] = rank
            row[(label, "fused")] = h.score if h is not None else math.nan
        for n in retrievers:
            runs = [(label, mine) for label, mine in hits.items() if _ran(mine, n)]
            if alike[n]:  # one pair of columns, from any config that has the card
                cells = [(f"{n} retriever", next((mine[rid][1] for _, mine in runs if rid in mine), None))]
            else:
                cells = [(f"{n} retriever · {label}", mine.get(rid, (None, None))[1]) for label, mine in runs]
            for where, h in cells:
                row[(where, "score")] = h.scores.get(n, math.nan) if h is not None else math.nan
                row[(where, "rank")] = h.ranks.get(n) if h is not None else None
        rows.append(row)
    frame = pd.DataFrame(rows, index=pd.Index(order, name="id"))
    if not frame.empty:
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
        for col in frame.columns:
            if col[1] == "rank":
                frame[col] = frame[col].astype("Int64")
    return frame


def _top_hits(dataset: Dataset, q: Query, configs: Mapping[str, SearchConfig], k: int,
              embedder: Embedder | None) -> dict[str, dict[str, Any]]:
    """``{config label: {record id: (rank, hit)}}`` of one query's top ``k`` under each config (one
    index per distinct index fingerprint)."""
    out: dict[str, dict[str, Any]] = {}
    built: dict[str, Any] = {}
    for label, cfg in configs.items():
        key = cfg.index_fingerprint()
        searcher = built.get(key)
        searcher = (searcher.with_config(cfg) if searcher is not None
                    else Searcher.build(dataset.records, cfg, embedder=embedder, show_progress=False))
        built.setdefault(key, searcher)
        res = searcher.search(q.text, k=k, filters=_filters_for(q))
        out[label] = {h.record.id: (rank, h) for rank, h in enumerate(res.hits, 1)}
    return out


def _ran(mine: Mapping[str, Any], retriever: str) -> bool:
    return any(retriever in h.scores for _, h in mine.values())


def _scored_alike(hits: Mapping[str, Mapping[str, Any]], retriever: str) -> bool:
    """Whether every config that ran ``retriever`` gave each card they share the same score and rank."""
    runs = [mine for mine in hits.values() if _ran(mine, retriever)]
    for rid in {r for mine in runs for r in mine}:
        seen = [(mine[rid][1].scores.get(retriever), mine[rid][1].ranks.get(retriever)) for mine in runs if rid in mine]
        for score, rank in seen[1:]:
            s0, r0 = seen[0]
            same_score = (score is None and s0 is None) or (score is not None and s0 is not None
                                                            and math.isclose(score, s0, rel_tol=1e-9, abs_tol=1e-12))
            if not same_score or rank != r0:
                return False
    return True


def per_query_deltas(run_a: RunFolder, run_b: RunFolder, metric: str = "nDCG@10", *,
                     labels: tuple[str, str] = ("a", "b")) -> Any:
    """Per judged query: ``metric`` in each run (columns named by ``labels``) and ``delta``
    (``b - a``), with language and category, most lost first."""
    pd = _pd()
    la, lb = labels
    if la == lb or {la, lb} & {"lang", "category", "delta"}:
        raise InputError(f"labels {labels!r}: two different names, none of lang, category, delta")
    a, b = run_a.per_query(), run_b.per_query()
    info = {q["id"]: q for q in run_a.queries}
    rows = [{"id": qid, "lang": info[qid].get("lang"), "category": info[qid].get("category"),
             la: a[qid][metric], lb: b[qid][metric], "delta": b[qid][metric] - a[qid][metric]}
            for qid in sorted(set(a) & set(b))]
    frame = pd.DataFrame(rows, columns=["id", "lang", "category", la, lb, "delta"]).set_index("id")
    return frame.sort_values(["delta", la], ascending=[True, False])


# --------------------------------------------------------------------------- export (05)


DEFAULT = "(default)"
"""What ``config_changes`` shows for a key a config leaves out (it takes its default)."""


def _config_dict(config: SearchConfig | Mapping[str, Any]) -> dict[str, Any]:
    """A ``SearchConfig``'s plain data; a plain mapping (a run folder's ``config.json``) is read
    through ``SearchConfig.from_dict`` where it loads, so two files that leave different keys at
    their defaults compare alike, else taken as it is."""
    if hasattr(config, "to_dict"):
        return config.to_dict()

    try:
        return SearchConfig.from_dict(config).to_dict()
    except (SearchkitError, TypeError, ValueError, AttributeError):
        return dict(config) if isinstance(config, Mapping) else {}


def _at(data: Mapping[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return DEFAULT
        node = node[part]
    return node


def config_changes(a: SearchConfig | Mapping[str, Any], b: SearchConfig | Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """Every dotted config key whose value differs from ``a`` to ``b`` (``SearchConfig`` objects or
    the plain data of a run folder's ``config.json``), as ``(key, old, new)`` in key order;
    ``DEFAULT`` where a config leaves a key out. A section one side sets to null while the other
    fills it (``fusion.adaptive``) is one key, its whole value on the filled side."""
    da, db = _config_dict(a), _config_dict(b)
    la, lb = dotted_leaves(da), dotted_leaves(db)
    leaves = set(la) | set(lb)
    differ = [k for k in sorted(leaves) if la.get(k, DEFAULT) != lb.get(k, DEFAULT)]
    keys = sorted({next((p for p in _prefixes(k) if p in leaves), k) for k in differ})
    return [(k, _at(da, k), _at(db, k)) for k in keys]


def _prefixes(key: str) -> list[str]:
    parts = key.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def config_diff(a: SearchConfig | Mapping[str, Any], b: SearchConfig | Mapping[str, Any],
                labels: tuple[str, str] = ("shipped", "tuned")) -> Any:
    """Every dotted config key whose value differs between two ``SearchConfig`` objects, one row
    each (``config_changes``: ``(default)`` where a config leaves an optional key out, a section
    set to null on one side as one row)."""
    pd = _pd()
    rows = [{"key": k, labels[0]: old, labels[1]: new} for k, old, new in config_changes(a, b)]
    return pd.DataFrame(rows, columns=["key", *labels]).set_index("key")
