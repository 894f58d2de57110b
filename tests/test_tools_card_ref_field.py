"""Issue 39 item 12(a): a ref holding `` · `` (a file path may) no longer breaks the card line
``N. kind · date · title · ref (space: slug)``.

A title's middle dot is shown as a bullet; a ref cannot be changed (the caller passes it to
chat_read / app_row), so a ref that holds a middle dot (U+00B7 or U+0387), a backtick or
`` (space: `` is shown as a markdown code span: the ref is the span's content, exactly (the
backtick fence is longer than any run of backticks in the ref; one space pads each side when the
ref starts or ends with a backtick, as CommonMark reads it). Every other ref is shown as it is, and
``to_dict()["ref"]`` is always the bare ref. Hashing embedder."""
import json
import re
import shutil
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.records import Hit, Passage, Record, Result
from searchkit.tools.cards import Card, ref_field, render
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
HASHING = ROOT / "tests" / "data" / "hashing.json"

_SPAN = re.compile(r"(`+)( ?)(.*?)\2\1(?!`)")


def card_fields(line: str) -> tuple[str, str, str, str, str]:
    """``(kind, date, title, ref, space)`` of a card line, reading a code span as a reader would:
    `` · `` inside it separates nothing, its content is the ref."""
    m = re.match(r"\d+\. (.*) \(space: ([^()]*)\)$", line)
    assert m, line
    body, space = m.groups()
    spans: list[str] = []

    def hide(s: re.Match) -> str:
        spans.append(s.group(3))
        return f"\x00{len(spans) - 1}\x00"

    fields = _SPAN.sub(hide, body).split(" · ")
    assert len(fields) == 4, (line, fields)
    kind, date, title, ref = (re.sub(r"\x00(\d+)\x00", lambda x: spans[int(x.group(1))], f) for f in fields)
    return kind, date, title, ref, space


def _card(ref: str, title: str = "t", kind: str = "file") -> Card:
    r = Record(id=f"s/{kind}:{ref}", kind=kind, space="acme", date="2026-11-02", title=title, ref=ref, text="body")
    return Card(Hit(record=r, score=1.0, rank=1, passage=Passage(r.id, 0, "body", 0, 4)), "body")


@pytest.mark.parametrize("ref", [
    "notes/a · b.md", "notes/a·b.md", "notes/a\u0387b.md", "app:t · x#1", "notes/`tick` · x.md", "`edge`.md",
    "notes/a (space: legal).md", "notes/plain.md", "chat:ses_4f2a", "app:tasks#55", "notes/a - b.md",
])
def test_the_card_line_has_four_fields_and_its_ref_field_is_the_ref(ref):
    text = render(Result(query="q", hits=()), [_card(ref, title="Итоги · Q3")], "ru")
    fields = card_fields(text.splitlines()[0])
    assert fields == ("file", "2026-11-02", "Итоги • Q3", ref, "acme")
    plain = "·" not in ref and "\u0387" not in ref and "`" not in ref and "(space:" not in ref
    assert (ref_field(ref) == ref) == plain  # only a ref that could be misread is quoted


def test_a_file_whose_path_holds_a_middle_dot_end_to_end(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    (ws / "acme" / "notes" / "Итоги · Q3.md").write_text("# Итоги квартала\n\nСводка по зебрам за квартал.\n",
                                                         encoding="utf-8")
    idx = HistoryIndex.build(ws, SearchConfig.load(HASHING), cache=EmbeddingCache(None)).save(tmp_path / "h.index")
    args = ["history", "сводка по зебрам", "--index", str(idx), "--caller", "u-anna", "--space", "acme",
            "--kinds", "file"]
    assert main(args) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if re.match(r"\d+\. ", ln)]
    assert main([*args, "--json"]) == 0
    cards = json.loads(capsys.readouterr().out)["cards"]
    assert "notes/Итоги · Q3.md" in [c["ref"] for c in cards]  # the bare ref, as chat_read / app_row take it
    assert [card_fields(ln)[3] for ln in lines] == [c["ref"] for c in cards]
    assert "`notes/Итоги · Q3.md`" in "\n".join(lines)
