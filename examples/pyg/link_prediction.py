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
import torch.nn.functional as F
from torch_geometric.nn import GraphSAGE

import tessera.distributed as tdist
import tessera.pyg as tpyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import common  # noqa: E402  (the examples' shared command line and reporting)
from link_prediction import Decoder, rank  # noqa: E402  (the same decoder and ranking as the DGL-style example)


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
    p = common.parser("Link prediction with PyG's GraphSAGE on Tessera", epochs=5, fanout="10,25", batch_size=1000,
                      lr=0.003, hidden=16, dropout=0.0)
    p.add_argument("--num-layers", "--num_layers", dest="num_layers", type=int, default=2)
    p.add_argument("--decoder", default="dot", choices=["dot", "mlp"])
    p.add_argument("--num-negs", "--num_negs", dest="num_negs", type=int, default=1)
    p.add_argument("--eval-negatives", dest="eval_negatives", type=int, default=100)
    args = p.parse_args()
    g, launched = common.join(args)

    train_eids = tdist.edge_split(torch.ones(g.num_edges(), dtype=torch.bool), g.get_partition_book(),
                                  force_even=True)
    model = LinkModel(g.ndata[args.feature].shape[1], args)
    ddp = nn.parallel.DistributedDataParallel(model) if launched else model
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    loader = tpyg.DistLinkNeighborLoader(tpyg.DistDataset(graph=g, feature_name=args.feature),
                                         list(reversed(common.fanouts(args.fan_out, args.num_layers))),
                                         edge_ids=train_eids, neg_sampling={"mode": "triplet", "amount": args.num_negs},
                                         exclude="reverse", batch_size=args.batch_size, shuffle=True)
    steps = train_time = 0.0
    for epoch in range(args.num_epochs):
        clock = common.Timer()
        with ddp.join() if launched else common.contextlib.nullcontext():
            for step, batch in enumerate(loader):
                if step == args.max_batches:
                    break
                pos, neg = ddp(batch)
                loss = F.binary_cross_entropy_with_logits(torch.cat([pos, neg]), torch.cat(
                    [torch.ones_like(pos), torch.zeros_like(neg)]))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                steps += 1
                if g.rank() == 0 and (step + 1) % args.log_every == 0:
                    print(f"Epoch {epoch:05d} | Step {step:05d} | Loss {loss.item():.4f}", flush=True)
        train_time += clock.seconds()
    val = rank(g, model, tdist.held_out_edges(g, "valid"), args, launched, embed)
    test = rank(g, model, tdist.held_out_edges(g, "test"), args, launched, embed)
    if g.rank() == 0:
        print(f"Val MRR {val.get('mrr', -1):.4f} | Test MRR {test.get('mrr', -1):.4f}", flush=True)
    common.report(g, {"test_mrr": test.get("mrr", -1.0), "val_mrr": val.get("mrr", -1.0),
                      **{f"test_{k}": v for k, v in test.items() if k != "mrr"},
                      "epoch_time_s": train_time / args.num_epochs,
                      "batches_per_s": steps / train_time if train_time else 0.0,
                      "trainers": int(common.all_reduce_sum([1], launched)[0])})


if __name__ == "__main__":
    main()
