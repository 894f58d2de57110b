"""What outlives what in `searchkit serve` (issue 39 item 7): a task store deleted and imported again
is answered from at once (it was answered from the deleted file until a restart); the refresh child
dies with the server (after a kill -9 of the server it ran on); the next server start removes the
state folders of servers that are gone (their private copy of the index, every personal chat's
text), and only those. Hashing embedder; every wait bounded."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.ingest import tasks as task_store
from searchkit.serve.state import TaskStores

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "datasets" / "tasks-demo"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})


def _import(db: Path, tmp: Path, keep: int | None = None) -> None:
    tasks = [json.loads(x) for x in (TASKS / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    comments = [json.loads(x) for x in (TASKS / "comments.jsonl").read_text(encoding="utf-8").splitlines()]
    if keep is not None:
        tasks = tasks[:keep]
        ids = {t["id"] for t in tasks}
        comments = [c for c in comments if c["task"] in ids]
    src = tmp / f"src-{keep}"
    src.mkdir(exist_ok=True)
    for name, rows in (("tasks.jsonl", tasks), ("comments.jsonl", comments)):
        (src / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    task_store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")


def _count(conn) -> int:
    return conn.execute("SELECT count(*) FROM tasks").fetchone()[0]


def test_a_task_store_deleted_and_imported_again_is_answered_from_at_once(tmp_path):
    db = tmp_path / "tasks.sqlite"
    _import(db, tmp_path)
    stores = TaskStores(db, CFG)
    assert _count(stores.connection()) == 7
    assert stores.connection() is stores.connection()  # one connection while the file stays
    for p in tmp_path.glob("tasks.sqlite*"):
        p.unlink()
    with pytest.raises(DataError):
        stores.connection()  # gone: unavailable, never the deleted file's tasks
    _import(db, tmp_path, keep=3)
    assert _count(stores.connection()) == 3


# ------------------------------------------------------------------ the child dies with the server


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return data[data.rfind(b")") + 2:][:1] != b"Z"


def _gone(pid: int, limit: float = 30.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.1)
    return False


PARENT = """\
import sys, threading, time
sys.path.insert(0, sys.argv[1])
from searchkit.serve import child_process
child = child_process.start("sk_sleeper", [])
print(getattr(child, "proc", child).pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("how", ["kill", "lifeline"])
def test_a_child_dies_with_the_process_that_started_it(tmp_path, how):
    """``kill``: the parent is killed with SIGKILL (PR_SET_PDEATHSIG on Linux, the lifeline elsewhere);
    ``lifeline``: the parent closes its end of the lifeline (what the kernel does at its death)."""
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sk_sleeper.py").write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    if how == "kill":
        parent = subprocess.Popen([sys.executable, "-c", PARENT, str(probe)], stdout=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL)
        try:
            pid = int(parent.stdout.readline())
            assert _running(pid)
            parent.send_signal(signal.SIGKILL)
            parent.wait(30)
            assert _gone(pid), "the child outlived the process that started it"
        finally:
            if parent.poll() is None:  # pragma: no cover
                parent.kill()
        return
    from searchkit.serve import child_process

    sys.path.insert(0, str(probe))
    try:
        child = child_process.start("sk_sleeper", [])
    finally:
        sys.path.remove(str(probe))
    try:
        time.sleep(1.0)
        assert child.proc.poll() is None
        child.close()
        assert child.proc.wait(30) == child_process.ORPHAN_EXIT
    finally:
        if child.proc.poll() is None:  # pragma: no cover
            child.proc.kill()
            child.proc.wait(5)


# --------------------------------------------------------------- state folders of servers gone


def _dead_pid() -> int:
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                       check=True, timeout=60)
    return int(p.stdout)


