"""Run by test_launch.py: trainer 0 stops machine 1's server, then pulls its rows; the pull must raise
ConnectionError carrying Tessera's message (and not hang)."""
import os
import signal
import sys
import time

import torch

import tessera.distributed as tdist

if os.environ.get("TESSERA_ROLE") == "server" and os.environ.get("TESSERA_MACHINE_ID") == "1":
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
tdist.initialize("ip_config.txt")
g = tdist.DistGraph("small", part_config=sys.argv[1])
if g.rank() == 0:
    remote = g.get_partition_book().partid2nids(1)[:10]
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.05)
    with open(sys.argv[2]) as f:
        os.kill(int(f.read()), signal.SIGKILL)
    start = time.time()
    try:
        for _ in range(1000):
            g.ndata["feat"][remote]
            time.sleep(0.01)
        print("NO ERROR", flush=True)
    except ConnectionError as e:
        print(f"CONNECTION_ERROR after {time.time() - start:.1f}s: {e}", flush=True)
    os._exit(3)
else:
    time.sleep(60)
