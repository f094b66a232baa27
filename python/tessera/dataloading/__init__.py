"""tessera.dataloading: dgl.dataloading's samplers, the distributed node and edge data loaders, negative samplers,
and the graphs they yield."""
from . import negative_sampler
from .block import Block
from .edge_loader import DistEdgeDataLoader, EdgeDataLoader, EdgePredictionSampler, as_edge_prediction_sampler
from .graph import Graph
from .loader import DistDataLoader, DistNodeDataLoader
from .sampler import MultiLayerFullNeighborSampler, MultiLayerNeighborSampler, NeighborSampler
from .transforms import to_block

NodeDataLoader = DistNodeDataLoader
