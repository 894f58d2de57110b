"""The reranking stage (issue 11 item 4): a protocol, one offline implementation, on for Japanese queries."""
import numpy as np
import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.rank.rerank import Reranker, SentenceMaxSim, reorder, sentences
from searchkit.searcher import Searcher


def test_sentences_split_in_three_languages():
    assert sentences("Первое. Второе!\nThird one? 第四。第五") == ["Первое.", "Второе!", "Third one?", "第四。", "第五"]


def test_reorder_mixes_the_head_and_keeps_the_tail_below():
    ranked = [(1, 0.9), (2, 0.8), (3, 0.5), (4, 0.1)]
    out = reorder(ranked, {1: 0.0, 2: 1.0, 3: 0.5}, weight=1.0)
    assert [ri for ri, _ in out] == [2, 3, 1, 4]
    assert out[2][1] > out[3][1]
    assert reorder(ranked, {1: 0.0, 2: 1.0}, weight=0.0)[:2] == [(1, reorder(ranked, {1: 0.0, 2: 1.0}, 0.0)[0][1]),
                                                                (2, reorder(ranked, {1: 0.0, 2: 1.0}, 0.0)[1][1])]


def test_sentence_maxsim_prefers_the_passage_with_the_matching_sentence(tiny_records):
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    r = SentenceMaxSim(s.embedder, s.cache)
    assert isinstance(r, Reranker)
    scores = r.rerank("скрипт выгрузки отчётов", ["Погода хорошая. Скрипт выгрузки отчётов готов.", "Погода хорошая."])
    assert scores[0] > scores[1]


def test_the_stage_runs_for_its_languages_and_changes_the_order_when_on(tiny_records):
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    assert cfg.rerank.languages == ("ja",)
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    off = s.with_config(cfg.replace(**{"rerank.enabled": False}))
    # a Russian query is not reranked under the shipped languages: the same order as the stage off
    assert [h.record.id for h in s.search("отчёт выгрузка", k=6).hits] == \
        [h.record.id for h in off.search("отчёт выгрузка", k=6).hits]
    s = off
    on = s.with_config(cfg.replace(**{"rerank.enabled": True, "rerank.weight": 1.0, "rerank.languages": ()}))
    a, b = s.search("отчёт выгрузка", k=6), on.search("отчёт выгрузка", k=6)
    assert {h.record.id for h in a.hits} == {h.record.id for h in b.hits}
    maxsim = SentenceMaxSim(s.embedder, s.cache)
    head = [h.passage.text for h in b.hits]
    sc = maxsim.rerank("отчёт выгрузка", head)
    assert list(sc) == sorted(sc, reverse=True) or np.allclose(sorted(sc, reverse=True), sc)


def test_the_procedure_turns_the_stage_on_only_at_a_positive_weight():
    """evals/select_speaker_weight.py --knob rerank: weight 0 is the stage off (the rest of the
    section kept), a positive weight turns it on at that weight and the --depth given."""
    import dataclasses
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "evals" / "select_speaker_weight.py"
    spec = importlib.util.spec_from_file_location("select_speaker_weight", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    base = SearchConfig()
    off = module.with_knob(base, "rerank", 0.0, 10)
    assert off.rerank == dataclasses.replace(base.rerank, enabled=False)
    on = module.with_knob(base, "rerank", 0.3, 10)
    assert on.rerank.enabled and on.rerank.weight == 0.3 and on.rerank.depth == 10
    assert module.with_knob(base, "rerank", 0.3).rerank.depth == base.rerank.depth
    assert on.fusion == base.fusion and module.with_knob(base, "date", 0.2).fusion.date == 0.2
    assert on.rerank.languages == ()  # every language unless told
    ja = module.with_knob(base, "rerank", 0.3, 10, ["ja"])
    assert ja.rerank.enabled and ja.rerank.languages == ("ja",)
    assert not module.with_knob(base, "rerank", 0.3, 10, []).rerank.enabled  # no language: off


def _procedure():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "evals" / "select_speaker_weight.py"
    spec = importlib.util.spec_from_file_location("select_speaker_weight", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_per_language_rule_turns_on_only_the_languages_that_gain_on_the_tune_half():
    """--by-language: at each weight a language is on when its queries raise the tune-half mean
    (every set weighing the same); the weight with the best mean wins, off when none gains."""
    pick = _procedure().pick_by_language
    langs = {"A": {"a1": "ja", "a2": "ja", "a3": "en"}, "B": {"b1": "en", "b2": "en"}}
    scores = {
        0.0: {"A": {"a1": 0.5, "a2": 0.5, "a3": 1.0}, "B": {"b1": 1.0, "b2": 0.5}},
        0.2: {"A": {"a1": 0.6, "a2": 0.5, "a3": 1.0}, "B": {"b1": 0.9, "b2": 0.5}},   # ja +, en -
        0.5: {"A": {"a1": 1.0, "a2": 0.5, "a3": 0.7}, "B": {"b1": 1.0, "b2": 0.6}},   # ja ++, en: A -0.1, B +0.05
    }
    w, on, means = pick(scores, langs)
    assert (w, on) == (0.5, ("ja",))
    base = ((0.5 + 0.5 + 1.0) / 3 + 0.75) / 2
    assert means["0.0"] == pytest.approx(base, abs=1e-6)
    assert means["0.5"] == pytest.approx(base + 0.5 / 3 / 2, abs=1e-6)  # only ja's gain counts
    assert means["0.2"] == pytest.approx(base + 0.1 / 3 / 2, abs=1e-6)
    # every language loses: the stage stays off
    worse = {0.0: scores[0.0], 0.5: {"A": {"a1": 0.4, "a2": 0.5, "a3": 0.9}, "B": {"b1": 0.9, "b2": 0.5}}}
    assert pick(worse, langs)[:2] == (0.0, ())


def test_sentences_embedded_beforehand_leave_nothing_for_a_japanese_query_to_embed(tiny_records):
    """Searcher.embed_rerank_sentences (what `searchkit index` runs after building) embeds the
    sentences of the passages in the stage's languages, so a Japanese query reranks from the cache;
    the order is the same as with the sentences embedded while the query waits."""
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "passages": {"title_prefix": False}})
    cold = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    n = s.embed_rerank_sentences()
    ja = [p.text for p in s.passages if p.record_id == "r3"]
    assert n == len({x for t in ja for x in (sentences(t) or [t])}) >= 1  # only the Japanese record's
    s.search("満月の周期", k=3)  # the query text itself is new to the cache
    misses = s.cache.stats().misses
    got = s.search("満月の周期 スクリプト", k=3)
    assert s.cache.stats().misses == misses + 1  # the new query text only: every sentence was cached
    assert [h.record.id for h in got.hits] == [h.record.id for h in cold.search("満月の周期 スクリプト", k=3).hits]
    off = s.with_config(cfg.replace(**{"rerank.enabled": False}))
    assert off.embed_rerank_sentences() == 0
    every = s.with_config(cfg.replace(**{"rerank.languages": ()}))
    assert every.embed_rerank_sentences() > n
    assert s.passages[0].record_id == "r1"  # Russian: read whole under the shipped languages
    assert s.embed_rerank_sentences([0]) == 1 and every.embed_rerank_sentences([0]) == len(sentences(s.passages[0].text)) == 2


