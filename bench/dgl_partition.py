"""Partitions a Tessera dataset folder (`tessera gen` output: meta.json and .npy arrays) with DGL's own
dgl.distributed.partition_graph (METIS, training nodes and edges balanced, as DGL's examples partition), for
bench/distdgl.sh. Node data as DGL's examples name it: features, labels, train_mask / val_mask / test_mask.

    python dgl_partition.py DATASET_DIR GRAPH_NAME NUM_PARTS OUT_DIR"""
import json
import os
import sys

import dgl
import numpy as np
import torch as th


def main(dataset, name, parts, out):
    meta = json.load(open(os.path.join(dataset, "meta.json")))
    if len(meta["node_types"]) != 1 or len(meta["edge_types"]) != 1:
        sys.exit(f"{dataset}/meta.json: a homogeneous graph was expected (one node type, one edge type)")
    nodes, edges = meta["node_types"][0], meta["edge_types"][0]
    path = lambda rel: os.path.join(dataset, rel)
    src, dst = np.load(path(edges["edges"]))
    g = dgl.graph((th.from_numpy(src), th.from_numpy(dst)), num_nodes=nodes["count"])
    g.ndata["features"] = th.from_numpy(np.load(path(nodes["feat"])))
    g.ndata["labels"] = th.from_numpy(np.load(path(nodes["label"])))
    for split in ("train", "val", "test"):
        mask = th.zeros(nodes["count"], dtype=th.bool)
        if split in nodes:
            mask[th.from_numpy(np.load(path(nodes[split])))] = True
        g.ndata[f"{split}_mask"] = mask
    dgl.distributed.partition_graph(g, name, parts, out, part_method="metis", balance_train=True, balance_edges=True)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
