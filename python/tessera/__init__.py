"""Tessera from Python: distributed GNN training whose sampling, storage, communication and sparse updates run
in Tessera's C++ core while the model stays in PyTorch.

    import tessera.distributed, tessera.dataloading, tessera.nn      # Tessera's names
    import tessera.dgl as dgl                                          # or DGL's, for DistDGL scripts

The modules follow dgl.distributed, dgl.dataloading and dgl.nn.pytorch: names, arguments and semantics.
"""
import torch  # noqa: F401  (the extension links libtorch_python: torch must be loaded first)

from . import _build_info


def _check_torch():
    """An extension built for one libtorch crashes or fails with undefined symbols under another: say so first."""
    def release(version):
        return tuple(int(p) for p in version.split("+")[0].split(".")[:2] if p.isdigit())
    built, running = _build_info.TORCH_VERSION, torch.__version__
    if release(built) != release(running):
        raise ImportError(f"tessera was built for torch {built}, but this Python runs torch {running}: rebuild it "
                          f"against this torch ({_build_info.REBUILD})")


_check_torch()
from . import _C  # noqa: E402

__version__ = _C.__version__

# The names DGL gives the original IDs in a block's srcdata / dstdata / edata.
NID = "_ID"
EID = "_ID"
NTYPE = "_TYPE"
ETYPE = "_TYPE"

from . import graph, distributed, dataloading, nn  # noqa: E402,F401  (in their layers' order)

# DGL exports the distributed loaders from dgl.distributed as well; the layer below the loaders' cannot import
# them, so the root, above both, places them there.
for _name in ("DistNodeDataLoader", "DistDataLoader", "DistEdgeDataLoader"):
    setattr(distributed, _name, getattr(dataloading, _name))
del _name


def _register_process_group_backend():
    """torch.distributed.init_process_group("tessera"): the job's trainers on Tessera's secured collectives
    (CURVE-encrypted, refused to strangers), where "gloo" sends gradients in the clear. Needs
    tessera.distributed.initialize() (or dgl.distributed.initialize) first, as DGL's scripts call it."""
    import torch.distributed as dist
    if dist.is_available() and not hasattr(dist.Backend, "TESSERA"):
        try:  # torch 2: a CPU backend (torch would otherwise offer it for CUDA tensors too)
            dist.Backend.register_backend("tessera", _C._create_process_group, devices=["cpu"])
        except TypeError:  # torch 1.13
            dist.Backend.register_backend("tessera", _C._create_process_group)


_register_process_group_backend()
