"""What plot_fields.py, plot_timing.py and plot_tdma_bench.py share: the
file a figure goes to, checked before the work is done and written whole
or not at all; the inputs they read, regular files of a bounded size; and
user text shown literally (not as matplotlib mathtext). scripts/bench-model,
scripts/bench_peers.py and scripts/scaling write their documents and
results through the same functions (write_text, check_target) and read the
documents they edit with read_text. Only the standard library is imported
here (matplotlib where a figure is saved).

    try:
        out = mm_figure.output_name(args.output)           # -o NAME -> NAME.png
        mm_figure.check_target(out, inputs=args.files)     # before the work
        ...
        mm_figure.save(fig, out, inputs=args.files, dpi=110)
    except mm_figure.FigureError as e:
        print(f"prog: {e}", file=sys.stderr)
        return 2

The figure is written to a temporary file in the target's folder (a name
starting with ".") and renamed onto the target only once it is complete,
so a full disk, an interrupt or a crash leaves the target as it was (an
existing one untouched, none made) and removes only the temporary file;
SIGTERM or SIGHUP during the write too, and the process then ends with
128 + the signal's number (it ended at once, the temporary file left).
An existing target is refused (never opened, never removed) when it is
not a regular file (a folder, a device such as /dev/null, a FIFO), when
the user cannot write it (also a file without any write permission when
run as root: `chmod 444` protects it), or when it is one of the inputs.
A target that is a symbolic link to a regular file is written through the
link (the file it names is replaced). The replaced file keeps its
permissions (and its owner where the user is root); a new one gets 0666
less the umask, as open() would give it. The target's folder must be
writable (the temporary file is made there).
"""

import contextlib
import io
import os
import signal
import stat
import sys
import tempfile
import threading

INPUT_LIMIT = 256 << 20  # bytes of one input read at most


class FigureError(Exception):
    """One line: why the figure (or another file written here: a document,
    results) cannot be written where asked (exit 2)."""


class InputRefused(Exception):
    """One line: why an input is not read (not a regular file, too large)."""


def literal(text):
    """text (from the user or from a file) as matplotlib shows it literally:
    each $ escaped, so that it starts no mathtext (`$\\notasymbol$` made
    matplotlib raise ParseFatalException when it drew the figure)."""
    return str(text).replace("$", r"\$")


def formats():
    """The extensions matplotlib writes (png, pdf, svg, ...), lower case."""
    from matplotlib.backend_bases import FigureCanvasBase
    return {f.lower() for f in FigureCanvasBase.get_supported_filetypes()}


def output_name(out, option="-o"):
    """The file `option out` names: out itself when its extension is a
    format matplotlib writes, out + ".png" when it has none (as matplotlib's
    savefig does, and the name printed says so). FigureError for an empty
    name, a folder (an existing one, or a name ending in /), a name without
    an extension that is a device or FIFO (/dev/null), and an extension
    matplotlib does not write."""
    if not out:
        raise FigureError(f"{option} '': an empty name")
    if out.endswith(("/", os.sep)) or os.path.isdir(out):
        raise FigureError(f"{option} {out}: is a folder, not a file ({option} names the file "
                          "to write)")
    ext = os.path.splitext(out)[1]
    if not ext:
        if os.path.exists(out) and not os.path.isfile(out):  # -o /dev/null: not /dev/null.png
            raise FigureError(f"{option} {out}: exists and is not a regular file (a name "
                              "without an extension gets .png: name the file to write)")
        return out + ".png"
    known = formats()
    if ext[1:].lower() not in known:
        raise FigureError(f"{option} {out}: matplotlib cannot write {ext} files (it writes "
                          f"{', '.join('.' + f for f in sorted(known))})")
    return out


def _same(st, paths):
    """The first of paths that is the file of stat result st, or None."""
    for p in paths:
        try:
            other = os.stat(p)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return p
    return None


