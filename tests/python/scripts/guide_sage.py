"""The DGL user guide's distributed GraphSAGE (chapter 7), completed into a script: its hand-written sampler over
dgl.distributed.sample_neighbors + dgl.to_block, fed to DistDataLoader(collate_fn=...), node_split with
force_even, DDP with model.join(), features and labels read from g.ndata["features"] / ["labels"]. Only the
imports name Tessera. Prints {"test_acc": ...} (trainer 0, the count summed over trainers)."""
import argparse
import json

import numpy as np
import torch as th
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

import tessera.dgl as dgl
import tessera.dgl.nn.pytorch as dglnn
from tessera.dgl.distributed import DistDataLoader


class NeighborSampler:
    def __init__(self, g, fanouts, sample_neighbors):
        self.g = g
        self.fanouts = fanouts
        self.sample_neighbors = sample_neighbors

    def sample_blocks(self, seeds):
        seeds = th.LongTensor(np.asarray(seeds))
        blocks = []
        for fanout in self.fanouts:
            # For each seed node, sample ``fanout`` neighbors.
            frontier = self.sample_neighbors(self.g, seeds, fanout, replace=True)
            # Then we compact the frontier into a bipartite graph for message passing.
            block = dgl.to_block(frontier, seeds)
            # Obtain the seed nodes for next layer.
            seeds = block.srcdata[dgl.NID]
            blocks.insert(0, block)
        return blocks


class SAGE(nn.Module):
    def __init__(self, in_feats, n_hidden, n_classes, n_layers, dropout):
        super().__init__()
        self.layers = nn.ModuleList([dglnn.SAGEConv(in_feats, n_hidden, "mean")])
        for _ in range(n_layers - 2):
            self.layers.append(dglnn.SAGEConv(n_hidden, n_hidden, "mean"))
        self.layers.append(dglnn.SAGEConv(n_hidden, n_classes, "mean"))
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


def load_subtensor(g, input_nodes, seeds):
    return g.ndata["features"][input_nodes], g.ndata["labels"][seeds]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graph-name", default="cora")
    parser.add_argument("--part-config", required=True)
    parser.add_argument("--ip-config", default="ip_config.txt")
    parser.add_argument("--num-epochs", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--fan-out", default="10,25")
    parser.add_argument("--num-hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    th.manual_seed(args.seed)

    dgl.distributed.initialize(ip_config=args.ip_config)
    th.distributed.init_process_group(backend="gloo")
    g = dgl.distributed.DistGraph(args.graph_name, part_config=args.part_config)
    pb = g.get_partition_book()
    train_nid = dgl.distributed.node_split(g.ndata["train_mask"], pb, force_even=True)
    test_nid = dgl.distributed.node_split(g.ndata["test_mask"], pb, force_even=True)
    labels = g.ndata["labels"][np.arange(g.num_nodes())]
    n_classes = len(th.unique(labels))

    sampler = NeighborSampler(g, [int(f) for f in args.fan_out.split(",")], dgl.distributed.sample_neighbors)
    dataloader = DistDataLoader(dataset=train_nid.numpy(), batch_size=args.batch_size,
                                collate_fn=sampler.sample_blocks, shuffle=True, drop_last=False)

    model = SAGE(g.ndata["features"].shape[1], args.num_hidden, n_classes, 2, args.dropout)
    model = th.nn.parallel.DistributedDataParallel(model)
    loss_fcn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)

    losses = []  # each epoch's mean, for the script matrix's "the loss falls"
    for epoch in range(args.num_epochs):
        total, steps = 0.0, 0
        with model.join():
            for step, blocks in enumerate(dataloader):
                batch_inputs, batch_labels = load_subtensor(g, blocks[0].srcdata[dgl.NID],
                                                            blocks[-1].dstdata[dgl.NID])
                batch_pred = model(blocks, batch_inputs)
                loss = loss_fcn(batch_pred, batch_labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total, steps = total + loss.item(), steps + 1
        losses.append(total / max(steps, 1))

    # Test: every neighbour (fan-out -1), this trainer's share of the test nodes, counts summed.
    model.eval()
    full = NeighborSampler(g, [-1, -1], dgl.distributed.sample_neighbors)
    correct = th.zeros(2, dtype=th.int64)
    with th.no_grad():
        for blocks in DistDataLoader(dataset=test_nid.numpy(), batch_size=256, collate_fn=full.sample_blocks):
            inputs, batch_labels = load_subtensor(g, blocks[0].srcdata[dgl.NID], blocks[-1].dstdata[dgl.NID])
            pred = model.module(blocks, inputs).argmax(1)
            correct += th.tensor([int((pred == batch_labels).sum()), len(batch_labels)])
    th.distributed.all_reduce(correct)
    if g.rank() == 0:
        print(json.dumps({"test_acc": float(correct[0]) / float(correct[1]), "test_nodes": int(correct[1]),
                          "losses": losses}))


if __name__ == "__main__":
    main()
