"""Dropout: torch.nn.Dropout's module on Tessera's kernel for float32 CPU tensors.

torch's CPU dropout draws a 64-bit number per element (bernoulli_): on a sampled block's hidden layer (~5,500 x 16)
about 1 ms, as much as the rest of a GraphSAGE step. Tessera's draws one 64-bit number per four elements from a
counter-based generator seeded from torch's (torch.manual_seed repeats a run) and keeps no mask: ~60x cheaper.
The keep probability is rounded to a multiple of 2^-16. Other dtypes and devices take torch's own."""
import torch
from torch import nn
from torch.nn import functional as F

from .. import _C


def dropout(x, p=0.5, training=True):
    """torch.nn.functional.dropout's result distribution, on Tessera's kernel where it serves x."""
    if not training or p == 0:
        return x
    if x.dtype == torch.float32 and x.device.type == "cpu":
        return _C.dropout(x, float(p), True)
    return F.dropout(x, p, True)


class Dropout(nn.Dropout):
    """A drop-in for torch.nn.Dropout(p=0.5, inplace=False) (a subclass: isinstance and state_dicts hold);
    inplace is accepted and the result is a new tensor, as autograd needs of the layers that use it."""

    def forward(self, x):
        return dropout(x, self.p, self.training)
