"""ragas as a metric provider (issue 9 section 4): where its ID-based context precision and recall
must equal ours (ranx P@k and R@k on binary relevance), and that they do; the install hint when
ragas is absent. Tests that need ragas are skipped, with the reason, where it is not installed."""
from __future__ import annotations

import json

import numpy as np
import pytest

from searchkit.errors import ResourceError
from searchkit.evaluate import ragas_metrics
from searchkit.evaluate.metrics import per_query_metrics

needs_ragas = pytest.mark.skipif(
    not ragas_metrics.is_available(),
    reason="ragas is not installed (research extra: SEARCHKIT_EXTRAS=test,research bash scripts/setup.sh)",
)


@needs_ragas
def test_ragas_scores_by_hand():
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}}
    qrels = {"q1": {"a": 1, "c": 2, "z": 1, "n": 0}, "q2": {"y": 1}, "q3": {"n": 0}}
    s = ragas_metrics.ragas_scores(run, qrels, k=2)
    p, r = ragas_metrics.names(2)
    assert set(s) == {"q1", "q2"}  # q3 has no relevant document
    # q1: top 2 = a, b; relevant a, c, z -> precision 1/2, recall 1/3
    assert s["q1"] == {p: pytest.approx(1 / 2), r: pytest.approx(1 / 3)}
    assert s["q2"] == {p: 0.0, r: 0.0}
    assert ragas_metrics.ragas_summary(s) == {p: pytest.approx(1 / 4), r: pytest.approx(1 / 6)}


@needs_ragas
@pytest.mark.parametrize("k", [1, 5, 10, 20])
def test_ragas_agrees_with_ranx_recall_and_precision_at_k(k):
    """Binary relevance (grade > 0), top k as the retrieved contexts: ragas' ID-based recall is
    ranx recall@k on every query; its precision is ranx precision@k wherever the run returned
    at least k documents (ragas divides by the number retrieved, ranx by k)."""
    rng = np.random.default_rng(k)
    docs = [f"d{i}" for i in range(60)]
    qrels, run = {}, {}
    for q in range(40):
        qid = f"q{q}"
        rel = rng.choice(docs, size=int(rng.integers(1, 6)), replace=False)
        qrels[qid] = {d: int(rng.integers(1, 4)) for d in rel}
        qrels[qid][next(str(d) for d in rng.permutation(docs) if d not in qrels[qid])] = 0  # judged, not relevant
        n = int(rng.integers(1, 40))  # some runs are shorter than k
        ranked = rng.permutation(docs)[:n]
        run[qid] = {d: float(n - i) for i, d in enumerate(ranked)}
    ours = per_query_metrics(qrels, run, [f"R@{k}"] + (["P@10"] if k == 10 else []))
    theirs = ragas_metrics.ragas_scores(run, qrels, k=k)
    p_name, r_name = ragas_metrics.names(k)
    assert set(theirs) == set(ours)
    for qid in ours:
        assert theirs[qid][r_name] == pytest.approx(ours[qid][f"R@{k}"]), qid
        if k == 10 and len(run[qid]) >= k:
            assert theirs[qid][p_name] == pytest.approx(ours[qid]["P@10"]), qid


@needs_ragas
def test_eval_metrics_ragas_shows_both(tmp_path, monkeypatch, capsys):
    from searchkit.cli import main
    from searchkit.config import SearchConfig
    from test_metrics import HASHING, tiny_workspace

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    data = tiny_workspace(tmp_path / "ws")
    args = ["eval", "--dataset", str(data), "--config", str(cfg), "--quiet", "--metrics", "ragas"]
    assert main(args + ["--json", "--queries"]) == 0
    d = json.loads(capsys.readouterr().out)
    rg = d["ragas"]
    assert rg["k"] == 10 and rg["queries"] == 4
    assert rg["mean"]["ragas:id_context_recall@10"] == pytest.approx(rg["ours"]["R@10"])
    rows = {q["id"]: q for q in d["queries"]}
    assert rows["q5"]["ragas"] is None and rows["q1"]["ragas"]["ragas:id_context_recall@10"] == rows["q1"]["metrics"]["R@10"]
    assert main(args) == 0
    assert "ragas (k=10" in capsys.readouterr().out


def test_without_ragas_the_message_says_how_to_install(tmp_path, monkeypatch, capsys):
    from searchkit.cli import main

    monkeypatch.setattr(ragas_metrics, "is_available", lambda: False)
    with pytest.raises(ResourceError, match="research"):
        ragas_metrics.ragas_scores({}, {})
    assert main(["eval", "--dataset", "mini", "--metrics", "ragas", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SEARCHKIT_EXTRAS=test,research bash scripts/setup.sh" in err
    assert "pip install 'searchkit[research]'" in err
