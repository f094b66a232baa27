"""GAT node classification from Python (tessera.nn's GATConv): 8 heads of 8 units, concatenated, ELU, one output
head, every destination attending to itself as DGL's GAT example adds self-loops.

    tessera launch ... "python3 examples/python/gat.py --graph-name cora --ip-config ip_config.txt \
        --part-config data/cora.json"
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import tessera.dataloading as tload
import tessera.nn as tnn

import common


class GAT(nn.Module):
    def __init__(self, in_feats, hidden, heads, classes, dropout):
        super().__init__()
        self.conv1 = tnn.GATConv(in_feats, hidden, heads, feat_drop=dropout, attn_drop=dropout,
                                 activation=F.elu)
        self.conv2 = tnn.GATConv(hidden * heads, classes, 1, feat_drop=dropout, attn_drop=dropout)

    def forward(self, blocks, x):
        b1, b2 = (b.with_self_loops() for b in blocks)
        h = self.conv1(b1, x).flatten(1)
        return self.conv2(b2, h).mean(1)


def main():
    p = common.parser("GAT on Tessera, from Python", epochs=60, fanout="10,10", batch_size=32, lr=0.005,
                      hidden=8, dropout=0.6)
    p.add_argument("--num-heads", dest="num_heads", type=int, default=8)
    p.set_defaults(weight_decay=5e-4)
    args = p.parse_args()
    g, launched = common.join(args)
    train_nid, val_nid, test_nid = common.splits(g)
    classes = common.num_classes(g, args.label)

    model = GAT(g.ndata[args.feature].shape[1], args.num_hidden, args.num_heads, classes, args.dropout)
    ddp = nn.parallel.DistributedDataParallel(model) if launched else model
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    loader = tload.DistNodeDataLoader(g, train_nid, tload.NeighborSampler(common.fanouts(args.fan_out, 2)),
                                      batch_size=args.batch_size, shuffle=True)
    batch = common.node_batch(g, args)
    steps = train_time = 0.0
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        steps += common.train_epoch(ddp, [optimizer], loader, batch, args, launched, epoch, g.rank())
        train_time += clock.seconds()
    eval_fanout = common.fanouts(args.eval_fan_out, 2)
    accs = [common.accuracy(model, common.eval_loader(g, ids, eval_fanout, args.eval_batch_size), batch, launched)
            for ids in (val_nid, test_nid)]
    common.report(g, {"val_acc": accs[0], "test_acc": accs[1], "epoch_time_s": train_time / args.num_epochs,
                      "batches_per_s": steps / train_time if train_time else 0.0})


if __name__ == "__main__":
    main()
