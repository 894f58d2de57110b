"""Every verb that writes refuses a target it must not replace (issue 39 item 6): an unrelated regular
file, a FIFO, a device node, a symbolic link, a symbolic link loop. One line on stderr naming the flag
and the problem, exit 2, never a traceback or a raw ``[Errno N]``, and the target left as it was.

The device node is a private copy of /dev/null made with ``mknod`` where the test may (root): a writer
that replaced its target would otherwise replace the machine's /dev/null. Without the right to
``mknod`` the test uses /dev/null itself, which such a user cannot replace anyway."""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig

ROOT = Path(__file__).resolve().parents[1]
MINI = str(ROOT / "datasets" / "mini")
BASELINE = ROOT / "evals" / "baselines" / "mini-dev.json"
KINDS = ["unrelated", "fifo", "device", "symlink", "loop", "dangling"]


@pytest.fixture()
def cfg(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache" / "c.sqlite"))
    p = tmp_path / "cfg.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}}).save(p)
    return p


def _device(path: Path) -> Path:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return path
    except (PermissionError, AttributeError, OSError):
        return Path("/dev/null")


def _make(tmp_path: Path, kind: str, folder_writer: bool, replaceable: Path | None) -> Path:
    """A target of ``kind``; ``replaceable`` (a file this writer could replace) is what a symlink
    points at (for a folder writer: an empty folder)."""
    t = tmp_path / "target"
    if kind == "unrelated":
        t.write_text('{"keep": "me"}\n', encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(t)
    elif kind == "device":
        t = _device(t)
    elif kind == "symlink":
        real = tmp_path / "real"
        if folder_writer:
            real.mkdir()
        elif replaceable is not None:
            shutil.copyfile(replaceable, real)
        else:
            real.write_text('{"keep": "me"}\n', encoding="utf-8")
        t.symlink_to(real)
    elif kind == "loop":
        t.symlink_to(t.name)
    elif kind == "dangling":
        t.symlink_to(tmp_path / "nowhere")
    return t


def _snapshot(tmp_path: Path, t: Path) -> dict:
    st = os.lstat(t)
    snap = {"mode": stat.S_IFMT(st.st_mode), "ino": st.st_ino}
    if stat.S_ISLNK(st.st_mode):
        snap["link"] = os.readlink(t)
    elif stat.S_ISREG(st.st_mode):
        snap["bytes"] = t.read_bytes()
    real = tmp_path / "real"
    if real.is_file():
        snap["real"] = real.read_bytes()
    elif real.is_dir():
        snap["real"] = sorted(p.name for p in real.iterdir())
    return snap


def _writers(cfg: Path) -> dict[str, tuple[str, bool, Path | None, list[str]]]:
    """name -> (flag, writes a folder, a file it may replace, argv with TARGET for the path)."""
    c = str(cfg)
    return {
        "tune fusion --out": ("--out", False, cfg,
                              ["tune", "fusion", "--dataset", MINI, "--config", c, "--quiet", "--out", "TARGET"]),
        "tune fusion --result": ("--result", False, None,
                                 ["tune", "fusion", "--dataset", MINI, "--config", c, "--quiet", "--result", "TARGET"]),
        "tune adaptive-fusion --out": ("--out", False, cfg,
                                       ["tune", "adaptive-fusion", "--dataset", MINI, "--config", c, "--quiet",
                                        "--out", "TARGET"]),
        "tune adaptive-fusion --cases": ("--cases", False, None,
                                         ["tune", "adaptive-fusion", "--dataset", MINI, "--config", c, "--quiet",
                                          "--cases", "TARGET"]),
        "tune weak-match --out": ("--out", False, cfg,
                                  ["tune", "weak-match", "--runs", "RUNS", "--config", c, "--quiet", "--allow-small", "--out", "TARGET"]),
        "index --out": ("--out", True, None, ["index", "--dataset", MINI, "--config", c, "--quiet", "--out", "TARGET"]),
        "config export --out": ("--out", True, None,
                                ["config", "export", c, "--replay-dataset", MINI, "--quiet", "--out", "TARGET"]),
        "gate --update --baseline": ("--baseline", False, BASELINE,
                                     ["gate", "--update", "--dataset", MINI, "--config", c, "--quiet",
                                      "--baseline", "TARGET"]),
        "eval --out": ("--out", True, None, ["eval", "--dataset", MINI, "--config", c, "--quiet", "--out", "TARGET"]),
    }


WRITERS = list(_writers(Path("x")))


@pytest.fixture(scope="module")
def runs_json(tmp_path_factory):
    """An eval run (``eval --json --queries``) for tune weak-match."""
    import contextlib
    import io

    d = tmp_path_factory.mktemp("runs")
    p = d / "cfg.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}}).save(p)
    old = os.environ.get("SEARCHKIT_CACHE")
    os.environ["SEARCHKIT_CACHE"] = str(d / "c.sqlite")
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            assert main(["eval", "--dataset", MINI, "--config", str(p), "--json", "--queries", "--quiet"]) == 0
    finally:
        if old is None:
            os.environ.pop("SEARCHKIT_CACHE", None)
        else:
            os.environ["SEARCHKIT_CACHE"] = old
    out = d / "run.json"
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", WRITERS)
def test_a_writer_refuses_a_target_it_must_not_replace(tmp_path, cfg, capsys, writer, kind, request):
    flag, folder_writer, replaceable, argv = _writers(cfg)[writer]
    target = _make(tmp_path, kind, folder_writer, replaceable)
    before = _snapshot(tmp_path, target)
    runs = str(request.getfixturevalue("runs_json")) if "RUNS" in argv else None
    argv = [str(target) if a == "TARGET" else runs if a == "RUNS" else a for a in argv]
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1, err
    line = err[0]
    assert "Traceback" not in line and "[Errno" not in line, line
    assert f"{flag} " in line and str(target) in line and "special file" not in line, line
    assert _snapshot(tmp_path, target) == before
    if kind == "device":
        assert stat.S_ISCHR(os.lstat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left


# -- issue 39 item 8b: a write the system refuses is one line naming the flag, never a raw [Errno N] --

def _denied(*_args, **_kwargs):
    import errno

    raise PermissionError(errno.EACCES, "Permission denied", "/somewhere/.tmp")


class _NoTemp:
    """Stands for ``tempfile`` in a module whose writes must fail as a read-only folder makes them
    fail (the tests run as root too, where a chmod would not stop a write)."""

    mkstemp = staticmethod(_denied)
    mkdtemp = staticmethod(_denied)


def _one_line(capsys, rc: int, flag: str, target: Path) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "[Errno" not in err[0] and "Traceback" not in err[0], err[0]
    assert f"{flag} " in err[0] and str(target) in err[0], err[0]
    return err[0]


@pytest.mark.parametrize("where", ["folder", "under_a_file"])
def test_tune_out_a_folder_or_under_a_file_is_one_line(tmp_path, cfg, capsys, runs_json, where):
    """``tune --out DIR`` was a raw ``[Errno 21] Is a directory`` after the whole fit."""
    target = tmp_path / "d"
    target.mkdir()
    if where == "under_a_file":
        (tmp_path / "f").write_text("x", encoding="utf-8")
        target = tmp_path / "f" / "tuned.json"
    rc = main(["tune", "weak-match", "--runs", str(runs_json), "--config", str(cfg), "--quiet", "--allow-small",
               "--out", str(target)])
    _one_line(capsys, rc, "--out", target)


def test_config_export_out_under_a_file_is_one_line(tmp_path, cfg, capsys):
    """``config export --out FILE/sub`` was a raw ``[Errno 20] Not a directory`` after the replay."""
    (tmp_path / "f").write_text("x", encoding="utf-8")
    target = tmp_path / "f" / "exports"
    rc = main(["config", "export", str(cfg), "--replay-dataset", MINI, "--quiet", "--out", str(target)])
    _one_line(capsys, rc, "--out", target)
    assert (tmp_path / "f").read_text(encoding="utf-8") == "x"


def test_gate_update_of_a_folder_names_the_flag(tmp_path, cfg, capsys):
    target = tmp_path / "d"
    target.mkdir()
    rc = main(["gate", "--update", "--dataset", MINI, "--config", str(cfg), "--quiet", "--baseline", str(target)])
    _one_line(capsys, rc, "--baseline", target)


@pytest.mark.parametrize("writer", ["tune --out", "gate --baseline", "config export --out", "index --out",
                                    "eval --out", "report --out"])
def test_a_write_the_system_refuses_is_one_line_naming_the_flag(tmp_path, cfg, capsys, runs_json, monkeypatch, writer):
    import searchkit.evaluate.runs as runs_mod
    import searchkit.export as export_mod
    import searchkit.index.store as store_mod
    import searchkit.util as util_mod

    c = str(cfg)
    if writer == "tune --out":
        target, flag = tmp_path / "tuned.json", "--out"
        argv = ["tune", "weak-match", "--runs", str(runs_json), "--config", c, "--quiet", "--allow-small", "--out", str(target)]
    elif writer == "gate --baseline":
        target, flag = tmp_path / "b.json", "--baseline"
        argv = ["gate", "--update", "--dataset", MINI, "--config", c, "--quiet", "--baseline", str(target)]
    elif writer == "config export --out":
        target, flag = tmp_path / "exports", "--out"
        argv = ["config", "export", c, "--replay-dataset", MINI, "--quiet", "--out", str(target)]
        monkeypatch.setattr(export_mod, "make_folders_private", _denied)
    elif writer == "index --out":
        target, flag = tmp_path / "idx", "--out"
        argv = ["index", "--dataset", MINI, "--config", c, "--quiet", "--out", str(target)]
        monkeypatch.setattr(store_mod, "make_folders_private", _denied)
    elif writer == "eval --out":
        target, flag = tmp_path / "run", "--out"
        argv = ["eval", "--dataset", MINI, "--config", c, "--quiet", "--out", str(target)]
        monkeypatch.setattr(runs_mod, "make_folders_private", _denied)
    else:
        run = tmp_path / "run"
        assert main(["eval", "--dataset", MINI, "--config", c, "--quiet", "--out", str(run)]) == 0
        capsys.readouterr()
        target, flag = tmp_path / "r.html", "--out"
        argv = ["report", str(run), "--out", str(target)]
    monkeypatch.setattr(util_mod, "tempfile", _NoTemp)  # atomic_write_text and atomic_directory fail
    rc = main(argv)
    line = _one_line(capsys, rc, flag, target)
    assert "Permission denied" in line
    assert not os.path.lexists(target)
