"""What the brute-force scripts share: the graph as the partitioner's input says it is, in the partition's IDs,
and the check that bad input raises a clear error."""
import json
import os

import numpy as np
import torch


def partition_maps(part_config, key):
    """The concatenated per-partition ID map `key` ("orig_nids" / "orig_eids"): new homogeneous ID -> original."""
    with open(part_config) as f:
        config = json.load(f)
    base = os.path.dirname(part_config)
    return np.concatenate([np.load(os.path.join(base, config[f"part-{p}"][key])) for p in range(config["num_parts"])])


def input_graph(part_config, data_dir):
    """(meta, orig_nids, SRC, DST): a one-type Tessera-format input's edges in the partition's IDs, in the
    partition's edge order; orig_nids maps a new node ID to the input's."""
    orig_nids, orig_eids = partition_maps(part_config, "orig_nids"), partition_maps(part_config, "orig_eids")
    with open(os.path.join(data_dir, "meta.json")) as f:
        meta = json.load(f)
    edges = np.load(os.path.join(data_dir, meta["edge_types"][0]["edges"]))
    new_of_orig = np.empty_like(orig_nids)
    new_of_orig[orig_nids] = np.arange(len(orig_nids))
    return (meta, orig_nids, torch.from_numpy(new_of_orig[edges[0][orig_eids]]),
            torch.from_numpy(new_of_orig[edges[1][orig_eids]]))


def raises(kind, fn, *words):
    """fn() raises `kind` with every one of `words` in its message."""
    try:
        fn()
    except kind as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError(f"expected {kind.__name__}")
