"""Scoring internals only with --explain (issue 41 item 6): a served answer holds no per-retriever
or per-stage scores and no weak-match signals unless the service explains; with it, they are there,
and both validate against the tool's output schema (the MCP result's structured content, as the
official client would check it). Hashing embedder, the demo workspace, no server process."""
from pathlib import Path

import jsonschema
import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

from searchkit.config import SearchConfig  # noqa: E402
from searchkit.index.cache import EmbeddingCache  # noqa: E402
from searchkit.serve.calllog import CallLog  # noqa: E402
from searchkit.serve.mcp_app import tool_result  # noqa: E402
from searchkit.serve.service import Service  # noqa: E402
from searchkit.serve.session import Session  # noqa: E402
from searchkit.serve.state import Holder, Served  # noqa: E402
from searchkit.tools.history import HistoryIndex  # noqa: E402
from searchkit.tools.registry import TOOLS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CFG = SearchConfig.load(ROOT / "tests" / "data" / "hashing.json")


@pytest.fixture(scope="module")
def index():
    return HistoryIndex.build(ROOT / "datasets" / "demo-workspace", CFG, cache=EmbeddingCache(None))


@pytest.mark.parametrize("explain", [False, True])
def test_internals_only_when_the_service_explains(index, explain):
    service = Service(Holder(Served(index, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog(), explain=explain)
    out = service.call("history_search", {"query": "ATL-9999 где скрипт выгрузки?"}, Session("u-anna", space="acme"),
                       "mcp-stdio")
    result = tool_result(out)
    data = result.structured_content
    jsonschema.validate(data, TOOLS["history_search"].output_schema())
    cards = data["cards"]
    assert cards and not result.is_error
    assert ("signals" in data) is explain
    assert all(("scores" in c and "stages" in c and "score" in c) is explain for c in cards)
    assert all(("detail" in w) is explain for w in data["warnings"])
    if explain:
        assert data["signals"] and cards[0]["scores"]


def test_serve_explain_flag_reaches_the_served_answers(tmp_path):
    """``searchkit serve --explain`` over stdio: the history answer carries its signals and scores
    (and still validates); without the flag (tests/test_mcp_hosts.py) it does not."""
    import os
    import sys

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "searchkit.cli", "serve", "--config", str(ROOT / "tests" / "data" / "hashing.json"), "--workspace",
        str(ROOT / "datasets" / "demo-workspace"), "--caller", "u-anna", "--space", "acme", "--explain",
        "--log-file", str(tmp_path / "calls.log")], env={**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "c.sqlite")})

    async def session():
        with anyio.fail_after(180):
            async with Client(params, read_timeout_seconds=60) as c:
                return await c.call_tool("history_search", {"query": "где скрипт выгрузки?"})

    result = anyio.run(session)
    data = result.structured_content
    assert not result.is_error and data["signals"] and "scores" in data["cards"][0]
    jsonschema.validate(data, TOOLS["history_search"].output_schema())
