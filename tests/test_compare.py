"""Comparing runs (SPEC E4; issue 9 section 3): paired tests from scipy, Holm's correction, the
AUROC bootstrap, `searchkit compare` and its refusals. Hand-computed fixtures."""
from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from searchkit.errors import InputError
from searchkit.evaluate.compare import (
    auroc_bootstrap,
    benjamini_hochberg,
    compare_runs,
    effect_size,
    holm,
    paired_ci,
    paired_p,
    paired_test,
    render,
)
from searchkit.evaluate.runs import RUN_FORMAT, RunFolder, load_run

# ------------------------------------------------------------------------------ the tests


def test_fisher_is_exact_on_few_queries_by_hand():
    # differences (1, 1, 1): of the 8 sign patterns only +++ and --- reach |mean| >= 1
    assert paired_p([0, 0, 0], [1, 1, 1]) == pytest.approx(2 / 8)
    # differences (2, 1, 0, 1): |mean| = 1; patterns with |±2 ±1 ±0 ±1| / 4 >= 1 -> 2 of 8 distinct
    # sign choices of the non-zero terms (the zero changes nothing), each counted twice of 16
    diffs = [2, 1, 0, 1]
    hits = sum(abs(sum(s * d for s, d in zip(signs, diffs))) / 4 >= 1 - 1e-12
               for signs in itertools.product((1, -1), repeat=4))
    assert paired_p([0, 0, 0, 0], diffs) == pytest.approx(hits / 16)


def test_student_is_scipys_paired_t_test():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(3)
    a = rng.random(30)
    b = a + rng.normal(0.05, 0.1, 30)
    assert paired_p(a, b, "student") == pytest.approx(float(ttest_rel(a, b).pvalue))


def test_fisher_matches_scipy_permutation_test_and_is_reproducible():
    from scipy.stats import permutation_test

    rng = np.random.default_rng(4)
    a = rng.random(40)
    b = a + rng.normal(0.03, 0.1, 40)
    want = permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                            vectorized=True, n_resamples=10_000, rng=np.random.default_rng(42)).pvalue
    assert paired_p(a, b) == pytest.approx(want)
    assert paired_p(a, b) == paired_p(a, b)  # fixed seed: the same p every call


def test_edge_cases():
    assert paired_p([0.3, 0.5], [0.3, 0.5]) == 1.0
    assert paired_p([0.3, 0.5], [0.3, 0.5], "student") == 1.0
    assert math.isnan(paired_p([0.1], [0.9])) and math.isnan(paired_p([], []))
    with pytest.raises(ValueError, match="unknown test 'wilcoxon'"):
        paired_p([0, 1], [1, 1], "wilcoxon")
    with pytest.raises(ValueError, match="one length"):
        paired_p([0, 1], [1])


def test_paired_test_on_per_query_values_is_order_free():
    rng = np.random.default_rng(5)
    ids = [f"q{i}" for i in range(25)]
    a = {q: {"nDCG@10": float(rng.random()), "R@10": float(rng.random())} for q in ids}
    b = {q: {"nDCG@10": v["nDCG@10"] + 0.2, "R@10": v["R@10"]} for q, v in a.items()}
    p = paired_test(a, b)
    assert set(p) == {"nDCG@10", "R@10"} and p["R@10"] == 1.0 and p["nDCG@10"] < 0.001
    shuffled = {q: b[q] for q in reversed(ids)}
    assert paired_test(a, shuffled) == p
    assert paired_test(a, b, metrics=["nDCG@10"]) == {"nDCG@10": p["nDCG@10"]}
    assert paired_test(a, b, "student")["nDCG@10"] < 0.001
    del b["q3"]
    with pytest.raises(InputError, match="different queries"):
        paired_test(a, b)


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 (m = 3): 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    out = holm([0.02, float("nan")])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1])
    assert holm([]) == []


