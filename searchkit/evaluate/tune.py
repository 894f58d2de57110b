"""Fitting the weak-match model (H11) on labelled queries, with a held-out half to report on.

Queries are split into a *tune* half and a *report* half by a salted hash of their id, so the
split is stable and independent of the dataset's own dev/test split. ``fit_weak_match`` fits a
scikit-learn ``LogisticRegression`` (standardised features, every dataset and class weighing the
same) on the tune half — on the queries themselves (``pointwise``) or on within-dataset
(answerable, unanswerable) pairs followed by Platt scaling (``pairwise``) — and folds the scaler
back into raw-feature coefficients, so ``WeakMatchConfig`` stays a plain
``sigmoid(intercept + coef · x)`` that production can compute without scikit-learn. Figures are
only ever reported on the report half.
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from searchkit import retrievers
from searchkit.config import ConfigError, SearchConfig, WeakMatchConfig, WeakMatchModel
from searchkit.errors import InputError
from searchkit.evaluate.compare import SEED, paired_test
from searchkit.evaluate.halves import SALT as SALT  # re-exported: callers import these from tune
from searchkit.evaluate.halves import half_of, query_shape
from searchkit.evaluate.halves import run_shape as run_shape
from searchkit.evaluate.metrics import no_answer_metrics, per_query_metrics
from searchkit.evaluate.run import evaluate_dataset, summarize
from searchkit.index.engine import using
from searchkit.rank.conversation import SHAPES
from searchkit.rank.signals import answer_probability
from searchkit.searcher import Searcher


class TuneError(InputError):
    """Tuning input that cannot be used (runs without per-query rows, one class only, ...)."""

log = logging.getLogger(__name__)

DEFAULT_FEATURES: tuple[str, ...] = ("dense_top1", "bm25_idf_coverage", "bm25_sentence_coverage")
"""The features the shipped documents model reads: how close the best passage is in embedding space,
and how much of the query (weighted by term rarity) the top record and its best sentence hold.
Chosen over the six of the previous model (these three plus dense_margin, dense_gap10,
bm25_idf_coverage3) by 5-fold cross-validation inside the tune half of the document sets (mean
AUROC over datasets 0.791 vs 0.783; evals/README.md), never on the report half."""
CONVERSATION_FEATURES: tuple[str, ...] = (
    "speaker_query", "speaker_named", "speaker_other", "speaker_gap", "dense_top1",
)
"""The features the shipped conversation model reads (who said the best-matching lines)."""


@dataclass(frozen=True)
class LabelledSignals:
    """One query's features and whether the space can answer it."""

    query_id: str
    answerable: bool
    signals: Mapping[str, float]
    group: str = ""
    shape: str = "documents"


_RUN_SCHEMA = {
    "type": "object",
    "required": ["dataset", "queries"],
    "properties": {
        "dataset": {"type": "string", "maxLength": 500},
        "queries": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "answerable"],
                "properties": {
                    "id": {"type": "string", "maxLength": 500},
                    "answerable": {"type": "boolean"},
                    "signals": {"type": "object", "additionalProperties": {"type": "number"}},
                },
            },
        },
    },
}


def from_eval_json(report: Any) -> list[LabelledSignals]:
    """Rows from ``searchkit eval --json --queries`` output (checked with jsonschema; a
    ValueError names the first problem)."""
    import jsonschema

    if isinstance(report, Mapping) and "queries" not in report and "dataset" in report:
        raise TuneError("the eval report has no per-query rows; run eval with --json --queries")
    try:
        jsonschema.validate(report, _RUN_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise TuneError(f"not an eval run with per-query rows (at {where}: fails the run format's "
                        f"{exc.validator!r} rule)") from None  # never exc.message: it quotes the file
    default = report.get("shape") if report.get("shape") in SHAPES else "documents"
    return [
        LabelledSignals(f"{report['dataset']}:{q['id']}", bool(q["answerable"]), q.get("signals") or {}, report["dataset"],
                        query_shape(q.get("signals") or {}, default))
        for q in report["queries"]
    ]


def _matrix(rows: Sequence[LabelledSignals], features: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[float(r.signals.get(f, 0.0)) for f in features] for r in rows], dtype=float)
    y = np.array([1 if r.answerable else 0 for r in rows], dtype=int)
    return X, y