def test_only_the_marked_state_folders_of_servers_gone_are_removed(tmp_path):
    from searchkit.serve import statedir

    dead = _dead_pid()

    def folder(name, mark):
        f = tmp_path / name
        f.mkdir()
        (f / "index").mkdir()
        (f / "index" / "text").write_text("a personal chat", encoding="utf-8")
        if mark is not None:
            (f / statedir.OWNER).write_text(json.dumps(mark), encoding="utf-8")
        return f

    gone = folder("searchkit-serve-gone", {"format": statedir.FORMAT, "pid": dead, "started": None})
    reused = folder("searchkit-serve-reused", {"format": statedir.FORMAT, "pid": os.getpid(), "started": "0"})
    mine = statedir.make(tmp_path)
    unmarked = folder("searchkit-serve-unmarked", None)
    other_format = folder("searchkit-serve-other", {"format": "something else", "pid": dead})
    other_name = folder("my-files", {"format": statedir.FORMAT, "pid": dead})
    link = tmp_path / "searchkit-serve-link"
    link.symlink_to(folder("linked", {"format": statedir.FORMAT, "pid": dead}))
    assert statedir.remove_stale(tmp_path) == 1
    assert not gone.exists()
    for kept in (reused, mine, unmarked, other_format, other_name, tmp_path / "linked"):
        assert kept.is_dir(), kept  # our own pid is running (whatever its marker says)
    assert link.is_symlink()
    assert oct(os.stat(mine).st_mode & 0o777) == "0o700"
    started = statedir.process_start(os.getpid())
    if started is not None:  # Linux: a marker whose process id was given to another process is stale
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            time.sleep(0.2)
            again = folder("searchkit-serve-again", {"format": statedir.FORMAT, "pid": other.pid, "started": "1"})
            assert statedir.remove_stale(tmp_path) == 1 and not again.exists()
        finally:
            other.kill()
            other.wait(5)


# ------------------------------------------------------------------------------ a real server

CONFIG = ROOT / "tests" / "data" / "hashing.json"
DEMO = ROOT / "datasets" / "demo-workspace"
START_S = 180


def _children_on(state: Path) -> list[int]:
    """Processes whose command line names ``state`` (the refresh child's --index)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if str(state).encode() in (d / "cmdline").read_bytes() and _running(int(d.name)):
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def _log_lines(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
def test_after_a_kill_9_the_refresh_child_dies_and_the_next_start_removes_the_state_folder(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    state = tmp_path / "state"
    state.mkdir()
    env = {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite")}
    exe = Path(sys.executable).parent / "searchkit"

    def start(log):
        return subprocess.Popen([str(exe), "serve", "--config", str(CONFIG), "--workspace", str(ws), "--caller",
                                 "u-anna", "--refresh-every", "1s", "--state-dir", str(state), "--log-file", str(log)],
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_for(what, limit=START_S):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            got = what()
            if got:
                return got
            time.sleep(0.05)
        raise AssertionError("waited in vain")

    first = start(tmp_path / "first.log")
    try:
        wait_for(lambda: any(x["event"] == "start" for x in _log_lines(tmp_path / "first.log")))
        folders = list(state.iterdir())
        assert len(folders) == 1
        poke = ws / "acme" / "notes" / "poke.md"  # a change: an unchanged workspace starts no refresh child

        def refreshing():
            poke.parent.mkdir(parents=True, exist_ok=True)
            poke.write_text(f"note {time.monotonic()}", encoding="utf-8")
            return _children_on(folders[0])

        children = wait_for(refreshing)  # a refresh under way
        first.kill()
        first.wait(30)
    finally:
        if first.poll() is None:  # pragma: no cover
            first.kill()
    assert all(_gone(pid, 10.0) for pid in children), "the refresh child ran on after the server was killed"
    assert folders[0].is_dir()  # left behind: the next start removes it
    second = start(tmp_path / "second.log")
    try:
        line = wait_for(lambda: next((x for x in _log_lines(tmp_path / "second.log") if x["event"] == "start"), None))
        assert not folders[0].exists() and line["stale_state_removed"] == 1
        assert len(list(state.iterdir())) == 1
    finally:
        second.stdin.close()
        try:
            second.wait(60)
        except subprocess.TimeoutExpired:  # pragma: no cover
            second.kill()
            second.wait(5)
    assert list(state.iterdir()) == []