def test_auroc_bootstrap():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(6)
    y = [True] * 30 + [False] * 12
    pa = rng.random(42)
    pb = np.where(y, pa + 0.4, pa)
    out = auroc_bootstrap(y, pa, pb, n_resamples=500)
    assert out["AUROC_a"] == pytest.approx(roc_auc_score(y, pa)) and out["AUROC_b"] == pytest.approx(roc_auc_score(y, pb))
    assert out["delta"] > 0 and out["ci_low"] > 0 and out["p"] < 0.01
    assert auroc_bootstrap(y, pa, pb, n_resamples=500) == out  # fixed seed
    same = auroc_bootstrap(y, pa, pa, n_resamples=200)
    assert same["delta"] == 0 and same["p"] == 1.0 and same["ci_low"] == same["ci_high"] == 0
    assert math.isnan(auroc_bootstrap([True, True], [0.1, 0.2], [0.3, 0.4])["p"])


# ----------------------------------------------------------------------- comparing run folders


def _run(path: Path, values: dict, *, sha="abc", split="dev", probs=None, write=True) -> RunFolder:
    """A run folder from per-query values {qid: (lang, kind, {metric: v})} (+ unanswerable probs)."""
    rows = []
    for qid, (lang, kind, m) in values.items():
        rows.append({"id": qid, "lang": lang, "category": "c", "answerable": True, "kinds": [],
                     "relevant_kinds": [kind], "metrics": m, "answer_probability": (probs or {}).get(qid, 0.9)})
    for qid, p in (probs or {}).items():
        if qid not in values:
            rows.append({"id": qid, "lang": "en", "category": "no-record", "answerable": False, "kinds": [],
                         "relevant_kinds": [], "metrics": None, "answer_probability": p})
    metrics = {"dataset": "t", "split": split, "config_fingerprint": path.name, "path": "searcher", "queries": rows}
    prov = {"format": RUN_FORMAT, "dataset": "t", "split": split, "dataset_sha256": sha}
    if write:
        path.mkdir(parents=True)
        (path / "metrics.json").write_text(json.dumps(metrics))
        (path / "provenance.json").write_text(json.dumps(prov))
        (path / "config.json").write_text("{}")
    return RunFolder(path, metrics, prov, {})


