"""What compare.py, plot_fields.py and plot_timing.py share: writing their
report (the verdicts, the names of the files written) on standard output,
where that can fail after the work is done. Only the standard library.

    problem = mm_stdout.print_lines(lines)
    if problem:  # e.g. > /dev/full
        print(f"prog: cannot write ...: {problem}", file=sys.stderr)
        return 2
"""

import os
import sys


def _stdout_to_devnull():
    """Point file descriptor 1 at /dev/null, so that Python's flush of
    sys.stdout at exit does not fail (and print a traceback) again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        sys.stdout.flush()  # what the failed write left in the buffer
    except (OSError, ValueError, AttributeError):
        pass


def print_lines(lines):
    """Print lines on standard output and flush it. Returns None when they
    were written, or when the reader went away (a closed pipe: `| head`),
    which leaves the outcome of the work as it was; else why they could
    not be written (a full disk: `> /dev/full`; standard output closed)."""
    lines = list(lines)
    if not lines:
        return None
    if sys.stdout is None:  # started with standard output closed (>&-)
        return "standard output is closed"
    try:
        for line in lines:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        return None
    except OSError as e:
        _stdout_to_devnull()
        return e.strerror or str(e)
    return None
