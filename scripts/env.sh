# Sourced by the scripts: let OpenMPI run as root and start more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
