"""Dataset layer (SPEC E3): loading, validation errors naming file and line, split rules."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from searchkit.errors import DataError
from searchkit.evaluate import datasets as dsmod
from searchkit.evaluate.datasets import (
    Dataset,
    
    Query,
    available_splits,
    hash_split,
    load_dataset,
    resolve_dataset,
    shared_data_dir,
)
from searchkit.records import KINDS

MINI = Path(__file__).resolve().parent.parent / "datasets" / "mini"
HEADER = "query-id\tcorpus-id\tscore\n"


def write_dataset(root: Path, corpus=None, queries=None, qrels=None) -> Path:
    """A tiny valid dataset, with any part replaced: lists of dicts/str lines, qrels {split: text}."""
    corpus = corpus if corpus is not None else [
        {"_id": "d1", "title": "Скрипт", "text": "Скрипт выгрузки отчёта"},
        {"_id": "d2", "title": "Log", "text": "Postgres migration decided", "kind": "log",
         "space": "acme", "date": "2026-11-03", "ref": "log.md#2026-11-03", "lang": "en"},
    ]
    queries = queries if queries is not None else [
        {"_id": "q1", "text": "где скрипт выгрузки?", "lang": "ru"},
        {"_id": "q2", "text": "what did we decide?", "lang": "en", "split": "test"},
        {"_id": "q3", "text": "ATL-9999?", "answerable": False, "split": "dev"},
    ]
    qrels = qrels if qrels is not None else {
        "dev": HEADER + "q1\td1\t3\n",
        "test": HEADER + "q2\td2\t2\n",
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)

    def lines(rows):
        return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)

    (root / "corpus.jsonl").write_text(lines(corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text(lines(queries), encoding="utf-8")
    for split, text in qrels.items():
        (root / "qrels" / f"{split}.tsv").write_text(text, encoding="utf-8")
    return root


def error_of(path: Path, split: str = "dev") -> str:
    with pytest.raises(DataError) as exc:
        load_dataset(path, split)
    return str(exc.value)


# ------------------------------------------------------------------------------------ loading


def test_tiny_dataset_loads_with_fields_and_defaults(tmp_path):
    ds = load_dataset(write_dataset(tmp_path / "tiny"), "dev")
    assert isinstance(ds, Dataset) and ds.name == "tiny" and ds.split == "dev"
    d1, d2 = ds.records
    assert (d1.id, d1.kind, d1.ref, d1.visibility, d1.owner, d1.date, d1.space) == (
        "d1", "doc", "d1", "shared", None, None, "")
    assert (d2.kind, d2.space, d2.date, d2.ref) == ("log", "acme", "2026-11-03", "log.md#2026-11-03")
    assert dict(d2.fields) == {"lang": "en"}
    assert [q.id for q in ds.queries] == ["q1", "q3"]
    assert ds.queries[0] == Query(id="q1", text="где скрипт выгрузки?", lang="ru")
    assert ds.queries[1].answerable is False and ds.queries[1].category == "unanswerable"
    assert dict(ds.qrels["q1"]) == {"d1": 3}
    assert ds.to_ranx_qrels() == {"q1": {"d1": 3}}
    assert [q.id for q in ds.answerable_queries()] == ["q1"]
    assert [q.id for q in ds.unanswerable_queries()] == ["q3"]
    test = load_dataset(tmp_path / "tiny", "test")
    assert [q.id for q in test.queries] == ["q2"] and test.to_ranx_qrels() == {"q2": {"d2": 2}}


def test_query_filters_are_parsed(tmp_path):
    root = write_dataset(tmp_path / "f", queries=[
        {"_id": "q1", "text": "x", "kinds": ["app", "log"], "since": "2026-11-01", "until": "2026-11-08",
         "spaces": ["acme"], "caller": "u-anna", "category": "date"},
        {"_id": "q2", "text": "y", "spaces": "all", "kinds": "digest", "split": "test"},
        {"_id": "q3", "text": "z", "answerable": False, "split": "dev"},
    ])
    q1 = load_dataset(root).queries[0]
    assert (q1.kinds, q1.since, q1.until, q1.spaces, q1.caller, q1.category) == (
        ("app", "log"), "2026-11-01", "2026-11-08", ("acme",), "u-anna", "date")
    q2 = load_dataset(root, "test").queries[0]
    assert q2.spaces == "all" and q2.kinds == ("digest",)


def test_dataset_is_frozen(tmp_path):
    ds = load_dataset(write_dataset(tmp_path / "t"))
    with pytest.raises(AttributeError):
        ds.split = "test"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ds.qrels["q1"]["d1"] = 0  # type: ignore[index]


def test_stats_counts(tmp_path):
    st = load_dataset(write_dataset(tmp_path / "t")).stats()
    assert st["records"] == 2 and st["queries"] == 2
    assert st["answerable"] == 1 and st["unanswerable"] == 1 and st["qrels_rows"] == 1
    assert st["records_by_kind"] == {"doc": 1, "log": 1}
    assert st["records_by_lang"] == {"en": 1, "und": 1}
    # q3 ("ATL-9999?") has no 'lang': detected (issue 40 item 2); only a Query built by hand is "und"
    assert st["by_lang"] == {"ru": {"queries": 1, "answerable": 1, "unanswerable": 0},
                             "en": {"queries": 1, "answerable": 0, "unanswerable": 1}}
    assert set(st["by_category"]) == {"answerable", "unanswerable"}
    json.dumps(st)  # plain JSON-able


def test_available_splits(tmp_path):
    root = write_dataset(tmp_path / "t", qrels={"test": HEADER + "q2\td2\t1\n", "dev": HEADER + "q1\td1\t1\n"})
    assert available_splits(root) == ("dev", "test")
    assert available_splits(tmp_path / "nowhere") == ()


def test_bom_and_blank_lines_are_tolerated(tmp_path):
    root = write_dataset(tmp_path / "t")
    corpus = root / "corpus.jsonl"
    corpus.write_text("\ufeff" + corpus.read_text(encoding="utf-8") + "\n\n", encoding="utf-8")
    assert len(load_dataset(root).records) == 2


# ------------------------------------------------------------------------------ the mini set


def test_mini_loads_with_documented_counts():
    dev, test = load_dataset(MINI, "dev"), load_dataset(MINI, "test")
    assert available_splits(MINI) == ("dev", "test")
    assert len(dev.records) == 63
    assert {k: sum(r.kind == k for r in dev.records) for k in KINDS} == {k: 9 for k in KINDS}
    assert dev.stats()["records_by_lang"] == {"en": 21, "ja": 21, "ru": 21}
    assert (len(dev.queries), len(dev.answerable_queries()), sum(map(len, dev.qrels.values()))) == (37, 26, 52)
    assert (len(test.queries), len(test.answerable_queries()), sum(map(len, test.qrels.values()))) == (31, 24, 49)
    assert not {q.id for q in dev.queries} & {q.id for q in test.queries}
    for ds in (dev, test):
        assert set(ds.stats()["by_lang"]) == {"ru", "ja", "en"}
        for q in ds.unanswerable_queries():
            assert q.category == "no-record" and q.id not in ds.qrels
        for q in ds.answerable_queries():
            assert ds.qrels[q.id] and all(1 <= s <= 3 for s in ds.qrels[q.id].values())


def test_mini_records_follow_the_workspace_forms():
    ds = load_dataset(MINI)
    ref_forms = {
        "digest": r"digest:turn_\w+", "chat": r"chat:ses_\w+", "log": r"log\.md#\d{4}-\d{2}-\d{2}",
        "source": r"source:[0-9a-f-]{36}", "page": r"page:[0-9a-f-]{36}", "app": r"app:\w+#\d+",
        "file": r"[^:#]+\.\w+",
    }
    for r in ds.records:
        assert re.fullmatch(ref_forms[r.kind], r.ref), r.ref
        assert r.id == f"{r.space}/{r.ref}" and r.date and r.fields["lang"] in ("ru", "ja", "en")
        if r.kind == "digest":
            assert r.text.rstrip().endswith(f"Chat: chat:{r.fields['chat']}")
        if r.kind == "app":
            assert r.text.rstrip().endswith(f"Table {r.fields['table']}: " + ", ".join(r.fields["columns"]))


def test_mini_judgements_are_fair_to_filters_and_privacy():
    """Every judged document passes its query's filters and is visible to its caller."""
    for split in ("dev", "test"):
        ds = load_dataset(MINI, split)
        by_id = {r.id: r for r in ds.records}
        for q in ds.answerable_queries():
            for doc_id in ds.qrels[q.id]:
                r = by_id[doc_id]
                assert q.kinds is None or r.kind in q.kinds
                assert q.spaces in (None, "all") or r.space in q.spaces
                assert q.since is None or r.date[:10] >= q.since
                assert q.until is None or r.date[:10] < q.until
                assert r.visibility == "shared" or r.owner == q.caller, (q.id, doc_id)


