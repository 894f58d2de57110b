import json
import re

import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st
from sudachipy import Dictionary, SplitMode

from searchkit.analyze import (
    Analyzer,
    _chunks,
    content_words,
    detect_language,
    extract_identifiers,
    normalize,
    script_runs,
)

BASELINE_STOP = ("助詞", "助動詞", "補助記号", "空白")


# --- NFKC and identifiers ---------------------------------------------------------------------


def test_nfkc_makes_full_width_id_equal_ascii():
    assert normalize("ＡＴＬ－１６５５") == "ATL-1655"
    assert extract_identifiers("ＡＴＬ－１６５５の件") == ["ATL-1655"]
    a = Analyzer()
    assert a.query_tokens("ＡＴＬ－１６５５") == a.query_tokens("ATL-1655")


def test_extract_identifiers_forms_order_and_dedup():
    text = "See ATL-1655 and PR 88, then #412; release v2.3.1. Again atl-1655? ATL-1655 and pr-88, issue #7"
    assert extract_identifiers(text) == ["ATL-1655", "PR-88", "#412", "v2.3.1", "ISSUE-7"]


def test_extract_identifiers_inside_japanese_and_russian():
    assert extract_identifiers("課題#12とＰＲ８８を確認") == ["#12", "PR-88"]
    assert extract_identifiers("Ни одна карточка не упоминает ATL-1655.") == ["ATL-1655"]


def test_extract_identifiers_rejects_lookalikes():
    # lower-case keys, C#-like, HTML entities, plain numbers, a dotted number without v
    assert extract_identifiers("top-10 C#412 &#412; 2024 3.14 e-5 A-1") == []


def test_identifiers_kept_whole_besides_their_parts():
    a = Analyzer()
    assert a.query_tokens("ATL-1655") == ["atl-1655", "atl", "1655"]
    assert a.index_tokens("ATL-1655") == ["atl-1655", "atl", "1655"]
    assert a.query_tokens("PR 88") == ["pr-88", "pr", "88"]
    assert a.query_tokens("#412") == ["#412", "412"]
    assert a.query_tokens("v2.3.1") == ["v2.3.1", "v2", "3", "1"]
    assert Analyzer(keep_identifiers=False).query_tokens("ATL-1655") == ["atl", "1655"]


# --- stemming parity with PyStemmer -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, lang",
    [
        ("Скрипт выгрузки отчётов запускается по понедельникам, отчёты выгружаются в CSV-файлы", "russian"),
        ("The running scripts exported quarterly reports and generalizations", "english"),
    ],
)
def test_stems_equal_pystemmer(text, lang):
    expected_words = re.findall(r"\w+", text.lower())
    stems = Stemmer.Stemmer(lang).stemWords(expected_words)
    route = {"russian": "ru", "english": "en"}[lang]
    assert Analyzer(route=route, keep_identifiers=False).query_tokens(text) == stems
    if lang == "english":
        assert Analyzer().query_tokens(text) == stems
        assert "run" in stems and "report" in stems


def test_script_route_stems_each_run_in_its_language():
    tokens = Analyzer().query_tokens("отчёты running")
    assert tokens == [Stemmer.Stemmer("russian").stemWord("отчёты"), "run"]


def test_stem_off_only_lowercases():
    assert Analyzer(stem=False).query_tokens("Running Отчёты") == ["running", "отчёты"]


# --- Japanese through Sudachi -----------------------------------------------------------------


JA = "東京都庁の選挙管理委員会に行きました。"


def test_japanese_particles_dropped_and_a_units_expanded_at_index_time_only():
    a = Analyzer()
    assert a.query_tokens(JA) == ["東京都庁", "選挙管理委員会", "行く"]
    assert a.index_tokens(JA) == [
        "東京都庁", "東京", "都庁",
        "選挙管理委員会", "選挙", "管理", "委員", "会",
        "行く",
    ]
    assert Analyzer(expand_a_units=False).index_tokens(JA) == a.query_tokens(JA)


