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
  python3-psutil   # the peer measured side by side in `make bench`
  python3-torch python3-numpy   # PyTorch on CPU for the demo and the examples
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
PYTHON_PACKAGES=(pytest:pytest tensorboard:tensorboard tbparse:tbparse pandas:pandas
  visualdl:visualdl)
py_missing=()
for pair in "${PYTHON_PACKAGES[@]}"; do
  python3 -c "import ${pair%%:*}" 2>/dev/null || py_missing+=("${pair#*:}")
done
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "deps: installing ${py_missing[*]}"
  python3 -m pip install -q "${py_missing[@]}"
fi
