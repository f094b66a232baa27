"""One weight per relation: TypedLinear (a linear map chosen per row by its type, with DGL's basis and
block-diagonal regularizers) and WeightBasis (weights as combinations of shared bases), dgl.nn.pytorch's."""
import math

import torch
from torch import nn


class WeightBasis(nn.Module):
    """WeightBasis(shape, num_bases, num_outputs): forward() returns num_outputs weights of `shape`, each a
    learned combination of num_bases shared bases (the R-GCN paper's basis decomposition)."""

    def __init__(self, shape, num_bases, num_outputs):
        super().__init__()
        self.shape = tuple(shape)
        self.num_bases = int(num_bases)
        self.num_outputs = int(num_outputs)
        if self.num_bases < 1:
            raise ValueError(f"WeightBasis: num_bases must be at least 1, not {num_bases}")
        gain = nn.init.calculate_gain("relu")
        self.weight = nn.Parameter(torch.empty(self.num_bases, *self.shape))
        nn.init.xavier_uniform_(self.weight, gain=gain)
        self.w_comp = nn.Parameter(torch.empty(self.num_outputs, self.num_bases))
        nn.init.xavier_uniform_(self.w_comp, gain=gain)

    def forward(self):
        weight = torch.matmul(self.w_comp, self.weight.view(self.num_bases, -1))
        return weight.view(self.num_outputs, *self.shape)


class TypedLinear(nn.Module):
    """TypedLinear(in_size, out_size, num_types, regularizer=None, num_bases=None): forward(x, x_type) maps row i
    by the weight of type x_type[i]. regularizer: None (a full weight per type), 'basis' (num_bases shared
    bases) or 'bdd' (block-diagonal weights of num_bases blocks)."""

    def __init__(self, in_size, out_size, num_types, regularizer=None, num_bases=None):
        super().__init__()
        self.in_size, self.out_size, self.num_types = int(in_size), int(out_size), int(num_types)
        self.regularizer = regularizer
        self.num_bases = num_bases
        if regularizer is None:
            self.W = nn.Parameter(torch.empty(self.num_types, self.in_size, self.out_size))
        elif regularizer == "basis":
            if num_bases is None or int(num_bases) < 1:
                raise ValueError("TypedLinear: regularizer 'basis' needs num_bases >= 1")
            self.W = nn.Parameter(torch.empty(int(num_bases), self.in_size, self.out_size))
            self.coeff = nn.Parameter(torch.empty(self.num_types, int(num_bases)))
        elif regularizer == "bdd":
            if num_bases is None or int(num_bases) < 1 or in_size % num_bases or out_size % num_bases:
                raise ValueError(f"TypedLinear: regularizer 'bdd' needs num_bases >= 1 dividing in_size {in_size} "
                                 f"and out_size {out_size}, not {num_bases}")
            self.W = nn.Parameter(torch.empty(self.num_types, int(num_bases), self.in_size // num_bases,
                                              self.out_size // num_bases))
        else:
            raise ValueError(f"TypedLinear: regularizer is None, 'basis' or 'bdd', not {regularizer!r}")
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            bound = 1.0 / math.sqrt(self.in_size)
            nn.init.uniform_(self.W, -bound, bound)
            if self.regularizer == "basis":
                nn.init.xavier_uniform_(self.coeff, gain=nn.init.calculate_gain("relu"))

    def weights(self):
        """The [num_types, in_size, out_size] weights the regularizer describes."""
        if self.regularizer == "basis":
            return torch.matmul(self.coeff, self.W.view(self.W.shape[0], -1)).view(self.num_types, self.in_size,
                                                                                   self.out_size)
        if self.regularizer == "bdd":
            return torch.stack([torch.block_diag(*self.W[t]) for t in range(self.num_types)])
        return self.W

    def forward(self, x, x_type, sorted_by_type=False):
        """Row i times the weight of type x_type[i]; sorted_by_type is DGL's hint, not needed here."""
        x_type = torch.as_tensor(x_type, dtype=torch.int64)
        if x_type.shape[0] != x.shape[0]:
            raise ValueError(f"TypedLinear: {x_type.shape[0]} types for {x.shape[0]} rows")
        if x_type.numel() and (int(x_type.min()) < 0 or int(x_type.max()) >= self.num_types):
            raise ValueError(f"TypedLinear: types must lie in 0..{self.num_types - 1}")
        weights = self.weights()
        # One GEMM per type over that type's rows, then the rows back in their order.
        order = torch.sort(x_type, stable=True).indices
        counts = torch.bincount(x_type, minlength=self.num_types).tolist()
        parts, begin = [], 0
        for t, n in enumerate(counts):
            if n:
                parts.append(torch.matmul(x[order[begin:begin + n]], weights[t]))
            begin += n
        if not parts:
            return x.new_zeros(0, self.out_size)
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(len(order))
        return torch.cat(parts)[inverse]
