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
        --depth 10 --by-language --config runs/defaults/fusion.json \\
        --out runs/defaults/rerank_weight.json --write-config runs/defaults/fusion.json

With ``--by-language`` (rerank only) the stage may run for some query languages only
(``rerank.languages``): for each weight of the grid, a language is on when turning it on at that
weight raises the tune-half mean (every query counts in its own set's mean, every set weighs the
same, so each language's share of the mean adds up independently); the pick is the weight whose
languages give the best tune-half mean (ties: the smaller weight; off when no language gains).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from typing import Mapping, Sequence

import numpy as np

from searchkit.analyze import detect_language
from searchkit.config import SearchConfig
from searchkit.export import load_config
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.run import evaluate_dataset, per_query
from searchkit.evaluate.tune import half_of
from searchkit.searcher import Searcher

GRID = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.5)
KNOBS = ("speaker", "date", "rerank")


def with_knob(base: SearchConfig, knob: str, w: float, depth: int | None = None,
              languages: Sequence[str] | None = None) -> SearchConfig:
    """``base`` with the knob at ``w`` (``rerank``: the stage on at weight ``w`` over the top
    ``depth`` records, default the config's, for the query ``languages`` given, default every
    language; off at 0 or with no language, the rest of the section left as it is)."""
    if knob == "rerank":
        langs = tuple(sorted(languages)) if languages is not None else ()
        enabled = w > 0 and (languages is None or bool(langs))
        on = {"weight": w, "languages": langs, **({"depth": depth} if depth else {})} if enabled else {}
        rerank = dataclasses.replace(base.rerank, enabled=enabled, **on)
        return dataclasses.replace(base, rerank=rerank)
    return dataclasses.replace(base, fusion=dataclasses.replace(base.fusion, **{knob: w}))