OBJECTIVES: tuple[str, ...] = ("pointwise", "pairwise")
DOCUMENTS_OBJECTIVE = "pairwise"
"""How the shipped documents model is fitted. ``pairwise``: its direction by a logistic regression
on within-dataset (answerable, unanswerable) pairs, a smooth stand-in for each dataset's AUROC, every
dataset weighing the same; then Platt scaling of that direction for the probability and threshold.
Chosen over ``pointwise`` (one logistic regression on the queries themselves) by the same 5-fold
cross-validation inside the tune half that chose the features (mean AUROC over the document sets
0.801 vs 0.791; evals/select_weak_match_features.py), never on the report half."""
CONVERSATION_OBJECTIVE = "pointwise"
"""How the shipped conversation model is fitted: the two objectives are level there in the same
cross-validation (0.7620 vs 0.7622, within the selection script's tie of 0.001), and a tie goes to
the simpler, pointwise fit."""
MAX_PAIRS = 20000
"""Pairs per dataset in a pairwise fit: all of them when fewer, else this many drawn with a fixed seed."""


def _cell_weights(rows: Sequence[LabelledSignals]) -> np.ndarray:
    """Per-row weights under which every (group, class) cell weighs the same; mean 1."""
    from collections import Counter

    cells = Counter((r.group, int(r.answerable)) for r in rows)
    weight = np.array([1.0 / cells[(r.group, int(r.answerable))] for r in rows])
    return weight * (len(rows) / weight.sum())


def _pairwise_direction(Z: np.ndarray, y: np.ndarray, groups: np.ndarray, C: float) -> np.ndarray:
    """The weights ``w`` of a logistic regression (no intercept) on ``z_answerable - z_unanswerable``
    over pairs of one group: minimising it pushes every dataset's AUROC of ``Z @ w`` up, each dataset
    weighing the same however many pairs it has."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    diffs, weights = [], []
    for g in sorted(set(groups.tolist())):
        pos = np.flatnonzero((groups == g) & (y == 1))
        neg = np.flatnonzero((groups == g) & (y == 0))
        if not len(pos) or not len(neg):
            continue
        if len(pos) * len(neg) > MAX_PAIRS:
            i, j = rng.integers(0, len(pos), MAX_PAIRS), rng.integers(0, len(neg), MAX_PAIRS)
        else:
            i, j = np.repeat(np.arange(len(pos)), len(neg)), np.tile(np.arange(len(neg)), len(pos))
        d = Z[pos[i]] - Z[neg[j]]
        diffs += [d, -d]
        weights.append(np.full(2 * len(d), 1.0 / (2 * len(d))))
    if not diffs:
        raise TuneError("a pairwise fit needs a dataset with both answerable and unanswerable queries")
    D = np.vstack(diffs)
    labels = np.concatenate([np.r_[np.ones(len(a)), np.zeros(len(a))] for a in diffs[::2]])
    w = np.concatenate(weights)
    lr = LogisticRegression(C=C, fit_intercept=False, max_iter=2000)
    lr.fit(D, labels, sample_weight=w * (len(w) / w.sum()))
    return lr.coef_[0]


def fit_weak_match(
    rows: Iterable[LabelledSignals],
    features: Sequence[str] = DEFAULT_FEATURES,
    *,
    C: float = 1.0,
    target_false_warn: float | None = None,
    balance_groups: bool = True,
    every_group: bool = True,
    objective: str = "pointwise",
) -> WeakMatchConfig:
    """Fit on ``rows`` (use the tune half). The threshold is 0.5 on the balanced model, or, with
    ``target_false_warn``, the largest threshold whose false-warning rate on answerable rows stays
    within that target — in every group (dataset) when ``every_group`` (the groups too small to hold
    the rate alone held to it together, ``_rate_groups``), else over the rows pooled.
    With ``balance_groups`` every (group, class) cell weighs the same in the fit, so a small
    workspace-like set counts as much as a large Wikipedia one.

    ``objective`` ``pointwise``: one logistic regression on the rows. ``pairwise``: the direction
    from within-group pairs (``_pairwise_direction``), then a balanced one-feature logistic fit of
    the rows' projections on it (Platt scaling) for the probability; ``balance_groups`` is implied."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    if objective not in OBJECTIVES:
        raise TuneError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    rows = list(rows)
    X, y = _matrix(rows, features)
    if len(set(y.tolist())) < 2:
        raise TuneError("fitting weak match needs both answerable and unanswerable queries")
    scaler = StandardScaler().fit(X)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    Z = (X - scaler.mean_) / scale
    if objective == "pairwise":
        direction = _pairwise_direction(Z, y, np.array([r.group for r in rows]), C)
        proj = (Z @ direction).reshape(-1, 1)
        platt = LogisticRegression(C=1e6, max_iter=1000, random_state=0)
        platt.fit(proj, y, sample_weight=_cell_weights(rows))
        a, b = float(platt.coef_[0][0]), float(platt.intercept_[0])
        coef_z = direction * a
        coef = coef_z / scale
        intercept = float(b - np.sum(coef_z * scaler.mean_ / scale))
    else:
        if balance_groups:
            lr = LogisticRegression(C=C, max_iter=1000, random_state=0)
            lr.fit(Z, y, sample_weight=_cell_weights(rows))
        else:
            lr = LogisticRegression(C=C, class_weight="balanced", max_iter=1000, random_state=0)
            lr.fit(Z, y)
        coef = lr.coef_[0] / scale
        intercept = float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scale))
    threshold = 0.5
    if target_false_warn is not None:
        p = 1.0 / (1.0 + np.exp(-(X @ coef + intercept)))
        groups = _rate_groups([r.group for r in rows], y, target_false_warn) if every_group else np.zeros(len(rows), dtype=int)
        threshold = 1.0
        for g in np.unique(groups):
            pa = np.sort(p[(y == 1) & (groups == g)])
            if len(pa):
                k = int(np.floor(target_false_warn * len(pa)))
                threshold = min(threshold, float(pa[k]) if k < len(pa) else 1.0)
    return WeakMatchConfig(
        enabled=True,
        features=tuple(features),
        coef=tuple(float(c) for c in coef),
        intercept=intercept,
        threshold=threshold,
    )


