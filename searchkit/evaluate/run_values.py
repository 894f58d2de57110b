"""Per-query values of any registry metric for a run folder (issue 40 item 4): what ``compare`` tests.

A run folder's ``metrics.json`` holds, per query row, the values the eval wrote (``metrics``; ``ragas``
and ``ragas_llm`` where asked for: ``searchkit.evaluate.measures``). A metric the eval did not write
is computed here where that is straightforward: an ir_measures measure (or an ID-based ragas score)
from the folder's ``run.trec`` against the qrels of the dataset the run measured, found where the
provenance says (``dataset_path``, then the dataset's name as ``eval --dataset`` resolves it) and used
only when its content hash is the run's ``dataset_sha256``. The rankings are read as trec_eval reads
them (score descending; ``run.trec`` never ties: ``searchkit.evaluate.trec``), so a value computed
here is the value the eval would have written. Anything else (an LLM-judged ragas score, a folder
without ``run.trec``, a dataset that cannot be found or has changed) is one line saying so and how to
get the value.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from searchkit.errors import DataError, InputError, SearchkitError
from searchkit.evaluate import ragas_metrics
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.measures import Metric, metric, row_value
from searchkit.evaluate.metrics import per_query_metrics
from searchkit.evaluate.provenance import dataset_hash
from searchkit.evaluate.trec import read_trec_run, untrec_id

if TYPE_CHECKING:
    from searchkit.evaluate.runs import RunFolder

__all__ = ["metric_values", "with_metrics"]


def _holds(run: Any, m: Metric) -> bool:
    """Whether the run's rows carry ``m`` at all (a ragas score may be undefined on some queries)."""
    return any(isinstance(q.get(m.field), Mapping) and m.name in q[m.field] for q in run.queries)


def metric_values(runs: Sequence[Any], metrics: Sequence[Metric], ids: Sequence[str],
                  *, computed_note: list[str] | None = None) -> dict[str, list[dict[str, float]]]:
    """``{metric name: [per run {query_id: value}]}`` over ``ids`` (the judged queries compared): the
    values each run folder holds, else computed from its ``run.trec`` (see the module docstring). A
    query without a finite value (a ragas score left undefined, a query not judged by the LLM) is
    absent from that run's mapping. ``computed_note`` collects a line per run and metric computed.

    Raises:
        InputError: a run lacks a metric that cannot be computed; the message names the folder, the
            metric and why, and how to write the values.
    """
    out: dict[str, list[dict[str, float]]] = {}
    cache: dict[tuple[str, str, str], Any] = {}
    for m in metrics:
        per_run = []
        for run in runs:
            if _holds(run, m):
                rows = {q["id"]: q for q in run.queries}
                vals = {q: row_value(rows[q], m) for q in ids if q in rows}
                if m.source == "ir_measures" and any(v is None for v in vals.values()):
                    vals = _computed(run, m, ids, cache)
                    if computed_note is not None:
                        computed_note.append(f"{run.name}: {m.name} computed from {_rankings_name(run)} (some rows lacked it)")
            else:
                vals = _computed(run, m, ids, cache)
                if computed_note is not None:
                    computed_note.append(f"{run.name}: {m.name} computed from {_rankings_name(run)} and the {run.query_set[0]} "
                                         f"{run.query_set[1]} qrels")
            per_run.append({q: float(v) for q, v in vals.items() if v is not None})
        out[m.name] = per_run
    return out


def with_metrics(run: RunFolder, names: Sequence[str]) -> dict[str, Any]:
    """The run folder's ``metrics.json`` (``run.metrics``) with the ir_measures measures of ``names`` it
    lacks added: to each judged query's ``metrics`` (computed from ``run.trec``, as ``metric_values``)
    and to the headline ``metrics`` (their mean over the judged queries, as ``eval`` reports). What
    ``gate --run`` and ``report`` read where a baseline gates, or a table shows, a measure the eval did
    not write. Names the folder holds, and names that are not ir_measures measures, are left as they are.

    Raises:
        InputError: a name is not in the registry.
        InputError: a measure cannot be computed (one line, as ``metric_values``).
    """
    wanted = [m for m in (metric(n) for n in names) if m.source == "ir_measures"]
    judged = [q for q in run.queries if isinstance(q.get("metrics"), Mapping)]
    lacking = [m for m in dict.fromkeys(wanted) if any(m.name not in q["metrics"] for q in judged)]
    out = dict(run.metrics)
    if not lacking or not judged:
        return out
    ids = [q["id"] for q in judged]
    values = metric_values([run], lacking, ids)
    rows = []
    for q in out.get("queries") or []:
        if isinstance(q.get("metrics"), Mapping):
            q = {**q, "metrics": {**q["metrics"], **{m.name: values[m.name][0][q["id"]] for m in lacking
                                                     if q["id"] in values[m.name][0]}}}
        rows.append(q)
    out["queries"] = rows
    headline = dict(out.get("metrics") or {})
    for m in lacking:
        got = list(values[m.name][0].values())
        headline[m.name] = float(np.mean(got)) if got else float("nan")  # as metrics.ranking_metrics
    out["metrics"] = headline
    return out


