/* The physics of one time step, each a kernel over the local block
 * (docs/physics.md). */
#ifndef MM_PHYSICS_H
#define MM_PHYSICS_H

#include "mm_model.h"

/* Explicit horizontal advection + diffusion of T and S into temp_next and
 * salt_next for the cells ib <= i < ie, jb <= j < je of the block. */
void mm_horizontal_step(mm_model *m, int ib, int ie, int jb, int je);

/* kappa_w from the static stability of (temp_next, salt_next). */
void mm_convective_kappa(mm_model *m);

/* Surface flux into the top cell, then the implicit vertical diffusion of
 * temp_next and salt_next: one tridiagonal solve per column. */
mm_err mm_vertical_step(mm_model *m);

#endif
