"""R-GCN entity classification on a heterogeneous graph, from Python: node types without features learn
DistEmbedding rows (SparseAdam applies their gradients on the servers that own them), types with features
project them; every layer is a HeteroGraphConv of per-relation means (GraphConv, norm='right') times
basis-decomposed relation weights (WeightBasis), then layer norm, bias and a self-loop. The math of
`tessera train rgcn` and of DistDGL's R-GCN example, so the three can be compared.

    tessera partition --input ../shared/data/hetero/AIFB --format rdf --graph-name aifb \
        --num-parts 2 --balance-train --out data
    tessera launch --ip-config ip_config.txt --part-config data/aifb.json --num-trainers 1 --num-samplers 1 \
        "python3 examples/python/rgcn.py --graph-name aifb --ip-config ip_config.txt --part-config data/aifb.json \
         --num-epochs 30 --fanout 20,20 --batch-size 16 --sparse-lr 0.05 --use-self-loop --dropout 0.2"

The flags are `tessera train rgcn`'s (DGL's spellings as aliases).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import tessera.dataloading as tload
import tessera.distributed as tdist
import tessera.nn as tnn

import common


class RelLayer(nn.Module):
    """One R-GCN layer over a HeteroBlock: {ntype: rows of its sources} -> {ntype: rows of its destinations}."""

    def __init__(self, in_feats, out_feats, relations, num_bases, self_loop, layer_norm):
        super().__init__()
        self.relations = relations  # canonical (src, rel, dst): RDF graphs reuse a name across type pairs
        self.conv = tnn.HeteroGraphConv({r: tnn.GraphConv(in_feats, out_feats, norm="right", weight=False,
                                                          bias=False) for r in relations})
        if 0 < num_bases < len(relations):
            self.basis = tnn.WeightBasis((in_feats, out_feats), num_bases, len(relations))
        else:
            self.weight = nn.Parameter(torch.empty(len(relations), in_feats, out_feats))
            nn.init.xavier_uniform_(self.weight, gain=nn.init.calculate_gain("relu"))
        self.norm = nn.LayerNorm(out_feats) if layer_norm else None
        self.bias = nn.Parameter(torch.zeros(out_feats))
        self.loop_weight = None
        if self_loop:
            self.loop_weight = nn.Parameter(torch.empty(in_feats, out_feats))
            nn.init.xavier_uniform_(self.loop_weight, gain=nn.init.calculate_gain("relu"))

    def forward(self, block, h):
        weights = self.basis() if hasattr(self, "basis") else self.weight
        out = self.conv(block, h, mod_kwargs={r: {"weight": weights[i]} for i, r in enumerate(self.relations)})
        for ntype, x in out.items():
            if self.norm is not None:
                x = self.norm(x)
            x = x + self.bias
            if self.loop_weight is not None:
                x = x + h[ntype][: block.num_dst_nodes(ntype)] @ self.loop_weight
            out[ntype] = x
        return out


class RGCN(nn.Module):
    """Inputs (projected features or embedding rows), then RelLayers; returns the category's logits."""

    def __init__(self, g, category, feature, hidden, classes, layers, num_bases, self_loop, layer_norm, dropout):
        super().__init__()
        self.g, self.category, self.feature = g, category, feature
        self.projections = nn.ModuleDict({nt: nn.Linear(g.nodes[nt].data[feature].shape[1], hidden)
                                          for nt in g.ntypes if feature in g.nodes[nt].data})
        uniform = lambda shape, dtype: torch.empty(shape, dtype=dtype).uniform_(-1.0, 1.0)  # noqa: E731
        self.embeddings = {nt: tdist.DistEmbedding(g.num_nodes(nt), hidden, f"rgcn-embedding-{nt}", uniform,
                                                   g.get_node_partition_policy(nt))
                           for nt in g.ntypes if nt not in self.projections}
        dims = [hidden] * layers + [classes]
        self.layers = nn.ModuleList(RelLayer(dims[i], dims[i + 1], g.canonical_etypes, num_bases, self_loop,
                                             layer_norm) for i in range(layers))
        self.dropout = nn.Dropout(dropout)

    def inputs(self, input_nodes):
        g = self.g
        return {nt: (self.projections[nt](g.nodes[nt].data[self.feature][ids]) if nt in self.projections
                     else self.embeddings[nt](ids))
                for nt, ids in input_nodes.items()}

    def forward(self, blocks, input_nodes):
        h = self.inputs(input_nodes)
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            if i:
                h = {nt: self.dropout(F.relu(x)) for nt, x in h.items()}
            h = layer(block, h)
        return h[self.category]


