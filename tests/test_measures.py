"""The metric registry (issue 40 item 4; SPEC E4): any ir_measures measure beside the ragas scores and
the no-answer figures, checked by parsing it; the metrics reported before keep their values bit for bit."""
from __future__ import annotations

import hashlib
import math
import random

import pytest

from searchkit.errors import InputError
from searchkit.evaluate.measures import (
    DEFAULT_METRICS,
    MetricsChoice,
    metric,
    metrics_option,
    row_value,
    shared_names,
    split_names,
)
from searchkit.evaluate.metrics import per_query_metrics, ranking_metrics


def test_a_name_is_checked_by_parsing_it_with_ir_measures():
    assert metric("AP").name == "AP" and metric("AP").field == "metrics" and metric("AP").source == "ir_measures"
    assert metric("MAP").name == "AP" and metric("MRR@10").name == "RR@10"  # canonical forms
    assert metric("nDCG(dcg='exp-log2')@20").name == "nDCG(dcg='exp-log2')@20"
    for name in ("Judged@10", "nDCG@20", "R@7", "P@5", "Bpref", "RR(rel=2)@10", *DEFAULT_METRICS):
        assert metric(name).name == name
    fa = metric("ragas:faithfulness@5")
    assert (fa.source, fa.field, fa.k) == ("ragas-llm", "ragas_llm", 5)
    assert metric("ragas:id_context_recall@10").field == "ragas"
    assert metric("AUROC").field is None and metric("false-warn-rate").lower_is_better


@pytest.mark.parametrize("bad, hint", [
    ("ndcg@10", "did you mean nDCG@10?"),
    ("nDGC@10", "did you mean nDCG@10?"),
    ("P@x", "Measure(param=value)@cutoff"),
    ("nDCG(foo=1)@10", "unsupported params"),
    ("ragas:faithfulnes@5", "did you mean ragas:faithfulness@5?"),
    ("", "no metric named"),
])
def test_a_bad_name_is_one_line_naming_it_with_the_valid_forms(bad, hint):
    with pytest.raises(InputError) as exc:
        metric(bad)
    msg = str(exc.value)
    assert "\n" not in msg and hint in msg and (not bad or repr(bad) in msg)
    assert isinstance(exc.value, ValueError)
    if not bad.startswith("ragas"):
        assert "ir_measures" in msg and "ragas:faithfulness@K" in msg and "AUROC" in msg


def test_a_measure_no_installed_evaluator_computes_is_refused():
    from searchkit.evaluate.measures import provider_of
    import ir_measures

    if provider_of(ir_measures.parse_measure("alpha_nDCG@10")) is not None:
        pytest.skip("pyndeval is installed here")
    with pytest.raises(InputError, match=r"'alpha_nDCG@10': no installed evaluator computes it \(it needs pyndeval\)"):
        metric("alpha_nDCG@10")


def test_split_names_keeps_a_comma_inside_parentheses():
    assert split_names(["AP,P(rel=2,judged_only=True)@10", " nDCG@20 ,", "Judged@10"]) == [
        "AP", "P(rel=2,judged_only=True)@10", "nDCG@20", "Judged@10"]
    assert split_names(None) == [] and split_names("nDCG@10") == ["nDCG@10"]


def test_eval_metrics_option():
    assert metrics_option(None) == MetricsChoice() and metrics_option(None).ranking == DEFAULT_METRICS
    assert metrics_option("ragas") == MetricsChoice(DEFAULT_METRICS, 10, False, None)
    assert metrics_option("ragas-llm").ragas_llm and metrics_option("ragas-llm").llm_k is None
    c = metrics_option("AP,P@5,nDCG@20,Judged@10")
    assert c.ranking == ("AP", "P@5", "nDCG@20", "Judged@10") and not c.ragas and not c.ragas_llm
    c = metrics_option(["default,MAP", "ragas", "ragas:faithfulness@5"])
    assert c.ranking == (*DEFAULT_METRICS, "AP") and c.ragas_k == 10 and c.llm_k == 5
    assert c.names[-4:] == ("ragas:id_context_precision@10", "ragas:id_context_recall@10",
                            "ragas:faithfulness@5", "ragas:answer_relevancy@5")
    with pytest.raises(InputError, match="no-answer figures"):
        metrics_option("AUROC")
    with pytest.raises(InputError, match="LLM-judged ragas scores at 2 cutoffs"):
        metrics_option("ragas:faithfulness@5,ragas:answer_relevancy@3")
    with pytest.raises(InputError, match="ID-based ragas scores at 2 cutoffs"):
        metrics_option("ragas,ragas:id_context_recall@5")
    assert metrics_option("ragas:id_context_recall@5").ragas_k == 5
    with pytest.raises(InputError, match="'nDGC@10'"):
        metrics_option("AP,nDGC@10")


