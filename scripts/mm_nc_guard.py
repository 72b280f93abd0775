"""What compare.py, plot_fields.py and reference.py share: the names the
netCDF library would not open as given (path_problem); a test read, in
a child process, of the variables that the netCDF library may crash on,
and (classic_cut_short) the check of a classic file cut short. An HDF5
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


NOT_A_URL = ("a path with '://' is a URL to the netCDF library, which reads no URL here: give a "
             "local path without '://' (copy or rename the file)")
NOT_A_BACKSLASH = ("the netCDF library reads '\\' in a path as '/' (a Windows separator) and "
                   "would open another file than the one named: give a path without '\\' "
                   "(rename the file or folder)")
NOT_A_DRIVE = ("the netCDF library reads a path that starts with a letter and ':' as a Windows "
               "drive ('c:/x' as '/c/x') and would open another file than the one named: write "
               "it as './c:/x'")


def path_problem(path, folder):
    """Why the netCDF library would not open the file path names, or None
    (as mm_path_problem, model/mm_config.c): a URL, a backslash, a leading
    drive letter, which it takes for a URL or rewrites to another file's
    name before it opens it (4.9: "a\\b.nc" opened "a/b.nc", "c:/x.nc"
    "/c/x.nc"); folder: a folder to which "/" and a name are added (the
    model's output.dir), so that "c:" alone is a drive too"""
    if "://" in path:
        return NOT_A_URL
    if "\\" in path:
        return NOT_A_BACKSLASH
    if (len(path) >= 2 and path[0].isascii() and path[0].isalpha() and path[1] == ":"
            and (path[2:3] == "/" or (folder and len(path) == 2))):
        return NOT_A_DRIVE
    return None


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


def classic_cut_short(path):
    """None, or a sentence when path is a classic-format NetCDF file (CDF-1,
    CDF-2, CDF-5) that ends before its header says its data does: the netCDF
    library reads the data such a file lacks as zeros or fill values, without
    an error. The end of every variable's data, from the header (as the
    model's mm_io_check_classic, io/nc_util.c): a fixed variable's at begin
    plus its bytes, a record variable's at begin + (numrecs - 1) recsize +
    one record's bytes, recsize the record variables' record bytes, each
    padded to 4 unless there is one record variable. A header that cannot be
    parsed is left to the library (None)."""
    import struct
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(4)
            if len(head) < 4 or head[:3] != b"CDF" or head[3] not in (1, 2, 5):
                return None
            w = 8 if head[3] == 5 else 4
            off_w = 4 if head[3] == 1 else 8

            def get(n):
                b = f.read(n)
                if len(b) != n:
                    raise EOFError
                return int.from_bytes(b, "big")

            def name():
                n = get(w)
                if n > size:
                    raise EOFError
                text = f.read((n + 3) // 4 * 4)[:n]
                return text.decode("utf-8", "replace")

            sizes = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8}

            def attributes():
                get(4)  # the list's tag (NC_ATTRIBUTE, or 0 where absent)
                n = get(w)
                if n > size:
                    raise EOFError
                for _ in range(n):
                    name()
                    t = get(4)
                    count = get(w)
                    if t not in sizes or count * sizes[t] > size:  # more than the file holds
                        raise EOFError
                    f.seek((count * sizes[t] + 3) // 4 * 4, 1)

            numrecs = get(w)
            streaming = numrecs == (1 << (8 * w)) - 1
            get(4)  # NC_DIMENSION
            ndims = get(w)
            if ndims > size:
                return None
            dims = []
            for _ in range(ndims):
                name()
                dims.append(get(w))
            attributes()
            get(4)  # NC_VARIABLE
            nvars = get(w)
            if nvars > size:
                return None
            variables = []  # (name, begin, bytes: all or one record's, is a record variable)
            for _ in range(nvars):
                vname = name()
                nd = get(w)
                if nd > size:
                    return None
                ids = [get(w) for _ in range(nd)]
                attributes()
                t = get(4)
                get(w)  # vsize
                begin = get(off_w)
                if t not in sizes or any(i >= len(dims) for i in ids):
                    return None
                record = bool(ids) and dims[ids[0]] == 0
                n = 1
                for i in ids[1 if record else 0:]:
                    n *= dims[i]
                variables.append((vname, begin, n * sizes[t], record))
    except (OSError, EOFError, struct.error, ValueError, OverflowError):
        return None  # a damaged header: the library's open says why
    records = [v for v in variables if v[3]]
    recsize = sum(b if len(records) == 1 else (b + 3) // 4 * 4 for _, _, b, _ in records)
    end, last = 0, ""
    for vname, begin, nbytes, record in variables:
        if not record:
            e = begin + nbytes
        elif numrecs > 0 and not streaming:
            e = begin + (numrecs - 1) * recsize + nbytes
        else:
            e = begin
        if e > end:
            end, last = e, vname
    if end <= size:
        return None
    return (f"cut short: its header puts the data of variable '{last}' up to byte {end}, and "
            f"the file ends at byte {size} (a copy or a download that did not finish?)")


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
