#!/usr/bin/env bash
# Installs what building, testing and the demo need: Debian's packages from apt,
# and the Python packages into one project environment, build/venv. Every Python
# thing (the _core module's build, the tests, the demo, the benchmarks) runs
# through build/venv/bin/python; nothing is pip-installed into a system Python
# (Debian marks its own externally managed). Quick no-op when everything is there.
#   deps.sh           everything `make test` and `make demo` need
#   deps.sh --venv    only Debian's packages and a bare build/venv (what `make` needs)
#   deps.sh --bench   also what only `make bench` uses (wrk; the peers from PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

DEBIAN_PACKAGES=(
  cmake ninja-build g++ pkg-config
  ccache   # one compile shared by the release build and `pip install .` (its test)
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  libsimdjson-dev   # reading samples.jsonl back (trainvitals analyze)
  libgtest-dev googletest libbenchmark-dev
  libcpp-httplib-dev   # the Prometheus endpoint and the Pushgateway client
  libnghttp2-dev   # serve's gRPC call to the kubelet (HTTP/2)
  libsqlite3-dev   # the run history (trainvitals runs)
  libpq-dev   # the run history on PostgreSQL (its header; libpq5 is loaded at run time)
  libncurses-dev   # the terminal of trainvitals top
  tmux   # the top tests drive it in a real terminal
  prometheus prometheus-pushgateway   # real servers the integration tests start
  prometheus-alertmanager   # the real server the alert tests post to
  postgresql   # a real server the run history's tests and benchmark start
  slurmctld slurmd slurm-client munge   # a real Slurm cluster the serve tests start
  clang-format clang-tidy
  clang libclang-rt-14-dev llvm   # sanitizer builds and libFuzzer (make sanitize, make fuzz)
  python3-psutil   # the peer measured side by side in `make bench`
  python3-torch python3-numpy   # PyTorch on CPU for the demo, the examples and the tests
  pybind11-dev python3-dev   # the trainvitals._core Python module
  python3-venv python3-yaml python3-typing-extensions   # build/venv over Debian's python3 and PyTorch
  chromium chromium-driver   # the report tests open the page in a real headless browser
)
if [ "$mode" = "--bench" ]; then
  DEBIAN_PACKAGES+=(wrk)   # load on /metrics in `make bench`
fi

# One dpkg-query for all: a process per package makes the no-op slow on a busy machine.
installed=$'\n'$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${DEBIAN_PACKAGES[@]}" 2>/dev/null |
  awk '$2 == "installed" {print $1}' || true)$'\n'
missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  [[ $installed == *$'\n'"$p"$'\n'* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

# build/venv: Debian's python3 with its site packages visible, so Debian's PyTorch
# (python3-torch, which PyPI has no build of for this interpreter and CPU) is
# importable beside what pip installs here. One made from another Python is replaced.
VENV=build/venv
if ! grep -qx "home = /usr/bin" "$VENV/pyvenv.cfg" 2>/dev/null ||
   ! grep -qx "include-system-site-packages = true" "$VENV/pyvenv.cfg" ||
   [ ! -x "$VENV/bin/python" ]; then
  echo "deps: creating $VENV (Debian's python3, seeing Debian's PyTorch)"
  rm -rf "$VENV"
  mkdir -p build
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
[ "$mode" = "--venv" ] && exit 0

# What the tests and the demo import, pinned to versions that work together:
# - numpy stays 1.x. Debian's torch 1.13 is built against numpy 1.24 and works
#   with any later 1.x, but not with numpy 2 ("RuntimeError: Numpy is not
#   available" on torch.from_numpy). Unpinned, TensorFlow pulls numpy 2 into the
#   venv, where it would shadow Debian's numpy for torch too. 1.26.4 is the last
#   1.x and the oldest TensorFlow 2.21 accepts.
# - tensorflow-cpu 2.21, keras 3.15 and paddlepaddle 3.3 are the newest that still
#   accept numpy 1.26 (checked: each trains, beside torch and Lightning, in this venv).
# - pandas 3.0 (3.1 needs numpy 2); packaging 24.1 is what Lightning 2.2 wants.
# - pytest (pytest-xdist for `make test TEST_JOBS=3`, the integration test files
#   side by side), the readers the integration tests check our files with (TensorBoard,
#   tbparse, pandas, VisualDL), pyte for the terminal tests.
PYTHON_PACKAGES=(
  numpy==1.26.4 tensorflow-cpu==2.21.0 keras==3.15.1 paddlepaddle==3.3.1
  pandas==3.0.6 packaging==24.1
  pytest==9.2.0 pytest-xdist==3.8.0 tensorboard==2.21.0 tbparse==0.0.9 visualdl==2.5.3 pyte==0.8.2
  selenium==4.32.0   # drives Chromium in the report tests; the newest that keeps Debian's urllib3 1.26
  grpcio==1.85.1 grpcio-tools==1.85.1   # the kubelet's pod-resources API, served to `serve` in its tests
)
# Lightning over Debian's PyTorch, with --no-deps: its requirements would make pip
# install a PyPI torch (a CUDA build, gigabytes) over Debian's. Its small
# dependencies are named here instead (PyYAML and typing-extensions come from Debian).
# 2.2 is the last Lightning for torch 1.13 (2.3 and later import torch 2.0's
# LRScheduler). LightningModule() imports torch.distributed._shard, which
# Debian's torch 1.13 cannot import under Python 3.11 (a dataclass default 3.11
# refuses); the venv carries PyTorch 2.0's one-line fix of that module
# (scripts/venv/_trainvitals_torch311.py, below), so users' Lightning scripts run
# unpatched. The alternative, a PyPI torch 2.x, is a 3.0 GB download (its CUDA
# libraries) and 5.4 GB on disk.
LIGHTNING_PACKAGES=(
  lightning==2.2.5 lightning-utilities==0.11.9 torchmetrics==1.2.1 fsspec==2024.6.1 tqdm==4.70.1
)
# The peers `make bench` measures side by side with trainvitals (psutil is Debian's).
BENCH_PACKAGES=(nvitop==1.7.2 nvitop-exporter==1.7.2 gpustat==1.1.1 mlflow-skinny==3.17.2)

# Which of these pins the venv does not hold: importlib.metadata, no import, so
# this check takes a fraction of a second (importing TensorFlow alone takes seconds).
unmet() {
  "$VENV/bin/python" - "$@" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
unmet = []
for req in sys.argv[1:]:
    name, _, want = req.partition("==")
    try:
        have = version(name)
    except PackageNotFoundError:
        have = None
    if have != want:
        unmet.append(req)
print(" ".join(unmet))
PY
}

pip_install() {
  echo "deps: installing into $VENV: $*"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$@"
}

read -r -a need <<< "$(unmet "${PYTHON_PACKAGES[@]}")"
# The whole list, not only what is missing, so that pip resolves against every pin.
[ ${#need[@]} -eq 0 ] || pip_install "${PYTHON_PACKAGES[@]}"
read -r -a need <<< "$(unmet "${LIGHTNING_PACKAGES[@]}")"
[ ${#need[@]} -eq 0 ] || pip_install --no-deps "${LIGHTNING_PACKAGES[@]}"
# PyTorch 2.0's fix of torch/distributed/_shard/sharded_tensor/metadata.py for
# Python 3.11, loaded by a .pth line at start-up, for a torch older than 2.0 only.
"$VENV/bin/python" - scripts/venv/_trainvitals_torch311.py <<'PY'
import pathlib, shutil, sys, sysconfig
from importlib.metadata import PackageNotFoundError, version
site = pathlib.Path(sysconfig.get_paths()["purelib"])
try:
    old_torch = int(version("torch").split(".")[0]) < 2
except PackageNotFoundError:
    old_torch = False
hook, pth = site / "_trainvitals_torch311.py", site / "_trainvitals_torch311.pth"
if old_torch and sys.version_info >= (3, 11):
    if not hook.exists() or hook.read_bytes() != pathlib.Path(sys.argv[1]).read_bytes():
        shutil.copyfile(sys.argv[1], hook)
    pth.write_text("import _trainvitals_torch311\n")
else:
    hook.unlink(missing_ok=True)
    pth.unlink(missing_ok=True)
PY
if [ "$mode" = "--bench" ]; then
  read -r -a need <<< "$(unmet "${BENCH_PACKAGES[@]}")"
  # numpy==1.26.4 again: a peer's requirements must not lift it to 2.x.
  [ ${#need[@]} -eq 0 ] || pip_install "${BENCH_PACKAGES[@]}" numpy==1.26.4 packaging==24.1
fi
exit 0
