"""tessera.dataloading: dgl.dataloading's samplers and the distributed node data loader."""
from .block import Block
from .loader import DistDataLoader, DistNodeDataLoader
from .sampler import MultiLayerFullNeighborSampler, MultiLayerNeighborSampler, NeighborSampler

NodeDataLoader = DistNodeDataLoader
