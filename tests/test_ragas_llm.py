"""ragas' LLM-judged metrics (issue 31 item 9): faithfulness and answer relevancy of an answer an LLM
writes from the top cards, through an OpenAI-compatible endpoint, off by default. Driven end to end
(the openai client, instructor's JSON mode, ragas 0.4's Faithfulness and AnswerRelevancy) against a
fake endpoint on 127.0.0.1 whose answers are deterministic functions of the prompts ragas sends, so
each score can be worked out by hand."""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from searchkit.errors import InputError, ResourceError
from searchkit.evaluate import ragas_metrics as rm
from searchkit.evaluate.ragas_metrics import JudgeItem, LLMJudge
from searchkit.index.embedders import HashingEmbedder

pytestmark = pytest.mark.skipif(not rm.is_available(), reason="ragas is not installed (the research extra)")

KEY = "sk-test-Zq8vR2mW9xK4pL7nT3bY6cJ1"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?。])\s+", text) if s.strip()]


class FakeLLM:
    """A fake ``/v1/chat/completions`` and ``/v1/embeddings``.

    The answer to our question prompt (``mode`` "faithful") is the first sentence of card [1]'s text;
    "invented" answers a sentence no card holds; "unsure" answers that the results do not answer.
    ragas' prompts (instructor JSON mode: the output schema's title in the system message, the input
    as JSON after ``input:``) get: statements = the answer's sentences; a verdict of 1 for a statement
    found word for word in the context; the question written back = the answer itself, noncommittal
    when it says the results do not answer. ``judge`` "garbage" answers ragas with text that is not
    JSON. ``status`` answers every request with that HTTP status and a body echoing the key;
    ``delay`` waits before answering. Requests and their Authorization headers are kept."""

    def __init__(self) -> None:
        self.mode = "faithful"
        self.judge = "ok"
        self.status = 200
        self.delay = 0.0
        self.requests: list[tuple[str, dict]] = []
        self.auth: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body))
                fake.auth.append(self.headers.get("Authorization"))
                if fake.delay:
                    time.sleep(fake.delay)
                code, payload = fake.answer(self.path, body, self.headers.get("Authorization") or "")
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (timeout test)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @staticmethod
    def vec(text: str, dim: int = 16) -> list[float]:
        v = [0.0] * dim
        for w in re.findall(r"\w+", text.lower()):
            h = hashlib.sha256(w.encode()).digest()
            v[h[0] % dim] += 1.0 if h[1] % 2 else -1.0
        return v if any(v) else [1.0] + [0.0] * (dim - 1)

    def answer(self, path: str, body: dict, auth: str) -> tuple[int, bytes]:
        if self.status != 200:
            return self.status, json.dumps({"error": {"message": f"bad key {auth}", "echo": auth}}).encode()
        if path.endswith("/embeddings"):
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [{"object": "embedding", "index": i, "embedding": self.vec(t)} for i, t in enumerate(texts)]
            return 200, json.dumps({"object": "list", "data": data, "model": body["model"],
                                    "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        return 200, self.completion(body)

    def completion(self, body: dict) -> bytes:
        messages = body["messages"]
        if body.get("response_format", {}).get("type") == "json_object":
            content = self.judgement(messages)
        else:
            content = self.written_answer(messages[-1]["content"])
        return json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()

    def written_answer(self, prompt: str) -> str:
        if self.mode == "invented":
            return "The moon is made of green cheese."
        if self.mode == "unsure":
            return "The search results do not answer the question."
        first = re.search(r"\[1\] [^\n]*\n([^\n]*)", prompt)
        return _sentences(first.group(1))[0]

    def judgement(self, messages: list[dict]) -> str:
        if self.judge == "garbage":
            return "I would rather not say."
        system = " ".join(m["content"] for m in messages if m["role"] == "system")
        title = re.search(r'"title": "(\w+Output)"', system).group(1)
        prompt = messages[-1]["content"]
        data = json.loads(prompt.rsplit("input: ", 1)[1].rsplit("Output:", 1)[0])
        if title == "StatementGeneratorOutput":
            return json.dumps({"statements": _sentences(data["answer"])})
        if title == "NLIStatementOutput":
            return json.dumps({"statements": [
                {"statement": s, "reason": "found" if s in data["context"] else "not found",
                 "verdict": int(s in data["context"])} for s in data["statements"]]})
        if title == "AnswerRelevanceOutput":
            response = data["response"]
            return json.dumps({"question": response, "noncommittal": int("do not answer" in response)})
        raise AssertionError(f"unexpected ragas prompt {title}")

    def chat_requests(self, json_mode: bool | None = None) -> list[dict]:
        out = [b for p, b in self.requests if p.endswith("/chat/completions")]
        if json_mode is None:
            return out
        return [b for b in out if (b.get("response_format", {}).get("type") == "json_object") is json_mode]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm():
    fake = FakeLLM()
    yield fake
    fake.close()


ITEMS = [
    JudgeItem("q1", "where is the export script?", ("export.py\nThe export script is scripts/export.py. It runs on Mondays.",
                                                   "chat\nAsk Bob."), True),
    JudgeItem("q2", "what did we decide about Postgres?", ("log\nWe decided to migrate Postgres after 2.3. Later.",), True),
    JudgeItem("q3", "kubernetes rollout plan", ("page\nIncident 412 was a missing index.",), False),
]


def _cos(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_faithful_answers_score_one_and_relevancy_is_the_cosine_of_the_questions(llm):
    emb = HashingEmbedder(dim=64)
    judge = LLMJudge(base_url=llm.url, model="fake-chat", k=2)
    s = rm.judge_scores(ITEMS, judge, embedder=emb)
    f, r = rm.judge_names(2)
    assert (f, r) == ("ragas:faithfulness@2", "ragas:answer_relevancy@2")
    assert set(s) == {"q1", "q2", "q3"}
    for item in ITEMS:
        answer = _sentences(item.contexts[0].split("\n", 1)[1])[0]
        assert s[item.query_id][f] == 1.0  # its one statement is in the cards
        q, a = emb.embed_queries([item.question, answer])
        # ragas: the mean cosine of the question with the (three) questions written back = the answer
        assert s[item.query_id][r] == pytest.approx(_cos(q, a), abs=1e-6)
    # the answer was asked from the question and its top cards, deterministically
    asked = llm.chat_requests(json_mode=False)
    assert len(asked) == 3 and asked[0]["temperature"] == 0 and asked[0]["model"] == "fake-chat"
    assert "where is the export script?" in asked[0]["messages"][-1]["content"]
    assert "[2] chat\nAsk Bob." in asked[0]["messages"][-1]["content"]
    # per query: 2 faithfulness prompts (statements, verdicts) + 3 written-back questions
    assert len(llm.chat_requests(json_mode=True)) == 3 * (2 + rm.RELEVANCY_STRICTNESS)
    assert all(a == "Bearer none" for a in llm.auth)  # no key configured: none sent (never OPENAI_API_KEY)


def test_an_invented_answer_is_unfaithful_and_a_noncommittal_one_irrelevant(llm):
    judge = LLMJudge(base_url=llm.url, model="fake-chat")
    f, r = judge.names()
    llm.mode = "invented"
    s = rm.judge_scores(ITEMS[:1], judge, embedder=HashingEmbedder())
    assert s["q1"][f] == 0.0 and s["q1"][r] is not None and s["q1"][r] < 0.5
    llm.mode = "unsure"
    s = rm.judge_scores(ITEMS[:1], judge, embedder=HashingEmbedder())
    assert s["q1"][r] == 0.0  # ragas: a noncommittal answer is not relevant


def test_embeddings_from_the_endpoint_when_an_embedding_model_is_named(llm, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    judge = LLMJudge(base_url=llm.url, model="fake-chat", api_key_env="JUDGE_KEY", embedding_model="fake-embed")
    _, r = judge.names()
    s = rm.judge_scores(ITEMS[1:2], judge)
    answer = "We decided to migrate Postgres after 2.3."
    assert s["q2"][r] == pytest.approx(_cos(FakeLLM.vec(ITEMS[1].question), FakeLLM.vec(answer)), abs=1e-6)
    embeds = [b for p, b in llm.requests if p.endswith("/embeddings")]
    assert embeds and all(b["model"] == "fake-embed" for b in embeds)
    assert set(llm.auth) == {f"Bearer {KEY}"}


def test_a_judgement_that_is_not_json_leaves_that_query_out_and_goes_on(llm, caplog):
    judge = LLMJudge(base_url=llm.url, model="fake-chat", max_retries=0)
    llm.judge = "garbage"
    s = rm.judge_scores(ITEMS[:2], judge, embedder=HashingEmbedder())
    assert s == {"q1": dict.fromkeys(judge.names()), "q2": dict.fromkeys(judge.names())}
    assert "not the JSON ragas asked for" in caplog.text
    summary = rm.judge_summary(s, ITEMS[:2], judge.k)
    assert summary["answerable"] == {"n": 2, "mean": dict.fromkeys(judge.names()), "scored": dict.fromkeys(judge.names(), 0)}


def test_summary_groups_answerable_and_unanswerable_with_their_n():
    f, r = rm.judge_names(5)
    scores = {"q1": {f: 1.0, r: 0.8}, "q2": {f: None, r: 0.4}, "q3": {f: 0.0, r: 0.0}}
    out = rm.judge_summary(scores, ITEMS, 5)
    assert out["answerable"] == {"n": 2, "mean": {f: 1.0, r: pytest.approx(0.6)}, "scored": {f: 1, r: 2}}
    assert out["unanswerable"] == {"n": 1, "mean": {f: 0.0, r: 0.0}, "scored": {f: 1, r: 1}}


def test_an_http_error_is_one_line_without_the_key_or_the_body(llm, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    llm.status = 401
    judge = LLMJudge(base_url=llm.url, model="fake-chat", api_key_env="JUDGE_KEY", max_retries=0)
    with pytest.raises(ResourceError) as e:
        rm.judge_scores(ITEMS[:1], judge, embedder=HashingEmbedder())
    msg = str(e.value)
    assert msg == f"LLM endpoint {llm.url} (model 'fake-chat'): HTTP 401"
    assert KEY[8:20] not in msg and "bad key" not in msg


def test_an_unreachable_or_slow_endpoint_is_one_error(llm):
    llm.close()
    judge = LLMJudge(base_url=llm.url, model="fake-chat", max_retries=0, timeout=2)
    with pytest.raises(ResourceError, match=r"connection failed .*after 1 attempt\)"):
        rm.judge_scores(ITEMS[:1], judge, embedder=HashingEmbedder())
    slow = FakeLLM()
    try:
        slow.delay = 1.5
        judge = LLMJudge(base_url=slow.url, model="fake-chat", max_retries=0, timeout=0.3)
        started = time.monotonic()
        with pytest.raises(ResourceError, match=r"no answer within the 0.3s timeout"):
            rm.judge_scores(ITEMS[:1], judge, embedder=HashingEmbedder())
        assert time.monotonic() - started < 1.4
    finally:
        slow.close()


def test_settings_are_checked_and_never_echo_a_credential(monkeypatch):
    with pytest.raises(InputError, match="llm base_url must be an http"):
        LLMJudge(base_url="ftp://x", model="m")
    with pytest.raises(InputError) as e:
        LLMJudge(base_url=f"http://user:{KEY}@127.0.0.1:9/v1", model="m")
    assert KEY not in str(e.value) and "user:password@" in str(e.value)
    with pytest.raises(InputError, match=r"llm k must be an integer of at least 1.*llm timeout"):
        LLMJudge(base_url="http://127.0.0.1:9/v1", model="m", k=0, timeout=0)
    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    judge = LLMJudge(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="NOT_SET_KEY")
    with pytest.raises(InputError, match="environment variable NOT_SET_KEY"):
        rm.judge_scores(ITEMS, judge, embedder=HashingEmbedder())
    with pytest.raises(InputError, match="needs embeddings"):
        rm.judge_scores(ITEMS, LLMJudge(base_url="http://127.0.0.1:9/v1", model="m"))


# --------------------------------------------------------------------------- the command line

def _eval_args(tmp_path, monkeypatch):
    from searchkit.config import SearchConfig
    from test_metrics import HASHING, tiny_workspace

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    data = tiny_workspace(tmp_path / "ws")
    return ["eval", "--dataset", str(data), "--config", str(cfg), "--quiet"]


def test_eval_metrics_ragas_llm(tmp_path, monkeypatch, capsys, llm):
    from searchkit.cli import main

    args = _eval_args(tmp_path, monkeypatch) + ["--metrics", "ragas-llm", "--llm-base-url", llm.url,
                                                "--llm-model", "fake-chat", "--llm-k", "3"]
    assert main(args + ["--json", "--queries"]) == 0
    d = json.loads(capsys.readouterr().out)
    block = d["ragas_llm"]
    f, r = rm.judge_names(3)
    assert block["k"] == 3 and block["model"] == "fake-chat" and block["endpoint"] == llm.url
    assert block["queries"] == 5 and block["answerable"]["n"] == 4 and block["unanswerable"]["n"] == 1
    assert block["answerable"]["mean"][f] == 1.0  # the fake answers with a sentence of card [1]
    rows = {q["id"]: q for q in d["queries"]}
    assert rows["q1"]["ragas_llm"][f] == 1.0 and 0 < rows["q1"]["ragas_llm"][r] <= 1 + 1e-9
    # the answer of q1 was written from its top 3 cards, in ranking order
    first = llm.chat_requests(json_mode=False)[0]["messages"][-1]["content"]
    assert "[3]" in first and "[4]" not in first
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "ragas-llm (fake-chat, answer from the top 3 cards), answerable n=4: faithfulness 1.0000" in out


def test_eval_ragas_llm_flags_are_checked_before_indexing(tmp_path, monkeypatch, capsys):
    from searchkit.cli import main

    args = _eval_args(tmp_path, monkeypatch)
    assert main(args + ["--metrics", "ragas-llm", "--llm-model", "m"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "searchkit: --metrics ragas-llm needs --llm-base-url (an OpenAI-compatible endpoint and its model)"
    assert main(args + ["--llm-base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "--llm-base-url is for --metrics ragas-llm" in capsys.readouterr().err
    assert main(args + ["--metrics", "ragas-llm", "--llm-model", "m", "--llm-base-url",
                        f"http://127.0.0.1:9/v1?api_key={KEY}"]) == 2
    err = capsys.readouterr().err
    assert "a secret in its query string (api_key=…)" in err and KEY not in err and len(err.strip().splitlines()) == 1
    monkeypatch.delenv("UNSET_JUDGE_KEY", raising=False)
    assert main(args + ["--metrics", "ragas-llm", "--llm-model", "m", "--llm-base-url", "http://127.0.0.1:9/v1",
                        "--llm-api-key-env", "UNSET_JUDGE_KEY"]) == 2
    assert "environment variable UNSET_JUDGE_KEY" in capsys.readouterr().err
    assert not (tmp_path / "c.sqlite").exists()  # nothing was indexed


def test_eval_ragas_llm_endpoint_failure_is_one_line(tmp_path, monkeypatch, capsys, llm):
    from searchkit.cli import main

    monkeypatch.setenv("JUDGE_KEY", KEY)
    llm.status = 500
    args = _eval_args(tmp_path, monkeypatch) + ["--metrics", "ragas-llm", "--llm-base-url", llm.url, "--llm-model",
                                                "fake-chat", "--llm-api-key-env", "JUDGE_KEY", "--llm-timeout", "5"]
    monkeypatch.setattr("openai._base_client.BaseClient._calculate_retry_timeout", lambda *a, **k: 0.01)
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"searchkit eval: LLM endpoint {llm.url} (model 'fake-chat'): HTTP 500 (after 3 attempts)"
    assert len(llm.requests) == 3


def test_judge_items_send_only_what_the_querys_caller_may_see():
    """H15 (issue 39 item 8c): a personal record's text never leaves for the LLM for a query that
    names no caller or another caller; its owner's query sends it; shared records go to everyone."""
    from types import SimpleNamespace

    from searchkit.records import Record

    recs = [Record("p", kind="chat", space="acme", title="Anna's salary", text="salary 9000", owner="u-anna",
                   visibility="personal"),
            Record("s", kind="file", space="acme", title="plan", text="the shared plan")]
    queries = [SimpleNamespace(id=qid, text="salary?", caller=caller)
               for qid, caller in (("none", None), ("boris", "u-boris"), ("anna", "u-anna"))]
    outcomes = [SimpleNamespace(query_id=q.id, ranking=("p", "s"), answerable=True) for q in queries]
    judge = LLMJudge(base_url="http://127.0.0.1:9/v1", model="m", k=2)
    items = {i.query_id: i for i in rm.judge_items(SimpleNamespace(outcomes=outcomes),
                                                   SimpleNamespace(queries=queries, records=recs), judge)}
    assert [c for c in items["none"].contexts if "salary 9000" in c] == []
    assert [c for c in items["boris"].contexts if "salary 9000" in c] == []
    assert any("salary 9000" in c for c in items["anna"].contexts)
    assert all(any("shared plan" in c for c in i.contexts) for i in items.values())
