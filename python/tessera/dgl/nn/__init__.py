"""dgl.nn's names (the PyTorch backend), from tessera.nn."""
from . import pytorch  # noqa: F401
from .pytorch import *  # noqa: F401,F403
