/* The fields of the model (mm_model.h): for model/ and the tests only;
 * app/ and io/ go through the functions of mm_model.h. */
#ifndef MM_MODEL_PRIVATE_H
#define MM_MODEL_PRIVATE_H

#include "mm_model.h"

struct mm_model {
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
  /* [ncol_h] the sign of ue (vn) over the wet levels of each column's east
   * (north) face, MM_CELL_DIR_* of mm_cell.h (mm_flow_directions) */
  unsigned char *ue_dir, *vn_dir;
  /* Per-level factors of the vertical step [nz]. */
  double *g_dt;  /* dt / distance between centres k and k+1 (s/m) */
  double *inv_h; /* 1 / layer thickness (1/m) */
  double *work;  /* [nthreads mm_horizontal_ws(nz)] scratch of the horizontal step: face
                  * fluxes of a cell and a tile's row buffer, per thread */
  int nthreads;  /* OpenMP threads of every phase (OMP_NUM_THREADS) */

  mm_tdma *solver;
  /* 1: the solver builds kappa from T*, S* and adds the surface heating
   * inside the solve (mm_tdma_fused_mixing), so the horizontal step writes
   * neither and kappa_w is not used; 0: the horizontal step computes
   * kappa_w per column and adds the heating (solvers without the op). */
  int kappa_in_solve;
  /* 1: the horizontal step writes T* and S* with non-temporal stores
   * (kappa_in_solve, and the two fields of the node's ranks together
   * larger than the last-level cache, so that nothing would read them back
   * from it): no read of each line before it is written, 16 bytes a cell
   * fewer */
  int stream_next;
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
};

#endif
