"""The reranking stage (issue 11 item 4): a protocol, off by default, one offline implementation."""
import numpy as np

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


def test_the_stage_is_off_by_default_and_changes_the_order_when_on(tiny_records):
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    assert not cfg.rerank.enabled
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    on = s.with_config(cfg.replace(**{"rerank.enabled": True, "rerank.weight": 1.0}))
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
