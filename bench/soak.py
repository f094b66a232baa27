"""Samples the processes of running Tessera jobs for bench/soak.sh: every INTERVAL seconds each server's and
trainer's resident memory, open file descriptors and threads (from /proc), until SECONDS have passed; then prints
each process's figures at the end of the warm-up and at the end, and their growth.

Usage: python3 bench/soak.py SECONDS WARMUP_SECONDS INTERVAL CSV LAUNCHER_PID [LAUNCHER_PID...]
       python3 bench/soak.py --report CSV WARMUP_SECONDS    (the table again from a soak's samples)
The processes are the launchers' descendants that carry TESSERA_ROLE (a launcher labels each with its job's
machine and role); a job's label is its launcher's position (job 0, job 1, ...). Exits 1 when a launcher ends
before the soak does (a job that failed is not a soak)."""
import os
import sys
import time


def descendants(pid):
    """Every process below `pid`, from the parent of each process in /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        for child in [c for c, pp in parent.items() if pp == p]:
            found.append(child)
            todo.append(child)
    return found


SHELLS = {"sh", "bash", "dash"}  # the launcher's `sh -c` around each command: the same environment, no state


def role_of(pid):
    """m<machine>/<role>/<id> from the process's environment, or None for a process that is not a job member."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() in SHELLS:
                return None
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    except OSError:
        return None
    role = env.get(b"TESSERA_ROLE")
    if role is None:
        return None
    index = env.get(b"TESSERA_SERVER_ID" if role == b"server" else b"TESSERA_TRAINER_ID", b"?")
    return f"m{env.get(b'TESSERA_MACHINE_ID', b'?').decode()}/{role.decode()}/{index.decode()}"


def sample(pid):
    """(RSS in MB, open file descriptors, threads), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    return int(status["VmRSS"].split()[0]) / 1024.0, fds, int(status["Threads"])


def main():
    seconds, warmup, interval = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    csv_path, launchers = sys.argv[4], [int(p) for p in sys.argv[5:]]
    start = time.monotonic()
    series = {}  # (job, role, pid) -> [(t, rss, fds, threads)]
    with open(csv_path, "w") as csv:
        csv.write("seconds,job,process,pid,rss_mb,fds,threads\n")
        while True:
            t = time.monotonic() - start
            for job, launcher in enumerate(launchers):
                if not os.path.exists(f"/proc/{launcher}") or open(f"/proc/{launcher}/stat").read().split()[2] == "Z":
                    sys.exit(f"soak: job {job}'s launcher (pid {launcher}) ended after {t:.0f} s, before the soak's "
                             f"{seconds:.0f} s: see its log")
                for pid in descendants(launcher):
                    role = role_of(pid)
                    figures = sample(pid) if role else None
                    if figures is None:
                        continue
                    series.setdefault((job, role, pid), []).append((t,) + figures)
                    csv.write(f"{t:.0f},{job},{role},{pid},{figures[0]:.1f},{figures[1]},{figures[2]}\n")
            csv.flush()
            if t >= seconds:
                break
            time.sleep(max(0.0, interval - (time.monotonic() - start - t)))
    report(series, warmup)


def report(series, warmup):
    print(f"| job | process | RSS at {warmup / 60:.0f} min (MB) | RSS at end (MB) | RSS growth | fds at {warmup / 60:.0f} min"
          f" -> end (min-max after) | threads at {warmup / 60:.0f} min -> end (min-max after) | samples |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for (job, role, pid), rows in sorted(series.items()):
        after = [r for r in rows if r[0] >= warmup]
        if len(after) < 2:
            print(f"| {job} | {role} (pid {pid}) | — | — | — | — | — | {len(rows)} |")
            continue
        first, last = after[0], after[-1]
        growth = (last[1] - first[1]) / first[1]
        worst = max(worst, growth)
        fds = [r[2] for r in after]
        threads = [r[3] for r in after]
        print(f"| {job} | {role} | {first[1]:.0f} | {last[1]:.0f} | {100 * growth:+.1f}% | {first[2]} -> {last[2]}"
              f" ({min(fds)}-{max(fds)}) | {first[3]} -> {last[3]} ({min(threads)}-{max(threads)}) | {len(rows)} |")
    print(f"\nlargest RSS growth after the warm-up: {100 * worst:+.1f}%")


def report_from_csv(path, warmup):
    series = {}
    with open(path) as f:
        next(f)
        for line in f:
            t, job, role, pid, rss, fds, threads = line.strip().split(",")
            series.setdefault((int(job), role, int(pid)), []).append((float(t), float(rss), int(fds), int(threads)))
    report(series, warmup)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--report"]:
        report_from_csv(sys.argv[2], float(sys.argv[3]))
    else:
        main()
