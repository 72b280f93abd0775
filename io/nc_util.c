#include "nc_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "nc_dims.h"

mm_err mm_nc_fail(mm_err code, const char *src_file, int src_line, const char *path,
                  const char *what, int status) {
  return mm_error_set(code, src_file, src_line, "%s: %s: %s", path, what, nc_strerror(status));
}

mm_err mm_io_open_fail(mm_err code, const char *src_file, int src_line, const char *path,
                       const char *what, int status) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  bool held = false;
  if (fd >= 0) {
    /* a regular file alone (a directory can be flock'ed too: `flock DIR
     * command`); a shared lock is refused only while someone holds the
     * exclusive one, and ours goes with the descriptor */
    struct stat st;
    held = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) != 0 &&
           errno == EWOULDBLOCK;
    close(fd); /* unchecked: a read-only descriptor */
  }
  if (held)
    return mm_error_set(code, src_file, src_line,
                        "%s: cannot open: another process has it open for writing (it holds "
                        "HDF5's lock on the file: a program that writes it through netCDF or "
                        "HDF5, such as one appending to it)",
                        path);
  return mm_nc_fail(code, src_file, src_line, path, what, status);
}

void mm_io_dir_of(const char *path, char *dir, size_t size) {
  const char *slash = strrchr(path, '/');
  if (slash)
    snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  else
    snprintf(dir, size, ".");
}

mm_err mm_io_create_fail(mm_err code, const char *src_file, int src_line, const char *path,
                         int status) {
  struct stat st;
  char dir[MM_IO_PATH_MAX];
  mm_io_dir_of(path, dir, sizeof dir);
  struct statvfs fs;
  const bool fs_known = statvfs(dir, &fs) == 0;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return mm_error_set(code, src_file, src_line, "%s: cannot create: is a directory", path);
    /* made, but not MPI-IO's lock file beside it */
    if (fs_known && fs.f_files > 0 && fs.f_favail == 0)
      return mm_error_set(code, src_file, src_line,
                          "%s: cannot create: no free inode on the file system of '%s' (%s)", path,
                          dir, strerror(ENOSPC));
    /* made, and the disk full before HDF5 wrote its first block (netCDF
     * says "Permission denied") */
    if (fs_known && fs.f_bavail == 0)
      return mm_error_set(code, src_file, src_line,
                          "%s: cannot create: no free space on the file system of '%s' (%s)", path,
                          dir, strerror(ENOSPC));
    /* made, and a file-size limit (ulimit -f) below the least room a file
     * is given: MPI-IO's lock file beside it could not be written (netCDF
     * says "Permission denied") */
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        (double)limit.rlim_cur < MM_IO_SPACE_MARGIN)
      return mm_error_set(code, src_file, src_line,
                          "%s: cannot create: %s (file-size limit %llu bytes)", path,
                          strerror(EFBIG), (unsigned long long)limit.rlim_cur);
    if (access(path, W_OK) != 0)
      return mm_error_set(code, src_file, src_line, "%s: cannot create: %s", path, strerror(errno));
  } else if (errno == ENOENT) {
    if (fs_known && fs.f_files > 0 && fs.f_favail == 0)
      return mm_error_set(code, src_file, src_line,
                          "%s: cannot create: no free inode on the file system of '%s' (%s)", path,
                          dir, strerror(ENOSPC));
    if (fs_known && fs.f_bavail == 0)
      return mm_error_set(code, src_file, src_line,
                          "%s: cannot create: no free space on the file system of '%s' (%s)", path,
                          dir, strerror(ENOSPC));
    if (access(dir, W_OK | X_OK) != 0)
      return mm_error_set(code, src_file, src_line, "%s: cannot create: directory '%s': %s", path,
                          dir, strerror(errno));
  }
  return mm_nc_fail(code, src_file, src_line, path, "cannot create", status);
}

mm_err mm_io_check_dim_names(int nc, const char *path, int var, const char *name, int nd,
                             const char *const *want) {
  int dims[NC_MAX_VAR_DIMS], n = 0;
  int s = mm_nc_var_dims(nc, var, &n, dims);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, path, name, s);
  if (n != nd) return MM_OK; /* the check of the shape says what is wrong */
  char found[3 * (NC_MAX_NAME + 2) + 8] = "(", expected[64] = "(";
  bool same = true;
  for (int d = 0; d < nd; d++) {
    char dim[NC_MAX_NAME + 1] = "?";
    s = nc_inq_dimname(nc, dims[d], dim);
    if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, path, name, s);
    same = same && strcmp(dim, want[d]) == 0;
    const char *sep = d + 1 < nd ? ", " : ")";
    strncat(found, dim, sizeof found - strlen(found) - 1);
    strncat(found, sep, sizeof found - strlen(found) - 1);
    strncat(expected, want[d], sizeof expected - strlen(expected) - 1);
    strncat(expected, sep, sizeof expected - strlen(expected) - 1);
  }
  MM_REQUIRE(same, MM_ERR_INPUT, "%s: %s has dimensions %s; expected %s, in this order", path, name,
             found, expected);
  return MM_OK;
}

