"""Run by bench/link.sh under `tessera launch` (2 machines): the data paths of link prediction and of the guide's
hand-written sampler against DistNodeDataLoader, each timed on this trainer over the same graph and fan-out.
  edge: DistEdgeDataLoader batches of B edges with 5 uniform negatives each, sampled on the calling thread
        (no sampler thread, so the time is the batch's cost), with their input features;
  node: DistNodeDataLoader batches, the same way, over the edge batches' own nodes (the edge path's overhead:
        finding the edges, negatives, exclusion, pair graphs) and over as many uniformly drawn nodes (edge
        endpoints are drawn in proportion to degree, so their neighbourhoods are larger than a random node's);
  guide: DistDataLoader(collate_fn=sample_neighbors + to_block) with the input features, as a training loop
        reads them, against DistNodeDataLoader with its sampler thread doing the same.
Prints one JSON line on trainer 0."""
import json
import sys
import time

import torch

import tessera.dgl as dgl
import tessera.dgl.distributed  # noqa: F401
from tessera.dgl.dataloading import negative_sampler

graph_name, batch_edges, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dgl.distributed.initialize("ip_config.txt")
g = dgl.distributed.DistGraph(graph_name)
torch.manual_seed(g.rank())
fanouts = [10, 25]
feat = g.ndata["feat"]


def timed(loader, count, unpack):
    """Seconds per batch over `count` batches (after one warm-up batch), and the mean distinct seeds."""
    it = iter(loader)
    unpack(next(it))
    seeds, start = 0, time.perf_counter()
    for _ in range(count):
        seeds += unpack(next(it))
    return (time.perf_counter() - start) / count, seeds / count


edges = dgl.distributed.edge_split(torch.ones(g.num_edges(), dtype=torch.bool), g.get_partition_book())
edge_loader = dgl.dataloading.DistEdgeDataLoader(
    g, edges, dgl.dataloading.NeighborSampler(fanouts), negative_sampler=negative_sampler.Uniform(5),
    exclude="self", batch_size=batch_edges, shuffle=True, num_samplers=0)
pair_nodes = []


def edge_batch(b):
    feat[b[0]]
    pair_nodes.append(b[1].ndata[dgl.NID])
    return b[1].num_nodes()


edge_s, seeds = timed(edge_loader, batches, edge_batch)


prefetching = dgl.dataloading.NeighborSampler(fanouts, prefetch_node_feats=["feat"])


def node_batch_seconds(batches_of_nodes):
    """Seconds per node batch over the given batches, each one loader's single batch (setup not timed)."""
    total = 0.0
    for nodes in batches_of_nodes:
        loader = dgl.dataloading.DistNodeDataLoader(g, nodes, prefetching, batch_size=len(nodes), shuffle=False,
                                                    num_samplers=0)
        it = iter(loader)
        start = time.perf_counter()
        input_nodes, _, _ = next(it)
        feat[input_nodes]
        total += time.perf_counter() - start
    return total / len(batches_of_nodes)


# The edge batches' own nodes (the warm-up batch's left out); then as many uniformly drawn nodes.
same_s = node_batch_seconds(pair_nodes[1:])
uniform_s = node_batch_seconds([torch.randperm(g.num_nodes())[: len(n)] for n in pair_nodes[1:]])


def sample_blocks(seeds):
    seeds = torch.as_tensor(seeds)
    blocks = []
    for fanout in reversed(fanouts):
        frontier = dgl.distributed.sample_neighbors(g, seeds, fanout)
        block = dgl.to_block(frontier, seeds)
        seeds = block.srcdata[dgl.NID]
        blocks.insert(0, block)
    return blocks


train = torch.nonzero(g.ndata["train_mask"][torch.arange(g.num_nodes())]).flatten()
train = dgl.distributed.node_split(torch.isin(torch.arange(g.num_nodes()), train), g.get_partition_book())
guide = dgl.distributed.DistDataLoader(train.numpy(), batch_size=1000, collate_fn=sample_blocks, shuffle=True)
node_batches = min(batches, len(guide) - 1)  # one epoch of the trainer's training nodes at most
guide_s, _ = timed(guide, node_batches, lambda blocks: (feat[blocks[0].srcdata[dgl.NID]], 1)[1])
native = dgl.dataloading.DistNodeDataLoader(g, train, dgl.dataloading.NeighborSampler(fanouts), batch_size=1000,
                                            shuffle=True)
native_s, _ = timed(native, node_batches, lambda b: (feat[b[0]], 1)[1])
if g.rank() == 0:
    print(json.dumps({"edge_batch_s": edge_s, "edge_batch_nodes": seeds, "same_nodes_batch_s": same_s,
                      "uniform_nodes_batch_s": uniform_s,
                      "guide_batches_per_s": 1 / guide_s, "node_loader_batches_per_s": 1 / native_s}), flush=True)