def _rate_groups(groups: Sequence[str], y: np.ndarray, target: float) -> np.ndarray:
    """The groups the every-group false-warning rule holds to ``target``: each dataset, except that
    the datasets too small to hold the rate on their own (fewer than ``1 / target`` answerable rows:
    ``floor(target * n)`` is 0, so one query would set the threshold) are held to it together, as
    one group. A model fitted on the queries it scored meets such sets: the few LoCoMo questions
    that name no speaker, a small workspace set's tune half."""
    g = np.array(groups, dtype=object)
    small = {name for name in set(groups) if int(np.floor(target * int(((g == name) & (y == 1)).sum()))) == 0}
    if len(small) > 1:
        g = np.array(["\x00small sets" if name in small else name for name in groups], dtype=object)
    return g


def score_weak_match(rows: Iterable[LabelledSignals], cfg: WeakMatchConfig) -> dict[str, float]:
    """No-answer metrics of ``cfg`` on ``rows`` (use the report half)."""
    rows = list(rows)
    models = [cfg.model_for(r.shape) for r in rows]
    probs = [answer_probability(r.signals, m) if r.signals else 0.0 for r, m in zip(rows, models)]
    return no_answer_metrics([r.answerable for r in rows], probs, [p < m.threshold for p, m in zip(probs, models)])


MIN_HALF_CLASS = 30
"""A model's tune half with fewer answerable or fewer unanswerable queries than this is fitted, with
a warning: its coefficients and threshold rest on too few queries to trust."""


def by_shape(rows: Iterable[LabelledSignals]) -> dict[str, list[LabelledSignals]]:
    """The rows each weak-match model scored (``LabelledSignals.shape``), ``documents`` first."""
    out: dict[str, list[LabelledSignals]] = {shape: [] for shape in SHAPES}
    for r in rows:
        out["conversation" if r.shape == "conversation" else "documents"].append(r)
    return out