mm_err mm_io_check_unpacked(int nc, const char *path, int var, const char *name) {
  static const char *const packing[2] = {"scale_factor", "add_offset"};
  static const double identity[2] = {1.0, 0.0}; /* values as stored */
  for (int i = 0; i < 2; i++) {
    nc_type type;
    size_t len = 0;
    const int s = nc_inq_att(nc, var, packing[i], &type, &len);
    if (s == NC_ENOTATT) continue;
    if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, path, name, s);
    double value;
    if (len == 1 && type != NC_CHAR && type != NC_STRING &&
        nc_get_att_double(nc, var, packing[i], &value) == NC_NOERR && value == identity[i])
      continue;
    return MM_ERROR(MM_ERR_INPUT,
                    "%s: %s is packed (it has the attribute %s); minimodel reads values as "
                    "stored: write %s unpacked, as float or double values",
                    path, name, packing[i], name);
  }
  return MM_OK;
}

mm_nc_text mm_nc_att_text(int nc, int var, const char *att, char **text, size_t *n, int *status) {
  nc_type type;
  size_t len = 0;
  *text = NULL;
  *n = 0;
  *status = nc_inq_att(nc, var, att, &type, &len);
  if (*status == NC_ENOTATT) {
    *status = NC_NOERR;
    return MM_NC_TEXT_ABSENT;
  }
  if (*status != NC_NOERR) return MM_NC_TEXT_FAILED;
  if (type == NC_STRING && len == 1) {
    char *str = NULL;
    *status = nc_get_att_string(nc, var, att, &str);
    if (*status == NC_NOERR) {
      *text = strdup(str ? str : "");
      *n = *text ? strlen(*text) : 0;
    }
    if (str) nc_free_string(1, &str);
    return *status != NC_NOERR ? MM_NC_TEXT_FAILED : *text ? MM_NC_TEXT_READ : MM_NC_TEXT_NO_MEMORY;
  }
  if (type != NC_CHAR) return MM_NC_TEXT_NOT_TEXT;
  char *buf = calloc(len + 1, 1);
  if (!buf) return MM_NC_TEXT_NO_MEMORY;
  if (len > 0) *status = nc_get_att_text(nc, var, att, buf);
  if (*status != NC_NOERR) {
    free(buf);
    return MM_NC_TEXT_FAILED;
  }
  while (len > 0 && buf[len - 1] == '\0')
    len--;
  *text = buf;
  *n = len;
  return MM_NC_TEXT_READ;
}

mm_nc_text mm_nc_att_text_in(int nc, int var, const char *att, char *out, size_t size,
                             int *status) {
  char *text = NULL;
  size_t n = 0;
  mm_nc_text got = mm_nc_att_text(nc, var, att, &text, &n, status);
  out[0] = '\0';
  if (got == MM_NC_TEXT_READ && (n >= size || strlen(text) != n)) got = MM_NC_TEXT_NOT_TEXT;
  if (got == MM_NC_TEXT_READ) memcpy(out, text, n + 1);
  free(text);
  return got;
}

mm_err mm_nc_write_fail(const char *src_file, int src_line, const char *path, const char *dir,
                        const char *what, int status) {
  char why[256] = "";
  struct stat st;
  struct rlimit limit;
  if (stat(path, &st) == 0 && getrlimit(RLIMIT_FSIZE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY &&
      (double)st.st_size + MM_IO_SPACE_MARGIN >= (double)limit.rlim_cur)
    snprintf(why, sizeof why, " (file-size limit %llu bytes, the file has %lld)",
             (unsigned long long)limit.rlim_cur, (long long)st.st_size);
  struct statvfs fs;
  if (!why[0] && statvfs(dir, &fs) == 0) {
    const double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
    if (free_bytes < MM_IO_SPACE_MARGIN)
      snprintf(why, sizeof why, " (the file system of '%s' is full: %.2f MiB free)", dir,
               free_bytes / 1048576.0);
  }
  return mm_error_set(MM_ERR_RUN, src_file, src_line, "%s: %s: %s%s", path, what,
                      nc_strerror(status), why);
}

mm_err mm_io_comm(MPI_Comm cart, MPI_Comm *plain) {
  int rank;
  *plain = MPI_COMM_NULL;
  MM_MPI(MPI_Comm_rank(cart, &rank));
  MM_MPI(MPI_Comm_split(cart, 0, rank, plain));
  MM_MPI(MPI_Comm_set_errhandler(*plain, MPI_ERRORS_RETURN));
  return MM_OK;
}

mm_err mm_io_path(char *path, const mm_config *cfg, const char *suffix) {
  int n = mm_dir_file(path, MM_IO_PATH_MAX, cfg->output_dir, cfg->run_name, suffix);
  MM_REQUIRE(n >= 0 && n < MM_IO_PATH_MAX, MM_ERR_INPUT,
             "output.dir + run.name: file name longer than %d bytes", MM_IO_PATH_MAX - 1);
  return MM_OK;
}

mm_err mm_io_check_dir(const char *dir, const char *path) {
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT)
      return MM_ERROR(MM_ERR_RUN, "%s: cannot create: directory '%s' does not exist", path, dir);
    return MM_ERROR(MM_ERR_RUN, "%s: cannot create: directory '%s': %s", path, dir,
                    strerror(errno));
  }
  MM_REQUIRE(S_ISDIR(st.st_mode), MM_ERR_RUN, "%s: cannot create: '%s' is not a directory", path,
             dir);
  MM_REQUIRE(access(dir, W_OK | X_OK) == 0, MM_ERR_RUN,
             "%s: cannot create: directory '%s' is not writable: %s", path, dir, strerror(errno));
  return MM_OK;
}

