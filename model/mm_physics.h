/* The physics of one time step, each a kernel over the local block
 * (docs/physics.md). */
#ifndef MM_PHYSICS_H
#define MM_PHYSICS_H

#include "mm_model_private.h"

/* The explicit part of the step for the cells ib <= i < ie, jb <= j < je of
 * the block, with m->nthreads OpenMP threads: horizontal advection +
 * diffusion of T and S into temp_next and salt_next, then per column the
 * convective diffusivity kappa_w from (temp_next, salt_next) and the
 * surface flux into the top cell, unless the solver does both inside the
 * solve (m->kappa_in_solve). */
void mm_horizontal_step(mm_model *m, int ib, int ie, int jb, int je);
/* m->ue_dir and m->vn_dir from m->ue and m->vn: per column the sign of the
 * east and north faces' transport over the face's wet levels (mm_face_dir),
 * so that the horizontal step picks the upwind cells of a whole column at
 * once where the sign is one. Again after ue or vn change. */
void mm_flow_directions(mm_model *m);
/* Doubles of workspace per thread of mm_horizontal_step (m->work). */
size_t mm_horizontal_ws(int nz);

/* The implicit vertical diffusion of temp_next and salt_next: one
 * tridiagonal solve per column. */
MM_NODISCARD mm_err mm_vertical_step(mm_model *m);

#endif
