"""Who said each line, analysed once per index version (issue 30; SPEC H11, H3).

The speaker and evidence stages (:mod:`searchkit.rank.conversation`) read the lines of the top
passages of every search: the ``Speaker:`` head of each line, the analyzer's tokens of what the
speaker said, and the tokens of each sentence of the other lines (whose first-named speaker owns
it). At query time that is the analysis of a few hundred new lines per search, the largest part of
a served search. ``LineAnalysis`` holds it for every passage of an index, computed when the index
is built (``build``; an update keeps what the version before computed for a passage whose text is
the same, ``previous``) and saved with the version (``to_bytes``; ``load_line_analysis`` reads it back).

What it holds is what the stages would compute, line for line: for each line of a passage's text
(``text.splitlines()[:MAX_LINES]``), its head (the name before ``:`` when the line has the
``Speaker: text`` shape), and either the tokens of the speaker's text (when the head is a speaker of
the whole corpus: a speaker of any search's scope is one) or the tokens of each sentence (every
other line). The part a search needs that was not computed (a head that is no speaker in that
scope) is computed by the stage as before, so the answers are the same with or without it. The
tokens are held as ids of a vocabulary made of the live passages' tokens only: what leaves the
index leaves the analysis (H3).

A passage is read two ways: whole (``Passage.text``, its title line first: the evidence stage) and
as its own slice of the record (the speaker stage); ``entries(row, whole=False)`` gives the slice's
lines when they are the whole text's after its title lines (checked at build), else None (the
stage analyses that slice itself).
"""
from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from array import array
import os
from typing import IO, TYPE_CHECKING, Any, Callable, Container, Iterable, Protocol, Sequence

import numpy as np

from searchkit.errors import SearchkitError
from searchkit.ports import Corpus
from searchkit.rank.conversation import _LINE, _MAX_LINES, _SENTENCE
from searchkit.util import open_regular

if TYPE_CHECKING:
    import numpy.typing as npt

    from searchkit.analyze import Analyzer

FORMAT = "searchkit.line-analysis"
FORMAT_VERSION = 1
FILE_NAME = "line_analysis.npz"
"""The analysis's file in an index version."""
DECODED_ROWS = 16_384
"""Passages whose decoded lines a ``LineAnalysis`` keeps (the oldest eighth leaves when full)."""

BUILD_MEMO = 65_536
"""Lines a build remembers the entry of (a record's title line heads each of its passages; a chat
repeats its short lines): cleared when full, so a build's memory follows the index, not its text."""

Entry = tuple[str | None, list[str] | None, list[list[str]] | None]
"""One line: its head (None: not a ``Name: text`` line), the tokens of the speaker's text (None:
not computed) and the tokens of each sentence (None: not computed)."""


def rules() -> str:
    """What the analysis depends on besides the analyzer (which the index's fingerprint pins): the
    line and sentence patterns, the line cap and this format."""
    h = hashlib.sha256(json.dumps([FORMAT, FORMAT_VERSION, _LINE.pattern, _SENTENCE.pattern, _MAX_LINES]).encode())
    return h.hexdigest()


def analyse_line(line: str, tokens: Callable[[str], list[str]], speakers: Container[str]) -> Entry:
    """The entry of one line; ``speakers`` (a container of names) are the corpus's speakers: a line
    headed by one keeps the tokens of what was said, every other line those of its sentences."""
    m = _LINE.match(line)
    head = m.group(1).strip() if m else None
    if m and head in speakers:
        return head, list(tokens(m.group(2))), None
    return head, None, [list(tokens(s)) for s in _SENTENCE.split(line)]


def _same_part(entry: Entry, speakers: Container[str]) -> bool:
    """Whether a kept entry holds the part ``analyse_line`` computes under ``speakers`` (an update
    keeps an entry only then: the version is the one a fresh build makes)."""
    head, body, sentences = entry
    return body is not None if head is not None and head in speakers else sentences is not None


