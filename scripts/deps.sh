#!/usr/bin/env bash
# Installs what building, testing and the demo need, from Debian's packages and
# the Python package registry. Quick no-op when everything is there.
# `deps.sh --bench` adds what only `make bench` uses (wrk).
set -euo pipefail

DEBIAN_PACKAGES=(
  cmake ninja-build g++ pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  libgtest-dev googletest libbenchmark-dev
  libcpp-httplib-dev   # the Prometheus endpoint and the Pushgateway client
  prometheus prometheus-pushgateway   # real servers the integration tests start
  clang-format clang-tidy
  clang libclang-rt-14-dev llvm   # sanitizer builds and libFuzzer (make sanitize, make fuzz)
  python3-psutil   # the peer measured side by side in `make bench`
  python3-torch python3-numpy   # PyTorch on CPU for the demo and the examples
  pybind11-dev python3-dev   # the trainvitals._core Python module
  python3-venv python3-yaml python3-typing-extensions   # build/torch-venv: Lightning over Debian's PyTorch
)
if [ "${1:-}" = "--bench" ]; then
  DEBIAN_PACKAGES+=(wrk)   # load on /metrics in `make bench`
fi

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
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

# The tests' Python: the first python3 on PATH, with pytest and the readers the
# integration tests check our files with (TensorBoard, tbparse, pandas, VisualDL).
# Also the frameworks the integration tests train with (TensorFlow/Keras, PaddlePaddle).
PYTHON_PACKAGES=(pytest:pytest tensorboard:tensorboard tbparse:tbparse pandas:pandas
  visualdl:visualdl tensorflow:tensorflow-cpu keras:keras paddle:paddlepaddle)
# find_spec, not import: importing TensorFlow alone takes seconds.
read -r -a py_missing <<< "$(python3 - "${PYTHON_PACKAGES[@]}" <<'PY'
import importlib.util, sys
pairs = [a.split(":", 1) for a in sys.argv[1:]]
print(" ".join(pkg for mod, pkg in pairs if importlib.util.find_spec(mod) is None))
PY
)"
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "deps: installing ${py_missing[*]}"
  python3 -m pip install -q "${py_missing[@]}"
fi

# Lightning beside Debian's PyTorch (which only /usr/bin/python3 sees): a venv that
# inherits the system packages. --no-deps: otherwise pip pulls a CUDA build of torch.
TORCH_VENV=build/torch-venv
cd "$(dirname "$0")/.."
if [ ! -x "$TORCH_VENV/bin/python" ] || ! "$TORCH_VENV/bin/python" -c \
    "import importlib.util as u, sys; sys.exit(not (u.find_spec('torch') and u.find_spec('lightning')))"; then
  echo "deps: creating $TORCH_VENV (Lightning over Debian's PyTorch)"
  mkdir -p build
  [ -x "$TORCH_VENV/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$TORCH_VENV"
  "$TORCH_VENV/bin/pip" install -q --no-deps lightning==2.2.5 lightning-utilities==0.11.9 \
    torchmetrics==1.2.1 fsspec==2024.6.1 tqdm packaging==24.1
fi
