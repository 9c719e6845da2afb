#!/usr/bin/env bash
# clang-tidy with every check the project keeps (.clang-tidy) as an error, on
# the C++ sources the newest TIDY_COMMITS commits (default 10) added or changed:
# each changed .cc, and for a changed header the .cc beside it (the headers of
# src/ are checked through the sources that include them). Uses the compile
# database of the tidy preset (configured here when missing; nothing is built:
# the release build compiles its files in batches, which clang-tidy cannot
# check one by one); two files at a time. `make lint` checks every file.
# TIDY_TESTS=0 leaves out the unit tests (*_test.cc): .ci/run does, so that a
# change to many tests cannot hold the run up (clang-tidy takes about 17 s of
# CPU a file here).
#   TIDY_COMMITS=10 [TIDY_TESTS=0] scripts/tidy-changed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
commits=${TIDY_COMMITS:-10}
db=build/tidy
[ -f $db/compile_commands.json ] || cmake --preset tidy >/dev/null
total=$(git rev-list --count HEAD)
[ "$commits" -lt "$total" ] || commits=$((total - 1))
files=()
while read -r f; do
  case $f in
    *.h) f=${f%.h}.cc ;;
  esac
  [ "${TIDY_TESTS:-1}" = 0 ] && [[ $f == *_test.cc ]] && continue
  [ -f "$f" ] && grep -q "\"file\": \"$PWD/$f\"" $db/compile_commands.json && files+=("$f")
done < <(git diff --name-only --diff-filter=AMR "HEAD~$commits" HEAD -- 'src/*.cc' 'src/*.h' |
  sort -u)
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)
if [ ${#files[@]} -eq 0 ] || [ -z "${files[0]}" ]; then
  echo "tidy: no C++ source changed in the last $commits commits"
  exit 0
fi
echo "tidy: ${#files[@]} sources changed in the last $commits commits"
printf '%s\n' "${files[@]}" | xargs -P 2 -n 1 clang-tidy -p $db --quiet --warnings-as-errors='*' \
  2> >(grep -v -e '^[0-9]* warnings\? generated' -e '^Suppressed ' -e '^Use -header-filter' \
    -e 'warnings\? treated as errors' >&2)
echo "tidy: clean"