def test_split_mode_and_surface_form():
    assert Analyzer(split_mode="A").query_tokens("東京都庁に行きました") == ["東京", "都庁", "行く"]
    assert Analyzer(use_normalized_form=False).query_tokens("東京都庁に行きました") == ["東京都庁", "行き"]


def test_custom_stop_pos_keeps_particles():
    assert Analyzer(stop_pos=("補助記号",)).query_tokens("満月の周期") == ["満月", "の", "周期"]


def _sudachi_baseline(text: str) -> list[str]:
    tok = Dictionary(dict="core").tokenizer(SplitMode.C)
    return [
        m.normalized_form().lower()
        for m in tok.tokenize(text)
        if m.part_of_speech()[0] not in BASELINE_STOP
    ]


JA_SAMPLES = [
    "梅雨（つゆ、ばいう）は、北海道と小笠原諸島を除く日本、朝鮮半島南部、中国の南部から長江流域にかけての"
    "沿海部、および台湾など、東アジアの広範囲においてみられる特有の気象現象で、5月から7月にかけて来る曇り"
    "や雨の多い期間のこと。",
    "ワークスペース内の他のタスクの会話を全文検索します。ＡＴＬ－１６５５の件はPythonで処理した。",
    "国家公務員の給与は、人事院勧告に基づいて決められている！　本当？",
]


def test_japanese_route_equals_direct_sudachi_recipe():
    a = Analyzer(route="ja", expand_a_units=False, keep_identifiers=False)
    for text in JA_SAMPLES:
        assert a.index_tokens(text) == _sudachi_baseline(normalize(text))


def test_long_japanese_text_is_chunked_under_sudachi_limit():
    text = "東京都庁に行く。" * 6000  # 48,000 chars, 144,000 bytes: far over Sudachi's 49,149
    tokens = Analyzer().query_tokens(text)
    assert tokens == ["東京都庁", "行く"] * 6000


@given(st.text(alphabet="あ漢。\n x", max_size=400), st.integers(5, 60))
@settings(max_examples=200, deadline=None)
def test_chunks_cover_text_within_size(text, size):
    pieces = list(_chunks(text, size))
    assert "".join(pieces) == text
    assert all(0 < len(p) <= size for p in pieces)


# --- scripts and language ---------------------------------------------------------------------


def test_script_runs_mixed_text():
    text = "Отчёт ATL-1655 готов: 満月の周期を計算した (v2)."
    assert script_runs(text) == [
        ("ru", "Отчёт "),
        ("en", "ATL-1655 "),
        ("ru", "готов: "),
        ("ja", "満月の周期を計算した ("),
        ("en", "v2)."),
    ]


def test_script_runs_digits_join_and_no_letters():
    assert script_runs("2024年の計画") == [("ja", "2024年の計画")]
    assert script_runs("12 + 30") == [("en", "12 + 30")]
    assert script_runs("") == []


@given(st.text(alphabet=st.sampled_from("aZ яЖ あ漢ー。、1-.\n#ü"), max_size=60))
def test_script_runs_concatenate_back_and_alternate(text):
    runs = script_runs(text)
    assert "".join(r for _, r in runs) == text
    assert all(r for _, r in runs)
    assert all(a[0] != b[0] for a, b in zip(runs, runs[1:]))


@pytest.mark.parametrize(
    "text, lang",
    [
        ("満月の周期の計算", "ja"),
        ("Pythonでデータを処理する手順", "ja"),
        ("Какое оружие использовали в Средние века?", "ru"),
        ("настройка Docker Compose для CI", "ru"),
        ("Сделай PR 88 для ATL-1655", "ru"),
        ("The word 東京 means eastern capital", "en"),
        ("When was the Normandy invasion?", "en"),
        ("", "en"),
        ("12345 !!", "en"),
    ],
)
def test_detect_language(text, lang):
    assert detect_language(text) == lang


