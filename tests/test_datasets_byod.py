"""Issue 40 item 2: bring your own data. A plain BEIR folder (qrels with or without the header), TREC
qrels, any split name; `searchkit datasets validate` naming every problem as file:line: why; a missing
`lang` detected, a missing `answerable` inferred from the judgements and said so; today's datasets
load exactly as before."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from searchkit.errors import DataError
from searchkit.cli import main
from searchkit.evaluate.datasets import (
    QUERY_KINDS,
    
    available_splits,
    check_dataset,
    load_dataset,
    shared_data_dir,
)

MINI = Path(__file__).resolve().parent.parent / "datasets" / "mini"
HEADER = "query-id\tcorpus-id\tscore\n"

CORPUS = [
    {"_id": "d1", "title": "Скрипт", "text": "Скрипт выгрузки отчёта лежит в scripts/export_report.py"},
    {"_id": "d2", "title": "Migration", "text": "We decided to migrate to Postgres in November"},
    {"_id": "d3", "title": "会議", "text": "決済タイムアウトは三十秒に変更した"},
]


def jsonl(rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)


def folder(root: Path, queries, qrels: dict[str, str], corpus=CORPUS) -> Path:
    """A dataset folder: ``qrels`` maps a file name under qrels/ (``train.tsv``, ``test.qrels``) to its text."""
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(jsonl(corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text(jsonl(queries), encoding="utf-8")
    for name, text in qrels.items():
        (root / "qrels" / name).write_text(text, encoding="utf-8")
    return root


# A plain BEIR folder as BEIR ships it: queries with no lang, no answerable, no split; the queries file
# lists every split's queries; qrels/<split>.tsv with the header.
BEIR_QUERIES = [
    {"_id": "1", "text": "где скрипт выгрузки?"},
    {"_id": "2", "text": "what did we decide about the database?"},
    {"_id": "3", "text": "決済のタイムアウトは？"},
    {"_id": "4", "text": "who owns the billing service?"},
]


@pytest.mark.parametrize("header", [True, False], ids=["header", "no-header"])
def test_plain_beir_folder_any_split_name(tmp_path, header):
    head = HEADER if header else ""
    root = folder(tmp_path / "beir", BEIR_QUERIES, {
        "train.tsv": head + "1\td1\t1\n2\td2\t2\n",
        "validation.tsv": head + "3\td3\t1\n3\td1\t0\n",
    })
    assert available_splits(root) == ("train", "validation")
    train = load_dataset(root, "train")
    assert [q.id for q in train.queries] == ["1", "2"]
    assert {q: dict(d) for q, d in train.qrels.items()} == {"1": {"d1": 1}, "2": {"d2": 2}}
    assert all(q.answerable for q in train.queries)
    val = load_dataset(root, "validation")
    assert [q.id for q in val.queries] == ["3"] and dict(val.qrels["3"]) == {"d3": 1, "d1": 0}
    # query 4 is judged nowhere: in no split (BEIR's queries file lists every split)
    assert "4" not in {q.id for q in train.queries + val.queries}
    check = check_dataset(root)
    assert check.ok, [str(p) for p in check.problems]
    assert check.splits["train"]["format"] == ("beir+header" if header else "beir")


@pytest.mark.parametrize("name, sep", [("test.txt", " "), ("test.qrels", "\t"), ("test.tsv", " ")])
def test_trec_qrels_any_non_negative_grade(tmp_path, name, sep):
    """``qid iteration docid grade``; the content decides the format, whatever the file's suffix."""
    rows = [("1", "0", "d1", "4"), ("1", "0", "d2", "0"), ("2", "0", "d2", "7"), ("3", "Q0", "d3", "1")]
    root = folder(tmp_path / "trec", BEIR_QUERIES[:3], {name: "".join(sep.join(r) + "\n" for r in rows)})
    ds = load_dataset(root, "test")
    assert [q.id for q in ds.queries] == ["1", "2", "3"]
    assert {q: dict(d) for q, d in ds.qrels.items()} == {"1": {"d1": 4, "d2": 0}, "2": {"d2": 7}, "3": {"d3": 1}}
    assert ds.to_ranx_qrels() == {"1": {"d1": 4, "d2": 0}, "2": {"d2": 7}, "3": {"d3": 1}}
    assert check_dataset(root).splits["test"]["format"] == "trec"


