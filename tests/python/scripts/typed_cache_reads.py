"""Typed DistTensor reads through the remote-row cache equal the servers' rows, bit for bit: a script's reads of
g.nodes[ntype].data["feat"] (every featured type, IDs in random order with repeats) against the same rows pulled
past the cache, with a cache of every remote row and with the default share. Prints "OK <rows cached>" (trainer 0)."""
import sys

import torch

import tessera.dgl as dgl
from tessera.distributed import context


def main(part_config):
    dgl.distributed.initialize("ip_config.txt")
    g = dgl.distributed.DistGraph("mag", part_config=part_config)
    featured = [nt for nt in g.ntypes if "feat" in g.nodes[nt].data]
    assert featured, g.ntypes
    cached = 0
    for fraction in (1.0, None):
        context._FEATURE_CACHES.clear()
        for nt in featured:
            tensor = g.nodes[nt].data["feat"]
            cache = context.feature_cache(tensor._c.name, fraction)
            assert cache is not None and cache.num_rows > 0, (nt, fraction)
            cached += cache.num_rows
            gen = torch.Generator().manual_seed(g.rank())
            ids = torch.randint(0, g.num_nodes(nt), (3 * g.num_nodes(nt),), generator=gen)
            through, past = tensor[ids], tensor._c.pull(ids)
            assert torch.equal(through, past), (nt, fraction)
            assert cache.remote_ids_found > 0, (nt, fraction)
    g.barrier()
    if g.rank() == 0:
        print(f"OK {cached}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
