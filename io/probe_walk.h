/* The test read of an input file's metadata (mm_io_probe, io/probe.c), which
 * runs in a process of its own: the helper program minimodel-probe
 * (io/probe_main.c), or a forked copy of the caller where the helper is
 * missing. Only netCDF here, no MPI. */
#ifndef MM_PROBE_WALK_H
#define MM_PROBE_WALK_H

/* MM_SANITIZED: built with AddressSanitizer (gcc or clang). */
#if defined(__SANITIZE_ADDRESS__)
#define MM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MM_SANITIZED 1
#endif
#endif

/* Exit statuses of the test read. */
enum {
  MM_PROBE_READ = 0,    /* all of the metadata reads */
  MM_PROBE_REFUSED = 3, /* the library refuses something: the real read says what */
  MM_PROBE_USAGE = 4    /* minimodel-probe called with other arguments */
};

/* Open path, read every dimension, variable and attribute (with the
 * attributes' values), close. Every call the reader may make is made, also
 * after one that the library refused: a damaged file can crash the library
 * in the next one, where the reader, which goes on in another order, would
 * meet it. MM_PROBE_READ or MM_PROBE_REFUSED; a crash or a loop of the
 * libraries is the caller's to see. */
int mm_io_probe_walk(const char *path);

#endif
