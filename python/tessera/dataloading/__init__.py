"""tessera.dataloading: dgl.dataloading's samplers, the distributed node and edge data loaders, negative samplers,
and the graphs they yield."""
from ..graph.block import Block
from ..graph.graph import Graph
from ..graph.transforms import to_block
from . import negative_sampler
from .edge_loader import DistEdgeDataLoader, EdgeDataLoader, EdgePredictionSampler, as_edge_prediction_sampler
from .loader import DistDataLoader, DistNodeDataLoader
from .sampler import MultiLayerFullNeighborSampler, MultiLayerNeighborSampler, NeighborSampler

NodeDataLoader = DistNodeDataLoader
