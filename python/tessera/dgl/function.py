"""dgl.function's names, from tessera.function."""
from ..function import *  # noqa: F401,F403
from ..function import (BuiltinFunction, MessageFunction, ReduceFunction, copy_e, copy_edge, copy_src,  # noqa: F401
                        copy_u, max, mean, min, sum)