mm_err mm_io_check_space(MPI_Comm comm, const char *dir, double bytes, const char *path) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_err err = MM_OK;
  struct statvfs fs;
  if (rank == 0 && statvfs(dir, &fs) == 0) {
    const double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize; /* for unprivileged use */
    if (free_bytes < bytes)
      err = MM_ERROR(MM_ERR_RUN,
                     "%s: not enough space on the file system of '%s': need up to %.2f MiB, "
                     "%.2f MiB free",
                     path, dir, bytes / 1048576.0, free_bytes / 1048576.0);
  }
  return mm_agree(comm, err);
}

/* File descriptors this process may still open: RLIMIT_NOFILE less those
 * open; -1 when the limit is large enough not to count (4096 or more). */
static long mm_fds_free(void) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= 4096)
    return -1;
  long open_fds = 0;
  for (int fd = 0; fd < (int)lim.rlim_cur; fd++)
    if (fcntl(fd, F_GETFD) != -1) open_fds++;
  return (long)lim.rlim_cur - open_fds;
}

mm_err mm_io_check_inodes(MPI_Comm comm, const char *dir, bool create, const char *path,
                          int fds_needed) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  /* the descriptors, on every rank: seen on 2 ranks (Open MPI 4.1), an open
   * file limit a few descriptors short of what the libraries' open takes
   * failed on one rank inside MPI-IO's collective open, and the others
   * waited for ever */
  const long fds = mm_fds_free();
  mm_err fd_err = MM_OK;
  if (fds >= 0 && fds < fds_needed)
    fd_err = MM_ERROR(MM_ERR_RUN,
                      "%s: cannot %s: rank %d has %ld file descriptor%s free (ulimit -n), and "
                      "opening a file through MPI-IO and HDF5 takes up to %d (%s)",
                      path, create ? "create" : "open", rank, fds, fds == 1 ? "" : "s", fds_needed,
                      strerror(EMFILE));
  MM_CHECK(mm_agree(comm, fd_err));
  /* a create under a file-size limit (ulimit -f) of less than 1 KiB, on
   * every rank: with 0 on 2 ranks the libraries' create waited for
   * MINIMODEL_OPEN_TIMEOUT and left an empty file, where one process was
   * refused at once (mm_io_create_fail); from 1 KiB on, the create or the
   * first write fails at once on any number of ranks, with its own reason */
  struct rlimit size_limit;
  mm_err size_err = MM_OK;
  if (create && getrlimit(RLIMIT_FSIZE, &size_limit) == 0 && size_limit.rlim_cur != RLIM_INFINITY &&
      size_limit.rlim_cur < 1024)
    size_err = MM_ERROR(MM_ERR_RUN, "%s: cannot create: %s (file-size limit %llu bytes%s)", path,
                        strerror(EFBIG), (unsigned long long)size_limit.rlim_cur,
                        rank == 0 ? "" : ", on a rank other than 0");
  MM_CHECK(mm_agree(comm, size_err));
  /* seen on 2 ranks (Open MPI 4.1, tmpfs): a create with 2 free inodes
   * ends well, an open with 1 free waits for ever; 1 more is asked for */
  const int need = create ? 3 : 2;
  mm_err err = MM_OK;
  struct statvfs fs;
  /* f_files = 0: a file system without a count of inodes (it makes them as
   * needed); read-only: MPI-IO makes no lock file there */
  if (rank == 0 && statvfs(dir, &fs) == 0 && fs.f_files > 0 && !(fs.f_flag & ST_RDONLY) &&
      fs.f_favail < (fsfilcnt_t)need)
    err = fs.f_favail == 0
              ? MM_ERROR(MM_ERR_RUN, "%s: cannot %s: no free inode on the file system of '%s' (%s)",
                         path, create ? "create" : "open", dir, strerror(ENOSPC))
              : MM_ERROR(MM_ERR_RUN,
                         "%s: cannot %s: %llu free inode%s on the file system of '%s', and a file "
                         "%s through MPI-IO takes %d: %sOpen MPI's lock file beside it, and one "
                         "more while it opens (%s)",
                         path, create ? "create" : "open", (unsigned long long)fs.f_favail,
                         fs.f_favail == 1 ? "" : "s", dir, create ? "made" : "opened", need,
                         create ? "itself, " : "", strerror(ENOSPC));
  return mm_agree(comm, err);
}

/* What mm_reserve_here returns for another file at the path (mm_io_seen). */
#define MM_RESERVE_REPLACED (-1)

/* Whether st is another file than the one `seen` found. */
static bool mm_seen_other(const mm_io_seen *seen, const struct stat *st) {
  return seen && seen->known &&
         ((unsigned long long)st->st_dev != seen->dev ||
          (unsigned long long)st->st_ino != seen->ino);
}