def _values(n=20, shift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        v = float(np.clip(rng.random() * 0.8 + shift, 0, 1))
        out[f"q{i:02d}"] = ("ru" if i % 2 else "en", "chat" if i % 3 else "log", {"nDCG@10": v, "R@10": 1.0})
    return out


def _shifted(vals, by=0.15):
    return {q: (l, k, {"nDCG@10": min(1.0, m["nDCG@10"] + by), "R@10": 1.0}) for q, (l, k, m) in vals.items()}


def test_compare_runs_values_deltas_and_marks(tmp_path):
    a = _run(tmp_path / "a", _values())
    b = _run(tmp_path / "b", _shifted(_values()))
    cmp = compare_runs([a, b])
    assert cmp.correction == "bh" and cmp.test == "fisher"
    top = cmp.sections[0]
    assert (top["breakdown"], top["queries"], top["n"]) == ("all", 20, 20)
    nd = next(r for r in top["metrics"] if r["metric"] == "nDCG@10")
    base = np.mean([m["nDCG@10"] for _, _, m in _values().values()])
    assert nd["values"][0] == pytest.approx(base) and nd["delta"][1] == pytest.approx(nd["values"][1] - base)
    assert nd["significant"] == [None, True] and nd["p"][1] < 0.05
    r10 = next(r for r in top["metrics"] if r["metric"] == "R@10")
    assert r10["p"][1] == 1.0 and r10["significant"][1] is False
    assert r10["identical"] == [None, True] and r10["p_adjusted"] == [None, None]  # not tested: out of the family
    groups = {(s["breakdown"], s["group"]) for s in cmp.sections}
    assert {("by_lang", "en"), ("by_lang", "ru"), ("by_kind", "chat"), ("by_kind", "log")} <= groups
    text = render(cmp)
    assert "baseline a" in text and "lang ru" in text and "*" in text and "Benjamini-Hochberg" in text


def _family(cmp):
    rows = [r for s in cmp.sections for r in s["metrics"]] + ([cmp.no_answer] if cmp.no_answer else [])
    cells = [(r, i) for r in rows for i in range(1, len(r["p"])) if not math.isnan(r["p"][i]) and not r["identical"][i]]
    return cells


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_the_correction_spans_every_group_metric_and_run(tmp_path, correction):
    """Issue 31 item 3: one family for all groups x metrics x runs (before: Holm over the runs of one
    row only, nothing at all with two runs)."""
    vals = _values(seed=1)
    a = _run(tmp_path / "a", vals)
    b = _run(tmp_path / "b", {q: (l, k, {"nDCG@10": min(1.0, m["nDCG@10"] + 0.05 * (i % 2)), "R@10": 1.0})
                              for i, (q, (l, k, m)) in enumerate(vals.items())})
    c = _run(tmp_path / "c", _shifted(vals, 0.2))
    cmp = compare_runs([a, b, c], correction=correction)
    cells = _family(cmp)
    # 1 all + 2 langs + 2 kinds (+ category c alone: left out) = 5 groups, x 2 metrics x 2 runs = 20
    # comparisons; identical ones are not tested (issue 40 item 5): R@10 (1.0 everywhere) in each group for
    # each run (10), and b in lang en (only the odd, Russian queries moved): 9 tests
    assert cmp.correction == correction and cmp.tests == len(cells) == 9 and cmp.identical == 11
    raw = [r["p"][i] for r, i in cells]
    want = {"holm": holm, "bh": benjamini_hochberg, "none": list}[correction](raw)
    assert [r["p_adjusted"][i] for r, i in cells] == pytest.approx(want)
    assert [r["significant"][i] for r, i in cells] == [q < 0.05 for q in want]
    two = compare_runs([a, b], correction=correction)
    row2 = next(r for r in two.sections[0]["metrics"] if r["metric"] == "nDCG@10")
    row3 = next(r for r in cmp.sections[0]["metrics"] if r["metric"] == "nDCG@10")
    assert row3["p"][1] == row2["p"][1]  # raw p does not depend on the other runs
    if correction != "none":
        assert row2["p_adjusted"][1] > row2["p"][1]  # two runs are corrected too, over groups and metrics
    with pytest.raises(InputError, match="unknown correction 'fdr'"):
        compare_runs([a, b], correction="fdr")


def test_benjamini_hochberg_by_hand():
    from scipy.stats import false_discovery_control

    # sorted 0.01, 0.03, 0.04, 0.20 (m = 4): p * m / rank = 0.04, 0.06, 0.0533, 0.2; then the running
    # minimum from the largest: 0.2, 0.0533, 0.0533, 0.04
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.20]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    rng = np.random.default_rng(9)
    ps = list(rng.random(30) ** 3)
    assert benjamini_hochberg(ps) == pytest.approx(list(false_discovery_control(ps)))
    out = benjamini_hochberg([0.02, float("nan"), 0.04])
    assert out[0] == pytest.approx(0.04) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert benjamini_hochberg([]) == []


def test_bootstrap_interval_and_effect_size():
    from scipy.stats import bootstrap

    rng = np.random.default_rng(7)
    a = rng.random(30)
    b = np.clip(a + rng.normal(0.1, 0.15, 30), 0, 1)
    lo, hi = paired_ci(a, b)
    assert lo < np.mean(b - a) < hi and lo > 0
    want = bootstrap((a, b), lambda u, v, axis: np.mean(v - u, axis=axis), paired=True, vectorized=True,
                     n_resamples=2000, rng=np.random.default_rng(42)).confidence_interval
    assert (lo, hi) == pytest.approx((want.low, want.high))
    assert paired_ci(a, b) == [lo, hi]  # seeded
    assert paired_ci([0.2, 0.5, 0.7], [0.3, 0.6, 0.8]) == pytest.approx([0.1, 0.1])  # every query moved by 0.1
    assert paired_ci([0.1], [0.9]) is None
    # d_z: differences 1, 2, 3: mean 2, standard deviation 1
    assert effect_size([0, 0, 0], [1, 2, 3]) == pytest.approx(2.0)
    assert effect_size([0, 1, 2], [0, 1, 2]) == 0.0
    assert effect_size([0, 1], [1, 2]) is None and effect_size([0], [1]) is None


