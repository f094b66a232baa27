"""R-GCN entity classification written the way DistDGL's R-GCN examples are (the seed's
examples/pytorch/rgcn/experimental/entity_classify_dist.py and examples/distributed/rgcn), only the imports
naming Tessera: the labelled type's seeds mapped to homogeneous IDs, a hand-written sampler over
dgl.distributed.sample_neighbors + dgl.to_block fed to DistDataLoader(collate_fn=...), the blocks' IDs mapped back
per type through the partition book, typed features read as g.nodes[ntype].data["feat"][ids] and projected,
featureless types learning embeddings (torch's sparse nn.Embedding + SparseAdam under DDP, or with --dgl-sparse
DistEmbedding + SparseAdagrad), RelGraphConv layers with DGL's options, and evaluation that writes predictions
into a persistent DistTensor. Runs standalone (--standalone) or launched. Prints each epoch's mean loss and one
final JSON line {"losses": [...], "val_acc": ..., "test_acc": ...} (trainer 0)."""
import argparse
import json

import numpy as np
import torch as th
import torch.nn as nn
import torch.nn.functional as F

import tessera.dgl as dgl
from tessera.dgl.distributed import DistDataLoader
from tessera.dgl.nn import RelGraphConv


class Model(nn.Module):
    def __init__(self, hidden, classes, num_rels, bases, layers, dropout, self_loop, low_mem, layer_norm):
        super().__init__()
        sizes = [hidden] * layers + [classes]
        self.layers = nn.ModuleList(
            RelGraphConv(sizes[i], sizes[i + 1], num_rels, "basis", bases, self_loop=self_loop, low_mem=low_mem,
                         activation=F.relu if i < layers - 1 else None, dropout=dropout if i < layers - 1 else 0,
                         layer_norm=layer_norm)
            for i in range(layers))

    def forward(self, blocks, h):
        for layer, block in zip(self.layers, blocks):
            h = layer(block, h, block.edata[dgl.ETYPE], block.edata["norm"])
        return h


class InputLayer(nn.Module):
    """Each node's input row: a projection of its type's feature, or a learnt embedding for a featureless type."""

    def __init__(self, g, size, sparse, dgl_sparse):
        super().__init__()
        self.g = g
        self.type_name = {g.get_ntype_id(nt): nt for nt in g.ntypes}
        self.proj = nn.ModuleDict({nt: nn.Linear(g.nodes[nt].data["feat"].shape[1], size) for nt in g.ntypes
                                   if "feat" in g.nodes[nt].data})
        featureless = [nt for nt in g.ntypes if nt not in self.proj]
        self.dist_embeds = {}
        self.embeds = nn.ModuleDict()
        for nt in featureless:
            if dgl_sparse:
                self.dist_embeds[nt] = dgl.distributed.DistEmbedding(
                    g.number_of_nodes(nt), size, f"emb_{nt}", lambda shape, dtype: th.empty(shape).uniform_(-1, 1),
                    g.get_node_partition_policy(nt))
            else:
                self.embeds[nt] = nn.Embedding(g.number_of_nodes(nt), size, sparse=sparse)
                nn.init.uniform_(self.embeds[nt].weight, -1, 1)
        self.size = size

    def forward(self, ids, types):
        out = th.empty(len(ids), self.size)
        for t in th.unique(types).tolist():
            nt = self.type_name[t]
            at = types == t
            if nt in self.proj:
                out[at] = self.proj[nt](self.g.nodes[nt].data["feat"][ids[at]])
            elif nt in self.dist_embeds:
                out[at] = self.dist_embeds[nt](ids[at])
            else:
                out[at] = self.embeds[nt](ids[at])
        return out


def right_norm(block):
    """1 / the destination's in-degree on each edge (GraphConv's norm='right')."""
    _, dst, _ = block.all_edges(form="all")
    _, where, count = th.unique(dst, return_inverse=True, return_counts=True)
    block.edata["norm"] = (1.0 / count[where].float()).unsqueeze(1)


class Sampler:
    def __init__(self, g, category, fanouts):
        self.g, self.category, self.fanouts = g, category, fanouts

    def sample_blocks(self, seeds):
        seeds = th.as_tensor(np.asarray(seeds), dtype=th.int64)
        pb = self.g.get_partition_book()
        nodes = pb.map_to_homo_nid(seeds, self.category)
        blocks = []
        for fanout in self.fanouts:
            frontier = dgl.distributed.sample_neighbors(self.g, nodes, fanout, replace=False)
            block = dgl.to_block(frontier, nodes)
            nodes = block.srcdata[dgl.NID]
            block.edata[dgl.ETYPE], block.edata[dgl.EID] = pb.map_to_per_etype(frontier.edata[dgl.EID])
            block.srcdata[dgl.NTYPE], block.srcdata[dgl.NID] = pb.map_to_per_ntype(block.srcdata[dgl.NID])
            block.dstdata[dgl.NTYPE], block.dstdata[dgl.NID] = pb.map_to_per_ntype(block.dstdata[dgl.NID])
            right_norm(block)
            blocks.insert(0, block)
        return seeds, blocks


