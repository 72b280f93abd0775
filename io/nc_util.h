/* Internal helpers of the io library: netCDF error checking, agreement of
 * the ranks on an error, file-name building, checks made before a collective
 * open. */
#ifndef MM_NC_UTIL_H
#define MM_NC_UTIL_H

#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <stddef.h>

#include "mm_config.h"
#include "mm_error.h"
#include "mm_grid.h"
#include "mm_io.h"

/* Longest file name built from output.dir and run.name, with a suffix. */
#define MM_IO_PATH_MAX (2 * MM_STR_MAX + 64)

/* Room (bytes) left for HDF5 metadata when checking free space. */
#define MM_IO_SPACE_MARGIN (1024.0 * 1024.0)

/* Value written on land cells of the history file: NetCDF's default fill
 * for doubles, 9.96920996838687e+36. */
#define MM_IO_FILL NC_FILL_DOUBLE

/* Record a failed netCDF call: message "<path>: <what>: <nc_strerror>".
 * Returns code. */
MM_NODISCARD mm_err mm_nc_fail(mm_err code, const char *src_file, int src_line, const char *path,
                               const char *what, int status);

/* Record a failed open of path (status from nc_open): where another
 * process holds an exclusive flock(2) on the regular file, as HDF5's serial
 * driver takes for a file it has open for writing (a program appending to
 * it through netCDF or HDF5; not a minimodel run, which writes through
 * MPI-IO and takes no such lock), says so, since netCDF says only "HDF
 * error"; otherwise mm_nc_fail with `what`. Returns code. */
MM_NODISCARD mm_err mm_io_open_fail(mm_err code, const char *src_file, int src_line,
                                    const char *path, const char *what, int status);

/* Record a failed create of path (status from nc_create_par), with its
 * cause where the file system tells it: MPI-IO and HDF5 report most failures
 * to create a file as "Permission denied". Names a path that is a directory,
 * a file system without a free inode or without free space, a directory or
 * file that is not writable; otherwise nc_strerror(status). Returns code. */
MM_NODISCARD mm_err mm_io_create_fail(mm_err code, const char *src_file, int src_line,
                                      const char *path, int status);

/* The dimensions of variable var (called name in messages) of an open file
 * must be called want[0], ..., want[nd - 1] (nd <= 3), in this order, when
 * it has nd of them: a file in another order, e.g. (x, y, z) on a cubic
 * grid, would be read transposed. MM_ERR_INPUT naming the order found and
 * the one expected otherwise. */
MM_NODISCARD mm_err mm_io_check_dim_names(int nc, const char *path, int var, const char *name,
                                          int nd, const char *const *want);

/* Variable var (called name in messages) of an open file must hold its
 * values as they are: not packed with the CF attributes scale_factor or
 * add_offset, which the netCDF library does not apply (the stored integers
 * would be read as the values); scale_factor = 1 and add_offset = 0 change
 * nothing and pass. MM_ERR_INPUT naming the attribute. */
MM_NODISCARD mm_err mm_io_check_unpacked(int nc, const char *path, int var, const char *name);

/* What mm_nc_att_text found. */
typedef enum {
  MM_NC_TEXT_READ = 0,  /* read */
  MM_NC_TEXT_ABSENT,    /* no such attribute */
  MM_NC_TEXT_NOT_TEXT,  /* another type, or several strings */
  MM_NC_TEXT_NO_MEMORY, /* its copy could not be allocated */
  MM_NC_TEXT_FAILED     /* the library failed to read it: *status */
} mm_nc_text;

/* Attribute att of variable var (NC_GLOBAL for the file) of an open file as
 * text: NC_CHAR, or one NC_STRING as netCDF4-python writes text that is not
 * ASCII. *text (to free) holds *n bytes, NULs inside kept and those at its
 * end dropped, then a NUL; NULL unless MM_NC_TEXT_READ. *status: the
 * library's status of a failed read, NC_NOERR otherwise. */
