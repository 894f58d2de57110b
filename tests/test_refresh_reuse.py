"""The refresh costs what changed (issue 30; SPEC H2, H3).

- BM25: a passage whose text is unchanged keeps its tokens from the previous version (a bag, read
  back from the index: ``BM25Index.doc_tokens``); the index's columns are its terms in sorted order,
  so the index is the same bytes whichever way a document's tokens came;
- reading: the secret checks (``Policy.secret_content``, ``Policy.redact_secrets``) of the texts a
  previous load found clean are answered from the memo the index version keeps
  (``clean_verdicts.json``: sha256 digests of clean texts of the records it holds, nothing else);
- proof: ``index`` then edits then ``index --update`` gives the same bytes as a fresh ``index`` of
  the edited workspace, for edits that matter for privacy (a file deleted, a chat edited, a space's
  history search switched off, a member removed, a file that becomes key material or gets a
  secret); and what was erased is in no file of the new version, the memo included.
"""
from __future__ import annotations

import json
import random
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from searchkit.analyze import Analyzer
from searchkit.config import SearchConfig
from searchkit.index import store
from searchkit.index.bm25 import BM25Index
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest.policy import DEFAULT_POLICY, Policy
from searchkit.ingest.workspace import load_workspace
from searchkit.ingest.workspace import verdicts as verdicts_module
from searchkit.ingest.workspace.verdicts import FILE_NAME, digest, read_memo
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
KEY_BLOCK = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzs0aVq3Zt1N8vQ\n-----END RSA PRIVATE KEY-----\n"


# -- BM25: the index depends on each document's tokens as a bag ----------------------------------

def _arrays(ix: BM25Index) -> dict:
    vocab = [""] * len(ix.vocab)
    for t, c in ix.vocab.items():
        vocab[c] = t
    return {"data": ix.matrix.data.tobytes(), "indices": ix.matrix.indices.tobytes(),
            "indptr": ix.matrix.indptr.tobytes(), "idf": ix.idf.tobytes(), "vocab": vocab,
            "tf": ix._tf.tobytes()}


def test_bm25_columns_are_sorted_and_a_bag_of_the_same_tokens_builds_the_same_index():
    rng = random.Random(7)
    words = [f"w{i}" for i in range(50)] + ["яблоко", "りんご", "Zeta", "alpha"]
    docs = [[rng.choice(words) for _ in range(rng.randint(0, 30))] for _ in range(200)]
    ix = BM25Index.build(docs)
    assert list(ix.vocab) == sorted(ix.vocab) and list(ix.vocab.values()) == list(range(len(ix.vocab)))
    bags = ix.doc_tokens(range(len(docs)))
    assert all(Counter(bags[i]) == Counter(d) for i, d in enumerate(docs))
    shuffled = [rng.sample(d, len(d)) for d in docs]
    assert _arrays(BM25Index.build([bags[i] for i in range(len(docs))])) == _arrays(ix)
    assert _arrays(BM25Index.build(shuffled)) == _arrays(ix)
    part = ix.doc_tokens([5, 3, 3])
    assert set(part) == {3, 5} and part[5] == bags[5]


def test_bm25_doc_tokens_of_an_index_without_term_frequencies_is_none():
    ix = BM25Index.build([["a", "b"], ["b"]])
    ix._tf = None
    assert ix.doc_tokens([0]) is None


# -- the workspace ----------------------------------------------------------------------------------

def _write(path: Path, content) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")


def _chat(ses: str, text: str, **extra) -> dict:
    return {"ses_id": ses, "title": f"chat {ses}", "messages": [
        {"role": "user", "author": "Анна", "ts": "2026-10-21T10:00:00+03:00", "text": text}], **extra}


