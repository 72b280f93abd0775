/* The prescribed horizontal flow: volume transports per unit depth on the
 * faces of a C-grid, from a streamfunction at the cell corners
 * (docs/physics.md, "Prescribed flow"). Exactly divergence-free. */
#ifndef MM_FLOW_H
#define MM_FLOW_H

#include "mm_grid.h"

/* Quantised streamfunction psi_hat at the corner x = I dx, y = J dy (m2/s). */
double mm_flow_psi(const mm_config *cfg, int I, int J);

/* Fill ue (east-face transport) and vn (north-face transport), both
 * column-contiguous [ncol_h * nz], m2/s, for every local and halo column. */
MM_NODISCARD mm_err mm_flow_create(const mm_config *cfg, const mm_grid *g, double *ue, double *vn);

#endif
