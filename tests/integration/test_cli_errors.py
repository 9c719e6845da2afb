"""Mistakes on the command line are said in trainvitals' own words: one line that
starts with "trainvitals: ", names the command, says what was wrong and suggests
the near option, command or unit; exit code 2; never the parser's raw text."""
import subprocess
import sys

import pytest

from conftest import cli_path

# Sentences of the command-line parser (CLI11) that must never reach a user.
RAW_PHRASES = ("The following argument", "not expected", "A subcommand is required",
               "Run with --help", "unit not recognized", "Allowed values", "is required",
               "Could not convert", "not in range", "required but received", "missing\n")


def tv(*args, cwd):
    return subprocess.run([cli_path(), *args], capture_output=True, text=True, timeout=30,
                          cwd=cwd, stdin=subprocess.DEVNULL)


MISTAKES = [
    # an unknown option, with the one meant; `--` kept away from the parser
    (["run", "--intervl", "2", "--", "python3", "x.py"],
     "trainvitals: run: unknown option --intervl (did you mean --interval?)"),
    # ... and the same without `--`: it is not taken for the command to run
    (["run", "--intervl", "2", "python3", "x.py"],
     "trainvitals: run: unknown option --intervl (did you mean --interval?)"),
    # an option of the training script given where run's own options go
    (["run", "--epochs", "5", "python3", "train.py"],
     "trainvitals: run: unknown option --epochs; the command to run and its own options go "
     "after --: trainvitals run [OPTIONS] [--] COMMAND [ARGS...]"),
    (["run", "python3", "--", "train.py"],
     "trainvitals: run: \"python3\" before --: the whole command goes after --: "
     "trainvitals run [OPTIONS] [--] COMMAND [ARGS...]"),
    # a value of the wrong type, a missing value, a missing argument
    (["run", "--interval", "fast", "--", "true"],
     "trainvitals: run: --interval: \"fast\" is not a number of seconds"),
    (["run", "--interval"], "trainvitals: run: --interval needs a value (SECONDS)"),
    (["run", "--quiet=maybe", "--", "true"],
     "trainvitals: run: --quiet takes no value (\"maybe\" given)"),
    (["run"],
     "trainvitals: run: missing COMMAND (give it after --); "
     "usage: trainvitals run [OPTIONS] [--] COMMAND [ARGS...]"),
    (["attach"], "trainvitals: attach: missing PID; usage: trainvitals attach [OPTIONS] PID"),
    # commands: mistyped, far from any, none
    (["frobnicate"],
     "trainvitals: unknown command \"frobnicate\"; commands: run, attach, check, export, "
     "analyze, report, runs, compare, pick, top, serve, stacks, profile"),
    (["anlyze", "latest"], "trainvitals: unknown command \"anlyze\" (did you mean \"analyze\"?)"),
    ([], "trainvitals: give a command: run, attach, check, export, analyze, report, runs, "
         "compare, pick, top, serve, stacks, profile (trainvitals --help describes them)"),
    (["stacks"], "trainvitals: stacks: missing RUN|PID; usage: trainvitals stacks [OPTIONS] "
                 "RUN|PID"),
    # an option of a command given before it
    (["--json", "runs"],
     "trainvitals: unknown option --json before the command: it goes after it "
     "(trainvitals runs --json)"),
    (["--versoin"], "trainvitals: unknown option --versoin (did you mean --version?)"),
    # sizes and their units
    (["pick", "--min-free-memory", "2GBB"],
     "trainvitals: pick: --min-free-memory: \"2GBB\" is not a size: unknown unit \"GBB\" "
     "(did you mean \"GB\"?); examples: 512MiB, 2GiB"),
    (["pick", "--min-free-memory", "lots"],
     "trainvitals: pick: --min-free-memory: \"lots\" is not a size: it does not start with a "
     "number; examples: 512MiB, 2GiB"),
    (["pick", "x"], "trainvitals: pick: N: \"x\" is not a whole number"),
    (["pick", "0"], "trainvitals: pick: N: 0 is out of range: give 1 to 1024"),
    (["pick", "2", "3"],
     "trainvitals: pick: too many arguments: \"3\" (usage: trainvitals pick [OPTIONS] [N])"),
    # the commands that read run directories
    (["analyze"], "trainvitals: analyze: give RUN... or --job ID"),
    (["analyze", "a", "--job", "j42"], "trainvitals: analyze: give RUN... or --job ID"),
    (["analyze", "--json=maybe", "a"],
     "trainvitals: analyze: --json takes no value (\"maybe\" given)"),
    (["compare", "a"], "trainvitals: compare: needs at least 2 runs (RUN, --job ID), got 1"),
    (["compare"], "trainvitals: compare: needs at least 2 runs (RUN, --job ID), got 0"),
    (["compare", "a", "b", "--jsn"],
     "trainvitals: compare: unknown option --jsn (did you mean --json?)"),
    (["report"], "trainvitals: report: give RUN... or --job ID"),
    (["report", "a", "--job", "j42"], "trainvitals: report: give RUN... or --job ID"),
    (["report", "a", "--comprae", "b"],
     "trainvitals: report: unknown option --comprae (did you mean --compare?)"),
    # top's refresh interval
    (["top", "--interval", "fast"],
     "trainvitals: top: --interval: \"fast\" is not a number of seconds"),
    (["top", "--interval", "0"],
     "trainvitals: top: --interval: 0 is out of range: give 0.1 to 3600"),
    (["top", "--bogus"],
     "trainvitals: top: unknown option --bogus; trainvitals top --help lists the options"),
    # the run history, and its own commands
    (["runs", "statz"], "trainvitals: runs: unknown command \"statz\" (did you mean \"stats\"?)"),
    (["runs", "stats", "--jsn"],
     "trainvitals: runs stats: unknown option --jsn (did you mean --json?)"),
    (["runs", "--limit", "-1"], "trainvitals: runs: --limit: -1 is out of range: give 0 or more"),
    (["runs", "--since"], "trainvitals: runs: --since needs a value (WHEN)"),
    (["runs", "import"],
     "trainvitals: runs import: missing DIR; usage: trainvitals runs import [OPTIONS] DIR..."),
    (["runs", "stats", "--by", "usr"],
     "trainvitals: runs stats: --by: unknown value \"usr\" (did you mean \"user\"?); one of: "
     "user, account, namespace, partition, host, node, job, name"),
    (["runs", "show"], "trainvitals: runs show: give RUN or --job ID"),
    (["serve", "--db", "runs.db"], "trainvitals: serve: --db needs --spool"),
    # a value out of a fixed list
    (["export", "a", "--format", "tsv"],
     "trainvitals: export: --format: unknown value \"tsv\" (did you mean \"csv\"?); one of: csv"),
]


