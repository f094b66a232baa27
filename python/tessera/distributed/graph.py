"""DistGraph: the partitioned graph as a trainer sees it (dgl.distributed.DistGraph)."""
import os

import torch

from .. import _C
from . import context
from ..graph.typed import TypesOfBook
from .partition_book import DEFAULT_NTYPE, GraphPartitionBook
from .tensor import DistTensor


class _DataView:
    """g.ndata / g.nodes[ntype].data / g.edata: a dict-like of DistTensors by feature name.

    Partition data (the features and labels written by `tessera partition`) is there from the start; a
    DistTensor assigned to a name is added for this process."""

    def __init__(self, graph, kind, type_name, names):
        self._graph = graph
        self._kind = kind  # "node" | "edge"
        self._type = type_name
        self._names = list(names)
        self._added = graph._added.setdefault((kind, type_name), {})

    def _full_name(self, name):
        return (_C.node_tensor_name if self._kind == "node" else _C.edge_tensor_name)(self._type, name)

    def __getitem__(self, name):
        if name in self._added:
            return self._added[name]
        if name not in self._names:
            raise KeyError(f"{self._kind} data of {self._type!r} has no {name!r} "
                           f"(it has {sorted(self._names + list(self._added))})")
        key = (self._kind, self._type, name)
        cache = self._graph._tensors
        if key not in cache:
            c_tensor = _C.DistTensor.open(self._full_name(name))
            cache[key] = DistTensor._wrap(c_tensor, name, (self._type, name) if self._kind == "node" else None)
        return cache[key]

    def __setitem__(self, name, tensor):
        if not isinstance(tensor, DistTensor):
            raise TypeError(f"{self._kind} data {name!r}: assign a DistTensor (made with the graph's partition "
                            f"policy), not {type(tensor).__name__}")
        self._added[name] = tensor

    def __delitem__(self, name):
        if name not in self._added:
            raise KeyError(f"{name!r} was not assigned in this process; partition data cannot be deleted")
        del self._added[name]

    def __contains__(self, name):
        return name in self._names or name in self._added

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def keys(self):
        return list(dict.fromkeys(self._names + list(self._added)))

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def __repr__(self):
        return f"{{{', '.join(repr(k) for k in self.keys())}}}"


class _TypeView:
    def __init__(self, data):
        self.data = data


class _TypeViews:
    """g.nodes[ntype] / g.edges[etype]: a type's .data."""

    def __init__(self, graph, kind):
        self._graph = graph
        self._kind = kind

    def __getitem__(self, type_name):
        g = self._graph
        if self._kind == "node":
            return _TypeView(g._node_view(type_name))
        return _TypeView(g._edge_view(type_name))


class _Client:
    def barrier(self):
        _C.barrier()