def small_half_warnings(rows: Iterable[LabelledSignals], shapes: Sequence[str] = SHAPES) -> list[str]:
    """One line for each model of ``shapes`` whose rows (a tune half) hold fewer than
    ``MIN_HALF_CLASS`` answerable or unanswerable queries; empty when every one has enough."""
    out = []
    for shape, mine in by_shape(rows).items():
        if shape not in shapes or not mine:
            continue
        n_ans = sum(r.answerable for r in mine)
        n_un = len(mine) - n_ans
        if n_ans < MIN_HALF_CLASS or n_un < MIN_HALF_CLASS:
            out.append(f"the {shape} model's tune half has {n_ans} answerable and {n_un} unanswerable queries "
                       f"(fewer than {MIN_HALF_CLASS} of a class): its coefficients and threshold are noisy; "
                       "evaluate more labelled queries")
    return out


def fit_weak_match_by_shape(
    rows: Iterable[LabelledSignals],
    features: Sequence[str] = DEFAULT_FEATURES,
    conversation_features: Sequence[str] = CONVERSATION_FEATURES,
    *,
    C: float = 1.0,
    target_false_warn: float | None = None,
    keep: WeakMatchConfig | None = None,
    refit: str = "both",
    objective: str = DOCUMENTS_OBJECTIVE,
    conversation_objective: str = CONVERSATION_OBJECTIVE,
) -> WeakMatchConfig:
    """Each weak-match model on the queries it scored (``LabelledSignals.shape``: the documents
    model on the queries whose top results were documents, the conversation model on those whose
    top results were conversations); each with its own threshold for ``target_false_warn`` (use the
    tune half) and its own ``objective`` (``fit_weak_match``). ``refit`` ``"documents"`` or
    ``"conversation"`` fits only that model and takes the other one from ``keep``; ``"both"`` fits
    every model that scored some of the rows and keeps the other (logged) from ``keep``. Everything
    else of ``weak_match`` (the rule that picks the model, ``enabled``) is ``keep``'s. A model to
    fit with no rows is a ``TuneError`` naming it; a model fitted on fewer than ``MIN_HALF_CLASS``
    queries of a class is logged as a warning (``small_half_warnings``)."""
    from dataclasses import replace

    if refit not in ("both",) + SHAPES:
        raise TuneError(f"refit must be both, documents or conversation, got {refit!r}")
    if refit != "both" and keep is None:
        raise TuneError(f"refit {refit} keeps the other model from a config: give keep")
    groups = by_shape(rows)
    if refit == "both":
        wanted = tuple(shape for shape in SHAPES if groups[shape])
        if not wanted:
            raise TuneError("no queries to fit the weak-match models on")
        missing = [shape for shape in SHAPES if shape not in wanted]
        if "documents" in missing and keep is None:
            raise TuneError("no query of these runs was scored by the documents model (shape documents), so it "
                            "cannot be fitted; give runs with document evidence, or a config to keep it from")
        for shape in missing:
            log.warning("no query of these runs was scored by the %s model: it is kept from the config", shape)
    else:
        wanted = (refit,)
        if not groups[refit]:
            other = next(s for s in SHAPES if s != refit)
            instead = f" (or pass --refit {other}: these runs' queries were scored by it)" if groups[other] else ""
            raise TuneError(f"no query of these runs was scored by the {refit} model (shape {refit}), so it "
                            f"cannot be fitted; give runs with {refit} evidence{instead}")
    objectives = {"documents": objective, "conversation": conversation_objective}
    for shape in wanted:
        problem = unfittable(shape, groups, objectives[shape], refit)
        if problem:
            raise TuneError(problem)
    for line in small_half_warnings([r for s in wanted for r in groups[s]], wanted):
        log.warning("%s", line)
    wm = keep if keep is not None else WeakMatchConfig(conversation=None)
    if "documents" in wanted:
        d = _fit_shape("documents", groups["documents"], features, C, target_false_warn, objective)
        wm = replace(wm, features=d.features, coef=d.coef, intercept=d.intercept, threshold=d.threshold)
    if "conversation" in wanted:
        c = _fit_shape("conversation", groups["conversation"], conversation_features, C, target_false_warn,
                       conversation_objective)
        wm = replace(wm, conversation=WeakMatchModel(c.features, c.coef, c.intercept, c.threshold))
    return wm


