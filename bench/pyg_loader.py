"""Run by bench/python_sage.sh under `tessera launch`: the data side of a training step alone, timed in one run —
DistNodeDataLoader's blocks with the input features and seed labels read (what examples/python/graphsage.py's
loop gets), against tessera.pyg.DistNeighborLoader's PyG batches (x, y, edge_index laid out as PyG's), at the
same fan-out and batch size. Trainer 0 prints one table row."""
import sys
import time

import torch

import tessera.dataloading as tload
import tessera.distributed as tdist
import tessera.pyg as tpyg

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


dgl_rate, pyg_rate = rate(dgl_batches()), rate(pyg_batches())
if g.rank() == 0:
    print(f"| loaders alone, mini-batches/s | {dgl_rate:.1f} | {pyg_rate:.1f} | {pyg_rate / dgl_rate:.2f} |",
          flush=True)
