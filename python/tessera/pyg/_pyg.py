"""PyG, imported only when a loader is built: Tessera runs without it."""


def pyg_data():
    """torch_geometric.data, or an ImportError that says how to get it."""
    try:
        import torch_geometric.data as data
    except ImportError as e:
        raise ImportError(f"tessera.pyg's loaders yield PyG batches and need PyTorch Geometric ({e}); install it "
                          f"with `pip install torch_geometric` (PyG 2.3 runs on torch 1.13), or put a copy of its "
                          f"pure-Python package on PYTHONPATH") from e
    return data
