"""Run data is private by default on a shared machine (docs/cli.md "run",
"runs"): the run directory trainvitals makes is 0700 and the run history
0600, so another local user reads neither; `--share` opens the run directory."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from conftest import cli_path


@pytest.fixture
def shared_tmp():
    """A directory every user may enter, as /tmp is (pytest's own is its owner's only)."""
    path = tempfile.mkdtemp(prefix="tv-private-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run(out, db, *flags):
    args = [cli_path(), "run", "--quiet", "--out", out, "--db", db, "--interval", "0.2", *flags,
            "--", sys.executable, "-c", "import time; time.sleep(0.5)"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def can_read(other_user, path):
    """Whether the other user can read `path` (cat exits 0)."""
    return other_user.run(["cat", path], capture_output=True).returncode == 0


def test_the_run_directory_and_history_are_private(shared_tmp, other_user):
    out = os.path.join(shared_tmp, "runs", "secret")
    db = os.path.join(shared_tmp, "history", "runs.db")
    run(out, db)
    assert mode(out) == 0o700
    assert mode(os.path.join(shared_tmp, "runs")) == 0o755  # a parent, made as mkdir -p makes it
    assert mode(os.path.dirname(db)) == 0o700
    assert mode(db) == 0o600
    for name in ("summary.json", "meta.json", "events.jsonl"):
        path = os.path.join(out, name)
        assert os.path.exists(path)
        assert not can_read(other_user, path), name
    assert not can_read(other_user, db)


def test_a_history_in_a_directory_others_can_enter_is_still_private(shared_tmp, other_user):
    db = os.path.join(shared_tmp, "runs.db")  # the user's own 0755 directory: kept as it is
    run(os.path.join(shared_tmp, "run"), db)
    assert mode(shared_tmp) == 0o755
    assert mode(db) == 0o600
    assert not can_read(other_user, db)


def test_share_opens_the_run_directory(shared_tmp, other_user):
    out = os.path.join(shared_tmp, "shared")
    run(out, os.path.join(shared_tmp, "history", "runs.db"), "--share")
    assert mode(out) == 0o755
    for name in ("summary.json", "meta.json", "events.jsonl", "samples.jsonl"):
        assert can_read(other_user, os.path.join(out, name)), name


def test_an_existing_out_directory_keeps_its_mode(shared_tmp):
    out = os.path.join(shared_tmp, "mine")
    os.mkdir(out)
    os.chmod(out, 0o750)
    run(out, os.path.join(shared_tmp, "history", "runs.db"))
    assert mode(out) == 0o750
