"""What compare.py and plot_fields.py share: a test read, in a child
process, of the variables that the netCDF library may crash on. An HDF5
dataset of a type netCDF does not know (float16, written by h5py) is
presented as a variable of strings, and reading it kills the process with
SIGSEGV; xarray reads such variables when it opens the file.

    problem = mm_nc_guard.read_problem(path)
    if problem:
        print(f"prog: {path}: cannot be read: {problem}", file=sys.stderr)
        return 2
"""

import os
import select
import signal
import sys
import time


def _read_strings(path):
    """Open path and read each variable of strings (in the child)."""
    import netCDF4
    with netCDF4.Dataset(path, "r") as ds:
        groups = [ds]
        while groups:
            group = groups.pop()
            groups.extend(group.groups.values())
            for name, var in group.variables.items():
                if var.dtype is str:
                    sys.stderr.write(f"{name}\n")  # the variable being read, for the parent
                    sys.stderr.flush()
                    var[...]


def read_problem(path, limit_s=120.0):
    """None when the variables of strings of path read in a child process
    (or path cannot be opened there: the caller's own open says why); else
    a sentence naming the variable and what ended the child: a signal (the
    library crashed; SIGKILL: the child was killed, out of memory, say), or
    the limit, limit_s seconds (the child is then killed). The child is
    killed and reaped however the caller leaves (Ctrl-C)."""
    for stream in (sys.stdout, sys.stderr):  # None where started closed (>&-)
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a full disk, a closed pipe: the caller's to tell
            pass
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no Python exit handlers, no flush of the parent's buffers
        code = 0
        try:
            os.close(r)
            os.dup2(w, 2)
            _read_strings(path)
        except BaseException:  # noqa: BLE001 -- an exception is the caller's own open's to tell
            code = 1
        os._exit(code)
    os.close(w)
    names, status, timed_out = b"", None, False
    try:
        deadline = time.monotonic() + limit_s
        while status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], min(left, 0.1))
            if ready:
                names += os.read(r, 65536)  # b"" once the child has gone
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
    finally:
        if status is None:  # the limit, or the caller interrupted: the child goes too
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        os.close(r)
    lines = names.decode(errors="replace").splitlines()
    what = f"variable {lines[-1]}" if lines else "the file"
    if timed_out:
        return f"the test read of {what} did not end within {limit_s:g} s"
    if not os.WIFSIGNALED(status):
        return None
    sig = os.WTERMSIG(status)
    if sig == signal.SIGKILL:
        return f"the test read of {what} was killed (SIGKILL: out of memory?)"
    return (f"the netCDF library crashed (signal {sig}, {signal.Signals(sig).name}) reading "
            f"{what}: a type it does not read (an HDF5 float16 dataset, say)")
