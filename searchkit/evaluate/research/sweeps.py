"""Fusion sweeps (notebook 02) and the no-answer curves and thresholds (notebook 03).

Part of ``searchkit.evaluate.research`` (its docstring says what the notebooks call); import
from there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from searchkit.errors import InputError
from searchkit import retrievers
from searchkit.evaluate.compare import paired_test
from searchkit.evaluate.research.base import log
from searchkit.evaluate.tune import (
    MIN_HALF_CLASS,
    RRF_REFERENCE,
    SHAPES,
    default_grid,
    fusion_points,
    half_of,
    pick_fusion,
    query_shape,
    tune_fusion,
)

if TYPE_CHECKING:
    from searchkit.config import FusionConfig, SearchConfig
    from searchkit.evaluate.datasets import Dataset
    from searchkit.evaluate.fusion_tuning import FusionTrial
    from searchkit.index.engine import EmbeddingEngine


# --------------------------------------------------------------------------- fusion (02)


def _lead(weights: Mapping[str, Any]) -> str:
    """The retriever whose weight a label shows: the first of ``weights`` in the registry's order (the
    retriever whose share ``tune fusion`` reports), else the first registered (BM25 in both)."""
    names = retrievers.names()
    return next((n for n in names if n in weights), names[0])


def setting_label(settings: Mapping[str, Any]) -> str:
    """A short name of a fusion grid point: ``rrf k=60``, ``wsum minmax bm25=0.4`` (the weight of
    its first retriever in the registry's order, ``_lead``)."""
    if not settings:
        return "the base config"
    method = settings.get("fusion.method", "?")
    if method == "rrf":
        return f"rrf k={settings.get('fusion.rrf_k', '?')}"
    weights = settings.get("fusion.weights") or {}
    lead = _lead(weights)
    return f"{method} {settings.get('fusion.norm', '')} {lead}={weights.get(lead)}".replace("  ", " ")


def fusion_label(config: SearchConfig) -> str:
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
    """A fusion sweep (``fusion_sweep``): the grid's ``trials``, the pick first (``tune.pick_fusion``,
    as ``searchkit tune fusion`` picks), then by tune-half mean, and the base config itself
    (``shipped``) scored the same way over the same queries — with its query-adaptive model
    (``fusion.adaptive``), which no grid point keeps. When the pick is the base config itself (the
    grid's best differs from it only in keys its method does not fuse by, and ties with it), it is
    ``trials[0]``. ``warnings``: the lines ``searchkit tune fusion`` prints, from the same function."""

    trials: tuple[FusionTrial, ...]
    shipped: FusionTrial
    shipped_label: str
    warnings: tuple[str, ...] = ()


SHIPPED_POINT: Mapping[str, Any] = {}
"""The grid point ``fusion_sweep`` adds: no key changed, so the base config as it is."""


def fusion_sweep(datasets: Sequence[Dataset], base: SearchConfig, grid: Sequence[Mapping[str, Any]] | None = None, *,
                 metric: str = "nDCG@10", show_progress: bool = True, engine: EmbeddingEngine | None = None,
                 base_name: str = "the base config") -> FusionSweep:
    """``tune.tune_fusion`` over ``grid`` (default ``tune.default_grid(base)``) plus the base config as it
    is, on the same indexes and queries: the grid's trials (best tune-half mean first; the base is
    never among them, so never picked) and the base's own trial, adaptive model included. The
    grid's points are fixed weights (``base.replace`` with ``fusion.weights`` drops
    ``fusion.adaptive``), so the shipped fusion can be compared only this way. The points scored and
    the pick and its warnings are ``searchkit tune fusion``'s (``tune.fusion_points``,
    ``tune.pick_fusion``; ``base_name`` names the base config in the warnings).

    Progress: ``tune_fusion``'s tqdm bar over the grid (``show_progress``; in a notebook
    ``tqdm.auto`` draws a widget, the ``notebooks`` extra brings ipywidgets) and one INFO log
    line a grid point."""
    points = [dict(p) for p in (grid or default_grid(base)) if dict(p) != dict(SHIPPED_POINT)]
    trials = tune_fusion(datasets, base, fusion_points(points, base), metric=metric, show_progress=show_progress,
                         engine=engine)
    pick = pick_fusion(trials, points, base, base_name)  # its warnings are the caller's to show (notebook 02 prints them)
    ordered = (pick.best, *pick.trials) if pick.is_base else pick.trials
    return FusionSweep(tuple(ordered), pick.base, fusion_label(base), pick.warnings)


def fusion_rows(trials: Sequence[Any], datasets: Sequence[Any], metric: str = "nDCG@10") -> list[dict[str, Any]]:
    """Long rows of a ``tune.tune_fusion`` sweep for plotting and tables: for every trial, half
    (``tune`` / ``report``) and group, the mean per-query ``metric``; groups are each dataset
    (``scope`` ``dataset``) and each query language over all datasets (``scope`` ``lang``). A
    weighted sum's row names its lead retriever (``lead``: the first of its weights in the
    registry's order, as ``setting_label`` shows it) and that retriever's weight (``lead_weight``)."""
    import numpy as np

    lang = {f"{ds.name}:{q.id}": (q.lang or "und") for ds in datasets for q in ds.queries}
    rows = []
    for t in trials:
        s = t.settings
        weights = s.get("fusion.weights") or {}
        lead = _lead(weights) if weights else None
        w = weights.get(lead) if lead is not None else None
        base = {"setting": setting_label(s), "method": s.get("fusion.method"), "norm": s.get("fusion.norm"),
                "lead": lead, "lead_weight": None if w is None else float(w), "rrf_k": s.get("fusion.rrf_k")}
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


def trial_matching(trials: Sequence[FusionTrial], base: SearchConfig,
                   settings: Mapping[str, Any] | None = None) -> FusionTrial | None:
    """The trial whose settings give the same fusion as ``base`` (the shipped config) or, with
    ``settings``, as ``base.replace(**settings)``; None when the grid has no such point. The grid
    holds fixed weights, so a query-adaptive model (``fusion.adaptive``) is left out of the match:
    the shipped fusion matches the grid point of its fixed weights."""
    import dataclasses

    def fixed(fusion: FusionConfig) -> FusionConfig:
        return dataclasses.replace(fusion, adaptive=None)

    target = fixed((base.replace(**settings) if settings else base).fusion)
    for t in trials:
        if fixed(base.replace(**t.settings).fusion) == target:
            return t
    return None


def fusion_significance_rows(trials: Sequence[FusionTrial] | FusionSweep, base: SearchConfig, *,
                             shipped: FusionTrial | None = None,
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
        raise InputError(f"the false-alarm rate must be within 0 and 1, got {rate}")
    pa = sorted(float(p) for a, p in zip(answerable, prob) if a)
    if not pa:
        raise InputError("no answerable query to set a false-alarm rate on")
    k = int(math.floor(rate * len(pa) + 1e-12))
    return 1.0 if k >= len(pa) else pa[k]


def threshold_report(rows: Sequence[Mapping[str, Any]], rate: float, model: str | None = None) -> dict[str, Any]:
    """Pick the threshold on the tune half of ``no_answer_rows`` for a false-alarm ``rate`` and
    report what it does on each half: false-alarm rate (answerable warned) and recall
    (unanswerable warned). ``model`` (``documents`` / ``conversation``): only the queries that
    model scored, whose probabilities the threshold compares with (None: every row).

    Raises:
        InputError: no tune-half query was scored by ``model``, or none of them is
            answerable (one line naming the model).
    """
    if model is not None:
        rows = [r for r in rows if r.get("model", "documents") == model]
    tune = [r for r in rows if r["half"] == "tune"]
    what = f"the {model} model" if model is not None else "any model"
    whose = f"the {model} model's" if model is not None else "the"
    if not tune:
        raise InputError(f"no tune-half query of these runs was scored by {what}: its threshold cannot be picked")
    if not any(r["answerable"] for r in tune):
        raise InputError(f"no answerable tune-half query was scored by {what}: its threshold cannot be picked")
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
    a ``InputError`` naming it."""
    if models is None:
        models = [m for m in SHAPES if any(r.get("model", "documents") == m and r["half"] == "tune" for r in rows)]
    unknown = [m for m in models if m not in SHAPES]
    if unknown:
        raise InputError(f"unknown weak-match model {unknown[0]!r}; valid: {', '.join(SHAPES)}")
    return {m: threshold_report(rows, rate, m) for m in models}


def threshold_rows(choices: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Long rows of ``thresholds_by_model`` for a table: model, half, queries, false alarm, recall, threshold."""
    return [{"model": m, "half": half, **c[half], "threshold": c["threshold"]}
            for m, c in choices.items() for half in ("tune", "report")]


def apply_thresholds(config: SearchConfig, choices: Mapping[str, Mapping[str, Any]]) -> SearchConfig:
    """``config`` with each chosen threshold in the model it was picked for: ``documents`` ->
    ``weak_match.threshold``, ``conversation`` -> ``weak_match.conversation.threshold``; the other
    model, and everything else, as it was."""
    from dataclasses import replace

    wm = config.weak_match
    for model, c in choices.items():
        if model == "conversation":
            if wm.conversation is None:
                raise InputError("the config has no conversation model (weak_match.conversation is null)")
            wm = replace(wm, conversation=replace(wm.conversation, threshold=float(c["threshold"])))
        else:
            wm = replace(wm, threshold=float(c["threshold"]))
    return config.replace(weak_match=wm)


def threshold_changes(before: SearchConfig, after: SearchConfig) -> str:
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


