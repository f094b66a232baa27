"""GraphLearn-for-PyTorch's server-client calls, on Tessera's job model.

In GLT, server processes call init_server(...) and trainer processes init_client(...). In Tessera the
partition servers are C++ processes that `tessera launch` starts on the machines that hold partitions; machines
marked `client` in the ip_config hold none and run only trainers (server-client mode, docs/cluster.md). So a
trainer script calls init_client() (joining the job the launcher started, or standalone), trains, and calls
shutdown_client(); there is no Python server process to start.
"""
from ..distributed import context


def init_client(ip_config=None, **glt_arguments):
    """Joins the job as a trainer: tessera.distributed.initialize(ip_config). GLT's num_servers, num_clients,
    client_rank, master_addr and master_port come from the launcher here, and are accepted and ignored."""
    return context.initialize(ip_config)


def shutdown_client():
    """Leaves the job (tessera.distributed.exit_client)."""
    context.exit_client()


def init_server(*args, **kwargs):
    raise RuntimeError("tessera.pyg.init_server: Tessera's partition servers are C++ processes that `tessera "
                       "launch` starts on the machines holding partitions; list trainer-only hosts as `client` in "
                       "the ip_config (docs/cluster.md, server-client mode) and run only the trainer script, which "
                       "calls init_client()")
