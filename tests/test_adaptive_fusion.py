"""Query-adaptive fusion (H11 ranking; issue 11 item 1): the model's weights, the Searcher path that
applies them, and the fit on the tune half only."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from searchkit.config import AdaptiveFusion, ConfigError, SearchConfig
from searchkit.evaluate import adaptive as fit_mod
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.tune import half_of
from searchkit.rank import adaptive
from searchkit.rank.candidates import Candidates
from searchkit.searcher import Searcher

HASHING = {"dense": {"embedder": "hashing", "hashing_dim": 64}}


@pytest.fixture(scope="module")
def mini():
    return load_dataset(resolve_dataset("mini"), split="dev")


@pytest.fixture(scope="module")
def searcher(mini):
    return Searcher.build(mini.records, SearchConfig.from_dict(HASHING), show_progress=False)


def _model(**kw) -> AdaptiveFusion:
    base = {"features": ("overlap10", "dense_top1"), "coef": (2.0, -1.0), "intercept": 0.5, "lo": 0.2, "hi": 0.7}
    base.update(kw)
    return AdaptiveFusion(**base)


# --------------------------------------------------------------------------- config


def test_a_config_without_a_model_says_so_in_its_json():
    cfg = SearchConfig().replace(**{"fusion.adaptive": None})
    assert cfg.fusion.adaptive is None and cfg.to_dict()["fusion"].get("adaptive") is None
    assert SearchConfig.from_json(cfg.to_json()) == cfg
    assert SearchConfig().fusion.adaptive is not None  # the shipped model


def test_fixed_weights_given_without_a_model_turn_the_model_off():
    assert SearchConfig.from_dict({"fusion": {"weights": {"bm25": 0.5, "dense": 0.5}}}).fusion.adaptive is None
    assert SearchConfig().replace(**{"fusion.weights": {"bm25": 0.5, "dense": 0.5}}).fusion.adaptive is None
    assert SearchConfig.from_dict({"fusion": {"norm": "zscore"}}).fusion.adaptive == SearchConfig().fusion.adaptive


@pytest.mark.parametrize("bad, needle", [
    ({"features": ["nosuch"], "coef": [1.0]}, "not a known fusion feature"),
    ({"features": ["overlap10"], "coef": [1.0, 2.0]}, "one weight per feature"),
    ({"features": [], "coef": [], "lo": 0.8, "hi": 0.2}, "is above"),
    ({"features": [], "coef": [], "hi": 1.5}, "fusion.adaptive.hi"),
])
def test_bad_adaptive_models_are_refused_naming_the_key(bad, needle):
    with pytest.raises(ConfigError, match=needle):
        SearchConfig().replace(**{"fusion.adaptive": bad})


def test_rrf_ignores_the_adaptive_model(searcher, mini):
    cfg = searcher.config.replace(**{"fusion.method": "rrf"})
    plain = searcher.with_config(cfg.replace(**{"fusion.adaptive": None}))
    with_model = searcher.with_config(cfg.replace(**{"fusion.adaptive": _model()}))
    q = mini.queries[0].text
    assert [h.record.id for h in plain.search(q).hits] == [h.record.id for h in with_model.search(q).hits]


def test_adaptive_round_trips_through_json_and_changes_the_fingerprint():
    cfg = SearchConfig().replace(**{"fusion.adaptive": _model()})
    again = SearchConfig.from_dict(json.loads(cfg.to_json()))
    assert again.fusion.adaptive == cfg.fusion.adaptive
    assert again.fingerprint() == cfg.fingerprint() != SearchConfig().fingerprint()
    assert again.index_fingerprint() == SearchConfig().index_fingerprint()  # query-time only


# --------------------------------------------------------------------------- weights


def _retrieved(searcher, text):
    """The candidates of the pipeline's first stage (what the adaptive model reads)."""
    return searcher.pipeline.upto("retrieve")(Candidates(), searcher.query(text))


def test_share_stays_between_lo_and_hi_and_follows_the_model(searcher, mini):
    shares = []
    for q in mini.queries[:12]:
        c = _retrieved(searcher, q.text)
        x = adaptive.features(c)
        assert set(x) == set(adaptive.FEATURES) and all(math.isfinite(v) for v in x.values())
        m = _model()
        s = adaptive.share(c, m)
        z = m.intercept + 2.0 * x["overlap10"] - 1.0 * x["dense_top1"]
        assert s == pytest.approx(0.2 + 0.5 / (1 + math.exp(-z)))
        assert 0.2 <= s <= 0.7
        w = adaptive.weights_for(c, SearchConfig().replace(**{"fusion.adaptive": m}).fusion)
        assert w["bm25"] == pytest.approx(s) and w["dense"] == pytest.approx(1 - s)
        shares.append(s)
    assert len({round(s, 6) for s in shares}) > 1  # it adapts: not one share for every query


def test_without_a_model_the_weights_are_the_configs(searcher, mini):
    c = _retrieved(searcher, mini.queries[0].text)
    fusion = SearchConfig().replace(**{"fusion.adaptive": None}).fusion
    assert dict(adaptive.weights_for(c, fusion)) == {"bm25": 0.4, "dense": 0.6}


