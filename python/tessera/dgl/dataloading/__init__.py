"""dgl.dataloading's names, from tessera.dataloading."""
from ...dataloading import *  # noqa: F401,F403
from ...dataloading import (DistDataLoader, DistNodeDataLoader, MultiLayerFullNeighborSampler,  # noqa: F401
                            MultiLayerNeighborSampler, NeighborSampler, NodeDataLoader)
