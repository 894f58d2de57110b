"""Who said it: attribution evidence for questions about conversations (H11 in long chats).

Chat records hold one message per line, ``Speaker: text`` (the workspace loader writes
``author: text``; LoCoMo's sessions read the same). A question that names a person ("What did
Caroline realise after her charity race?") is about what *that* person said or did. When the lines
of the top records that best match the rest of the question were said by someone else, the space
most likely has no record of it: the classic near miss of a long two-person chat, where the event
is real but belongs to the other speaker.

A line is attributed to the one who *said* it, never to a person it merely mentions: in a
two-person chat each speaker addresses the other by name ("Wow, Caroline, I ran a charity race!"),
so a mention says nothing about whose event it is. Prose without a ``Speaker:`` head (a digest of a
chat: "Melanie ran a charity race; Caroline ...") is split into sentences, and a sentence belongs
to the first speaker it names (its subject, in the digests' plain style); a sentence naming no
speaker belongs to no one.

``Speakers.from_records`` learns the speaker names of a corpus (a name heading a line in at least
``MIN_LINES`` lines); ``attribution`` gives, for one search:

- ``speaker_named``: the best match (share of the question's other terms, weighted) among the
  lines and sentences of a person the question names; ``speaker_other``: the best match among
  those of the other speakers;
- ``speaker_gap``: the first minus the second (negative: the evidence is someone else's);

all 0, with ``speaker_query`` 0, when the question names no speaker of the corpus.
"""
from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from searchkit.analyze import Analyzer
    from searchkit.ports import Corpus

MIN_LINES = 3
"""A name must head at least this many lines of the corpus to count as a speaker."""

_LINE = re.compile(r"^\s*([^\W\d_][^:：\n]{0,40}?)\s*[:：]\s+(\S.*)$")
_MAX_LINES = 400


@dataclass(frozen=True)
class Speakers:
    """Speaker names of a corpus, as the analyzer's tokens of each name."""

    names: Mapping[str, tuple[str, ...]]
    passage_owners: dict[int, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)
    """A searcher's cache: passage row -> ``whose`` it is under these speakers."""

    @classmethod
    def from_records(cls, texts: Iterable[str], tokens: Callable[[str], list[str]]) -> "Speakers":
        return cls.from_heads((line_heads(text) for text in texts), tokens)

    @classmethod
    def from_heads(cls, heads: Iterable[Sequence[tuple[str, int]]], tokens: Callable[[str], list[str]]) -> "Speakers":
        """``from_records`` from each record's ``line_heads`` (in the records' order)."""
        counts: Counter[str] = Counter()
        for pairs in heads:
            for name, n in pairs:
                counts[name] += n
        names = {}
        for name, n in counts.items():
            toks = tuple(tokens(name))
            if n >= MIN_LINES and toks:
                names[name] = toks
        return cls(names)

    @cached_property
    def by_token(self) -> Mapping[str, str]:
        """A token of a speaker's name -> that speaker (the first listed wins a shared token)."""
        out: dict[str, str] = {}
        for name, toks in self.names.items():
            for t in toks:
                out.setdefault(t, name)
        return out

    def in_query(self, query_tokens: Sequence[str]) -> set[str]:
        """The speakers the question names (every token of the name among the query's)."""
        q = set(query_tokens)
        return {name for name, toks in self.names.items() if set(toks) <= q}


def line_heads(text: str) -> tuple[tuple[str, int], ...]:
    """The person-like names heading lines of ``text`` (``Name: text``), each with its count, in
    the order they first appear: what ``Speakers.from_records`` counts of one record."""
    counts: Counter[str] = Counter()
    for line in text.splitlines()[:_MAX_LINES * 10]:
        m = _LINE.match(line)
        if m and _speaker_like(m.group(1).strip()):
            counts[m.group(1).strip()] += 1
    return tuple(counts.items())


_HEADS: "WeakKeyDictionary[Any, list[tuple[tuple[str, int], ...]]]" = WeakKeyDictionary()


def record_heads(searcher: Corpus) -> list[tuple[tuple[str, int], ...]]:
    """``line_heads`` of each of ``searcher.records``, read once per Searcher (a search's speakers
    are learned over the records of its scope: summing these is a pass over the scope's records,
    not over their text)."""
    heads = _HEADS.get(searcher)
    if heads is None:
        heads = [line_heads(r.text) for r in searcher.records]
        with _MEMOS_LOCK:
            heads = _HEADS.setdefault(searcher, heads)
    return heads