def test_mini_missing_ids_appear_nowhere():
    ds_all = [load_dataset(MINI, s) for s in ("dev", "test")]
    corpus = "\n".join(r.text + r.title for r in ds_all[0].records)
    texts = " ".join(q.text for ds in ds_all for q in ds.unanswerable_queries())
    for ident in ("ATL-2044", "ATL-9999", "PR 93", "#415"):
        assert ident in texts and ident not in corpus
    for ident in ("ATL-1702", "PR 88", "#412", "ATL-1655"):
        assert ident in corpus


def test_mini_id_in_corpus_labels_agree_with_the_corpus():
    """H12 label: every query that names an identifier carries ``id_in_corpus``, and the label
    says whether the corpus mentions every id it names (canonical comparison, as the warning)."""
    from searchkit.analyze import identifier_mentions
    from searchkit.rank.signals import mentions

    labelled = {}
    for split in ("dev", "test"):
        ds = load_dataset(MINI, split)
        texts = [r.title + "\n" + r.text for r in ds.records]
        for q in ds.queries:
            ids = identifier_mentions(q.text)
            assert bool(ids) == (q.id_in_corpus is not None), q.id
            if ids:
                labelled[q.id] = q.id_in_corpus
                assert q.id_in_corpus == all(any(mentions(t, i) for t in texts) for i, _ in ids), q.id
    assert sum(labelled.values()) == 5 and list(labelled.values()).count(False) == 7
    # a near miss: ATL-1703 is absent although ATL-1702 is there
    assert labelled["q-en-n6"] is False and labelled["q-ru-13"] is True


