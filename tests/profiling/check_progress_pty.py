#!/usr/bin/env python3
"""check_progress_pty.py MINIMODEL ARGS...: a run started without a launcher
(a singleton) whose stdout is a terminal draws the bar, whatever its
parent's stdout is (here a pipe, as under ctest): its output goes to its own
terminal, not through a launcher's. MPI_Init gives a singleton the
launcher's variables; minimodel reads them before it. Exit 0 or 1."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_pty  # noqa: E402

p, master = mm_pty.start(sys.argv[1:], env={"MINIMODEL_PROGRESS": None})
out = mm_pty.read_all(p, master)
if out is None:
    print("the run did not end within 120 s")
    sys.exit(1)
rc = p.wait(timeout=120)
text = out.decode(errors="replace")
if rc != 0:
    print(f"exit {rc}:\n{text}")
    sys.exit(1)
if "\r" not in text.replace("\r\n", "\n") or "100%" not in text:
    print(f"no bar on the run's own terminal (its parent's stdout a pipe):\n{text}")
    sys.exit(1)
print("ok: a bar on the terminal")
