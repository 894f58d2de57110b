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

import logging
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from searchkit.config import WeakMatchConfig, WeakMatchModel
from searchkit.evaluate.fusion_tuning import (
    BASE_POINT,
    FUSION_GRID,
    MAX_GRID,
    UNREAD,
    FusionPick,
    base_label,
    fusion_points,
    pick_fusion,
    unread_keys,
    NORMS,
    RRF_KS,
    RRF_REFERENCE,
    SHARES,
    FusionTrial,
    default_grid,
    fusion_cell,
    fusion_grid,
    fusion_significance,
    grid_edges,
    parse_grid,
    tune_fusion,
)
from searchkit.evaluate.halves import SALT, half_of, query_shape, run_shape
from searchkit.evaluate.metrics import no_answer_metrics
from searchkit.evaluate.separation import separated
from searchkit.errors import InputError
from searchkit.rank.conversation import SHAPES
from searchkit.rank.signals import answer_probability

__all__ = [  # the weak-match fitting here; fusion tuning (fusion_tuning) and the halves re-exported
    "BASE_POINT", "CONVERSATION_FEATURES", "CONVERSATION_OBJECTIVE", "DEFAULT_FEATURES", "DOCUMENTS_OBJECTIVE",
    "FUSION_GRID", "FusionTrial", "LabelledSignals", "MAX_GRID", "MAX_PAIRS", "MIN_HALF_CLASS", "NORMS", "OBJECTIVES",
    "RRF_KS", "RRF_REFERENCE", "SALT", "SHARES", "by_shape", "default_grid", "fit_weak_match",
    "fit_weak_match_by_shape", "from_eval_json", "fusion_cell", "fusion_grid", "fusion_significance", "grid_edges",
    "half_of", "parse_grid", "query_shape", "run_shape", "score_weak_match", "small_half_warnings", "tune_fusion",
    "unfittable", "HeldThreshold", "held_threshold", "held_by_group", "false_warn_upper", "operating_rate",
    "rate_of", "FALSE_WARN_TARGET", "CHECK_CONFIDENCE", "separation_warnings", "UNREAD", "FusionPick", "base_label",
    "fusion_points", "pick_fusion", "unread_keys",
]

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
        raise InputError("the eval report has no per-query rows; run eval with --json --queries")
    try:
        jsonschema.validate(report, _RUN_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise InputError(f"not an eval run with per-query rows (at {where}: fails the run format's "
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
        raise InputError("a pairwise fit needs a dataset with both answerable and unanswerable queries")
    D = np.vstack(diffs)
    labels = np.concatenate([np.r_[np.ones(len(a)), np.zeros(len(a))] for a in diffs[::2]])
    w = np.concatenate(weights)
    lr = LogisticRegression(C=C, fit_intercept=False, max_iter=2000)
    lr.fit(D, labels, sample_weight=w * (len(w) / w.sum()))
    return lr.coef_[0]


FALSE_WARN_TARGET = 0.10
"""The weak-match warning's false-warning target (H11): at most 10% of the answerable queries warned."""
CHECK_CONFIDENCE = 0.95
"""How sure the margin rule makes a check split of ``check_n`` answerable queries shows the target."""


def false_warn_upper(warned: int, n: int, confidence: float = CHECK_CONFIDENCE) -> float:
    """The one-sided ``confidence`` upper bound (Clopper-Pearson, exact) of a false-warning rate
    seen as ``warned`` of ``n`` answerable queries: 1 - (1 - confidence) ** (1 / n) for none
    warned (0.109 for 26 at 95%: even no false warning on 26 queries cannot show a rate under 10%)."""
    from scipy.stats import beta

    if n <= 0:
        return 1.0
    if not 0 <= warned <= n:
        raise ValueError(f"warned must be within 0..{n}, got {warned}")
    if warned >= n:
        return 1.0
    return float(beta.ppf(confidence, warned + 1, n - warned))


def operating_rate(target: float, check_n: int, confidence: float = CHECK_CONFIDENCE) -> float:
    """The margin rule's false-warning rate (issue 39 item 10): the largest rate ``r`` at which a
    check split of ``check_n`` answerable queries gets at most ``floor(target * check_n)`` false
    warnings with probability ``confidence`` (``binom(check_n, r)``'s one-sided upper bound within the
    target). Mini's dev split has 26 answerable queries: 10% allows 2 of them, and a rate of 0.032
    keeps to 2 with 95% probability (at 0.10 itself, half of such splits would show 3 or more)."""
    from scipy.stats import beta

    if not 0.0 <= target < 1.0:
        raise InputError(f"the false-warning target must be within [0, 1), got {target}")
    if not isinstance(check_n, int) or isinstance(check_n, bool) or check_n < 1:
        raise InputError(f"check_n must be a positive number of answerable queries, got {check_n!r}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be within (0, 1), got {confidence}")
    k = int(np.floor(target * check_n))
    if k >= check_n:
        return 1.0
    return float(beta.ppf(1.0 - confidence, k + 1, check_n - k))  # P(binom(n, r) <= k) = confidence


@dataclass(frozen=True)
class HeldThreshold:
    """A warning threshold held to a false-warning rate on some answerable queries' P(answer)."""

    threshold: float
    """Warn when P(answer) < threshold."""
    n: int
    """Answerable queries it was held on."""
    allowed: int
    """False warnings the threshold gives those queries at most (ties can give fewer)."""
    target: float
    rate: float
    """The rate held: ``target`` (the plain rule) or the margin rule's ``operating_rate``."""
    check_n: int | None = None
    confidence: float | None = None
    degenerate: bool = False
    """Too few queries to hold the rate (``floor(rate * n)`` is 0): the threshold warns on none of
    them, the lowest P(answer) sets it alone."""

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "n": self.n, "allowed": self.allowed, "target": self.target,
                "rate": self.rate, "check_n": self.check_n, "confidence": self.confidence,
                "degenerate": self.degenerate}


def rate_of(target: float, check_n: int | None, confidence: float = CHECK_CONFIDENCE) -> float:
    """The false-warning rate a threshold is held to: ``target``, or with ``check_n`` the margin
    rule's ``operating_rate``."""
    return target if check_n is None else operating_rate(target, check_n, confidence)


def held_threshold(p_answerable: Sequence[float], target: float = FALSE_WARN_TARGET, *,
                   check_n: int | None = None, confidence: float = CHECK_CONFIDENCE) -> HeldThreshold:
    """The largest threshold (warn when P(answer) < threshold) at which at most ``floor(rate * n)``
    of the ``n`` answerable queries whose probabilities are ``p_answerable`` warn: ``rate`` is
    ``target`` (the plain rule), or with ``check_n`` the margin rule's ``operating_rate`` (the
    target held with a margin a check split of ``check_n`` answerable queries can carry: 0.032 for
    10% and 26 at 95%). A threshold of 1.0 (every one may warn) when ``n`` allows it."""
    if not 0.0 <= target < 1.0:
        raise InputError(f"the false-warning target must be within [0, 1), got {target}")
    rate = rate_of(target, check_n, confidence)
    p = np.sort(np.asarray([float(x) for x in p_answerable], dtype=float))
    n = len(p)
    if not n:
        raise InputError("no answerable query to hold the false-warning rate on")
    k = int(np.floor(rate * n))
    threshold = float(p[k]) if k < n else 1.0
    return HeldThreshold(threshold, n, min(k, n), target, rate, check_n, confidence if check_n else None, k == 0)


def fit_weak_match(
    rows: Iterable[LabelledSignals],
    features: Sequence[str] = DEFAULT_FEATURES,
    *,
    C: float = 1.0,
    target_false_warn: float | None = None,
    balance_groups: bool = True,
    every_group: bool = True,
    objective: str = "pointwise",
    check_n: int | None = None,
    confidence: float = CHECK_CONFIDENCE,
) -> WeakMatchConfig:
    """Fit on ``rows`` (use the tune half). The threshold is 0.5 on the balanced model, or, with
    ``target_false_warn``, the largest threshold whose false-warning rate on answerable rows stays
    within that target — in every group (dataset) when ``every_group`` (the groups too small to hold
    the rate alone held to it together, ``_rate_groups``), else over the rows pooled; with
    ``check_n``, each group held to the margin rule's rate (``operating_rate``, ``held_threshold``).
    With ``balance_groups`` every (group, class) cell weighs the same in the fit, so a small
    workspace-like set counts as much as a large Wikipedia one.

    ``objective`` ``pointwise``: one logistic regression on the rows. ``pairwise``: the direction
    from within-group pairs (``_pairwise_direction``), then a balanced one-feature logistic fit of
    the rows' projections on it (Platt scaling) for the probability; ``balance_groups`` is implied."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    if objective not in OBJECTIVES:
        raise InputError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    rows = list(rows)
    X, y = _matrix(rows, features)
    if len(set(y.tolist())) < 2:
        raise InputError("fitting weak match needs both answerable and unanswerable queries")
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
        rate = rate_of(target_false_warn, check_n, confidence)
        groups = _rate_groups([r.group for r in rows], y, rate) if every_group else np.zeros(len(rows), dtype=int)
        threshold = 1.0
        for g in np.unique(groups):
            pa = p[(y == 1) & (groups == g)]
            if len(pa):
                threshold = min(threshold, held_threshold(pa, target_false_warn, check_n=check_n,
                                                          confidence=confidence).threshold)
    return WeakMatchConfig(
        enabled=True,
        features=tuple(features),
        coef=tuple(float(c) for c in coef),
        intercept=intercept,
        threshold=threshold,
    )


def _rate_groups(groups: Sequence[str], y: np.ndarray, target: float) -> np.ndarray:
    """The groups the every-group false-warning rule holds to ``target`` (a rate): each dataset,
    except that the datasets too small to hold the rate on their own (fewer than ``1 / target``
    answerable rows: ``floor(target * n)`` is 0, so one query would set the threshold) are held to
    it together, as one group. A model fitted on the queries it scored meets such sets: the few
    LoCoMo questions that name no speaker, a small workspace set's tune half."""
    g = np.array(groups, dtype=object)
    small = {name for name in set(groups) if int(np.floor(target * int(((g == name) & (y == 1)).sum()))) == 0}
    if len(small) > 1:
        g = np.array([_SMALL if name in small else name for name in groups], dtype=object)
    return g


_SMALL = "\x00small sets"


def held_by_group(rows: Iterable[LabelledSignals], model: Any, target: float = FALSE_WARN_TARGET, *,
                  check_n: int | None = None, confidence: float = CHECK_CONFIDENCE,
                  ) -> tuple[float, dict[str, HeldThreshold]]:
    """The threshold of ``model`` (a weak-match model: ``features``, ``coef``, ``intercept``) that
    holds the false-warning rate of the answerable ``rows`` to ``target`` in every group (dataset),
    the groups too small to hold it alone pooled (``_rate_groups``), each by ``held_threshold``
    (with ``check_n``: the margin rule's rate): the lowest group's threshold, and each group's hold
    (the pooled one under ``"small sets: A+B"``)."""
    rows = [r for r in rows if r.answerable]
    if not rows:
        raise InputError("no answerable query to hold the false-warning rate on")
    p = np.array([answer_probability(r.signals, model) for r in rows])
    names = [r.group for r in rows]
    groups = _rate_groups(names, np.ones(len(rows), dtype=int), rate_of(target, check_n, confidence))
    out: dict[str, HeldThreshold] = {}
    for g in sorted(set(groups.tolist())):
        members = groups == g
        label = str(g) if g != _SMALL else "small sets: " + "+".join(sorted({n for n, m in zip(names, members) if m}))
        out[label] = held_threshold(p[members], target, check_n=check_n, confidence=confidence)
    return min(h.threshold for h in out.values()), out


def score_weak_match(rows: Iterable[LabelledSignals], cfg: WeakMatchConfig) -> dict[str, float]:
    """No-answer metrics of ``cfg`` on ``rows`` (use the report half)."""
    rows = list(rows)
    models = [cfg.model_for(r.shape) for r in rows]
    probs = [answer_probability(r.signals, m) if r.signals else 0.0 for r, m in zip(rows, models)]
    return no_answer_metrics([r.answerable for r in rows], probs, [p < m.threshold for p, m in zip(probs, models)])


MIN_HALF_CLASS = 30
"""A model's tune half with fewer answerable or fewer unanswerable queries than this is refused by
``fit_weak_match_by_shape`` (fitted with a warning under ``allow_small``): its coefficients and
threshold rest on too few queries to trust (issue 40 item 1: mini's tune half, one unanswerable
query, gave coef 544 and intercept -461)."""


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


def separation_warnings(groups: Mapping[str, Sequence[LabelledSignals]], shapes: Sequence[str],
                        features: Mapping[str, Sequence[str]], objectives: Mapping[str, str]) -> list[str]:
    """One line for each model of ``shapes`` whose rows (``groups[shape]``, a tune half) are
    (quasi-)separated along its ``features[shape]`` (``separation.separated``; a pairwise fit with
    an offset per dataset): its logistic fit has no finite coefficients."""
    out = []
    for shape in shapes:
        mine = groups.get(shape, [])
        X, y = _matrix(mine, features[shape])
        pairwise = objectives[shape] == "pairwise"
        if separated(X, y, [r.group for r in mine] if pairwise else None):
            within = " within each dataset" if pairwise else ""
            out.append(f"the {shape} model's tune half is separated{within}: some direction of its features "
                       f"({', '.join(features[shape])}) puts every answerable query above every unanswerable one, so "
                       "the fit has no finite coefficients (they say only where the solver stopped); evaluate more "
                       "labelled queries")
    return out


def fit_weak_match_by_shape(
    rows: Iterable[LabelledSignals],
    features: Sequence[str] = DEFAULT_FEATURES,
    conversation_features: Sequence[str] = CONVERSATION_FEATURES,
    *,
    C: float = 1.0,
    target_false_warn: float | None = FALSE_WARN_TARGET,
    keep: WeakMatchConfig | None = None,
    refit: str = "both",
    objective: str = DOCUMENTS_OBJECTIVE,
    conversation_objective: str = CONVERSATION_OBJECTIVE,
    check_n: int | None = None,
    confidence: float = CHECK_CONFIDENCE,
    allow_small: bool = False,
    threshold: float | None = None,
) -> WeakMatchConfig:
    """Each weak-match model on the queries it scored (``LabelledSignals.shape``: the documents
    model on the queries whose top results were documents, the conversation model on those whose
    top results were conversations); each with its own threshold for ``target_false_warn`` (use the
    tune half; with ``check_n``, held to the margin rule's rate, ``held_threshold``) and its own
    ``objective`` (``fit_weak_match``). ``refit`` ``"documents"`` or
    ``"conversation"`` fits only that model and takes the other one from ``keep``; ``"both"`` fits
    every model that scored some of the rows and keeps the other (logged) from ``keep``. Everything
    else of ``weak_match`` (the rule that picks the model, ``enabled``) is ``keep``'s. A model to
    fit with no rows is a ``InputError`` naming it; so is one whose rows hold fewer than
    ``MIN_HALF_CLASS`` queries of a class (``small_half_warnings``) or are separated
    (``separation_warnings``), unless ``allow_small``, which fits it and logs the line as a warning.
    Each threshold holds ``target_false_warn`` (10% by default), or is ``threshold`` when given."""
    from dataclasses import replace

    if refit not in ("both",) + SHAPES:
        raise InputError(f"refit must be both, documents or conversation, got {refit!r}")
    if refit != "both" and keep is None:
        raise InputError(f"refit {refit} keeps the other model from a config: give keep")
    groups = by_shape(rows)
    if refit == "both":
        wanted = tuple(shape for shape in SHAPES if groups[shape])
        if not wanted:
            raise InputError("no queries to fit the weak-match models on")
        missing = [shape for shape in SHAPES if shape not in wanted]
        if "documents" in missing and keep is None:
            raise InputError("no query of these runs was scored by the documents model (shape documents), so it "
                            "cannot be fitted; give runs with document evidence, or a config to keep it from")
        for shape in missing:
            log.warning("no query of these runs was scored by the %s model: it is kept from the config", shape)
    else:
        wanted = (refit,)
        if not groups[refit]:
            other = next(s for s in SHAPES if s != refit)
            instead = f" (or pass --refit {other}: these runs' queries were scored by it)" if groups[other] else ""
            raise InputError(f"no query of these runs was scored by the {refit} model (shape {refit}), so it "
                            f"cannot be fitted; give runs with {refit} evidence{instead}")
    objectives = {"documents": objective, "conversation": conversation_objective}
    for shape in wanted:
        problem = unfittable(shape, groups, objectives[shape], refit)
        if problem:
            raise InputError(problem)
    feats = {"documents": features, "conversation": conversation_features}
    doubts = (small_half_warnings([r for s in wanted for r in groups[s]], wanted)
              + separation_warnings(groups, wanted, feats, objectives))
    if doubts and not allow_small:
        raise InputError(f"refused: {doubts[0]}, or pass --allow-small to fit it anyway")
    for line in doubts:
        log.warning("%s", line)
    if threshold is not None:
        target_false_warn = None
    wm = keep if keep is not None else WeakMatchConfig(conversation=None)
    if "documents" in wanted:
        d = _fit_shape("documents", groups["documents"], features, C, target_false_warn, objective, check_n,
                       confidence)
        wm = replace(wm, features=d.features, coef=d.coef, intercept=d.intercept,
                     threshold=d.threshold if threshold is None else threshold)
    if "conversation" in wanted:
        c = _fit_shape("conversation", groups["conversation"], conversation_features, C, target_false_warn,
                       conversation_objective, check_n, confidence)
        wm = replace(wm, conversation=WeakMatchModel(c.features, c.coef, c.intercept,
                                                     c.threshold if threshold is None else threshold))
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
               target_false_warn: float | None, objective: str, check_n: int | None = None,
               confidence: float = CHECK_CONFIDENCE) -> WeakMatchConfig:
    """``fit_weak_match`` of one model; its errors name the model."""
    try:
        return fit_weak_match(rows, features, C=C, target_false_warn=target_false_warn, objective=objective,
                              check_n=check_n, confidence=confidence)
    except InputError as exc:  # fit_weak_match's own (it raises no config's ConfigError)
        raise InputError(f"the {shape} model: {exc}") from None
