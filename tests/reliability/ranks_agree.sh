#!/usr/bin/env bash
# ranks_agree.sh MINIMODEL SOURCE_DIR WORK
# Ranks that would run different cases are refused with exit 2 and a message
# before anything is written, instead of waiting for each other for ever in
# different collectives:
#  1. ranks started with other arguments (mpirun's form `-np 1 minimodel
#     ARGS : -np 1 minimodel OTHER-ARGS`), also --help on one rank alone;
#     the program's name alone may differ (a link): that runs, with rank
#     0's command in the files (ranks of another version are refused too);
#  2. one command, but a configuration file that reads otherwise on rank 1
#     (here: each rank in a directory of its own, as after a file replaced
#     while the run started): the first line that differs is named;
#  3. the same file on each rank in a directory of its own, with a relative
#     output.dir or initial.restart: the ranks would open other files
#     together (they hung in MPI-IO's collective open).
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work/A" "$work/B"
cd "$work" || exit 1
mpi=(timeout -k 5 60 mpirun --oversubscribe)
flat="$src/configs/flat.ini"

# expect REGEX ARGS...: exit 2 (not a hang: timeout's 124), the message
expect() {
  local regex="$1"; shift
  "${mpi[@]}" "$@" >log 2>&1
  local rc=$?
  [ $rc = 2 ] || fail "exit $rc, expected 2: $*"
  grep -qE -- "$regex" log || fail "the output does not match /$regex/"
}

# 1. other arguments
expect "minimodel: error: rank 1: started with other arguments than rank 0 \('--quiet --set physics.kappa_h=5 --set output.dir=$work/out $flat' against '--quiet --set physics.kappa_h=50 --set output.dir=$work/out $flat'\): every rank must run the same command" \
  -np 1 "$mm" --quiet --set physics.kappa_h=50 --set output.dir="$work/out" "$flat" : \
  -np 1 "$mm" --quiet --set physics.kappa_h=5 --set output.dir="$work/out" "$flat"
[ ! -e out ] || fail "other arguments: something was written"
echo "ok: other arguments refused"
expect "rank 1: started with other arguments than rank 0 \('--help' against '--dry-run $flat'\)" \
  -np 1 "$mm" --dry-run "$flat" : -np 1 "$mm" --help
echo "ok: --help on one rank refused"

# the program's name may differ (a link): it runs, and the files' history
# attribute, which the ranks write together, is rank 0's command
ln -s "$mm" "$work/mm_link"
"${mpi[@]}" -np 1 "$mm" --quiet --set output.dir="$work/argv0" "$flat" : \
  -np 1 "$work/mm_link" --quiet --set output.dir="$work/argv0" "$flat" >log 2>&1 ||
  fail "the program's name differing on rank 1: exit $?"
ncdump -h "$work/argv0/flat.nc" | grep -q ":history = .*minimodel [^:]*: $mm --quiet" ||
  fail "the history attribute is not rank 0's command"
echo "ok: the program's name differing on rank 1 runs, rank 0's command in the history"

# 2. one command, a file that reads otherwise on rank 1
printf '[run]\nname = c\nsteps = 4\n[grid]\nnx = 12\nny = 10\nnz = 4\n[physics]\nkappa_h = 50\n[output]\ndir = %s/out\n' \
  "$work" >A/c.ini
sed 's/^kappa_h = 50$/kappa_h = 5/' A/c.ini >B/c.ini
expect "minimodel: error: rank 1: c.ini: read otherwise than on rank 0 \('kappa_h = 5' against 'kappa_h = 50' there\): was the file changed while the run started\?" \
  -np 1 -wdir "$work/A" "$mm" --quiet c.ini : -np 1 -wdir "$work/B" "$mm" --quiet c.ini
[ ! -e out ] || fail "a file read otherwise: something was written"
echo "ok: a file read otherwise on rank 1 refused"
# the same file on both: it runs
cp A/c.ini B/c.ini
"${mpi[@]}" -np 1 -wdir "$work/A" "$mm" --quiet c.ini : -np 1 -wdir "$work/B" "$mm" --quiet c.ini \
  >log 2>&1 || fail "the same file in two directories: exit $?"
[ -f out/c.nc ] || fail "the same file in two directories: no history"
echo "ok: the same file in two directories runs"

# 3. a relative output.dir, or a relative initial.restart, in ranks' own
# directories: other files on each rank
sed "s|^dir = .*|dir = out|" A/c.ini >B/c.ini
cp B/c.ini A/c.ini
mkdir -p A/out B/out
expect "minimodel: error: rank 1: c.ini:[0-9]+: output.dir = out is $work/B/out here and $work/A/out on rank 0: the ranks run in other working directories; give an absolute path" \
  -np 1 -wdir "$work/A" "$mm" --quiet c.ini : -np 1 -wdir "$work/B" "$mm" --quiet c.ini
[ -z "$(find A/out B/out -mindepth 1)" ] || fail "a relative output.dir: something was written"
"${mpi[@]}" -np 1 "$mm" --quiet --set output.dir="$work/r" --set output.restart_interval=4 \
  A/c.ini >log 2>&1 || fail "a restart file: exit $?"
cp r/c.restart.nc A/r.nc && cp r/c.restart.nc B/r.nc || fail "no restart file"
sed -i "s|^dir = .*|dir = $work/rel|" A/c.ini
printf '[initial]\nrestart = r.nc\n' >>A/c.ini
cp A/c.ini B/c.ini
expect "rank 1: c.ini:[0-9]+: initial.restart = r.nc is $work/B/r.nc here and $work/A/r.nc on rank 0" \
  -np 1 -wdir "$work/A" "$mm" --quiet c.ini : -np 1 -wdir "$work/B" "$mm" --quiet c.ini
[ ! -e rel ] || fail "a relative initial.restart: something was written"
echo "ok: a relative output.dir or initial.restart in ranks' own directories refused"
echo ok
