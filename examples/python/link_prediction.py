"""Link prediction, written as a DGL user writes it: GraphSAGE embeddings (tessera.nn's SAGEConv) scored by a dot
product or an MLP, trained on edge mini-batches (DistEdgeDataLoader: uniform negatives, the batch's edges and
their reverses left out of its blocks), and ranked on the held-out edges `tessera partition --valid-edges /
--test-edges` recorded (OGB's protocol: MRR, Hits@k against uniform negative destinations).

    tessera partition --input cora --graph-name cora --num-parts 2 --valid-edges 0.05 --test-edges 0.1 --out lp
    tessera launch --ip-config ip_config.txt --part-config lp/cora.json --num-trainers 1 --num-samplers 1 \\
        "python3 examples/python/link_prediction.py --graph-name cora --ip-config ip_config.txt \\
         --part-config lp/cora.json"

The model and flags are `tessera train link`'s, so the two can be compared directly.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import tessera.dataloading as tload
import tessera.distributed as tdist

import common
from graphsage import SAGE


class Decoder(nn.Module):
    """The score of a pair: <h_u, h_v>, or an MLP over h_u * h_v."""

    def __init__(self, kind, dim):
        super().__init__()
        self.kind = kind
        if kind == "mlp":
            self.hidden, self.out = nn.Linear(dim, dim), nn.Linear(dim, 1)

    def forward(self, hu, hv):
        if self.kind == "dot":
            return (hu * hv).sum(1)
        return self.out(F.relu(self.hidden(hu * hv))).squeeze(1)


class LinkModel(nn.Module):
    def __init__(self, in_feats, args):
        super().__init__()
        # GraphSAGE (mean) whose last layer gives the embedding the decoder scores.
        self.encoder = SAGE(in_feats, args.num_hidden, args.num_hidden, args.num_layers, "mean", args.dropout)
        self.decoder = Decoder(args.decoder, args.num_hidden)

    def forward(self, blocks, x, pair_graph, neg_graph):
        h = self.encoder(blocks, x)
        (pu, pv), (nu, nv) = pair_graph.edges(), neg_graph.edges()
        return self.decoder(h[pu], h[pv]), self.decoder(h[nu], h[nv])


def reverse_edge_ids(g):
    """reverse[e]: the ID of the edge that joins e's ends the other way (e itself when there is none)."""
    n, m = g.num_nodes(), g.num_edges()
    src, dst = g.find_edges(torch.arange(m))
    key, reverse_key = src * n + dst, dst * n + src
    order = torch.argsort(key)
    at = torch.searchsorted(key[order], reverse_key).clamp(max=m - 1)
    return torch.where(key[order][at] == reverse_key, order[at], torch.arange(m))


def embed(g, model, nodes, args):
    """The embeddings of `nodes` (unique, ascending), in their order."""
    out = torch.empty(len(nodes), args.num_hidden)
    loader = common.eval_loader(g, nodes, common.fanouts(args.eval_fan_out, args.num_layers), args.eval_batch_size)
    for input_nodes, seeds, blocks in loader:
        out[torch.searchsorted(nodes, seeds)] = model.encoder(blocks, g.ndata[args.feature][input_nodes])
    return out


def rank(g, model, pairs, args, launched, embed_nodes=embed):
    """MRR and Hits@{1,10,50} of this trainer's share of `pairs` against uniform negatives (only the nodes the
    ranking reads are embedded, by embed_nodes(g, model, nodes, args)), summed over trainers. Ties count half."""
    if pairs is None:
        return {}
    model.eval()
    with torch.no_grad():
        src, dst = pairs
        share = tdist.node_split(torch.ones(len(src), dtype=torch.bool), g.get_partition_book(), force_even=True)
        k = args.eval_negatives
        gen = torch.Generator().manual_seed(args.seed + 0x5eed)
        neg = torch.randint(0, g.num_nodes(), (len(share) * k,), generator=gen)
        nodes, at = torch.unique(torch.cat([src[share], dst[share], neg]), return_inverse=True)
        emb = embed_nodes(g, model, nodes, args)
        m = len(share)
        hu, hv, hn = emb[at[:m]], emb[at[m:2 * m]], emb[at[2 * m:]]
        pos = model.decoder(hu, hv)
        negs = model.decoder(hu.repeat_interleave(k, 0), hn).reshape(m, k)
        r = (negs > pos[:, None]).sum(1).double() + 0.5 * (negs == pos[:, None]).sum(1).double() + 1
        sums = [float((1 / r).sum()), float((r <= 1).sum()), float((r <= 10).sum()), float((r <= 50).sum()), m]
    model.train()
    total = common.all_reduce_sum(sums, launched)
    count = max(total[4], 1)
    return {"mrr": total[0] / count, "hits@1": total[1] / count, "hits@10": total[2] / count,
            "hits@50": total[3] / count}


