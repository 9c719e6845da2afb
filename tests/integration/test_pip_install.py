"""`pip install .` builds the core and the module and installs the CLI: a fresh
virtual environment gets a working package and `trainvitals` command, with
nothing from the source tree on its path. The first build compiles the core
(minutes on 2 cores); build/wheel-<tag> keeps it for the next."""
import json
import os
import subprocess
import sys

import pytest

from conftest import HELPERS, ROOT

pytestmark = pytest.mark.install


def test_pip_install_gives_the_package_and_the_cli(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)],
                         capture_output=True, text=True, timeout=1800, env=env)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]

    cli = venv / "bin" / "trainvitals"
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and "0.1.0" in version.stdout, version

    out = tmp_path / "run"
    script = [str(venv / "bin" / "python"), str(HELPERS / "markers_script.py"), "--steps", "4"]
    run = subprocess.run([str(cli), "run", "--quiet", "--out", str(out), "--", *script],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert [e["steps"] for e in summary["epochs"]] == [4, 4, 4]
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import trainvitals; print(trainvitals.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
    assert str(venv) in where.stdout, where