/* Rank 0's part of mm_io_reserve: the error number of the reservation, 0
 * when it is in place or cannot be made on this file system, or
 * MM_RESERVE_REPLACED. */
static int mm_reserve_here(const char *path, double bytes, mm_io_seen *seen) {
  /* O_NONBLOCK: a FIFO moved to the name is refused at once, not waited on
   * for a reader (it hung the run) */
  const int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0) {
    const int e = errno;
    return stat(path, &st) == 0 && mm_seen_other(seen, &st) ? MM_RESERVE_REPLACED : e;
  }
  int e = fstat(fd, &st) == 0 ? 0 : errno;
  if (e == 0 && mm_seen_other(seen, &st)) e = MM_RESERVE_REPLACED;
  if (e == 0 && seen && !seen->known)
    *seen = (mm_io_seen){true, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino};
  if (e == 0) {
    do
      e = posix_fallocate(fd, st.st_size, (off_t)bytes);
    while (e == EINTR);
    /* refused: back to the size before (the reservation may have grown the
     * file part-way; the libraries wrote nothing past that size since) */
    if (e != 0 && ftruncate(fd, st.st_size) != 0) e = errno;
  }
  close(fd);
  /* nothing can be reserved here (no fallocate, not a regular file):
   * write without reservation */
  if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL || e == ENODEV || e == ESPIPE) e = 0;
  return e;
}

bool mm_io_read_only(MPI_Comm comm, const char *path) {
  int rank, ro = 0;
  struct statvfs fs;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return false;
  if (rank == 0 && statvfs(path, &fs) == 0 && (fs.f_flag & ST_RDONLY)) ro = 1;
  if (rank == 0 && !ro) { /* ext4's emergency read-only state is in no flag */
    const int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: no wait */
    if (fd >= 0)
      close(fd);
    else
      ro = errno == EROFS;
  }
  if (MPI_Bcast(&ro, 1, MPI_INT, 0, comm) != MPI_SUCCESS) return false;
  return ro != 0;
}

mm_err mm_io_reserve(MPI_Comm comm, const mm_settings *env, const char *path, double bytes,
                     mm_io_seen *seen) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_err err = MM_OK;
  if (rank == 0 && !env->fault.no_reserve) {
    const int e = mm_reserve_here(path, bytes, seen);
    if (e == MM_RESERVE_REPLACED)
      err = MM_ERROR(MM_ERR_RUN,
                     "%s: another file than the one this run writes is now at this path (moved "
                     "there while the run wrote it): left as it is, and no record written",
                     path);
    else if (e != 0)
      err = MM_ERROR(MM_ERR_RUN, "%s: cannot reserve %.2f MiB for the next write: %s", path,
                     bytes / 1048576.0, strerror(e));
  }
  return mm_agree(comm, err);
}

int mm_io_put_texts(int nc, int var, const char *const *attributes) {
  for (const char *const *a = attributes; a[0]; a += 2) {
    int s = nc_put_att_text(nc, var, a[0], strlen(a[1]), a[1]);
    if (s != NC_NOERR) return s;
  }
  return NC_NOERR;
}

int mm_io_def_var(int nc, const char *name, nc_type type, int ndims, const int *dims, int *var,
                  const char *const *attributes) {
  int s = nc_def_var(nc, name, type, ndims, dims, var);
  return s != NC_NOERR ? s : mm_io_put_texts(nc, *var, attributes);
}

mm_err mm_io_creation_time(MPI_Comm comm, int rank, char text[32]) {
  memset(text, 0, 32);
  if (rank == 0) {
    time_t now = time(NULL);
    struct tm utc;
    if (!gmtime_r(&now, &utc) || !strftime(text, 32, "%Y-%m-%dT%H:%M:%SZ", &utc))
      strcpy(text, "unknown time");
  }
  MM_MPI(MPI_Bcast(text, 32, MPI_CHAR, 0, comm));
  return MM_OK;
}

const char *mm_io_origin_version(const mm_io_origin *origin) {
  return origin && origin->version && origin->version[0] ? origin->version : "unknown";
}

char *mm_io_history_line(const char *created, const char *what, const mm_io_origin *origin) {
  const char *command = origin && origin->command ? origin->command : "";
  const char *version = mm_io_origin_version(origin);
  const size_t n = strlen(created) + strlen(what) + strlen(version) + strlen(command) + 32;
  char *line = malloc(n);
  if (line)
    snprintf(line, n, "%s: %s minimodel %s%s%s", created, what, version, command[0] ? ": " : "",
             command);
  return line;
}

void mm_io_hash_text(const mm_config *cfg, char text[17]) {
  snprintf(text, 17, "%016" PRIx64, mm_config_solution_hash(cfg));
}

/* Open MPI's MPI-IO keeps, while a file is open, a lock file
 * `<file>-<job>-<pid>.lock` beside it (the shared file pointer's component
 * `lockedfile`, main.c; pid: that of the communicator's rank 0), removed at
 * close (mm_io.h). Under mpirun the job is the one mpirun gives in
 * OMPI_MCA_ess_base_jobid, so that the lock of another job whose rank had
 * this pid (on another node, beside a file of the same name) is left; a
 * singleton's job is not told, and any is taken. Names are compared, not
 * matched as a pattern (a path may hold '*' or '['). */