def slice_skip(whole: str, part: str) -> int:
    """How many leading lines of ``whole`` (a passage's text: its title line(s), then ``part``, its
    slice of the record) come before ``part``'s: ``k`` when ``whole``'s capped lines are exactly
    ``k`` lines then ``part``'s capped lines (so ``entries(row)[k:]`` are ``part``'s), else -1."""
    lines, own = whole.splitlines()[:_MAX_LINES], part.splitlines()
    k = len(lines) - len(own)
    if k < 0 or len(own) > _MAX_LINES or lines[k:] != own:
        return -1
    return k


class LinesSource(Corpus, Protocol):
    """A Searcher (a layer above) as ``analyse_searcher`` reads it."""

    @property
    def analyzer(self) -> Analyzer: ...

    @property
    def line_analysis(self) -> LineAnalysis | None: ...

    def speakers(self, scope: np.ndarray | None = None) -> Any: ...


def analyse_searcher(searcher: LinesSource, previous: LinesSource | None = None, *,
                     show_progress: bool = False) -> "LineAnalysis":
    """The analysis of a Searcher's passages (``Searcher.analyse_lines``): its analyzer's query
    tokens, the speakers of all its records; ``previous`` (a Searcher of the version before, under
    the same analyzer) lends the entries of its passages whose text is unchanged."""
    from tqdm.auto import tqdm

    prev = None
    if previous is not None and previous.line_analysis is not None and previous.analyzer == searcher.analyzer:
        prev = (previous.line_analysis, [p.text for p in previous.passages])
    records, owner = searcher.records, searcher.passage_record
    slices = [records[owner[i]].text[p.start:p.end] for i, p in enumerate(searcher.passages)]
    return LineAnalysis.build(
        [p.text for p in searcher.passages], slices, searcher.analyzer.query_tokens, searcher.speakers(None).names,
        prev, lambda rows: tqdm(rows, desc="who said what", unit="passage", disable=not show_progress),
    )


def load_line_analysis(path: str | os.PathLike[str], rows: int) -> "LineAnalysis | None":
    """The line analysis an index version keeps; None when it has none (an index built before
    it), a damaged one or one of other rules: the stages then analyse the lines themselves."""
    try:
        with open_regular(path, "rb") as fh:
            return LineAnalysis.from_file(fh, rows)
    except (OSError, SearchkitError):
        return None


