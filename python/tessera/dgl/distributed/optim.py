"""dgl.distributed.optim's names, from tessera.distributed.optim."""
from ...distributed.optim import SparseAdagrad, SparseAdam  # noqa: F401