class DistGraph(TypesOfBook):
    """DistGraph(graph_name, gpb=None, part_config=None): the partitioned graph.

    Launched, the graph is the job's (part_config, if given, must be the launcher's); standalone, part_config
    names a 1-partition graph that this process loads."""

    def __init__(self, graph_name, gpb=None, part_config=None, **kwargs):
        info = context.ensure_initialized(part_config)
        if part_config is not None and os.path.exists(part_config) and os.path.exists(info["part_config"]):
            if not os.path.samefile(part_config, info["part_config"]):
                raise ValueError(f"part_config {part_config} is not the job's partition config "
                                 f"{info['part_config']}")
        if graph_name != info["graph_name"]:
            raise ValueError(f"graph_name {graph_name!r} is not the partitioned graph's name "
                             f"{info['graph_name']!r} (from {info['part_config']})")
        self._info = info
        self._book = gpb or GraphPartitionBook(info)
        self._tensors = {}
        self._added = {}
        self.nodes = _TypeViews(self, "node")
        self.edges = _TypeViews(self, "edge")

    # --- structure ---
    @property
    def graph_name(self):
        return self._info["graph_name"]

    @property
    def idtype(self):
        return torch.int64

    @property
    def device(self):
        return torch.device("cpu")

    def is_homogeneous(self):
        return len(self.ntypes) == 1 and len(self.canonical_etypes) == 1

    def num_nodes(self, ntype=None):
        if ntype is None:
            return int(self._info["num_nodes"])
        return self._book.num_nodes(ntype)

    def num_edges(self, etype=None):
        if etype is None:
            return int(self._info["num_edges"])
        return self._book.num_edges(etype)

    number_of_nodes = num_nodes
    number_of_edges = num_edges

    # --- data ---
    def _node_view(self, ntype):
        if ntype is None or (ntype == DEFAULT_NTYPE and len(self.ntypes) == 1):
            if len(self.ntypes) != 1:
                raise KeyError(f"the graph has {len(self.ntypes)} node types {self.ntypes}: use g.nodes[ntype].data")
            ntype = self.ntypes[0]
        self._book._ntype_id(ntype)
        return _DataView(self, "node", ntype, self._info["node_data"].get(ntype, []))

    def _edge_view(self, etype):
        if etype is None:
            if len(self.canonical_etypes) != 1:
                raise KeyError(f"the graph has {len(self.canonical_etypes)} edge types: use g.edges[etype].data")
            etype = self.canonical_etypes[0]
        canonical = ":".join(self.to_canonical_etype(etype))
        return _DataView(self, "edge", canonical, self._info["edge_data"].get(canonical, []))

    def _edge_weight_tensors(self, prob):
        """The tensors C++ samples in proportion to for `prob` (an edge feature, partition data or a DistTensor
        assigned to g.edges[etype].data), one name per edge type, "" for a type without it (sampled uniformly, as
        DGL does); [] for None."""
        self._check_edge_weight(prob)
        if prob is None:
            return []
        return [self._edge_view(c)[prob]._c.name if prob in self._edge_view(c) else ""
                for c in self.canonical_etypes]

    def _check_edge_weight(self, prob):
        """`prob` (sampling in proportion to an edge feature) names a feature of some edge type, or is None."""
        if prob is None:
            return
        if not isinstance(prob, str):
            raise TypeError(f"prob names an edge feature (g.edata[prob], one float per edge), not "
                            f"{type(prob).__name__}")
        if len(self.canonical_etypes) == 1:
            if prob not in self.edata:
                raise KeyError(f"prob={prob!r}: the graph has no edge feature of that name (it has "
                               f"{self.edata.keys()})")
            return
        if not any(prob in self._edge_view(c) for c in self.canonical_etypes):
            raise KeyError(f"prob={prob!r}: no edge type has an edge feature of that name")

    @property
    def ndata(self):
        return self._node_view(None)

    @property
    def edata(self):
        return self._edge_view(None)

    # --- graph services (graph_services.py) ---
    def in_degrees(self, v="__ALL__", etype=None):
        from .graph_services import in_degrees
        return in_degrees(self, v, etype)

    def out_degrees(self, u="__ALL__", etype=None):
        from .graph_services import out_degrees
        return out_degrees(self, u, etype)

    def find_edges(self, edges, etype=None):
        from .graph_services import find_edges
        return find_edges(self, edges, etype)

    def edge_subgraph(self, edges, relabel_nodes=True, store_ids=True):
        from .graph_services import edge_subgraph
        return edge_subgraph(self, edges, relabel_nodes, store_ids)

    def sample_neighbors(self, seed_nodes, fanout, edge_dir="in", prob=None, exclude_edges=None, replace=False,
                         etype_sorted=True, output_device=None):
        from .graph_services import sample_neighbors
        return sample_neighbors(self, seed_nodes, fanout, edge_dir, prob, exclude_edges, replace, etype_sorted,
                                output_device)

    # --- the job ---
    def rank(self):
        return self._info["rank"]

    def barrier(self):
        _C.barrier()

    @property
    def _client(self):
        """DGL's KVClient handle: DGL's own example scripts call g._client.barrier()."""
        return _Client()

    def get_partition_book(self):
        return self._book

    def get_node_partition_policy(self, ntype):
        return self._book.get_node_policy(ntype)

    def get_edge_partition_policy(self, etype):
        return self._book.get_edge_policy(etype)

    def __repr__(self):
        return (f"DistGraph(name={self.graph_name!r}, num_nodes={self.num_nodes()}, num_edges={self.num_edges()}, "
                f"ntypes={self.ntypes}, etypes={self.canonical_etypes})")