class LineAnalysis:
    """The line entries of every passage of one index version (module doc)."""

    def __init__(self, arrays: dict[str, np.ndarray], vocab: list[str], heads: list[str]) -> None:
        self.row_lines = arrays["row_lines"]  # int64 [rows + 1]: each passage's lines
        self.row_skip = arrays["row_skip"]  # int32 [rows]: title lines before the slice's, -1: none
        self.row_toks = arrays["row_toks"]  # int64 [rows + 1]: each passage's tokens
        self.line_head = arrays["line_head"]  # int32 [lines]: head id, -1: no head
        self.line_body = arrays["line_body"]  # int64 [lines, 2]: token span, (-1, -1): not computed
        self.line_sents = arrays["line_sents"]  # int64 [lines, 2]: sentence span, (-1, -1): not computed
        self.sent_toks = arrays["sent_toks"]  # int64 [sentences, 2]: token span
        self.toks = arrays["toks"]  # int32 [tokens]: vocabulary ids
        self.vocab, self.heads = vocab, heads
        self._decoded: dict[int, list[Entry]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return int(self.row_lines.shape[0] - 1)

    # -- reading --------------------------------------------------------------------------
    def entries(self, row: int, whole: bool = True) -> list[Entry] | None:
        """The entries of passage ``row``'s lines: of its whole text, or (``whole`` False) of its
        slice of the record; None when they are not known (the caller analyses the text)."""
        if not 0 <= row < len(self):
            return None
        skip = 0 if whole else int(self.row_skip[row])
        if skip < 0:
            return None
        got = self._decoded.get(row)
        if got is None:
            got = self._decode(row)
            with self._lock:
                if len(self._decoded) >= DECODED_ROWS:
                    for old in list(self._decoded)[:DECODED_ROWS // 8]:
                        del self._decoded[old]
                self._decoded[row] = got
        return got[skip:] if skip else got

    def of_rows(self, rows: Sequence[int]) -> "_Rows":
        """``entries(row)`` of each of ``rows``, decoded when a stage first reads it (the evidence
        stage reads none when the question names no speaker)."""
        return _Rows(self, rows)

    def _decode(self, row: int) -> list[Entry]:
        a, b = int(self.row_lines[row]), int(self.row_lines[row + 1])
        t0, t1 = int(self.row_toks[row]), int(self.row_toks[row + 1])
        vocab = self.vocab
        words = [vocab[t] for t in self.toks[t0:t1].tolist()]
        out: list[Entry] = []
        heads, bodies, sents = self.line_head[a:b].tolist(), self.line_body[a:b].tolist(), self.line_sents[a:b].tolist()
        spans = self.sent_toks
        for head, (blo, bhi), (slo, shi) in zip(heads, bodies, sents):
            body = words[blo - t0:bhi - t0] if blo >= 0 else None
            sentences = None
            if slo >= 0:
                sentences = [words[lo - t0:hi - t0] for lo, hi in spans[slo:shi].tolist()]
            out.append((self.heads[head] if head >= 0 else None, body, sentences))
        return out

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(cls, texts: Sequence[str], slices: Sequence[str], tokens: Callable[[str], list[str]],
              speakers: Container[str], previous: "tuple[LineAnalysis, Sequence[str]] | None" = None,
              progress: Callable[[Iterable[int]], Iterable[int]] | None = None) -> "LineAnalysis":
        """The analysis of passages whose whole texts are ``texts`` and slices ``slices``, with
        ``tokens`` (the analyzer's query tokens) and ``speakers`` (the names of the corpus's
        speakers). ``previous`` (an analysis and the whole texts of its rows) gives the entries of
        a passage whose text it has, as they were computed (the same, for the same speakers;
        ``analyse_line``'s choice of part follows the speakers the entries were made with, and a
        stage computes any other part it needs)."""
        known: dict[str, int] = {}
        if previous is not None:
            prev, prev_texts = previous
            known = {t: i for i, t in enumerate(prev_texts)}
        memo: dict[str, Entry] = {}
        w = _Writer()
        rows = range(len(texts))
        for row in (progress(rows) if progress is not None else rows):
            text = texts[row]
            hit = known.get(text)
            kept = prev.entries(hit) if hit is not None else None
            lines = []
            for j, line in enumerate(text.splitlines()[:_MAX_LINES]):
                e = kept[j] if kept is not None and j < len(kept) and _same_part(kept[j], speakers) else memo.get(line)
                if e is None:
                    e = analyse_line(line, tokens, speakers)
                    if len(memo) >= BUILD_MEMO:
                        memo.clear()
                    memo[line] = e
                lines.append(e)
            w.add(lines, slice_skip(text, slices[row]))
        return w.done(cls)

    # -- persistence ----------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The analysis as an ``.npz`` (no pickles): its arrays, vocabulary, heads and rules."""
        meta = json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "rules": rules(), "vocab": self.vocab,
                           "heads": self.heads}, ensure_ascii=False).encode("utf-8")
        arrays = {"meta": np.frombuffer(meta, dtype=np.uint8), "row_lines": self.row_lines, "row_skip": self.row_skip,
                  "row_toks": self.row_toks, "line_head": self.line_head, "line_body": self.line_body,
                  "line_sents": self.line_sents, "sent_toks": self.sent_toks, "toks": self.toks}
        buf = io.BytesIO()
        # np.savez's members carry the time of writing: these carry a fixed one, so the same
        # analysis is the same bytes (an update's version is a fresh build's, byte for byte)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
            for name, array in arrays.items():
                with zf.open(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), "w",
                             force_zip64=True) as fh:
                    np.lib.format.write_array(fh, np.ascontiguousarray(array), allow_pickle=False)
        return buf.getvalue()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str] | IO[bytes], rows: int) -> "LineAnalysis | None":
        """The analysis saved at ``path`` for an index of ``rows`` passages; None when there is
        none, or it was made under other rules or is damaged (the stages then analyse the lines
        themselves: the same answers, slower)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            meta = json.loads(arrays.pop("meta").tobytes().decode("utf-8"))
            if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION or meta.get("rules") != rules():
                return None
            out = cls(arrays, list(meta["vocab"]), list(meta["heads"]))
            out._check(rows)
            return out
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile):
            return None

    def _check(self, rows: int) -> None:
        """The arrays' shapes and bounds agree (a damaged file is refused whole, ``ValueError``)."""
        n_lines, n_sents, n_toks = len(self.line_head), len(self.sent_toks), len(self.toks)
        ok = (
            self.row_lines.shape == (rows + 1,) and self.row_toks.shape == (rows + 1,)
            and self.row_skip.shape == (rows,) and self.line_body.shape == (n_lines, 2)
            and self.line_sents.shape == (n_lines, 2) and self.sent_toks.shape[1:] == (2,)
            and int(self.row_lines[0]) == 0 and int(self.row_lines[-1]) == n_lines
            and int(self.row_toks[0]) == 0 and int(self.row_toks[-1]) == n_toks
            and bool(np.all(np.diff(self.row_lines) >= 0)) and bool(np.all(np.diff(self.row_toks) >= 0))
            and (n_toks == 0 or (int(self.toks.min()) >= 0 and int(self.toks.max()) < len(self.vocab)))
            and (n_lines == 0 or int(self.line_head.max()) < len(self.heads))
            and int(self.line_body.max(initial=-1)) <= n_toks and int(self.sent_toks.max(initial=-1)) <= n_toks
            and int(self.line_sents.max(initial=-1)) <= n_sents
            and bool(np.all(self.row_skip <= np.diff(self.row_lines)))
        )
        if not ok:
            raise ValueError("line analysis arrays disagree")


