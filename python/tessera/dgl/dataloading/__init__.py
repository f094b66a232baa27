"""dgl.dataloading's names, from tessera.dataloading."""
from ...dataloading import *  # noqa: F401,F403
from ...dataloading import (DistDataLoader, DistEdgeDataLoader, DistNodeDataLoader, EdgeDataLoader,  # noqa: F401
                            EdgePredictionSampler, MultiLayerFullNeighborSampler, MultiLayerNeighborSampler,
                            NeighborSampler, NodeDataLoader, as_edge_prediction_sampler, negative_sampler)
