/* The host memory a process may still take (mm_host_memory.h). */
#include "mm_host_memory.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MM_PATH = 4096 };

/* The number of file `dir`/`name`'s first line; -1 when it cannot be read,
 * INFINITY for "max" (cgroup v2: no limit). */
static double read_number(const char *dir, const char *name) {
  char path[MM_PATH];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return -1.0;
  FILE *f = fopen(path, "r");
  if (!f) return -1.0;
  char line[64];
  double v = -1.0;
  if (fgets(line, sizeof line, f)) {
    char *end = NULL;
    if (!strncmp(line, "max", 3))
      v = INFINITY;
    else if ((v = strtod(line, &end)) < 0.0 || end == line)
      v = -1.0;
  }
  fclose(f);
  return v;
}

/* The value of `key` in the "key value" lines of `dir`/memory.stat; 0 when
 * not found. */
static double read_stat(const char *dir, const char *key) {
  char path[MM_PATH];
  if (snprintf(path, sizeof path, "%s/memory.stat", dir) >= (int)sizeof path) return 0.0;
  FILE *f = fopen(path, "r");
  if (!f) return 0.0;
  char line[256];
  double v = 0.0;
  const size_t n = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, n) && line[n] == ' ') {
      v = strtod(line + n + 1, NULL);
      break;
    }
  fclose(f);
  return v > 0.0 ? v : 0.0;
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* This process's memory cgroup: its hierarchy's mount point in base and
 * its path below it in path; false where it has none. A v1 hierarchy with
 * the memory controller is taken before the v2 one (in a hybrid set-up the
 * memory controller is v1's). */
static bool memory_cgroup(const char *self_cgroup, const char *root, char *base, char *path) {
  FILE *f = fopen(self_cgroup, "r");
  if (!f) return false;
  char line[MM_PATH + 64], v2[MM_PATH] = "";
  bool v1 = false, have_v2 = false;
  while (!v1 && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *first = strchr(line, ':'), *second = first ? strchr(first + 1, ':') : NULL;
    if (!second) continue;
    *first = '\0';
    *second = '\0';
    const char *controllers = first + 1, *where = second + 1;
    if (!strcmp(line, "0") && !*controllers) {
      snprintf(v2, sizeof v2, "%s", where);
      have_v2 = true;
      continue;
    }
    for (const char *c = controllers; *c; c += strcspn(c, ",") + (c[strcspn(c, ",")] == ',')) {
      if (!strncmp(c, "memory", 6) && (c[6] == ',' || c[6] == '\0')) {
        snprintf(base, MM_PATH, "%s/memory", root);
        snprintf(path, MM_PATH, "%s", where);
        v1 = true;
        break;
      }
    }
  }
  fclose(f);
  if (v1) return true;
  if (!have_v2) return false;
  char probe[MM_PATH];
  snprintf(probe, sizeof probe, "%s/cgroup.controllers", root);
  struct stat st;
  if (stat(probe, &st) == 0)
    snprintf(base, MM_PATH, "%s", root);
  else
    snprintf(base, MM_PATH, "%s/unified", root); /* hybrid */
  snprintf(path, MM_PATH, "%s", v2);
  return true;
}

double mm_host_memory_available_at(const char *meminfo, const char *self_cgroup,
                                   const char *cgroup_root, char *limit_of, size_t len) {
  if (len) limit_of[0] = '\0';
  double avail = INFINITY;
  FILE *f = fopen(meminfo, "r");
  if (f) {
    char line[256];
    double kb = 0.0;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) {
        if (kb > 0.0) avail = kb * 1024.0;
        break;
      }
    fclose(f);
  }
  char base[MM_PATH], path[MM_PATH], dir[2 * MM_PATH];
  if (!memory_cgroup(self_cgroup, cgroup_root, base, path)) return avail;
  /* the cgroup's directory; where the hierarchy is mounted from this
   * cgroup down (a container's own namespace), the mount point itself */
  snprintf(dir, sizeof dir, "%s%s", base, strcmp(path, "/") ? path : "");
  if (!is_dir(dir)) snprintf(dir, sizeof dir, "%s", base);
  const bool v1 = strlen(base) >= 7 && !strcmp(base + strlen(base) - 7, "/memory");
  for (;;) {
    const double limit = read_number(dir, v1 ? "memory.limit_in_bytes" : "memory.max");
    const double use = read_number(dir, v1 ? "memory.usage_in_bytes" : "memory.current");
    /* v1 says "no limit" with a number near 2^63 */
    if (limit >= 0.0 && isfinite(limit) && limit < 0x1p62 && use >= 0.0) {
      /* the page cache of files, which the kernel takes back before it
       * kills (its active part too: a job that has just read its input
       * holds most of it there) */
      const double cache =
          v1 ? read_stat(dir, "total_inactive_file") + read_stat(dir, "total_active_file")
             : read_stat(dir, "inactive_file") + read_stat(dir, "active_file");
      const double here = fmax(limit - use + fmin(cache, use), 0.0);
      if (here < avail) {
        avail = here;
        if (len) snprintf(limit_of, len, "%s", dir);
      }
    }
    if (strlen(dir) <= strlen(base)) break;
    char *slash = strrchr(dir, '/');
    if (!slash || slash < dir + strlen(base)) break;
    *slash = '\0';
  }
  return avail;
}

double mm_host_memory_available(char *limit_of, size_t len) {
  return mm_host_memory_available_at("/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup",
                                     limit_of, len);
}

double mm_host_memory_limit(const char *text) {
  char *end = NULL;
  const double v = strtod(text, &end);
  const bool decimal =
      ((text[0] >= '0' && text[0] <= '9') || text[0] == '.') && !strpbrk(text, "xX");
  return decimal && end != text && *end == '\0' && isfinite(v) && v > 0.0 ? v : -1.0;
}