def test_two_judgement_files_for_one_split_is_a_problem(tmp_path):
    root = folder(tmp_path / "two", BEIR_QUERIES[:1], {"dev.tsv": "1\td1\t1\n", "dev.txt": "1 0 d1 1\n"})
    with pytest.raises(DataError, match=r"dev\.txt: a second judgements file for split 'dev' beside dev\.tsv"):
        load_dataset(root, "dev")


def test_trec_qrels_lines_are_checked(tmp_path):
    root = folder(tmp_path / "bad", BEIR_QUERIES[:2], {
        "test.qrels": "1 0 d1 1\n1 0 d2\n2 0 d2 -1\n2 0 d2 x\n9 0 d1 1\n2 0 d9 1\n1 0 d1 2\n2 0 d2 1\n"})
    check = check_dataset(root)
    q = root / "qrels" / "test.qrels"
    assert [str(p) for p in check.problems] == [
        f"{q}:2: expected 4 whitespace-separated columns (qid, iteration, docid, grade; TREC qrels), got 3",
        f"{q}:3: score -1 is negative; a grade is a non-negative integer (0: judged not relevant)",
        f"{q}:4: the score is not an integer (a non-negative integer grade)",
        f"{q}:5: unknown query id (not in queries.jsonl)",
        f"{q}:6: unknown corpus id (not in corpus.jsonl)",
        f"{q}:7: duplicate row for one query and document (first on line 1)",
    ]


# ------------------------------------------------------------------------------ validate


def test_validate_names_every_problem_not_just_the_first(tmp_path):
    corpus = [CORPUS[0], "{not json", {"_id": "d2", "text": 5}, {"_id": "d1", "text": "again"}, CORPUS[2]]
    queries = [
        {"_id": "1", "text": "a", "answerable": "yes"},
        {"_id": "2", "text": "b", "kinds": ["email"], "since": "yesterday"},
        {"_id": "3", "text": "c", "answerable": False},
        {"_id": "4", "text": "d", "answerable": True, "split": "dev"},
    ]
    root = folder(tmp_path / "bad", queries, {"dev.tsv": HEADER + "3\td3\t2\n3\td9\t1\n3\td3\tx\n"}, corpus=corpus)
    check = check_dataset(root)
    c, q, d = root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / "dev.tsv"
    assert [str(p) for p in check.problems] == [
        f"{c}:2: malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{c}:3: 'text' must be a string, got a number",
        f"{c}:4: duplicate document id (first on line 1)",
        f"{q}:1: 'answerable' must be true or false (JSON boolean), got a string of 3 characters",
        f"{q}:2: 'kinds' must be a non-empty list of {', '.join(QUERY_KINDS)}",
        f"{q}:2: 'since' must be an ISO date (YYYY-MM-DD[THH:MM:SS]), got another string",
        f"{d}:3: unknown corpus id (not in corpus.jsonl)",
        f"{d}:4: the score is not an integer (a non-negative integer grade)",
        f"{d}:2: the query is 'answerable: false' (queries.jsonl line 3) but has a positive relevance score",
        f"{q}:4: the query is 'answerable: true' but has no relevant document (score > 0) in qrels/dev.tsv; "
        "add one, mark it 'answerable: false', or leave 'answerable' out (then it is inferred)",
    ]
    assert check.summary() == f"{root}: 10 problems"
    # load_dataset raises the first, in the words it always used, and says how many more there are
    with pytest.raises(DataError) as exc:
        load_dataset(root, "dev")
    assert str(exc.value).startswith(f"{c}, line 2: malformed JSON")
    assert "and 9 more problems: `searchkit datasets validate" in str(exc.value)


def test_validate_names_missing_files_and_odd_qrels_entries(tmp_path):
    import os

    root = tmp_path / "empty"
    (root / "qrels").mkdir(parents=True)
    check = check_dataset(root)
    assert [(p.path.name, p.line) for p in check.problems] == [("corpus.jsonl", None), ("queries.jsonl", None),
                                                               ("qrels", None)]
    assert all("expected layout" in p.why for p in check.problems)
    root2 = folder(tmp_path / "fifo", BEIR_QUERIES[:1], {"dev.tsv": "1\td1\t1\n"})
    os.mkfifo(root2 / "qrels" / "test.tsv")
    assert [str(p) for p in check_dataset(root2).problems] == [
        f"{root2 / 'qrels' / 'test.tsv'}: not a regular file (a FIFO); only regular files are read"]
    with pytest.raises(DataError, match="does not exist"):
        check_dataset(tmp_path / "nowhere")


