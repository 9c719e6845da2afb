#!/usr/bin/env bash
# Builds the Python package's native module (_core) on a GPU machine for its own
# python3, from the static libraries and headers scripts/device-bundle.sh put in
# build/device/core, and lays the package out in DEST (default
# build/gpu-check/py): PYTHONPATH=DEST then imports trainvitals. Needs g++,
# Python.h and pybind11 on that machine (PyTorch's images have them: Triton
# and torch.utils.cpp_extension need the same).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEST=${1:-$ROOT/build/gpu-check/py}
CORE=$ROOT/build/device/core
PY=${PYTHON:-python3}
inc=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
pyb=$($PY -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || echo /usr/include)
suffix=$($PY -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[ -f "$inc/Python.h" ] || { echo "build_core: no Python.h in $inc" >&2; exit 1; }
rm -rf "$DEST"
mkdir -p "$DEST"
cp -r "$ROOT/python/trainvitals" "$DEST/"
rm -f "$DEST"/trainvitals/_core*.so
# The shared libraries are linked by path, so that the machine needs no -dev links.
shared=()
for lib in "$ROOT"/build/device/lib*.so*; do
  case $(basename "$lib") in
    libstdc++*|libgcc_s*|libbenchmark*) ;;
    *) shared+=("$lib") ;;
  esac
done
# shellcheck disable=SC2046
g++ -std=c++20 -O2 -fPIC -shared -fvisibility=hidden $(cat "$CORE/defines.txt") \
  -I "$ROOT/src" -I "$CORE/include" -I "$pyb" -I "$inc" \
  "$ROOT/src/python/module.cc" -o "$DEST/trainvitals/_core$suffix" \
  -Wl,--start-group "$CORE"/libtv_*.a -Wl,--end-group "${shared[@]}" \
  -Wl,-rpath,"$ROOT/build/device" -ldl -lpthread
echo "build_core: $DEST/trainvitals/_core$suffix"
