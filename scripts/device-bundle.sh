#!/usr/bin/env bash
# Packs the release CLI and benchmarks with the shared libraries they need into
# build/device/, for a GPU machine that lacks the build dependencies. Run there
# as LD_LIBRARY_PATH=build/device build/device/trainvitals ...
#
# build/device/core/ holds what the Python package's native module needs to be
# built there for that machine's own python3 (scripts/gpu_check/build_core.sh):
# the layers' static libraries (position-independent, debug info stripped) and
# the third-party headers module.cc includes; pybind11 and Python.h come from
# the machine itself.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build/release --target trainvitals trainvitals_bench _core >/dev/null
rm -rf build/device
mkdir -p build/device/core/include
# Every shared library but the C library's own, which the machine has.
libs() {
  ldd "$1" | awk '/=> \// {print $3}' |
    grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so'
}
for bin in build/release/trainvitals build/release/trainvitals_bench python/trainvitals/_core*.so; do
  case $bin in
    *.so) ;;
    *) strip -o "build/device/$(basename "$bin")" "$bin" ;;
  esac
  libs "$bin" | xargs -r -I{} cp -Lu {} build/device/
done
# The C++ runtime only where the machine's own is older than ours: a newer one
# serves both, and python3's extensions there may need it.
mkdir -p build/device/compat
mv build/device/libstdc++.so.* build/device/libgcc_s.so.* build/device/compat/
for a in build/release/libtv_*.a; do
  strip --strip-debug -o "build/device/core/$(basename "$a")" "$a"
done
# The module's compile definitions, and the headers module.cc reads from
# /usr/include beyond the C library's, the compiler's, Python's and pybind11's.
python3 -c 'import json, shlex
for e in json.load(open("build/release/compile_commands.json")):
    if "/_core.dir/" in e["command"]:
        print(" ".join(a for a in shlex.split(e["command"]) if a.startswith("-D") and "_EXPORTS" not in a))
        break' >build/device/core/defines.txt
py_inc=$(build/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
# shellcheck disable=SC2046
g++ -std=c++20 $(cat build/device/core/defines.txt) -I src -isystem "$py_inc" -M src/python/module.cc |
  tr ' \\' '\n\n' | grep -E '^/usr/include/[^/]+/' |
  grep -vE '^/usr/include/(python3[^/]*|pybind11|x86_64-linux-gnu|c\+\+|linux|asm[^/]*|bits|sys|gnu)/' |
  sed -E 's#^/usr/include/([^/]+)/.*#\1#' | sort -u |
  while read -r top; do cp -r "/usr/include/$top" build/device/core/include/; done
ls build/device/core/include
du -sh build/device