@pytest.mark.parametrize("args,said", MISTAKES, ids=[" ".join(a) or "(none)" for a, _ in MISTAKES])
def test_a_mistake_is_said_in_one_line_of_our_own(tmp_path, args, said):
    p = tv(*args, cwd=tmp_path)
    assert (p.returncode, p.stderr) == (2, said + "\n")
    assert p.stdout == ""
    for phrase in RAW_PHRASES:
        assert phrase not in p.stderr
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing written


def test_help_and_version_still_print_and_succeed(tmp_path):
    top = tv("--help", cwd=tmp_path)
    assert top.returncode == 0 and top.stderr == ""
    assert "Usage: trainvitals [OPTIONS] SUBCOMMAND" in top.stdout
    run = tv("run", "--help", cwd=tmp_path)
    assert run.returncode == 0
    assert "Usage: trainvitals run [OPTIONS] [--] COMMAND [ARGS...]" in run.stdout
    pick = tv("pick", "--help", cwd=tmp_path)
    assert "--min-free-memory UINT:SIZE [b, kb(=1000b), kib(=1024b), ...]" in pick.stdout
    version = tv("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() and version.stderr == ""


def test_a_correct_command_line_still_runs(tmp_path):
    out = tmp_path / "run"
    p = tv("run", "--quiet", "--interval", "0.5", "--out", str(out), "--", sys.executable, "-c",
           "import sys; sys.exit(3)", cwd=tmp_path)
    assert p.returncode == 3, p.stderr
    assert (out / "summary.json").exists()
