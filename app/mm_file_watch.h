/* A watch over the file writes that the netCDF/HDF5 libraries make through
 * MPI-IO. Parallel HDF5 1.10 does not recover from a write that fails on
 * some ranks only (a metadata write at a flush or a close, on a file system
 * that fails a write inside the room reserved for it, or one filled where
 * nothing was reserved): the rank that failed skips a barrier the others
 * wait in, and every rank waits for ever (docs/reliability.md, "A write that
 * fails part-way"). minimodel wraps those calls (MPI_File_write_at,
 * MPI_File_write_at_all, MPI_File_set_size, MPI_File_sync; MPI_File_open and
 * MPI_File_close, which also name the file) through MPI's profiling interface, and
 * sees the failure where it happens, inside the libraries: it starts a
 * watch on that rank. A case that has not ended
 * MINIMODEL_IO_FAIL_WAIT seconds after the failure (default
 * MM_FILE_WATCH_FAIL_S; mm_file_watch_settle) is taken to be stuck: the
 * rank says so, removes what the case leaves half-written, releases the
 * case's lock and exits with status 1, and
 * mpirun ends the other ranks. A case whose ranks agree on the failure ends
 * as before, with the failure's own message. A stop signal during the
 * wait ends the rank MM_FILE_WATCH_STOP_S (0.5 s) after it, with 128 + N,
 * also with no time limit (0).
 *
 * A call that fails inside MPI-IO itself on one rank can also leave the
 * ranks waiting in the open: Open MPI 4.1's MPI_File_open, where rank 0
 * cannot make its lock file `<file>-<job>-<pid>.lock` (a file system full at
 * that moment), returns to its own clean-up while the other ranks wait in a
 * barrier. Neither returns, so no outcome can be seen; an open or a close
 * that has not returned after MINIMODEL_OPEN_TIMEOUT seconds (default
 * MM_FILE_WATCH_OPEN_S) ends the rank the same way. So does a write, a
 * resize or a sync that has not returned after MINIMODEL_WRITE_TIMEOUT
 * seconds (default MM_FILE_WATCH_WRITE_S: a file system that stalls, such
 * as a hard-mounted NFS whose server is gone), and a stop signal (Ctrl-C)
 * during one ends the rank 5 s after it (MM_FILE_WATCH_WRITE_STOP_S) where
 * it has not returned, 0.5 s for an open or a close. One thread, made at the
 * first such call and kept, watches them all. The wrappers have no argument
 * of their own, so the watch is one per process (static state in
 * app/file_watch.c). */
#ifndef MM_FILE_WATCH_H
#define MM_FILE_WATCH_H

#include <mpi.h>

#include "mm_config.h"
#include "mm_error.h"
#include "mm_outputs.h"
#include "mm_settings.h"

/* seconds a case may take to end after a failed MPI-IO call */
#define MM_FILE_WATCH_FAIL_S 60.0
/* seconds an open or a close may take */
#define MM_FILE_WATCH_OPEN_S 600.0
/* seconds one write, resize or sync of a file may take */
#define MM_FILE_WATCH_WRITE_S 600.0

/* Set the watch up (once, right after MPI_Init; collective over comm,
 * MPI_COMM_WORLD); it watches nothing until mm_file_watch_set. */
void mm_file_watch_install(MPI_Comm comm);

/* The watch's limits, from the settings (before any file is opened):
 * MINIMODEL_IO_FAIL_WAIT, MINIMODEL_OPEN_TIMEOUT and MINIMODEL_WRITE_TIMEOUT, 0 no time limit (a
 * watch for a stop signal still). */
void mm_file_watch_set(const mm_settings *env);

/* The case that runs now: its configuration (its files, by which the
 * watch removes a restart or crash file's .tmp and the MPI-IO lock files
 * of this process before it ends the rank) and its lock, which it
 * releases; NULL, NULL: none (before the lock is released). */
void mm_file_watch_case(const mm_config *cfg, mm_output_lock *lock);

/* What the case was doing, told by the message of a watch that ends the
 * rank meanwhile (a clause; NULL or "" for nothing): set when a case ends
 * for a blow-up or a stop signal, whose own message the rank's end would
 * otherwise leave unsaid, before the crash file, the restart at the stop
 * and the history's close are written; cleared by mm_file_watch_case. */
void mm_file_watch_during(const char *what);

/* After the ranks agreed on a case's end: every rank has left the
 * libraries' calls, so a failure before it was dealt with, and a watch
 * started by one ends without ending the rank. */
void mm_file_watch_settle(void);

#endif