void mm_io_remove_mpi_lock(const char *path) {
  mm_io_remove_mpi_lock_of(path, (long)getpid());
}

void mm_io_remove_mpi_lock_of(const char *path, long pid) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  char dir[PATH_MAX];
  if (slash) {
    const size_t n = (size_t)(slash - path);
    if (n + 1 >= sizeof dir) return;
    memcpy(dir, path, n);
    dir[n] = '\0';
    if (n == 0) snprintf(dir, sizeof dir, "/");
  } else {
    snprintf(dir, sizeof dir, ".");
  }
  char tail[64]; /* "-<pid>.lock" */
  snprintf(tail, sizeof tail, "-%ld.lock", pid);
  const size_t base_len = strlen(base), tail_len = strlen(tail);
  const char *our_job = getenv("OMPI_MCA_ess_base_jobid"); /* NULL: a singleton */
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const char *name = e->d_name;
    const size_t len = strlen(name);
    if (len <= base_len + 1 + tail_len || strncmp(name, base, base_len) != 0 ||
        name[base_len] != '-' || strcmp(name + len - tail_len, tail) != 0)
      continue;
    bool job = true; /* the job id between: digits */
    const char *job_from = name + base_len + 1;
    const size_t job_len = len - tail_len - base_len - 1;
    for (const char *c = job_from; c < job_from + job_len; c++)
      job = job && *c >= '0' && *c <= '9';
    if (our_job && *our_job)
      job = job && strlen(our_job) == job_len && strncmp(job_from, our_job, job_len) == 0;
    char lock[PATH_MAX];
    struct stat st;
    if (job && mm_dir_file(lock, sizeof lock, dir, name, "") < (int)sizeof lock &&
        lstat(lock, &st) == 0 && S_ISREG(st.st_mode))
      unlink(lock); /* unchecked: the process is ending; at worst the file stays */
  }
  closedir(d);
}

void mm_io_remove_left_locks(void) {
  const ssize_t n = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_FILE);
  if (n <= 0) return;
  hid_t *ids = malloc((size_t)n * sizeof *ids);
  if (!ids) return;
  const ssize_t got = H5Fget_obj_ids((hid_t)H5F_OBJ_ALL, H5F_OBJ_FILE, (size_t)n, ids);
  for (ssize_t i = 0; i < got; i++) {
    char name[PATH_MAX];
    const ssize_t len = H5Fget_name(ids[i], name, sizeof name);
    if (len > 0 && (size_t)len < sizeof name) mm_io_remove_mpi_lock(name);
  }
  free(ids);
}

bool mm_io_files_left_open(MPI_Comm comm) {
  /* files, and ids of files whose close failed, still known to HDF5 */
  int mine = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_FILE) > 0, any = 0;
  if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) any = mine;
  return any != 0;
}

/* Little-endian unsigned integer of n bytes (n <= 8). */
static uint64_t mm_le(const unsigned char *b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = (v << 8) | b[i];
  return v;
}

/* The end of the file that the HDF5 superblock at offset `at` of f records
 * (base address + end-of-file address): -1 when the superblock is cut
 * short, 0 when it cannot tell (a version or size of offsets it does not
 * know, an undefined address). Superblock versions 0/1 keep the addresses
 * (base, free space, end of file, ...) at byte 24/28 with the size of
 * offsets at byte 13; versions 2/3 keep them (base, extension, end of file,
 * ...) at byte 12 with the size at byte 9. */
static long long mm_superblock_end(FILE *f, long long at) {
  unsigned char b[64];
  if (fseeko(f, (off_t)at, SEEK_SET) != 0) return -1;
  const size_t n = fread(b, 1, sizeof b, f);
  if (n < 16) return -1;
  int offset_size, addr_at;
  switch (b[8]) {
  case 0:
    offset_size = b[13];
    addr_at = 24;
    break;
  case 1:
    offset_size = b[13];
    addr_at = 28;
    break;
  case 2:
  case 3:
    offset_size = b[9];
    addr_at = 12;
    break;
  default: return 0; /* a future version: leave the check to HDF5 */
  }
  if (offset_size != 2 && offset_size != 4 && offset_size != 8) return 0;
  if ((size_t)(addr_at + 3 * offset_size) > n) return -1;
  const uint64_t undefined = offset_size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * offset_size)) - 1;
  const uint64_t base = mm_le(b + addr_at, offset_size);
  const uint64_t eof = mm_le(b + addr_at + 2 * offset_size, offset_size);
  if (base == undefined || eof == undefined) return 0;
  if (base > (uint64_t)LLONG_MAX || eof > (uint64_t)LLONG_MAX - base) return LLONG_MAX;
  return (long long)(base + eof);
}

/* Check the HDF5 superblock at offset `at` of f (size bytes long): the file
 * must reach the end-of-file address the superblock records. */
static MM_NODISCARD mm_err mm_check_superblock(FILE *f, const char *path, long long at,
                                               long long size) {
  const long long end = mm_superblock_end(f, at);
  if (end < 0) return MM_ERROR(MM_ERR_INPUT, "%s: truncated (%lld bytes)", path, size);
  if (size < end)
    return MM_ERROR(MM_ERR_INPUT, "%s: truncated: %lld bytes, but the file says %llu", path, size,
                    (unsigned long long)end);
  return MM_OK;
}

