"""The regression gate (SPEC E5): fail when a metric falls below its committed baseline.

A baseline file (``evals/baselines/NAME.json``) names a dataset split and the config measured on
it, and stores the figures with their per-query values. ``check`` runs (or reads) the same eval
now and, for each gated metric, reads the drop against two thresholds:

- a drop within the metric's **tolerance** (``gated``, e.g. 0.01) always passes;
- a drop beyond its **non-inferiority margin** (``DEFAULT_MARGINS``, e.g. 0.02 for nDCG@10; a
  baseline's optional ``margins`` or ``gate --margin`` change it) always fails, significant or
  not: a small query set cannot prove a large drop significant (mini dev's 26 answerable queries
  gave p 0.065 for nDCG@10 0.933 -> 0.855), and such a drop is not one to ship;
- in between, it fails only when a paired test over queries says the drop is significant
  (Fisher's randomization test for per-query metrics, a paired bootstrap for the no-answer AUROC;
  ``evaluate.compare``; McNemar's exact test over the answerable queries for the false-warning
  rate), so noise does not make CI flaky.

The weak-match warning's ``false-warn-rate`` (H11: answerable queries warned) is gated the other way
round: a *rise* is the regression (``LOWER_IS_BETTER``). A baseline measured through the history
tool (``path`` ``tool``: ``eval --as-tool``) is gated only against a run of that path (issue 39
item 10): mini's dev split has 26 answerable queries, so one query warned more (0.04) is noise and
passes, two (0.08, beyond the 0.05 margin) fail. The eval the gate runs for a baseline goes the way
the baseline records (``measure``: ``path`` ``tool`` through the history tool).

A baseline may gate any ir_measures measure of the metric registry (``searchkit.evaluate.measures``;
issue 40 item 4) in its canonical spelling (``AP``, never ``MAP``), the AUROC and the false-warning
rate; the eval it runs reports them (``ranking_of``), a run folder that lacks one gets it from its
``run.trec``, and a run that still lacks one is refused in one line. Another system's TREC run
(``any_run.load_any_run``) is gated against any baseline: it has no weak-match probability, so its
gated no-answer figures are ``not measured`` (shown, never a failure).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from searchkit import strict_json
from searchkit.config import SearchConfig
from searchkit.errors import DataError, InputError
from searchkit.evaluate.compare import auroc_bootstrap, paired_test
from searchkit.evaluate.measures import DEFAULT_METRICS
from searchkit.evaluate.measures import metric as registry_metric
from searchkit.evaluate.provenance import dataset_hash, git_commit, now, package_versions
from searchkit.evaluate.datasets import Dataset
from searchkit.evaluate.run import PATHS, EvalReport, evaluate_dataset
from searchkit.evaluate.trec_runs import TREC_PATH
from searchkit.util import problem_of, atomic_write_text, read_json_file

if TYPE_CHECKING:
    from searchkit.evaluate.task_eval import TaskSet

BASELINE_FORMAT = "searchkit.baseline"
BASELINE_VERSION = 1
FALSE_WARN = "false-warn-rate"
"""The share of answerable queries the weak-match warning fired on (H11; ``metrics.no_answer_metrics``)."""
LOWER_IS_BETTER: frozenset[str] = frozenset({FALSE_WARN})
"""Gated figures whose rise is the regression."""
DEFAULT_GATED: dict[str, float] = {"nDCG@10": 0.01, "RR@10": 0.01, "R@100": 0.01, "AUROC": 0.02, FALSE_WARN: 0.01}
"""Gated metrics and the drop (for ``LOWER_IS_BETTER``: the rise) each tolerates before the
significance test is asked. A baseline file names its own (``gated``): one written before the
false-warning rate was gated keeps not gating it until it is rewritten."""
DEFAULT_MARGINS: dict[str, float] = {"nDCG@10": 0.02, "RR@10": 0.02, "R@100": 0.02, "AUROC": 0.03, FALSE_WARN: 0.05}
"""Non-inferiority margins: a drop larger than this fails even when the test does not call it
significant (absolute, in the metric's units). Twice the tolerance for the ranking metrics; AUROC,
measured on fewer (unanswerable) queries and noisier, gets 0.03; the false-warning rate 0.05, so on
a split of 26 answerable queries one more warned (0.038) is noise and two (0.077) fail, and on a
large split a rise of more than 5 points fails. A gated metric not named here gets
``FALLBACK_MARGIN``."""
FALLBACK_MARGIN = 0.02
DEFAULT_TEST = "fisher"
DEFAULT_ALPHA = 0.05


NOT_MEASURED = "not measured"
"""The verdict of a gated no-answer figure the run does not hold (a TREC run has no weak-match
probability): shown, never a failure."""
NOT_MEASURED_WHY = "a TREC run has no weak-match probability"


@dataclass(frozen=True)
class Row:
    """One gated metric of one baseline: the figures and the verdict."""

    baseline: str
    dataset: str
    metric: str
    before: float
    now: float
    tolerance: float
    p: float
    verdict: str  # "ok", "better", "drop within tolerance", "drop not significant", "REGRESSION", "not measured"
    margin: float = math.inf
    reason: str = ""
    """Why a REGRESSION failed: ``beyond margin`` (larger than the margin) or ``significant``; why a
    figure was ``not measured``."""

    @property
    def delta(self) -> float:
        return self.now - self.before

    @property
    def failed(self) -> bool:
        return self.verdict == "REGRESSION"

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "dataset": self.dataset, "metric": self.metric, "baseline_value": self.before,
                "now": self.now, "delta": self.delta, "tolerance": self.tolerance, "margin": self.margin, "p": self.p,
                "verdict": self.verdict, "reason": self.reason or None}


# -- baseline files -----------------------------------------------------------------------------

def read_baseline(path: str | Path) -> dict[str, Any]:
    """Read and check a baseline file."""
    p = Path(path)
    try:
        data = read_json_file(p)  # a regular file only: a FIFO is refused, never waited on
    except FileNotFoundError:
        raise DataError(f"baseline {str(p)!r} does not exist; write one with `searchkit gate --update --baseline {p}`") from None
    except DataError as exc:
        raise DataError(f"baseline {str(p)!r} is unreadable ({problem_of(exc)})") from None
    except OSError as exc:
        raise DataError(f"baseline {str(p)!r} is unreadable ({exc.strerror or type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise DataError(f"baseline {str(p)!r} is not a {BASELINE_FORMAT} file")
    if data.get("format_version") != BASELINE_VERSION:
        raise DataError(f"baseline {str(p)!r} has format_version {str(data.get('format_version'))[:20]}, this searchkit reads {BASELINE_VERSION}")
    for key in ("dataset", "split", "dataset_sha256", "config", "per_query", "answerable", "answer_probability", "figures"):
        if key not in data:
            raise DataError(f"baseline {str(p)!r} lacks {key!r}; rewrite it with `searchkit gate --update`")
    problem = _baseline_problem(data)
    if problem:
        raise DataError(f"baseline {str(p)!r} is damaged ({problem}); rewrite it with `searchkit gate --update`")
    return data


def _gated_problem(name: str) -> str | None:
    """Why a gated name cannot be gated (the registry, ``searchkit.evaluate.measures``), or None: any
    ir_measures measure in its canonical spelling, the AUROC or the false-warning rate (a baseline
    holds no ragas scores, and the other no-answer figures have no paired test)."""
    try:
        m = registry_metric(name)
    except InputError:  # registry_metric raises nothing else
        return f"gated names {name[:40]!r}, which is not a metric (see searchkit.evaluate.measures)"
    if m.name != name:
        return f"gated names {name[:40]!r}; write it as {m.name}"
    if m.source != "ir_measures" and m.name not in ("AUROC", FALSE_WARN):
        return f"gated names {name[:40]!r}, a figure the gate has no test for"
    return None


def ranking_of(baseline: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The ranking metrics an eval gated against ``baseline`` reports: ``DEFAULT_METRICS`` and every
    gated ir_measures measure (``evaluate_dataset(metrics=...)``, ``run_values.with_metrics``). None
    (a new baseline): ``DEFAULT_GATED``'s."""
    gated = (baseline or {}).get("gated") or DEFAULT_GATED
    extra = [registry_metric(m).name for m in gated if registry_metric(m).source == "ir_measures"]
    return tuple(dict.fromkeys([*DEFAULT_METRICS, *extra]))


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _baseline_problem(data: Mapping[str, Any]) -> str | None:
    """What in a baseline's figures the gate cannot use (named, never quoted), or None."""
    if not all(isinstance(data[k], str) for k in ("dataset", "split", "dataset_sha256")):
        return "dataset, split and dataset_sha256 must be strings"
    if not isinstance(data["config"], dict):
        return "config is not an object"
    gated = data.get("gated", DEFAULT_GATED)
    if not isinstance(gated, dict) or not all(isinstance(k, str) and _num(v) for k, v in gated.items()):
        return "gated is not an object of tolerances"
    for name in gated:
        problem = _gated_problem(name)
        if problem:
            return problem
    if "alpha" in data and not _num(data["alpha"]):
        return "alpha is not a number"
    margins = data.get("margins", {})
    if not isinstance(margins, dict) or not all(isinstance(k, str) and _num(v) and v >= 0 for k, v in margins.items()):
        return "margins is not an object of non-negative numbers"
    if not isinstance(data["figures"], dict) or not all(v is None or _num(v) for v in data["figures"].values()):
        return "figures is not an object of numbers"
    pq, ans, prob = data["per_query"], data["answerable"], data["answer_probability"]
    if not isinstance(pq, dict) or not all(isinstance(m, dict) and all(_num(x) for x in m.values()) for m in pq.values()):
        return "per_query is not an object of per-query figures"
    if not isinstance(ans, dict) or not all(isinstance(v, bool) for v in ans.values()):
        return "answerable is not an object of true/false"
    if not isinstance(prob, dict) or not all(v is None or _num(v) for v in prob.values()) or set(prob) < set(ans):
        return "answer_probability is not an object of numbers for every query"
    warned = data.get("warned", {})
    if not isinstance(warned, dict) or not all(isinstance(v, bool) for v in warned.values()):
        return "warned is not an object of true/false"
    if not isinstance(data.get("path", "searcher"), str):
        return "path is not a string"
    return None


def baseline_from_report(
    report: EvalReport, dataset: Dataset | TaskSet, config: SearchConfig, *, name: str, gated: Mapping[str, float] | None = None,
    test: str = DEFAULT_TEST, alpha: float = DEFAULT_ALPHA, margins: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """A baseline document from an ``EvalReport`` (with commit, date and package versions).
    ``margins`` (optional) is written only when given: without it the gate applies
    ``DEFAULT_MARGINS`` of the searchkit that reads the file."""
    d = report.to_dict(with_queries=True)
    optional = {"margins": dict(margins)} if margins else {}
    return {
        **optional,
        "format": BASELINE_FORMAT,
        "format_version": BASELINE_VERSION,
        "name": name,
        "dataset": dataset.name,
        "split": dataset.split,
        "dataset_sha256": dataset_hash(dataset),
        "path": d.get("path", "searcher"),
        "config": config.to_dict(),
        "config_fingerprint": config.fingerprint(),
        "gated": dict(gated or DEFAULT_GATED),
        "test": test,
        "alpha": alpha,
        "figures": {**{k: _r(v) for k, v in d["metrics"].items()}, "AUROC": _r(d["no_answer"].get("AUROC")),
                    FALSE_WARN: _r(d["no_answer"].get(FALSE_WARN))},
        "per_query": {q["id"]: {m: _r(v) for m, v in q["metrics"].items()} for q in d["queries"] if q.get("metrics")},
        "answerable": {q["id"]: bool(q["answerable"]) for q in d["queries"]},
        "answer_probability": {q["id"]: _r(q["answer_probability"]) for q in d["queries"]},
        "warned": {q["id"]: bool(q.get("weak_match")) for q in d["queries"]},
        "written": {"git": git_commit(), "time": now(), "versions": package_versions()},
    }


def measure(dataset: Dataset, config: SearchConfig, *, path: str = "searcher", show_progress: bool = False,
            metrics: Sequence[str] = DEFAULT_METRICS) -> EvalReport:
    """The eval a baseline of ``path`` records and is gated against (``evaluate.run.evaluate_dataset``;
    ``path`` ``tool``: through the history tool, ``eval --as-tool``): what ``searchkit gate`` runs
    for a baseline (``path`` read from it) and for ``--update``. ``metrics``: the ranking metrics
    reported (``ranking_of(baseline)``: the defaults and every gated ir_measures measure)."""
    if path not in PATHS:
        raise DataError(f"unknown eval path {str(path)[:40]!r}; valid: {', '.join(PATHS)}")
    return evaluate_dataset(dataset, config, show_progress=show_progress, as_tool=path == "tool", metrics=metrics)


def _r(value: object) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    return value


def write_baseline(path: str | Path, doc: Mapping[str, Any]) -> None:
    """Write a baseline atomically, as strict JSON (an undefined figure is ``null``)."""
    atomic_write_text(Path(path), strict_json.dumps(doc, indent=1, sort_keys=True) + "\n")


def margins_of(baseline: Mapping[str, Any], override: Mapping[str, float] | None = None) -> dict[str, float]:
    """The non-inferiority margin of each gated metric: ``override`` (``gate --margin``), else the
    baseline's ``margins``, else ``DEFAULT_MARGINS`` (``FALLBACK_MARGIN`` for a metric it lacks)."""
    given = {**dict(baseline.get("margins") or {}), **dict(override or {})}
    return {m: float(given.get(m, DEFAULT_MARGINS.get(m, FALLBACK_MARGIN))) for m in baseline["gated"]}


# -- checking -----------------------------------------------------------------------------------

def now_figures(report_dict: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of an eval (``EvalReport.to_dict(with_queries=True)`` or a run folder's
    ``metrics.json``) the gate compares."""
    queries = report_dict.get("queries") or []
    no_answer = report_dict.get("no_answer", {})
    figures = {**dict(report_dict.get("metrics", {})), "AUROC": no_answer.get("AUROC"),
               FALSE_WARN: no_answer.get(FALSE_WARN)}
    return {  # rounded as a baseline stores them, so an unchanged run compares equal
        "figures": {k: _r(v) for k, v in figures.items()},
        "per_query": {q["id"]: {m: _r(v) for m, v in q["metrics"].items()} for q in queries if q.get("metrics")},
        "answerable": {q["id"]: bool(q["answerable"]) for q in queries},
        "answer_probability": {q["id"]: _r(float(q["answer_probability"])) for q in queries},
        "warned": {q["id"]: bool(q.get("weak_match")) for q in queries},
        "path": str(report_dict.get("path") or "searcher"),
    }


def check(baseline: Mapping[str, Any], now: Mapping[str, Any], *, label: str = "",
          margins: Mapping[str, float] | None = None) -> list[Row]:
    """Gate ``now`` (``now_figures``) against ``baseline`` (``read_baseline``): one Row per gated
    metric. ``margins`` overrides the non-inferiority margins (``margins_of``)."""
    label = label or str(baseline.get("name", ""))
    test = baseline.get("test", DEFAULT_TEST)
    alpha = float(baseline.get("alpha", DEFAULT_ALPHA))
    want, got = str(baseline.get("path", "searcher")), str(now.get("path", "searcher"))
    if want != got and got != TREC_PATH:  # another system's TREC run is gated against any baseline
        how = {"tool": "through the history tool (eval --as-tool)", "searcher": "through the Searcher (eval)"}
        raise DataError(f"{label}: the baseline was measured {how.get(want, want)}, this run {how.get(got, got)}; "
                        f"gate it against a run of the same path (e.g. `searchkit eval --dataset {baseline['dataset']} "
                        f"--split {baseline['split']}{' --as-tool' if want == 'tool' else ''} --out RUN` and "
                        "`searchkit gate --run RUN`)")
    if set(now["answerable"]) != set(baseline["answerable"]):
        raise DataError(f"{label}: the run holds other queries than the baseline; rerun on {baseline['dataset']} {baseline['split']}")
    margin_of = margins_of(baseline, margins)
    per_query_metrics = [m for m in baseline["gated"] if registry_metric(m).source == "ir_measures"]
    for m in per_query_metrics:
        if baseline["figures"].get(m) is not None and now["figures"].get(m) is None:
            raise DataError(f"{label}: the run holds no {m}, which the baseline gates; rerun the eval with "
                            f"--metrics {','.join(ranking_of(baseline))}")
    ps = paired_test(baseline["per_query"], now["per_query"], test, metrics=per_query_metrics) if per_query_metrics else {}
    rows = []
    for metric, tol in baseline["gated"].items():
        before = baseline["figures"].get(metric)
        value = now["figures"].get(metric)
        if before is None:
            continue  # not defined on this split (e.g. AUROC without unanswerable queries)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            # a no-answer figure of a run without weak-match probabilities (a TREC run): said, not gated
            rows.append(Row(label, str(baseline["dataset"]), metric, float(before), math.nan, float(tol), math.nan,
                            NOT_MEASURED, margin_of[metric], NOT_MEASURED_WHY if got == TREC_PATH else "the run lacks it"))
            continue
        if metric == "AUROC":
            ids = sorted(baseline["answerable"])
            p = auroc_bootstrap([baseline["answerable"][q] for q in ids],
                                [baseline["answer_probability"][q] for q in ids],
                                [now["answer_probability"][q] for q in ids])["p"]
        elif metric == FALSE_WARN:
            p = more_warned_p(baseline, now)
        else:
            p = ps[metric]
        delta = float(value) - float(before)
        better = -delta if metric in LOWER_IS_BETTER else delta
        verdict, reason = _verdict(better, float(tol), margin_of[metric], float(p), alpha)
        rows.append(Row(label, str(baseline["dataset"]), metric, float(before), float(value), float(tol), float(p), verdict,
                        margin_of[metric], reason))
    return rows


def more_warned_p(baseline: Mapping[str, Any], now: Mapping[str, Any]) -> float:
    """McNemar's exact one-sided p that the weak-match warning fires on more answerable queries
    now than in the baseline: of the answerable queries whose warning changed, how unlikely so
    many newly warned ones are if either change were as likely (``binom(n, 0.5)``). NaN when the
    baseline does not record each query's warning (written before it was gated)."""
    from scipy.stats import binom

    before, after = baseline.get("warned"), now.get("warned")
    if not before or after is None:
        return math.nan
    ids = [q for q, a in baseline["answerable"].items() if a]
    up = sum(1 for q in ids if after.get(q) and not before.get(q))
    down = sum(1 for q in ids if before.get(q) and not after.get(q))
    if up + down == 0:
        return 1.0
    return float(binom.sf(up - 1, up + down, 0.5))


_EPS = 1e-9  # figures are stored rounded to 6 places: a drop must exceed a threshold by more than this


def _verdict(delta: float, tolerance: float, margin: float, p: float, alpha: float) -> tuple[str, str]:
    """(verdict, reason) of one gated figure: better / ok; beyond the margin fails whatever p says;
    within the tolerance passes; in between, fails only when significant."""
    if delta >= 0:
        return ("better" if delta > _EPS else "ok"), ""
    if -delta > margin + _EPS:
        return "REGRESSION", "beyond margin"
    if -delta <= tolerance:
        return "drop within tolerance", ""
    if not (p < alpha):  # nan (no test possible) is not significant
        return "drop not significant", ""
    return "REGRESSION", "significant"


def render(rows: Sequence[Row]) -> str:
    """The gate's table: dataset, metric, baseline, now, delta, tolerance, margin, p, verdict."""
    w = max([9] + [len(r.metric) + 1 for r in rows])  # false-warn-rate is wider than nDCG@10
    head = (f"{'baseline':<22}{'dataset':<18}{'metric':<{w}}{'baseline':>9}{'now':>9}{'delta':>9}{'tol':>7}"
            f"{'margin':>8}{'p':>8}  verdict")
    lines = [head]
    for r in rows:
        p = "n/a" if math.isnan(r.p) else f"{r.p:.4f}"
        change = "rise" if r.metric in LOWER_IS_BETTER else "drop"
        why = {"beyond margin": f" ({change} > margin {r.margin:.3f})",
               "significant": f" (p < alpha, {change} > {r.tolerance:.3f})"}
        if r.verdict == NOT_MEASURED:
            lines.append(f"{r.baseline[:21]:<22}{r.dataset[:17]:<18}{r.metric:<{w}}{r.before:>9.4f}{'n/a':>9}"
                         f"{'':>9}{r.tolerance:>7.3f}{r.margin:>8.3f}{'n/a':>8}  {r.verdict} ({r.reason})")
            continue
        lines.append(f"{r.baseline[:21]:<22}{r.dataset[:17]:<18}{r.metric:<{w}}{r.before:>9.4f}{r.now:>9.4f}"
                     f"{r.delta:>+9.4f}{r.tolerance:>7.3f}{r.margin:>8.3f}{p:>8}  {r.verdict}{why.get(r.reason, '')}")
    failed = [r for r in rows if r.failed]
    unmeasured = sum(1 for r in rows if r.verdict == NOT_MEASURED)
    lines.append(f"gate: {'FAILED' if failed else 'passed'} — {len(failed)} regression(s) in {len(rows) - unmeasured} "
                 "gated figure(s)" + (": " + ", ".join(f"{r.dataset} {r.metric}" for r in failed) if failed else "")
                 + (f"; {unmeasured} not measured" if unmeasured else ""))
    return "\n".join(lines)
