"""What the notebooks call (searchkit.evaluate.research): parameters, run-folder reuse, tables and
choices, with hand-computed values."""
import math
import os

import pytest
from report_runs import ROOT, make_run

from searchkit.errors import InputError
from searchkit.config import SearchConfig
from searchkit.evaluate import research
from searchkit.evaluate.runs import load_run
from searchkit.evaluate.tune import FusionTrial, half_of


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


# --------------------------------------------------------------------------- parameters


def test_notebook_config_and_its_one_line_errors(tmp_path):
    assert research.notebook_config(None, None) == SearchConfig()
    assert research.notebook_config(None, "hashing").dense.embedder == "hashing"
    with pytest.raises(InputError) as err:
        research.notebook_config(tmp_path / "none.json")
    assert "CONFIG" in str(err.value) and "no such file" in str(err.value)
    assert err.value._render_traceback_() == [f"InputError: {err.value}"]  # what IPython shows: one line
    with pytest.raises(InputError, match="EMBEDDER 'word2vec'"):
        research.notebook_config(None, "word2vec")
    bad = tmp_path / "bad.json"
    bad.write_text('{"fusion": {"method": "nope"}}')
    with pytest.raises(InputError, match="fusion.method") as err:
        research.notebook_config(bad)
    assert "\n" not in str(err.value)


def test_check_datasets_names_the_missing_one():
    research.check_datasets(["mini"], "dev", task_sets=["tasks-eval"])
    with pytest.raises(InputError) as err:
        research.check_datasets(["mini", "no-such-set"], "dev")
    msg = str(err.value)
    assert msg.startswith("DATASET 'no-such-set': no dataset folder 'no-such-set'") and "\n" not in msg
    with pytest.raises(InputError, match="DATASET 'mini': no split 'train'"):
        research.check_datasets(["mini"], "train")
    with pytest.raises(InputError, match="not a labelled task-store set"):
        research.check_datasets([], "dev", task_sets=["mini"])
    with pytest.raises(InputError, match="has no corpus.jsonl"):
        research.check_datasets(["tasks-eval"], "dev")


def test_work_from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT / "notebooks")
    assert research.work_from_repo_root() == ROOT
    assert os.getcwd() == str(ROOT)


def test_save_config_round_trips(tmp_path):
    cfg = SearchConfig().replace(**{"weak_match.threshold": 0.25})
    path = research.save_config(cfg, tmp_path / "deep" / "tuned.json")
    assert SearchConfig.load(path) == cfg
    assert [p.name for p in path.parent.iterdir()] == ["tuned.json"]
    assert research.config_label(None) == "shipped" and research.config_label("a/bm25_only.json") == "bm25_only"
    assert research.config_label("evals/defaults/bm25_only_config.json") == "bm25_only"  # a short column header
    assert research.config_label("x/config.json") == "config"


# --------------------------------------------------------------------------- run folders


def _fake_eval(calls):
    from searchkit.evaluate.run import EvalReport, QueryOutcome

    def evaluate_dataset(ds, config, **_):
        calls.append(config.fingerprint())
        outcomes = tuple(QueryOutcome(q.id, q.lang or "", q.category, q.answerable, ("x",), 0.5, False, (), 1.0)
                         for q in ds.queries)
        pq = {q.id: {"nDCG@10": 0.5} for q in ds.queries if q.answerable}
        return EvalReport(ds.name, ds.split, config.fingerprint(), {"nDCG@10": 0.5}, {"AUROC": 0.5}, {},
                          {"queries": len(outcomes)}, {}, outcomes, per_query=pq)

    return evaluate_dataset