@pytest.fixture()
def ws(tmp_path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    acme = ws / "acme"
    _write(acme / ".space/chats/ses_zebra.json", _chat("ses_zebra", "обсуждали зебраквокку и выгрузку отчёта"))
    _write(acme / ".space/digests/t_zebra_01.json", {"turn_id": "t_zebra_01", "ses_id": "ses_zebra",
                                                      "ts": "2026-10-22T09:00:00+03:00", "asked": "что с зебраквоккой?"})
    _write(acme / ".space/chats/ses_mine.json", _chat("ses_mine", "мой личный черновик про кенгуру",
                                                        owner="u-anna", visibility="personal"))
    _write(acme / "notes/okapi.md", "# Окапи\n\nПлан по окапи: выгрузка в пятницу.\r\n")
    _write(acme / "notes/with-secret.md", "Доступ к стенду: password: Summer-2026-okapi\nи дальше текст\n")
    return ws


def _version_files(folder: Path) -> dict[str, bytes]:
    version = store.current_dir(folder)
    out = {}
    for path in sorted(version.rglob("*")):
        if path.is_file() and path.name != ".readers":
            data = path.read_bytes()
            if path.name == "indexing_report.json":  # its load time differs; everything else must not
                report = json.loads(data)
                report.pop("loaded_at", None)
                data = json.dumps(report, sort_keys=True).encode()
            out[str(path.relative_to(version))] = data
    return out


def _space_json(ws: Path, slug: str, **change) -> None:
    path = ws / slug / ".space" / "space.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _delete_file(ws: Path) -> None:
    (ws / "acme" / "notes" / "okapi.md").unlink()


def _edit_chat(ws: Path) -> None:
    _write(ws / "acme/.space/chats/ses_zebra.json", _chat("ses_zebra", "обсуждали только выгрузку отчёта"))


def _switch_off(ws: Path) -> None:
    _space_json(ws, "research", history_search=False)


def _remove_member(ws: Path) -> None:
    path = ws / "acme" / ".space" / "space.json"
    members = json.loads(path.read_text(encoding="utf-8"))["members"]
    _space_json(ws, "acme", members=members[:-1])


def _becomes_key_material(ws: Path) -> None:
    _write(ws / "acme/notes/okapi.md", KEY_BLOCK)


def _gets_a_secret(ws: Path) -> None:
    _write(ws / "acme/notes/okapi.md", "# Окапи\n\nПлан по окапи: выгрузка в пятницу.\npassword: Zebra-77-quokka\n")


def _delete_chat_and_row(ws: Path) -> None:
    (ws / "acme/.space/chats/ses_zebra.json").unlink()
    conn = sqlite3.connect(ws / "acme/.space/app.sqlite")
    conn.execute("DELETE FROM tasks WHERE id = (SELECT MIN(id) FROM tasks)")
    conn.commit()
    conn.close()


def _all(ws: Path) -> None:
    for edit in EDITS.values():
        if edit is not _all and edit is not _becomes_key_material:
            edit(ws)


EDITS = {"nothing": lambda ws: None, "file deleted": _delete_file, "chat edited": _edit_chat,
         "history search off": _switch_off, "member removed": _remove_member,
         "becomes key material": _becomes_key_material, "gets a secret": _gets_a_secret,
         "chat and row deleted": _delete_chat_and_row, "all": _all}


def _index(ws: Path, out: Path, cache: Path) -> None:
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(cache))
    idx.save(out)
    idx.searcher.cache.close()


def _refresh(ws: Path, out: Path, cache: Path) -> HistoryIndex:
    """What the refresh child does: load, update, save."""
    idx = HistoryIndex.load(out, CFG, cache=EmbeddingCache(cache))
    idx.update(ws)
    idx.save(out)
    idx.searcher.cache.close()
    return idx


def _count_checks(monkeypatch) -> Counter:
    calls: Counter = Counter()
    for name in ("secret_content", "redact_secrets"):
        real = getattr(Policy, name)

        def counted(self, text, _real=real, _name=name):
            calls[_name] += 1
            return _real(self, text)

        monkeypatch.setattr(Policy, name, counted)
    real_tokens = Analyzer.index_tokens

    def tokens(self, text):
        calls["index_tokens"] += 1
        return real_tokens(self, text)

    monkeypatch.setattr(Analyzer, "index_tokens", tokens)
    return calls


@pytest.mark.parametrize("edit", list(EDITS))
def test_index_edit_update_gives_the_bytes_of_a_fresh_index(ws, tmp_path, edit):
    cache = tmp_path / "cache.sqlite"
    _index(ws, tmp_path / "a", cache)
    EDITS[edit](ws)
    _refresh(ws, tmp_path / "a", cache)
    _index(ws, tmp_path / "b", cache)
    a, b = _version_files(tmp_path / "a"), _version_files(tmp_path / "b")
    assert FILE_NAME in a and "bm25/bm25.npz" in a
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], name


def test_a_refresh_with_nothing_changed_checks_and_analyses_nothing_again(ws, tmp_path, monkeypatch):
    cache = tmp_path / "cache.sqlite"
    _index(ws, tmp_path / "a", cache)
    calls = _count_checks(monkeypatch)
    _refresh(ws, tmp_path / "a", cache)
    # only the file with a secret is checked again (a text with a secret is never in the memo):
    # its content, then its text and title; no passage is analysed again
    assert calls == Counter({"secret_content": 1, "redact_secrets": 2})
    calls.clear()
    _edit_chat(ws)
    _refresh(ws, tmp_path / "a", cache)
    # that file again, and the edited chat's text (its title is unchanged) and its new passage
    assert calls == Counter({"secret_content": 1, "redact_secrets": 3, "index_tokens": 1})


def test_the_same_load_with_and_without_the_memo(ws):
    plain = load_workspace(ws)
    memo = {kind: {d for ds in plain.clean.values() for k, d in ds if k == kind} for kind in ("secret", "redact")}
    again = load_workspace(ws, memo=memo)
    assert again.records == plain.records and again.spaces == plain.spaces
    assert again.report.skips == plain.report.skips and again.report.notes == plain.report.notes
    assert again.clean == plain.clean


