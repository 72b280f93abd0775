/* The device table (mm_device.h). */
#include "mm_device.h"

#include <string.h>

/* Each device file defines one of these; add a line here and its source in
 * CMakeLists.txt to add a device. Order: priority, highest first. */
#ifdef MINIMODEL_HAVE_CUDA
extern const mm_device_backend mm_device_cuda;
#endif
extern const mm_device_backend mm_device_emulated;

static const mm_device_backend *const mm_device_table[] = {
#ifdef MINIMODEL_HAVE_CUDA
    &mm_device_cuda,
#endif
    &mm_device_emulated,
    NULL,
};

const mm_device_backend *const *mm_device_backends(void) {
  return mm_device_table;
}

const mm_device_backend *mm_device_find(const char *name) {
  for (const mm_device_backend *const *d = mm_device_table; *d; d++)
    if (!strcmp((*d)->name, name)) return *d;
  return NULL;
}