def test_ensure_run_reuses_only_the_same_origin(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(research.folders, "evaluate_dataset", _fake_eval(calls))
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    first = research.ensure_run("mini", "dev", cfg, tmp_path)
    assert first.name == f"mini-dev-{cfg.fingerprint()[:10]}" and len(calls) == 1
    again = research.ensure_run("mini", "dev", cfg, tmp_path)
    assert again.path == first.path and len(calls) == 1  # reused
    research.ensure_run("mini", "dev", cfg, tmp_path, reuse=False)
    assert len(calls) == 2
    other = research.ensure_run("mini", "dev", cfg.replace(**{"fusion.method": "rrf"}), tmp_path)
    assert other.path != first.path and len(calls) == 3
    assert research.find_runs(tmp_path, cfg) == [first.path]
    # a folder of that name from another commit (or other data, versions, config) is evaluated again
    prov = first.path / "provenance.json"
    prov.write_text(prov.read_text().replace('"commit": "', '"commit": "0ther'))
    research.ensure_run("mini", "dev", cfg, tmp_path)
    assert len(calls) == 4


# --------------------------------------------------------------------------- tables


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("research-runs")
    return load_run(make_run(base / "a", seed=3)), load_run(make_run(base / "b", seed=3, shift=0.2))


def test_frames_hold_the_run_values(two_runs):
    a, b = two_runs
    head = research.headline_frame({"A": a, "B": b})
    assert head.loc["A", "nDCG@10"] == a.metrics["metrics"]["nDCG@10"]
    assert head.loc["B", "AUROC"] == b.metrics["no_answer"]["AUROC"]
    by_lang = research.breakdown_frame([a, b], "by_lang")
    assert by_lang.loc["ru", "b"] == b.metrics["by_lang"]["ru"]["nDCG@10"]
    q = research.query_frame(a)
    assert len(q) == len(a.queries) and q.loc[a.queries[0]["id"], "P(answer)"] == a.queries[0]["answer_probability"]
    assert research.group_table(a, "by_lang", ["R@10"])["R@10"]["ja"] == a.metrics["by_lang"]["ja"]["R@10"]
    deltas = research.per_query_deltas(a, b)
    assert (deltas["delta"] >= 0).all() and deltas["delta"].max() == pytest.approx(0.2)
    worst = research.worst_queries(a, n=3)
    values = sorted(v["nDCG@10"] for v in a.per_query().values())
    assert [w["metrics"]["nDCG@10"] for w in worst] == values[:3]


def test_comparison_frame_and_marks(two_runs):
    from searchkit.evaluate.compare import compare_runs

    cmp = compare_runs(list(two_runs), n_resamples=500)
    frame = research.comparison_frame(cmp)
    row = frame[frame.metric == "nDCG@10"].iloc[0]
    assert row["sig b"] == "*" and row["Δ b"] > 0
    assert frame.iloc[-1]["metric"] == "AUROC (no answer)"
    marks = research.significance_marks(cmp, "all")
    assert marks == {"b": {"all": "*"}}
    assert research.significance_marks(None) == {}


def test_comparison_frame_shows_interval_effect_raw_p_and_identical(two_runs, tmp_path):
    """Issue 40 item 6: the notebooks' comparison table carries what compare's text table shows: the
    bootstrap interval of each delta, Cohen's d_z and the raw p beside the adjusted one; a comparison
    whose per-query values are all the same says "identical" (no test), never a blank."""
    import math
    import shutil

    from searchkit.evaluate.compare import compare_runs

    a, b = two_runs
    same = tmp_path / "c"
    shutil.copytree(a.path, same)
    cmp = compare_runs([a, b, load_run(same)], n_resamples=500)
    frame = research.comparison_frame(cmp)
    cols = list(frame.columns)
    assert cols[cols.index("b"):cols.index("b") + 7] == ["b", "Δ b", "CI b", "d b", "raw p b", "p b", "sig b"]
    for sec in (s for s in cmp.sections if s["breakdown"] == "all"):
        for m in sec["metrics"]:
            row = frame[(frame.group == sec["group"]) & (frame.metric == m["metric"])].iloc[0]
            lo, hi = m["ci"][1]
            assert row["CI b"] == f"[{lo:+.4f}, {hi:+.4f}]"
            assert row["d b"] == m["effect_size"][1] and row["raw p b"] == m["p"][1] and row["p b"] == m["p_adjusted"][1]
            assert row["sig b"] == ("*" if m["significant"][1] else "")
            assert m["identical"][2] and row["sig c"] == "identical" and math.isnan(row["raw p c"])
            assert row["Δ c"] == 0.0
    auroc = frame[frame.metric == "AUROC (no answer)"].iloc[0]
    assert auroc["CI b"].startswith("[") and math.isnan(auroc["d b"]) and auroc["sig c"] == "identical"


# --------------------------------------------------------------------------- choices


def test_threshold_for_false_alarm_by_hand():
    y = [True, True, True, True, True, False]
    p = [0.1, 0.2, 0.3, 0.4, 0.9, 0.05]
    assert research.threshold_for_false_alarm(y, p, 0.2) == 0.2  # 1 of 5 answerable below it
    assert research.threshold_for_false_alarm(y, p, 0.0) == 0.1  # none below it
    assert research.threshold_for_false_alarm(y, p, 0.39) == 0.2  # floor(0.39 * 5) = 1
    assert research.threshold_for_false_alarm(y, p, 1.0) == 1.0
    assert research.threshold_for_false_alarm([True] * 4, [0.2, 0.2, 0.2, 0.5], 0.25) == 0.2  # ties: 0 below
    with pytest.raises(ValueError):
        research.threshold_for_false_alarm(y, p, 1.5)
    with pytest.raises(ValueError):
        research.threshold_for_false_alarm([False], [0.3], 0.1)


def test_threshold_report_picks_on_the_tune_half():
    rows = []
    for i in range(40):
        qid = f"q{i}"
        rows.append({"dataset": "d", "id": qid, "answerable": i % 4 != 0, "p": i / 40, "half": half_of(f"d:{qid}"),
                     "lang": "en"})
    out = research.threshold_report(rows, 0.25)
    tune = [r for r in rows if r["half"] == "tune"]
    t = research.threshold_for_false_alarm([r["answerable"] for r in tune], [r["p"] for r in tune], 0.25)
    assert out["threshold"] == t and out["tune"]["false_alarm"] <= 0.25
    report = [r for r in rows if r["half"] == "report" and r["answerable"]]
    assert out["report"]["false_alarm"] == sum(r["p"] < t for r in report) / len(report)
    curves = research.curves(rows, "half")
    assert set(curves) == {"report", "tune"} and len(curves["tune"][0]) == len(tune)


def _model_rows():
    """A workspace run as notebook 03 read it before issue 28: the conversation model scored some
    queries (P(answer) about 0.99 whatever the answer), the documents model the rest (0.05-0.6)."""
    rows = []
    for i in range(120):
        qid, model = f"q{i}", ("conversation" if i % 3 == 0 else "documents")
        answerable = i % 4 != 1
        p = (0.985 + (0.004 if answerable else 0.0)) if model == "conversation" else (0.3 + i / 400 if answerable else 0.05 + i / 2000)
        rows.append({"dataset": "w", "id": qid, "answerable": answerable, "p": p, "half": half_of(f"w:{qid}"),
                     "lang": "en", "model": model})
    return rows


def test_thresholds_are_picked_for_the_model_that_scored_the_queries():
    """Issue 28 item 1: one pooled threshold over both models' probabilities landed near 0.99 and
    was written into the documents model (warning on every answerable document query); each model
    now gets its own, from its own queries, written into it."""
    rows = _model_rows()
    choices = research.thresholds_by_model(rows, 0.10)
    assert set(choices) == {"documents", "conversation"}
    docs = [r for r in rows if r["model"] == "documents" and r["half"] == "tune"]
    assert choices["documents"]["threshold"] == research.threshold_for_false_alarm(
        [r["answerable"] for r in docs], [r["p"] for r in docs], 0.10)
    assert choices["documents"]["threshold"] < 0.5 and choices["conversation"]["threshold"] > 0.98
    assert choices["documents"]["tune"]["false_alarm"] <= 0.10 and choices["documents"]["report"]["recall"] == 1.0
    assert choices["documents"]["warning"] and "fewer than 30" in choices["documents"]["warning"]  # 30-odd a half
    base = SearchConfig()
    tuned = research.apply_thresholds(base, choices)
    assert tuned.weak_match.threshold == choices["documents"]["threshold"]
    assert tuned.weak_match.conversation.threshold == choices["conversation"]["threshold"]
    assert tuned.weak_match.coef == base.weak_match.coef and tuned.weak_match.conversation.coef == base.weak_match.conversation.coef
    only = research.apply_thresholds(base, research.thresholds_by_model(rows, 0.10, ["documents"]))
    assert only.weak_match.conversation == base.weak_match.conversation
    assert "documents: threshold" in research.threshold_changes(base, only) and "conversation" not in research.threshold_changes(base, only)
    assert set(research.curves(rows, "model")) == {"conversation", "documents"}
    assert len(research.curves(rows, "half", model="documents")["tune"][0]) == len(docs)


def test_a_model_that_scored_no_query_is_one_line_naming_it():
    rows = [r for r in _model_rows() if r["model"] == "documents"]
    assert set(research.thresholds_by_model(rows, 0.10)) == {"documents"}
    with pytest.raises(InputError, match="conversation model") as err:
        research.thresholds_by_model(rows, 0.10, ["conversation"])
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="unknown weak-match model 'chat'"):
        research.thresholds_by_model(rows, 0.10, ["chat"])


