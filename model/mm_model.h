/* The model: state, set-up and the time step (docs/physics.md).
 *
 * One step: halo exchange (overlapped with the interior of the horizontal
 * step), explicit horizontal advection and diffusion, the convective
 * diffusivity, then the implicit vertical diffusion: one tridiagonal solve per
 * water column, temperature and salinity sharing one factorisation. */
#ifndef MM_MODEL_H
#define MM_MODEL_H

#include "mm_config.h"
#include "mm_diag.h"
#include "mm_grid.h"
#include "mm_halo.h"
#include "mm_tdma.h"
#include "mm_timer.h"

/* The model (its fields: mm_model_private.h, for model/ and the tests;
 * app/ and io/ use the functions below). */
typedef struct mm_model mm_model;

/* The case's configuration and grid (decomposition, levels, kmt). */
const mm_config *mm_model_config(const mm_model *m);
const mm_grid *mm_model_grid(const mm_model *m);
/* The host state, column-contiguous [ncol_h * nz] with halo, 0 on land (the
 * arrays change with each step: ask again after a step):
 * potential temperature (degC) and salinity (g/kg). On a device it is the
 * host copy, current after mm_model_fetch_state; after writing it, call
 * mm_model_state_changed. */
double *mm_model_temp(mm_model *m);
double *mm_model_salt(mm_model *m);
/* Steps done and the model time (s). */
long mm_model_steps_done(const mm_model *m);
double mm_model_time(const mm_model *m);
/* The state is that of step `step` (read from a restart): steps done and
 * model time set to it. */
void mm_model_set_step(mm_model *m, long step);

/* What runs the step, for reports: the backend ("cpu", "cuda", "emulated"),
 * the tridiagonal solver variant, and for the GPU step the device ("" on
 * the CPU) and how the halo crosses ("pinned host strips" or "CUDA-aware
 * MPI"; NULL on the CPU). app/ reads these, not the fields below. */
const char *mm_model_backend(const mm_model *m);
const char *mm_model_tdma(const mm_model *m);
const char *mm_model_device(const mm_model *m);
const char *mm_model_halo_path(const mm_model *m);
/* The GPU step's graph launches so far (0 on the CPU and without graphs). */
long mm_model_graph_launches(const mm_model *m);
/* 1 when the step runs on a device (the GPU step). */
int mm_model_on_device(const mm_model *m);
/* 1 when the solver builds the convective diffusivity and adds the surface
 * heating inside the solve (mm_tdma_fused_mixing; on the GPU step also
 * mm_tdma_fused_mixing_async): no kappa_w in memory. */
int mm_model_kappa_in_solve(const mm_model *m);
/* 1 when the GPU step has run this rank's block interior in tiles
 * (mm_gpu_kernels.h; MINIMODEL_CUDA_TILES), 0 otherwise and on the CPU;
 * *levels and *columns (where not NULL): the shape of those tiles, 0 where
 * none ran; *faces: 1 where each face of a tile was computed once
 * (MINIMODEL_CUDA_TILE_FACES=1); *min_blocks: the blocks per SM their
 * kernel was compiled for (MINIMODEL_CUDA_TILE_MIN_BLOCKS; also reported by
 * the emulated device, which ignores it), 0 where none ran. */
int mm_model_horizontal_tiles(const mm_model *m, int *levels, int *columns, int *faces,
                              int *min_blocks);

/* Build grid, decomposition, flow, solver and the analytic initial state
 * (collective). Refuses unstable time steps and unusable backends (MM_ERR_INPUT). */
MM_NODISCARD mm_err mm_model_create(const mm_config *cfg, MPI_Comm comm, mm_model **out);
void mm_model_destroy(mm_model *m);

/* Advance one time step; timers may be NULL. */
MM_NODISCARD mm_err mm_model_step(mm_model *m, mm_timers *timers);

/* Diagnostics of the host state temp, salt (collective). */
MM_NODISCARD mm_err mm_model_diagnostics(const mm_model *m, mm_diag *d);

/* Diagnostics of the current state wherever it lives (collective). With
 * full = false only the counts of non-finite values and of values outside
 * the physically possible range are sure to be set (d->nonfinite,
 * d->out_of_range); the rest is computed when either is not 0. */
MM_NODISCARD mm_err mm_model_check(mm_model *m, mm_diag *d, bool full);

/* On the GPU: temp, salt were changed on the host (read from a file):
 * send them to the device; bring the device state to temp, salt. No-ops on
 * the CPU. */
MM_NODISCARD mm_err mm_model_state_changed(mm_model *m);
MM_NODISCARD mm_err mm_model_fetch_state(mm_model *m);
/* Keep the current state as the last good one (good_t, good_s on the CPU,
 * a device copy on the GPU), and bring it to good_t, good_s. */
MM_NODISCARD mm_err mm_model_keep_good(mm_model *m, double *good_t, double *good_s);
MM_NODISCARD mm_err mm_model_fetch_good(mm_model *m, double *good_t, double *good_s);

#endif
