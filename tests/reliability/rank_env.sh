#!/usr/bin/env bash
# rank_env.sh RANK NAME=VALUE COMMAND...: run COMMAND with NAME=VALUE in its
# environment on MPI rank RANK only (Open MPI's OMPI_COMM_WORLD_RANK, or
# PMI_RANK), as a per-node prolog or a wrapper may leave it; the other ranks
# run COMMAND without NAME. Started by mpiexec: mpiexec -np 2 rank_env.sh ...
rank="$1" setting="$2"; shift 2
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" = "$rank" ]; then
  export "${setting?}"
else
  unset "${setting%%=*}"
fi
exec "$@"
