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
import signal
import sys


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


def read_problem(path):
    """None when the variables of strings of path read in a child process
    (or path cannot be opened there: the caller's own open says why); else
    a sentence naming the variable and the signal that ended the child."""
    sys.stdout.flush()
    sys.stderr.flush()
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
    with os.fdopen(r, "r", errors="replace") as f:
        names = f.read().splitlines()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if not os.WIFSIGNALED(status):
        return None
    sig = os.WTERMSIG(status)
    what = f"variable {names[-1]}" if names else "the file"
    return (f"the netCDF library crashed (signal {sig}, {signal.Signals(sig).name}) reading "
            f"{what}: a type it does not read (an HDF5 float16 dataset, say)")