def test_id_in_corpus_is_parsed_and_checked(tmp_path):
    root = write_dataset(tmp_path / "ok", queries=[
        {"_id": "q1", "text": "где скрипт выгрузки?", "lang": "ru"},
        {"_id": "q2", "text": "what did we decide?", "lang": "en", "split": "test"},
        {"_id": "q3", "text": "ATL-9999?", "answerable": False, "split": "dev", "id_in_corpus": False},
    ])
    q3 = {q.id: q for q in load_dataset(root).queries}["q3"]
    assert q3.id_in_corpus is False
    assert {q.id: q for q in load_dataset(root).queries}["q1"].id_in_corpus is None
    bad = write_dataset(tmp_path / "bad", queries=[
        {"_id": "q1", "text": "где скрипт выгрузки?", "id_in_corpus": "yes"},
        {"_id": "q2", "text": "what did we decide?", "split": "test"},
    ])
    msg = error_of(bad)
    assert "queries.jsonl, line 1" in msg and "id_in_corpus" in msg


def test_load_corpus_needs_only_the_corpus(tmp_path):
    root = tmp_path / "corpus-only"
    root.mkdir()
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "hello"}) + "\n", encoding="utf-8")
    recs = dsmod.load_corpus(root)
    assert [r.id for r in recs] == ["d1"]
    with pytest.raises(DataError, match="no corpus.jsonl"):
        dsmod.load_corpus(tmp_path)
    (root / "corpus.jsonl").write_text("{bad\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1"):
        dsmod.load_corpus(root)


# --------------------------------------------------------------------------- shared public sets


def _shared_sets() -> list[Path]:
    root = shared_data_dir()
    if root is None:
        return []
    return sorted(p for p in root.iterdir() if (p / "queries.jsonl").is_file())