def test_the_memo_names_only_clean_texts_of_indexed_records(ws, tmp_path):
    out = tmp_path / "a"
    _index(ws, out, tmp_path / "cache.sqlite")
    memo_file = store.current_dir(out) / FILE_NAME
    assert memo_file.stat().st_mode & 0o777 == 0o600
    memo = read_memo(json.loads(memo_file.read_text()), DEFAULT_POLICY)
    idx = HistoryIndex.load(out, CFG, cache=EmbeddingCache(None))
    texts = {digest(t) for r in idx.searcher.records for t in (r.text, r.title)}
    assert memo["redact"] and memo["secret"]
    assert len(memo["redact"] - texts) < len(memo["redact"])  # record texts and titles, cells besides
    with_secret = (ws / "acme/notes/with-secret.md").read_text(encoding="utf-8")
    assert "password: [redacted]" in next(r.text for r in idx.searcher.records if r.id == "acme/file:notes/with-secret.md")
    for variant in (with_secret, with_secret.strip(), with_secret.replace("\r\n", "\n")):
        assert digest(variant) not in memo["secret"] | memo["redact"]  # a text with a secret is never named
    assert digest(KEY_BLOCK) not in memo["secret"]


def test_what_a_refresh_erases_leaves_the_memo_too(ws, tmp_path):
    out, cache = tmp_path / "a", tmp_path / "cache.sqlite"
    _index(ws, out, cache)
    before = HistoryIndex.load(out, CFG, cache=EmbeddingCache(None))
    gone_ids = {"acme/chat:ses_zebra", "acme/file:notes/okapi.md"}
    gone = {digest(t) for r in before.searcher.records if r.id in gone_ids for t in (r.text, r.title)}
    gone.add(digest((ws / "acme/notes/okapi.md").read_text(encoding="utf-8")))
    memo_file = lambda: json.loads((store.current_dir(out) / FILE_NAME).read_text())  # noqa: E731
    assert gone & read_memo(memo_file(), DEFAULT_POLICY)["redact"]
    (ws / "acme/.space/chats/ses_zebra.json").unlink()
    (ws / "acme/notes/okapi.md").unlink()
    _refresh(ws, out, cache)
    memo = read_memo(memo_file(), DEFAULT_POLICY)
    assert not gone & (memo["redact"] | memo["secret"])
    raw = b"".join(p.read_bytes() for p in store.current_dir(out).rglob("*") if p.is_file())
    for word in ("зебраквокк", "Окапи"):
        assert word.encode() not in raw
    assert [q.name for q in out.iterdir() if q.name.startswith(("v", ".tmp"))] == [store.current_dir(out).name]


def test_a_memo_of_other_rules_or_a_damaged_one_is_not_used(ws, tmp_path, monkeypatch):
    out, cache = tmp_path / "a", tmp_path / "cache.sqlite"
    _index(ws, out, cache)
    path = store.current_dir(out) / FILE_NAME
    data = json.loads(path.read_text())
    assert read_memo(data, Policy(max_depth=5)) == {}  # another policy: other verdicts
    assert read_memo({**data, "rules": "0" * 64}, DEFAULT_POLICY) == {}
    for damaged in ("{", json.dumps({**data, "redact": "x"}), json.dumps({**data, "redact": ["zz" * 32]})):
        path.chmod(0o600)
        path.write_text(damaged)
        calls = _count_checks(monkeypatch)
        _refresh(ws, out, cache)
        assert calls["redact_secrets"] > 10  # everything checked again, and the refresh went on
        monkeypatch.undo()
        path = store.current_dir(out) / FILE_NAME
    _index(ws, tmp_path / "b", cache)
    assert _version_files(out) == _version_files(tmp_path / "b")


def test_the_rules_fingerprint_is_the_same_in_any_process_and_follows_the_policy():
    assert verdicts_module.rules_fingerprint(DEFAULT_POLICY) == verdicts_module.rules_fingerprint(Policy())
    assert verdicts_module.rules_fingerprint(Policy(max_depth=5)) != verdicts_module.rules_fingerprint(DEFAULT_POLICY)
    import subprocess
    import sys

    code = ("from searchkit.ingest.workspace.verdicts import rules_fingerprint as f; "
            "from searchkit.ingest.policy import DEFAULT_POLICY as p; print(f(p))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("1", "2")}
    assert seen == {verdicts_module.rules_fingerprint(DEFAULT_POLICY) + "\n"}


def test_search_answers_after_a_refresh_are_a_fresh_index_answers(ws, tmp_path):
    cache = tmp_path / "cache.sqlite"
    _index(ws, tmp_path / "a", cache)
    _all(ws)
    _refresh(ws, tmp_path / "a", cache)
    _index(ws, tmp_path / "b", cache)
    a = HistoryIndex.load(tmp_path / "a", CFG, cache=EmbeddingCache(cache))
    b = HistoryIndex.load(tmp_path / "b", CFG, cache=EmbeddingCache(cache))
    for query in ("выгрузка отчёта", "окапи", "зебраквокка", "password", "кенгуру"):
        for caller, space in (("u-anna", "acme"), ("u-boris", "research")):
            ans = [i.search(query, caller=caller, container="personal", space=space).to_dict() for i in (a, b)]
            assert ans[0] == ans[1]
    assert np.array_equal(a.searcher.retrievers["dense"].index.vectors, b.searcher.retrievers["dense"].index.vectors) \
        if hasattr(a.searcher.retrievers["dense"].index, "vectors") else True
