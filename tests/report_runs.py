"""Hand-made run folders over the real ``mini`` dev split, for the report and research tests.

Writing them takes no eval (no index, no ranx): per-query values are drawn from a seeded generator
and the headline metrics are their means, so every number a test reads back is known here.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from searchkit.evaluate.runs import RUN_FORMAT, trec_text

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100")


def mini_dev() -> Any:
    from searchkit.evaluate.datasets import load_dataset

    return load_dataset(ROOT / "datasets" / "mini", split="dev")


def make_run(folder: Path, *, seed: int = 0, shift: float = 0.0, dataset: Any = None, dataset_name: str | None = None,
             split: str | None = None, sha: str | None = None) -> Path:
    """Write a run folder at ``folder`` over ``dataset`` (default mini dev). ``shift`` is added to
    every per-query value (clipped to 0-1), so a positive shift makes a run better everywhere."""
    from searchkit.evaluate.provenance import dataset_hash

    ds = dataset or mini_dev()
    rng = np.random.default_rng(seed)
    kind = {r.id: r.kind for r in ds.records}
    queries, run = [], {}
    for q in ds.queries:
        relevant = [d for d, g in ds.qrels.get(q.id, {}).items() if g > 0]
        others = [r.id for r in ds.records if r.id not in relevant]
        picks = list(rng.choice(others, size=min(8, len(others)), replace=False))
        ranking = ([relevant[0]] if relevant and rng.random() < 0.7 else []) + picks
        if relevant and relevant[0] not in ranking:
            ranking.insert(int(rng.integers(1, 6)), relevant[0])
        ranking = [str(x) for x in ranking[:10]]
        values = None
        if q.answerable:
            base = rng.uniform(0.1, 1.0, size=len(METRICS))
            values = {m: float(np.clip(v + shift, 0.0, 1.0)) for m, v in zip(METRICS, base)}
        queries.append({
            "id": q.id, "lang": q.lang or "", "category": q.category, "answerable": q.answerable,
            "kinds": list(q.kinds or ()), "relevant_kinds": sorted({kind[d] for d in relevant if d in kind}),
            "id_in_corpus": q.id_in_corpus, "metrics": values, "ranking": ranking,
            "answer_probability": float(np.clip(rng.uniform(0.3, 1.0) if q.answerable else rng.uniform(0.0, 0.7), 0, 1)),
            "weak_match": False, "missing_ids": [], "signals": {},
        })
        run[q.id] = {d: float(10 - i) for i, d in enumerate(ranking)}
    judged = [q for q in queries if q["metrics"] is not None]
    headline = {m: float(np.mean([q["metrics"][m] for q in judged])) for m in METRICS}

    def groups(key) -> dict[str, dict[str, float]]:
        members: dict[str, list] = {}
        for q in judged:
            for g in key(q):
                members.setdefault(g, []).append(q)
        if len(members) < 2:
            return {}
        return {g: {m: float(np.mean([q["metrics"][m] for q in qs])) for m in METRICS} for g, qs in sorted(members.items())}

    from sklearn.metrics import roc_auc_score

    auroc = float(roc_auc_score([q["answerable"] for q in queries], [q["answer_probability"] for q in queries]))
    name = dataset_name or ds.name
    metrics = {
        "dataset": name, "split": split or ds.split, "config_fingerprint": f"cfg{seed:013d}", "path": "searcher",
        "depth": 100, "metrics": headline,
        "no_answer": {"AUROC": auroc, "AP-noanswer": 0.5, "warn-precision": 0.5, "warn-recall": 0.5,
                      "false-warn-rate": 0.1},
        "missing_id": {}, "by_lang": groups(lambda q: [q["lang"]]), "by_category": groups(lambda q: [q["category"]]),
        "by_kind": groups(lambda q: q["relevant_kinds"]), "by_kinds_filter": {},
        "counts": {"queries": len(queries), "answerable": len(judged), "unanswerable": len(queries) - len(judged),
                   "judged": len(judged), "records": len(ds.records), "id_labelled": 0},
        "timing": {"index_s": 0.0, "query_ms_p50": 1.0, "query_ms_p95": 2.0},
        "queries": queries,
    }
    prov = {"format": RUN_FORMAT, "dataset": name, "dataset_path": "datasets/mini", "split": split or ds.split,
            "dataset_sha256": sha or dataset_hash(ds), "config_fingerprint": f"cfg{seed:013d}",
            "index_fingerprint": "idx", "git": {"commit": "0" * 40, "dirty": False}, "versions": {"searchkit": "0.1.0"},
            "time": "2026-01-01T00:00:00+00:00", "path": "searcher", "depth": 100}
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics, ensure_ascii=False, indent=1), encoding="utf-8")
    (folder / "provenance.json").write_text(json.dumps(prov), encoding="utf-8")
    (folder / "config.json").write_text("{}\n", encoding="utf-8")
    (folder / "run.trec").write_text(trec_text(run, folder.name), encoding="utf-8")
    return folder
