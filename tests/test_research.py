"""What the notebooks call (searchkit.evaluate.research): parameters, run-folder reuse, tables and
choices, with hand-computed values."""
import math
import os

import pytest
from report_runs import ROOT, make_run

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
    with pytest.raises(research.NotebookInputError) as err:
        research.notebook_config(tmp_path / "none.json")
    assert "CONFIG" in str(err.value) and "no such file" in str(err.value)
    assert err.value._render_traceback_() == [f"NotebookInputError: {err.value}"]  # what IPython shows: one line
    with pytest.raises(research.NotebookInputError, match="EMBEDDER 'word2vec'"):
        research.notebook_config(None, "word2vec")
    bad = tmp_path / "bad.json"
    bad.write_text('{"fusion": {"method": "nope"}}')
    with pytest.raises(research.NotebookInputError, match="fusion.method") as err:
        research.notebook_config(bad)
    assert "\n" not in str(err.value)


def test_check_datasets_names_the_missing_one():
    research.check_datasets(["mini"], "dev", task_sets=["tasks-eval"])
    with pytest.raises(research.NotebookInputError) as err:
        research.check_datasets(["mini", "no-such-set"], "dev")
    msg = str(err.value)
    assert msg.startswith("DATASET 'no-such-set': no dataset folder 'no-such-set'") and "\n" not in msg
    with pytest.raises(research.NotebookInputError, match="DATASET 'mini': no split 'train'"):
        research.check_datasets(["mini"], "train")
    with pytest.raises(research.NotebookInputError, match="not a labelled task-store set"):
        research.check_datasets([], "dev", task_sets=["mini"])
    with pytest.raises(research.NotebookInputError, match="has no corpus.jsonl"):
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
    import searchkit.evaluate.run as run_module

    calls = []
    monkeypatch.setattr(run_module, "evaluate_dataset", _fake_eval(calls))
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
    with pytest.raises(research.NotebookInputError, match="conversation model") as err:
        research.thresholds_by_model(rows, 0.10, ["conversation"])
    assert "\n" not in str(err.value)
    with pytest.raises(research.NotebookInputError, match="unknown weak-match model 'chat'"):
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
    sig = {r["against"]: r for r in research.fusion_significance_rows(trials, base)}
    assert sig["runner-up"]["setting"] == "wsum minmax bm25=0.4" and sig["runner-up"] is not sig["shipped"]
    assert sig["RRF k=60"]["Δ tune (winner - it)"] == pytest.approx(0.4)
    assert sig["shipped"]["p (tune half)"] < 0.05
    assert math.isnan(sig["winner"]["p (tune half)"])


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
    assert frame[("hybrid", "id")].iloc[0] == "r1" and frame[("hybrid", "grade")].iloc[0] == 2
    assert ("hybrid", "dense score") in frame.columns and ("bm25", "bm25 rank") in frame.columns
    assert ("bm25", "dense score") not in frame.columns
    with pytest.raises(KeyError):
        research.cards_side_by_side(ds, "nope", {"a": bm25})
