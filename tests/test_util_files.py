"""util.open_regular / read_json_file: regular files only, errors that name the file and never its
content (issue 27, items 8, 12, 13)."""
from __future__ import annotations

import os

import pytest

from searchkit.errors import DataError
from searchkit.util import open_regular, problem_of, read_json_file, read_regular_text


def test_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="FIFO"):
        read_json_file(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        open_regular(fifo, "rb")


def test_folder_is_refused(tmp_path):
    with pytest.raises(DataError, match="folder"):
        read_regular_text(tmp_path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_json_file(tmp_path / "nope.json")


@pytest.mark.parametrize("content, problem", [
    ("SECRET-LINE-42 is not json\n", "not valid JSON"),
    ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ('{"a": ' + "7" * 5000 + "}", "not usable JSON"),
])
def test_bad_json_names_the_file_never_its_content(tmp_path, content, problem):
    p = tmp_path / "x.json"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as info:
        read_json_file(p)
    msg = str(info.value)
    assert problem in msg and str(p) in msg and info.value.path == str(p) and problem in problem_of(info.value)
    assert "SECRET" not in msg and "7777" not in msg


def test_not_utf8_and_size_cap(tmp_path):
    p = tmp_path / "bin"
    p.write_bytes(b"ok\xff\xfe")
    with pytest.raises(DataError, match="not UTF-8"):
        read_regular_text(p)
    p.write_text("x" * 100, encoding="utf-8")
    with pytest.raises(DataError, match="larger than 10 bytes"):
        read_regular_text(p, limit=10)
    assert read_regular_text(p, limit=100) == "x" * 100


def test_folders_made_for_a_private_file_are_owner_only_whatever_the_umask(tmp_path):
    """atomic_write_text (reports, exports' configs, baselines, the serve tokens file, tune's output)
    creates the missing folders of its path owner-only: under umask 0 they were 0777, so anyone
    could swap the file in them (a tokens file, a report) for their own (issue 27 item 1). Folders
    that exist keep their mode."""
    from searchkit.util import atomic_write_text

    (tmp_path / "shared").mkdir(mode=0o755)
    os.chmod(tmp_path / "shared", 0o755)
    old = os.umask(0)
    try:
        atomic_write_text(tmp_path / "shared" / "a" / "b" / "tok.json", "{}\n")
    finally:
        os.umask(old)
    mode = lambda p: os.stat(p).st_mode & 0o777  # noqa: E731
    assert mode(tmp_path / "shared") == 0o755
    assert mode(tmp_path / "shared" / "a") == 0o700 and mode(tmp_path / "shared" / "a" / "b") == 0o700
    assert mode(tmp_path / "shared" / "a" / "b" / "tok.json") == 0o600
