"""What check_progress_pty.py and check_progress_resize.py share: a run of
minimodel as a singleton on a pseudo-terminal of its own, and the reading of
what it draws there."""
import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time

# the variables by which a launcher marks the ranks it starts (app/progress.c,
# job_vars): without them minimodel is a singleton, whatever ran ctest
LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_MCA_ess_base_jobid",
                 "PMIX_NAMESPACE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE")


def set_size(fd, cols, rows=24):
    """The window size of the terminal of fd (the run gets SIGWINCH)."""
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def start(argv, env=None, cols=None, onlcr=True):
    """(process, master fd): argv run with its stdin on /dev/null and its
    stdout and stderr on a new terminal (cols columns when given; without
    ONLCR a '\\r' is only what the run writes), in os.environ with env's
    changes (a value None: unset) and without the launcher's variables."""
    master, slave = pty.openpty()
    if cols:
        set_size(slave, cols)
    if not onlcr:
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
    run_env = dict(os.environ)
    for name, value in dict({v: None for v in LAUNCHER_VARS}, **(env or {})).items():
        if value is None:
            run_env.pop(name, None)
        else:
            run_env[name] = value
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                         env=run_env)
    os.close(slave)
    return p, master


def read_all(p, master, seconds=120, on_output=None):
    """What the run writes on its terminal until it ends, as bytes, or None
    when it has not ended within seconds (it is killed then). on_output(out)
    is called with all that has come so far, after each read and at least
    every 0.2 s."""
    out = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the run closed the terminal
                return out
            if not chunk:
                return out
            out += chunk
        if on_output:
            on_output(out)
        if p.poll() is not None and not ready:
            return out
    p.kill()
    return None