/* Rank 0's part of mm_io_trim: the error number, 0 for none (nothing cut
 * in a file that is not the one `seen` found). Opened once: the file checked
 * is the file cut, whatever is renamed to the path in between. */
static int mm_trim_here(const char *path, const mm_io_seen *seen) {
  /* a file that can no longer be written (its mode changed, a read-only
   * file system) is an error only when there is room to cut */
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
  const int write_errno = fd < 0 ? errno : 0;
  if (fd < 0) fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    const int e = errno;
    close(fd);
    return e;
  }
  struct stat st;
  long long end = 0;
  int e = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !mm_seen_other(seen, &st))
    end = mm_superblock_end(f, 0);
  if (end > 0 && (long long)st.st_size > end)
    e = write_errno ? write_errno : ftruncate(fd, (off_t)end) != 0 ? errno : 0;
  fclose(f);
  return e;
}

mm_err mm_io_trim(MPI_Comm comm, const char *path, const mm_io_seen *seen) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_err err = MM_OK;
  const int e = rank == 0 ? mm_trim_here(path, seen) : 0;
  if (e != 0)
    err = MM_ERROR(MM_ERR_RUN, "%s: cannot cut the reserved room past its end: %s", path,
                   strerror(e));
  return mm_agree(comm, err);
}

/* An input that is no file, refused before it is opened: the open of a
 * FIFO waits for a writer (it was the read's time limit, 10 minutes, before
 * the run ended), a device never ends. A directory and a missing file are
 * left to the checks that follow, which name them. */
static MM_NODISCARD mm_err mm_io_check_file_kind(const char *path) {
  const char *bad_path = mm_path_problem(path, false);
  MM_REQUIRE(!bad_path, MM_ERR_INPUT, "%s: %s", path, bad_path);
  struct stat st;
  const char *kind = stat(path, &st) == 0 ? mm_io_file_kind(path, &st) : NULL;
  if (!kind || S_ISDIR(st.st_mode)) return MM_OK;
  return MM_ERROR(MM_ERR_INPUT, "%s: not a regular file (%s): an input must be a NetCDF file", path,
                  kind);
}

const char *mm_io_file_kind(const char *path, const struct stat *st) {
  if (S_ISDIR(st->st_mode)) return "a directory";
  if (!S_ISREG(st->st_mode))
    return S_ISFIFO(st->st_mode)   ? "a FIFO"
           : S_ISSOCK(st->st_mode) ? "a socket"
           : S_ISCHR(st->st_mode)  ? "a character device"
           : S_ISBLK(st->st_mode)  ? "a block device"
                                   : "not a file";
  struct statfs fs; /* the kernel's own files: text it makes, not storage */
  if (statfs(path, &fs) != 0) return NULL;
  return fs.f_type == PROC_SUPER_MAGIC ? "a file of /proc"
         : fs.f_type == SYSFS_MAGIC    ? "a file of /sys"
                                       : NULL;
}

mm_err mm_io_undo_cut(const char *path, long long before) {
  FILE *f = fopen(path, "rb");
  if (!f) return MM_OK; /* the checks that follow say what is wrong */
  struct stat st;
  const long long end = fstat(fileno(f), &st) == 0 ? mm_superblock_end(f, 0) : -1;
  fclose(f);
  if (end <= 0 || end == LLONG_MAX || (long long)st.st_size >= end || end > before) return MM_OK;
  MM_REQUIRE(truncate(path, (off_t)end) == 0, MM_ERR_RUN,
             "%s: cut short by a run killed while it removed records (%lld bytes, the file says "
             "%lld), and it cannot be lengthened back: %s",
             path, (long long)st.st_size, end, strerror(errno));
  return MM_OK;
}

mm_err mm_io_check_hdf5(const char *path) {
  static const unsigned char hdf5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  MM_CHECK(mm_io_check_file_kind(path));
  FILE *f = fopen(path, "rb");
  MM_REQUIRE(f, MM_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  mm_err err = MM_OK;
  if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
    err = MM_ERROR(MM_ERR_INPUT, "%s: cannot read: not a file", path);
    goto done;
  }
  const long long size = (long long)st.st_size; /* bytes */
  unsigned char head[8] = {0};
  const size_t n = fread(head, 1, sizeof head, f);
  if (n == 0) {
    err = MM_ERROR(MM_ERR_INPUT, "%s: empty or unreadable: not a NetCDF file", path);
    goto done;
  }
  if (n >= 4 && memcmp(head, "CDF", 3) == 0 && (head[3] == 1 || head[3] == 2 || head[3] == 5)) {
    err = MM_ERROR(MM_ERR_INPUT,
                   "%s: classic NetCDF format; this file must be NetCDF-4 (HDF5) to be read in "
                   "parallel",
                   path);
    goto done;
  }
  /* the signature is at 0 or, after a user block, at 512, 1024, 2048, ... */
  for (long long at = 0; at + 8 <= size; at = at ? 2 * at : 512) {
    unsigned char sig[8];
    if (fseeko(f, (off_t)at, SEEK_SET) != 0 || fread(sig, 1, sizeof sig, f) != sizeof sig) break;
    if (memcmp(sig, hdf5_signature, sizeof sig) == 0) {
      err = mm_check_superblock(f, path, at, size);
      goto done;
    }
  }
  err = MM_ERROR(MM_ERR_INPUT, "%s: not a NetCDF-4 file (no HDF5 signature)", path);
done:
  fclose(f);
  return err;
}