@pytest.mark.skipif(shared_data_dir() is None, reason="../shared/data (the public dev sets) is absent")
@pytest.mark.parametrize("folder", _shared_sets(), ids=lambda p: p.name)
def test_shared_sets_load_unchanged(folder):
    ds = load_dataset(folder, "dev")
    raw = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    assert len(ds.queries) == sum(q.get("split") == "dev" for q in raw)
    assert len(ds.answerable_queries()) == sum(q["answerable"] for q in raw if q.get("split") == "dev")
    assert set(ds.to_ranx_qrels()) == {q.id for q in ds.answerable_queries()}
    n_docs = sum(1 for line in (folder / "corpus.jsonl").open(encoding="utf-8") if line.strip())
    assert len(ds.records) == n_docs
    assert {q.lang for q in ds.queries} <= {"ru", "ja", "en"}
    with pytest.raises(DataError, match="available splits: dev"):
        load_dataset(folder, "test")


# ---------------------------------------------------------------------------- validation errors


def assert_names(msg: str, file: str, line: int | None) -> None:
    assert file in msg, msg
    if line is not None:
        assert f"line {line}" in msg, msg


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl"])
def test_missing_file_is_named_with_layout(tmp_path, missing):
    root = write_dataset(tmp_path / "t")
    (root / missing).unlink()
    msg = error_of(root)
    assert missing in msg and "qrels/<split>.tsv" in msg


def test_missing_folder_and_missing_qrels(tmp_path):
    assert "does not exist" in error_of(tmp_path / "nope")
    root = write_dataset(tmp_path / "t", qrels={})
    assert "qrels/<split>.tsv" in error_of(root)
    root2 = write_dataset(tmp_path / "t2")
    msg = error_of(root2, "train")
    assert "train.tsv" in msg and "available splits: dev, test" in msg


CORPUS_OK = {"_id": "d1", "text": "a"}


@pytest.mark.parametrize(
    "corpus, line, needle",
    [
        ([CORPUS_OK, "{not json"], 2, "malformed JSON"),
        ([CORPUS_OK, "[1, 2]"], 2, "expected a JSON object"),
        ([CORPUS_OK, {"text": "no id"}], 2, "'_id'"),
        ([CORPUS_OK, {"_id": "d2", "title": "no text"}], 2, "'text'"),
        ([CORPUS_OK, {"_id": "d2", "text": "x"}, {"_id": "d1", "text": "again"}], 3, "duplicate document id (first on line 1)"),
        ([CORPUS_OK, {"_id": "d2", "text": "x", "kind": "email"}], 2, "unknown 'kind'"),
        ([CORPUS_OK, {"_id": "d2", "text": "x", "visibility": "secret"}], 2, "visibility"),
        ([CORPUS_OK, {"_id": "d2", "text": "x", "date": "21.10.2026"}], 2, "ISO date"),
    ],
)
def test_corpus_errors_name_file_and_line(tmp_path, corpus, line, needle):
    root = write_dataset(tmp_path / "t", corpus=corpus,
                         qrels={"dev": HEADER + "q1\td1\t1\n", "test": HEADER + "q2\td1\t1\n"})
    msg = error_of(root)
    assert_names(msg, "corpus.jsonl", line)
    assert needle in msg


@pytest.mark.parametrize(
    "bad, needle",
    [
        ("{oops", "malformed JSON"),
        ({"text": "no id"}, "'_id'"),
        ({"_id": "q9"}, "'text'"),
        ({"_id": "q9", "text": "   "}, "non-empty"),
        ({"_id": "q1", "text": "dup"}, "duplicate query id (first on line 1)"),
        ({"_id": "q9", "text": "x", "answerable": "false"}, "'answerable' must be true or false"),
        ({"_id": "q9", "text": "x", "kinds": ["email"]}, "'kinds'"),
        ({"_id": "q9", "text": "x", "spaces": "acme"}, "'spaces'"),
        ({"_id": "q9", "text": "x", "since": "yesterday"}, "ISO date"),
    ],
)
def test_query_errors_name_file_and_line(tmp_path, bad, needle):
    queries = [
        {"_id": "q1", "text": "где скрипт выгрузки?"},
        {"_id": "q2", "text": "what did we decide?"},
        {"_id": "q3", "text": "ATL-9999?", "answerable": False, "split": "dev"},
        bad,
    ]
    msg = error_of(write_dataset(tmp_path / "t", queries=queries))
    assert_names(msg, "queries.jsonl", 4)
    assert needle in msg


