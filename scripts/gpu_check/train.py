"""A short PyTorch training that fills and frees GPU memory in steps, logging
torch.cuda.memory_reserved() with wall-clock timestamps (CSV: t,reserved_bytes)."""
import sys
import time

import torch

log_path = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
dev = torch.device("cuda:0")
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
hold = []
start = time.time()
with open(log_path, "w") as log:
    log.write("t,reserved_bytes,allocated_bytes\n")
    step = 0
    while time.time() - start < seconds:
        phase = int((time.time() - start) // 5) % 4  # 5 s phases: grow, grow, hold, free
        if phase in (0, 1) and len(hold) < 40:
            hold.append(torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev))  # 256 MiB
        elif phase == 3 and hold:
            hold.clear()
            torch.cuda.empty_cache()
        x = torch.randn(2048, 4096, device=dev)
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if phase == 2:
            time.sleep(0.05)  # an idle-ish phase so util varies
        torch.cuda.synchronize()
        step += 1
        log.write(f"{time.time():.3f},{torch.cuda.memory_reserved()},{torch.cuda.memory_allocated()}\n")
        log.flush()
