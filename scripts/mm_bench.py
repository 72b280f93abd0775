"""What scripts/bench-model and scripts/scaling share: the environment of the
runs, one run of the model with its timing file, the machine's description
and INI values. Only the standard library."""

import json
import os
import platform
import re
import signal
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stop_on_sigterm():
    """SIGTERM to the script (kill PID, a batch system) raises
    KeyboardInterrupt, as Ctrl-C does, so that run() ends its child first
    (it ended the script alone, and the model ran on under init)."""
    def interrupted(signo, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)


def run(cmd, **kw):
    """subprocess.run(cmd, capture_output=True, text=True, **kw), except that
    an interrupt while cmd runs (Ctrl-C, or SIGTERM after stop_on_sigterm)
    ends cmd first: SIGTERM, which mpirun passes on to its ranks so that they
    stop after a step with their files closed and their locks released (the
    SIGKILL of subprocess.run left the ranks running, then their lock files),
    up to 60 s for it to end, then SIGKILL; then the interrupt goes on."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        out, err = p.communicate()
    except KeyboardInterrupt:
        # a second Ctrl-C or SIGTERM must not cut the ending short
        old = [signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)]
        try:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            try:
                p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
        finally:
            for s, h in zip((signal.SIGINT, signal.SIGTERM), old):
                signal.signal(s, h)
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def mpi_env(threads=None):
    """scripts/env.sh: OpenMPI as root, oversubscription, no progress; OpenMP
    threads per rank: `threads`, else the environment's, else 1."""
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", MINIMODEL_PROGRESS="off")
    env.setdefault("OMP_NUM_THREADS", "1")
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def read_ini_text_value(text, section, key):
    """One value of INI text (a file's, or the configuration `minimodel
    --dry-run` prints), None when absent."""
    sec = None
    for line in text.splitlines():
        line = line.split(";")[0].split("#")[0].strip()
        m = re.match(r"\[(\w+)\]$", line)
        if m:
            sec = m.group(1)
        elif sec == section and "=" in line:
            k, v = (s.strip() for s in line.split("=", 1))
            if k == key:
                return v
    return None


def read_ini_value(path, section, key):
    """One value of an INI file (for run.name, run.steps), None when absent."""
    with open(path) as f:
        return read_ini_text_value(f.read(), section, key)


def machine_description(note):
    """"2-core AVX2/AVX-512 (CPU model); note, load average": from /proc/cpuinfo."""
    cpu, flags = platform.machine() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    isa = "/".join(name for flag, name in (("avx2", "AVX2"), ("avx512f", "AVX-512"))
                   if flag in flags) or "no AVX2"
    load = ""
    try:
        load = ", load average %.1f at the start" % os.getloadavg()[0]
    except OSError:
        pass
    return f"{os.cpu_count()}-core {isa} ({cpu}); {note}{load}"


def run_model(model, config, ranks, threads, name, out_dir, sets=(), bandwidth=None):
    """One run of `model` on `ranks` MPI ranks of `threads` OpenMP threads
    each, with --quiet, run.name = name, output.dir = out_dir, the model's own
    split of the grid, a per-step record of every step, the --set overrides
    `sets` and, when given, --bandwidth. Returns (timing dict, None), or
    (None, "exit N: output") when it fails. `model`, `config` and `out_dir`
    are made absolute against the caller's current folder (the run's own is
    the repository's root). A run stopped by SIGINT or SIGTERM (exit 130 or
    143) raises KeyboardInterrupt."""
    model, config, out_dir = (os.path.abspath(p) for p in (model, config, out_dir))
    args = ["--quiet", "--set", f"run.name={name}", "--set", f"output.dir={out_dir}",
            "--set", "output.timing_stride=1", "--set", "grid.ranks_x=0",
            "--set", "grid.ranks_y=0"]
    for s in sets:
        args += ["--set", s]
    if bandwidth:
        args += ["--bandwidth", str(bandwidth)]
    path = os.path.join(out_dir, f"{name}.timing.json")
    if os.path.exists(path):
        os.remove(path)
    # --bind-to none: OpenMPI binds each rank to one core by default, which
    # would put all of a rank's threads on it
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks), model, *args,
           config]
    r = run(cmd, env=mpi_env(threads), cwd=ROOT)
    if r.returncode in (130, 143, -2, -15):
        raise KeyboardInterrupt
    if r.returncode != 0:
        return None, f"exit {r.returncode}: {(r.stdout + r.stderr)[-2000:]}"
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        return None, f"exit 0: no readable timing file {path}: {e}"
    if not (isinstance(d, dict) and isinstance(d.get("per_step"), list) and d["per_step"]
            and all(isinstance(s, dict) and isinstance(s.get("step_s"), (int, float))
                    for s in d["per_step"])):
        return None, f"exit 0: {path}: no per_step record with a step_s"
    return d, None
