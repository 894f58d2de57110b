"""benchmarks/bench_serve.py's open loop and its accounting (issue 41 item 9): arrivals at a fixed
rate timed from their scheduled send, every outcome apart from the ok answers (a refused ref was
counted as throughput), the rate where p95 crosses 250 ms, a window that holds a swap; and, end to
end on a small workspace (hashing embedder, 127.0.0.1), a server that sheds a load beyond its
capacity (503 busy, fast) instead of queueing it."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_serve  # noqa: E402
import bench_serve_open as bso  # noqa: E402


def test_each_answer_is_classified_apart():
    assert bso.classify_json(200, {"answer": {"cards": []}, "index_version": 3})[:2] == ("ok", 3)
    refused = {"error": {"status": "bad_parameter", "param": "ref", "message": "no chat"}, "index_version": 3}
    assert bso.classify_json(422, refused)[0] == "refused"
    assert bso.classify_json(422, {"error": {"status": "bad_parameter", "param": "limit"}})[0] == "bad_parameter"
    assert bso.classify_json(503, {"error": {"status": "busy", "retry_after_s": 1}})[0] == "busy"
    assert bso.classify_json(503, {"error": {"status": "unavailable"}})[0] == "unavailable"
    assert bso.classify_json(500, None)[0] == "error"
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"cards": [], "index_version": 2}}}
    assert bso.classify_mcp(200, ok)[:2] == ("ok", 2)
    busy = {"result": {"isError": True, "structuredContent": {"error": {"status": "busy"}}}}
    assert bso.classify_mcp(200, busy)[0] == "busy"
    ref = {"result": {"isError": True, "structuredContent": {"error": {"status": "bad_parameter", "param": "ref"}}}}
    assert bso.classify_mcp(200, ref)[0] == "refused"
    assert bso.classify_mcp(200, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602}})[0] == "error"
    assert bso.classify_mcp(401, None)[0] == "error"


def test_throughput_and_latency_count_ok_answers_only():
    R = bench_serve.Record
    records = [R("chat_read", "json0", 0, 10, True, 1), R("chat_read", "json0", 0, 5000, False, 1, outcome="refused"),
               R("history_search", "mcp1", 0, 20, True, 1), R("history_search", "mcp1", 0, 1, False, 1, outcome="busy"),
               R("app_row", "json2", 0, 1, False, None, error="ReadError")]
    rep = bench_serve.report(records, seconds=1.0)
    assert rep["calls"] == 5 and rep["ok"] == 2 and rep["ok_per_s"] == 2.0
    assert rep["refused"] == 1 and rep["busy"] == 1 and rep["errors"] == 1
    assert rep["tools"]["chat_read"]["p95_ms"] == 10  # the refused call's 5 s is not an answer's latency


def test_arrivals_windows_and_the_crossing():
    uniform = bso.arrivals(20, "uniform", 0)
    assert [next(uniform) for _ in range(3)] == [0.0, 0.05, 0.1]
    poisson = bso.arrivals(20, "poisson", 0)
    times = [next(poisson) for _ in range(2001)]
    assert times == sorted(times) and 80 < times[-1] < 120  # about 2000 / 20 s
    w = bso.Window(seconds=60, after_swap=10, swap_wait=100)
    assert w.end() == 160  # no swap yet: until one (bounded)
    w.saw(3, 1.0)
    w.saw(3, 2.0)
    assert w.swap_at is None
    w.saw(4, 55.0)
    assert w.swap_at == 55.0 and w.end() == 65.0
    w.saw(4, 30.0)
    assert w.swap_at == 30.0 and w.end() == 60.0
    c = bso.crossing([(5, 80.0), (10, 120.0), (20, 200.0), (40, 400.0)])
    assert c["rate"] == pytest.approx(25.0)  # 20 + (250 - 200) * 20 / 200 and c["between"] == [20, 40]
    assert bso.crossing([(5, 300.0)])["rate"] is None and "lowest" in bso.crossing([(5, 300.0)])["note"]
    assert "stays" in bso.crossing([(5, 80.0), (10, 90.0)])["note"]
    assert bso.crossing([(5, 80.0), (10, None)])["between"] == [5, 10]


@pytest.mark.slow  # builds a small workspace and index, starts a server on 127.0.0.1, about a minute
def test_the_open_loop_end_to_end_sheds_a_load_beyond_capacity(tmp_path):
    out = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_serve.py"), "--embedder", "hashing",
                          "--passages", "1200", "--rates", "4,60", "--seconds", "6", "--refresh-every", "8s",
                          "--after-swap", "2", "--swap-wait", "60", "--workers", "1", "--queue", "2", "--callers", "20",
                          "--workdir", str(tmp_path / "work"), "--json", str(out)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert out.exists(), run.stderr[-3000:]
    res = json.loads(out.read_text(encoding="utf-8"))
    low, high = res["windows"]
    assert res["mode"] == "open" and res["callers"] == 20
    assert low["outcomes"]["ok"] > 0 and low["outcomes"]["busy"] == 0
    assert high["outcomes"]["busy"] > 0  # shed, not queued without bound
    assert high["busy_p95_ms"] is not None and high["busy_p95_ms"] < 2000  # refused at once
    assert high["client_kept_up"] in (True, False)
    for w in (low, high):
        assert w["version_check"]["violations"] == 0
        assert sum(w["outcomes"].values()) == w["calls"]
        assert len(w["load"]) == 3  # the machine's load average at the window's end (a shared machine is noisy)
    assert any(w["swap_at_s"] is not None for w in (low, high))  # a refresh's swap inside a window
    assert res["crossing"]["note"]
