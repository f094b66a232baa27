"""Run by test_torch_backend.py under `tessera launch`: torch.distributed's backend "tessera" against a Gloo group
of the same trainers. Sums of fixed-seed tensors equal Gloo's to 1e-6, broadcasts, gathers (tensors and objects)
and barriers work, and DistributedDataParallel over "tessera" trains the same parameters as over Gloo. Every check
is an assert; trainer 0 prints OK last."""
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import tessera.dgl as dgl
import tessera.dgl.distributed  # noqa: F401

part_config = sys.argv[1]
dgl.distributed.initialize("ip_config.txt")
dist.init_process_group("tessera")
assert dist.get_backend() == "tessera"
rank, world = dist.get_rank(), dist.get_world_size()
gloo = dist.new_group(backend="gloo")


def tensor_of(r, n, dtype=torch.float32):
    return torch.randn(n, generator=torch.Generator().manual_seed(100 + r)).to(dtype)


# Sums: float32 to 1e-6 of the terms' magnitude (the ring may add in another order), float64, int64 exactly.
for n in (1, 7, 300_001):
    ours, theirs = tensor_of(rank, n), tensor_of(rank, n)
    dist.all_reduce(ours)
    dist.all_reduce(theirs, group=gloo)
    magnitude = sum(tensor_of(r, n).abs() for r in range(world))
    assert bool(((ours - theirs).abs() <= 1e-6 * magnitude.clamp(min=1)).all()), n
exact = torch.arange(1000, dtype=torch.int64) * (rank + 1)
dist.all_reduce(exact)
assert torch.equal(exact, torch.arange(1000, dtype=torch.int64) * (world * (world + 1) // 2))
doubles = tensor_of(rank, 1000, torch.float64)
dist.all_reduce(doubles)
assert torch.allclose(doubles, sum(tensor_of(r, 1000, torch.float64) for r in range(world)), rtol=0, atol=1e-12)
# A view that is not contiguous is summed in place too.
matrix = torch.ones(4, 6)
dist.all_reduce(matrix[:, ::2])
assert torch.equal(matrix[:, ::2], torch.full((4, 3), float(world))) and torch.equal(matrix[:, 1::2], torch.ones(4, 3))

# Broadcasts of any dtype from every root, gathers of tensors and of objects, barriers.
for root in range(world):
    data = torch.full((5,), root + 1, dtype=torch.int32) if rank == root else torch.zeros(5, dtype=torch.int32)
    dist.broadcast(data, src=root)
    assert torch.equal(data, torch.full((5,), root + 1, dtype=torch.int32))
    dist.barrier()
parts = [torch.zeros(3, dtype=torch.uint8) for _ in range(world)]
dist.all_gather(parts, torch.full((3,), rank, dtype=torch.uint8))
assert all(torch.equal(p, torch.full((3,), r, dtype=torch.uint8)) for r, p in enumerate(parts))
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank})
assert objects == [{"rank": r} for r in range(world)]
# The other operations and dtypes (DDP's join asks for a MAX), against Gloo's.
for op in (dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT, dist.ReduceOp.SUM):
    ours, theirs = tensor_of(rank, 50), tensor_of(rank, 50)
    dist.all_reduce(ours, op=op)
    dist.all_reduce(theirs, op=op, group=gloo)
    assert torch.allclose(ours, theirs, rtol=1e-6, atol=1e-6), op
small = torch.tensor([rank + 1, 10 * rank], dtype=torch.int32)
dist.all_reduce(small)
assert small.tolist() == [world * (world + 1) // 2, 10 * world * (world - 1) // 2]
bits = torch.tensor([1 << rank], dtype=torch.int64)
dist.all_reduce(bits, op=dist.ReduceOp.BOR)
assert int(bits) == (1 << world) - 1


# DistributedDataParallel: the same model, seeds and batches over "tessera" and over Gloo.
def train(group):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
    ddp = nn.parallel.DistributedDataParallel(model, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    data = torch.Generator().manual_seed(rank)
    for _ in range(5):
        x, y = torch.randn(32, 20, generator=data), torch.randint(0, 5, (32,), generator=data)
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


ours, theirs = train(None), train(gloo)
assert torch.allclose(ours, theirs, rtol=0, atol=1e-6), (ours - theirs).abs().max()
replicas = [torch.zeros_like(ours) for _ in range(world)]
dist.all_gather(replicas, ours)
assert all(torch.equal(r, ours) for r in replicas)
dist.barrier()
if rank == 0:
    print("OK", flush=True)
