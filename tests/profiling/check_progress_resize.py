#!/usr/bin/env python3
"""check_progress_resize.py MINIMODEL ARGS...: the bar on a terminal that is
narrowed while the run goes (a window resized) keeps to the new width: no
redraw after the resize is wider than the new width less one, blanks that
cover the longer earlier line included (they were not capped, so the first
redraws wrapped). The run is started with a 100-column terminal, narrowed
to 25 after its second redraw, and stopped with SIGINT after three redraws
at 25 (exit 130). Exit 0 or 1."""
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

NEW = 25


def set_size(fd, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))


master, slave = pty.openpty()
set_size(slave, 100)
attrs = termios.tcgetattr(slave)  # no CR before each LF: a '\r' is the bar's
attrs[1] &= ~termios.ONLCR
termios.tcsetattr(slave, termios.TCSANOW, attrs)
env = dict(os.environ, MINIMODEL_PROGRESS="bar")
env.pop("COLUMNS", None)
for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"):
    env.pop(v, None)
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
os.close(slave)
out, resized_at, stopped = b"", None, False
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    ready, _, _ = select.select([master], [], [], 0.2)
    if ready:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    if resized_at is None and out.count(b"\r[") >= 2:  # two redraws of the wide bar
        set_size(master, NEW)
        resized_at = len(out)
    elif resized_at is not None and not stopped and out[resized_at:].count(b"\r") >= 4:
        p.send_signal(signal.SIGINT)
        stopped = True
    if p.poll() is not None and not ready:
        break
else:
    p.kill()
    print(f"the run did not end within 120 s:\n{out.decode(errors='replace')}")
    sys.exit(1)
rc = p.wait(timeout=60)
text = out.decode(errors="replace")
if resized_at is None or not stopped:
    print(f"the run ended (exit {rc}) before it was resized and redrawn:\n{text}")
    sys.exit(1)
if rc != 130:
    print(f"exit {rc}, expected 130 (SIGINT):\n{text}")
    sys.exit(1)
# the redraws after the resize: the text between two carriage returns (the
# last one up to the newline that ends the bar)
after = out[resized_at:].decode(errors="replace")
draws = [d.split("\n")[0] for d in after.split("\r")[1:]]
wide = [d for d in draws if len(d) > NEW - 1]
if wide or len(draws) < 3:
    print(f"{len(draws)} redraws after the resize to {NEW} columns, {len(wide)} wider than "
          f"{NEW - 1}: {[(len(d), d) for d in wide[:3]]}")
    sys.exit(1)
print(f"ok: {len(draws)} redraws after the resize to {NEW} columns, none wider than {NEW - 1}")