def evaluate(g, model, inputs, loader, results):
    model.eval()
    inputs.eval()
    with th.no_grad():
        for seeds, blocks in loader:
            logits = model(blocks, inputs(blocks[0].srcdata[dgl.NID], blocks[0].srcdata[dgl.NTYPE]))
            results[seeds] = logits.argmax(1)
    model.train()
    inputs.train()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--graph-name", required=True)
    p.add_argument("--ip-config", default="ip_config.txt")
    p.add_argument("--conf-path", "--part-config", dest="conf_path", required=True)
    p.add_argument("--category", default="paper")
    p.add_argument("--n-hidden", type=int, default=16)
    p.add_argument("--n-bases", type=int, default=2)
    p.add_argument("--n-layers", type=int, default=2)
    p.add_argument("--n-epochs", type=int, default=3)
    p.add_argument("--fanout", default="4,4")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--eval-batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--sparse-lr", type=float, default=0.06)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--use-self-loop", action="store_true")
    p.add_argument("--layer-norm", action="store_true")
    p.add_argument("--low-mem", action="store_true")
    p.add_argument("--sparse-embedding", action="store_true")
    p.add_argument("--dgl-sparse", action="store_true")
    p.add_argument("--standalone", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    th.manual_seed(args.seed)

    dgl.distributed.initialize(args.ip_config)
    if not args.standalone:
        th.distributed.init_process_group(backend="gloo")
    g = dgl.distributed.DistGraph(args.graph_name, part_config=args.conf_path)
    pb = g.get_partition_book()
    data = g.nodes[args.category].data
    split = {k: dgl.distributed.node_split(data[f"{k}_mask"], pb, ntype=args.category, force_even=True)
             for k in ("train", "val", "test")}
    labels = data["label"][np.arange(g.number_of_nodes(args.category))]
    classes = int(labels.max()) + 1

    sampler = Sampler(g, args.category, [int(f) for f in args.fanout.split(",")])
    train_loader = DistDataLoader(dataset=split["train"], batch_size=args.batch_size,
                                  collate_fn=sampler.sample_blocks, shuffle=True, drop_last=False)
    inputs = InputLayer(g, args.n_hidden, args.sparse_embedding, args.dgl_sparse)
    model = Model(args.n_hidden, classes, len(g.etypes), args.n_bases, args.n_layers, args.dropout,
                  args.use_self_loop, args.low_mem, args.layer_norm)
    if not args.standalone:
        model = th.nn.parallel.DistributedDataParallel(model)
        if len(list(inputs.parameters())) > 0:
            inputs = th.nn.parallel.DistributedDataParallel(inputs)
    own = inputs if args.standalone else inputs.module
    dense = list(model.parameters()) + list(own.proj.parameters())
    if not args.sparse_embedding:
        dense += list(own.embeds.parameters())
    optimizer = th.optim.Adam(dense, lr=args.lr)
    sparse = []
    if args.dgl_sparse and own.dist_embeds:
        sparse.append(dgl.distributed.optim.SparseAdagrad(list(own.dist_embeds.values()), lr=args.sparse_lr))
    elif args.sparse_embedding and len(own.embeds):
        sparse.append(th.optim.SparseAdam(list(own.embeds.parameters()), lr=args.sparse_lr))

    losses = []
    for epoch in range(args.n_epochs):
        total, steps = 0.0, 0
        for seeds, blocks in train_loader:
            h = inputs(blocks[0].srcdata[dgl.NID], blocks[0].srcdata[dgl.NTYPE])
            loss = F.cross_entropy(model(blocks, h), labels[seeds])
            optimizer.zero_grad()
            for o in sparse:
                o.zero_grad()
            loss.backward()
            optimizer.step()
            for o in sparse:
                o.step()
            total, steps = total + loss.item(), steps + 1
        losses.append(total / max(steps, 1))
        print(f"[{g.rank()}] epoch {epoch} loss {losses[-1]:.4f} steps {steps}", flush=True)

    results = dgl.distributed.DistTensor(labels.shape, th.int64, "results", persistent=True)
    full = Sampler(g, args.category, [-1] * args.n_layers)
    for k in ("val", "test"):
        evaluate(g, model, inputs, DistDataLoader(dataset=split[k], batch_size=args.eval_batch_size,
                                                  collate_fn=full.sample_blocks), results)
    g.barrier()
    if g.rank() == 0:
        acc = {}
        for k in ("val", "test"):
            ids = th.nonzero(data[f"{k}_mask"][np.arange(g.number_of_nodes(args.category))]).squeeze(1)
            acc[f"{k}_acc"] = float((results[ids] == labels[ids]).float().mean())
        print(json.dumps({"losses": losses, **acc}))


if __name__ == "__main__":
    main()