def test_a_passage_outside_the_languages_is_read_whole():
    """rerank.reads: a passage in one of the stage's languages is read sentence by sentence, one in
    another language whole (the dense retriever's text); with no languages, every passage is split."""
    from searchkit.rank.rerank import reads

    ja, ru = "満月の周期を計算した。スクリプトも書いた。", "Первое предложение. Второе предложение."
    assert reads(ja, ("ja",)) == sentences(ja) and len(sentences(ja)) == 2
    assert reads(ru, ("ja",)) == [ru]
    assert reads(ru, ()) == sentences(ru) and reads(ru, ("ru",)) == sentences(ru)


def test_a_japanese_query_reaching_other_languages_embeds_nothing_but_itself(tiny_records):
    """A Japanese query's head holds Russian and English passages (every record is in the head):
    after `searchkit index`'s embedding ahead, the search embeds only its own text, and a passage
    outside rerank.languages scores the cosine of the vector the dense retriever holds for it."""
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "passages": {"title_prefix": False},
                                  "rerank": {"depth": 10, "weight": 1.0}})
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    s.embed_rerank_sentences()
    misses = s.cache.stats().misses
    got = s.search("満月の周期 スクリプト 出力", k=6)
    assert s.cache.stats().misses == misses + 1  # the query text only
    assert {h.record.id for h in got.hits} >= {"r1", "r3"}
    maxsim = s.reranker()
    ru = next(p.text for p in s.passages if p.record_id == "r1")
    qv = s.cache.embed(s.embedder, ["満月の周期 スクリプト 出力"], "query")[0]
    whole = s.cache.embed(s.embedder, [ru], "passage")[0]
    assert maxsim.rerank("満月の周期 スクリプト 出力", [ru])[0] == pytest.approx(float(whole @ qv))
    split = SentenceMaxSim(s.embedder, s.cache)  # every passage split: the Russian one's sentences
    best = max(float(v @ qv) for v in s.cache.embed(s.embedder, sentences(ru), "passage"))
    assert split.rerank("満月の周期 スクリプト 出力", [ru])[0] == pytest.approx(best)
    assert s.cache.stats().misses > misses + 1  # which the stage under rerank.languages never embeds


def test_the_stage_asks_a_passage_language_once(tiny_records, monkeypatch):
    """Searcher.language_of remembers detect_language per text: a reranked query's head passages
    are not analysed again by the next query (the answers are the same)."""
    import searchkit.searcher as searcher_module

    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "rerank": {"depth": 10}})
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    first = [h.record.id for h in s.search("満月の周期 スクリプト", k=6).hits]
    calls = []
    real = searcher_module.detect_language
    monkeypatch.setattr(searcher_module, "detect_language", lambda t: calls.append(t) or real(t))
    assert [h.record.id for h in s.search("満月の周期 スクリプト", k=6).hits] == first
    assert calls == []  # every head passage's language was remembered
    assert s.language_of("Первое предложение.") == "ru" and calls == ["Первое предложение."]
    assert s.language_of("Первое предложение.") == "ru" and len(calls) == 1
