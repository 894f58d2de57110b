"""Issue 40 item 3 (part): a run folder's run.trec holds the real final scores, never tied, so every
reader (ranx, ir_measures, trec_eval) ranks exactly as we did; a TREC run file read back with every bad
line named (file:line: why) and scored on a dataset split with the metrics `eval` reports."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from searchkit.errors import DataError
from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset
from searchkit.evaluate.run import evaluate_dataset
from searchkit.evaluate.runs import trec_text, write_run
from searchkit.evaluate.trec import (
    
    below,
    check_trec_run,
    read_trec_run,
    run_text,
    single,
    strictly_decreasing,
    trec_id,
    untrec_id,
)
from searchkit.evaluate.trec_runs import evaluate_trec_run
from test_metrics import HASHING

MINI = Path(__file__).resolve().parent.parent / "datasets" / "mini"


def test_strictly_decreasing_changes_only_what_ties():
    assert strictly_decreasing([3.0, 2.5, 0.1, -4.0]) == [3.0, 2.5, 0.1, -4.0]
    b1 = below(0.7)
    assert strictly_decreasing([0.7, 0.7, 0.7, 0.2]) == [0.7, b1, below(b1), 0.2]
    assert 0.7 - 1e-7 < b1 < 0.7 and single(b1) == b1 < single(0.7)  # one float32 step: ~6e-8 relative
    # a difference single precision cannot tell (trec_eval's scores are 32-bit floats) is a tie too
    assert single(0.5) == single(0.5 - 1e-9)
    assert strictly_decreasing([0.5, 0.5 - 1e-9]) == [0.5, below(0.5)]
    # a later stage that reordered: the lower-ranked higher score is written just below
    assert strictly_decreasing([0.5, 0.9, 0.1]) == [0.5, below(0.5), 0.1]
    assert strictly_decreasing([1e12, 1e12])[1] == below(1e12) < 1e12
    assert strictly_decreasing([math.nan, 1.0, math.inf]) == [0.0, below(0.0), below(below(0.0))]
    assert strictly_decreasing([]) == []
    for scores in ([0.3] * 50, [1.0, 1.0 - 1e-12, 1.0 - 2e-12], [0.016393442622950821, 0.016393442622950820]):
        out = strictly_decreasing(scores)
        assert all(a > b and single(a) > single(b) for a, b in zip(out, out[1:]))


def test_run_text_writes_exact_untied_scores():
    text = run_text({"q1": {"b": 1.0, "a": 2.0}, "q 2": {"d x": 5.0}, "q3": {}}, tag="run")
    assert text.splitlines() == [
        "q1 Q0 a 1 2.0 run",
        "q1 Q0 b 2 1.0 run",
        "q%202 Q0 d%20x 1 5.0 run",  # whitespace inside an id cannot be a TREC column
    ]
    tied = run_text({"q": {"z": 0.016393442622950821, "a": 0.016393442622950821, "m": 0.01}}, tag="t")
    scores = [float(line.split()[4]) for line in tied.splitlines()]
    assert [line.split()[2] for line in tied.splitlines()] == ["z", "a", "m"]
    assert scores == [0.016393442622950821, below(0.016393442622950821), 0.01]  # printed exactly
    assert trec_text({"q": {"a": 1.0}}, "t") == run_text({"q": {"a": 1.0}}, "t")


@pytest.mark.parametrize("value", ["plain", "with space", "tab\there", "50%", "全角\u3000空白", "%20"])
def test_trec_id_round_trips(value):
    encoded = trec_id(value)
    assert len(encoded.split()) == 1 and untrec_id(encoded) == value


def _ours_vs_readers(tmp_path, run):
    """Every reader's ranking of the file ``run_text`` writes for ``run``."""
    path = tmp_path / "run.trec"
    path.write_text(run_text(run, "ours"), encoding="utf-8")
    import ir_measures
    from ranx import Run

    ranx_run = Run.from_file(str(path), kind="trec").to_dict()
    irm: dict[str, dict[str, float]] = {}
    for row in ir_measures.read_trec_run(str(path)):
        irm.setdefault(row.query_id, {})[row.doc_id] = row.score
    return ranx_run, irm


def test_readers_rank_our_ties_in_our_order(tmp_path):
    """Our order for tied scores is a, b, c (as the Searcher ranked them); trec_eval would put c first
    on a tie (document id descending), ranx keeps the file's order: with untied scores all agree."""
    import ir_measures
    import pytrec_eval

    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.25}}
    ranx_run, irm = _ours_vs_readers(tmp_path, run)
    for got in (ranx_run["q"], irm["q"]):
        assert [d for d, _ in sorted(got.items(), key=lambda kv: -kv[1])] == ["a", "b", "c", "d"]
        assert len(set(got.values())) == 4
    qrels = {"q": {"a": 1}}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
    assert ev.evaluate(irm)["q"]["recip_rank"] == 1.0  # trec_eval's own tie rule would give 1/3
    assert ev.evaluate({"q": {"a": 0.5, "b": 0.5, "c": 0.5}})["q"]["recip_rank"] == pytest.approx(1 / 3)
    assert ir_measures.calc_aggregate([ir_measures.RR @ 10], qrels, irm)[ir_measures.RR @ 10] == 1.0