def test_one_mistake_is_one_problem(tmp_path):
    """No cascade: a missing corpus is one problem (not one per judgement); a query whose only positive
    row names an unknown document is that row's problem, not also 'no relevant document'."""
    queries = [{"_id": "1", "text": "a", "answerable": True}, {"_id": "2", "text": "b", "answerable": True}]
    root = folder(tmp_path / "c", queries, {"dev.tsv": "1\td1\t1\n2\td7\t2\n2\td1\t0\n"})
    assert [str(p) for p in check_dataset(root).problems] == [
        f"{root / 'qrels' / 'dev.tsv'}:2: unknown corpus id (not in corpus.jsonl)"]
    (root / "corpus.jsonl").unlink()
    assert [(p.path.name, p.line) for p in check_dataset(root).problems] == [("corpus.jsonl", None)]


def test_validate_header_mistakes(tmp_path):
    root = folder(tmp_path / "h", BEIR_QUERIES[:1], {"dev.tsv": "query-id corpus-id score\n1\td1\t1\n",
                                                      "test.tsv": "query_id\tcorpus_id\tscore\n"})
    got = [str(p) for p in check_dataset(root).problems]
    assert got[0].endswith("dev.tsv:1: neither the BEIR header 'query-id<TAB>corpus-id<TAB>score' nor a judgement "
                           "of 3 tab-separated columns (query-id, corpus-id, score; BEIR) or 4 whitespace-separated "
                           "columns (qid, iteration, docid, grade; TREC qrels)")
    assert got[1].endswith("test.tsv:1: the score is not an integer (a non-negative integer grade); a header must be "
                           "exactly 'query-id<TAB>corpus-id<TAB>score'")
    assert len(got) == 2


