"""torch.distributed's backend "tessera" (registered by `import tessera`): a script's own process group and
DistributedDataParallel on the job's secured collectives, checked against Gloo in a real 2-machine job."""
import os

from conftest import launch

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")


def test_tessera_backend_matches_gloo_across_two_machines_two_trainers_each(small_graph, tmp_path):
    part = str(small_graph / "p2" / "small.json")
    r, _ = launch(str(tmp_path), part, f"python3 {SCRIPTS}/torch_backend.py {part}", trainers=2, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[m0/trainer/0] OK" in r.stdout, r.stdout + r.stderr


def test_the_backend_needs_the_job(tmp_path):
    """Before tessera.distributed.initialize() there is no job to form a group in: a clear error, not a hang."""
    import subprocess
    import sys
    code = ("import tessera, torch.distributed as d\n"
            "try:\n"
            "    d.init_process_group('tessera', store=d.HashStore(), rank=0, world_size=1)\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "initialize" in r.stdout, r.stdout + r.stderr