@pytest.fixture(scope="module")
def mini_report(tmp_path_factory):
    import os

    old = os.environ.get("SEARCHKIT_CACHE")
    os.environ["SEARCHKIT_CACHE"] = str(tmp_path_factory.mktemp("cache") / "cache.sqlite")
    try:
        ds = load_dataset(MINI, "dev")
        config = SearchConfig.from_dict(HASHING)
        from searchkit.searcher import Searcher

        searcher = Searcher.build(ds.records, config, show_progress=False)
        report = evaluate_dataset(ds, config, searcher=searcher, show_progress=False)
        yield ds, config, searcher, report
    finally:
        if old is None:
            os.environ.pop("SEARCHKIT_CACHE", None)
        else:
            os.environ["SEARCHKIT_CACHE"] = old


def test_run_folder_holds_the_real_scores_in_our_order(mini_report, tmp_path):
    ds, config, searcher, report = mini_report
    out = write_run(tmp_path / "runs" / "a", report, ds, config)
    lines = (out / "run.trec").read_text(encoding="utf-8").splitlines()
    written: dict[str, list[tuple[str, float]]] = {}
    for line in lines:
        qid, _q0, doc, _rank, score, _tag = line.split()
        written.setdefault(qid, []).append((doc, float(score)))
    tied = nudged = 0
    for o in report.outcomes:
        assert [d for d, _ in written[o.query_id]] == list(o.ranking)
        assert len(o.scores) == len(o.ranking)
        tied += any(a == b for a, b in zip(o.scores, o.scores[1:]))
        for (_doc, score), real in zip(written[o.query_id], o.scores):
            # the hit's own score, or (a tie) a few float32 steps below it
            assert score == real or real - 1e-6 < score < real
            nudged += score != real
        got = [s for _, s in written[o.query_id]]
        assert all(a > b and single(a) > single(b) for a, b in zip(got, got[1:]))
    assert tied > 0 and nudged > 0  # the mini set has tied fused scores: the nudge is exercised
    assert not all(float(s).is_integer() for s in (line.split()[4] for line in lines))  # no longer ranks
    # the outcome's scores are the Searcher's own hit scores (a query without filters, searched again)
    q = next(q for q in ds.queries if not (q.kinds or q.since or q.until or q.spaces or q.caller))
    o = next(o for o in report.outcomes if o.query_id == q.id)
    hits = searcher.search(q.text, k=100).hits
    assert o.ranking == tuple(h.record.id for h in hits) and o.scores == tuple(h.score for h in hits)
    # ranx, ir_measures and trec_eval (pytrec_eval) read our order back
    import ir_measures
    import pytrec_eval
    from ranx import Run

    ranx_run = Run.from_file(str(out / "run.trec"), kind="trec").to_dict()
    irm: dict[str, dict[str, float]] = {}
    for row in ir_measures.read_trec_run(str(out / "run.trec")):
        irm.setdefault(row.query_id, {})[row.doc_id] = row.score
    for qid, ranked in written.items():
        for got in (ranx_run[qid], irm[qid]):
            assert [d for d, _ in sorted(got.items(), key=lambda kv: -kv[1])] == [d for d, _ in ranked]
        # trec_eval: each document alone relevant, its reciprocal rank is 1 / (our rank)
        for rank, (doc, _s) in enumerate(ranked[:12], 1):
            ev = pytrec_eval.RelevanceEvaluator({qid: {doc: 1}}, {"recip_rank"})
            assert ev.evaluate({qid: irm[qid]})[qid]["recip_rank"] == pytest.approx(1 / rank)


def test_our_run_trec_scores_as_our_eval(mini_report, tmp_path):
    ds, config, _searcher, report = mini_report
    out = write_run(tmp_path / "runs" / "b", report, ds, config)
    trec = evaluate_trec_run(out / "run.trec", ds)
    assert trec.path == "trec" and trec.config_fingerprint.startswith("trec:")
    assert trec.metrics == report.metrics
    assert trec.per_query == report.per_query
    assert trec.breakdowns() == report.breakdowns()
    assert trec.no_answer == {}
    assert (trec.counts["unranked_queries"], trec.counts["run_queries_outside_split"],
            trec.counts["unknown_documents"]) == (0, 0, 0)
    assert json.loads(json.dumps(trec.to_dict(), default=str))["metrics"]["nDCG@10"] == report.metrics["nDCG@10"]


