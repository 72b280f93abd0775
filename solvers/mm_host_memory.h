/* The host memory a process may still take: what the model's and
 * tdma-bench's memory checks compare their needs with, before anything is
 * allocated. Neither MPI nor the model: the solvers' library carries it for
 * both. */
#ifndef MM_HOST_MEMORY_H
#define MM_HOST_MEMORY_H

#include <stddef.h>

/* Bytes this process may still take: the least of the node's MemAvailable
 * (/proc/meminfo) and, for each memory cgroup from this process's up to the
 * root of its hierarchy (a batch job's or a container's limit, which the
 * kernel enforces with SIGKILL), its limit less its use plus its file
 * cache, which the kernel takes back first (cgroup v2: memory.max,
 * memory.current, memory.stat's inactive_file and active_file; v1:
 * memory.limit_in_bytes, memory.usage_in_bytes, memory.stat's
 * total_inactive_file and total_active_file). INFINITY when
 * none of these is known. When a cgroup's limit is the least, its directory
 * is written to limit_of (len bytes), else "". */
double mm_host_memory_available(char *limit_of, size_t len);

/* MINIMODEL_MEMORY_LIMIT's text as bytes: a decimal number > 0 and finite,
 * as written (no blank, sign or hexadecimal, which strtod would take: 0x10
 * was 16 bytes); -1 for any other text. */
double mm_host_memory_limit(const char *text);

/* The same, reading the files at the paths given: meminfo for
 * /proc/meminfo, self_cgroup for /proc/self/cgroup, cgroup_root for the
 * mount point of the cgroup file systems, /sys/fs/cgroup (for tests). */
double mm_host_memory_available_at(const char *meminfo, const char *self_cgroup,
                                   const char *cgroup_root, char *limit_of, size_t len);

#endif
