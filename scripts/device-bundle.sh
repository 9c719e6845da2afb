#!/usr/bin/env bash
# Packs the release CLI and benchmarks with the shared libraries they need into
# build/device/, for a GPU machine that lacks the build dependencies. Run there
# as LD_LIBRARY_PATH=build/device build/device/trainvitals ...
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build/release --target trainvitals trainvitals_bench >/dev/null
rm -rf build/device
mkdir -p build/device
for bin in trainvitals trainvitals_bench; do
  strip -o "build/device/$bin" "build/release/$bin"
  ldd "build/release/$bin" | awk '/=> \// {print $3}' |
    grep -E 'libfmt|libtomlplusplus|libbenchmark|libstdc\+\+|libgcc_s' |
    xargs -r -I{} cp -Lu {} build/device/
done
du -sh build/device