def _tiny(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "text": f"document {i}"} for i in range(1, 6)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    queries = [{"_id": "q1", "text": "one", "lang": "en"}, {"_id": "q2", "text": "two", "lang": "en"},
               {"_id": "q3", "text": "three", "lang": "en"}, {"_id": "q 4", "text": "four", "lang": "en"}]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    # BEIR without the header ("q 4" holds a space: TREC qrels could not name it)
    (root / "qrels" / "test.tsv").write_text("q1\td1\t1\nq2\td3\t2\nq2\td4\t1\nq3\td5\t1\nq 4\td2\t1\n",
                                             encoding="utf-8")
    return root


def test_a_foreign_run_is_scored_with_hand_computed_figures(tmp_path):
    ds = load_dataset(_tiny(tmp_path), "test")
    run = tmp_path / "other.run"
    run.write_text(
        "q1 Q0 d2 1 9.5 bm25\n"
        "q1 Q0 d1 2 9.0 bm25\n"        # relevant at rank 2: RR 1/2
        "q2 Q0 d4 1 3 bm25\n"
        "q2 Q0 d3 2 3 bm25\n"          # tied with d4: trec_eval's rule (id descending) puts d4 first
        "q%204 Q0 d2 1 1.0 bm25\n"     # our writer's encoding of "q 4": matched
        "q9 Q0 d1 1 1.0 bm25\n"        # not in the split
        "q1 Q0 gone 3 1.0 bm25\n",     # not in the corpus
        encoding="utf-8")
    rep = evaluate_trec_run(run, ds)
    assert rep.per_query["q1"]["RR@10"] == 0.5
    assert rep.per_query["q2"]["RR@10"] == 1.0
    # q2: gains 1 (d4) then 2 (d3) against the ideal 2, 1
    dcg, idcg = 1 + 2 / math.log2(3), 2 + 1 / math.log2(3)
    assert rep.per_query["q2"]["nDCG@10"] == pytest.approx(dcg / idcg)
    assert rep.per_query["q3"]["RR@10"] == 0.0 and rep.per_query["q3"]["R@100"] == 0.0  # unranked: 0
    assert rep.per_query["q 4"]["RR@10"] == 1.0
    assert rep.metrics["RR@10"] == pytest.approx((0.5 + 1 + 0 + 1) / 4)
    assert (rep.counts["unranked_queries"], rep.counts["run_queries_outside_split"],
            rep.counts["unknown_documents"]) == (1, 1, 1)
    # the same figure trec_eval gives on the file as written (q3 counted, as with trec_eval -c)
    import pytrec_eval

    runs = {"q1": {"d2": 9.5, "d1": 9.0, "gone": 1.0}, "q2": {"d4": 3.0, "d3": 3.0}, "q 4": {"d2": 1.0}}
    ev = pytrec_eval.RelevanceEvaluator({q: dict(d) for q, d in ds.qrels.items()}, {"ndcg_cut.10"})
    got = ev.evaluate(runs)
    assert rep.per_query["q2"]["nDCG@10"] == pytest.approx(got["q2"]["ndcg_cut_10"])
    assert rep.per_query["q1"]["nDCG@10"] == pytest.approx(got["q1"]["ndcg_cut_10"])


def test_run_file_errors_name_every_line(tmp_path):
    path = tmp_path / "bad.trec"
    path.write_text("q1 Q0 d1 1 2.5 t\n"
                    "q1 Q0 d2 2 t\n"
                    "q1 Q0 d3 zero 1.0 t\n"
                    "q1 Q0 d4 3 nan t\n"
                    "q1 Q0 d1 4 1.0 t\n"
                    "\n"
                    "q1 Q0 d5 0 1.0 t\n", encoding="utf-8")
    run, problems = check_trec_run(path)
    assert [str(p) for p in problems] == [
        f"{path}:2: expected 6 whitespace-separated columns (qid Q0 docid rank score tag), got 5",
        f"{path}:3: the rank (column 4) is not a positive integer",
        f"{path}:4: the score (column 5) is not a finite number",
        f"{path}:5: the document is listed twice for this query (first on line 1)",
        f"{path}:7: the rank (column 4) is not a positive integer",
    ]
    assert dict(run.scores["q1"]) == {"d1": 2.5}
    with pytest.raises(DataError) as exc:
        read_trec_run(path)
    assert str(exc.value) == f"{path}:2: expected 6 whitespace-separated columns (qid Q0 docid rank score tag), " \
                             "got 5 (and 4 more problems)"
    assert exc.value.path == str(path) and len(problems) == 5  # every problem: check_trec_run
    empty = tmp_path / "empty.trec"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="empty run"):
        read_trec_run(empty)
    with pytest.raises(DataError, match="no such run file"):
        read_trec_run(tmp_path / "missing.trec")


def test_run_file_errors_never_quote_the_file(tmp_path):
    secret = "S3CRET-hunter2"
    path = tmp_path / "bad.trec"
    path.write_text(f"q1 Q0 d1 1 {secret} t\n{secret}\n", encoding="utf-8")
    _run, problems = check_trec_run(path)
    assert len(problems) == 2 and not any(secret in str(p) for p in problems)
