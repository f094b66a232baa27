"""Distributed GraphSAGE node classification written against DGL's own API, the way DGL's distributed example and
user guide write it (initialize, DistGraph, node_split, NeighborSampler + DistNodeDataLoader, dgl.nn's SAGEConv,
DDP with join(), features and labels read from g.ndata per batch), so that one script runs on DGL itself
(`--backend dgl`) and on Tessera (`--backend tessera`: only the imports differ). bench/distdgl.sh runs it on both.

Trainer 0 prints one JSON line last: mini-batches/s (its own steps over the training time), epoch time, the
per-step split (wait for the batch, the batch's features, forward, backward, update; wall ms) and test accuracy
(sampled, the count summed over trainers)."""
import argparse
import json
import time

import torch as th
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("--backend", choices=["dgl", "tessera"], default="dgl")
p.add_argument("--graph_name", required=True)
p.add_argument("--ip_config", required=True)
p.add_argument("--part_config", required=True)
p.add_argument("--num_epochs", type=int, default=3)
p.add_argument("--num_hidden", type=int, default=16)
p.add_argument("--num_layers", type=int, default=2)
p.add_argument("--fan_out", default="10,25")
p.add_argument("--batch_size", type=int, default=1000)
p.add_argument("--lr", type=float, default=0.003)
p.add_argument("--dropout", type=float, default=0.5)
p.add_argument("--num_classes", type=int, default=47)
args = p.parse_args()

if args.backend == "tessera":
    import tessera.dgl as dgl
    import tessera.dgl.nn.pytorch as dglnn
else:
    import dgl
    import dgl.nn.pytorch as dglnn


class SAGE(nn.Module):
    def __init__(self, in_feats, hidden, classes, layers, dropout):
        super().__init__()
        dims = [in_feats] + [hidden] * (layers - 1) + [classes]
        self.layers = nn.ModuleList(dglnn.SAGEConv(dims[i], dims[i + 1], "mean") for i in range(layers))
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i < len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


class Clock:
    """Wall seconds per phase of a step, summed over the steps."""

    def __init__(self):
        self.seconds, self.mark = {}, time.perf_counter()

    def lap(self, phase):
        now = time.perf_counter()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - self.mark
        self.mark = now


def main():
    dgl.distributed.initialize(args.ip_config)
    th.distributed.init_process_group(backend="gloo")
    g = dgl.distributed.DistGraph(args.graph_name, part_config=args.part_config)
    book = g.get_partition_book()
    train_nid = dgl.distributed.node_split(g.ndata["train_mask"], book, force_even=True)
    test_nid = dgl.distributed.node_split(g.ndata["test_mask"], book, force_even=True)
    th.manual_seed(0)

    fanouts = [int(f) for f in args.fan_out.split(",")]
    loader = dgl.dataloading.DistNodeDataLoader(g, train_nid, dgl.dataloading.NeighborSampler(fanouts),
                                                batch_size=args.batch_size, shuffle=True, drop_last=False)
    model = nn.parallel.DistributedDataParallel(
        SAGE(g.ndata["features"].shape[1], args.num_hidden, args.num_classes, args.num_layers, args.dropout))
    optimizer = th.optim.Adam(model.parameters(), lr=args.lr)

    clock, steps, train_time = Clock(), 0, 0.0
    for epoch in range(args.num_epochs):
        g.barrier()
        start = clock.mark = time.perf_counter()
        with model.join():
            for input_nodes, seeds, blocks in loader:
                clock.lap("wait")
                x = g.ndata["features"][input_nodes]
                y = g.ndata["labels"][seeds].long()
                clock.lap("inputs")
                loss = F.cross_entropy(model(blocks, x), y)
                clock.lap("forward")
                optimizer.zero_grad()
                loss.backward()
                clock.lap("backward")
                optimizer.step()
                clock.lap("update")
                steps += 1
        train_time += time.perf_counter() - start
        if g.rank() == 0:
            print(f"epoch {epoch}: {time.perf_counter() - start:.2f} s, loss {loss.item():.4f}", flush=True)

    model.eval()
    correct = total = 0
    with th.no_grad():
        for input_nodes, seeds, blocks in dgl.dataloading.DistNodeDataLoader(
                g, test_nid, dgl.dataloading.NeighborSampler(fanouts), batch_size=10000, shuffle=False):
            y = g.ndata["labels"][seeds].long()
            correct += int((model.module(blocks, g.ndata["features"][input_nodes]).argmax(1) == y).sum())
            total += len(y)
    counts = th.tensor([correct, total], dtype=th.float64)
    th.distributed.all_reduce(counts)
    if g.rank() == 0:
        print(json.dumps({"backend": args.backend, "mini_batches_per_s": steps / train_time,
                          "epoch_time_s": train_time / args.num_epochs, "steps": steps,
                          "step_ms": {k: round(1e3 * v / steps, 3) for k, v in clock.seconds.items()},
                          "test_acc": float(counts[0] / counts[1])}), flush=True)


if __name__ == "__main__":
    main()
