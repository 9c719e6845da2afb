#!/usr/bin/env bash
# Regenerates the generated blocks of docs/schema.md, docs/cli.md and
# docs/findings.md from the metric, option and findings tables, and docs/alerts.md's built-in rules (the unit tests fail when they drift).
set -euo pipefail
cli=${1:-build/release/trainvitals}
for pair in metrics:docs/schema.md options:docs/cli.md findings:docs/findings.md alerts:docs/alerts.md; do
  what=${pair%%:*}
  file=${pair#*:}
  python3 - "$file" "$("$cli" docs "$what")" <<'PY'
import sys, re
path, block = sys.argv[1], sys.argv[2]
text = open(path).read()
start, end = "<!-- generated -->\n", "<!-- end generated -->"
i, j = text.index(start) + len(start), text.index(end)
open(path, "w").write(text[:i] + block.rstrip("\n") + "\n" + text[j:])
PY
done