def _rankings_name(run: RunFolder) -> str:
    """Where a run's rankings are read from, in words."""
    source = getattr(run, "source", "folder")
    return {"trec": "its TREC run file", "memory": "its rankings"}.get(source, "run.trec")


def _rerun(run: RunFolder, m: Metric) -> str:
    d, s, _ = run.query_set
    source = getattr(run, "source", "folder")
    if source == "trec":
        if m.source == "ragas-llm":
            return "a TREC run holds document ids only, no cards for an LLM to read"
        return f"load the TREC run again with its dataset and metrics including {m.name}"
    if source == "memory":
        return f"evaluate again with metrics including {m.name}"
    what = {"ragas": "ragas", "ragas-llm": f"ragas-llm --llm-k {m.k}"}.get(m.source, m.name)
    return f"rerun `searchkit eval --dataset {d} --split {s} --metrics {what} --out {run.path}` to write them"


def _computed(run: RunFolder, m: Metric, ids: Sequence[str], cache: dict) -> dict[str, float | None]:
    where = f"{run.path} holds no per-query {m.name}"
    if m.source == "ragas-llm":
        raise InputError(f"{where} (an LLM-judged score cannot be computed from the rankings); {_rerun(run, m)}")
    if m.source not in ("ir_measures", "ragas"):
        raise InputError(f"{where}; {_rerun(run, m)}")
    held = getattr(run, "rankings", None)
    trec = run.path / "run.trec"
    if held is None and not trec.is_file():
        raise InputError(f"{where} and no run.trec to compute it from; {_rerun(run, m)}")
    dataset = _dataset(run, m, cache, where)
    ranking = {q: dict(docs) for q, docs in held.items()} if held is not None else _ranking(trec, where)
    qrels = {q: dict(dataset.qrels.get(q, {})) for q in ids}
    if m.source == "ragas":
        if not ragas_metrics.is_available():
            raise InputError(f"{where}; computing it needs ragas: {ragas_metrics.INSTALL_HINT}")
        scores = ragas_metrics.ragas_scores(ranking, qrels, k=int(m.k or 10))
        return {q: _finite(scores.get(q, {}).get(m.name)) for q in ids}
    values = per_query_metrics(qrels, ranking, [m.name])
    return {q: (values[q][m.name] if q in values else None) for q in ids}


def _finite(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _ranking(path: Path, where: str) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: score}}`` of a run file, each query's documents in trec_eval's order and ids
    decoded (``%XX``: what our writer encodes)."""
    try:
        run = read_trec_run(path)
    except SearchkitError as exc:
        raise InputError(f"{where}, and its run.trec cannot be read: {str(exc)[:200]}") from None
    return {untrec_id(q): {untrec_id(d): s for d, s in run.ranking(q)} for q in run.scores}


def _dataset(run: RunFolder, m: Metric, cache: dict, where: str) -> Any:
    """The dataset split the run measured: at its provenance's ``dataset_path``, else under its name,
    whichever holds content with the run's hash."""
    name, split, sha = run.query_set
    key = (name, split, sha)
    if key in cache:
        return cache[key]
    held = getattr(run, "dataset", None)
    if held is not None and dataset_hash(held) == sha:
        cache[key] = held
        return held
    tried: list[str] = []
    candidates: list[Path] = []
    given = run.provenance.get("dataset_path")
    if isinstance(given, str) and given:
        candidates.append(Path(given))
    try:
        candidates.append(resolve_dataset(name))
    except (DataError, OSError, ValueError):
        pass
    for folder in dict.fromkeys(candidates):
        tried.append(str(folder))
        if not folder.is_dir():
            continue
        try:
            ds = load_dataset(folder, split=split)
        except (SearchkitError, OSError, ValueError):
            continue
        if dataset_hash(ds) == sha:
            cache[key] = ds
            return ds
    looked = ", ".join(tried) or "nowhere (no dataset_path, no dataset of that name)"
    raise InputError(f"{where}, and computing it from run.trec needs the qrels of {name} {split} as the run "
                        f"measured them (sha256 {sha[:12]}): not found at {looked}; {_rerun(run, m)}")