def test_a_one_query_group_says_n1_not_p_nan(tmp_path, capsys):
    from searchkit.cli import main

    vals = _values()
    vals["q00"] = ("ja", "chat", vals["q00"][2])  # the only Japanese query
    _run(tmp_path / "a", vals)
    _run(tmp_path / "b", _shifted(vals))
    cmp = compare_runs([load_run(tmp_path / "a"), load_run(tmp_path / "b")])
    ja = next(s for s in cmp.sections if s["group"] == "ja")
    row = ja["metrics"][0]
    assert ja["n"] == row["n"] == 1 and row["ci"][1] is None and row["effect_size"][1] is None
    assert row["significant"][1] is False
    assert cmp.tests == len(_family(cmp))  # a group of one query adds no test to the family
    text = render(cmp)
    line = next(x for x in text.splitlines() if x.startswith("lang ja") and "nDCG@10" in x)
    assert line.rstrip().endswith("n=1") and not re.search(r"\bnan\b", text)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--by", "lang"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    ja = next(s for s in d["sections"] if s["group"] == "ja")
    assert ja["n"] == 1 and ja["metrics"][0]["p"] == [None, None]


def _refuse(constant):
    raise ValueError(f"not strict JSON: {constant}")


def test_metric_by_and_only_significant(tmp_path, capsys):
    from searchkit.cli import main

    vals = _values(n=30, seed=2)
    probs = {**{q: 0.8 for q in vals}, **{f"n{i}": 0.3 for i in range(8)}}
    _run(tmp_path / "a", vals, probs=probs)
    _run(tmp_path / "b", {q: (l, k, {"nDCG@10": min(1.0, m["nDCG@10"] + (0.3 if l == "ru" else 0.0)), "R@10": 1.0})
                          for q, (l, k, m) in vals.items()}, probs=probs)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    cmp = compare_runs([load_run(a), load_run(b)], metrics=["nDCG@10"], by=["lang"])
    assert [(s["breakdown"], s["group"]) for s in cmp.sections] == [("all", "all"), ("by_lang", "en"), ("by_lang", "ru")]
    assert all([r["metric"] for r in s["metrics"]] == ["nDCG@10"] for s in cmp.sections) and cmp.no_answer is None
    assert cmp.tests == 2 and cmp.identical == 1  # all and ru; en changed nothing: identical, not in the family
    assert main(["compare", a, b, "--metric", "nDCG@10", "--by", "none", "--json"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert [s["group"] for s in d["sections"]] == ["all"] and d["no_answer"] is None and d["by"] == []
    assert main(["compare", a, b, "--metric", "nDCG@10,AUROC", "--by", "lang", "--only-significant"]) == 0
    out = capsys.readouterr().out
    rows = [x for x in out.splitlines() if "nDCG@10" in x and not x.startswith(("group", "baseline"))]
    assert [x.split()[:2] for x in rows] == [["all", "30"], ["lang", "ru"]] and "lang en" not in out
    assert "AUROC" not in [x.split()[2] for x in out.splitlines() if x.startswith("all")]  # unchanged P(answer)
    assert "only the rows with a significant difference" in out
    for bad, word in ((["--metric", "nDGC@10"], "unknown metric 'nDGC@10' (no measure 'nDGC'; did you mean nDCG@10?)"),
                      (["--metric", "nDCG@11"], "holds no per-query nDCG@11 and no run.trec to compute it from"),
                      (["--metric", "ragas:faithfulness@5"], "holds no per-query ragas:faithfulness@5 (an LLM-judged"),
                      (["--metric", "warn-recall"], "not per query"),
                      (["--by", "speaker"], "unknown --by"), (["--by", "none,lang"], "goes alone")):
        assert main(["compare", a, b, *bad]) == 2
        err = capsys.readouterr().err
        assert word in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        main(["compare", a, b, "--correction", "fdr"])
    assert exc.value.code == 2 and "invalid choice: 'fdr'" in capsys.readouterr().err


def test_no_answer_auroc_is_compared(tmp_path):
    vals = _values(n=12)
    probs_a = {**{q: 0.6 for q in vals}, **{f"n{i}": 0.7 for i in range(6)}}  # no separation
    probs_b = {**{q: 0.9 for q in vals}, **{f"n{i}": 0.1 for i in range(6)}}  # perfect separation
    a = _run(tmp_path / "a", vals, probs=probs_a)
    b = _run(tmp_path / "b", vals, probs=probs_b)
    na = compare_runs([a, b], n_bootstrap=300).no_answer
    assert na["values"] == pytest.approx([0.0, 1.0]) and na["unanswerable"] == 6
    assert na["significant"][1] is True and na["ci"][1][0] > 0


def test_runs_over_different_query_sets_are_refused_naming_both(tmp_path):
    a = _run(tmp_path / "a", _values())
    b = _run(tmp_path / "b", _values(), sha="def")
    with pytest.raises(InputError) as exc:
        compare_runs([a, b])
    assert str(tmp_path / "a") in str(exc.value) and str(tmp_path / "b") in str(exc.value)
    c = _run(tmp_path / "c", _values(), split="test")
    with pytest.raises(InputError, match="different query sets"):
        compare_runs([a, c])
    with pytest.raises(InputError, match="at least two"):
        compare_runs([a])
    with pytest.raises(ValueError, match="alpha"):
        compare_runs([a, a], alpha=1.5)


def test_cli_compare(tmp_path, capsys):
    from searchkit.cli import main

    _run(tmp_path / "a", _values())
    _run(tmp_path / "b", {q: (l, k, {"nDCG@10": min(1.0, m["nDCG@10"] + 0.15), "R@10": 1.0})
                          for q, (l, k, m) in _values().items()})
    _run(tmp_path / "other", _values(), sha="zzz")
    assert load_run(tmp_path / "a").per_query()["q00"]["R@10"] == 1.0
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "nDCG@10" in out and "*" in out and "fisher" in out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--test", "student"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["test"] == "student" and d["baseline"] == "a" and d["sections"][0]["breakdown"] == "all"
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "different query sets" in err and "other" in err
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--alpha", "0"]) == 2
    assert "--alpha" in capsys.readouterr().err


def test_half_compares_only_that_half_of_the_queries(tmp_path):
    from searchkit.evaluate.tune import half_of

    vals = _values(n=40, seed=3)
    probs = {**{q: 0.8 for q in vals}, **{f"n{i}": 0.2 for i in range(10)}}
    a = _run(tmp_path / "a", vals, probs=probs)
    b = _run(tmp_path / "b", {q: (l, k, {"nDCG@10": min(1.0, m["nDCG@10"] + 0.1), "R@10": 1.0})
                              for q, (l, k, m) in vals.items()}, probs=probs)
    whole = compare_runs([a, b], n_bootstrap=100)
    halves = {h: compare_runs([a, b], half=h, n_bootstrap=100) for h in ("tune", "report")}
    want = {h: sorted(q for q in vals if half_of(f"t:{q}") == h) for h in ("tune", "report")}
    for h, cmp in halves.items():
        assert cmp.sections[0]["queries"] == len(want[h]) > 0
        nd = next(r for r in cmp.sections[0]["metrics"] if r["metric"] == "nDCG@10")
        assert nd["values"][0] == pytest.approx(np.mean([vals[q][2]["nDCG@10"] for q in want[h]]))
        assert cmp.no_answer["queries"] == len(want[h]) + sum(half_of(f"t:n{i}") == h for i in range(10))
        assert any(h in n for n in cmp.notes)
    assert whole.sections[0]["queries"] == 40
    with pytest.raises(InputError):
        compare_runs([a, b], half="nosuch")
