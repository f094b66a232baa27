"""Run by test_launch.py under `tessera launch`, 2 machines x 1 trainer: the distributed API across machines.
Every check is an assert; trainer 0 prints OK last."""
import gc
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

import tessera.dgl as dgl
import tessera.dgl.distributed  # noqa: F401

part_config = sys.argv[1]
dgl.distributed.initialize("ip_config.txt")
# torch.distributed from the launcher's variables, as DGL's launcher sets them.
for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
    assert name in os.environ, name
dist.init_process_group("gloo")
g = dgl.distributed.DistGraph("small", part_config=part_config)
rank, world = g.rank(), dist.get_world_size()
assert world == 2 and rank == dist.get_rank() == int(os.environ["RANK"])
pb = g.get_partition_book()
assert pb.num_partitions() == 2 and pb.partid == rank
local = pb.partid2nids(pb.partid)
assert bool((pb.nid2partid(local) == rank).all())

# Each trainer writes the rows its partition owns; each reads all of them.
n = g.num_nodes()
t = dgl.distributed.DistTensor((n, 2), torch.float32, "written")
t[local] = torch.stack([local.float(), torch.full((len(local),), float(rank))], 1)
g.barrier()
everything = t[torch.arange(n)]
assert torch.equal(everything[:, 0], torch.arange(n).float())
assert torch.equal(everything[:, 1], pb.nid2partid(torch.arange(n)).float())

# Node splits partition the training nodes between the trainers.
train = dgl.distributed.node_split(g.ndata["train_mask"], pb, force_even=True)
sizes = torch.tensor([len(train)])
dist.all_reduce(sizes)
assert int(sizes) == int(g.ndata["train_mask"][torch.arange(n)].sum())
# A mask read here splits as the servers' DistTensor does (one even split, the C++ one).
assert torch.equal(torch.as_tensor(train), dgl.distributed.node_split(g.ndata["train_mask"][torch.arange(n)], pb))

# Both trainers' gradients for the same row land (Adagrad on the servers).
emb = dgl.distributed.DistEmbedding(n, 2, "shared-emb", init_func=lambda s, d: torch.zeros(s, dtype=d))
opt = dgl.distributed.optim.SparseAdagrad([emb], lr=1.0)
emb(torch.tensor([0, 1 + rank])).sum().backward()
opt.step()
g.barrier()
rows = emb.weight[torch.tensor([0, 1, 2])]
# Row 0: two updates of gradient 1 (the second scaled by sqrt(2)); rows 1 and 2: one each.
expected0 = -1.0 - 1.0 / 2 ** 0.5
assert torch.allclose(rows[0], torch.full((2,), expected0)), rows
assert torch.allclose(rows[1:], torch.full((2, 2), -1.0)), rows

# One cache per process of other machines' rows of a partition feature (read-only, so exact): a script's own
# reads build it once they have asked for as many rows as it holds (a quarter of the rows), and go through it;
# the loaders fetch through it too (cache_remote_features), and fetch none with 0. feat._c.pull() bypasses it.
from tessera.distributed import context  # noqa: E402

feat = g.ndata["feat"]
every = torch.arange(n)
assert torch.equal(feat[every[: n // 8]], feat._c.pull(every[: n // 8]))
assert feat._c.name not in context._FEATURE_CACHES  # an eighth of the rows read: not yet worth a cache
assert torch.equal(feat[every[n // 8: n // 2]], feat._c.pull(every[n // 8: n // 2]))
cache = context._FEATURE_CACHES[feat._c.name]
assert cache is not None and cache.num_rows > 0
found = cache.remote_ids_found
assert torch.equal(feat[every], feat._c.pull(every))
assert cache.remote_ids_found > found
assert context.cache_for_reads(g.ndata["label"]._c, n) is None  # labels follow the seeds, not the degrees


def batches_match(fraction):
    sampler = dgl.dataloading.NeighborSampler([5, 5], prefetch_node_feats="feat")
    loader = dgl.dataloading.DistNodeDataLoader(g, local, sampler, batch_size=256, cache_remote_features=fraction)
    for input_nodes, _, _ in loader:
        assert torch.equal(feat[input_nodes], feat._c.pull(input_nodes))


found = cache.remote_ids_found
batches_match(0.3)
assert context.feature_cache(feat._c.name) is cache and cache.remote_ids_found > found
found = cache.remote_ids_found
batches_match(0)
assert cache.remote_ids_found == found

# DDP over the launcher's torch.distributed, with uneven batches under join().
model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))
with model.join():
    for _ in range(2 + rank):
        model(torch.ones(4, 3)).sum().backward()
for p in model.parameters():
    copy = p.detach().clone()
    dist.broadcast(copy, 0)
    assert torch.equal(copy, p.detach())

# Leaving the job (collective). The handles made above outlive it, as a script's globals outlive atexit:
# reading through one fails with a clear error, local rows included, and freeing them (trainer 0 owns
# "written" and the embedding) leaves the stopped servers alone instead of touching a finished job.
dgl.distributed.exit_client()
for read in (lambda: t[local[:2]], lambda: emb.weight[torch.tensor([0])], g.barrier):
    try:
        read()
    except RuntimeError as e:
        assert "already left the job" in str(e), e
    else:
        raise AssertionError("a read after exit_client() must fail")
del t, emb, opt
gc.collect()
if rank == 0:
    print("OK", flush=True)
