/* The GPU-resident time step (solver.backend = cuda or emulated).
 *
 * T, S, the work arrays, kappa_w, the flow and the masks live on the device
 * for the whole run. A step is (docs/architecture.md, "GPU time step"):
 *   mm_gpu_step_begin  the frame strips of T and S that neighbours need are
 *                      copied to the model's host arrays (pinned), and the
 *                      horizontal kernel of the block interior is queued;
 *                      returns when the strips are on the host
 *   (the caller)       exchanges the halo with MPI (mm_halo), on the host
 *                      arrays, or on the device arrays where MPI takes
 *                      device memory
 *   mm_gpu_step_end    the received halo strips go back to the device, then
 *                      the horizontal kernel of the frame and the fused
 *                      tridiagonal solve, which builds kappa_w and adds the
 *                      surface flux itself where the solver can (no kappa_w
 *                      in memory; else a mixing kernel before it does);
 *                      captured once per parity of the step into a graph;
 *                      returns when the step is done, with the device time
 *                      of each phase (events)
 * Only halo strips and output records cross to the host. The arithmetic is
 * that of the CPU step (mm_cell.h, mm_rsum.h, mm_tdma_column.h), so the
 * result is the CPU's to the bit where the device rounds like the host.
 *
 * This orchestration is written once (mm_gpu.c) against the table of device
 * operations of mm_device.h; the device (cuda, or the emulated device on the
 * host) is the setup's. Plain C interface (no MPI, no model types). Every
 * fallible call returns an mm_err with the message in the error record
 * (mm_error.h), the device's own message named "GPU step on <device>". */
#ifndef MM_GPU_H
#define MM_GPU_H

#include <stddef.h>

#include "mm_cell.h"
#include "mm_device.h"
#include "mm_error.h"
#include "mm_rsum.h"
#include "mm_tdma.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mm_gpu mm_gpu;

/* What the device needs of the model; host arrays, copied at creation
 * except host_temp and host_salt, which stay the model's. */
typedef struct {
  const mm_device_backend *device; /* the device and a context of it (the caller's) */
  void *ctx;
  int nz, nxl, nyl;
  long nxh, nyh;    /* columns per row / rows, halo included */
  size_t ncol_h;    /* nxh * nyh */
  int neighbour[4]; /* 1 where the block has a neighbour: west, east, south, north */
  /* the halo strips of mm_halo (mm_halo.h): direction d is height[d] rows
   * of width[d] elements, pitch elements apart, from send_off[d] (out) and
   * to recv_off[d] (in) */
  size_t send_off[4], recv_off[4], width[4], height[4], pitch;
  const int *kmt;             /* [ncol_h] wet levels, halo included */
  const int *kmt_solve;       /* [ncol_h] kmt in the block, 0 in the halo */
  const double *ue, *vn;      /* [ncol_h nz] face transports (m2/s) */
  const double *g_dt, *inv_h; /* [nz] per-level factors of the vertical step */
  const double *vol;          /* [nz] cell volumes (m3) */
  mm_cell_hstep hstep;        /* scheme, dt_area, kh_x, kh_y (its arrays are ignored) */
  mm_cell_mix mix;            /* alpha, beta, kappa_v, kappa_mix, convect, q_top (arrays ignored) */
  double *host_temp, *host_salt; /* [ncol_h nz] the model's T and S: halo staging and
                                  * output; registered as pinned memory */
  mm_tdma *solver;               /* on the device's memory (for_device = device->device_memory) */
  int use_graph;                 /* capture the steady part of the step in graphs */
  int kappa_in_solve;            /* kappa_w inside the solve where the solver can */
  int tiles;                     /* the interior's horizontal kernel in tiles */
  int tile_levels;               /* levels of its tiles; 0: nz split evenly (mm_gpu_tiles_of) */
  int tile_faces;                /* 1: each face of a tile computed once (mm_gpu_tiles) */
  int tile_min_blocks;           /* the CUDA tiles kernel's blocks per SM, 3 or 4; 0: the
                                  * default (mm_gpu_tiles's min_blocks) */
} mm_gpu_setup;

/* Device time of the phases of one step (s), from the device's events. */
typedef struct {
  double halo;       /* the halo strips' copies host -> device */
  double horizontal; /* interior and frame kernels */
  double mixing;
  double solve;
} mm_gpu_times;

MM_NODISCARD mm_err mm_gpu_create(const mm_gpu_setup *s, mm_gpu **out);
void mm_gpu_destroy(mm_gpu *g);

/* host_temp, host_salt -> device T, S (the whole arrays, halo included). */
MM_NODISCARD mm_err mm_gpu_upload(mm_gpu *g);
/* device T, S -> host_temp, host_salt. */
MM_NODISCARD mm_err mm_gpu_download(mm_gpu *g);
/* The device arrays of T and S (for an MPI that takes device memory). */
void mm_gpu_fields(mm_gpu *g, double **temp, double **salt);
/* The graphs launched so far (0 with use_graph off). */
long mm_gpu_graph_launches(const mm_gpu *g);
/* 1 when the solve builds kappa_w (no mixing kernel, no kappa_w in memory). */
int mm_gpu_kappa_in_solve(const mm_gpu *g);
/* 1 when the block interior's horizontal kernel has run in tiles. */
int mm_gpu_horizontal_tiles(const mm_gpu *g, int *levels, int *columns, int *faces,
                            int *min_blocks);

/* The two halves of a step (see above). stage = 1: the halo goes through
 * the host arrays; 0: the caller exchanges the device arrays directly. */
MM_NODISCARD mm_err mm_gpu_step_begin(mm_gpu *g, int stage);
MM_NODISCARD mm_err mm_gpu_step_end(mm_gpu *g, int stage, mm_gpu_times *t);

/* This rank's part of the diagnostics of the device state (mm_diag_part). */
MM_NODISCARD mm_err mm_gpu_diagnostics(mm_gpu *g, mm_diag_part *part);
/* Keep a device copy of the current T and S (the last good state), and
 * bring that copy to the host (after a blow-up). */
MM_NODISCARD mm_err mm_gpu_keep_good(mm_gpu *g);
MM_NODISCARD mm_err mm_gpu_fetch_good(mm_gpu *g, double *temp, double *salt);

#ifdef __cplusplus
}
#endif
#endif
