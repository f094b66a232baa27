"""DGL's distributed unsupervised GraphSAGE (examples/pytorch/graphsage/dist/train_dist_unsupervised.py and its
transductive variant), its API use written out again from their documented behaviour: DistEdgeDataLoader with
negative_sampler.Uniform and exclude="reverse_id", a u_dot_v loss under local_scope, DDP with model.join(),
layer-wise full-neighbour inference into persistent DistTensors over node_split(np.arange(n)), g._client.barrier(),
and the embeddings scored by scikit-learn's logistic regression. --transductive learns the inputs as node
embeddings (DistEmbedding + its SparseAdam with --dgl_sparse, else torch's sparse Embedding standalone).
Prints {"eval_acc", "test_acc"} on trainer 0."""
import argparse
import json

import numpy as np
import sklearn.linear_model as lm
import sklearn.metrics as skm
import torch as th
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

import tessera.dgl as dgl
import tessera.dgl.distributed  # noqa: F401
import tessera.dgl.function as fn
import tessera.dgl.nn.pytorch as dglnn


class DistSAGE(nn.Module):
    def __init__(self, in_feats, n_hidden, n_out, n_layers, dropout):
        super().__init__()
        self.n_hidden, self.n_out = n_hidden, n_out
        sizes = [in_feats] + [n_hidden] * (n_layers - 1) + [n_out]
        self.layers = nn.ModuleList(dglnn.SAGEConv(a, b, "mean") for a, b in zip(sizes, sizes[1:]))
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h

    def inference(self, g, x, batch_size):
        """Every node's output, layer by layer over all in-edges, each trainer its share of the nodes."""
        nodes = dgl.distributed.node_split(np.arange(g.num_nodes()), g.get_partition_book(), force_even=True)
        for i, layer in enumerate(self.layers):
            last = i == len(self.layers) - 1
            y = dgl.distributed.DistTensor((g.num_nodes(), self.n_out if last else self.n_hidden), th.float32,
                                           "h_last" if last else "h", persistent=True)
            loader = dgl.distributed.DistNodeDataLoader(g, nodes, dgl.dataloading.NeighborSampler([-1]),
                                                        batch_size=batch_size, shuffle=False, drop_last=False)
            for input_nodes, output_nodes, blocks in loader:
                h = x[input_nodes]
                h = layer(blocks[0], (h, h[: blocks[0].number_of_dst_nodes()]))
                if not last:
                    h = F.relu(h)
                y[output_nodes] = h
            x = y
            g.barrier()
        return y


class CrossEntropyLoss(nn.Module):
    def forward(self, block_outputs, pos_graph, neg_graph):
        with pos_graph.local_scope():
            pos_graph.ndata["h"] = block_outputs
            pos_graph.apply_edges(fn.u_dot_v("h", "h", "score"))
            pos_score = pos_graph.edata["score"]
        with neg_graph.local_scope():
            neg_graph.ndata["h"] = block_outputs
            neg_graph.apply_edges(fn.u_dot_v("h", "h", "score"))
            neg_score = neg_graph.edata["score"]
        score = th.cat([pos_score, neg_score])
        label = th.cat([th.ones_like(pos_score), th.zeros_like(neg_score)])
        return F.binary_cross_entropy_with_logits(score, label)


class DistEmb(nn.Module):
    """The transductive inputs: one learned row per node."""

    def __init__(self, num_nodes, emb_size, dgl_sparse):
        super().__init__()
        self.emb_size, self.dgl_sparse = emb_size, dgl_sparse
        if dgl_sparse:
            self.sparse_emb = dgl.distributed.DistEmbedding(
                num_nodes, emb_size, name="sage", init_func=lambda shape, dtype: th.empty(shape, dtype=dtype).uniform_(-1, 1))
        else:
            self.sparse_emb = th.nn.Embedding(num_nodes, emb_size, sparse=True)
            nn.init.uniform_(self.sparse_emb.weight, -1.0, 1.0)

    def forward(self, idx):
        return self.sparse_emb(idx.cpu())


def load_embs(emb_layer, g):
    nodes = dgl.distributed.node_split(np.arange(g.num_nodes()), g.get_partition_book(), force_even=True)
    x = dgl.distributed.DistTensor((g.num_nodes(), emb_layer.emb_size), th.float32, "eval_embs", persistent=True)
    for i in range(0, len(nodes), 1024):
        idx = nodes[i:i + 1024]
        x[idx] = emb_layer(idx)
    g.barrier()
    return x


