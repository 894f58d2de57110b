"""Choose the documents model's features and how it is fitted on the TUNE half only (the report
half is never read).

5-fold cross-validation inside the tune half of the queries the documents model scored (each
query's `conversation_model` signal; the document sets, mini and the demo workspace's questions),
folds by a salted hash of the query id, each candidate fitted as `searchkit tune weak-match` fits it
(`fit_weak_match`: every dataset and class weighing the same; objective pointwise or pairwise);
the score is the mean over datasets of the AUROC of the held-out folds' probabilities. With
``--shape conversation`` the conversation model's objective is compared the same way on the
conversation runs. Usage, on the step-3 runs of `reproduce_defaults.sh`:

    .venv/bin/python evals/select_weak_match_features.py runs/defaults/eval_*.json [--out FILE]
    .venv/bin/python evals/select_weak_match_features.py --shape conversation runs/defaults/eval_locomo-*.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np
from sklearn.metrics import roc_auc_score

from searchkit.evaluate.tune import CONVERSATION_FEATURES, OBJECTIVES, fit_weak_match, from_eval_json, half_of
from searchkit.rank.signals import answer_probability

FEATURE_SETS = {
    "previous (6)": ("dense_top1", "dense_margin", "dense_gap10", "bm25_idf_coverage", "bm25_idf_coverage3",
                     "bm25_sentence_coverage"),
    "three": ("dense_top1", "bm25_idf_coverage", "bm25_sentence_coverage"),
    "four": ("dense_top1", "dense_margin", "bm25_idf_coverage", "bm25_sentence_coverage"),
    "five": ("dense_top1", "dense_z", "bm25_idf_coverage", "bm25_idf_coverage3", "bm25_sentence_coverage"),
}
CANDIDATES = {f"{name} {objective}": (feats, objective) for name, feats in FEATURE_SETS.items() for objective in OBJECTIVES}
CONVERSATION_CANDIDATES = {f"conversation {objective}": (CONVERSATION_FEATURES, objective) for objective in OBJECTIVES}
FOLDS = 5
TIE = 0.001
"""A candidate within this mean AUROC of the best counts as level with it; the first level one in
candidate order (the simpler objective, pointwise, before pairwise) is picked."""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--shape", choices=["documents", "conversation"], default="documents")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    for path in args.runs:
        with open(path, encoding="utf-8") as fh:
            rows += [r for r in from_eval_json(json.load(fh)) if (r.shape == "conversation") == (args.shape == "conversation")]
    candidates = CONVERSATION_CANDIDATES if args.shape == "conversation" else CANDIDATES
    tune = [r for r in rows if half_of(r.query_id) == "tune"]
    fold = {r.query_id: hashlib.sha256(f"cv:{r.query_id}".encode()).digest()[0] % FOLDS for r in tune}
    out = {}
    for name, (feats, objective) in candidates.items():
        probs = {}
        for f in range(FOLDS):
            model = fit_weak_match([r for r in tune if fold[r.query_id] != f], feats, objective=objective)
            probs.update({r.query_id: answer_probability(r.signals, model) for r in tune if fold[r.query_id] == f})
        per = {}
        for g in sorted({r.group for r in tune}):
            rs = [r for r in tune if r.group == g]
            if len({r.answerable for r in rs}) == 2:
                per[g] = roc_auc_score([r.answerable for r in rs], [probs[r.query_id] for r in rs])
        out[name] = {"features": list(feats), "objective": objective, "mean_auroc": float(np.mean(list(per.values()))), "per_dataset": per}
        print(f"{name:24s} mean {out[name]['mean_auroc']:.4f}  " + " ".join(f"{g} {a:.3f}" for g, a in per.items()))
    top = max(out[n]["mean_auroc"] for n in out)
    best = next(n for n in out if out[n]["mean_auroc"] >= top - TIE)
    print(f"picked: {best} {candidates[best]}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"picked_on": f"tune half, {FOLDS}-fold CV, mean AUROC over datasets (the first candidate "
                                    f"within {TIE} of the best)", "picked": best,
                       "candidates": out}, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
