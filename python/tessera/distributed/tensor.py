"""DistTensor and DistEmbedding: dgl.distributed's sharded tensors over Tessera's C++ store.

Rows are pulled and pushed by the C++ core with the GIL released; values come back as torch tensors that own
the received buffer (no copy on the way to Python).
"""
import itertools

import numpy as np
import torch

from .. import _C
from . import context
from .partition_book import PartitionPolicy, policy_sizes

_DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.int32: "int32",
           torch.uint8: "uint8", torch.bool: "bool"}
_TORCH_DTYPES = {v: k for k, v in _DTYPES.items()}
_anonymous = itertools.count()


def _torch_dtype_name(dtype):
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = torch.from_numpy(np.zeros(0, dtype=dtype)).dtype
    if dtype not in _DTYPES:
        raise TypeError(f"Tessera stores {', '.join(str(d) for d in _DTYPES)}, not {dtype}")
    return _DTYPES[dtype]


def to_ids(ids, what):
    """IDs as a 1-d int64 tensor, from a torch tensor, a numpy array, a list or an int."""
    if isinstance(ids, torch.Tensor):
        t = ids
    elif isinstance(ids, np.ndarray):
        t = torch.from_numpy(ids)
    elif isinstance(ids, (int, np.integer)):
        t = torch.tensor([int(ids)])
    elif isinstance(ids, slice):
        raise TypeError(f"{what}: index with IDs (a tensor, array or list), not a slice")
    else:
        try:
            t = torch.as_tensor(ids)
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError(f"{what}: IDs must be a tensor, numpy array or list of integers ({e})") from None
        if t.numel() == 0:
            t = t.to(torch.int64)
    if t.dtype == torch.bool:
        raise TypeError(f"{what}: IDs must be integers, not a boolean mask (use mask.nonzero())")
    if t.dim() == 0:
        t = t.reshape(1)
    return t


def _policy_string(part_policy, shape, info):
    if part_policy is None:
        return _policy_by_size(shape[0], info)
    if isinstance(part_policy, PartitionPolicy):
        return part_policy.policy_str
    if isinstance(part_policy, str):
        return PartitionPolicy(part_policy).policy_str
    raise TypeError(f"part_policy must be a PartitionPolicy or 'node:<ntype>' / 'edge:<etype>', not {part_policy!r}")


def _policy_by_size(rows, info):
    """DGL's rule: the one node (else edge) type with `rows` elements shards the tensor."""
    sizes = policy_sizes(info)
    for kind in ("node:", "edge:"):
        matches = [policy for policy, size in sizes if policy.startswith(kind) and size == rows]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise ValueError(f"a tensor of {rows} rows could be sharded by {matches}: pass part_policy=")
    counts = ", ".join(f"{p} has {n}" for p, n in sizes if p.startswith("node:"))
    raise ValueError(f"cannot tell how to shard a tensor of {rows} rows: no node or edge type has that many "
                     f"({counts}); pass part_policy=")


def _init_rows(c_tensor, init_func, shape, dtype):
    """Fills this trainer's share of a newly created tensor with init_func(shape, dtype), as DGL's init_func."""
    info = _C.job_info()
    rank, world = info["rank"], info["world_size"]
    rows = shape[0]
    begin, end = _C.even_range(rows, rank, world)
    if end > begin:
        values = init_func((end - begin,) + tuple(shape[1:]), dtype)
        if not isinstance(values, torch.Tensor):
            raise TypeError(f"init_func must return a torch tensor, not {type(values).__name__}")
        c_tensor.push(torch.arange(begin, end, dtype=torch.int64), values.to(dtype).contiguous())
    _C.barrier()


