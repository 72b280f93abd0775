#!/usr/bin/env bash
# memory_cgroup.sh MINIMODEL TDMA_BENCH SOURCE_DIR WORK
# A memory cgroup's limit (a batch job's, a container's) below what the
# node has free: the check before allocation compared with MemAvailable
# alone, passed, and the kernel killed the run with SIGKILL, exit 137, no
# word (shown below: the limit is real). In a cgroup of this process's,
# limited to 300 MiB:
#   - a grid that needs more per rank is refused with exit 2 naming the
#     cgroup, on 1 rank (--dry-run) and on 2 (a run: nothing written; the
#     limit shared by the node's ranks);
#   - a grid that fits runs, exit 0, and one of 207 MB is not refused
#     (--dry-run) beside 260 MB of file cache charged to the cgroup, which
#     the kernel takes back;
#   - tdma-bench refuses arrays that do not fit, exit 2;
#   - past the check (MINIMODEL_MEMORY_LIMIT), the run is killed (137).
# Needs root and a memory cgroup that can be made (cgroup v1, or v2 with the
# memory controller delegated); skipped (77) otherwise.
set -u
mm="$1"; bench="$2"; src="$3"; work="$4"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
[ "$(id -u)" = 0 ] || skip "not root"
v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
if [ -n "$v1" ] && [ -d /sys/fs/cgroup/memory ]; then
  parent=/sys/fs/cgroup/memory${v1%/}; limit_file=memory.limit_in_bytes
else
  v2=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  parent=/sys/fs/cgroup${v2%/}; limit_file=memory.max
fi
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no cgroup file system"
cg="$parent/minimodel_test_$$"
mkdir "$cg" 2>/dev/null || skip "cannot make a cgroup in $parent"
trap 'rmdir "$cg" 2>/dev/null' EXIT
echo $((300 * 1024 * 1024)) >"$cg/$limit_file" 2>/dev/null || skip "cannot limit $cg"
# a command in the cgroup
inside() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }
inside true || skip "cannot move a process into $cg"
big=(--set grid.nx=400 --set grid.ny=400 --set grid.nz=50)
mpi=(mpirun --oversubscribe -np 2)

inside timeout -k 5 60 "$mm" --dry-run "${big[@]}" "$src/configs/flat.ini" >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] || fail "1 rank: exit $rc, want 2"
grep -qF "are available (the memory limit of the cgroup $cg, less what it uses: a job's or a container's limit, beyond which the kernel kills the run); use more ranks or a smaller grid" \
  "$work/log" || fail "1 rank: message"
echo "ok: 1 rank: refused, naming the cgroup"

inside timeout -k 5 60 "${mpi[@]}" "$mm" --quiet --set output.dir="$work/np2" "${big[@]}" \
  "$src/configs/flat.ini" >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] || fail "2 ranks: exit $rc, want 2"
grep -qF "(the memory limit of the cgroup $cg, less what it uses, shared by the node's ranks:" \
  "$work/log" || fail "2 ranks: message"
[ ! -e "$work/np2" ] || fail "2 ranks: the refused run wrote output"
echo "ok: 2 ranks: refused, nothing written"

inside timeout -k 5 60 "${mpi[@]}" "$mm" --quiet --set output.dir="$work/fits" --set run.steps=3 \
  "$src/configs/default.ini" >"$work/log" 2>&1 || fail "a grid that fits: exit $?"
echo "ok: a grid that fits runs"
# the cgroup's use mostly file cache (a job that has just read a large
# input, read twice: active): the kernel takes it back, and a grid that
# fits is not refused (it was, when only the inactive cache counted)
inside sh -c 'dd if=/dev/zero of="$1" bs=1M count=260 status=none && sync "$1" &&
  cat "$1" "$1" >/dev/null' sh "$work/cache" || fail "filling the cache"
inside timeout -k 5 60 "$mm" --dry-run --set grid.nx=200 --set grid.ny=200 --set grid.nz=50 \
  "$src/configs/flat.ini" >"$work/log" 2>&1 ||
  fail "a grid that fits (207 MB), beside 260 MB of file cache: exit $?"
rm -f "$work/cache"
echo "ok: a grid that fits (207 MB) is not refused beside 260 MB of file cache in the cgroup"

inside timeout -k 5 60 "$bench" --systems 1000000 --levels 100 --stream-mb 1 --repeats 1 \
  --backend simd >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "need about 4.01 GB of memory" "$work/log" || fail "tdma-bench: exit $rc"
echo "ok: tdma-bench refuses what does not fit"

# the limit is real: past the check, the kernel kills the run
MINIMODEL_MEMORY_LIMIT=1e12 inside timeout -k 5 120 "$mm" --quiet --set output.dir="$work/past" \
  --set run.steps=2 "${big[@]}" "$src/configs/flat.ini" >"$work/log" 2>&1
rc=$?
[ $rc = 137 ] || fail "past the check: exit $rc, want 137 (killed by the cgroup's limit)"
echo "ok: past the check, the run is killed (exit 137): the limit is real"
