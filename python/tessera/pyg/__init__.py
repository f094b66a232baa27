"""tessera.pyg: PyG users' loaders over a Tessera partition, with GraphLearn-for-PyTorch's names.

    import tessera.pyg as tpyg
    tpyg.init_client("ip_config.txt")                       # or tessera.distributed.initialize(...)
    g = tpyg.DistDataset("products", "part/products.json")  # or a tessera.distributed.DistGraph
    loader = tpyg.DistNeighborLoader(g, [15, 10], input_nodes=train_ids, batch_size=1024, shuffle=True)
    for batch in loader:                                    # torch_geometric.data.Data / HeteroData
        out = model(batch.x, batch.edge_index)[: batch.batch_size]

Sampling, feature gathering and negative sampling run in Tessera's C++ sampler threads, ahead of the loop,
with the GIL released; this package only lays each batch out as PyG expects. PyG itself is not a dependency of
Tessera: `import tessera.pyg` works without it, and a loader says how to install it when it is missing.
"""
from .dataset import DistDataset
from .link_loader import DistLinkNeighborLoader
from .neighbor_loader import DistNeighborLoader
from .server_client import init_client, init_server, shutdown_client

__all__ = ["DistDataset", "DistNeighborLoader", "DistLinkNeighborLoader", "init_client", "init_server",
           "shutdown_client"]
