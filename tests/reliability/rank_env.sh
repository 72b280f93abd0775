#!/usr/bin/env bash
# rank_env.sh RANK NAME=VALUE COMMAND...: run COMMAND with NAME=VALUE in its
# environment on MPI rank RANK only (Open MPI's OMPI_COMM_WORLD_RANK, PMIx's
# PMIX_RANK or PMI_RANK; none: exit 3), as a per-node prolog or a wrapper may leave it; the other ranks
# run COMMAND without NAME. Started by mpiexec: mpiexec -np 2 rank_env.sh ...
rank="$1" setting="$2"; shift 2
mine="${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-}}}"
if [ -z "$mine" ]; then # no rank known: the test would test nothing
  echo "rank_env.sh: no rank variable (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK) from the launcher" >&2
  exit 3
fi
if [ "$mine" = "$rank" ]; then
  export "${setting?}"
else
  unset "${setting%%=*}"
fi
exec "$@"