def test_cli_validate_exit_status_and_output(tmp_path, capsys):
    good = folder(tmp_path / "good", BEIR_QUERIES, {"test.tsv": "1\td1\t1\n2\td2\t0\n"})
    assert main(["datasets", "validate", str(good)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"{good}: ok: 3 documents, 4 queries; test 2 queries (1 answerable, 1 unanswerable), "
                                "2 judgements (beir)"]
    assert "note: test: 2 queries have no 'lang': detected from the text (en 1, ru 1)" in err
    assert "note: test: 1 query has no 'answerable' and no positive judgement in qrels/test.tsv: counted as unanswerable" in err

    bad = folder(tmp_path / "bad", BEIR_QUERIES, {"test.tsv": "1\td1\t1\n1\td9\t1\nx\td1\t1\n"})
    assert main(["datasets", "validate", str(bad)]) == 1
    out, _ = capsys.readouterr()
    t = bad / "qrels" / "test.tsv"
    assert out.splitlines() == [f"{t}:2: unknown corpus id (not in corpus.jsonl)",
                                f"{t}:3: unknown query id (not in queries.jsonl)", f"{bad}: 2 problems"]
    assert main(["datasets", "validate", str(bad), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["problems"][0] == {"file": str(t), "line": 2,
                                                         "why": "unknown corpus id (not in corpus.jsonl)"}

    assert main(["datasets", "validate", str(tmp_path / "missing" / "dir")]) == 2
    assert "no dataset folder" in capsys.readouterr().err
    assert main(["datasets", "validate", str(MINI)]) == 0
    assert capsys.readouterr().out.startswith(f"{MINI}: ok: 63 documents, 68 queries; dev 37 queries (26 answerable")


# ------------------------------------------------------------------------- inference, notes


def test_missing_lang_is_detected_and_said(tmp_path, caplog):
    root = folder(tmp_path / "l", BEIR_QUERIES[:3] + [{"_id": "5", "text": "x", "lang": "de"}],
                  {"dev.tsv": "1\td1\t1\n2\td2\t1\n3\td3\t1\n5\td2\t1\n"})
    with caplog.at_level("INFO", logger="searchkit.evaluate.datasets"):
        ds = load_dataset(root, "dev")
    assert {q.id: q.lang for q in ds.queries} == {"1": "ru", "2": "en", "3": "ja", "5": "de"}  # a given lang is kept
    assert ds.notes == ("3 queries have no 'lang': detected from the text (en 1, ja 1, ru 1)",)
    assert "detected from the text" in caplog.text


def test_missing_answerable_is_inferred_from_the_judgements(tmp_path):
    queries = [
        {"_id": "pos", "text": "где скрипт выгрузки?"},                        # a positive row: answerable
        {"_id": "zero", "text": "who owns billing?"},                          # only a 0 row: unanswerable
        {"_id": "named", "text": "what is ATL-9?", "split": "dev"},            # no row, its split named
        {"_id": "labelled", "text": "x", "answerable": False, "split": "dev"},  # said: kept as said
        {"_id": "cat", "text": "y", "category": "near-miss"},                  # its own category is kept
        {"_id": "nowhere", "text": "z"},                                       # judged nowhere: no split
    ]
    root = folder(tmp_path / "a", queries, {"dev.tsv": "pos\td1\t2\nzero\td2\t0\ncat\td3\t0\n"})
    ds = load_dataset(root, "dev")
    got = {q.id: (q.answerable, q.category) for q in ds.queries}
    assert got == {"pos": (True, "answerable"), "zero": (False, "unanswerable"), "named": (False, "unanswerable"),
                   "labelled": (False, "unanswerable"), "cat": (False, "near-miss")}
    assert "3 queries have no 'answerable' and no positive judgement in qrels/dev.tsv: counted as unanswerable" \
        in ds.notes
    assert ds.to_ranx_qrels() == {"pos": {"d1": 2}}
    # a query that says answerable: true and has no positive judgement is still a contradiction
    (root / "queries.jsonl").write_text(jsonl([{"_id": "zero", "text": "x", "answerable": True}]), encoding="utf-8")
    (root / "qrels" / "dev.tsv").write_text("zero\td2\t0\n", encoding="utf-8")
    with pytest.raises(DataError, match="queries.jsonl, line 1: the query is 'answerable: true'"):
        load_dataset(root, "dev")


# ---------------------------------------------------------- today's datasets load as before


def fingerprint(root: Path) -> dict[str, str]:
    """{split: sha256 prefix of the loaded content}: every query (all fields, in order), the qrels, every record."""
    out = {}
    for split in available_splits(root):
        ds = load_dataset(root, split)
        body = {
            "queries": [dataclasses.asdict(q) for q in ds.queries],
            "qrels": sorted((qid, sorted(d.items())) for qid, d in ds.qrels.items()),
            "records": [[r.id, r.kind, r.space, r.date, r.title, r.ref, r.text, r.owner, r.visibility,
                         sorted(r.fields.items())] for r in ds.records],
        }
        text = json.dumps(body, ensure_ascii=False, sort_keys=True, default=list)
        out[split] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return out


# Computed with the loader of commit aa8d671 (before issue 40), by this very function.
BEFORE = {
    "mini": {"dev": "3bec968631bb9432", "test": "8787999d0a1aa346"},
    "jsquad-ja": {"dev": "eaa651d2e49bb9de"},
    "locomo-sessions": {"dev": "9dde4eb89f6e323d"},
    "locomo-turns": {"dev": "4b051b1c74ff875b"},
    "nomiracl-en": {"dev": "0fd6f76c78c12aaf"},
    "nomiracl-ja": {"dev": "cbb5b596d59c2983"},
    "nomiracl-ru": {"dev": "0045f24c1a20ff8d"},
    "squad2-en": {"dev": "1d11b1a466e2e43f"},
    "xquad-ru": {"dev": "a9d9b0f93435e271"},
}


def test_mini_loads_exactly_as_before():
    assert fingerprint(MINI) == BEFORE["mini"]
    assert all(not load_dataset(MINI, s).notes for s in ("dev", "test"))
    assert check_dataset(MINI).ok


def _shared() -> list[str]:
    root = shared_data_dir()
    return [] if root is None else sorted(n for n in BEFORE if n != "mini" and (root / n / "queries.jsonl").is_file())


@pytest.mark.skipif(shared_data_dir() is None, reason="../shared/data (the public dev sets) is absent")
@pytest.mark.parametrize("name", _shared())
def test_shared_sets_load_exactly_as_before(name):
    root = shared_data_dir() / name
    assert fingerprint(root) == BEFORE[name]
    assert not load_dataset(root, "dev").notes
