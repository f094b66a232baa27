"""Node classification on a typed graph with a PyG model made heterogeneous by torch_geometric.nn.to_hetero: a
GraphSAGE of SAGEConv layers, one copy per relation summed per node type, over tessera.pyg.DistNeighborLoader's
HeteroData batches. Node types without features learn an embedding per node (indexed by the batch's n_id);
types with features project them.

    tessera partition --input AIFB --format rdf --graph-name aifb --num-parts 2 --balance-train --out aifb
    tessera launch --ip-config ip_config.txt --part-config aifb/aifb.json --num-trainers 1 --num-samplers 1 \\
        "python3 examples/pyg/hetero_sage.py --graph-name aifb --ip-config ip_config.txt \\
         --part-config aifb/aifb.json"
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.nn import SAGEConv, to_hetero

import tessera.distributed as tdist
import tessera.pyg as tpyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import common  # noqa: E402  (the examples' shared command line and reporting)
from rgcn import labelled_type  # noqa: E402


class SAGE(nn.Module):
    def __init__(self, hidden, classes, layers, dropout):
        super().__init__()
        dims = [hidden] * layers + [classes]
        self.convs = nn.ModuleList(SAGEConv(dims[i], dims[i + 1]) for i in range(layers))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i != len(self.convs) - 1:
                x = F.dropout(F.relu(x), self.dropout, self.training)
        return x


class HeteroModel(nn.Module):
    """Per-type inputs (embeddings or projected features), then the to_hetero GraphSAGE."""

    def __init__(self, g, feature, hidden, classes, layers, dropout, aggr):
        super().__init__()
        featured = [nt for nt in g.ntypes if feature in g.nodes[nt].data]
        self.feature = feature
        self.projections = nn.ModuleDict({nt: nn.Linear(g.nodes[nt].data[feature].shape[1], hidden)
                                          for nt in featured})
        self.embeddings = nn.ModuleDict({nt: nn.Embedding(g.num_nodes(nt), hidden)
                                         for nt in g.ntypes if nt not in featured})
        self.gnn = to_hetero(SAGE(hidden, classes, layers, dropout), (g.ntypes, g.canonical_etypes), aggr=aggr)

    def forward(self, batch):
        x = {nt: self.projections[nt](batch[nt].x) if nt in self.projections else self.embeddings[nt](batch[nt].n_id)
             for nt in batch.node_types}
        return self.gnn(x, batch.edge_index_dict)


def accuracy(model, loader, category, launched):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            bs = batch[category].batch_size
            correct += int((model(batch)[category][:bs].argmax(1) == batch[category].y).sum())
            total += bs
    model.train()
    correct, total = common.all_reduce_sum([correct, total], launched)
    return correct / total if total else -1.0


def main():
    p = common.parser("PyG to_hetero GraphSAGE on Tessera", epochs=30, fanout="20,20", batch_size=16, lr=0.01,
                      hidden=16, dropout=0.5)
    p.set_defaults(weight_decay=5e-4)  # one SAGEConv per relation: AIFB's 234 overfit its 140 labels without it
    p.add_argument("--num-layers", "--num_layers", dest="num_layers", type=int, default=2)
    p.add_argument("--predict-category", dest="category", default=None)
    p.add_argument("--aggr", default="sum", choices=["sum", "mean", "max"], help="how relations into a type combine")
    args = p.parse_args()
    g, launched = common.join(args)
    category = labelled_type(g, args.label, args.category)
    data = g.nodes[category].data
    book = g.get_partition_book()
    train_nid, test_nid = (tdist.node_split(data[m], book, ntype=category, force_even=True)
                           for m in ("train_mask", "test_mask"))
    classes = int(data[args.label][torch.arange(g.num_nodes(category))].max()) + 1
    dataset = tpyg.DistDataset(graph=g, feature_name=args.feature, label_name=args.label)

    model = HeteroModel(g, args.feature, args.num_hidden, classes, args.num_layers, args.dropout, args.aggr)
    # A batch reaches only some relations, and the loss reads one node type: the rest get no gradient.
    ddp = DistributedDataParallel(model, find_unused_parameters=True) if launched else model
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    num_neighbors = list(reversed(common.fanouts(args.fan_out, args.num_layers)))
    loader = tpyg.DistNeighborLoader(dataset, num_neighbors, input_nodes=(category, train_nid),
                                     batch_size=args.batch_size, shuffle=True)
    test_loader = tpyg.DistNeighborLoader(dataset, num_neighbors, input_nodes=(category, test_nid),
                                          batch_size=args.eval_batch_size)

    steps = train_time = 0.0
    test_acc = -1.0
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        for step, batch in common.steps_of(loader, ddp, args, launched):
            bs = batch[category].batch_size
            loss = F.cross_entropy(ddp(batch)[category][:bs], batch[category].y)
            common.optimize([optimizer], loss, args, epoch, step, g.rank())
            steps += 1
        train_time += clock.seconds()
        if common.evaluation_due(args, epoch):
            test_acc = accuracy(model, test_loader, category, launched)
            if g.rank() == 0:
                print(f"Epoch {epoch:05d} | Loss {loss.item():.4f} | Test Acc {test_acc:.4f}", flush=True)
    common.report_accuracy(g, {"test_acc": test_acc}, train_time, steps, args, launched)


if __name__ == "__main__":
    main()
