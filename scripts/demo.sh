#!/usr/bin/env bash
# `make demo`: a real small PyTorch training under `trainvitals run`, then where
# its run directory is and what it holds; then a training with the one-line
# monitor, whose epochs and phases join the record.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=build/release/trainvitals

# The project environment (`make deps`): Debian's python3, which sees Debian's PyTorch.
py=build/venv/bin/python

runs=${TRAINVITALS_DEMO_RUNS:-trainvitals-runs}   # where the demo's run directories go
out="$runs/demo-$(date +%Y%m%d-%H%M%S)"
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
[ "$code" -eq 0 ] || exit $code

# One line in the script adds steps, epochs and phases (trainvitals.torch.monitor).
out2="$runs/demo-markers-$(date +%Y%m%d-%H%M%S)"
echo
echo "== trainvitals run --report -- $py examples/torch_monitor.py --epochs 3 --steps 1500 --batch-size 512   (with trainvitals.torch.monitor())"
PYTHONPATH=python "$cli" run --out "$out2" --report -- "$py" examples/torch_monitor.py --epochs 3 --steps 1500 --batch-size 512
echo
echo "== epochs in $out2/summary.json"
"$py" -c 'import json, sys; s = json.load(open(sys.argv[1])); [print(" ", e) for e in s["epochs"]]; print("  phases:", s["phases"])' "$out2/summary.json"
echo
echo "== the run as one page (charts, epochs, phases, findings; trainvitals report RUN writes it for any run)"
echo "open $out2/report.html"
