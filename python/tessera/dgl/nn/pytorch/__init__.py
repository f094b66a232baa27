"""dgl.nn.pytorch's names, from tessera.nn."""
from ....nn import *  # noqa: F401,F403
from ....nn import GATConv, GraphConv, SAGEConv  # noqa: F401
