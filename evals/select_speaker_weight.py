"""Choose ``fusion.speaker`` (who said it, in ranking) or, with ``--knob date``, ``fusion.date``
(a question's date, in ranking) on the TUNE half of the conversation sets; with ``--knob rerank``,
``rerank.weight`` (0: the stage off, ``rerank.enabled`` false) on the tune half of the sets given.

Each set is indexed once under ``--config``; every weight of the grid ranks its queries again
(query-time knob: ``Searcher.with_config``). The pick is the weight with the best mean nDCG@10 over
the sets' tune halves (ties: the smaller weight); the report-half figures are written beside it for
the record, never used to choose. Usage (step 2b of ``reproduce_defaults.sh``):

    .venv/bin/python evals/select_speaker_weight.py locomo-sessions locomo-turns \\
        --config runs/defaults/fusion.json --out runs/defaults/speaker_weight.json \\
        --write-config runs/defaults/fusion.json
    .venv/bin/python evals/select_speaker_weight.py locomo-sessions locomo-turns --knob date \\
        --config runs/defaults/fusion.json --out runs/defaults/date_weight.json \\
        --write-config runs/defaults/fusion.json

The knobs are picked one after the other (``date`` under the picked ``speaker``): the date stage
runs after the speaker stage. ``rerank`` is picked over every set (documents and conversations):

    .venv/bin/python evals/select_speaker_weight.py xquad-ru jsquad-ja squad2-en nomiracl-ru \\
        nomiracl-ja nomiracl-en locomo-sessions locomo-turns --knob rerank --grid 0,0.1,0.2,0.3,0.5 \\
        --depth 10 --config runs/defaults/fusion.json --out runs/defaults/rerank_weight.json \\
        --write-config runs/defaults/fusion.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile

import numpy as np

from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.run import evaluate_dataset, per_query
from searchkit.evaluate.tune import half_of
from searchkit.searcher import Searcher

GRID = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.5)
KNOBS = ("speaker", "date", "rerank")


def with_knob(base: SearchConfig, knob: str, w: float, depth: int | None = None) -> SearchConfig:
    """``base`` with the knob at ``w`` (``rerank``: the stage on at weight ``w`` over the top
    ``depth`` records, default the config's; off at 0, the rest of the section left as it is)."""
    if knob == "rerank":
        on = {"weight": w, **({"depth": depth} if depth else {})} if w > 0 else {}
        rerank = dataclasses.replace(base.rerank, enabled=w > 0, **on)
        return dataclasses.replace(base, rerank=rerank)
    return dataclasses.replace(base, fusion=dataclasses.replace(base.fusion, **{knob: w}))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--config", required=True)
    ap.add_argument("--knob", choices=KNOBS, default="speaker",
                    help="the knob to pick: fusion.speaker, fusion.date or rerank.weight (0: rerank off)")
    ap.add_argument("--grid", default=",".join(str(w) for w in GRID))
    ap.add_argument("--depth", type=int, help="with --knob rerank: the records reranked (default: the config's rerank.depth)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--write-config", help="write --config with the picked knob here")
    args = ap.parse_args()
    base = SearchConfig.load(args.config)
    grid = sorted({float(w) for w in args.grid.split(",")})
    figures: dict[str, dict[str, dict[str, float]]] = {str(w): {} for w in grid}
    for name in args.datasets:
        ds = load_dataset(resolve_dataset(name))
        searcher = Searcher.build(ds.records, base)
        for w in grid:
            cfg = with_knob(base, args.knob, w, args.depth)
            report = evaluate_dataset(ds, config=cfg, searcher=searcher.with_config(cfg))
            ndcg = {q: m["nDCG@10"] for q, m in per_query(report, ds).items()}
            for half in ("tune", "report"):
                vals = [v for q, v in ndcg.items() if half_of(f"{ds.name}:{q}") == half]
                figures[str(w)][f"{ds.name}:{half}"] = round(float(np.mean(vals)), 6)
            print(f"{ds.name} {args.knob}={w}: tune {figures[str(w)][ds.name + ':tune']:.4f}", file=sys.stderr)
    names = [load_dataset(resolve_dataset(n)).name for n in args.datasets]

    def tune_mean(w: float) -> float:
        return float(np.mean([figures[str(w)][f"{n}:tune"] for n in names]))

    picked = max(grid, key=lambda w: (round(tune_mean(w), 6), -w))
    knob = "rerank.weight" if args.knob == "rerank" else f"fusion.{args.knob}"
    extra = {"rerank.depth": args.depth or base.rerank.depth} if args.knob == "rerank" else {}
    doc = {"knob": knob, **extra, "metric": "nDCG@10", "chosen_on": "tune half", "grid": grid, "picked": picked,
           "tune_mean": {str(w): round(tune_mean(w), 6) for w in grid}, "figures": figures}
    _write(args.out, json.dumps(doc, indent=2) + "\n")
    if args.write_config:
        cfg = with_knob(base, args.knob, picked, args.depth)
        _write(args.write_config, cfg.to_json() + "\n")
    print(json.dumps({"picked": picked, "tune_mean": doc["tune_mean"]}))
    return 0


def _write(path: str, text: str) -> None:
    """Atomically: the previous file stays whole if this fails."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    raise SystemExit(main())
