"""tessera.nn: dgl.nn.pytorch's graph layers over Tessera's blocks, with autograd; aggregations run on
Tessera's C++ CSR kernels."""
from .dropout import Dropout
from .gatconv import GATConv
from .graphconv import GraphConv
from .heterographconv import HeteroGraphConv
from .relgraphconv import RelGraphConv
from .sageconv import SAGEConv
from .typedlinear import TypedLinear, WeightBasis

import warnings as _warnings

# torch 1.13 flags scatter_reduce (the per-destination max of pool and attention) as beta; its semantics are
# the ones these layers need.
_warnings.filterwarnings("ignore", message="scatter_reduce\\(\\) is in beta")