def test_mixed_script_tokens():
    tokens = Analyzer().query_tokens("Отчёты ATL-1655: 満月の周期 running")
    assert tokens == [
        Stemmer.Stemmer("russian").stemWord("отчёты"),
        "atl-1655", "atl", "1655",
        "満月", "周期",
        "run",
    ]


# --- content words (T5) -----------------------------------------------------------------------


def test_content_words_splits_at_particles():
    assert content_words("満月の周期の計算") == ["満月", "周期", "計算"]
    assert content_words("ＡＴＬ－１６５５の対応状況について") == ["ATL-1655", "対応状況"]
    assert content_words("サーバーを再起動する手順、サーバー") == ["サーバー", "再起動", "手順"]
    assert content_words("") == []


# --- empty text, parameters -------------------------------------------------------------------


def test_empty_text_gives_no_tokens():
    a = Analyzer()
    for text in ("", "   \n", "。、"):
        assert a.index_tokens(text) == []
        assert a.query_tokens(text) == []
    assert extract_identifiers("") == []


def test_bad_parameters_name_the_culprit():
    with pytest.raises(ValueError, match="split_mode.*'A', 'B', 'C'.*'D'"):
        Analyzer(split_mode="D")
    with pytest.raises(ValueError, match="route"):
        Analyzer(route="de")
    with pytest.raises(ValueError, match="stop_pos"):
        Analyzer(stop_pos="助詞")
    with pytest.raises(ValueError, match="stem"):
        Analyzer(stem="yes")
    with pytest.raises(TypeError):
        Analyzer("C")  # keyword-only
    with pytest.raises(TypeError, match="str"):
        Analyzer().query_tokens(None)


def test_params_are_json_and_distinguish_configs():
    a, b = Analyzer(), Analyzer(expand_a_units=False)
    assert json.loads(json.dumps(a.params())) == a.params()
    assert a.params() != b.params()
    assert a.params()["split_mode"] == "C" and a.params()["stop_pos"] == list(BASELINE_STOP)
    assert Analyzer() == a and hash(Analyzer()) == hash(a)


def test_ascii_text_is_one_english_run_as_the_general_loop_finds():
    """The ASCII shortcut of the script splitter gives what the general loop gives: the same text
    with one non-ASCII Latin letter appended takes the loop and is still one ``en`` run."""
    from searchkit.analyze import _run_spans

    for text in ["", "12 + 30", "Caroline: I went to a support group!", "ATL-1656 v2.3 #412", "  \t\n", "_a_"]:
        assert _run_spans(text) == ([("en", 0, len(text))] if text else [])
        assert _run_spans(text + "é") == [("en", 0, len(text) + 1)]



@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("AaTLPRvV #-._!&1０٣२ ЖИSSUE\n"), max_size=40))
def test_identifier_digit_gate_keeps_every_match(text):
    """``_id_matches`` skips texts without a digit: what it finds is what it finds with the gate
    open (``\\d`` is Unicode's Nd in the gate and in ``_ID_RE``; digits of other scripts included)."""
    from searchkit.analyze import identifiers

    gated = [(m.span(), m.group(0)) for m in identifiers._id_matches(text)]
    saved = identifiers._DIGIT_RE
    identifiers._DIGIT_RE = re.compile("")  # always "found": the pattern tried on every text
    try:
        open_ = [(m.span(), m.group(0)) for m in identifiers._id_matches(text)]
    finally:
        identifiers._DIGIT_RE = saved
    assert gated == open_


def test_identifier_digit_gate_non_ascii_digits():
    """A digit of another script (Arabic-Indic) still opens the pattern, as ``\\d`` reads it."""
    from searchkit.analyze.identifiers import _id_matches
    from searchkit.analyze.scripts import _ID_RE

    text = "see PR #٣٤ and the plan"
    assert [m.group(0) for m in _id_matches(text)] == [m.group(0) for m in _ID_RE.finditer(text)] != []
    assert not list(_id_matches("see the plan for Caroline, no numbers here"))
