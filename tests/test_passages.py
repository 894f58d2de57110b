import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.passages import make_passages, split_passages
from searchkit.records import Passage, Record


def _pieces(text, spans):
    return [text[a:b] for a, b in spans]


def test_short_text_is_one_span():
    assert split_passages("Hello world.", 50) == [(0, 12)]
    assert split_passages("", 50) == []


def test_paragraphs_packed_greedily_and_never_straddled():
    p1, p2, p3 = "a" * 30 + "\n\n", "b" * 15 + "\n\n", "c" * 40
    text = p1 + p2 + p3  # 32 + 17 + 40
    # p1+p2 = 49 fits in 60; adding p3 would not, and p3 starts a new passage
    assert _pieces(text, split_passages(text, 60)) == [p1 + p2, p3]


def test_long_paragraph_cut_at_sentence_ends():
    sent = "Short sentence here. "  # 21 chars
    para = sent * 5  # 105 chars, one paragraph
    text = para + "\n\n" + "Tail."
    spans = split_passages(text, 50)
    # two sentences (42) fit, three (63) do not; the paragraph's rest stays on its own
    assert _pieces(text, spans) == [sent * 2, sent * 2, sent + "\n\n", "Tail."]


def test_japanese_sentence_ends():
    s = "満月の周期を計算するスクリプトを書いた。"  # 20 chars
    text = s * 4
    assert _pieces(text, split_passages(text, 50)) == [s * 2, s * 2]


def test_newline_is_a_sentence_end():
    line = "x" * 29 + "\n"  # 30 chars
    text = line * 3
    assert _pieces(text, split_passages(text, 60)) == [line * 2, line]


def test_whitespace_then_hard_cut():
    words = "word " * 30  # 150 chars, no sentence end
    assert _pieces(words, split_passages(words, 52)) == ["word " * 10, "word " * 10, "word " * 10]
    run = "x" * 120
    assert split_passages(run, 50) == [(0, 50), (50, 100), (100, 120)]


def test_decimal_point_is_not_a_sentence_end():
    text = "Version 2.3.1 costs 3.14 units and " * 3  # 105 chars, cuts only at spaces
    spans = split_passages(text, 50)
    assert all(text[b - 1] == " " for _, b in spans[:-1])
    assert "2.3.1" in text[spans[0][0] : spans[0][1]]


@pytest.mark.parametrize("bad", [49, 0, -5, 10.5, "1500", True])
def test_bad_max_chars(bad):
    with pytest.raises(ValueError, match="max_chars"):
        split_passages("text", bad)


text_strategy = st.lists(
    st.sampled_from(list("ab ю日。.!?\n\t") + ["\n\n", "  ", "word " * 12, "x" * 70]),
    max_size=300,
).map("".join)


@given(text_strategy, st.integers(50, 300))
@settings(max_examples=300, deadline=None)
def test_spans_cover_text_in_order(text, max_chars):
    spans = split_passages(text, max_chars)
    if not text:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(0 < b - a <= max_chars for a, b in spans)
    assert split_passages(text, max_chars) == spans  # deterministic


def test_make_passages_title_prefix_and_offsets():
    body = ("First paragraph. " * 4) + "\n\n" + ("Second one. " * 4)
    rec = Record(id="r1", title="Notes", text=body)
    ps = make_passages(rec, max_chars=70)
    spans = split_passages(body, 70)
    assert [(p.start, p.end) for p in ps] == spans
    assert [p.index for p in ps] == list(range(len(spans)))
    for p in ps:
        assert p.record_id == "r1"
        assert p.text == "Notes\n" + body[p.start : p.end]
    plain = make_passages(rec, max_chars=70, title_prefix=False)
    assert [p.text for p in plain] == [body[a:b] for a, b in spans]


def test_make_passages_without_title_or_text():
    assert make_passages(Record(id="r", text="abc")) == [Passage("r", 0, "abc", 0, 3)]
    assert make_passages(Record(id="r", title="Only a title")) == [Passage("r", 0, "Only a title", 0, 0)]
    assert make_passages(Record(id="r")) == []
    with pytest.raises(TypeError, match="Record"):
        make_passages({"id": "r", "text": "abc"})


def test_punctuation_only_text_is_cut_hard():
    text = "." * 5000 + "!" * 5000
    assert split_passages(text, 1000) == [(a, a + 1000) for a in range(0, 10000, 1000)]
