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

typedef struct mm_model {
  mm_config cfg;
  mm_grid grid;
  mm_halo halo;

  /* State, column-contiguous [ncol_h * nz], halo included, 0 on land. */
  double *temp;      /* potential temperature (degC) */
  double *salt;      /* salinity (g/kg) */
  double *temp_next; /* work: T* after the horizontal step (degC) */
  double *salt_next; /* work: S* (g/kg) */
  /* Prescribed flow and mixing, column-contiguous [ncol_h * nz]. */
  double *ue;      /* transport per unit depth through the east face (m2/s) */
  double *vn;      /* transport per unit depth through the north face (m2/s) */
  double *kappa_w; /* vertical diffusivity on the interface below level k (m2/s) */
  /* Per-level factors of the vertical step [nz]. */
  double *g_dt;  /* dt / distance between centres k and k+1 (s/m) */
  double *inv_h; /* 1 / layer thickness (1/m) */
  double *work;  /* [nthreads mm_horizontal_ws(nz)] scratch of the horizontal step: face
                  * fluxes of a cell and a tile's row buffer, per thread */
  int nthreads;  /* OpenMP threads of every phase (OMP_NUM_THREADS) */

  mm_tdma *solver;
  /* solver.backend = cuda or emulated: the GPU-resident step (mm_gpu.h) on
   * that device (mm_device.h). The state then lives on the device; temp and
   * salt above are its host copy, current only after mm_model_fetch_state. */
  const struct mm_device_backend *dev; /* NULL on the CPU */
  void *dev_ctx;                       /* a context of dev */
  struct mm_gpu *gpu;
  int gpu_stage;    /* 1: halo strips through the host; 0: MPI on device memory */
  char device[160]; /* the device in use, or "" */
  long step;        /* steps done */
  double time;      /* model time (s) */

  /* constants of the step */
  double dt_area;    /* dt / (dx dy) (s/m2) */
  double kh_x, kh_y; /* kappa_h dy/dx, kappa_h dx/dy (m2/s) */
  double q_top;      /* dt Q / (rho0 cp h_0): surface heating of the top cell per step (degC) */
  double kappa_mix;  /* kappa_v + kappa_convect (m2/s) */
  double dt_stable;  /* largest stable run.dt of the explicit step (s; +inf: any) */
} mm_model;

/* What runs the step, for reports: the backend ("cpu", "cuda", "emulated"),
 * the tridiagonal solver variant, and for the GPU step the device ("" on
 * the CPU) and how the halo crosses ("pinned host strips" or "CUDA-aware
 * MPI"; NULL on the CPU). app/ reads these, not the fields below. */
const char *mm_model_backend(const mm_model *m);
const char *mm_model_tdma(const mm_model *m);
const char *mm_model_device(const mm_model *m);
const char *mm_model_halo_path(const mm_model *m);
/* 1 when the step runs on a device (the GPU step). */
int mm_model_on_device(const mm_model *m);

/* Build grid, decomposition, flow, solver and the analytic initial state
 * (collective). Refuses unstable time steps and unusable backends (MM_ERR_INPUT). */
mm_err mm_model_create(const mm_config *cfg, MPI_Comm comm, mm_model **out);
void mm_model_destroy(mm_model *m);


/* Advance one time step; timers may be NULL. */
mm_err mm_model_step(mm_model *m, mm_timers *timers);

/* Diagnostics of the host state temp, salt (collective). */
mm_err mm_model_diagnostics(const mm_model *m, mm_diag *d);

/* Diagnostics of the current state wherever it lives (collective). With
 * full = false only the counts of non-finite values and of values outside
 * the physically possible range are sure to be set (d->nonfinite,
 * d->out_of_range); the rest is computed when either is not 0. */
mm_err mm_model_check(mm_model *m, mm_diag *d, bool full);

/* On the GPU: temp, salt were changed on the host (read from a file):
 * send them to the device; bring the device state to temp, salt. No-ops on
 * the CPU. */
mm_err mm_model_state_changed(mm_model *m);
mm_err mm_model_fetch_state(mm_model *m);
/* Keep the current state as the last good one (good_t, good_s on the CPU,
 * a device copy on the GPU), and bring it to good_t, good_s. */
mm_err mm_model_keep_good(mm_model *m, double *good_t, double *good_s);
mm_err mm_model_fetch_good(mm_model *m, double *good_t, double *good_s);

#endif