def test_the_searcher_fuses_each_query_at_its_own_share(searcher, mini):
    """An adaptive search ranks exactly as a fixed search at the share the model gave that query."""
    m = _model(coef=(3.0, -2.0), intercept=0.0)
    ad = searcher.with_config(searcher.config.replace(**{"fusion.adaptive": m}))
    differs = 0
    for q in mini.queries[:10]:
        c = _retrieved(searcher, q.text)
        s = adaptive.share(c, m)
        fixed = searcher.with_config(searcher.config.replace(**{"fusion.weights": {"bm25": s, "dense": 1 - s}}))
        got = [(h.record.id, round(h.score, 9)) for h in ad.search(q.text, k=10).hits]
        assert got == [(h.record.id, round(h.score, 9)) for h in fixed.search(q.text, k=10).hits]
        differs += got != [(h.record.id, round(h.score, 9)) for h in searcher.search(q.text, k=10).hits]
    assert differs > 0


# --------------------------------------------------------------------------- fitting


def _synthetic(n: int = 400, seed: int = 0) -> list[fit_mod.FusionCase]:
    """Cases where overlap10 says which share wins: high overlap -> BM25-heavy is better."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = float(rng.random())
        good_hi = x > 0.5
        metric = {w: (w if good_hi else 1 - w) * 0.5 + 0.25 for w in fit_mod.GRID}
        feats = {name: float(rng.normal()) for name in adaptive.FEATURES}
        feats["overlap10"] = x
        out.append(fit_mod.FusionCase(f"syn{i % 2}:q{i}", f"syn{i % 2}", feats, metric))
    return out


def test_fit_learns_the_direction_that_ranks_better():
    cases = _synthetic()
    model = fit_mod.fit([c for c in cases if c.half == "tune"], features=("overlap10", "dense_top1"), lo=0.2, hi=0.7)
    assert model.coef[0] > 0
    report = [c for c in cases if c.half == "report"]
    got = fit_mod.per_dataset(report, lambda cs: fit_mod.shares(cs, model))
    fixed = fit_mod.per_dataset(report, lambda cs: np.full(len(cs), 0.4))
    assert all(got[d] > fixed[d] + 0.05 for d in got)


def test_the_report_half_never_shapes_the_model():
    cases = _synthetic()
    noisy = [c if c.half == "tune" else fit_mod.FusionCase(c.key, c.dataset, c.features,
                                                           {w: 1.0 - v for w, v in c.metric.items()})
             for c in cases]
    a = fit_mod.fit_and_choose(cases, base_share=0.4, features=("overlap10",))
    b = fit_mod.fit_and_choose(noisy, base_share=0.4, features=("overlap10",))
    assert a["model"] == b["model"] and a["trials"] == b["trials"]
    assert a["report"]["adaptive"] != b["report"]["adaptive"]


def test_case_interpolates_between_grid_shares():
    c = fit_mod.FusionCase("d:q", "d", {}, {w: w for w in fit_mod.GRID})
    assert c.at(0.25) == pytest.approx(0.25) and c.at(-1) == 0.0 and c.at(2) == 1.0
    assert fit_mod.FusionCase.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_collect_cases_scores_every_share_through_the_search_path(mini):
    cfg = SearchConfig.from_dict(HASHING)
    cases = fit_mod.collect_cases([mini], cfg, show_progress=False)
    judged = [q for q in mini.queries if q.answerable and mini.qrels.get(q.id)]
    assert len(cases) == len(judged)
    # at the shipped share the cases reproduce the eval's own nDCG@10 of those queries
    from searchkit.evaluate.run import evaluate_dataset

    rep = evaluate_dataset(mini, cfg.replace(**{"fusion.weights": {"bm25": 0.4, "dense": 0.6}}), show_progress=False)
    from searchkit.evaluate.metrics import per_query_metrics

    qrels = {q.id: dict(mini.qrels[q.id]) for q in judged}
    want = per_query_metrics(qrels, rep.run(), ["nDCG@10"])
    for c in cases:
        assert c.metric[0.4] == pytest.approx(want[c.key.split(":", 1)[1]]["nDCG@10"], abs=1e-9)
    assert {half_of(c.key) for c in cases} == {"tune", "report"}


def test_cli_writes_a_config_that_loads_and_reuses_the_cases(tmp_path, capsys):
    from searchkit.cli import main

    base = tmp_path / "base.json"
    base.write_text(json.dumps(HASHING))
    cases, out = tmp_path / "cases.json", tmp_path / "tuned.json"
    assert main(["tune", "adaptive-fusion", "--dataset", "mini", "--config", str(base), "--cases", str(cases),
                 "--out", str(out), "--quiet"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert SearchConfig.load(out).fusion.adaptive is not None
    assert set(first["report"]) == {"fixed", "adaptive", "bm25", "dense", "oracle"}
    assert main(["tune", "adaptive-fusion", "--config", str(base), "--cases", str(cases), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == first["model"]
    assert main(["tune", "adaptive-fusion", "--config", str(base), "--cases", str(cases), "--features", "nosuch"]) != 0
    err = capsys.readouterr().err
    assert "nosuch" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