def pick_by_language(scores: Mapping[float, Mapping[str, Mapping[str, float]]],
                     languages: Mapping[str, Mapping[str, str]]) -> tuple[float, tuple[str, ...], dict[str, float]]:
    """The weight and query languages that give the best tune-half mean.

    ``scores[w][dataset][query]`` is a tune-half query's nDCG@10 at weight ``w`` (0: off; every
    dataset has the same queries at every weight), ``languages[dataset][query]`` its language.
    For each weight a language is on when its queries gain on the mean (over datasets, of each
    dataset's mean); returns ``(weight, languages, {str(w): tune mean with its languages})``,
    ``(0.0, (), ...)`` when no weight gains (ties: the smaller weight)."""
    off = scores[0.0]
    sets = sorted(off)

    def share(w: float, lang: str) -> float:
        """What turning ``lang`` on at ``w`` adds to the mean over datasets."""
        return sum((scores[w][d][q] - off[d][q]) / len(off[d]) for d in sets for q in off[d]
                   if languages[d][q] == lang) / len(sets)

    base = sum(sum(off[d].values()) / len(off[d]) for d in sets) / len(sets)
    every = sorted({lang for d in sets for lang in languages[d].values()})
    best: tuple[float, tuple[str, ...]] = (0.0, ())
    means = {"0.0": round(base, 6)}
    for w in sorted(w for w in scores if w > 0):
        gains = {lang: share(w, lang) for lang in every}
        langs = tuple(lang for lang in every if round(gains[lang], 9) > 0)
        means[str(w)] = round(base + sum(gains[lang] for lang in langs), 6)
        if means[str(w)] > means[str(best[0])]:
            best = (w, langs)
    return best[0], best[1], means


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--config", required=True)
    ap.add_argument("--knob", choices=KNOBS, default="speaker",
                    help="the knob to pick: fusion.speaker, fusion.date or rerank.weight (0: rerank off)")
    ap.add_argument("--grid", default=",".join(str(w) for w in GRID))
    ap.add_argument("--depth", type=int, help="with --knob rerank: the records reranked (default: the config's rerank.depth)")
    ap.add_argument("--by-language", action="store_true",
                    help="with --knob rerank: the stage may run for some query languages only (rerank.languages)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--write-config", help="write --config with the picked knob here")
    args = ap.parse_args()
    if args.by_language and args.knob != "rerank":
        ap.error("--by-language goes with --knob rerank")
    base = load_config(args.config)  # a bare config or an exported NAME.vN.json (issue 28 item 7)
    grid = sorted({float(w) for w in args.grid.split(",")})
    if args.by_language and 0.0 not in grid:
        ap.error("--by-language needs 0 (the stage off) in --grid")
    figures: dict[str, dict[str, dict[str, float]]] = {str(w): {} for w in grid}
    tune_scores: dict[float, dict[str, dict[str, float]]] = {w: {} for w in grid}
    query_lang: dict[str, dict[str, str]] = {}
    by_lang: dict[str, dict[str, float]] = {str(w): {} for w in grid}
    for name in args.datasets:
        ds = load_dataset(resolve_dataset(name))
        searcher = Searcher.build(ds.records, base)
        langs = {q.id: detect_language(q.text) for q in ds.queries}
        for w in grid:
            cfg = with_knob(base, args.knob, w, args.depth)  # every language: the per-language rule reads these
            report = evaluate_dataset(ds, config=cfg, searcher=searcher.with_config(cfg))
            ndcg = {q: m["nDCG@10"] for q, m in per_query(report, ds).items()}
            for half in ("tune", "report"):
                vals = [v for q, v in ndcg.items() if half_of(f"{ds.name}:{q}") == half]
                figures[str(w)][f"{ds.name}:{half}"] = round(float(np.mean(vals)), 6)
                for lang in sorted({langs[q] for q in ndcg}):
                    part = [v for q, v in ndcg.items() if half_of(f"{ds.name}:{q}") == half and langs[q] == lang]
                    if part:
                        by_lang[str(w)][f"{ds.name}:{half}:{lang}"] = round(float(np.mean(part)), 6)
            tune_scores[w][ds.name] = {q: v for q, v in ndcg.items() if half_of(f"{ds.name}:{q}") == "tune"}
            query_lang[ds.name] = {q: langs[q] for q in tune_scores[w][ds.name]}
            print(f"{ds.name} {args.knob}={w}: tune {figures[str(w)][ds.name + ':tune']:.4f}", file=sys.stderr)
    names = [load_dataset(resolve_dataset(n)).name for n in args.datasets]

    def tune_mean(w: float) -> float:
        return float(np.mean([figures[str(w)][f"{n}:tune"] for n in names]))

    knob = "rerank.weight" if args.knob == "rerank" else f"fusion.{args.knob}"
    extra: dict = {"rerank.depth": args.depth or base.rerank.depth} if args.knob == "rerank" else {}
    languages: tuple[str, ...] | None = None
    if args.by_language:
        picked, languages, means = pick_by_language(tune_scores, query_lang)
        extra.update({"by_language": True, "rerank.languages": list(languages),
                      "tune_mean_every_language": {str(w): round(tune_mean(w), 6) for w in grid},
                      "figures_by_language": by_lang})
    else:
        picked = max(grid, key=lambda w: (round(tune_mean(w), 6), -w))
        means = {str(w): round(tune_mean(w), 6) for w in grid}
    doc = {"knob": knob, **extra, "metric": "nDCG@10", "chosen_on": "tune half", "grid": grid, "picked": picked,
           "tune_mean": means, "figures": figures}
    _write(args.out, json.dumps(doc, indent=2) + "\n")
    if args.write_config:
        cfg = with_knob(base, args.knob, picked, args.depth, languages)
        _write(args.write_config, cfg.to_json() + "\n")
    print(json.dumps({"picked": picked, **({"languages": list(languages)} if languages is not None else {}),
                      "tune_mean": doc["tune_mean"]}))
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