def test_no_answer_rows_and_missing_id_table(two_runs):
    a, _ = two_runs
    rows = research.no_answer_rows({"mini": a})
    assert len(rows) == len(a.queries) and {r["half"] for r in rows} == {"tune", "report"}
    assert {r["model"] for r in rows} <= {"documents", "conversation"}
    fake = [{"dataset": "d", "id_in_corpus": True, "missing_id_warned": False},
            {"dataset": "d", "id_in_corpus": False, "missing_id_warned": True},
            {"dataset": "d", "id_in_corpus": False, "missing_id_warned": False},
            {"dataset": "e", "id_in_corpus": None, "missing_id_warned": False}]
    assert research.missing_id_table(fake) == {"d": {"id in corpus": 0.0, "id absent": 0.5}}


def _trial(settings, values):
    per_query = {f"d:q{i}": v for i, v in enumerate(values)}
    tune = [v for k, v in per_query.items() if half_of(k) == "tune"]
    report = [v for k, v in per_query.items() if half_of(k) == "report"]
    return FusionTrial(settings, {"d": sum(tune) / len(tune)}, {"d": sum(report) / len(report)}, per_query)


def test_fusion_rows_and_significance():
    base = SearchConfig()
    shipped = {"fusion.method": "wsum", "fusion.norm": "minmax", "fusion.weights": {"bm25": 0.4, "dense": 0.6}}
    rrf = {"fusion.method": "rrf", "fusion.rrf_k": 60}
    best = {"fusion.method": "wsum", "fusion.norm": "zscore", "fusion.weights": {"bm25": 0.6, "dense": 0.4}}
    trials = [_trial(best, [0.9] * 20), _trial(shipped, [0.6] * 20), _trial(rrf, [0.5] * 20)]
    assert research.setting_label(best) == "wsum zscore bm25=0.6" and research.setting_label(rrf) == "rrf k=60"
    assert research.trial_matching(trials, base) is trials[1]
    assert research.trial_matching(trials, base, rrf) is trials[2]

    class Q:
        def __init__(self, i, lang):
            self.id, self.lang = f"q{i}", lang

    class D:
        name = "d"
        queries = [Q(i, "ru" if i % 2 else "ja") for i in range(20)]

    rows = research.fusion_rows(trials, [D()])
    cell = next(r for r in rows if r["setting"] == "rrf k=60" and r["half"] == "tune" and r["scope"] == "dataset")
    assert cell["value"] == pytest.approx(0.5) and cell["queries"] == sum(half_of(f"d:q{i}") == "tune" for i in range(20))
    assert {r["group"] for r in rows if r["scope"] == "lang"} == {"ru", "ja"}
    wsum = next(r for r in rows if r["setting"] == "wsum zscore bm25=0.6")
    assert (wsum["lead"], wsum["lead_weight"]) == ("bm25", 0.6) and (cell["lead"], cell["lead_weight"]) == (None, None)
    sig = {r["against"]: r for r in research.fusion_significance_rows(trials, base)}
    assert sig["runner-up"]["setting"] == "wsum minmax bm25=0.4" and sig["runner-up"] is not sig["shipped"]
    assert sig["RRF k=60"]["Δ tune (winner - it)"] == pytest.approx(0.4)
    assert math.isnan(sig["winner"]["p (tune half)"])
    # the shipped config has an adaptive model no grid point holds: never stood in for by its fixed weights
    assert base.fusion.adaptive is not None
    assert "not scored" in sig["shipped"]["setting"] and math.isnan(sig["shipped"]["tune"])
    shipped = _trial({}, [0.7] * 20)  # the base itself, scored by fusion_sweep
    sweep = research.FusionSweep(tuple(trials), shipped, research.fusion_label(base))
    sig = {r["against"]: r for r in research.fusion_significance_rows(sweep, base)}
    assert sig["shipped"]["setting"] == "wsum minmax bm25=0.4 + adaptive (bm25 share 0.1-0.7)"
    assert sig["shipped"]["tune"] == pytest.approx(0.7) and sig["shipped"]["Δ tune (winner - it)"] == pytest.approx(0.2)
    assert sig["shipped"]["p (tune half)"] < 0.05
    # a base with fixed weights is its grid point
    fixed = base.replace(**shipped_settings_fixed())
    sig = {r["against"]: r for r in research.fusion_significance_rows(trials, fixed)}
    assert sig["shipped"]["setting"] == "wsum minmax bm25=0.4" and sig["shipped"]["tune"] == pytest.approx(0.6)


