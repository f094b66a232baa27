"""The process's place in the job: initialize() and its end.

Launched by `tessera launch`, initialize() joins the job at once (a server process serves its partition there
and exits when the job ends, as DGL's servers do). Without a launcher, in a plain `python3` session, the process
runs standalone: the C++ core starts when the first DistGraph names its 1-partition config.
"""
import atexit
import os
import sys
import threading
import warnings
import weakref

from .. import _C

_state = {"pending": False, "failed": False, "hooked": False}


def _launched():
    return _C.launched()


def initialize(ip_config=None, max_queue_size=None, net_type=None, num_worker_threads=1, use_graphbolt=False,
               part_config=None, num_threads=0, num_servers=None, num_workers=None):
    """Joins the job, as dgl.distributed.initialize.

    ip_config: the launcher's ip_config (checked against it) or None. max_queue_size, net_type and
    num_worker_threads are DGL's transport knobs; Tessera's transport needs none of them. use_graphbolt: Tessera
    samples with its own C++ sampler either way. part_config: the 1-partition config for standalone mode
    (DistGraph's part_config does the same). num_threads: intra-op threads (0: TESSERA_NUM_THREADS, else
    OMP_NUM_THREADS, else half the host's cores over the trainers on it, leaving the rest to sampler threads and
    servers). num_servers and num_workers: DGL 0.5-0.8's (its older examples call initialize(ip_config,
    num_servers, num_workers=...), so the second positional argument is ignored under either meaning); the
    launcher's --num-servers and --num-samplers decide both here.
    """
    if _C.is_initialized() or _state["pending"]:
        raise RuntimeError("tessera.distributed.initialize() was already called in this process")
    if net_type not in (None, "socket", "tensorpipe"):
        raise ValueError(f"net_type must be 'socket' or 'tensorpipe' (DGL's), not {net_type!r}")
    if use_graphbolt:
        warnings.warn("use_graphbolt: Tessera samples with its own C++ sampler; the flag changes nothing",
                      stacklevel=2)
    _install_exit_hooks()
    _state["num_threads"] = int(num_threads)
    if _launched() or part_config:
        _C.initialize(part_config or "", ip_config or "", not _launched(), int(num_threads))
    else:
        _state["pending"] = True  # standalone: the first DistGraph brings the config


def ensure_initialized(part_config=None):
    """The job's description (a dict from the C++ core), starting a pending standalone process on the way."""
    if not _C.is_initialized():
        if not _state["pending"]:
            raise RuntimeError("Tessera is not initialized: call tessera.distributed.initialize() first")
        if not part_config:
            raise ValueError("standalone mode needs the partition config: pass part_config= to DistGraph "
                             "(a 1-partition graph from `tessera partition --num-parts 1`)")
        _C.initialize(part_config, "", True, _state.get("num_threads", 0))
        _state["pending"] = False
    return _C.job_info()


def _stop_loaders():
    for loader in list(_LOADERS):
        loader.stop()


def exit_client():
    """Ends this trainer's part in the job (collective: every trainer calls it); atexit does it otherwise."""
    _stop_loaders()
    _C.finalize()


def _excepthook(kind, value, traceback):
    _state["failed"] = True
    _original_excepthook(kind, value, traceback)


_original_excepthook = sys.excepthook


# The C++ loaders alive in this process (_C.DataLoader). A loop that broke out early leaves its loader's sampler
# threads running until the loader is freed, which at exit comes after the Context is gone: they are stopped first.
_LOADERS = weakref.WeakSet()


def register_loader(c_loader):
    _LOADERS.add(c_loader)
    return c_loader


# Other machines' rows of the partition's node features (read-only, so a copy stays exact), one cache per tensor
# for all of this process's loaders and reads (a trainer's training and evaluation loaders, and a script's own
# reads, want the same rows): tensor name -> RemoteRowCache, or None where there is nothing to keep.
_FEATURE_CACHES = {}
_ROWS_READ = {}  # tensor name -> rows its DistTensor reads asked for before it had a cache
DEFAULT_CACHE_FRACTION = 0.25


def default_cache_fraction():
    """The share of other machines' rows cached where a script does not say: TESSERA_CACHE_REMOTE_FEATURES (0 turns
    the cache off for an unchanged DGL script), else DEFAULT_CACHE_FRACTION."""
    value = os.environ.get("TESSERA_CACHE_REMOTE_FEATURES", "")
    if not value:
        return DEFAULT_CACHE_FRACTION
    try:
        fraction = float(value)
    except ValueError:
        fraction = -1.0
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"TESSERA_CACHE_REMOTE_FEATURES={value!r}: expected a fraction in [0, 1] (0: no cache)")
    return fraction


def feature_cache(tensor, fraction=None, max_mb=1024):
    """The process's cache of other machines' rows of node tensor `tensor` (full name): `fraction` of their nodes,
    those of largest in-degree (as `tessera train sage --cache-remote-features`), built on first use; the
    fraction asked first holds for the process."""
    if tensor not in _FEATURE_CACHES:
        fraction = default_cache_fraction() if fraction is None else fraction
        _FEATURE_CACHES[tensor] = _C.RemoteRowCache.build(tensor, float(fraction), int(max_mb))
    return _FEATURE_CACHES[tensor]


def loader_feature_cache(g, ntype, feature, fraction):
    """The cache a loader fetching node data `feature` of `ntype` uses: the process's, for partition data (read-only)
    and a fraction above 0; None otherwise (a DistTensor assigned to g.ndata at run time may change)."""
    if not feature or fraction <= 0 or g.nodes[ntype].data[feature]._ntype_feature is None:
        return None
    return feature_cache(_C.node_tensor_name(ntype, feature), fraction)


def cache_for_reads(c_tensor, count):
    """The cache a read of `count` rows of partition node data `c_tensor` goes through: the process's, once it has
    one, or once its reads of the tensor have asked for as many rows as a cache would hold (from then on the
    cache saves what building it cost). None before, for data that is not floating point (labels: their reads
    follow the seeds, not the degrees), and off the main thread, where the cache cannot be built."""
    name = c_tensor.name
    if name in _FEATURE_CACHES:
        return _FEATURE_CACHES[name]
    if not c_tensor.dtype.startswith("float") or threading.current_thread() is not threading.main_thread():
        return None
    fraction = default_cache_fraction()
    _ROWS_READ[name] = _ROWS_READ.get(name, 0) + count
    if fraction == 0 or _ROWS_READ[name] < fraction * c_tensor.num_rows:
        return None
    return feature_cache(name, fraction)


def cache_fraction(value):
    """A loader's cache_remote_features argument, checked; None: default_cache_fraction()."""
    if value is None:
        return default_cache_fraction()
    fraction = float(value)
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"cache_remote_features must be a fraction in [0, 1], not {value}")
    return fraction


def _at_exit():
    _stop_loaders()
    # After an uncaught error, peers may be waiting or dead: leave without the
    # collective goodbye, and the launcher tears the job down.
    if _state["failed"]:
        _C.abandon()
    else:
        _C.finalize()


def _install_exit_hooks():
    if _state["hooked"]:
        return
    _state["hooked"] = True
    sys.excepthook = _excepthook
    atexit.register(_at_exit)
