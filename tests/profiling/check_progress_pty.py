#!/usr/bin/env python3
"""check_progress_pty.py MINIMODEL ARGS...: a run started without a launcher
(a singleton) whose stdout is a terminal draws the bar, whatever its
parent's stdout is (here a pipe, as under ctest): its output goes to its own
terminal, not through a launcher's. MPI_Init gives a singleton the
launcher's variables; minimodel reads them before it. Exit 0 or 1."""
import os
import pty
import subprocess
import sys

master, slave = pty.openpty()
env = dict(os.environ)
env.pop("MINIMODEL_PROGRESS", None)
for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"):
    env.pop(v, None)
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the child closed the terminal
        break
    if not chunk:
        break
    out += chunk
rc = p.wait(timeout=120)
text = out.decode(errors="replace")
if rc != 0:
    print(f"exit {rc}:\n{text}")
    sys.exit(1)
if "\r" not in text.replace("\r\n", "\n") or "100%" not in text:
    print(f"no bar on the run's own terminal (its parent's stdout a pipe):\n{text}")
    sys.exit(1)
print("ok: a bar on the terminal")
