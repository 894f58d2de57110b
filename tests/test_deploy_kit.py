"""The deployment kit in deploy/ (issue 41 item 8), run as written: the Dockerfile's entrypoint
command, the systemd unit's ExecStart, and every host snippet (Claude Desktop, Claude Code, VS Code,
a remote HTTP entry) are parsed from their files and run, their paths mapped to a test install: the
shipped export's path to an export of the hashing config (for speed), the index to one built
beforehand from a copy of the demo workspace with `searchkit index --workspace W --out DIR`. A stdio
command answers initialize and tools/list to the official MCP client; an HTTP command answers
/health/ready (the Dockerfile's own HEALTHCHECK command is run against it) and, with a remote
entry's url and header, MCP; each then stops. No image is built (no network): the Dockerfile's
structure is linted (never root, HEALTHCHECK on readiness, the shipped config exported at build and
served with --index). Servers listen on 127.0.0.1, on a port the OS picks."""
import configparser
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

import anyio  # noqa: E402
import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from searchkit.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
DEMO = ROOT / "datasets" / "demo-workspace"
HASHING = ROOT / "tests" / "data" / "hashing.json"
SHIPPED_EXPORT = "/etc/searchkit/shipped.v1.json"
START_S = 90
CALL_S = 60
HISTORY = ["history_search", "chat_read", "app_row"]


@pytest.fixture(scope="module")
def install(tmp_path_factory):
    """A test install: the export (hashing, named as the shipped one), the index built beforehand,
    a tokens file with Anna's token, folders for state and logs."""
    tmp = tmp_path_factory.mktemp("deploy")
    ws = tmp / "ws"
    shutil.copytree(DEMO, ws)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["config", "export", str(HASHING), "--out", str(tmp / "etc"), "--name", "shipped", "--quiet"]) == 0
        assert main(["index", "--workspace", str(ws), "--out", str(tmp / "index"), "--config",
                     str(tmp / "etc" / "shipped.v1.json"), "--quiet"]) == 0
        assert main(["serve-token", "--tokens", str(tmp / "tokens.json"), "--caller", "u-anna", "--space", "acme",
                     "--workspace", str(ws)]) == 0
    (tmp / "state").mkdir()
    (tmp / "log").mkdir()
    return {"tmp": tmp, "token": out.getvalue().strip().splitlines()[-1],
            "paths": {SHIPPED_EXPORT: tmp / "etc" / "shipped.v1.json",
                      "/var/lib/searchkit/index": tmp / "index", "/data/index": tmp / "index",
                      "/etc/searchkit/tokens.json": tmp / "tokens.json", "/data/tokens.json": tmp / "tokens.json",
                      "/var/lib/searchkit": tmp / "state", "/var/log/searchkit/serve.log": tmp / "log" / "serve.log"},
            "env": {**os.environ, "SEARCHKIT_CACHE": str(tmp / "cache.sqlite"), "PYTHONUNBUFFERED": "1"}}


# ------------------------------------------------------------------------------------ parsing


def dockerfile():
    """The Dockerfile's instructions, ``(KEYWORD, argument)``, continuation lines joined."""
    out, pending = [], ""
    for line in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip("\\").strip() + " " if line.rstrip().endswith("\\") else line.strip()
        if not line.rstrip().endswith("\\"):
            word, _, arg = pending.partition(" ")
            out.append((word.upper(), arg.strip()))
            pending = ""
    return out


def unit():
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str
    parser.read_string((DEPLOY / "searchkit.service").read_text(encoding="utf-8"))
    return parser


