"""The job beside which gpu-check.sh measures the monitor's own cost: it holds
the GPU and computes a little ten times a second for SECONDS (default 30)."""
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
x = torch.randn(4096, 4096, device="cuda")
end = time.time() + seconds
while time.time() < end:
    (x @ x).sum().item()
    time.sleep(0.1)
