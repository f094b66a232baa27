"""Sparse optimizers for DistEmbedding (dgl.distributed.optim): the servers that own the rows apply them."""
from .. import _C
from .tensor import DistEmbedding


class SparseOptimizer:
    def __init__(self, params, make):
        params = list(params)
        for p in params:
            if not isinstance(p, DistEmbedding):
                raise TypeError(f"sparse optimizers update DistEmbedding tables, not {type(p).__name__}")
        self._params = params
        self._c = make([p._c for p in params])
        for p in params:
            p._optimizer = self

    @property
    def lr(self):
        return self._lr

    @lr.setter
    def lr(self, value):
        self._lr = float(value)
        self._c.set_lr(self._lr)

    def step(self):
        """Sends the gradient of every lookup since the last step to the owning servers and waits for them."""
        for emb in self._params:
            for ids, rows in emb._trace:
                if rows.grad is not None:
                    self._c.step(emb._c, ids, rows.grad)
            emb.reset_trace()
        self._c.flush()

    def zero_grad(self):
        """Nothing to clear: step() drops the lookups it applied. (DGL's training loops call zero_grad() after
        the forward pass, so it must not drop the lookups of the step to come.)"""


class SparseAdagrad(SparseOptimizer):
    """Adagrad per element on the rows a step touched (torch.optim.Adagrad's rule)."""

    def __init__(self, params, lr, eps=1e-10):
        self._lr = float(lr)
        super().__init__(params, lambda embs: _C.SparseAdagrad(embs, self._lr, float(eps)))


class SparseAdam(SparseOptimizer):
    """Adam on the rows a step touched, bias-corrected by each row's own step count (DGL's SparseAdam)."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-08):
        self._lr = float(lr)
        b1, b2 = betas
        super().__init__(params, lambda embs: _C.SparseAdam(embs, self._lr, float(b1), float(b2), float(eps)))