def claude_code_lines():
    lines = [shlex.split(line) for line in (DEPLOY / "claude-code.sh").read_text(encoding="utf-8").splitlines()
             if line.startswith("claude mcp add ")]
    out = {}
    for argv in lines:
        rest, command = (argv[3:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv[3:], None)
        opts, positional, i = {}, [], 0
        while i < len(rest):
            if rest[i].startswith("--"):
                opts.setdefault(rest[i], []).append(rest[i + 1])
                i += 2
            else:
                positional.append(rest[i])
                i += 1
        out[positional[0]] = {"transport": opts["--transport"][0], "headers": opts.get("--header", []),
                              "url": positional[1] if len(positional) > 1 else None, "command": command}
    return out


def mapped(argv, install, *, log=None):
    """``argv`` of a snippet as the test install runs it: the searchkit executable as this Python's
    module, every absolute path mapped (an unknown one fails the test), HTTP on 127.0.0.1, port 0."""
    head, args = argv[0], list(argv[1:])
    assert head in ("searchkit", "/opt/searchkit/.venv/bin/searchkit"), head
    assert args[0] == "serve" and "--index" in args and "--workspace" not in args, args
    assert args[args.index("--config") + 1] == SHIPPED_EXPORT, "the shipped export, never a test config"
    out = []
    for a in args:
        if a.startswith("/"):
            assert a in install["paths"], f"an unmapped path in a snippet: {a}"
            a = str(install["paths"][a])
        out.append(a)
    for flag, value in (("--host", "127.0.0.1"), ("--port", "0")):
        if flag in out:
            out[out.index(flag) + 1] = value
    if log is not None and "--log-file" not in out:
        out += ["--log-file", str(log)]
    return [sys.executable, "-m", "searchkit.cli", *out]


# ------------------------------------------------------------------------------------ running


def stdio_lists_tools(argv, env):
    async def session():
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        async with Client(params, read_timeout_seconds=CALL_S) as c:
            return c.server_info.name, [t.name for t in (await c.list_tools()).tools]

    async def bounded():
        with anyio.fail_after(START_S + CALL_S):
            return await session()
    return anyio.run(bounded)


class Http:
    """An HTTP command of the kit in a child process; its URL from its log's listening line."""

    def __init__(self, argv, env, log):
        self.log = Path(log)
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.url = None
        deadline = time.monotonic() + START_S
        while self.url is None and time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server stopped: {self.proc.stderr.read().decode()[-2000:]}")
            for line in self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else ():
                if json.loads(line).get("event") == "listening":
                    self.url = json.loads(line)["url"]
            time.sleep(0.2)
        assert self.url, "the server did not start in time"

    def ready(self):
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            r = httpx.get(f"{self.url}/health/ready", timeout=10)
            if r.status_code == 200:
                return r
            assert r.status_code == 503, f"/health/ready: {r.status_code}"  # 503 while starting; else wrong
            time.sleep(0.3)
        raise AssertionError(f"/health/ready never answered 200 (last {r.status_code})")

    def stop(self):
        self.proc.terminate()
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            return self.proc.wait(5)


def remote_lists_tools(url, headers):
    async def session():
        client = httpx2.AsyncClient(headers=headers, timeout=CALL_S)
        async with Client(streamable_http_client(url, http_client=client), read_timeout_seconds=CALL_S) as c:
            return [t.name for t in (await c.list_tools()).tools]

    async def bounded():
        with anyio.fail_after(CALL_S * 2):
            return await session()
    return anyio.run(bounded)


def local(url, server):
    """A remote entry's URL pointed at the local server (same path)."""
    path = re.sub(r"^https?://[^/]+", "", url)
    assert path == "/mcp", url
    return server.url + path


def header_map(lines, token):
    out = {}
    for line in lines:
        name, _, value = line.partition(":")
        out[name.strip()] = re.sub(r"\$\{[^}]+\}", token, value.strip())
    assert out["Authorization"] == f"Bearer {token}", lines
    return out


# ------------------------------------------------------------------------------------ the tests


def test_the_dockerfile_never_runs_as_root_checks_readiness_and_serves_the_shipped_export():
    steps = dockerfile()
    words = [w for w, _ in steps]
    assert words[0] == "FROM"
    users = [a for w, a in steps if w == "USER"]
    assert users and users[-1] not in ("root", "0") and not users[-1].startswith(("root:", "0:"))
    last_user = max(i for i, w in enumerate(words) if w == "USER")
    assert last_user < words.index("ENTRYPOINT") and last_user < words.index("HEALTHCHECK")
    assert not any(w == "RUN" for w in words[last_user:]), "nothing runs as root after USER"
    health = next(a for w, a in steps if w == "HEALTHCHECK")
    assert "/health/ready" in health and "--interval" in health and "--start-period" in health
    export = next(a for w, a in steps if w == "RUN" and "searchkit config export" in a)
    assert "searchkit config show" in export and "--out /etc/searchkit --name shipped" in export
    replay = re.search(r"--replay-dataset (\S+)", export).group(1)
    assert any(w == "COPY" and a.split()[0] == "datasets/mini" for w, a in steps) and replay.endswith("datasets/mini")
    argv = json.loads(next(a for w, a in steps if w == "ENTRYPOINT")) + json.loads(next(a for w, a in steps if w == "CMD"))
    assert argv[argv.index("--config") + 1] == SHIPPED_EXPORT and "--index" in argv and "--workspace" not in argv
    assert [a for w, a in steps if w == "EXPOSE"] == [argv[argv.index("--port") + 1]]
    assert "--tokens" in argv and argv[argv.index("--transport") + 1] == "http"
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    assert ignore[ignore.index("*"):][:1] == ["*"] and "!searchkit" in ignore and "!datasets/mini" in ignore


def test_the_systemd_unit_runs_as_a_system_user_with_the_shipped_export_and_an_index():
    service = unit()["Service"]
    assert service["User"] not in ("root", "0") and service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict" and service["UMask"] == "0077"
    argv = shlex.split(service["ExecStart"])
    assert argv[0] == "/opt/searchkit/.venv/bin/searchkit" and "--workspace" not in argv
    assert argv[argv.index("--state-dir") + 1] == "/var/lib/searchkit" and service["StateDirectory"] == "searchkit"
    assert unit()["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_the_image_entrypoint_and_the_systemd_unit_serve_http_ready_and_the_remote_entries_connect(install):
    steps = dockerfile()
    docker = json.loads(next(a for w, a in steps if w == "ENTRYPOINT")) + json.loads(next(a for w, a in steps if w == "CMD"))
    systemd = shlex.split(unit()["Service"]["ExecStart"])
    health = json.loads(next(a for w, a in steps if w == "HEALTHCHECK").split(" CMD ", 1)[1])
    token = install["token"]
    code = claude_code_lines()["searchkit-remote"]
    vscode = json.loads((DEPLOY / "vscode-mcp.json").read_text(encoding="utf-8"))["servers"]["searchkit-remote"]
    remote = json.loads((DEPLOY / "remote-http.json").read_text(encoding="utf-8"))["mcpServers"]["searchkit"]
    assert code["transport"] == vscode["type"] == remote["type"] == "http"
    for name, argv in (("docker", docker), ("systemd", systemd)):
        log = install["tmp"] / f"{name}.log"
        server = Http(mapped(argv, install, log=log), install["env"],
                      log if "--log-file" not in argv else install["paths"]["/var/log/searchkit/serve.log"])
        try:
            body = server.ready().json()
            assert body.get("ready", True) is not False
            check = [sys.executable if health[0] == "python" else health[0], *health[1:]]
            check = [a.replace("http://127.0.0.1:8765", server.url) for a in check]
            assert subprocess.run(check, timeout=30).returncode == 0  # the image's HEALTHCHECK, as written
            assert httpx.get(f"{server.url}/api/tools", timeout=10).status_code == 401  # tokens in force
            if name == "docker":
                for url, headers in ((code["url"], header_map(code["headers"], token)),
                                     (vscode["url"], header_map([f"{k}: {v}" for k, v in vscode["headers"].items()], token)),
                                     (remote["url"], header_map([f"{k}: {v}" for k, v in remote["headers"].items()], token))):
                    assert remote_lists_tools(local(url, server), headers) == HISTORY
        finally:
            rc = server.stop()
        assert rc == 0, f"{name}: the server did not stop cleanly ({rc})"


@pytest.mark.parametrize("snippet", ["claude_desktop", "claude_code", "vscode"])
def test_each_stdio_snippet_answers_initialize_and_tools_list(install, snippet):
    if snippet == "claude_desktop":
        entry = json.loads((DEPLOY / "claude_desktop_config.json").read_text(encoding="utf-8"))["mcpServers"]["searchkit"]
        argv = [entry["command"], *entry["args"]]
    elif snippet == "claude_code":
        entry = claude_code_lines()["searchkit"]
        assert entry["transport"] == "stdio"
        argv = entry["command"]
    else:
        entry = json.loads((DEPLOY / "vscode-mcp.json").read_text(encoding="utf-8"))["servers"]["searchkit"]
        assert entry["type"] == "stdio"
        argv = [entry["command"], *entry["args"]]
    assert "--caller" in argv and "--tokens" not in argv
    name, tools = stdio_lists_tools(mapped(argv, install), install["env"])
    assert name == "searchkit" and tools == HISTORY


def test_the_readme_names_every_file_of_the_kit():
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    for f in DEPLOY.iterdir():
        if f.name != "README.md":
            assert f.name in readme, f.name
    assert "searchkit index --workspace" in readme and "serve-token" in readme and "/health/ready" in readme