LABELS = frozenset({
    "asked", "done", "left", "decided", "chat", "table", "title", "note", "notes", "summary", "status", "date",
    "subject", "from", "to", "re", "q", "a", "answer", "question", "todo", "fixme", "warning", "error", "info",
    "debug", "tip", "example", "source", "url", "tags", "id", "attachments", "tool",
    # a digest's parts as Russian and Japanese digests write them (asked / done / left / decided)
    "спросили", "вопрос", "сделано", "осталось", "решили", "решение", "автоматический запуск",
    "依頼", "質問", "実施", "残り", "決定",
})
"""Words that head ``Word: text`` lines without being people (digest parts, table footers, notes)."""


def _speaker_like(name: str) -> bool:
    """A person-like name: at most three words, starting with a capital letter (or a letter of a
    script without case), not a field label."""
    words = name.split()
    first = name[:1]
    return (0 < len(words) <= 3 and name.casefold() not in LABELS
            and (first.isupper() or (first.isalpha() and not first.islower())))


def attribution(
    query_tokens: Sequence[str],
    passages: Sequence[str],
    speakers: Speakers,
    tokens: Callable[[str], list[str]],
    weights: Mapping[str, float] | None = None,
    lines: Sequence[Sequence[Any] | None] | None = None,
) -> dict[str, float]:
    """``speaker_query``, ``speaker_named``, ``speaker_other`` and ``speaker_gap`` (module doc)
    over the lines of ``passages`` (passages of the top records). ``lines`` (one per passage, or
    None) are their lines as the index analysed them (``searchkit.rank.lines``): the same result,
    without analysing them again."""
    named = speakers.in_query(query_tokens)
    if not named:
        return {"speaker_query": 0.0, "speaker_named": 0.0, "speaker_other": 0.0, "speaker_gap": 0.0}
    name_tokens = {t for n in named for t in speakers.names[n]}
    content = set(query_tokens) - name_tokens
    w = {t: (weights or {}).get(t, 1.0) for t in content}
    total = sum(w.values()) or 1.0
    best_named = best_other = 0.0
    for who, body_tokens in _attributed(passages, speakers, tokens, lines=lines):
        match = sum(w[t] for t in content & set(body_tokens)) / total
        if who in named:
            best_named = max(best_named, match)
        else:
            best_other = max(best_other, match)
    return {"speaker_query": 1.0, "speaker_named": best_named, "speaker_other": best_other,
            "speaker_gap": best_named - best_other}


def said_by_named(
    query_tokens: Sequence[str],
    texts: Sequence[str],
    speakers: Speakers,
    tokens: Callable[[str], list[str]],
) -> list[bool | None]:
    """For each text (a record's passage, without its title line): True when everything in it that
    belongs to a speaker (its ``Speaker:`` lines, the sentences of its prose that name one) belongs
    to a person the question names, False when it all belongs to other speakers, None when it mixes
    both or belongs to no one (a two-person session, plain prose). All None when the question names
    no speaker: the ``fusion.speaker`` ranking stage moves only records of one other speaker.
    """
    named = speakers.in_query(query_tokens)
    if not named:
        return [None] * len(texts)
    return [said_by(named, whose(text, speakers, tokens)) for text in texts]


def whose(text: str, speakers: Speakers, tokens: Callable[[str], list[str]],
          lines: Sequence[Any] | None = None) -> frozenset[str]:
    """The speakers something in ``text`` belongs to (its ``Speaker:`` lines, the first-named
    speaker of each sentence of its prose); a caller may keep it per passage. ``lines``: the
    text's lines as the index analysed them (``attribution``)."""
    return frozenset(who for who, _ in _attributed([text], speakers, tokens, bodies=False, lines=[lines]))


def said_by(named: set[str] | frozenset[str], owners: frozenset[str]) -> bool | None:
    """``said_by_named`` of one text from its owners (``whose``)."""
    if not owners or not named:
        return None
    if owners <= named:
        return True
    return False if owners.isdisjoint(named) else None


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


