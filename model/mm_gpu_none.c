/* mm_gpu.h without CUDA: no device, every call says so. */
#include <stdio.h>

#include "mm_gpu.h"

static int none(char *msg, size_t len) {
  snprintf(msg, len, "minimodel was built without CUDA (MINIMODEL_CUDA=OFF or no nvcc)");
  return 1;
}

int mm_gpu_available(void) {
  return 0;
}
int mm_gpu_select_device(int local_rank, char *msg, size_t len) {
  (void)local_rank;
  return none(msg, len);
}
void mm_gpu_device_name(char *out, size_t len) {
  snprintf(out, len, "none");
}
int mm_gpu_mpi_is_cuda_aware(void) {
  return 0;
}
int mm_gpu_create(const mm_gpu_setup *s, mm_gpu **out, char *msg, size_t len) {
  (void)s;
  *out = NULL;
  return none(msg, len);
}
void mm_gpu_destroy(mm_gpu *g) {
  (void)g;
}
int mm_gpu_upload(mm_gpu *g, char *msg, size_t len) {
  (void)g;
  return none(msg, len);
}
int mm_gpu_download(mm_gpu *g, char *msg, size_t len) {
  (void)g;
  return none(msg, len);
}
void mm_gpu_fields(mm_gpu *g, double **temp, double **salt) {
  (void)g;
  *temp = *salt = NULL;
}
int mm_gpu_step_begin(mm_gpu *g, int stage, char *msg, size_t len) {
  (void)g, (void)stage;
  return none(msg, len);
}
int mm_gpu_step_end(mm_gpu *g, int stage, mm_gpu_times *t, char *msg, size_t len) {
  (void)g, (void)stage, (void)t;
  return none(msg, len);
}
int mm_gpu_diagnostics(mm_gpu *g, mm_diag_part *part, char *msg, size_t len) {
  (void)g, (void)part;
  return none(msg, len);
}
int mm_gpu_keep_good(mm_gpu *g, char *msg, size_t len) {
  (void)g;
  return none(msg, len);
}
int mm_gpu_fetch_good(mm_gpu *g, double *temp, double *salt, char *msg, size_t len) {
  (void)g, (void)temp, (void)salt;
  return none(msg, len);
}
