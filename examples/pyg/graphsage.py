"""Node classification with PyG's own GraphSAGE (torch_geometric.nn.GraphSAGE) on a Tessera partition: the batches
come from tessera.pyg.DistNeighborLoader as PyG `Data`, sampled and gathered by Tessera's C++ core.

    tessera launch --ip-config ip_config.txt --part-config data/cora.json --num-trainers 1 --num-samplers 1 \
        "python3 examples/pyg/graphsage.py --graph-name cora --ip-config ip_config.txt --part-config data/cora.json"
    python3 examples/pyg/graphsage.py --graph-name cora --part-config p1/cora.json        # standalone

PyG is not part of Tessera: install it (`pip install torch_geometric`) or put its package on PYTHONPATH. The
flags are the other examples' (`tessera train sage`'s); --num-neighbors is PyG's fan-out, the seeds' hop first.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.nn import GraphSAGE

import tessera.pyg as tpyg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import common  # noqa: E402  (the examples' shared command line and reporting)


def accuracy(model, loader, launched):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            correct += int((out.argmax(1) == batch.y).sum())
            total += batch.batch_size
    model.train()
    correct, total = common.all_reduce_sum([correct, total], launched)
    return correct / total if total else -1.0


def main():
    p = common.parser("PyG's GraphSAGE on Tessera", epochs=20, fanout="10,25", batch_size=1000, lr=0.003, hidden=16,
                      dropout=0.5)
    p.add_argument("--num-layers", "--num_layers", dest="num_layers", type=int, default=2)
    p.add_argument("--num-neighbors", dest="num_neighbors", default=None,
                   help="PyG's fan-out, the seeds' hop first (default: --fan-out reversed)")
    args = p.parse_args()
    g, launched = common.join(args)  # tessera.distributed.initialize, as tpyg.init_client does
    dataset = tpyg.DistDataset(graph=g, feature_name=args.feature, label_name=args.label)
    num_neighbors = (common.fanouts(args.num_neighbors) if args.num_neighbors
                     else list(reversed(common.fanouts(args.fan_out, args.num_layers))))
    train_nid, val_nid, test_nid = common.splits(g)

    model = GraphSAGE(g.ndata[args.feature].shape[1], args.num_hidden, len(num_neighbors),
                      out_channels=common.num_classes(g, args.label), dropout=args.dropout)
    ddp = DistributedDataParallel(model) if launched else model
    optimizer = torch.optim.Adam(ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    loader = tpyg.DistNeighborLoader(dataset, num_neighbors, input_nodes=train_nid, batch_size=args.batch_size,
                                     shuffle=True)
    eval_neighbors = list(reversed(common.fanouts(args.eval_fan_out, len(num_neighbors))))
    eval_loaders = [tpyg.DistNeighborLoader(dataset, eval_neighbors, input_nodes=ids,
                                            batch_size=args.eval_batch_size) for ids in (val_nid, test_nid)]

    steps = train_time = 0.0
    val_acc = test_acc = -1.0
    for epoch in range(args.num_epochs):
        clock = common.epoch_timer(g)
        for step, batch in common.steps_of(loader, ddp, args, launched):
            # PyG's trim_to_layer: each layer computes only the hops the next one reads.
            out = ddp(batch.x, batch.edge_index, num_sampled_nodes_per_hop=batch.num_sampled_nodes,
                      num_sampled_edges_per_hop=batch.num_sampled_edges)[: batch.batch_size]
            common.optimize([optimizer], F.cross_entropy(out, batch.y), args, epoch, step, g.rank())
            steps += 1
        train_time += clock.seconds()
        if common.evaluation_due(args, epoch):
            val_acc, test_acc = (accuracy(model, loader, launched) for loader in eval_loaders)
            if g.rank() == 0:
                print(f"Epoch {epoch:05d} | Val Acc {val_acc:.4f} | Test Acc {test_acc:.4f}", flush=True)
    common.report_accuracy(g, {"test_acc": test_acc, "val_acc": val_acc}, train_time, steps, args, launched)


if __name__ == "__main__":
    main()