mm_nc_text mm_nc_att_text(int nc, int var, const char *att, char **text, size_t *n, int *status);

/* The same into out (size bytes): MM_NC_TEXT_READ only for a text of at
 * most size - 1 bytes with no NUL inside (those at its end dropped); one
 * too long or with a NUL inside is MM_NC_TEXT_NOT_TEXT. out is "" unless
 * read. */
mm_nc_text mm_nc_att_text_in(int nc, int var, const char *att, char *out, size_t size, int *status);

/* A netCDF call made by this rank alone (define mode, inquiries, serial
 * files): skipped once err is set, else on failure err = code with a message
 * "<path>: <what>: <nc_strerror>" recorded at this file and line. */
#define MM_NC_LOCAL(err, code, path, what, call)                                                   \
  do {                                                                                             \
    if ((err) == MM_OK) {                                                                          \
      int mm_nc_status_ = (call);                                                                  \
      if (mm_nc_status_ != NC_NOERR)                                                               \
        (err) = mm_nc_fail((code), __FILE__, __LINE__, (path), (what), mm_nc_status_);             \
    }                                                                                              \
  } while (0)

/* A collective netCDF call: made even after an earlier local failure, so
 * that every rank makes the same sequence of collective calls; the first
 * failure is kept in err. Follow a run of them by mm_agree (mm_error.h). */
#define MM_NC_COLL(err, code, path, what, call)                                                    \
  do {                                                                                             \
    int mm_nc_status_ = (call);                                                                    \
    if (mm_nc_status_ != NC_NOERR && (err) == MM_OK)                                               \
      (err) = mm_nc_fail((code), __FILE__, __LINE__, (path), (what), mm_nc_status_);               \
  } while (0)

/* A failed write to path in directory dir: message "<path>: <what>:
 * <nc_strerror>", and where this rank can see why (netCDF reports an HDF5
 * error only as "HDF error"), " (...)": the file at the file-size limit,
 * the file system full. Returns MM_ERR_RUN. */
MM_NODISCARD mm_err mm_nc_write_fail(const char *src_file, int src_line, const char *path,
                                     const char *dir, const char *what, int status);

/* A collective netCDF write, as MM_NC_COLL, its failure recorded by
 * mm_nc_write_fail. */
#define MM_NC_WRITE(err, path, dir, what, call)                                                    \
  do {                                                                                             \
    int mm_nc_status_ = (call);                                                                    \
    if (mm_nc_status_ != NC_NOERR && (err) == MM_OK)                                               \
      (err) = mm_nc_write_fail(__FILE__, __LINE__, (path), (dir), (what), mm_nc_status_);          \
  } while (0)

/* A communicator for parallel files: the ranks of cart, in the same order,
 * without its Cartesian topology (collective; free with MPI_Comm_free).
 * Open MPI's OMPIO (the default MPI-IO of Open MPI 4.1 up to 4.1.6) can
 * corrupt collective HDF5 writes on a communicator with a Cartesian topology
 * (open-mpi/ompi#12718; seen here with 3 ranks); a plain one is not affected. */
MM_NODISCARD mm_err mm_io_comm(MPI_Comm cart, MPI_Comm *plain);

/* "<dir>/<name><suffix>" into path (MM_IO_PATH_MAX bytes). */
MM_NODISCARD mm_err mm_io_path(char *path, const mm_config *cfg, const char *suffix);

/* Before creating path: dir exists, is a directory and is writable.
 * MM_ERR_RUN naming path and dir otherwise. */
MM_NODISCARD mm_err mm_io_check_dir(const char *dir, const char *path);

/* File descriptors a rank must have free before it opens a file through
 * MPI-IO and HDF5 (mm_io_check_inodes), seen on 2 ranks (Open MPI 4.1,
 * HDF5 1.10): the first open of a process loads Open MPI's I/O components
 * and takes one more than a later one, made while the history is open. */
#define MM_IO_FDS_FIRST 4
#define MM_IO_FDS_LATER 3

