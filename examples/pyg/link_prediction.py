"""Link prediction with PyG's own GraphSAGE on a Tessera partition: tessera.pyg.DistLinkNeighborLoader's
batches (PyG `Data` with triplets: each edge, its source's uniform negatives, the batch's edges and their
reverses left out of its subgraph), an MLP or dot decoder, and the ranking of the held-out edges `tessera
partition --test-edges` recorded (MRR, Hits@k), as examples/python/link_prediction.py and `tessera train link`.

    tessera partition --input cora --graph-name cora --num-parts 2 --valid-edges 0.05 --test-edges 0.1 --out lp
    tessera launch --ip-config ip_config.txt --part-config lp/cora.json --num-trainers 1 --num-samplers 1 \\
        "python3 examples/pyg/link_prediction.py --graph-name cora --ip-config ip_config.txt \\
         --part-config lp/cora.json"
"""
import os
import sys

import torch
import torch.nn as nn
from torch_geometric.nn import GraphSAGE

import tessera.pyg as tpyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import common  # noqa: E402  (the examples' shared command line and reporting)
from link_prediction import Decoder, link_loss, report_ranking, setup  # noqa: E402  (as the DGL-style example)


class LinkModel(nn.Module):
    def __init__(self, in_feats, args):
        super().__init__()
        self.encoder = GraphSAGE(in_feats, args.num_hidden, args.num_layers, out_channels=args.num_hidden,
                                 dropout=args.dropout)
        self.decoder = Decoder(args.decoder, args.num_hidden)

    def forward(self, batch):
        h = self.encoder(batch.x, batch.edge_index)
        src, pos, neg = batch.src_index, batch.dst_pos_index, batch.dst_neg_index.reshape(len(batch.src_index), -1)
        k = neg.shape[1]
        return self.decoder(h[src], h[pos]), self.decoder(h[src].repeat_interleave(k, 0), h[neg.flatten()])


def embed(g, model, nodes, args):
    """The embeddings of `nodes` (unique, ascending), in their order, over full neighbourhoods."""
    out = torch.empty(len(nodes), args.num_hidden)
    loader = tpyg.DistNeighborLoader(g, [-1] * args.num_layers, input_nodes=nodes, batch_size=args.eval_batch_size)
    for batch in loader:
        seeds = batch.n_id[: batch.batch_size]
        out[torch.searchsorted(nodes, seeds)] = model.encoder(batch.x, batch.edge_index)[: batch.batch_size]
    return out


def main():
    args, g, launched, train_eids, model, ddp, optimizer = setup("Link prediction with PyG's GraphSAGE on Tessera",
                                                                 LinkModel)
    loader = tpyg.DistLinkNeighborLoader(tpyg.DistDataset(graph=g, feature_name=args.feature),
                                         list(reversed(common.fanouts(args.fan_out, args.num_layers))),
                                         edge_ids=train_eids, neg_sampling={"mode": "triplet", "amount": args.num_negs},
                                         exclude="reverse", batch_size=args.batch_size, shuffle=True)
    steps = train_time = 0.0
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        for step, batch in common.steps_of(loader, ddp, args, launched):
            pos, neg = ddp(batch)
            common.optimize([optimizer], link_loss(pos, neg), args, epoch, step, g.rank())
            steps += 1
        train_time += clock.seconds()
    report_ranking(g, model, args, launched, train_time, steps, embed)


if __name__ == "__main__":
    main()