def shipped_settings_fixed():
    return {"fusion.weights": {"bm25": 0.4, "dense": 0.6}}


def test_fusion_sweep_scores_the_shipped_config_with_its_adaptive_model(monkeypatch):
    """Notebook 02's "shipped" row: the base config as it is (adaptive model included) on the same
    indexes and queries as the grid, never a grid point and never the pick."""
    import searchkit.evaluate.fusion_tuning as tune  # where tune_fusion looks fusion_cell up
    from searchkit.evaluate.datasets import load_dataset

    base = SearchConfig().replace(**{"dense.embedder": "hashing"})
    assert base.fusion.adaptive is not None
    seen = []
    real = tune.fusion_cell

    def spy(ds, searcher, cfg, metric="nDCG@10"):
        seen.append("rrf (no weights)" if cfg.fusion.method == "rrf" else cfg.fusion.adaptive)
        return real(ds, searcher, cfg, metric)

    monkeypatch.setattr(tune, "fusion_cell", spy)
    ds = load_dataset(ROOT / "datasets" / "mini", split="dev")
    grid = [{"fusion.method": "wsum", "fusion.norm": "minmax", "fusion.weights": {"bm25": 0.4, "dense": 0.6}},
            {"fusion.method": "rrf", "fusion.rrf_k": 60}]
    sweep = research.fusion_sweep([ds], base, grid, show_progress=False)
    assert [dict(t.settings) for t in sweep.trials] == sorted(grid, key=lambda g: -next(
        t.tune_mean for t in sweep.trials if dict(t.settings) == g))
    assert dict(sweep.shipped.settings) == {} and sweep.shipped not in sweep.trials
    # the grid's fixed weights (RRF has none to adapt), then the shipped model
    assert seen == [None, "rrf (no weights)", base.fusion.adaptive]
    assert set(sweep.shipped.per_query) == set(sweep.trials[0].per_query)
    assert sweep.shipped_label.endswith("+ adaptive (bm25 share 0.1-0.7)")
    rows = research.fusion_significance_rows(sweep, base)
    assert next(r for r in rows if r["against"] == "shipped")["tune"] == pytest.approx(sweep.shipped.tune_mean)


