"""Run by bench/python_sage.sh under `tessera launch`, timed in one run:
- the data side of a training step alone: DistNodeDataLoader's blocks with the input features and seed labels read
  (what examples/python/graphsage.py's loop gets), against tessera.pyg.DistNeighborLoader's PyG batches (x, y,
  edge_index laid out as PyG's), at the same fan-out and batch size;
- the model side alone: examples/python/graphsage.py's SAGE (tessera.nn) and PyG's own GraphSAGE, each stepping
  (forward, loss, backward, Adam) over batches already taken from its own loader, in CPU time of the stepping
  thread. Whatever the loaders cost, PyG's loop costs its model's step more than the tessera.dgl example's;
- where PyG's step spends its CPU: torch.profiler over 10 of its steps, the ops of most self CPU time.
Trainer 0 prints one row of each table, then the profile's rows."""
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import GraphSAGE

import tessera.dataloading as tload
import tessera.distributed as tdist
import tessera.pyg as tpyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "python"))
import common  # noqa: E402  (the examples' shared helpers)
from graphsage import SAGE  # noqa: E402  (the tessera.dgl example's model)

graph, steps = sys.argv[1], int(sys.argv[2])
tdist.initialize("ip_config.txt")
g = tdist.DistGraph(graph, part_config=sys.argv[3])
train = tdist.node_split(g.ndata["train_mask"], g.get_partition_book(), force_even=True)


def rate(batches):
    next(batches)  # the first batch waits for the sampler threads to start
    start = time.perf_counter()
    for _ in range(steps):
        next(batches)
    return steps / (time.perf_counter() - start)


def dgl_batches():
    loader = tload.DistNodeDataLoader(g, train, tload.NeighborSampler([10, 25]), batch_size=1000, shuffle=True)
    while True:
        for input_nodes, seeds, blocks in loader:
            yield g.ndata["feat"][input_nodes], g.ndata["label"][seeds], blocks


def pyg_batches():
    loader = tpyg.DistNeighborLoader(g, [25, 10], input_nodes=train, batch_size=1000, shuffle=True)
    while True:
        yield from loader


def stepper(model, step):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)

    def one(batch):
        loss = F.cross_entropy(*step(model, batch))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return one


def step_cpu_ms(one, batches):
    """CPU time of this thread per step, after 5 warm-up steps (intra-op threads: 1, as the bench sets)."""
    for batch in batches[:5]:
        one(batch)
    start = time.thread_time()
    for batch in batches[5:]:
        one(batch)
    return (time.thread_time() - start) / len(batches[5:]) * 1e3


def profile_rows(one, batches, top=8):
    """The ops of most self CPU time over `batches`' steps: (name, ms per step, share of the step)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for batch in batches:
            one(batch)
    ops = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in ops)
    return [(e.key, e.self_cpu_time_total / len(batches) / 1e3, e.self_cpu_time_total / total) for e in ops[:top]]


def taken(batches, n):
    return [next(batches) for _ in range(n)]


dgl_rate, pyg_rate = rate(dgl_batches()), rate(pyg_batches())
in_feats, classes = g.ndata["feat"].shape[1], common.num_classes(g, "label")
torch.manual_seed(0)
dgl_ms = step_cpu_ms(stepper(SAGE(in_feats, 16, classes, 2, "mean", 0.5), lambda model, b: (model(b[2], b[0]),
                                                                                              b[1].long())),
                     taken(dgl_batches(), 35))
pyg_step = stepper(GraphSAGE(in_feats, 16, 2, out_channels=classes, dropout=0.5),
                   lambda model, b: (model(b.x, b.edge_index, num_sampled_nodes_per_hop=b.num_sampled_nodes,
                                           num_sampled_edges_per_hop=b.num_sampled_edges)[: b.batch_size], b.y))
pyg_batches_taken = taken(pyg_batches(), 45)
pyg_ms = step_cpu_ms(pyg_step, pyg_batches_taken[:35])
profile = profile_rows(pyg_step, pyg_batches_taken[35:])
if g.rank() == 0:
    print(f"| loaders alone, mini-batches/s | {dgl_rate:.1f} | {pyg_rate:.1f} | {pyg_rate / dgl_rate:.2f} |",
          flush=True)
    # The last column is a rate in both rows: steps per CPU-second, PyG's over the tessera.dgl example's.
    print(f"| models alone, CPU ms per step | {dgl_ms:.2f} | {pyg_ms:.2f} | {dgl_ms / pyg_ms:.2f} |", flush=True)
    for name, ms, share in profile:
        print(f"| PyG step op | {name} | {ms:.2f} | {share:.2f} |", flush=True)
