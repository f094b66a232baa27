"""dgl.nn.pytorch's names, from tessera.nn."""
from ....nn import *  # noqa: F401,F403
from ....nn import (GATConv, GraphConv, HeteroGraphConv, RelGraphConv, SAGEConv, TypedLinear,  # noqa: F401
                    WeightBasis)
