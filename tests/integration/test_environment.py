"""A plain Debian 12 runs `make test` and `make demo`: with only /usr/bin and /bin on
PATH, every Python thing comes from the project environment build/venv (Debian's
python3 with its PyTorch, plus what scripts/deps.sh installs there), and the
_core module is built for that interpreter."""
import os
import pathlib
import subprocess
import time

import pytest

from conftest import ROOT

VENV_PY = ROOT / "build" / "venv" / "bin" / "python"

pytestmark = pytest.mark.install


def debian_only_env(**extra):
    """What a fresh login on Debian has: no other Python first on PATH."""
    return {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8", **extra}


@pytest.fixture
def venv_py():
    if not VENV_PY.exists():
        pytest.fail(f"{VENV_PY} is missing: `make deps` creates it")
    return str(VENV_PY)


def test_deps_is_a_quick_no_op_with_only_debian_on_path(venv_py):
    start = time.monotonic()
    proc = subprocess.run(["scripts/deps.sh"], cwd=ROOT, env=debian_only_env(),
                          capture_output=True, text=True, timeout=300)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "", proc.stdout  # nothing to install, no environment to make
    assert took < 30, f"deps.sh took {took:.1f} s with everything there"


def test_project_environment_is_debians_python_with_pinned_numpy(venv_py):
    cfg = (ROOT / "build" / "venv" / "pyvenv.cfg").read_text().splitlines()
    assert "home = /usr/bin" in cfg and "include-system-site-packages = true" in cfg, cfg
    # Debian's torch (built against numpy 1.24) converts arrays only under numpy 1.x.
    code = ("import numpy, torch; t = torch.from_numpy(numpy.arange(3.0)); "
            "print(numpy.__version__, torch.__file__, float(t.sum()))")
    proc = subprocess.run([venv_py, "-c", code], env=debian_only_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    numpy_version, torch_file, total = proc.stdout.split()
    assert numpy_version.startswith("1."), numpy_version
    assert torch_file.startswith("/usr/lib/python3/dist-packages/"), torch_file
    assert float(total) == 3.0


def test_core_module_is_built_for_the_project_python(venv_py):
    build = ROOT / os.environ.get("TRAINVITALS_BUILD", "build/release")
    cache = dict(line.split("=", 1) for line in (build / "CMakeCache.txt").read_text().splitlines()
                 if "=" in line and not line.startswith(("#", "//")))
    if cache.get("TRAINVITALS_PYTHON:BOOL") == "OFF":
        pytest.skip(f"{build} does not build the Python module")
    include = subprocess.run([venv_py, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert cache["_Python_EXECUTABLE:INTERNAL"] == str(VENV_PY), cache["_Python_EXECUTABLE:INTERNAL"]
    assert cache["_Python_INCLUDE_DIR:INTERNAL"] == include, cache["_Python_INCLUDE_DIR:INTERNAL"]
    proc = subprocess.run([venv_py, "-c", "import trainvitals._core as c; print(c.__file__)"],
                          env=debian_only_env(PYTHONPATH=str(ROOT / "python")),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().startswith(str(ROOT / "python" / "trainvitals")), proc.stdout


def test_make_demo_passes_with_only_debian_on_path(venv_py, tmp_path):
    build = (ROOT / os.environ.get("TRAINVITALS_BUILD", "build/release")).resolve()
    if build != (ROOT / "build" / "release").resolve():
        pytest.skip(f"`make demo` uses build/release; these tests run {build}")
    env = debian_only_env(TRAINVITALS_DEMO_RUNS=str(tmp_path))
    proc = subprocess.run(["make", "demo"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = sorted(p.name.rsplit("-", 2)[0] for p in pathlib.Path(tmp_path).iterdir())
    assert runs == ["demo", "demo-markers"], runs
    assert "epoch" in proc.stdout and "phases:" in proc.stdout, proc.stdout[-3000:]
    # the demo's trainings ran with the project environment's interpreter
    for run in pathlib.Path(tmp_path).iterdir():
        meta = (run / "meta.json").read_text()
        assert str(VENV_PY.relative_to(ROOT)) in meta, meta

