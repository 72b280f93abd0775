#!/usr/bin/env python3
"""rank_status.py DIR COMMAND...: run COMMAND as one MPI rank and record, in
DIR, its pid (pid.RANK) and how it ended (status.RANK: the exit status, or
"signal N"), and in events.RANK the signals the wrapper saw and the end, with
times. The wrapper itself outlives the signals that mpirun sends its ranks
(SIGCONT, SIGTERM, SIGINT, SIGHUP), so that what it records is the
command's own ending."""
import os
import signal
import subprocess
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
events = open(os.path.join(out, f"events.{rank}"), "a", buffering=1)


def note(n, frame):
    events.write(f"{time.time():.3f} rank {rank}: signal {n}\n")


for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCONT):
    signal.signal(s, note)
child = subprocess.Popen(cmd)
with open(os.path.join(out, f"pid.{rank}"), "w") as f:
    f.write(f"{child.pid}\n")
rc = child.wait()
# the command has ended: later signals are not its; a handler that wrote
# while the line below is written failed ("reentrant call"), and the status
# was never recorded
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCONT):
    signal.signal(s, signal.SIG_IGN)
status = f"signal {-rc}" if rc < 0 else f"{rc}"
events.write(f"{time.time():.3f} rank {rank}: ended, {status}\n")
with open(os.path.join(out, f"status.{rank}"), "w") as f:
    f.write(status + "\n")
sys.exit(rc if rc >= 0 else 128 - rc)
