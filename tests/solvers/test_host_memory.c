/* mm_host_memory_available_at (solvers/mm_host_memory.h) on file trees made
 * here, laid out as the kernel lays out /proc and the cgroup file systems:
 * the least of MemAvailable and each memory cgroup's limit less its use
 * plus its file cache (inactive and active), from the process's cgroup up to the root of
 * its hierarchy; v1 and v2; "no limit" in both forms; a hybrid set-up; a
 * container whose hierarchy is mounted from its own cgroup down; files
 * missing. The expected figures are worked out by hand below. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mm_host_memory.h"

static int failures = 0;
static char top[256];

static void put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", top, rel);
  /* its folders */
  for (char *s = strchr(path + strlen(top) + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = '\0';
    mkdir(path, 0755);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    printf("FAIL: cannot write %s\n", path);
    exit(1);
  }
}

static void expect(const char *what, const char *root, double want, const char *want_of) {
  /* want_of: the limiting cgroup's folder below the mount point ("" the
   * mount point itself); NULL: no cgroup's limit is the least */
  char meminfo[512], cgroup[512], mount[512], of[512];
  snprintf(meminfo, sizeof meminfo, "%s/%s/meminfo", top, root);
  snprintf(cgroup, sizeof cgroup, "%s/%s/self_cgroup", top, root);
  snprintf(mount, sizeof mount, "%s/%s/sys", top, root);
  const double got = mm_host_memory_available_at(meminfo, cgroup, mount, of, sizeof of);
  char want_path[512] = ""; /* want_of: below the mount point; NULL: no cgroup's limit */
  if (want_of) snprintf(want_path, sizeof want_path, "%s/%s/sys%s", top, root, want_of);
  if (!(got == want || (isinf(got) && isinf(want))) || strcmp(of, want_path)) {
    printf("FAIL: %s: %.17g bytes, limit of '%s'; want %.17g, '%s'\n", what, got, of, want,
           want_path);
    failures++;
  } else {
    printf("ok: %s: %.0f bytes%s%s\n", what, got, *of ? ", the limit of " : "", of);
  }
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(top, sizeof top, "%s/test_host_memory.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
  if (mkdir(top, 0755) != 0) {
    printf("FAIL: cannot make %s\n", top);
    return 1;
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const char *meminfo = "MemTotal:       25000000 kB\nMemFree:         1000000 kB\n"
                        "MemAvailable:   20000000 kB\nBuffers:           1000 kB\n";
  const double mem = 20000000.0 * 1024.0;

  /* no cgroup file: MemAvailable */
  put("none/meminfo", meminfo);
  expect("no /proc/self/cgroup", "none", mem, NULL);
  /* nothing known at all */
  put("nothing/self_cgroup", "0::/\n");
  expect("neither file", "nothing", INFINITY, NULL);

  /* v1: job/step under a job limit of 2 GiB using 1.5 GiB, of it 0.25 GiB
   * inactive and 0.125 GiB active file cache (0.875 GiB left), the step
   * unlimited (2^63 - 4096) */
  put("v1/meminfo", meminfo);
  put("v1/self_cgroup", "5:cpu,cpuacct:/slurm/job\n4:memory:/slurm/job/step\n0::/\n");
  put("v1/sys/memory/memory.limit_in_bytes", "9223372036854771712\n");
  put("v1/sys/memory/memory.usage_in_bytes", "3000000000\n");
  put("v1/sys/memory/slurm/memory.limit_in_bytes", "9223372036854771712\n");
  put("v1/sys/memory/slurm/memory.usage_in_bytes", "3000000000\n");
  put("v1/sys/memory/slurm/job/memory.limit_in_bytes", "2147483648\n");
  put("v1/sys/memory/slurm/job/memory.usage_in_bytes", "1610612736\n");
  put("v1/sys/memory/slurm/job/memory.stat",
      "cache 100\nrss 1\ninactive_file 5\nactive_file 7\ntotal_inactive_file 268435456\n"
      "total_active_file 134217728\n");
  put("v1/sys/memory/slurm/job/step/memory.limit_in_bytes", "9223372036854771712\n");
  put("v1/sys/memory/slurm/job/step/memory.usage_in_bytes", "1610612736\n");
  expect("v1, the job's limit above the step", "v1", 0.875 * gib, "/memory/slurm/job");
  /* the step limited more tightly: 1 GiB, using 0.5 GiB, no cache */
  put("v1/sys/memory/slurm/job/step/memory.limit_in_bytes", "1073741824\n");
  put("v1/sys/memory/slurm/job/step/memory.usage_in_bytes", "536870912\n");
  expect("v1, the step's own limit", "v1", 0.5 * gib, "/memory/slurm/job/step");
  /* a limit above MemAvailable: MemAvailable */
  put("v1/sys/memory/slurm/job/step/memory.limit_in_bytes", "68719476736\n");
  put("v1/sys/memory/slurm/job/memory.limit_in_bytes", "68719476736\n");
  expect("v1, limits above MemAvailable", "v1", mem, NULL);

  /* v2 (unified): a container's cgroup at max, its parent at 4 GiB using 3
   * GiB with 0.5 GiB of inactive and 0.25 GiB of active file cache (1.75
   * GiB left; shmem is not file cache) */
  put("v2/meminfo", meminfo);
  put("v2/self_cgroup", "0::/machine/box\n");
  put("v2/sys/cgroup.controllers", "cpu memory pids\n");
  put("v2/sys/machine/memory.max", "4294967296\n");
  put("v2/sys/machine/memory.current", "3221225472\n");
  put("v2/sys/machine/memory.stat",
      "anon 1\nfile 2\nshmem 1048576\ninactive_file 536870912\nactive_file 268435456\n");
  put("v2/sys/machine/box/memory.max", "max\n");
  put("v2/sys/machine/box/memory.current", "3221225472\n");
  expect("v2, the parent's limit", "v2", 1.75 * gib, "/machine");
  /* the cgroup's path is not below the mount point (a container whose
   * hierarchy is mounted from its own cgroup down): the mount point's own
   * files, 1 GiB less 0.25 GiB used, named by the mount point */
  put("ns/meminfo", meminfo);
  put("ns/self_cgroup", "0::/kubepods/pod1/abc\n");
  put("ns/sys/cgroup.controllers", "memory\n");
  put("ns/sys/memory.max", "1073741824\n");
  put("ns/sys/memory.current", "268435456\n");
  expect("v2, a container's own namespace", "ns", 0.75 * gib, "");
  /* hybrid: v2 at sys/unified without a memory controller, v1 memory
   * hierarchy: v1's limit counts */
  put("hy/meminfo", meminfo);
  put("hy/self_cgroup", "0::/user.slice\n4:memory:/user.slice\n");
  put("hy/sys/unified/user.slice/cgroup.procs", "1\n");
  put("hy/sys/memory/user.slice/memory.limit_in_bytes", "2147483648\n");
  put("hy/sys/memory/user.slice/memory.usage_in_bytes", "1073741824\n");
  expect("hybrid: the v1 memory hierarchy", "hy", 1.0 * gib, "/memory/user.slice");
  /* a limit's files that cannot be read, or read as no number: ignored */
  put("bad/meminfo", meminfo);
  put("bad/self_cgroup", "4:memory:/a\n");
  put("bad/sys/memory/a/memory.limit_in_bytes", "banana\n");
  put("bad/sys/memory/a/memory.usage_in_bytes", "1\n");
  expect("a limit that is no number", "bad", mem, NULL);
  /* use above the limit (the kernel reclaiming): nothing left, not less */
  put("over/meminfo", meminfo);
  put("over/self_cgroup", "4:memory:/a\n");
  put("over/sys/memory/a/memory.limit_in_bytes", "1000\n");
  put("over/sys/memory/a/memory.usage_in_bytes", "2000\n");
  expect("use above the limit", "over", 0.0, "/memory/a");

  char rm[300];
  snprintf(rm, sizeof rm, "rm -rf %s", top);
  if (system(rm) != 0) printf("note: %s left\n", top);
  if (failures)
    printf("%d failures\n", failures);
  else
    printf("ok\n");
  return failures != 0;
}