def test_shared_names_default_order_first():
    assert shared_names([{"AP": 1, "R@5": 1, "nDCG@10": 1}, {"nDCG@10": 0, "AP": 0, "R@5": 0, "P@5": 0}]) == [
        "nDCG@10", "R@5", "AP"]
    assert shared_names([]) == []


def test_row_value_reads_the_registry_field():
    row = {"metrics": {"AP": 0.5}, "ragas": None, "ragas_llm": {"ragas:faithfulness@5": None}}
    assert row_value(row, metric("AP")) == 0.5 and row_value(row, metric("nDCG@10")) is None
    assert row_value(row, metric("ragas:faithfulness@5")) is None
    assert row_value({"ragas": {"ragas:id_context_recall@10": 1}}, metric("ragas:id_context_recall@10")) == 1.0


# ------------------------------------------------------------------------- measures beyond the default


def _ranked(*ids):
    return {d: float(len(ids) - i) for i, d in enumerate(ids)}


def test_measures_outside_the_default_set_by_hand():
    # q1: relevant a (grade 2) at rank 1 and c (grade 1) at rank 4; b judged non-relevant (grade 0) at
    # rank 2; x, y unjudged. q2: relevant z at rank 2, nothing else judged. q3: judged only 0: not measured.
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"z": 1}, "q3": {"w": 0}}
    run = {"q1": _ranked("a", "b", "x", "c", "y"), "q2": _ranked("x", "z"), "q3": _ranked("w")}
    per = per_query_metrics(qrels, run, ["AP", "Judged@10", "nDCG@20", "P@5", "MAP"])
    assert set(per) == {"q1", "q2"}
    assert per["q1"]["AP"] == pytest.approx((1 / 1 + 2 / 4) / 2) and per["q2"]["AP"] == pytest.approx(1 / 2)
    assert per["q1"]["MAP"] == per["q1"]["AP"]  # one measure, asked under two names
    # Judged@10 reads the grade-0 judgement: a, b, c of the five are judged
    assert per["q1"]["Judged@10"] == pytest.approx(3 / 5) and per["q2"]["Judged@10"] == pytest.approx(1 / 2)
    assert per["q1"]["P@5"] == pytest.approx(2 / 5)

    dcg = 2 / math.log2(2) + 1 / math.log2(5)  # trec_eval's gain: the grade itself
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert per["q1"]["nDCG@20"] == pytest.approx(dcg / ideal)
    assert ranking_metrics(qrels, run, ["AP"])["AP"] == pytest.approx(((1 + 0.5) / 2 + 0.5) / 2)


def test_ties_keep_the_runs_order_for_any_measure():
    qrels = {"q": {"b": 1}}
    # trec_eval alone would rank the tie by document id (b before a): AP 1.0
    assert per_query_metrics(qrels, {"q": {"a": 1.0, "b": 1.0}}, ["AP"])["q"]["AP"] == 0.5
    assert per_query_metrics(qrels, {"q": {"b": 1.0, "a": 1.0}}, ["AP"])["q"]["AP"] == 1.0
    assert per_query_metrics({"q": {"b": 1, "a": 0}}, {"q": {"c": 2.0, "a": 1.0, "b": 1.0}}, ["Judged@2"])["q"][
        "Judged@2"] == 0.5


def test_a_ragas_or_no_answer_name_is_not_a_ranking_metric():
    with pytest.raises(InputError, match="not a ranking metric"):
        per_query_metrics({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["AUROC"])
    with pytest.raises(InputError, match="'nDGC@10'"):
        ranking_metrics({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["nDGC@10"])


# ---------------------------------------------------------------------- the old metrics, bit for bit


def _fixture():
    rng = random.Random(40)
    docs = [f"d{i}" for i in range(80)]
    qrels, run = {}, {}
    for qi in range(60):
        qid = f"q{qi}"
        rel = rng.sample(docs, rng.randint(1, 8))
        qrels[qid] = {d: rng.randint(0, 3) for d in rel}
        if qi % 11 == 0:
            continue
        ranked = rng.sample(docs, rng.randint(1, 70))
        run[qid] = {d: float(rng.randint(0, 25)) for d in ranked}  # ties: the run's order decides
    return qrels, run


OLD = ["nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100", "P@10"]


def test_the_old_metrics_keep_their_values_bit_for_bit():
    """The digest of every per-query value of the metrics reported before issue 40, computed on this
    fixture by the code before the registry (grade-0 judgements left out then, passed on now)."""
    qrels, run = _fixture()
    per = per_query_metrics(qrels, run, OLD)
    text = "".join(f"{q} {n} {per[q][n]!r}\n" for q in per for n in OLD)
    assert len(per) == 58
    assert hashlib.sha256(text.encode()).hexdigest() == "7b894f71f311e497fcd5a624fff7aa25616629b47a6cdd64aaac9d8197a785a2"
    positive_only = {q: {d: g for d, g in docs.items() if g > 0} for q, docs in qrels.items()}
    assert per_query_metrics(positive_only, run, OLD) == per
