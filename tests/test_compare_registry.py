"""compare over the metric registry, and significance that informs (issue 40 items 4 and 5; SPEC E4):
any ir_measures measure and the ragas scores compare (a measure a run folder lacks is computed from its
run.trec), identical comparisons are reported as such and left out of the family, the family is what
was asked for, and a resampled p is never 0. Hashing embedder."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from searchkit.errors import InputError
from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.evaluate.compare import auroc_bootstrap, compare_runs, paired_p, render
from searchkit.evaluate.measures import metric
from searchkit.evaluate.runs import load_run
from searchkit.evaluate.run_values import metric_values, with_metrics
from test_compare import _refuse, _run, _shifted, _values
from test_metrics import HASHING, tiny_workspace


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two eval run folders of one dataset split (weighted-sum and RRF fusion), written by `eval --out`."""
    tmp = tmp_path_factory.mktemp("reg")
    mp = pytest.MonkeyPatch()
    mp.setenv("SEARCHKIT_CACHE", str(tmp / "cache.sqlite"))
    data = tiny_workspace(tmp / "ws")
    out = {}
    for name, cfg in (("wsum", HASHING), ("rrf", {**HASHING, "fusion": {"method": "rrf"}})):
        path = tmp / f"{name}.json"
        SearchConfig.from_dict(cfg).save(path)
        out[name] = tmp / "runs" / name
        assert main(["eval", "--dataset", str(data), "--config", str(path), "--out", str(out[name]), "--quiet"]) == 0
    yield {"data": data, **out}
    mp.undo()


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_a_measure_the_runs_lack_is_computed_from_run_trec(two_runs, capsys):
    a, b = str(two_runs["wsum"]), str(two_runs["rrf"])
    assert main(["compare", a, b, "--metric", "AP,Judged@10,nDCG@20,MAP", "--json"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    rows = {r["metric"]: r for r in d["sections"][0]["metrics"]}
    assert list(rows) == ["AP", "Judged@10", "nDCG@20"]  # MAP is AP
    assert d["metrics"] == ["AP", "Judged@10", "nDCG@20"] and d["no_answer"] is None
    assert any("AP computed from run.trec" in n for n in d["notes"])
    # the values are what ranx (another implementation) gives on the run files and the dataset's qrels
    ranx = pytest.importorskip("ranx")
    from searchkit.evaluate.datasets import load_dataset

    ds = load_dataset(two_runs["data"], "dev")
    judged = sorted(load_run(a).per_query())
    qrels = ranx.Qrels({q: {d: g for d, g in ds.qrels[q].items() if g > 0} for q in judged})
    for i, folder in enumerate((a, b)):
        run = ranx.Run.from_file(f"{folder}/run.trec", kind="trec").to_dict()
        run = ranx.Run({q: run.get(q) or {"__none__": 0.0} for q in judged})
        got = ranx.evaluate(qrels, run, ["map", "ndcg@20"], make_comparable=True)
        assert rows["AP"]["values"][i] == pytest.approx(got["map"], abs=1e-12)
        assert rows["nDCG@20"]["values"][i] == pytest.approx(got["ndcg@20"], abs=1e-12)
    assert all(0 <= v <= 1 for r in rows.values() for v in r["values"])


def test_a_value_computed_from_run_trec_is_the_one_eval_wrote(two_runs, tmp_path):
    """nDCG@10 and R@5, struck from the rows of a copy of the folder, come back bit for bit from run.trec."""
    copy = tmp_path / "wsum"
    shutil.copytree(two_runs["wsum"], copy)
    m = json.loads((copy / "metrics.json").read_text())
    for q in m["queries"]:
        if q["metrics"] is not None:
            q["metrics"] = {k: v for k, v in q["metrics"].items() if k not in ("nDCG@10", "R@5")}
    (copy / "metrics.json").write_text(json.dumps(m))
    held, stripped = load_run(two_runs["wsum"]), load_run(copy)
    ids = sorted(held.per_query())
    names = [metric("nDCG@10"), metric("R@5")]
    notes: list[str] = []
    got = metric_values([stripped], names, ids, computed_note=notes)
    want = metric_values([held], names, ids)
    assert got == want and len(notes) == 2 and not metric_values([held], names, ids, computed_note=[]) == {}


def test_with_metrics_fills_what_the_folder_lacks(two_runs, tmp_path):
    """What gate --run and report read: a folder's metrics.json with a measure it lacks added, per query
    and as the headline mean, equal to what eval writes."""
    copy = tmp_path / "wsum"
    shutil.copytree(two_runs["wsum"], copy)
    m = json.loads((copy / "metrics.json").read_text())
    full = json.loads(json.dumps(m))
    for q in m["queries"]:
        if q["metrics"] is not None:
            del q["metrics"]["nDCG@10"]
    del m["metrics"]["nDCG@10"]
    (copy / "metrics.json").write_text(json.dumps(m))
    got = with_metrics(load_run(copy), ["nDCG@10", "AP", "AUROC"])
    assert got["metrics"]["nDCG@10"] == full["metrics"]["nDCG@10"]
    for q, want in zip(got["queries"], full["queries"]):
        if want["metrics"] is not None:
            assert q["metrics"]["nDCG@10"] == want["metrics"]["nDCG@10"] and "AP" in q["metrics"]
    assert with_metrics(load_run(two_runs["wsum"]), ["nDCG@10"]) == load_run(two_runs["wsum"]).metrics


def test_no_dataset_no_run_trec_one_line(two_runs, tmp_path, capsys):
    copies = [tmp_path / "moved", tmp_path / "moved2"]
    for copy in copies:
        shutil.copytree(two_runs["wsum"], copy)
        prov = json.loads((copy / "provenance.json").read_text())
        prov["dataset_path"] = str(tmp_path / "gone")  # and its name 'ws' is no dataset `eval --dataset` finds
        (copy / "provenance.json").write_text(json.dumps(prov))
    copy = copies[0]
    assert main(["compare", str(copies[1]), str(copy), "--metric", "AP"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no per-query AP" in err and "not found at" in err
    assert "--metrics AP --out" in err
    # the dataset changed since the run: its qrels are not the ones the run measured
    changed = tmp_path / "ws"
    shutil.copytree(two_runs["data"], changed)
    qrels = changed / "qrels" / "dev.tsv"
    qrels.write_text(qrels.read_text() + "q1\tops/page:p1\t1\n")
    prov["dataset_path"] = str(changed)
    (copy / "provenance.json").write_text(json.dumps(prov))
    with pytest.raises(InputError, match="sha256"):
        compare_runs([load_run(copies[1]), load_run(copy)], metrics=["AP"])
    (copies[1] / "run.trec").unlink()
    with pytest.raises(InputError, match="moved2 holds no per-query AP and no run.trec to compute it from"):
        compare_runs([load_run(copies[1]), load_run(copy)], metrics=["AP"])


def test_compare_a_a_says_identical(two_runs, capsys):
    a = str(two_runs["wsum"])
    assert main(["compare", a, a]) == 0
    out = capsys.readouterr().out
    assert "identical: every per-query value of every metric compared is the same in wsum and wsum" in out
    assert "p Benjamini-Hochberg-adjusted over the 0 tests asked for" in out
    rows = [x for x in out.splitlines() if x.startswith("all")]
    assert len(rows) == 8 and all(x.rstrip().endswith("identical") for x in rows)  # 7 metrics and AUROC
    assert "*" not in "".join(rows)
    assert main(["compare", a, a, "--json", "--by", "lang"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert d["all_identical"] and d["tests"] == 0 and d["identical"] > 8
    for s in d["sections"]:
        for r in s["metrics"]:
            assert r["identical"] == [None, True] and r["p_adjusted"] == [None, None] and r["delta"][1] == 0


def test_the_family_is_what_was_asked_for(tmp_path, capsys):
    vals = _values(n=30, seed=4)
    probs = {**{q: 0.8 for q in vals}, **{f"n{i}": 0.3 for i in range(8)}}
    probs_b = {**{q: 0.9 for q in vals}, **{f"n{i}": 0.2 for i in range(8)}}
    _run(tmp_path / "a", vals, probs=probs)
    _run(tmp_path / "b", _shifted(vals, 0.1), probs=probs_b)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert main(["compare", a, b, "--json"]) == 0  # headline group only: nDCG@10 (R@10 identical) and AUROC
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert [s["group"] for s in d["sections"]] == ["all"] and d["by"] == []
    assert (d["tests"], d["identical"]) == (2, 1) and d["metrics"] == ["nDCG@10", "R@10", "AUROC"]
    assert "over the 2 tests asked for (metrics x groups x runs; 1 identical comparison left out)" in d["methods"]["correction"]
    assert main(["compare", a, b, "--json", "--by", "lang"]) == 0  # + en and ru: nDCG@10 in each
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert (d["tests"], d["identical"]) == (4, 3)
    assert main(["compare", a, b, "--json", "--metric", "nDCG@10"]) == 0
    assert json.loads(capsys.readouterr().out)["tests"] == 1
    # the text shows the interval and the effect size beside each p
    text = render(compare_runs([load_run(a), load_run(b)], by=["none"]))
    head = next(x for x in text.splitlines() if x.startswith("group"))
    assert head.split()[-6:] == ["CI", "Δ1", "d1", "raw", "p1", "p1"]
    nd = next(x for x in text.splitlines() if x.startswith("all") and "nDCG@10" in x)
    assert "[+0.1" in nd and nd.rstrip().endswith("*")


def test_ragas_scores_compare(tmp_path, capsys):
    """`compare --metric ragas:faithfulness@5` was 'unknown metric'; the scores are read from the rows,
    over the queries every run scored."""
    vals = _values(n=12, seed=5)
    for name, shift in (("a", 0.0), ("b", 0.3)):
        run = _run(tmp_path / name, vals)
        m = dict(run.metrics)
        for i, q in enumerate(m["queries"]):
            q["ragas_llm"] = None if i == 0 else {"ragas:faithfulness@5": min(1.0, 0.2 + 0.05 * i + shift),
                                                  "ragas:answer_relevancy@5": None}
            q["ragas"] = {"ragas:id_context_recall@10": 1.0, "ragas:id_context_precision@10": 0.1}
        (tmp_path / name / "metrics.json").write_text(json.dumps(m))
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert main(["compare", a, b, "--metric", "ragas:faithfulness@5,ragas:id_context_recall@10", "--json"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    f, r = d["sections"][0]["metrics"]
    assert f["metric"] == "ragas:faithfulness@5" and f["n"] == 11 and f["delta"][1] == pytest.approx(0.3, abs=0.05)
    assert r["identical"] == [None, True] and d["tests"] == 1
    assert any("ragas:faithfulness@5: 11 of the 12 judged queries" in n for n in d["notes"])
    assert main(["compare", a, b, "--metric", "ragas:answer_relevancy@5"]) == 0  # defined nowhere: n 0
    out = capsys.readouterr().out
    assert "ragas:answer_relevancy@5" in out


def test_a_resampled_p_is_never_0():
    rng = np.random.default_rng(11)
    a = rng.random(60)
    b = a + 0.5  # every query better: no resample reaches the observed mean difference
    assert paired_p(a, b, n_resamples=999) == pytest.approx(2 / 1000)
    y = [True] * 30 + [False] * 30
    pa = np.r_[rng.random(30) * 0.5, rng.random(30) * 0.5 + 0.5]  # inverted
    pb = np.r_[rng.random(30) * 0.5 + 0.5, rng.random(30) * 0.5]  # perfect
    out = auroc_bootstrap(y, pa, pb, n_resamples=499)
    assert out["delta"] == pytest.approx(1.0) and out["p"] == pytest.approx(2 / 500)
    assert auroc_bootstrap(y, pa, pa, n_resamples=99)["p"] == 1.0


def test_a_metric_that_is_not_per_query_is_refused(tmp_path):
    a = _run(tmp_path / "a", _values())
    with pytest.raises(InputError, match="'false-warn-rate' is a figure over all queries"):
        compare_runs([a, a], metrics=["false-warn-rate"])