def test_config_diff_lists_changed_keys():
    a = SearchConfig().replace(**{"fusion.adaptive": None})  # fixed weights: the grid's kind of config
    b = a.replace(**{"fusion.weights": {"bm25": 0.6, "dense": 0.4}, "weak_match.threshold": 0.3})
    diff = research.config_diff(a, b)
    assert list(diff.index) == ["fusion.weights.bm25", "fusion.weights.dense", "weak_match.threshold"]
    assert diff.loc["weak_match.threshold", "tuned"] == 0.3
    assert research.config_diff(a, a).empty


def test_cards_side_by_side(tiny_records, hashing_config):
    from searchkit.evaluate.datasets import Dataset, Query

    ds = Dataset("tiny", ROOT, "dev", tuple(tiny_records), (Query("q1", "скрипт выгрузки отчётов", "ru"),),
                 {"q1": {"r1": 2}})
    bm25 = hashing_config.replace(**{"dense.enabled": False})
    frame = research.cards_side_by_side(ds, "q1", {"hybrid": hashing_config, "bm25": bm25}, k=3)
    # one row a card (its best rank first), the configs' ranks side by side
    assert frame.index[0] == "r1" and frame[("card", "grade")].iloc[0] == 2
    assert frame[("hybrid", "rank")].tolist() == [1, 2, 3] and frame[("bm25", "rank")].iloc[0] == 1
    assert frame[("bm25", "rank")].isna()["r5"]  # not in the BM25-only config's top 3
    # a config labelled like a retriever keeps its own rank: the retriever's columns are apart
    assert ("bm25 retriever", "score") in frame.columns and ("dense retriever", "rank") in frame.columns
    assert frame[("bm25 retriever", "score")].iloc[0] == pytest.approx(frame[("bm25", "fused")].iloc[0])
    assert frame[("hybrid", "fused")].iloc[0] != frame[("bm25 retriever", "score")].iloc[0]
    assert len(frame.columns) == len(set(frame.columns))
    with pytest.raises(KeyError):
        research.cards_side_by_side(ds, "nope", {"a": bm25})


