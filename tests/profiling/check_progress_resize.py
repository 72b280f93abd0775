#!/usr/bin/env python3
"""check_progress_resize.py [--rc=N] MINIMODEL ARGS...: the bar on a terminal that is
narrowed while the run goes (a window resized) keeps to the new width: no
redraw after the resize is wider than the new width less one, blanks that
cover the longer earlier line included (they were not capped, so the first
redraws wrapped). The run is started with a 100-column terminal, narrowed
to 25 after its second redraw, and stopped with SIGINT after three redraws
at 25 (exit 130; --rc: another, as mpirun's 1 when it is stopped). Under
mpirun the width is the launcher's terminal's: the ranks' own terminals
keep the size they had at the start, and the bar kept the old width. Exit
0 or 1."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_pty  # noqa: E402

NEW = 25
args = sys.argv[1:]
want_rc = 130
if args and args[0].startswith("--rc="):
    want_rc = int(args.pop(0)[len("--rc="):])
p, master = mm_pty.start(args, env={"MINIMODEL_PROGRESS": "bar", "COLUMNS": None},
                         cols=100, onlcr=False)
state = {"resized_at": None, "stopped": False}


def resize_then_stop(out):
    """After two redraws of the wide bar, narrow the terminal; after four
    redraws at the new width, stop the run."""
    if state["resized_at"] is None and out.count(b"\r[") >= 2:
        mm_pty.set_size(master, NEW)
        state["resized_at"] = len(out)
    elif state["resized_at"] is not None and not state["stopped"] and \
            out[state["resized_at"]:].count(b"\r") >= 4:
        p.send_signal(signal.SIGINT)
        state["stopped"] = True


out = mm_pty.read_all(p, master, on_output=resize_then_stop)
if out is None:
    print("the run did not end within 120 s")
    sys.exit(1)
resized_at, stopped = state["resized_at"], state["stopped"]
rc = p.wait(timeout=60)
text = out.decode(errors="replace")
if resized_at is None or not stopped:
    print(f"the run ended (exit {rc}) before it was resized and redrawn:\n{text}")
    sys.exit(1)
if rc != want_rc:
    print(f"exit {rc}, expected {want_rc} (SIGINT):\n{text}")
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
# the stop's line on a line of its own after the bar's last redraw: under
# mpirun, stdout (the bar) and stderr (the line) reach the terminal through
# two channels, and the line came glued to a bar, with redraws after it
at = out.find(b"minimodel: stopped")
if at < 0 or not out[:at].endswith(b"\n") or b"\r[" in out[at:] or b"%  step" in out[at:]:
    print(f"the stop's line is not on a line of its own after the last bar:\n{text}")
    sys.exit(1)
print(f"ok: {len(draws)} redraws after the resize to {NEW} columns, none wider than {NEW - 1}")