/* Before path in dir is created or opened through MPI-IO (collective):
 * every rank checks that it may open `fds` more files (MM_IO_FDS_FIRST or
 * _LATER; under an open-file limit below 4096), rank 0 that the file system has the inodes
 * that takes (3 to create: the file, Open MPI's lock file beside it, one
 * more while it opens; 2 to open), every rank before a create that its
 * file-size limit (ulimit -f) is not below 1 KiB, and the ranks agree. With the file made
 * and no inode left for the lock, or one rank short of descriptors, the
 * ranks were left waiting for each other in the libraries' open. A
 * read-only file system, or one without a count of inodes, passes.
 * MM_ERR_RUN naming path and the inodes or descriptors free. */
MM_NODISCARD mm_err mm_io_check_inodes(MPI_Comm comm, const char *dir, bool create,
                                       const char *path, int fds);

/* Before writing about `bytes` more to path in dir: rank 0 checks that the
 * file system has that much space free, and the ranks agree (collective).
 * HDF5 writes its metadata from rank 0 alone, and a flush that fails there
 * (a full disk) leaves the other ranks waiting in MPI_File_sync: refusing
 * beforehand keeps a full disk from hanging the run. MM_ERR_RUN naming path,
 * the space needed and the space free. */
MM_NODISCARD mm_err mm_io_check_space(MPI_Comm comm, const char *dir, double bytes,
                                      const char *path);

/* Before writing about `bytes` more to path, a file that is open for writing
 * (collective): rank 0 reserves that room past the file's end with
 * posix_fallocate, and the ranks agree. A file system that fills up (another
 * job, a quota) or a file-size limit then refuses the reservation (ENOSPC,
 * EDQUOT, EFBIG), before the netCDF/HDF5 libraries are entered, instead of
 * refusing a write inside one of their collective calls: parallel HDF5 1.10
 * cannot recover from that (a rank that fails leaves the others in the
 * collective, and a file whose close fails leaves a dangling id that crashes
 * HDF5's clean-up at MPI_Finalize; docs/reliability.md). On refusal the file
 * is cut back to its size before, so it stays as the last completed write
 * left it: MM_ERR_RUN naming path, the room and the reason. What is left of
 * the room past the end of the data is cut by HDF5 at its next flush (when
 * its end of allocation moved) or by mm_io_trim after the close. A file
 * system that cannot reserve (EOPNOTSUPP, ...) is written without one.
 * MINIMODEL_FAULT_NO_RESERVE (mm_settings.h) turns the reservation off.
 * With `seen` (a file written in place, the history: zeroed before its
 * first reservation), the file at path is also checked to be the one the
 * first reservation found: another file moved to its name is MM_ERR_RUN,
 * not grown by the reservation while the records go on into the file the
 * libraries hold open. (A file cut shorter is not found: the libraries'
 * next write grows it back, with a hole where the data was.) */
typedef struct {
  bool known;                  /* the first reservation has been made */
  unsigned long long dev, ino; /* the file's identity */
} mm_io_seen;
MM_NODISCARD mm_err mm_io_reserve(MPI_Comm comm, const mm_settings *env, const char *path,
                                  double bytes, mm_io_seen *seen);

/* Whether the file at path can no longer be written because its file
 * system is read-only, as rank 0 of comm sees it (collective): one that
 * turned so under the run (ext4 after an error, errors=remount-ro, which
 * sets no mount flag: the file's open to write is refused, EROFS); false
 * where that cannot be told. */
bool mm_io_read_only(MPI_Comm comm, const char *path);

/* After closing path, written with mm_io_reserve (collective): rank 0 cuts
 * the file back to the end its HDF5 superblock records, where room reserved
 * for the last write is left past it. HDF5 cuts it itself at a flush only
 * when its end of allocation moved, not after a write that only replaced
 * data. With `seen` (mm_io_reserve's), a file at path that is not the one
 * the reservations found (another moved to its name) is left as it is. */