def _attributed(passages: Sequence[str], speakers: Speakers, tokens: Callable[[str], list[str]],
                bodies: bool = True, lines: Sequence[Sequence[Any] | None] | None = None,
                ) -> Iterable[tuple[str, list[str]]]:
    """``(speaker, tokens)`` for each line said by a known speaker, and for each sentence of the
    other lines that names one (its first-named speaker). ``bodies`` False: a speaker's line is
    not analysed (its tokens come back empty), for a caller that asks only whose it is.
    ``lines[i]`` (when given and not None): the entries of ``passages[i]``'s lines, ``(head,
    tokens of what the speaker said or None, tokens of each sentence or None)``
    (``searchkit.rank.lines``); a part that is None is analysed here, as without them."""
    first_token = speakers.by_token
    for i, text in enumerate(passages):
        all_lines = text.splitlines()[:_MAX_LINES]
        known = lines[i] if lines is not None else None
        if known is not None and len(known) != len(all_lines):
            known = None  # not this text's lines: analysed here
        for j, line in enumerate(all_lines):
            m = None
            if known is not None:
                head, body, sentences = known[j]
            else:
                m = _LINE.match(line)
                head, body, sentences = (m.group(1).strip() if m else None), None, None
            if head is not None and head in speakers.names:
                if not bodies:
                    yield head, []
                else:
                    if body is None:
                        said = m or _LINE.match(line)
                        assert said is not None  # a known speaker's line: _LINE matched it (head)
                        body = tokens(said.group(2))
                    yield head, body
                continue
            for toks in (sentences if sentences is not None else map(tokens, _SENTENCE.split(line))):
                who = next((first_token[t] for t in toks if t in first_token), None)
                if who is not None:
                    yield who, toks


TOKEN_MEMO = 32_768
"""Line and sentence texts whose tokens a ``TokenMemo`` keeps (the oldest eighth leaves when full)."""


class TokenMemo:
    """``tokens(text)`` remembered for the last ``TOKEN_MEMO`` texts: who said a line and what its
    sentences hold is read off the best passages of every search (the speaker and evidence stages,
    each sentence analysed), and the same passages come back search after search. A pure function
    remembered: the tokens are the analyzer's own (a fresh list each call); thread-safe."""

    def __init__(self, tokens: Callable[[str], list[str]], size: int = TOKEN_MEMO) -> None:
        self._tokens, self._size = tokens, max(8, int(size))
        self._memo: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> list[str]:
        hit = self._memo.get(text)
        if hit is None:
            hit = tuple(self._tokens(text))
            with self._lock:
                if len(self._memo) >= self._size:
                    for old in list(islice(self._memo, self._size // 8)):
                        del self._memo[old]
                self._memo[text] = hit
        return list(hit)


_MEMOS: "WeakKeyDictionary[Any, TokenMemo]" = WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


class Analysed(Protocol):
    """A Searcher (a layer above) as ``query_tokens_of`` reads it: its analyzer."""

    @property
    def analyzer(self) -> Analyzer: ...


def query_tokens_of(searcher: Analysed) -> TokenMemo:
    """The ``TokenMemo`` of ``searcher.analyzer.query_tokens``, one per Searcher (it leaves with it)."""
    memo = _MEMOS.get(searcher)
    if memo is None:
        with _MEMOS_LOCK:
            memo = _MEMOS.get(searcher)
            if memo is None:
                memo = _MEMOS[searcher] = TokenMemo(searcher.analyzer.query_tokens)
    return memo


SHAPES: tuple[str, ...] = ("documents", "conversation")
"""The weak-match models: ``documents`` (``WeakMatchConfig`` itself) and ``conversation``
(``WeakMatchConfig.conversation``)."""


def evidence_shape(kinds: Sequence[str], conversation_kinds: Iterable[str], depth: int, share: float, *,
                   speaker_named: bool = True, needs_speaker: bool = False) -> str:
    """Which weak-match model reads one search's evidence, by what the evidence *is*: the kinds of
    the records the top results come from (``kinds``, best first). ``conversation`` when at least
    ``share`` of the first ``depth`` of them are of ``conversation_kinds`` (chats and the digests of
    their turns) and, with ``needs_speaker``, the question names a speaker of those conversations
    (``speaker_named``: the who-said-it evidence the conversation model reads exists); else
    ``documents`` (app rows, files, logs, pages, sources, dataset documents; no results at all). The
    rule reads record kinds, never the text: a table row's ``column: value`` lines or a digest's
    ``Asked:`` line do not make a workspace a chat log."""
    top = list(kinds)[:max(1, int(depth))]
    if not top or (needs_speaker and not speaker_named):
        return "documents"
    wanted = set(conversation_kinds)
    said = sum(1 for k in top if k in wanted)
    return "conversation" if said / len(top) >= share else "documents"


def best_passage_texts(passages: Sequence[Any], rows: Sequence[int]) -> list[str]:
    """The text of each passage row (helper for the Searcher)."""
    return [passages[int(r)].text for r in rows]