_OBJECTIVE_FLAG = {"documents": "--objective", "conversation": "--conversation-objective"}


def unfittable(shape: str, groups: Mapping[str, Sequence[LabelledSignals]], objective: str = "pointwise",
               refit: str = "both") -> str | None:
    """Why the ``shape`` model cannot be fitted on ``groups[shape]`` (the tune-half rows it scored,
    ``by_shape``), in one line, or None when it can. A run's answerable and unanswerable queries
    can all be there and one model still miss a class: each model is fitted only on the tune half
    of the queries *it* scored (issue 31 item 5), so the line says which model, what it scored, and
    what to pass instead (``--refit`` the other model, keeping this one from the config)."""
    mine = groups.get(shape, [])
    n_ans = sum(1 for r in mine if r.answerable)
    n_un = len(mine) - n_ans
    total = sum(len(rows) for rows in groups.values())
    others = [s for s in SHAPES if s != shape and groups.get(s)]
    instead = ""
    if refit == "both" and others:
        other = others[0]
        instead = (f"; pass --refit {other} to fit only the {other} model and keep the {shape} model "
                   "from --config")
    if not n_ans or not n_un:
        lacking = "unanswerable" if n_un == 0 else "answerable"
        return (f"cannot fit the {shape} model: it scored {len(mine)} of the tune half's {total} queries and "
                f"none of them is {lacking} (each model is fitted on the tune half of the queries it scored; "
                f"the report half is held out){instead}, or give runs with {lacking} queries it scores")
    if objective == "pairwise" and not any(
            {r.answerable for r in mine if r.group == g} == {True, False} for g in {r.group for r in mine}):
        return (f"cannot fit the {shape} model pairwise: no dataset's tune-half queries it scored hold both "
                f"answerable and unanswerable ones ({n_ans} answerable and {n_un} unanswerable are spread over "
                f"datasets of one class each); pass {_OBJECTIVE_FLAG[shape]} pointwise{instead}")
    return None


def _fit_shape(shape: str, rows: Sequence[LabelledSignals], features: Sequence[str], C: float,
               target_false_warn: float | None, objective: str) -> WeakMatchConfig:
    """``fit_weak_match`` of one model; its errors name the model."""
    try:
        return fit_weak_match(rows, features, C=C, target_false_warn=target_false_warn, objective=objective)
    except TuneError as exc:
        raise TuneError(f"the {shape} model: {exc}") from None


RRF_KS: tuple[int, ...] = (10, 30, 60)
NORMS: tuple[str, ...] = ("minmax", "zscore")
SHARES: tuple[int, ...] = (2, 3, 4, 5, 6)
"""The weights (in tenths) a retriever takes in the default grid's weighted sums."""


