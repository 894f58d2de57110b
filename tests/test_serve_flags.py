"""`searchkit serve`'s --log-file and --state-dir, checked before anything runs (issue 39 items 6
and 8): a log file that is not a regular file (a FIFO hung the start; a device was chmod-ed 0600)
and a log file or state folder in a missing folder (raw "[Errno 2]" lines naming no flag, the state
folder's only after the replay and the index build) are each one line naming the flag, nothing
touched. The config named does not exist: a check that came after loading anything would say so."""
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.errors import InputError
from searchkit.serve import calllog

pytest.importorskip("mcp", reason="the 'serve' extra: `searchkit serve` needs it")

BASE = ["serve", "--config", "no-such-config.json", "--workspace", "no-such-ws", "--caller", "u-anna"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and "Errno" not in err, err
    return err


def test_a_fifo_as_log_file_is_refused_at_once_and_left_alone(tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-m", "searchkit.cli", *BASE, "--log-file", str(fifo)],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "--log-file" in run.stderr and "not a regular file" in run.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_device_as_log_file_is_refused_and_its_mode_kept(tmp_path, capsys):
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError, AttributeError):
        pytest.skip("cannot make a device node here (not root)")
    os.chmod(dev, 0o666)
    assert main([*BASE, "--log-file", str(dev)]) == 2
    err = _one_line(capsys)
    assert "--log-file" in err and "character device" in err
    assert stat.S_IMODE(os.stat(dev).st_mode) == 0o666
    with pytest.raises(InputError, match="not a regular file"):
        calllog.open_log_file(dev)  # the server's own open refuses it as well
    assert stat.S_IMODE(os.stat(dev).st_mode) == 0o666


def test_a_folder_as_log_file_is_refused(tmp_path, capsys):
    assert main([*BASE, "--log-file", str(tmp_path)]) == 2
    assert "--log-file" in _one_line(capsys)


@pytest.mark.parametrize("flag", ["--log-file", "--state-dir"])
def test_a_missing_folder_is_one_line_naming_the_flag_before_anything_loads(tmp_path, capsys, flag):
    target = tmp_path / "missing" / ("calls.log" if flag == "--log-file" else "state")
    assert main([*BASE, flag, str(target)]) == 2
    err = _one_line(capsys)
    assert err.startswith(f"searchkit: {flag} ") and "no such folder" in err
    assert not (tmp_path / "missing").exists()


def test_a_state_dir_that_is_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x", encoding="utf-8")
    assert main([*BASE, "--state-dir", str(f)]) == 2
    assert "--state-dir" in _one_line(capsys) and f.read_text(encoding="utf-8") == "x"


def test_a_log_file_is_created_owner_only_and_an_existing_one_made_so(tmp_path):
    new = tmp_path / "new.log"
    stream = calllog.open_log_file(new)
    stream.write("x\n")
    stream.close()
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600 and new.read_text(encoding="utf-8") == "x\n"
    old = tmp_path / "old.log"
    old.write_text("kept\n", encoding="utf-8")
    os.chmod(old, 0o644)
    stream = calllog.open_log_file(old)
    stream.write("more\n")
    stream.close()
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o600 and old.read_text(encoding="utf-8") == "kept\nmore\n"
    assert Path(old).is_file()
