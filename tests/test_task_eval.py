"""The labelled task-store set (datasets/tasks-eval) and measuring task search on it (SPEC T, E4)."""
import shutil
from collections import Counter

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.evaluate.task_eval import evaluate_task_search, is_task_set, load_task_set
from report_runs import ROOT

SET = ROOT / "datasets" / "tasks-eval"


def test_the_set_loads_in_both_splits():
    for split in ("dev", "test"):
        ts = load_task_set(SET, split)
        assert len(ts.queries) == 24
        assert Counter(q.lang for q in ts.queries) == {"ja": 8, "en": 8, "ru": 8}
        assert sum(not q.answerable for q in ts.queries) == 6
        ids = {r.id for r in ts.records}
        assert all(d in ids for qrels in ts.qrels.values() for d in qrels)
        assert all(q.space == "acme" and q.current_task == 213 for q in ts.queries)
    assert is_task_set(SET) and not is_task_set(ROOT / "datasets" / "mini")


def test_records_are_the_indexed_comments_redacted():
    ts = load_task_set(SET, "dev")
    kinds = {r.fields["comment_kind"] for r in ts.records}
    assert "comment" not in kinds and "interjection_ack" not in kinds  # T2: not indexed, not judged
    tool = next(r for r in ts.records if r.id == "comment:2016")
    assert tool.text == "tool: Bash"


@pytest.fixture(scope="module")
def fts_report():
    return evaluate_task_search(load_task_set(SET, "test"), SearchConfig())


def test_fts5_answers_follow_the_tool(fts_report):
    ts = load_task_set(SET, "test")
    space = {r.id: r.space for r in ts.records}
    task = {r.id: r.fields["task"] for r in ts.records}
    by_id = {o.query_id: o for o in fts_report.outcomes}
    for o in fts_report.outcomes:  # T1: never another space, never the current task
        assert all(space[d] == "acme" and task[d] != 213 for d in o.ranking)
    assert by_id["tq-en-08"].ranking == ("comment:2072",)  # "certbot": one comment holds it
    assert by_id["tq-en-16"].ranking == () and by_id["tq-en-16"].weak_match  # only the current task says it
    assert fts_report.path == "tasks" and fts_report.depth == 30
    assert set(fts_report.by_lang) == {"en", "ja", "ru"}
    assert fts_report.per_query["tq-en-08"]["RR@10"] == 1.0


def test_a_task_run_folder_compares(fts_report, tmp_path):
    from searchkit.evaluate.compare import compare_runs
    from searchkit.evaluate.runs import load_run, write_run

    ts = load_task_set(SET, "test")
    a = load_run(write_run(tmp_path / "a", fts_report, ts, SearchConfig()))
    b = load_run(write_run(tmp_path / "b", fts_report, ts, SearchConfig()))
    assert a.provenance["path"] == "tasks" and a.provenance["dataset"] == "tasks-eval"
    cmp = compare_runs([a, b], n_resamples=200)
    assert cmp.sections[0]["metrics"][0]["p"][1] == 1.0


def _copy(tmp_path):
    dst = tmp_path / "set"
    shutil.copytree(SET, dst)
    return dst


def test_bad_sets_name_the_file_and_line(tmp_path):
    d = _copy(tmp_path)
    (d / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\ntq-ja-01\tcomment:9999\t2\n")
    with pytest.raises(DataError, match=r"dev\.tsv, line 2: the corpus id is not an indexed comment"):
        load_task_set(d, "dev")
    (d / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\n")
    with pytest.raises(DataError, match=r"queries\.jsonl, line \d+: the answerable query has no relevant comment"):
        load_task_set(d, "dev")
    with pytest.raises(DataError, match="split 'train' is not in this set; available splits: dev, test"):
        load_task_set(d, "train")
    (d / "queries.jsonl").unlink()
    with pytest.raises(DataError, match="not a labelled task-store set: no queries.jsonl"):
        load_task_set(d, "dev")
    with pytest.raises(DataError, match="no dataset folder 'no-such-set'"):
        load_task_set("no-such-set")


def test_a_bad_set_file_is_named_never_quoted_and_a_fifo_is_refused(tmp_path):
    """Issue 27 items 8 and 12: the content of a bad file never reaches the message; a FIFO is
    refused at once."""
    import os

    d = _copy(tmp_path)
    (d / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nS3CRET-q\tS3CRET-doc\t2\n")
    with pytest.raises(DataError) as info:
        load_task_set(d, "dev")
    assert "dev.tsv, line 2" in str(info.value) and "S3CRET" not in str(info.value)
    (d / "qrels" / "dev.tsv").unlink()
    os.mkfifo(d / "qrels" / "dev.tsv")
    with pytest.raises(DataError):
        load_task_set(d, "dev")
    d2 = _copy(tmp_path / "b")
    (d2 / "comments.jsonl").write_text('{"id": 1, "task": ' + "9" * 5000 + "}\n")
    with pytest.raises(DataError, match=r"comments\.jsonl, line 1: a number too long to read"):
        load_task_set(d2, "dev")