def fusion_grid(names: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """The fusion settings ``tune_fusion`` tries by default for the retrievers ``names`` (query-time
    knobs only): RRF at each of ``RRF_KS``, then for each norm of ``NORMS`` every weighted sum whose
    weights are tenths of ``SHARES`` adding up to 1, all but the last retriever's taken from ``SHARES``
    in order (with two retrievers: the first's 0.2, 0.3, ... 0.6, the second's the rest)."""
    names = list(names)
    points: list[dict[str, Any]] = [{"fusion.method": "rrf", "fusion.rrf_k": k} for k in RRF_KS]
    if len(names) < 2:
        return tuple(points)
    for norm in NORMS:
        for head in itertools.product(SHARES, repeat=len(names) - 1):
            last = 10 - sum(head)
            if len(names) > 2 and last not in SHARES:
                continue
            weights = [round(t / 10, 2) for t in head] + [round(1 - sum(t / 10 for t in head), 2)]
            points.append({"fusion.method": "wsum", "fusion.norm": norm, "fusion.weights": dict(zip(names, weights))})
    return tuple(points)


def default_grid(base: Any) -> tuple[dict[str, Any], ...]:
    """``fusion_grid`` of the retrievers ``base`` runs (``FUSION_GRID`` for the shipped ones, and
    for a config that runs one retriever, where no point changes its ranking)."""
    names = retrievers.enabled(base)
    return fusion_grid(names) if len(names) > 1 else FUSION_GRID


FUSION_GRID: tuple[dict[str, Any], ...] = fusion_grid(retrievers.enabled(SearchConfig()))
"""The fusion settings ``tune_fusion`` tries by default for the shipped retrievers."""


BASE_POINT: Mapping[str, Any] = {}
"""The grid point that changes nothing: the base config as it is, query-adaptive model
(``fusion.adaptive``) included, which every grid point with ``fusion.weights`` drops. ``searchkit
tune fusion`` scores it beside the grid as the reference the winner is compared with, never picks it."""
MAX_GRID = 1000
"""The most points a grid given by the user may hold (each one is an eval of every dataset)."""


def parse_grid(data: Any, base: Any) -> tuple[dict[str, Any], ...]:
    """A fusion grid given by the user: a JSON list of ``{dotted config key: value}`` objects, each
    checked against ``base`` (``SearchConfig.replace``) before any index is built. A point that is
    not an object, is empty (the base config is always compared), names an unknown key or a bad
    value, changes what the index stores (the grid runs on one index per dataset), or gives the
    base config or the same config as an earlier point is a :class:`TuneError` naming the point and the bad key or
    value (issue 31 item 5)."""
    if not isinstance(data, list) or not data:
        got = "an empty list" if isinstance(data, list) else f"a JSON {_json_type(data)}"
        raise TuneError(f'a grid is a non-empty JSON list of settings objects, e.g. [{{"fusion.method": "rrf", '
                        f'"fusion.rrf_k": 30}}, {{"fusion.weights": {{"bm25": 0.5, "dense": 0.5}}}}]; got {got}')
    if len(data) > MAX_GRID:
        raise TuneError(f"a grid holds at most {MAX_GRID} points; got {len(data)}")
    points: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, point in enumerate(data, 1):
        if not isinstance(point, dict):
            raise TuneError(f"point {i} is a JSON {_json_type(point)}, not an object of {{dotted config key: value}}")
        if not point:
            raise TuneError(f"point {i} is empty: the base config itself is always compared; give the keys to change")
        try:
            cfg = base.replace(**point)
            index_keys = [k for k in point if base.replace(**{k: point[k]}).index_fingerprint()
                          != base.index_fingerprint()]
        except ConfigError as exc:
            raise TuneError(f"point {i}: {exc}") from None
        if index_keys:
            raise TuneError(f"point {i} changes what the index stores ({', '.join(index_keys)}): the grid runs on "
                            "one index per dataset, so it takes query-time settings only (fusion, depths, ...)")
        fp = cfg.fingerprint()
        if fp == base.fingerprint():
            raise TuneError(f"point {i} changes nothing: it gives the base config, which is always compared")
        if fp in seen:
            raise TuneError(f"point {i} gives the same config as point {seen[fp]}")
        seen[fp] = i
        points.append(dict(point))
    return tuple(points)


def _json_type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (str, "string"), ((int, float), "number"), (dict, "object"),
                       (list, "list")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _axes(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A grid point as axes: a number as itself, a two-retriever weight mapping as the share of its
    first retriever in the registry's order (``fusion.weights (bm25 share)``), anything else
    as an opaque value (a category)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, Mapping) and len(value) == 2 and all(_number(v) for v in value.values()) \
                and sum(value.values()) > 0:
            first = next((n for n in retrievers.names() if n in value), sorted(value)[0])
            out[f"{key} ({first} share)"] = round(float(value[first]) / float(sum(value.values())), 9)
        elif _number(value):
            out[key] = round(float(value), 9)
        else:
            import json

            out[key] = json.dumps(value, sort_keys=True, default=str)
    return out


def _hard_bounds(axis: str, base: Any) -> tuple[float | None, float | None]:
    """The smallest and largest value a setting can take (a share: 0 and 1; a config knob: its
    ``lo`` / ``hi``); a winner there cannot be beaten by going further."""
    import dataclasses

    if axis.endswith(" share)"):
        return 0.0, 1.0
    section_name, _, name = axis.partition(".")
    section = getattr(base, section_name, None)
    if not dataclasses.is_dataclass(section) or not name or "." in name:
        return None, None
    meta = next((f.metadata for f in dataclasses.fields(section) if f.name == name), {})
    return meta.get("lo"), meta.get("hi")


def grid_edges(winner: Mapping[str, Any], grid: Sequence[Mapping[str, Any]], base: Any = None) -> list[str]:
    """One line for each numeric setting of ``winner`` that sits at the smallest or largest value
    the grid tried along it (among the points that differ from the winner in that setting only),
    unless that is as far as the setting goes (``_hard_bounds``): the best may lie beyond the grid,
    so its pick is a bound, not an optimum (issue 31 item 5). Empty when the winner is inside."""
    base = base if base is not None else SearchConfig()
    mine = _axes(winner)
    others = [_axes(p) for p in grid]
    lines = []
    for axis, value in mine.items():
        if not isinstance(value, float):
            continue
        along = sorted({a[axis] for a in others
                        if a.keys() == mine.keys() and all(a[k] == mine[k] for k in mine if k != axis)})
        if len(along) < 2:
            continue
        lo, hi = _hard_bounds(axis, base)
        if value == along[0] and value != lo:
            side = "smallest"
        elif value == along[-1] and value != hi:
            side = "largest"
        else:
            continue
        lines.append(f"the winner's {axis} {value:g} is the {side} value the grid tried along it "
                     f"({', '.join(f'{v:g}' for v in along)}): the best may lie beyond; extend --grid past it")
    return lines


@dataclass(frozen=True)
class FusionTrial:
    """One grid point: its settings, the mean metric per half and per dataset, and the metric
    of every judged query (``per_query``: ``{"dataset:query_id": value}``; ``half_of`` that
    key says which half the query is in)."""

    settings: Mapping[str, Any]
    tune: Mapping[str, float]
    report: Mapping[str, float]
    per_query: Mapping[str, float] = field(default_factory=dict)

    def half(self, which: str) -> dict[str, float]:
        """The per-query values of one half (``tune`` or ``report``)."""
        return {q: v for q, v in self.per_query.items() if half_of(q) == which}

    @property
    def tune_mean(self) -> float:
        return float(np.mean(list(self.tune.values())))

    @property
    def report_mean(self) -> float:
        return float(np.mean(list(self.report.values())))


def tune_fusion(
    datasets: Sequence[Any],
    base: Any = None,
    grid: Sequence[Mapping[str, Any]] = FUSION_GRID,
    *,
    metric: str = "nDCG@10",
    show_progress: bool = True,
    engine: Any = None,
) -> list[FusionTrial]:
    """Evaluate every grid point on every dataset (one index per dataset, reused across the
    grid), scoring the tune and report halves separately. Pick on ``tune_mean`` only; the
    report half is what may be quoted. Returns the trials sorted by ``tune_mean``, best first.
    Progress: a tqdm bar over the grid (``show_progress``) and one INFO log line per grid point.

    ``engine`` (``searchkit.scale.ray_engine.RayEngine``): the indexes are embedded on it and the
    grid × datasets cells run as parallel tasks there (``engine.fusion_cells``); the trials are
    the same as the sequential loop's."""
    import contextlib

    base = base or SearchConfig()
    with using(engine) if engine is not None else contextlib.nullcontext():
        searchers = [Searcher.build(ds.records, base, show_progress=show_progress) for ds in datasets]
        configs = [base.replace(**settings) for settings in grid]
        if engine is not None and hasattr(engine, "fusion_cells"):
            cells: Iterable[Sequence[tuple[float, float, Mapping[str, float]]]] = engine.fusion_cells(
                datasets, searchers, configs, metric=metric, show_progress=show_progress)
        else:
            cells = _cells_here(datasets, searchers, configs, metric, show_progress)
        trials = []
        for settings, row in zip(grid, cells):
            tune_m, report_m, per_q = {}, {}, {}
            for ds, (tune_v, report_v, values) in zip(datasets, row):
                tune_m[ds.name] = tune_v
                report_m[ds.name] = report_v
                for qid, v in values.items():
                    per_q[f"{ds.name}:{qid}"] = v
            trials.append(FusionTrial(dict(settings), tune_m, report_m, per_q))
            log.info("%s: tune %.4f  report %.4f", settings, trials[-1].tune_mean, trials[-1].report_mean)
    return sorted(trials, key=lambda t: -t.tune_mean)


def _cells_here(datasets: Sequence[Any], searchers: Sequence[Any], configs: Sequence[Any], metric: str,
                show_progress: bool) -> Iterable[list[tuple[float, float, dict[str, float]]]]:
    """The grid in this process, one grid point (every dataset) at a time."""
    points: Iterable[Any] = configs
    if show_progress:
        from tqdm.auto import tqdm

        points = tqdm(configs, desc="fusion grid", unit="setting")
    for cfg in points:
        yield [fusion_cell(ds, s.with_config(cfg), cfg, metric) for ds, s in zip(datasets, searchers)]


def fusion_cell(ds: Any, searcher: Any, cfg: Any, metric: str = "nDCG@10") -> tuple[float, float, dict[str, float]]:
    """One grid point on one dataset: the mean ``metric`` of its tune half and of its report half,
    and the metric of every judged query by query id (``searcher`` is the dataset's index under
    ``cfg``). The sequential loop and a Ray task both score a cell with this."""
    rep = evaluate_dataset(ds, cfg, searcher=searcher, show_progress=False)
    halves: dict[str, list[Any]] = {"tune": [], "report": []}
    for o in rep.outcomes:
        halves[half_of(f"{ds.name}:{o.query_id}")].append(o)
    tune_v = summarize(ds, cfg, halves["tune"], breakdowns=False).metrics[metric]
    report_v = summarize(ds, cfg, halves["report"], breakdowns=False).metrics[metric]
    judged = {o.query_id for o in rep.outcomes if o.answerable}
    qrels = {q: dict(d) for q, d in ds.qrels.items() if q in judged}
    values = {qid: vals[metric] for qid, vals in per_query_metrics(qrels, rep.run(), [metric]).items()}
    return tune_v, report_v, values


RRF_REFERENCE: Mapping[str, Any] = {"fusion.method": "rrf", "fusion.rrf_k": 60}
"""The RRF setting a tuned fusion is tested against (Cormack et al. 2009's k = 60)."""


def fusion_significance(
    trials: Sequence[FusionTrial],
    *,
    test: str = "fisher",
    metric: str = "nDCG@10",
    seed: int | None = None,
    base: FusionTrial | None = None,
) -> dict[str, Any]:
    """The winner of ``tune_fusion`` (``trials[0]``) against the runner-up and against RRF
    (``RRF_REFERENCE`` when in the grid, else the best RRF trial), by a paired test over the
    tune-half queries (``compare.paired_test``), with each one's report-half figure beside it.
    A comparison that cannot be made (one trial; the winner is the RRF reference) is None.
    ``base``: the base config's own trial (``BASE_POINT``, adaptive model included), compared the
    same way (``vs_base``; None without it)."""
    if not trials:
        raise TuneError("no fusion trials to compare")
    best = trials[0]
    rrf = [t for t in trials if dict(t.settings) == dict(RRF_REFERENCE)]
    if not rrf:
        rrf = [t for t in trials if t.settings.get("fusion.method") == "rrf"][:1]

    def against(other: FusionTrial | None) -> dict[str, Any] | None:
        if other is None or other is best:
            return None
        a, b = other.half("tune"), best.half("tune")
        p = paired_test({q: {metric: v} for q, v in a.items()}, {q: {metric: v} for q, v in b.items()},
                        test, seed=SEED if seed is None else seed)[metric]
        return {
            "settings": dict(other.settings),
            "tune_mean": other.tune_mean,
            "report_mean": other.report_mean,
            "delta_tune": best.tune_mean - other.tune_mean,
            "p_tune": p,
            "queries_tune": len(a),
        }

    return {
        "metric": metric,
        "test": test,
        "half": "tune",
        "winner": {"settings": dict(best.settings), "tune_mean": best.tune_mean, "report_mean": best.report_mean},
        "vs_runner_up": against(trials[1] if len(trials) > 1 else None),
        "vs_rrf": against(rrf[0] if rrf else None),
        "vs_base": against(base),
    }