class DistTensor:
    """A tensor sharded by node or edge type across the job: `t[ids]` pulls rows, `t[ids] = values` pushes them.

    DistTensor(shape, dtype, name=None, init_func=None, part_policy=None, persistent=False) is collective:
    every trainer creates it with the same arguments. A tensor of that name that exists already is attached.
    """

    def __init__(self, shape, dtype, name=None, init_func=None, part_policy=None, persistent=False,
                 is_gdata=True, attach=True):
        info = context.ensure_initialized()
        shape = tuple(int(s) for s in shape)
        if len(shape) < 1 or any(s < 0 for s in shape):
            raise ValueError(f"a DistTensor's shape needs a row count and non-negative sizes, not {shape}")
        dtype_name = _torch_dtype_name(dtype)
        if name is None:
            name = f"anonymous-{next(_anonymous)}"
        policy = _policy_string(part_policy, shape, info)
        existed = _C.tensor_exists(name)
        _C.barrier()  # every trainer looks before anyone creates it
        self._c = _C.DistTensor(name, dtype_name, list(shape[1:]), policy, persistent=persistent)
        if tuple(self._c.shape) != shape:
            raise ValueError(f"DistTensor {name!r}: the policy {policy} has {self._c.shape[0]} rows, "
                             f"but the shape asks for {shape[0]}")
        self._name = name
        self._ntype_feature = None
        if init_func is not None and not existed:
            _init_rows(self._c, init_func, shape, _TORCH_DTYPES[dtype_name])

    @classmethod
    def _wrap(cls, c_tensor, name, ntype_feature=None):
        self = cls.__new__(cls)
        self._c = c_tensor
        self._name = name
        self._ntype_feature = ntype_feature  # (ntype, feature) of partition node data, which loaders may prefetch
        return self

    @property
    def shape(self):
        return tuple(self._c.shape)

    @property
    def dtype(self):
        return _TORCH_DTYPES[self._c.dtype]

    @property
    def name(self):
        return self._name

    @property
    def part_policy(self):
        return PartitionPolicy(self._c.policy)

    def __len__(self):
        return self._c.shape[0]

    # Pickled by name, as DGL pickles a DistTensor: the rows stay on the servers, and the process that unpickles
    # it (in the same job) opens the same tensor. torch.save(dist_tensor, ...) therefore writes a handle.
    def __getstate__(self):
        return {"c_name": self._c.name, "name": self._name, "ntype_feature": self._ntype_feature}

    def __setstate__(self, state):
        self._c = _C.DistTensor.open(state["c_name"])
        self._name = state["name"]
        self._ntype_feature = state["ntype_feature"]

    def __getitem__(self, idx):
        ids = to_ids(idx, f"DistTensor {self._name!r}")
        prefetched = getattr(ids, "_tessera_rows", None)
        if prefetched is not None and self._c.name in prefetched:
            return prefetched.pop(self._c.name)
        learn = getattr(ids, "_tessera_learn", None)
        if learn is not None and self._ntype_feature is not None:
            learn(self._ntype_feature)
        if self._ntype_feature is not None:  # partition data: read-only, so a cached row is the row
            cache = context.cache_for_reads(self._c, len(ids))
            if cache is not None:
                return cache.pull(self._c, ids)
        return self._c.pull(ids)

    def __setitem__(self, idx, values):
        ids = to_ids(idx, f"DistTensor {self._name!r}")
        if not isinstance(values, torch.Tensor):
            values = torch.as_tensor(values)
        self._c.push(ids, values)

    def __repr__(self):
        return f"DistTensor(name={self._name!r}, shape={self.shape}, dtype={self.dtype}, policy={self._c.policy!r})"


class DistEmbedding:
    """A learnable embedding table sharded like a DistTensor, updated by tessera.distributed.optim's sparse
    optimizers on the servers that own the rows (DGL's DistEmbedding).

    emb(ids) returns the rows as a tensor that requires grad while autograd records; the optimizer's step()
    sends the gradients of every lookup since the last step.
    """

    def __init__(self, num_embeddings, embedding_dim, name=None, init_func=None, part_policy=None):
        info = context.ensure_initialized()
        if int(embedding_dim) < 1:
            raise ValueError(f"embedding_dim must be at least 1, not {embedding_dim}")
        if name is None:
            name = f"anonymous-emb-{next(_anonymous)}"
        shape = (int(num_embeddings), int(embedding_dim))
        policy = _policy_string(part_policy, shape, info)
        existed = _C.tensor_exists(name)
        _C.barrier()
        self._c = _C.DistEmbedding(name, shape[1], policy)
        if self._c.num_embeddings != shape[0]:
            raise ValueError(f"DistEmbedding {name!r}: the policy {policy} has {self._c.num_embeddings} rows, "
                             f"not {shape[0]}")
        if init_func is not None and not existed:
            _init_rows(self._c.weight, init_func, shape, torch.float32)
        self._name = name
        self._trace = []  # (ids, rows) of lookups since the last optimizer step
        self._optimizer = None

    @property
    def name(self):
        return self._name

    @property
    def num_embeddings(self):
        return self._c.num_embeddings

    @property
    def embedding_dim(self):
        return self._c.dim

    @property
    def weight(self):
        return DistTensor._wrap(self._c.weight, self._name)

    @property
    def optimizer(self):
        return self._optimizer

    def __call__(self, idx, device=torch.device("cpu")):
        ids = to_ids(idx, f"DistEmbedding {self._name!r}")
        rows = self._c.weight.pull(ids)
        if torch.is_grad_enabled():
            rows.requires_grad_(True)
            self._trace.append((ids, rows))
        return rows.to(device)

    def reset_trace(self):
        self._trace = []

    def save(self, path):
        """The whole table as .npy (row i = original node ID i); one trainer calls it."""
        self._c.save(str(path))

    def load(self, path):
        """Reads a table saved by save(); one trainer calls it, then every trainer barriers."""
        self._c.load(str(path))

    def __repr__(self):
        return f"DistEmbedding(name={self._name!r}, num_embeddings={self.num_embeddings}, dim={self.embedding_dim})"