# --------------------------------------------------------------------------- issue 31 item 6


def test_reported_runs_finds_or_makes_the_runs_an_export_records(tmp_path, monkeypatch):
    """Notebook 05 exported a tuned config 'reported on 0 run folder(s)': no notebook had evaluated
    it. ``reported_runs`` evaluates it on the replay split (or reuses that run) and adds the other
    run folders of the same config, never one of another config or one being written."""
    import shutil

    calls = []
    monkeypatch.setattr(research.folders, "evaluate_dataset", _fake_eval(calls))
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    assert research.find_runs(tmp_path, cfg) == []  # what 05 used: nothing for a config no notebook ran
    made = research.reported_runs(cfg, ["mini"], "dev", tmp_path)
    assert [p.name for p in made] == [f"mini-dev-{cfg.fingerprint()[:10]}"] and len(calls) == 1
    assert research.reported_runs(cfg, ["mini"], "dev", tmp_path) == made and len(calls) == 1  # reused
    other = research.ensure_run("mini", "dev", cfg.replace(**{"fusion.method": "rrf"}), tmp_path).path
    copy = tmp_path / "mini-test-copy"
    shutil.copytree(made[0], copy)
    shutil.copytree(made[0], tmp_path / f".{made[0].name}.tmp-1")  # a folder being written
    found = research.reported_runs(cfg, ["mini"], "dev", tmp_path)
    assert found == [made[0], copy] and other not in found


def test_run_labels_name_the_columns(two_runs):
    from searchkit.evaluate.compare import compare_runs

    cmp = compare_runs(list(two_runs), n_resamples=200)
    frame = research.comparison_frame(cmp, labels=["shipped", "bm25_only"])
    assert {"shipped", "bm25_only", "Δ bm25_only", "p bm25_only", "sig bm25_only"} <= set(frame.columns)
    assert not {"a", "b", "Δ b"} & set(frame.columns)
    by_name = research.comparison_frame(cmp, labels={"b": "tuned"})
    assert {"a", "tuned", "Δ tuned"} <= set(by_name.columns)
    with pytest.raises(ValueError, match="one label"):
        research.comparison_frame(cmp, labels=["x", "x"])
    with pytest.raises(ValueError, match="1 labels for the 2 runs"):
        research.comparison_frame(cmp, labels=["x"])
    deltas = research.per_query_deltas(*two_runs, labels=("shipped", "bm25_only"))
    assert list(deltas.columns) == ["lang", "category", "shipped", "bm25_only", "delta"]
    assert (deltas["bm25_only"] - deltas["shipped"]).round(9).equals(deltas["delta"].round(9))
    with pytest.raises(ValueError):
        research.per_query_deltas(*two_runs, labels=("delta", "b"))