def setup(description, model_class):
    """The link examples' command line (`tessera train link`'s flags), job, share of the training edges, model
    (model_class(in_feats, args)), its DDP wrapper and optimizer."""
    p = common.parser(description, epochs=5, fanout="10,25", batch_size=1000, lr=0.003, hidden=16, dropout=0.0)
    p.add_argument("--num-layers", "--num_layers", dest="num_layers", type=int, default=2)
    p.add_argument("--decoder", default="dot", choices=["dot", "mlp"])
    p.add_argument("--num-negs", "--num_negs", dest="num_negs", type=int, default=1)
    p.add_argument("--eval-negatives", dest="eval_negatives", type=int, default=100)
    args = p.parse_args()
    g, launched = common.join(args)
    train_eids = tdist.edge_split(torch.ones(g.num_edges(), dtype=torch.bool), g.get_partition_book(),
                                  force_even=True)
    model = model_class(g.ndata[args.feature].shape[1], args)
    ddp = nn.parallel.DistributedDataParallel(model) if launched else model
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    return args, g, launched, train_eids, model, ddp, optimizer


def main():
    args, g, launched, train_eids, model, ddp, optimizer = setup("Link prediction on Tessera, from Python", LinkModel)
    # Naming the feature up front (DGL 2.0's prefetch_node_feats) lets the loader fetch it, and copy the other
    # machine's hottest rows, before the first batch; otherwise it learns the name from the first batch's read.
    sampler = tload.NeighborSampler(common.fanouts(args.fan_out, args.num_layers), prefetch_node_feats=[args.feature])
    loader = tload.DistEdgeDataLoader(g, train_eids, sampler,
                                      negative_sampler=tload.negative_sampler.Uniform(args.num_negs),
                                      exclude="reverse_id", reverse_eids=reverse_edge_ids(g),
                                      batch_size=args.batch_size, shuffle=True, drop_last=False)
    steps = train_time = 0.0
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        common.STEP_CLOCK.restart()
        for step, (input_nodes, pair_graph, neg_graph, blocks) in common.steps_of(loader, ddp, args, launched):
            common.STEP_CLOCK.lap("wait")
            x = g.ndata[args.feature][input_nodes]
            common.STEP_CLOCK.lap("inputs")
            pos, neg = ddp(blocks, x, pair_graph, neg_graph)
            common.optimize([optimizer], link_loss(pos, neg), args, epoch, step, g.rank())
            steps += 1
        common.STEP_CLOCK.stop()
        train_time += clock.seconds()
    report_ranking(g, model, args, launched, train_time, steps)


def link_loss(pos, neg):
    """Binary cross-entropy of the positive scores against the negative ones (DGL's unsupervised loss)."""
    return F.binary_cross_entropy_with_logits(torch.cat([pos, neg]), torch.cat([torch.ones_like(pos),
                                                                                 torch.zeros_like(neg)]))


def report_ranking(g, model, args, launched, train_time, steps, embed_nodes=embed):
    """Ranks the held-out edges and prints the final line: MRR, Hits@k and speed."""
    val = rank(g, model, tdist.held_out_edges(g, "valid"), args, launched, embed_nodes)
    test = rank(g, model, tdist.held_out_edges(g, "test"), args, launched, embed_nodes)
    if g.rank() == 0:
        print(f"Val MRR {val.get('mrr', -1):.4f} | Test MRR {test.get('mrr', -1):.4f}", flush=True)
    common.report(g, {"test_mrr": test.get("mrr", -1.0), "val_mrr": val.get("mrr", -1.0),
                      **{f"test_{k}": v for k, v in test.items() if k != "mrr"},
                      "epoch_time_s": train_time / args.num_epochs,
                      "batches_per_s": steps / train_time if train_time else 0.0,
                      "step_ms": common.STEP_CLOCK.per_step_ms(),
                      "trainers": int(common.all_reduce_sum([1], launched)[0])})


if __name__ == "__main__":
    main()
