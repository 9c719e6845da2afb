"""Run directories with hostile files (a shared runs directory another user can write into):
every command that reads one ends within seconds, in bounded memory, with a non-zero exit and a
message naming the file, and `runs import` skips such a directory and imports the others."""
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import cli_path

TIMEOUT_S = 15              # each command ends within a few seconds; this only stops a hang
MEMORY_LIMIT = 2 << 30      # address space: far below the 4-6 GB the old readers grew to


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def tv_cmd(*args, cwd=None):
    return subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT_S, preexec_fn=limited, cwd=cwd)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A healthy run directory, made once per module and copied by each test."""
    out = tmp_path_factory.mktemp("good") / "run"
    p = subprocess.run([cli_path(), "run", "--quiet", "--interval", "0.5", "--out", str(out), "--",
                        sys.executable, "-c", "import time; time.sleep(1.2)"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return out


def copy(good, tmp_path, name):
    d = tmp_path / name
    shutil.copytree(good, d)
    return d


def fifo(path):
    path.unlink()
    os.mkfifo(path)


def dev_zero(path):
    path.unlink()
    path.symlink_to("/dev/zero")


def sparse_2gb(path):
    with open(path, "wb") as f:
        f.truncate(2 << 30)  # 2 GB of holes: no newline anywhere


def directory(path):
    path.unlink()
    path.mkdir()


def deep_key(path):
    s = json.loads(path.read_text())
    text = json.dumps(s)
    path.write_text(text[:-1] + ', "unused": ' + "[" * 100_000 + "]" * 100_000 + "}")


def deep_row(path):
    path.write_text('{"t": 1, "host": ' + "[" * 100_000 + "]" * 100_000 + "}\n")


def wrong_shape_row(path):
    path.write_text('{"t": 1, "elapsed_s": 0, "host": 5}\n')


SAMPLES_ATTACKS = {"fifo": (fifo, "is a FIFO"), "dev-zero": (dev_zero, "is a character device"),
                   "sparse-2gb": (sparse_2gb, "longer than 4 MiB"),
                   "directory": (directory, "is a directory"),
                   "deep": (deep_row, "nested deeper than"),
                   "wrong-shape": (wrong_shape_row, "key host: expected an object, got a number")}

@pytest.mark.parametrize("attack", sorted(SAMPLES_ATTACKS))
@pytest.mark.parametrize("command", ["analyze", "report", "export"])
def test_hostile_samples_end_quickly_and_name_the_file(good, tmp_path, attack, command):
    make, says = SAMPLES_ATTACKS[attack]
    run = copy(good, tmp_path, attack)
    make(run / "samples.jsonl")
    args = {"analyze": ["analyze", run], "report": ["report", run, "-o", tmp_path / "r.html"],
            "export": ["export", run, "--format", "csv"]}[command]
    p = tv_cmd(*args)
    if command == "export" and attack == "wrong-shape":
        # export takes any JSON object as a row: this one is a CSV of t, elapsed_s, host.
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines() == ["t,elapsed_s,host", "1,0,5"]
        return
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert str(run / "samples.jsonl") in p.stderr, p.stderr
    assert says in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "json.exception" not in p.stderr
    assert not (tmp_path / "r.html").exists()


def test_analyze_names_line_and_key_of_a_row_of_the_wrong_shape(good, tmp_path):
    run = copy(good, tmp_path, "one-bad-row")
    rows = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text(rows[0] + '{"t": 2, "gpus": {"index": 0}}\n'
                                       + "".join(rows[1:]))
    p = tv_cmd("analyze", run, "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["rows"] == len(rows)
    assert j["skipped_lines"] == 1
    assert j["first_skipped"] == (f"{run / 'samples.jsonl'}:2: valid JSON but not a row of "
                                  "samples.jsonl (key gpus: expected an array, got an object)")


def test_deep_nesting_in_a_key_no_reader_reads_costs_nothing(good, tmp_path):
    # analyze and report read rows with simdjson, which takes only the keys it
    # needs and never recurses: the row counts; export flattens every key, so
    # it refuses the row.
    run = copy(good, tmp_path, "deep-unused")
    with open(run / "samples.jsonl", "a") as f:
        f.write('{"t": 9e9, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    rows = len((run / "samples.jsonl").read_text().splitlines())
    p = tv_cmd("analyze", run, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["rows"] == rows
    p = tv_cmd("export", run)
    assert p.returncode == 2
    assert f"{run / 'samples.jsonl'}:{rows}: nested deeper than 16 levels" in p.stderr


def test_a_long_line_is_skipped_counted_and_said(good, tmp_path):
    run = copy(good, tmp_path, "long-line")
    rows = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    with open(run / "samples.jsonl", "w") as f:
        f.write(rows[0])
        f.write('{"t": 1, "junk": "' + "x" * (5 << 20) + '"}\n')
        f.writelines(rows[1:])
    note = f"skipped 1 line longer than 4 MiB in {run / 'samples.jsonl'} (line 2)"
    for args in (["analyze", run], ["report", run, "-o", tmp_path / "r.html"],
                 ["export", run, "--format", "csv", "--output", tmp_path / "s.csv"]):
        p = tv_cmd(*args)
        assert p.returncode == 0, p.stderr
        assert note in p.stderr, (args[0], p.stderr)
    assert len((tmp_path / "s.csv").read_text().splitlines()) == 1 + len(rows)
    assert note in (tmp_path / "r.html").read_text()  # on the page too


def wrong_types(path):
    s = json.loads(path.read_text())
    s.update(cost=None, epochs="none", run_dir=7)
    path.write_text(json.dumps(s))


SUMMARY_ATTACKS = {"fifo": (fifo, "summary.json is a FIFO, not a regular file"),
                   "directory": (directory, "summary.json is a directory, not a regular file"),
                   "deep": (deep_key, "summary.json is nested deeper than 64 levels"),
                   "wrong-types": (wrong_types, "summary.json: key run_dir: expected a string, "
                                                "got a number")}


@pytest.mark.parametrize("attack", sorted(SUMMARY_ATTACKS))
def test_hostile_summary_fails_report_and_compare_naming_the_file(good, tmp_path, attack):
    make, says = SUMMARY_ATTACKS[attack]
    run = copy(good, tmp_path, attack)
    make(run / "summary.json")
    p = tv_cmd("compare", good, run)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr == f"trainvitals: {run}: {says}\n"
    p = tv_cmd("report", run, "-o", tmp_path / "r.html")
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert str(run / "summary.json") in p.stderr
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("key,value,says", [
    ("cost", None, "key cost: expected an object, got null"),
    ("epochs", {"1": {}}, "key epochs: expected an array, got an object"),
    ("phases", {"train": 3}, "key phases.train: expected an object, got a number"),
    ("epochs", [{"epoch": 0, "duration_s": "1 s"}],
     "key epochs[0].duration_s: expected a number, got a string"),
    ("phases", {"eval": {"count": 1.5}}, "key phases.eval.count: expected a whole number, got 1.5"),
    ("findings", [{"id": 1}], "key findings[0].id: expected a string, got a number"),
])
def test_compare_names_the_key_of_a_wrong_type(good, tmp_path, key, value, says):
    run = copy(good, tmp_path, "typed")
    s = json.loads((run / "summary.json").read_text())
    s[key] = value
    (run / "summary.json").write_text(json.dumps(s))
    p = tv_cmd("compare", good, run)
    assert p.returncode == 2 and p.stderr == f"trainvitals: {run}: summary.json: {says}\n"


def test_hostile_events_and_meta(good, tmp_path):
    run = copy(good, tmp_path, "events")
    fifo(run / "events.jsonl")
    for args in (["analyze", run], ["report", run, "-o", tmp_path / "r.html"]):
        p = tv_cmd(*args)
        assert p.returncode == 2, p.stderr
        assert f"{run / 'events.jsonl'} is a FIFO, not a regular file" in p.stderr
    # meta.json only adds to a run: one that cannot be used is left out, and said.
    run = copy(good, tmp_path, "meta")
    dev_zero(run / "meta.json")
    p = tv_cmd("compare", good, run)
    assert p.returncode == 0, p.stderr
    assert f"{run}: meta.json is a character device, not a regular file; left out" in p.stderr
    p = tv_cmd("report", run, "-o", tmp_path / "r.html")
    assert p.returncode == 0, p.stderr
    assert f"{run / 'meta.json'} is a character device, not a regular file; left out" in p.stderr


def test_good_run_still_works_with_every_command(good, tmp_path):
    for args in (["analyze", good], ["report", good, "-o", tmp_path / "r.html"],
                 ["export", good, "--format", "csv"], ["compare", good, good]):
        p = tv_cmd(*args)
        assert p.returncode == 0, (args[0], p.stderr)
        assert p.stderr == "", (args[0], p.stderr)
    assert (tmp_path / "r.html").stat().st_size > 0


def test_runs_import_skips_each_hostile_directory_and_imports_the_rest(good, tmp_path):
    root = tmp_path / "shared-runs"
    root.mkdir()
    copy(good, root, "a-good")
    for name, (make, _) in SUMMARY_ATTACKS.items():
        make(copy(good, root, f"b-{name}") / "summary.json")
    db = tmp_path / "runs.db"
    p = tv_cmd("runs", "import", "--db", db, root)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"trainvitals: imported 1 run into {db}, skipped {len(SUMMARY_ATTACKS)}\n"
    assert p.stderr.splitlines() == [f"  skipped {root / ('b-' + name)}: {says}"
                                     for name, (_, says) in sorted(SUMMARY_ATTACKS.items())]


@pytest.fixture
def shared_runs():
    """A runs directory every user may write into (mode 1777), where the neighbour can reach it."""
    root = tempfile.mkdtemp(prefix="tv-shared-runs-", dir="/tmp")
    os.chmod(root, 0o1777)
    yield pathlib.Path(root)
    shutil.rmtree(root, ignore_errors=True)


def test_a_neighbours_fifo_in_a_shared_runs_directory_stops_no_import(good, tmp_path, other_user,
                                                                     shared_runs):
    copy(good, shared_runs, "mine")
    theirs = shared_runs / "theirs"
    made = other_user.run(["sh", "-c", f"mkdir {theirs} && mkfifo {theirs}/summary.json"
                           f" {theirs}/meta.json"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert theirs.stat().st_uid == other_user.uid
    db = tmp_path / "runs.db"
    p = tv_cmd("runs", "import", "--db", db, shared_runs)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"trainvitals: imported 1 run into {db}, skipped 1\n"
    assert p.stderr == f"  skipped {theirs}: summary.json is a FIFO, not a regular file\n"