def check_target(path, inputs=()):
    """The file to write for path (path itself; where path is a symbolic
    link, the file it names), or FigureError: a folder, a link to nothing,
    an existing file that is not regular, not writable by the user, or one
    of inputs; a folder that does not exist."""
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            raise FigureError(f"{path}: cannot be written: no such folder {folder}") from None
        return path
    except OSError as e:
        raise FigureError(f"{path}: cannot be written: {e.strerror or e}") from None
    try:
        st = os.stat(path)
    except OSError:
        if stat.S_ISLNK(lst.st_mode):
            raise FigureError(f"{path}: is a symbolic link to nothing: not written through "
                              "(remove it first)") from None
        raise
    real = os.path.realpath(path) if stat.S_ISLNK(lst.st_mode) else path
    if stat.S_ISDIR(st.st_mode):
        raise FigureError(f"{path}: is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise FigureError(f"{path}: exists and is not a regular file (a device, FIFO or "
                          "socket): not overwritten")
    same = _same(st, inputs)
    if same is not None:
        raise FigureError(f"{path}: is the input {same}: not overwritten (name another "
                          "output)")
    if not os.access(real, os.W_OK) or not st.st_mode & 0o222:
        raise FigureError(f"{path}: exists and is write-protected: not overwritten (make it "
                          "writable, or remove it, to replace it)")
    return real


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save(fig, path, inputs=(), **savefig_kw):
    """Write fig to path (its format from the extension, as output_name
    gives it) through a temporary file in its folder, renamed onto it when
    complete (write_atomic)."""
    fmt = os.path.splitext(path)[1][1:].lower() or "png"

    def fill(f):
        try:
            fig.savefig(f, format=fmt, **savefig_kw)
        except (RuntimeError, ValueError) as e:
            # a format whose tool is missing (pgf: LaTeX, "'xelatex' not
            # found"), or values the format cannot draw
            raise FigureError(f"{path}: cannot be written: matplotlib: {e}") from None

    write_atomic(path, fill, inputs)


def write_text(path, text, inputs=()):
    """Write text (UTF-8) to path whole or not at all (write_atomic)."""
    data = text.encode("utf-8")
    write_atomic(path, lambda f: f.write(data), inputs)


class _Stopped(BaseException):
    """A stop signal (SIGTERM, SIGHUP) while a temporary file is there."""


# signals whose default action ends the process at once: left so, one
# during a write left the hidden temporary file behind (Ctrl-C's
# KeyboardInterrupt removed it)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _stop_signals_cleaned_up():
    """While the block runs, SIGTERM and SIGHUP at their default action
    raise _Stopped, so that the block's finally removes its temporary file;
    then the process ends with 128 + the signal's number and one line, as
    the default action would have ended it. A handler the script set itself
    (scripts/scaling: SIGTERM as Ctrl-C) is left to work as it does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stopped(signo, frame):
        for s in old:  # a second one must not cut the removal short
            signal.signal(s, signal.SIG_IGN)
        raise _Stopped(signo)

    old = {}
    for signo in STOP_SIGNALS:
        if signal.getsignal(signo) == signal.SIG_DFL:
            old[signo] = signal.signal(signo, stopped)
    try:
        yield
    except _Stopped as e:
        signo = e.args[0]
        for s, handler in old.items():
            signal.signal(s, handler)
        old = {}
        prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
        print(f"{prog}: stopped by {signal.Signals(signo).name}", file=sys.stderr)
        raise SystemExit(128 + signo) from None
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def write_atomic(path, fill, inputs=()):
    """Write path through a temporary file in its folder, filled by
    fill(f) (f: the temporary file, open for binary writing) and renamed
    onto path when complete; FigureError (the temporary file removed, the
    target as it was) when path is refused (check_target) or the writing
    fails. Other exceptions (an interrupt) also remove the temporary file,
    and so do SIGTERM and SIGHUP, which then end the process with 128 + N
    (_stop_signals_cleaned_up)."""
    real = check_target(path, inputs)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    with _stop_signals_cleaned_up():
        _write_through_temporary(path, real, st, fill)


def _write_through_temporary(path, real, st, fill):
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real) or ".",
                                   prefix=f".{os.path.basename(real)}.", suffix=".tmp")
    except OSError as e:
        raise FigureError(f"{path}: cannot be written: {e.strerror or e}") from None
    done = False
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        if st is None:
            os.chmod(tmp, 0o666 & ~_umask())
        else:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except OSError:
                    pass
        os.replace(tmp, real)
        done = True
    except OSError as e:  # a full disk, a file-size limit: only the temporary file goes
        raise FigureError(f"{path}: cannot be written: {e.strerror or e}") from None
    finally:
        if not done:
            try:
                os.remove(tmp)
            except OSError:
                pass


def read_input(path, limit=INPUT_LIMIT):
    """The bytes of path. InputRefused when it is not a regular file (a
    FIFO, which would wait for a writer for ever; /dev/zero, which never
    ends; a folder) or holds more than limit bytes; OSError when it cannot
    be opened or read (no such file, permission denied)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else \
            "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else \
            "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file"
        raise InputRefused(f"not a regular file ({kind}): not read")
    # O_NONBLOCK: a FIFO put in its place since the stat does not block the open
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with io.FileIO(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputRefused("not a regular file: not read")
        if os.fstat(fd).st_size > limit:
            raise InputRefused(f"larger than {limit >> 20} MiB: not read")
        chunks, size = [], 0
        while size <= limit:  # the file may grow while it is read
            chunk = f.read(min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputRefused(f"larger than {limit >> 20} MiB: not read")
    return b"".join(chunks)


TEXT_LIMIT = 16 << 20  # bytes of a document read at most (docs/performance.md: 0.1 MiB)


def read_text(path, limit=TEXT_LIMIT):
    """The text of path, a document to edit: InputRefused as read_input
    (not a regular file, more than limit bytes), and also when it is not
    UTF-8 text (a binary file: bytes that are not UTF-8, or a NUL byte);
    OSError when it cannot be opened or read."""
    data = read_input(path, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputRefused(f"not UTF-8 text (byte {e.start}): not read") from None
    if "\0" in text:
        raise InputRefused(f"not text (a NUL byte at {text.index(chr(0))}): not read")
    return text
