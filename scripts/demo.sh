#!/usr/bin/env bash
# `make demo`: a real small PyTorch training under `trainvitals run`, then where
# its run directory is and what it holds.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=build/release/trainvitals

# Debian's PyTorch lives beside Debian's python3.
py=python3
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import torch' 2>/dev/null; then py=$candidate; break; fi
done

out="trainvitals-runs/demo-$(date +%Y%m%d-%H%M%S)"
echo "== trainvitals run -- $py examples/torch_train.py --epochs 3"
set +e
"$cli" run --out "$out" -- "$py" examples/torch_train.py --epochs 3
code=$?
set -e
echo
echo "== run directory: $out"
ls -l "$out"
echo
echo "== last row of $out/samples.jsonl"
tail -n 1 "$out/samples.jsonl"
echo
echo "== processes that joined the job ($out/events.jsonl)"
grep '"process_start"' "$out/events.jsonl" | head -n 5
exit $code