MM_NODISCARD mm_err mm_io_trim(MPI_Comm comm, const char *path, const mm_io_seen *seen);

/* The configuration hash as the restart and history files carry it
 * (attribute config_hash): mm_config_solution_hash as 16 lower-case hex
 * digits and a NUL. */
void mm_io_hash_text(const mm_config *cfg, char text[17]);

/* Text attributes of a variable: name, value pairs, NULL-terminated; a
 * netCDF status. */
int mm_io_put_texts(int nc, int var, const char *const *attributes);
/* Define a variable and its text attributes; a netCDF status. */
int mm_io_def_var(int nc, const char *name, nc_type type, int ndims, const int *dims, int *var,
                  const char *const *attributes);

/* Creation time, ISO 8601 UTC, taken on rank 0 so that all ranks agree
 * (collective). */
MM_NODISCARD mm_err mm_io_creation_time(MPI_Comm comm, int rank, char text[32]);

/* origin's version, or "unknown". */
const char *mm_io_origin_version(const mm_io_origin *origin);
/* A line of a file's `history` attribute, malloc'd (NULL: out of memory):
 * "<created>: <what> minimodel <version>[: <command line>]". */
char *mm_io_history_line(const char *created, const char *what, const mm_io_origin *origin);

/* Before reading an input file: rank 0 reads its whole metadata (every
 * dimension, variable and attribute, with the attributes' values) in a child
 * process, within mm_io_read_timeout(path), and the ranks agree (collective).
 * A damaged file on which the netCDF/HDF5 libraries crash or loop (fuzzing
 * found both in libhdf5 1.10: H5HG_read on a damaged global heap) is refused
 * with MM_ERR_INPUT and a message, instead of ending the run with a signal
 * or a hang. A file the libraries merely refuse passes: the read that
 * follows says why. */
MM_NODISCARD mm_err mm_io_probe(MPI_Comm comm, const mm_settings *env, const char *path);

/* A history whose records after a restart step were being removed (its
 * superblock at the start of the file, `before` bytes long before the
 * removal) when the process was killed: HDF5 cuts the file to its new end
 * and then rewrites the superblock, and a kill between the two left a file
 * shorter than its superblock says, which nothing reads. Where path is
 * that (shorter than the superblock's end, which is not beyond `before`),
 * it is lengthened to that end with zeros: the metadata written before the
 * cut describe records the file holds, and none of them lies past it.
 * MM_ERR_RUN where it cannot be lengthened; MM_OK otherwise, also where
 * there is nothing to undo. */
MM_NODISCARD mm_err mm_io_undo_cut(const char *path, long long before);

/* Before a parallel open of path: it exists, is readable, is an HDF5
 * (NetCDF-4) file and is not shorter than its superblock says.
 * MM_ERR_INPUT naming the reason otherwise. */
MM_NODISCARD mm_err mm_io_check_hdf5(const char *path);

/* Refuse (MM_ERR_INPUT) a classic-format file (CDF-1, CDF-2, CDF-5) whose
 * header declares more dimensions, attributes, variables, dimension ids or
 * attribute values than the file holds bytes: libnetcdf allocates, and
 * touches, what the header declares before it refuses such a file (a few
 * hundred hostile bytes took 17 GB and 40 s; found by fuzz/fuzz_initial).
 * MM_OK for a plausible header and for any file that is not classic; a
 * path that cannot be opened is refused with the reason, and so is one with
 * "://", which netCDF would take for a URL (MM_NOT_A_URL). */
MM_NODISCARD mm_err mm_io_check_classic(const char *path);

/* A grid of cfg's global sizes (nx, ny, nz) on comm (cart = comm, rank),
 * without a decomposition, levels or land mask, nothing allocated: enough
 * for the readers when they check a file's metadata without reading data. */
MM_NODISCARD mm_err mm_io_shape(const mm_config *cfg, MPI_Comm comm, mm_grid *g);

#endif
