"""The core Searcher: hits carry per-retriever scores/ranks, filters before top-k, persistence
(issue 2 items 8, 9) and bad input."""
import json

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import DataError, InputError
from searchkit.index.cache import EmbeddingCache
from searchkit.records import Record
from searchkit.searcher import Filters, Searcher


@pytest.fixture()
def searcher(tiny_records, hashing_config):
    return Searcher.build(tiny_records, hashing_config, cache=EmbeddingCache(None))


def test_hits_carry_each_retrievers_score_and_rank(searcher):
    res = searcher.search("скрипт выгрузки", k=3)
    assert res.hits[0].record.id == "r1"
    top = res.hits[0]
    assert set(top.scores) == {"bm25", "dense"}
    assert top.ranks["bm25"] == 1
    assert [h.rank for h in res.hits] == list(range(1, len(res.hits) + 1))
    assert res.config_fingerprint == searcher.config.fingerprint()
    # the card passage belongs to the record and holds the words
    assert top.passage.record_id == "r1" and "выгрузки" in top.passage.text


def test_rrf_fused_score_is_sum_of_reciprocal_ranks(searcher):
    searcher = searcher.with_config(searcher.config.replace(**{"fusion.method": "rrf"}))
    res = searcher.search("export script report", k=6)
    for h in res.hits:
        expect = sum(1.0 / (60 + r) for r in h.ranks.values())
        assert h.score == pytest.approx(expect)


def test_russian_inflection_matches_through_stemming(searcher):
    res = searcher.search("выгрузка отчёта", k=2)
    assert res.hits[0].record.id == "r1"
    assert res.hits[0].scores["bm25"] > 0


def test_filters_apply_before_top_k(searcher):
    # without filters r1 wins; with kinds=chat only chats may take the slots
    res = searcher.search("скрипт выгрузки", k=1, filters=Filters(kinds=("chat",)))
    assert [h.record.kind for h in res.hits] == ["chat"]
    res = searcher.search("скрипт выгрузки", k=10, filters=Filters(spaces=("research",)))
    assert res.hits and {h.record.space for h in res.hits} == {"research"}


def test_date_filter_until_is_exclusive(searcher):
    res = searcher.search("report", k=10, filters=Filters(since="2026-10-05", until="2026-10-20"))
    days = sorted(h.record.date for h in res.hits)
    assert days and all("2026-10-05" <= d < "2026-10-20" for d in days)
    assert "2026-10-20" not in days


def test_visibility_predicate(searcher):
    res = searcher.search("скрипт", k=10, filters=Filters(visible=lambda r: r.id != "r1"))
    assert "r1" not in [h.record.id for h in res.hits]


def test_filter_that_excludes_everything_returns_nothing(searcher):
    res = searcher.search("скрипт", k=5, filters=Filters(kinds=("source",)))
    assert res.hits == ()


@pytest.mark.parametrize("bad", ["", "   \n\t", "a" * 100_000, "x\x00y"])
def test_bad_queries_are_named(searcher, bad):
    with pytest.raises(InputError, match="query"):
        searcher.search(bad)


def test_bad_k(searcher):
    with pytest.raises(InputError, match="k must be"):
        searcher.search("скрипт", k=0)


def test_missing_id_warning(searcher):
    res = searcher.search("ATL-9999 выгрузка", k=3)
    w = res.warning("missing_ids")
    assert w is not None and list(w.detail["ids"]) == ["ATL-9999"]
    res = searcher.search("ＡＴＬ－１６５５", k=3)  # full-width form of an ID that r1 mentions
    assert res.warning("missing_ids") is None


def test_save_load_gives_identical_results(searcher, tmp_path, hashing_config):
    out = tmp_path / "idx"
    searcher.save(out)
    from searchkit.index.store import current_dir

    manifest = json.loads((current_dir(out) / "manifest.json").read_text())
    assert manifest["index_fingerprint"] == hashing_config.index_fingerprint()
    loaded = Searcher.load(out, cache=EmbeddingCache(None))
    for q in ["скрипт выгрузки", "満月 周期", "sales dashboard", "Postgres"]:
        a, b = searcher.search(q, k=5), loaded.search(q, k=5)
        assert [(h.record.id, h.score, dict(h.ranks)) for h in a.hits] == [
            (h.record.id, h.score, dict(h.ranks)) for h in b.hits
        ]
    # no temporary folders left beside the index
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]


def test_load_under_another_config_says_so(searcher, tmp_path, hashing_config):
    searcher.save(tmp_path / "idx")
    other = hashing_config.replace(**{"analyzer.split_mode": "A"})
    with pytest.raises(DataError, match="another config"):
        Searcher.load(tmp_path / "idx", other, cache=EmbeddingCache(None))
    # a query-time knob is fine
    ok = Searcher.load(tmp_path / "idx", hashing_config.replace(**{"fusion.rrf_k": 5}), cache=EmbeddingCache(None))
    assert ok.config.fusion.rrf_k == 5


def test_load_with_another_embedder_says_so(searcher, tmp_path):
    from searchkit.index.embedders import make_embedder

    searcher.save(tmp_path / "idx")
    with pytest.raises(DataError, match="embedder"):
        Searcher.load(tmp_path / "idx", embedder=make_embedder("hashing", dim=128), cache=EmbeddingCache(None))


def test_failed_save_leaves_previous_index_intact(searcher, tmp_path, monkeypatch):
    out = tmp_path / "idx"
    searcher.save(out)
    before = sorted(p.name for p in out.iterdir())

    def boom(self, folder):
        raise RuntimeError("disk full")

    monkeypatch.setattr(type(searcher.retrievers["bm25"].index), "save", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        searcher.save(out)
    assert sorted(p.name for p in out.iterdir()) == before
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]


def test_long_record_is_cut_and_best_passage_shown(hashing_config):
    filler = "Обычный абзац про погоду и планы. " * 60
    text = filler + "\n\n" + "Ключ доступа к стенду хранится в менеджере паролей." + "\n\n" + filler
    rec = Record(id="long", kind="file", title="notes", text=text)
    other = Record(id="o", kind="file", title="x", text="ничего общего")
    s = Searcher.build([rec, other], hashing_config, cache=EmbeddingCache(None))
    assert len([p for p in s.passages if p.record_id == "long"]) >= 2
    hit = s.search("менеджер паролей стенд", k=1).hits[0]
    assert hit.record.id == "long"
    assert len(hit.passage.text) <= 1500 + len("notes\n")
    assert "менеджере паролей" in hit.passage.text


def test_bm25_only_and_dense_only(tiny_records):
    bm = SearchConfig.from_dict({"dense": {"enabled": False}})
    s = Searcher.build(tiny_records, bm)
    h = s.search("Postgres", k=3).hits
    assert h[0].record.id == "r2" and set(h[0].scores) == {"bm25"}
    de = SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"embedder": "hashing"}})
    s = Searcher.build(tiny_records, de, cache=EmbeddingCache(None))
    assert set(s.search("Postgres", k=3).hits[0].scores) == {"dense"}


def test_duplicate_record_ids_rejected(tiny_records, hashing_config):
    with pytest.raises(ValueError, match="duplicate record id 'r1'"):
        Searcher.build(tiny_records + [tiny_records[0]], hashing_config, cache=EmbeddingCache(None))