def test_worst_frame_is_narrow_and_sorted(two_runs):
    from searchkit.evaluate.datasets import load_dataset

    a, _ = two_runs
    ds = load_dataset(ROOT / "datasets" / "mini", split="dev")
    frame = research.worst_frame(a, ds, "RR@10", 5, text_chars=20)
    assert list(frame.columns) == ["lang", "category", "P(answer)", "RR@10", "nDCG@10", "R@10", "text"]
    assert len(frame) == 5 and frame["RR@10"].is_monotonic_increasing
    assert frame["RR@10"].tolist() == sorted(v["RR@10"] for v in a.per_query().values())[:5]
    assert frame["text"].str.len().max() <= 20
    research.notebook_display()
    width = max(len(line) for line in frame.to_string().splitlines())
    assert width <= 175  # ~1,400 pixels of a notebook's monospaced table text


def test_min_p_is_what_the_paired_test_gives_at_best():
    """Six queries all better by the same amount: the randomization test's p is 2 / 2^6, the
    floor ``min_p`` states, and no six-query group can go below it."""
    from searchkit.evaluate.compare import paired_test

    a = {f"q{i}": {"m": 0.2 + 0.1 * i} for i in range(6)}
    b = {q: {"m": v["m"] + 0.3} for q, v in a.items()}
    assert paired_test(a, b, "fisher")["m"] == pytest.approx(research.min_p(6)) == pytest.approx(2 / 64)
    assert research.min_p(20) == pytest.approx(2 / 10_001)  # sampled flips beyond 2^n > 10,000
    assert math.isnan(research.min_p(1)) and research.min_p(6, "student") == 0.0
    with pytest.raises(ValueError):
        research.min_p(6, "wilcoxon")


def test_star_reach_rules_out_only_groups_that_get_no_star(two_runs):
    """A group ``star_reach`` calls impossible has no significant row in the comparison (the
    claim could fail if the bound were wrong); the note names the groups and the pooled test."""
    from searchkit.evaluate.compare import compare_runs

    a, b = two_runs
    for correction in ("bh", "holm", "none"):
        cmp = compare_runs([a, b], n_resamples=200, correction=correction)
        reach = research.star_reach(cmp, "by_lang")
        assert set(reach.index) == set(a.metrics["by_lang"])
        for sec in cmp.sections:
            if sec["breakdown"] != "by_lang":
                continue
            assert reach.loc[sec["group"], "n"] == sec["n"]
            if not reach.loc[sec["group"], "star possible"]:
                assert not any(m["significant"][1] for m in sec["metrics"]), (correction, sec["group"])
    few = compare_runs([a, b], n_resamples=200, correction="bh")
    note = research.star_reach_note(few, "by_lang")
    assert ("No language group" in note and "pooled test over all" in note) or note.startswith("every language")


def test_config_changes_of_configs_and_config_files(tmp_path):
    """What the report's config-diff section lists: dotted keys old -> new; a section one side sets
    to null (the grid's fixed weights drop ``fusion.adaptive``) is one key with the whole model; a
    run folder's plain ``config.json`` compares as the config it loads to."""
    shipped = SearchConfig()
    fixed = shipped.replace(**{"fusion.weights": {"bm25": 0.6, "dense": 0.4}})
    changes = research.config_changes(shipped, fixed)
    keys = [k for k, _, _ in changes]
    assert "fusion.adaptive" in keys and not [k for k in keys if k.startswith("fusion.adaptive.")]
    old, new = dict((k, (o, n)) for k, o, n in changes)["fusion.adaptive"]
    assert new is None and old["retriever"] == "bm25"
    assert ("fusion.weights.bm25", shipped.fusion.weights["bm25"], 0.6) in changes
    assert research.config_changes(shipped.to_dict(), shipped) == []
    assert research.config_changes({}, shipped) == []  # every key left at its default
    assert research.config_changes({"fusion": {"method": "rrf"}}, shipped) == [("fusion.method", "rrf", shipped.fusion.method)]