@pytest.mark.parametrize(
    "dev_text, line, needle",
    [
        ("query_id\tcorpus_id\tscore\nq1\td1\t1\n", 1, "header"),
        ("query-id corpus-id score\nq1\td1\t1\n", 1, "header"),
        (HEADER + "q1\td1\n", 2, "expected 3 tab-separated columns"),
        (HEADER + "q1\td1\t1\textra\n", 2, "got 4"),
        (HEADER + "q1\td1\t1\nq1\td2\thigh\n", 3, "not an integer"),
        (HEADER + "q1\td1\t-1\n", 2, "negative"),  # any non-negative grade is fine (issue 40 item 2)
        (HEADER + "q1\td1\t1\nq7\td1\t1\n", 3, "unknown query id"),
        (HEADER + "q1\td1\t1\nq1\td9\t1\n", 3, "unknown corpus id"),
        (HEADER + "q1\td1\t1\nq1\td1\t2\n", 3, "duplicate row"),
        ("", None, "empty file"),
    ],
)
def test_qrels_errors_name_file_and_line(tmp_path, dev_text, line, needle):
    root = write_dataset(tmp_path / "t", qrels={"dev": dev_text, "test": HEADER + "q2\td2\t1\n"})
    msg = error_of(root)
    assert_names(msg, "dev.tsv", line)
    assert needle in msg


def test_errors_in_the_other_split_file_are_reported_too(tmp_path):
    root = write_dataset(tmp_path / "t", qrels={"dev": HEADER + "q1\td1\t1\n", "test": HEADER + "q2\td2\tx\n"})
    assert_names(error_of(root, "dev"), "test.tsv", 2)


def test_unanswerable_query_with_positive_qrels_is_a_contradiction(tmp_path):
    queries = [
        {"_id": "q1", "text": "a"},
        {"_id": "q2", "text": "b", "split": "test"},
        {"_id": "q3", "text": "c", "answerable": False},
    ]
    root = write_dataset(tmp_path / "t", queries=queries,
                         qrels={"dev": HEADER + "q1\td1\t1\nq3\td2\t0\nq3\td1\t2\n", "test": HEADER + "q2\td2\t1\n"})
    msg = error_of(root)
    assert_names(msg, "dev.tsv", 4)
    assert "answerable: false" in msg and "line 3" in msg  # queries.jsonl line too


def test_unanswerable_query_with_zero_rows_is_fine(tmp_path):
    queries = [{"_id": "q1", "text": "a"}, {"_id": "q2", "text": "b", "split": "test"},
               {"_id": "q3", "text": "c", "answerable": False}]
    root = write_dataset(tmp_path / "t", queries=queries,
                         qrels={"dev": HEADER + "q1\td1\t1\nq3\td2\t0\n", "test": HEADER + "q2\td2\t1\n"})
    ds = load_dataset(root)
    assert [q.id for q in ds.queries] == ["q1", "q3"]
    assert "q3" not in ds.to_ranx_qrels() and dict(ds.qrels["q3"]) == {"d2": 0}


def test_utf8_error_names_line(tmp_path):
    root = write_dataset(tmp_path / "t")
    with (root / "corpus.jsonl").open("ab") as fh:
        fh.write(b'{"_id": "d3", "text": "\xff\xfe"}\n')
    assert_names(error_of(root), "corpus.jsonl", 3)


# ------------------------------------------------------------------------------ split assignment


def split_ids(root: Path) -> dict[str, list[str]]:
    return {s: [q.id for q in load_dataset(root, s).queries] for s in available_splits(root)}


def test_split_by_qrels_rows_and_by_split_field(tmp_path):
    queries = [
        {"_id": "a-dev", "text": "a"},                                        # rows in dev
        {"_id": "a-test", "text": "b"},                                       # rows in test
        {"_id": "u-test", "text": "c", "answerable": False, "split": "test"},  # own field
        {"_id": "u-dev", "text": "d", "answerable": False, "split": "dev"},
        {"_id": "a-nowhere", "text": "e"},                                    # BEIR: judged nowhere -> dropped
        {"_id": "u-held-out", "text": "f", "answerable": False, "split": "final"},  # split without a file
    ]
    root = write_dataset(tmp_path / "t", queries=queries,
                         qrels={"dev": HEADER + "a-dev\td1\t1\n", "test": HEADER + "a-test\td2\t3\n"})
    assert split_ids(root) == {"dev": ["a-dev", "u-dev"], "test": ["a-test", "u-test"]}


