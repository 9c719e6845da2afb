#!/usr/bin/env bash
# Regenerates the generated blocks of docs/schema.md, docs/cli.md and
# docs/findings.md from the metric, event, option and findings tables, and docs/alerts.md's built-in rules (the unit tests fail when they drift).
set -euo pipefail
cli=${1:-build/release/trainvitals}
# what:file[:block]: the block between "<!-- generated[ block] -->" and
# "<!-- end generated[ block] -->".
for pair in metrics:docs/schema.md events:docs/schema.md:events options:docs/cli.md \
  findings:docs/findings.md alerts:docs/alerts.md; do
  IFS=: read -r what file block <<<"$pair"
  python3 - "$file" "$("$cli" docs "$what")" "$block" <<'PY'
import sys, re
path, block, name = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
tag = f" {name}" if name else ""
start, end = f"<!-- generated{tag} -->\n", f"<!-- end generated{tag} -->"
i, j = text.index(start) + len(start), text.index(end)
open(path, "w").write(text[:i] + block.rstrip("\n") + "\n" + text[j:])
PY
done
"$cli" docs prometheus-rules > deploy/prometheus/alerts.yml
