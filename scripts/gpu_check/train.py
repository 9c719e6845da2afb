"""A short PyTorch training that fills and frees GPU memory in 5 s phases (grow,
grow, hold, free), so that some rows see the memory steady and others see it
move. Logs, at every step, what the framework itself says, with wall-clock time
(CSV: t, step, reserved_bytes, allocated_bytes, the same memory_stats() keys the
monitor sends). When the trainvitals package imports, the loop runs under
trainvitals.torch.monitor(), which sends the allocator's figures to the `run`
around it. Usage: train.py LOG.csv SECONDS"""
import sys
import time

import torch

log_path = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
try:
    import trainvitals.torch as tvt

    m = tvt.monitor()
except ImportError as e:
    print(f"train.py: trainvitals not importable ({e}): no allocator figures", file=sys.stderr)
    m = None

dev = torch.device("cuda:0")
props = torch.cuda.get_device_properties(dev)
print(f"train.py: cuda:0 is {props.name} uuid={getattr(props, 'uuid', '?')}", flush=True)
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
hold = []
start = time.time()
with open(log_path, "w") as log:
    log.write("t,step,reserved_bytes,allocated_bytes\n")
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
        if m is not None:
            m.step()
        s = torch.cuda.memory_stats(dev)
        log.write(f"{time.time():.3f},{step},{s.get('reserved_bytes.all.current', 0)},"
                  f"{s.get('allocated_bytes.all.current', 0)}\n")
        log.flush()
if m is not None:
    m.close()
