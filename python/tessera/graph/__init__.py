"""tessera.graph: the graphs that live in one process, as DGL has them: a sampled or built Graph and HeteroGraph,
the blocks a loader yields (Block, HeteroBlock), message passing over them, and to_block. The lowest of the
Python layers: it imports none of tessera.distributed, tessera.dataloading or the model packages."""
from .block import Block
from .graph import Graph
from .hetero_block import HeteroBlock
from .hetero_graph import HeteroGraph
from .transforms import to_block