def test_unanswerable_without_split_goes_by_stable_hash(tmp_path):
    ids = [f"u{i}" for i in range(40)]
    queries = [{"_id": "q1", "text": "a"}, {"_id": "q2", "text": "b"}] + [
        {"_id": i, "text": "x", "answerable": False} for i in ids
    ]
    root = write_dataset(tmp_path / "t", queries=queries,
                         qrels={"dev": HEADER + "q1\td1\t1\n", "test": HEADER + "q2\td2\t1\n"})
    got = split_ids(root)
    assert got["dev"][0] == "q1" and got["test"][0] == "q2"
    assert sorted(got["dev"][1:] + got["test"][1:]) == sorted(ids)
    for i in ids:
        assert i in got[hash_split(i)]
    assert 10 <= len(got["dev"]) - 1 <= 30  # roughly half
    # stable: SHA-256 parity, not Python's salted hash()
    assert hash_split("u0") == ("dev", "test")[__import__("hashlib").sha256(b"u0").digest()[0] % 2]


def test_query_in_two_split_files_is_an_error(tmp_path):
    root = write_dataset(tmp_path / "t", qrels={"dev": HEADER + "q1\td1\t1\n",
                                                "test": HEADER + "q2\td2\t1\nq1\td2\t1\n"})
    msg = error_of(root)
    assert_names(msg, "queries.jsonl", 1)
    assert "dev.tsv line 2" in msg and "test.tsv line 3" in msg


def test_split_field_contradicting_qrels_is_an_error(tmp_path):
    queries = [{"_id": "q1", "text": "a", "split": "test"}, {"_id": "q2", "text": "b"}]
    root = write_dataset(tmp_path / "t", queries=queries,
                         qrels={"dev": HEADER + "q1\td1\t1\n", "test": HEADER + "q2\td2\t1\n"})
    msg = error_of(root)
    assert_names(msg, "queries.jsonl", 1)
    assert "'split' names another split" in msg


def test_answerable_query_without_relevant_document_is_an_error(tmp_path):
    """Only where the line says ``answerable: true``; without the field it is inferred (issue 40)."""
    queries = [{"_id": "q1", "text": "a"}, {"_id": "q2", "text": "b", "split": "dev", "answerable": True}]
    root = write_dataset(tmp_path / "t", queries=queries, qrels={"dev": HEADER + "q1\td1\t1\n"})
    msg = error_of(root)
    assert_names(msg, "queries.jsonl", 2)
    assert "no relevant document" in msg
    root2 = write_dataset(tmp_path / "t2", queries=[{"_id": "q1", "text": "a", "answerable": True}],
                          qrels={"dev": HEADER + "q1\td1\t0\n"})
    assert_names(error_of(root2), "queries.jsonl", 1)


# --------------------------------------------------------------------------- resolving by name


def test_resolve_dataset_by_path_and_by_name(tmp_path, monkeypatch):
    root = write_dataset(tmp_path / "here")
    assert resolve_dataset(root) == root
    assert resolve_dataset(str(root)) == root
    assert resolve_dataset("mini").resolve() == MINI
    (tmp_path / "repo" / "datasets").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    write_dataset(tmp_path / "repo" / "datasets" / "own")
    write_dataset(tmp_path / "shared" / "data" / "public")
    assert dsmod.shared_data_dir().resolve() == (tmp_path / "shared" / "data").resolve()
    assert resolve_dataset("own").resolve() == (tmp_path / "repo" / "datasets" / "own").resolve()
    assert resolve_dataset("public").resolve() == (tmp_path / "shared" / "data" / "public").resolve()
    with pytest.raises(DataError) as exc:
        resolve_dataset("missing")
    msg = str(exc.value)
    assert "'missing'" in msg and "own, public" in msg and "shared data folder" in msg


