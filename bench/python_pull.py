"""Run by bench/python_sage.sh under `tessera launch`: trainer 0 times 10,000-row pulls of the features into a
torch tensor from Python (t[ids]) against the same pulls timed inside C++, and prints the medians."""
import statistics
import sys
import time

import torch

import tessera
import tessera.distributed as tdist

tdist.initialize("ip_config.txt")
g = tdist.DistGraph(sys.argv[1])
if g.rank() == 0:
    feat = g.ndata["feat"]
    gen = torch.Generator().manual_seed(0)
    python_s, cpp_s = [], []
    # Fresh IDs for every pull (a repeated pull finds its rows in cache), and
    # the two kinds take turns going first.
    for i in range(60):
        for kind in (("python", "cpp") if i % 2 else ("cpp", "python")):
            ids = torch.randint(0, g.num_nodes(), (10000,), generator=gen)
            if kind == "python":
                start = time.perf_counter()
                rows = feat[ids]
                python_s.append(time.perf_counter() - start)
            else:
                cpp_s.append(tessera._C._pull_seconds(feat._c, ids, 1))
    assert rows.shape == (10000, feat.shape[1])
    py, cpp = statistics.median(python_s), statistics.median(cpp_s)
    print(f"| 10,000-row pull of {feat.shape[1]} floats (half remote) | {cpp * 1e3:.2f} | {py * 1e3:.2f} | "
          f"{py / cpp:.3f} |", flush=True)
g.barrier()
