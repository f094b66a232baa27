"""GraphSAGE node classification, written as a DistDGL user writes it: the model in PyTorch (tessera.nn's
SAGEConv), sampling, feature fetches and the gradient all-reduce in Tessera's C++ core and torch's DDP.

    tessera launch --ip-config ip_config.txt --part-config data/cora.json --num-trainers 1 --num-samplers 1 \
        "python3 examples/python/graphsage.py --graph-name cora --ip-config ip_config.txt \
         --part-config data/cora.json --aggregator gcn"
    python3 examples/python/graphsage.py --graph-name cora --part-config p1/cora.json   # standalone

The flags are `tessera train sage`'s (DGL's spellings as aliases), so the two can be compared directly.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import tessera.dataloading as tload
import tessera.nn as tnn

import common


class SAGE(nn.Module):
    """GraphSAGE in DGL's layer options: each hidden layer's ReLU is its `activation`, and the dropout after it
    the next layer's `feat_drop` (the same function as dropout between the layers; the layers then run it on
    Tessera's kernels, and the first layer can take the loader's aggregation of its input rows)."""

    def __init__(self, in_feats, hidden, classes, layers, aggregator, dropout):
        super().__init__()
        dims = [in_feats] + [hidden] * (layers - 1) + [classes]
        self.layers = nn.ModuleList(
            tnn.SAGEConv(dims[i], dims[i + 1], aggregator, feat_drop=dropout if i > 0 else 0.0,
                         activation=F.relu if i < layers - 1 else None) for i in range(layers))

    def forward(self, blocks, x):
        h = x
        for layer, block in zip(self.layers, blocks):
            h = layer(block, h)
        return h


def main():
    p = common.parser("GraphSAGE on Tessera, from Python", epochs=20, fanout="10,25", batch_size=1000, lr=0.003,
                      hidden=16, dropout=0.5)
    p.add_argument("--num-layers", "--num_layers", dest="num_layers", type=int, default=2)
    p.add_argument("--aggregator", default="mean", choices=["mean", "gcn", "pool"])
    args = p.parse_args()
    g, launched = common.join(args)

    train_nid, val_nid, test_nid = common.splits(g)
    classes = common.num_classes(g, args.label)
    in_feats = g.ndata[args.feature].shape[1]

    model = SAGE(in_feats, args.num_hidden, classes, args.num_layers, args.aggregator, args.dropout)
    ddp = nn.parallel.DistributedDataParallel(model) if launched else model
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    # Naming what the loop reads (DGL 2.0's prefetch_*) lets the loader fetch it, and copy the other machine's
    # hottest feature rows, before the first batch; otherwise it learns the names from the first batch's reads.
    sampler = tload.NeighborSampler(common.fanouts(args.fan_out, args.num_layers), prefetch_node_feats=[args.feature],
                                    prefetch_labels=[args.label])
    loader = tload.DistNodeDataLoader(g, train_nid, sampler, batch_size=args.batch_size, shuffle=True,
                                      drop_last=False)
    eval_fanout = common.fanouts(args.eval_fan_out, args.num_layers)
    eval_loaders = [common.eval_loader(g, ids, eval_fanout, args.eval_batch_size) for ids in (val_nid, test_nid)]
    batch = common.node_batch(g, args)

    steps = train_time = 0.0
    val_acc = test_acc = -1.0
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        steps += common.train_epoch(ddp, [optimizer], loader, batch, args, launched, epoch, g.rank())
        train_time += clock.seconds()
        if common.evaluation_due(args, epoch):
            val_acc, test_acc = (common.accuracy(model, loader, batch, launched) for loader in eval_loaders)
            if g.rank() == 0:
                print(f"Epoch {epoch:05d} | Val Acc {val_acc:.4f} | Test Acc {test_acc:.4f}", flush=True)
    common.report_accuracy(g, {"test_acc": test_acc, "val_acc": val_acc}, train_time, steps, args, launched, loader)


if __name__ == "__main__":
    main()