def compute_acc(emb, labels, train_nids, val_nids, test_nids):
    emb = emb[np.arange(labels.shape[0])].numpy()
    labels = labels.numpy()
    emb = (emb - emb.mean(0, keepdims=True)) / emb.std(0, keepdims=True)
    lr = lm.LogisticRegression(max_iter=10000)  # multinomial: the default for lbfgs (scikit-learn 1.2 and 1.9 alike)
    lr.fit(emb[train_nids], labels[train_nids])
    pred = lr.predict(emb)
    return skm.accuracy_score(labels[val_nids], pred[val_nids]), skm.accuracy_score(labels[test_nids], pred[test_nids])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graph_name", default="cora")
    parser.add_argument("--ip_config", default="ip_config.txt")
    parser.add_argument("--part_config", required=True)
    parser.add_argument("--num_epochs", type=int, default=5)
    parser.add_argument("--num_hidden", type=int, default=64)
    parser.add_argument("--num_layers", type=int, default=2)
    parser.add_argument("--fan_out", default="10,25")
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--batch_size_eval", type=int, default=100000)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--num_negs", type=int, default=1)
    parser.add_argument("--remove_edge", action="store_true")
    parser.add_argument("--transductive", action="store_true")
    parser.add_argument("--dgl_sparse", action="store_true")
    parser.add_argument("--sparse_lr", type=float, default=1e-2)
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    th.manual_seed(args.seed)

    dgl.distributed.initialize(args.ip_config)
    if not args.standalone:
        th.distributed.init_process_group(backend="gloo")
    g = dgl.distributed.DistGraph(args.graph_name, part_config=args.part_config)
    n = g.num_nodes()
    train_eids = dgl.distributed.edge_split(th.ones((g.num_edges(),), dtype=th.bool), g.get_partition_book(),
                                            force_even=True)
    masks = {k: th.LongTensor(np.nonzero(g.ndata[k][np.arange(n)])).squeeze()
             for k in ("train_mask", "val_mask", "test_mask")}
    labels = g.ndata["labels"][np.arange(n)]

    dataloader = dgl.distributed.DistEdgeDataLoader(
        g, train_eids, dgl.dataloading.NeighborSampler([int(f) for f in args.fan_out.split(",")]),
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(args.num_negs),
        exclude="reverse_id" if args.remove_edge else None,
        reverse_eids=th.arange(g.num_edges()) if args.remove_edge else None,
        batch_size=args.batch_size, shuffle=True, drop_last=False)
    in_feats = args.num_hidden if args.transductive else g.ndata["features"].shape[1]
    model = DistSAGE(in_feats, args.num_hidden, args.num_hidden, args.num_layers, args.dropout)
    emb_layer = DistEmb(n, args.num_hidden, args.dgl_sparse) if args.transductive else None
    if not args.standalone:
        model = th.nn.parallel.DistributedDataParallel(model)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    emb_optimizer = None
    if emb_layer is not None:
        emb_optimizer = (dgl.distributed.optim.SparseAdam([emb_layer.sparse_emb], lr=args.sparse_lr)
                         if args.dgl_sparse else
                         th.optim.SparseAdam(list(emb_layer.sparse_emb.parameters()), lr=args.sparse_lr))
    loss_fcn = CrossEntropyLoss()
    losses = []  # each epoch's mean, for the script matrix's "the loss falls"
    for epoch in range(args.num_epochs):
        total, steps = 0.0, 0
        with (model.join() if not args.standalone else _nothing()):
            for input_nodes, pos_graph, neg_graph, blocks in dataloader:
                inputs = emb_layer(input_nodes) if emb_layer is not None else g.ndata["features"][input_nodes]
                loss = loss_fcn(model(blocks, inputs), pos_graph, neg_graph)
                optimizer.zero_grad()
                if emb_optimizer is not None:
                    emb_optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if emb_optimizer is not None:
                    emb_optimizer.step()
                total, steps = total + loss.item(), steps + 1
        losses.append(total / max(steps, 1))

    module = model if args.standalone else model.module
    module.eval()
    with th.no_grad():
        x = load_embs(emb_layer, g) if emb_layer is not None else g.ndata["features"]
        pred = module.inference(g, x, args.batch_size_eval)
    if g.rank() == 0:
        eval_acc, test_acc = compute_acc(pred, labels, masks["train_mask"], masks["val_mask"], masks["test_mask"])
        print(json.dumps({"eval_acc": eval_acc, "test_acc": test_acc, "losses": losses}))
    if not args.standalone:
        th.distributed.barrier()
        g._client.barrier()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