class _Rows:
    """``LineAnalysis.of_rows``: a sequence decoded on reading."""

    def __init__(self, analysis: LineAnalysis, rows: Sequence[int]) -> None:
        self.analysis, self.rows = analysis, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> list[Entry] | None:
        return self.analysis.entries(self.rows[i])


class _Writer:
    """Lays passages' entries out in ``LineAnalysis``'s arrays (a passage's tokens together)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.heads: dict[str, int] = {}
        # compact arrays (a 100k-passage index has tens of millions of tokens), made numpy at the end
        self.row_lines, self.row_toks, self.row_skip = array("q", [0]), array("q", [0]), array("i")
        self.line_head = array("i")
        self.line_body = array("q")  # pairs, flat
        self.line_sents = array("q")
        self.sent_toks = array("q")
        self.toks = array("i")

    def _ids(self, words: list[str], into: "array[int]") -> None:
        lo = len(self.toks)
        vocab = self.vocab
        get = vocab.get
        ids = []
        for w in words:
            i = get(w)
            if i is None:
                i = vocab[w] = len(vocab)
            ids.append(i)
        self.toks.extend(ids)
        into.extend((lo, len(self.toks)))

    def add(self, lines: list[Entry], skip: int) -> None:
        for head, body, sentences in lines:
            self.line_head.append(-1 if head is None else self.heads.setdefault(head, len(self.heads)))
            if body is not None:
                self._ids(body, self.line_body)
            else:
                self.line_body.extend((-1, -1))
            if sentences is None:
                self.line_sents.extend((-1, -1))
            else:
                lo = len(self.sent_toks) // 2
                for sentence in sentences:
                    self._ids(sentence, self.sent_toks)
                self.line_sents.extend((lo, len(self.sent_toks) // 2))
        self.row_lines.append(len(self.line_head))
        self.row_toks.append(len(self.toks))
        self.row_skip.append(skip)

    def done(self, cls: type) -> Any:
        def np_of(a: "array[int]", dtype: npt.DTypeLike, pairs: bool = False) -> np.ndarray:
            out = np.frombuffer(a, dtype=f"i{a.itemsize}").astype(dtype) if len(a) else np.zeros(0, dtype=dtype)
            return out.reshape(-1, 2) if pairs else out

        arrays = {
            "row_lines": np_of(self.row_lines, np.int64), "row_skip": np_of(self.row_skip, np.int32),
            "row_toks": np_of(self.row_toks, np.int64), "line_head": np_of(self.line_head, np.int32),
            "line_body": np_of(self.line_body, np.int64, True), "line_sents": np_of(self.line_sents, np.int64, True),
            "sent_toks": np_of(self.sent_toks, np.int64, True), "toks": np_of(self.toks, np.int32),
        }
        return cls(arrays, list(self.vocab), list(self.heads))