/* ------------------------------------------- classic header plausibility */

/* A cursor over a classic header: big-endian fields, every read and skip
 * checked against the bytes left in the file. */
typedef struct {
  FILE *f;
  uint64_t pos, size; /* bytes */
  int w;              /* width of counts and sizes: 4 (CDF-1, CDF-2) or 8 (CDF-5) */
  bool ok;
} mm_cdf;

static uint64_t mm_cdf_get(mm_cdf *c, int n) {
  unsigned char b[8];
  if (!c->ok || c->size - c->pos < (uint64_t)n || fread(b, 1, (size_t)n, c->f) != (size_t)n) {
    c->ok = false;
    return 0;
  }
  c->pos += (uint64_t)n;
  uint64_t v = 0;
  for (int i = 0; i < n; i++)
    v = (v << 8) | b[i];
  return v;
}

/* Skip count items of size bytes, padded to 4; false when they do not fit. */
static void mm_cdf_skip(mm_cdf *c, uint64_t count, uint64_t size) {
  if (!c->ok || (size && count > (c->size - c->pos) / size)) {
    c->ok = false;
    return;
  }
  const uint64_t n = (count * size + 3) / 4 * 4;
  if (n > c->size - c->pos || fseeko(c->f, (off_t)(c->pos + n), SEEK_SET) != 0) {
    c->ok = false;
    return;
  }
  c->pos += n;
}

/* A count of elements that each take at least min_bytes of the file. */
static uint64_t mm_cdf_count(mm_cdf *c, uint64_t min_bytes) {
  const uint64_t n = mm_cdf_get(c, c->w);
  if (c->ok && n > (c->size - c->pos) / min_bytes) c->ok = false;
  return c->ok ? n : 0;
}

static void mm_cdf_name(mm_cdf *c) {
  mm_cdf_skip(c, mm_cdf_count(c, 1), 1);
}

/* A name into out (at most size - 1 bytes kept, the rest skipped). */
static void mm_cdf_name_into(mm_cdf *c, char *out, size_t size) {
  const uint64_t n = mm_cdf_count(c, 1);
  const uint64_t keep = n < size - 1 ? n : size - 1;
  out[0] = '\0';
  if (!c->ok) return;
  if (keep && fread(out, 1, (size_t)keep, c->f) != (size_t)keep) {
    c->ok = false;
    return;
  }
  out[keep] = '\0';
  c->pos += keep;
  const uint64_t rest = (n + 3) / 4 * 4 - keep; /* the name's tail and its padding */
  if (rest > c->size - c->pos || fseeko(c->f, (off_t)(c->pos + rest), SEEK_SET) != 0) {
    c->ok = false;
    return;
  }
  c->pos += rest;
}

