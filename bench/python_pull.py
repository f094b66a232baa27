"""Run by bench/python_sage.sh under `tessera launch`: trainer 0 times a 10,000-row pull of the features into a
torch tensor from Python (t[ids]) against the same pull timed inside C++, alternating, and prints both."""
import statistics
import sys
import time

import torch

import tessera.distributed as tdist

tdist.initialize("ip_config.txt")
g = tdist.DistGraph(sys.argv[1])
if g.rank() == 0:
    feat = g.ndata["feat"]
    gen = torch.Generator().manual_seed(0)
    python_s, cpp_s = [], []
    for _ in range(30):
        ids = torch.randint(0, g.num_nodes(), (10000,), generator=gen)
        start = time.perf_counter()
        rows = feat[ids]
        python_s.append(time.perf_counter() - start)
        cpp_s.append(tdist.tensor._C._pull_seconds(feat._c, ids, 1))
    assert rows.shape == (10000, feat.shape[1])
    py, cpp = statistics.median(python_s), statistics.median(cpp_s)
    print(f"| 10,000-row pull of {feat.shape[1]} floats (half remote) | {cpp * 1e3:.2f} | {py * 1e3:.2f} | "
          f"{py / cpp:.3f} |", flush=True)
g.barrier()
