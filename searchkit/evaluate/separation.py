"""Whether a logistic fit's classes are (quasi-)separated (issue 40 item 1; SPEC H11).

When some direction puts every answerable query on one side of a boundary and every unanswerable
one on the other (ties on the boundary allowed: *quasi*-complete separation), a logistic model
has no finite fit: its likelihood keeps improving as the coefficients grow, and the fitted values
(mini's tune half: coef 544, intercept -461) say only where the solver stopped. The test is the
linear programme of Konis (2007, "Linear programming algorithms for detecting separated data in
binary logistic regression models"): maximise ``sum_i s_i (x_i . w + b)`` subject to
``s_i (x_i . w + b) >= 0`` for every row (``s_i`` = +1 answerable, -1 not) within a box; the optimum
is 0 unless the rows are separated. ``groups`` gives each group its own offset ``b``: a direction
that separates every dataset at its own level is what makes a pairwise fit (within-dataset pairs)
diverge.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["separated"]

_TOL = 1e-7
"""The optimum (per row, features standardised, every variable within [-1, 1]) above which the
rows count as separated: far above the solver's tolerance, far below any real margin."""


def separated(X: np.ndarray, y: np.ndarray, groups: Sequence[Any] | None = None) -> bool:
    """Whether the rows of ``X`` (queries x features) with labels ``y`` (1 answerable, 0 not) are
    completely or quasi-completely separated by a direction with one offset, or with ``groups``
    one offset per group. One class only is not separation (there is no boundary to find)."""
    from scipy.optimize import linprog

    X = np.asarray(X, dtype=float)
    y = np.asarray(y).astype(int)
    if X.ndim != 2 or len(X) != len(y) or len(set(y.tolist())) < 2:
        return False
    scale = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    if groups is None:
        offsets = np.ones((len(Z), 1))
    else:
        names = sorted(set(groups), key=str)
        offsets = np.array([[1.0 if g == n else 0.0 for n in names] for g in groups])
    A = np.c_[Z, offsets] * np.where(y == 1, 1.0, -1.0)[:, None]  # row i: s_i (x_i, e_g(i))
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(A)), bounds=[(-1.0, 1.0)] * A.shape[1],
                  method="highs")
    return bool(res.status == 0 and -res.fun > _TOL * len(A))