/* a * b, or UINT64_MAX where it does not fit */
static uint64_t mm_cdf_mul(uint64_t a, uint64_t b) {
  return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t mm_cdf_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Bytes of one value of an external type; 0 for no such type. */
static uint64_t mm_cdf_type_size(uint64_t type) {
  static const unsigned char size[] = {0, 1, 1, 2, 4, 4,
                                       8, 1, 2, 4, 8, 8}; /* NC_BYTE .. NC_UINT64 */
  return type < sizeof size ? size[type] : 0;
}

/* A list: tag then count, or ABSENT (two zeros). */
static uint64_t mm_cdf_list(mm_cdf *c, uint64_t tag, uint64_t min_bytes) {
  const uint64_t t = mm_cdf_get(c, 4);
  const uint64_t n = mm_cdf_count(c, min_bytes);
  if (c->ok && t != tag && !(t == 0 && n == 0)) c->ok = false;
  return n;
}

static void mm_cdf_attributes(mm_cdf *c) {
  const uint64_t n = mm_cdf_list(c, 0x0C, 12); /* NC_ATTRIBUTE */
  for (uint64_t a = 0; c->ok && a < n; a++) {
    mm_cdf_name(c);
    const uint64_t size = mm_cdf_type_size(mm_cdf_get(c, 4));
    if (!size) c->ok = false;
    mm_cdf_skip(c, mm_cdf_get(c, c->w), size);
  }
}

mm_err mm_io_check_classic(const char *path) {
  MM_CHECK(mm_io_check_file_kind(path));
  /* a name that is no file here is refused with the reason, before netCDF
   * says less */
  FILE *f = fopen(path, "rb");
  MM_REQUIRE(f, MM_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  unsigned char magic[4];
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || fread(magic, 1, 4, f) != 4 ||
      memcmp(magic, "CDF", 3) != 0 || (magic[3] != 1 && magic[3] != 2 && magic[3] != 5)) {
    fclose(f);
    return MM_OK; /* not classic */
  }
  mm_cdf c = {f, 4, (uint64_t)st.st_size, magic[3] == 5 ? 8 : 4, true};
  /* numrecs; all ones: "streaming", a count the header does not give */
  const uint64_t numrecs = mm_cdf_get(&c, c.w);
  const bool streaming = numrecs == (c.w == 8 ? UINT64_MAX : 0xFFFFFFFFu);
  const uint64_t ndims = mm_cdf_list(&c, 0x0A, 8); /* NC_DIMENSION */
  /* the lengths are kept (0: the record dimension); a count beyond any
   * real file's is a damaged header, not an allocation to try */
  enum { MM_CDF_DIMS_MAX = 1 << 20 };
  if (ndims > MM_CDF_DIMS_MAX) c.ok = false;
  uint64_t *dim_len = c.ok ? calloc(ndims ? ndims : 1, sizeof *dim_len) : NULL;
  for (uint64_t d = 0; c.ok && dim_len && d < ndims; d++) {
    mm_cdf_name(&c);
    dim_len[d] = mm_cdf_get(&c, c.w); /* length */
  }
  mm_cdf_attributes(&c);                            /* global */
  const uint64_t nvars = mm_cdf_list(&c, 0x0B, 24); /* NC_VARIABLE */
  /* Where the data ends: a fixed variable's at begin + its bytes; a record
   * variable's at begin + (numrecs - 1) recsize + the bytes of one record,
   * recsize the record variables' record bytes, each padded to 4 unless
   * there is one record variable (the format's rule). recsize is common to
   * all, so the farthest record end is that of the largest begin + bytes. */
  uint64_t fixed_end = 0, rec_end = 0, rec_padded = 0, rec_bytes = 0, nrec = 0;
  char fixed_name[64] = "", rec_name[64] = "";
  for (uint64_t v = 0; c.ok && dim_len && v < nvars; v++) {
    char name[64];
    mm_cdf_name_into(&c, name, sizeof name);
    const uint64_t nd = mm_cdf_count(&c, (uint64_t)c.w);
    uint64_t n = 1;
    bool record = false;
    for (uint64_t d = 0; c.ok && d < nd; d++) {
      const uint64_t id = mm_cdf_get(&c, c.w);
      if (id >= ndims)
        c.ok = false;
      else if (dim_len[id] == 0 && d == 0)
        record = true;
      else
        n = mm_cdf_mul(n, dim_len[id]);
    }
    mm_cdf_attributes(&c);
    const uint64_t size = mm_cdf_type_size(mm_cdf_get(&c, 4));
    if (!size) c.ok = false;
    const uint64_t bytes = mm_cdf_mul(n, size); /* fixed: all; record: one record */
    mm_cdf_get(&c, c.w);                        /* vsize (the header's, capped when large) */
    const uint64_t end = mm_cdf_add(mm_cdf_get(&c, magic[3] == 1 ? 4 : 8), bytes); /* begin + */
    if (!c.ok) break;
    if (record) {
      nrec++;
      rec_bytes = mm_cdf_add(rec_bytes, bytes);
      rec_padded = mm_cdf_add(rec_padded, mm_cdf_add(bytes, 3) / 4 * 4);
      if (end > rec_end) rec_end = end, snprintf(rec_name, sizeof rec_name, "%s", name);
    } else if (end > fixed_end) {
      fixed_end = end, snprintf(fixed_name, sizeof fixed_name, "%s", name);
    }
  }
  fclose(f);
  free(dim_len);
  MM_REQUIRE(dim_len || !c.ok, MM_ERR_RUN, "%s: out of memory reading its classic NetCDF header",
             path);
  MM_REQUIRE(c.ok, MM_ERR_INPUT,
             "%s: damaged classic NetCDF header (a count or size that the file cannot hold, "
             "at byte %llu)",
             path, (unsigned long long)c.pos);
  if (nrec && numrecs > 0 && !streaming)
    rec_end = mm_cdf_add(rec_end, mm_cdf_mul(numrecs - 1, nrec == 1 ? rec_bytes : rec_padded));
  else
    rec_end = 0; /* no record written, or a count the header does not give */
  const bool rec_last = rec_end > fixed_end;
  const uint64_t end = rec_last ? rec_end : fixed_end;
  /* libnetcdf reads the data a cut file lacks as zeros, or as the fill
   * value, without an error */
  MM_REQUIRE(end <= c.size, MM_ERR_INPUT,
             "%s: cut short: its header puts the data of variable '%s' up to byte %llu, and the "
             "file ends at byte %llu (a copy or a download that did not finish?)",
             path, rec_last ? rec_name : fixed_name, (unsigned long long)end,
             (unsigned long long)c.size);
  return MM_OK;
}

mm_err mm_io_shape(const mm_config *cfg, MPI_Comm comm, mm_grid *g) {
  memset(g, 0, sizeof *g);
  g->nx = (int)cfg->nx;
  g->ny = (int)cfg->ny;
  g->nz = (int)cfg->nz;
  g->cart = comm;
  MM_MPI(MPI_Comm_rank(comm, &g->rank));
  MM_MPI(MPI_Comm_size(comm, &g->nranks));
  return MM_OK;
}