def labelled_type(g, label, wanted):
    """The node type with labels and a training mask (the one named, else the only one)."""
    labelled = [nt for nt in g.ntypes if label in g.nodes[nt].data and "train_mask" in g.nodes[nt].data]
    if wanted:
        if wanted not in labelled:
            raise SystemExit(f"--predict-category {wanted}: that node type has no {label!r} and train_mask "
                             f"(labelled types: {labelled})")
        return wanted
    if len(labelled) != 1:
        raise SystemExit(f"the graph has {len(labelled)} labelled node types {labelled}: name one with "
                         f"--predict-category")
    return labelled[0]


def main():
    p = common.parser("R-GCN on Tessera, from Python", epochs=3, fanout="4,4", batch_size=100, lr=0.01,
                      hidden=16, dropout=0.0)
    add = p.add_argument
    add("--num-layers", "--n-layers", dest="num_layers", type=int, default=2)
    add("--num-bases", "--n-bases", dest="num_bases", type=int, default=-1, help="-1: a weight per relation")
    add("--sparse-lr", "--sparse_lr", dest="sparse_lr", type=float, default=0.01)
    add("--use-self-loop", "--use_self_loop", dest="self_loop", action="store_true")
    add("--layer-norm", "--layer_norm", dest="layer_norm", action="store_true")
    add("--predict-category", dest="category", default=None)
    p.set_defaults(eval_fan_out=None)
    args = p.parse_args()
    g, launched = common.join(args)

    category = labelled_type(g, args.label, args.category)
    book = g.get_partition_book()
    data = g.nodes[category].data
    splits = [tdist.node_split(data[mask], book, ntype=category, force_even=True) if mask in data else None
              for mask in ("train_mask", "val_mask", "test_mask")]
    labels = data[args.label]
    classes = int(labels[torch.arange(g.num_nodes(category))].max()) + 1

    model = RGCN(g, category, args.feature, args.num_hidden, classes, args.num_layers, args.num_bases,
                 args.self_loop, args.layer_norm, args.dropout)
    ddp = nn.parallel.DistributedDataParallel(model) if launched else model
    dense = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sparse = tdist.optim.SparseAdam(list(model.embeddings.values()), lr=args.sparse_lr)
    optimizers = [dense, sparse] if model.embeddings else [dense]

    fanout = common.fanouts(args.fan_out, args.num_layers)
    eval_fanout = common.fanouts(args.eval_fan_out or args.fan_out, args.num_layers)
    loader = tload.DistNodeDataLoader(g, {category: splits[0]}, tload.NeighborSampler(fanout),
                                      batch_size=args.batch_size, shuffle=True)
    eval_loaders = [None if ids is None else common.eval_loader(g, {category: ids}, eval_fanout, args.eval_batch_size)
                    for ids in splits[1:]]
    batch = lambda input_nodes, seeds: (input_nodes, labels[seeds[category]].long())  # noqa: E731

    steps = train_time = 0.0
    accs = [-1.0, -1.0]
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        steps += common.train_epoch(ddp, optimizers, loader, batch, args, launched, epoch, g.rank())
        train_time += clock.seconds()
        last = epoch == args.num_epochs - 1
        if last or (args.eval_every and (epoch + 1) % args.eval_every == 0):
            accs = [-1.0 if lo is None else common.accuracy(model, lo, batch, launched) for lo in eval_loaders]
            if g.rank() == 0:
                print(f"Epoch {epoch:05d} | Val Acc {accs[0]:.4f} | Test Acc {accs[1]:.4f}", flush=True)
    common.report(g, {"val_acc": accs[0], "test_acc": accs[1], "epoch_time_s": train_time / args.num_epochs,
                      "batches_per_s": steps / train_time if train_time else 0.0})


if __name__ == "__main__":
    main()