def test_resolve_dataset_says_when_the_shared_folder_is_absent(tmp_path, monkeypatch):
    (tmp_path / "repo" / "datasets").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert dsmod.shared_data_dir() is None
    with pytest.raises(DataError) as exc:
        resolve_dataset("xquad-ru")
    msg = str(exc.value)
    assert "absent" in msg and "names: none" in msg
    with pytest.raises(DataError, match="no dataset folder"):
        resolve_dataset(str(tmp_path / "no" / "such" / "dir"))


def test_shared_data_dir_is_relative_to_the_working_directory_or_the_environment(tmp_path, monkeypatch):
    root = shared_data_dir()
    assert root is None or root == Path.cwd().parent / "shared" / "data"
    monkeypatch.setenv(dsmod.SHARED_ENV, str(tmp_path))
    assert shared_data_dir() == tmp_path
    monkeypatch.setenv(dsmod.DATASETS_ENV, str(tmp_path / "mine"))
    assert dsmod.datasets_dir() == tmp_path / "mine"


# ---------------------------------------------------------------------------------------------
# a bad file is named, never quoted; a FIFO is refused at once (issue 27, items 8 and 12)

SECRET = "S3CRET-hunter2-Zq9"


@pytest.mark.parametrize("dev_text", [
    f"root:{SECRET}:0:0:root:/root:/bin/bash\n",  # a system file given as qrels: its first line
    HEADER + f"{SECRET}\td1\t1\n",
    HEADER + f"q1\t{SECRET}\t1\n",
    HEADER + f"q1\td1\t{SECRET}\n",
    HEADER + f"q1\td1\t1\t{SECRET}\n",
    HEADER + f"{SECRET}\n",
])
def test_qrels_errors_never_quote_the_file(tmp_path, dev_text):
    root = write_dataset(tmp_path / "t", qrels={"dev": dev_text, "test": HEADER + "q2\td2\t1\n"})
    msg = error_of(root)
    assert "dev.tsv" in msg and SECRET not in msg and "hunter2" not in msg


@pytest.mark.parametrize("row", [
    {"_id": SECRET, "text": "x", "kind": "nosuch"},
    {"_id": "d9", "text": "x", "kind": SECRET},
    {"_id": "d9", "text": "x", "visibility": SECRET},
    {"_id": "d9", "text": "x", "date": SECRET},
    {"_id": "d9", "text": [SECRET]},
    {"_id": "d9", "text": "x", "title": {"k": SECRET}},
    {"_id": f"{SECRET}\t1", "text": "x"},
    {"_id": "d1", "text": SECRET},
])
def test_corpus_errors_never_quote_the_file(tmp_path, row):
    corpus = [{"_id": "d1", "text": "a"}, row]
    msg = error_of(write_dataset(tmp_path / "t", corpus=corpus,
                                 qrels={"dev": HEADER + "q1\td1\t1\n", "test": HEADER + "q2\td1\t1\n"}))
    assert "corpus.jsonl, line 2" in msg and SECRET not in msg


def test_a_number_too_long_to_read_is_one_error(tmp_path):
    corpus = [{"_id": "d1", "text": "a"}, '{"_id": "d2", "text": "b", "n": ' + "9" * 5000 + "}"]
    msg = error_of(write_dataset(tmp_path / "t", corpus=corpus))
    assert "corpus.jsonl, line 2" in msg and "too long" in msg and "9999" not in msg


@pytest.mark.parametrize("target", ["corpus.jsonl", "queries.jsonl", "qrels/dev.tsv"])
def test_a_fifo_in_a_dataset_is_refused_at_once(tmp_path, target):
    import os

    root = write_dataset(tmp_path / "t")
    (root / target).unlink()
    os.mkfifo(root / target)
    msg = error_of(root)
    assert target.split("/")[-1] in msg and "not a regular file" in msg


def test_open_regular_refuses_a_fifo_reached_through_a_symlink(tmp_path):
    import os

    root = write_dataset(tmp_path / "t")
    os.mkfifo(tmp_path / "pipe")
    (root / "qrels" / "test.tsv").unlink()
    (root / "qrels" / "test.tsv").symlink_to(tmp_path / "pipe")
    assert "not a regular file" in error_of(root, "test")
