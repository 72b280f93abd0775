/* The settings a run takes from its environment: every MINIMODEL_* variable
 * a user or a test may set, read once at start-up (mm_settings_read, called
 * by main) and carried in each case's configuration (mm_config.env), so that
 * nothing else reads the environment and no setting changes during a run.
 * A zeroed mm_settings is "nothing set": the defaults. The variables for
 * users are listed by `minimodel --help`; docs/configuration.md
 * ("Environment") documents all of them. */
#ifndef MM_SETTINGS_H
#define MM_SETTINGS_H

#include <stdbool.h>
#include <stdio.h>

#include "mm_error.h"

/* A value as written (text settings are checked where they are used, with
 * a message naming the variable). */
#define MM_SETTING_MAX 64
/* OpenMP threads per rank at most (OMP_NUM_THREADS). */
#define MM_MAX_THREADS 1024
/* A path setting. */
#define MM_SETTING_PATH_MAX 1024
/* MINIMODEL_CUDA_TILE_LEVELS at most (MM_GPU_TILE_K of mm_gpu_kernels.h) */
#define MM_SETTING_TILE_LEVELS_MAX 32

/* A yes/no setting that may be left to the program. */
typedef enum { MM_ASK_AUTO = 0, MM_ASK_OFF, MM_ASK_ON } mm_ask;

/* Fault injection for the reliability tests (tests/reliability,
 * docs/reliability.md); none is meant for production runs. Steps are >= 1,
 * 0 = off.
 *   MINIMODEL_FAULT_RANK=R            the rank where a fault happens (default 0)
 *   MINIMODEL_FAULT_NAN_STEP=N        after step N, a NaN in temp at the first wet
 *                                     cell (k = 0) of rank R's block (app/run.c)
 *   MINIMODEL_FAULT_ALLOC=WHAT        on rank R an allocation fails: `model` (the
 *                                     state in mm_model_create) or `last_good`
 *                                     (the copy of the last good state, app/run.c)
 *   MINIMODEL_FAULT_OPEN=WHAT         on rank R a file cannot be opened: `history`,
 *                                     `restart` (written) or `initial` (read):
 *                                     that rank alone gets a path that does not
 *                                     exist (app/run.c)
 *   MINIMODEL_FAULT_SOLVE_STEP=N      the tridiagonal solve of step N fails on
 *                                     rank R alone (model/mm_model.c)
 *   MINIMODEL_FAULT_MPI_STEP=N        an MPI call of step N fails on every rank
 *                                     (an MPI_Allreduce of count -1:
 *                                     MPI_ERR_COUNT; model/mm_model.c)
 *   MINIMODEL_FAULT_HALO_STEP=N       the first send of step N's halo exchange
 *                                     fails on rank R alone (a count of -1:
 *                                     MPI_ERR_COUNT; model/mm_halo.c)
 *   MINIMODEL_FAULT_KILL_IN_RESTART=N rank R raises SIGKILL in the middle of the
 *                                     N-th restart write of the run: the .tmp
 *                                     file exists, half written, not yet renamed
 *                                     (app/run.c counts, io/restart.c dies)
 *   MINIMODEL_FAULT_NO_RESERVE=1      no file space is reserved before a write
 *                                     (io/nc_util.c, mm_io_reserve), so that a
 *                                     full disk or a file-size limit makes the
 *                                     write itself fail, inside netCDF/HDF5
 *   MINIMODEL_FAULT_DEVICE_OP=N       the N-th call of a fallible operation of the
 *                                     emulated device (model/mm_device_emulated.c)
 *                                     fails on rank R (R counted among the ranks
 *                                     of its node), as a device error would
 *   MINIMODEL_FAULT_READ_HANG=WHAT    on rank R a read never ends, as on a damaged
 *                                     file that libhdf5 loops on: `history` (the
 *                                     continued run's check of the history it
 *                                     appends to, made by rank 0, io/history.c)
 *   MINIMODEL_FAULT_SIGNAL_STEP=N     rank R raises SIGTERM at the end of step N,
 *                                     before the ranks agree on the step's
 *                                     errors and signals (app/run.c): a stop
 *                                     after a step chosen by the test
 *   MINIMODEL_FAULT_SIGNAL_LAUNCHER=1 rank R sends SIGINT to the launcher (mpirun)
 *                                     once its cases are done, before MPI ends
 *                                     (app/main.c): a signal too late to stop
 *                                     the run, while MPI_Finalize waits for
 *                                     the launcher that is ending
 *   MINIMODEL_FAULT_SIGNAL_IN_INIT=N  every process raises signal N before
 *                                     MPI_Init (read by app/main.c, not here:
 *                                     it comes before the settings are read) */
typedef struct {
  int rank;                       /* MINIMODEL_FAULT_RANK */
  long nan_step;                  /* MINIMODEL_FAULT_NAN_STEP */
  char alloc[MM_SETTING_MAX];     /* MINIMODEL_FAULT_ALLOC: model, last_good; "" none */
  char open[MM_SETTING_MAX];      /* MINIMODEL_FAULT_OPEN: history, restart, initial; "" none */
  char read_hang[MM_SETTING_MAX]; /* MINIMODEL_FAULT_READ_HANG: history; "" none */
  long solve_step;                /* MINIMODEL_FAULT_SOLVE_STEP */
  long mpi_step;                  /* MINIMODEL_FAULT_MPI_STEP */
  long halo_step;                 /* MINIMODEL_FAULT_HALO_STEP */
  long kill_in_restart;           /* MINIMODEL_FAULT_KILL_IN_RESTART */
  bool no_reserve;                /* MINIMODEL_FAULT_NO_RESERVE=1 */
  long device_op;                 /* MINIMODEL_FAULT_DEVICE_OP */
  long signal_step;               /* MINIMODEL_FAULT_SIGNAL_STEP */
  bool signal_launcher;           /* MINIMODEL_FAULT_SIGNAL_LAUNCHER=1 */
  bool kill_now;                  /* set by the run for the restart write that dies */
} mm_faults;

typedef struct {
  char progress[MM_SETTING_MAX];      /* MINIMODEL_PROGRESS: bar, lines, off, auto; "" unset */
  char memory_limit[MM_SETTING_MAX];  /* MINIMODEL_MEMORY_LIMIT: bytes a rank may use; "" unset */
  char read_timeout[MM_SETTING_MAX];  /* MINIMODEL_READ_TIMEOUT: seconds for reading an input
                                         file, 0 = no limit; "" unset */
  char io_fail_wait[MM_SETTING_MAX];  /* MINIMODEL_IO_FAIL_WAIT: seconds a case may take to end
                                         after a file operation failed inside netCDF/HDF5, 0 = no
                                         limit (app/mm_file_watch.h); "" unset */
  char open_timeout[MM_SETTING_MAX];  /* MINIMODEL_OPEN_TIMEOUT: seconds an MPI-IO open or close
                                         may take, 0 = no limit (app/mm_file_watch.h); "" unset */
  char write_timeout[MM_SETTING_MAX]; /* MINIMODEL_WRITE_TIMEOUT: seconds one MPI-IO write, resize
                                         or sync may take, 0 = no limit (app/mm_file_watch.h); ""
                                         unset */
  char probe_helper[MM_SETTING_PATH_MAX]; /* MINIMODEL_PROBE_HELPER: the test read's program
                                             (io/probe.c); "" the default */
  bool no_graph;                          /* MINIMODEL_CUDA_GRAPH=0: GPU kernels one by one */
  bool no_kappa_in_solve; /* MINIMODEL_CUDA_KAPPA_IN_SOLVE=0: the GPU step's mixing kernel */
  bool no_tiles;          /* MINIMODEL_CUDA_TILES=0: the GPU step's horizontal kernel per cell */
  bool tile_faces;        /* MINIMODEL_CUDA_TILE_FACES=1: each face of a tile computed once */
  int tile_min_blocks;    /* MINIMODEL_CUDA_TILE_MIN_BLOCKS: 3 or 4, the CUDA tiles kernel's blocks
                             per SM (__launch_bounds__); 0 unset (MM_GPU_TILE_MIN_BLOCKS) */
  int tile_levels; /* MINIMODEL_CUDA_TILE_LEVELS: levels of a tile of that kernel, 1..32; 0 unset
                      (nz split evenly into tiles of at most 32) */
  mm_ask cuda_aware_mpi;                 /* MINIMODEL_CUDA_AWARE_MPI: 0 off, 1 on, else auto */
  char emulated_threads[MM_SETTING_MAX]; /* MINIMODEL_EMULATED_THREADS: forward, reverse */
  bool debug;                            /* MINIMODEL_DEBUG set: where an error was raised */
  mm_faults fault;
  /* set by the program, not the environment: the stop signal received so
   * far, 0 none (app/mm_signal.h); NULL where nothing records one. The test
   * read of an input file (io/probe.c) polls it, so that a stop does not
   * wait for the read's time limit. */
  int (*stop_signal)(void);
  /* set by the program: whether a launcher (mpirun, srun) started the
   * process, as its environment said before MPI_Init; a process started
   * alone (a singleton) gets the launcher variables in MPI_Init, and its
   * output goes to its own stdout, not through a launcher's */
  bool launched;
} mm_settings;

/* Read the environment into *s (every field). MM_ERR_INPUT for a value
 * longer than MM_SETTING_MAX - 1 characters. */
MM_NODISCARD mm_err mm_settings_read(mm_settings *s);

/* The shortest time limit a seconds setting takes, other than 0 (none). */
#define MM_SETTINGS_MIN_SECONDS 1.0

/* A seconds setting (read_timeout, io_fail_wait, open_timeout, write_timeout) as
 * mm_settings_read checked it: `unset` where it is not set; 0 for no limit
 * (0, or beyond any run: inf, 1e400). */
double mm_settings_seconds(const char *text, double unset);

/* Start every OpenMP thread of the rank (OMP_NUM_THREADS, OMP_STACKSIZE)
 * now, with one empty parallel region: called before any file is made. The
 * OpenMP runtime ends the process when it cannot make a thread (libgomp:
 * "Thread creation failed", exit 1); in the first region of the step, with
 * the history open, HDF5's exit handler then closed the file collectively
 * and the other ranks waited for ever. Returns the number of threads. */
int mm_settings_start_threads(void);

/* The table of every variable (markdown), for docs/configuration.md. */
void mm_settings_write_markdown(FILE *out);

/* Whether this rank is the one where faults happen. */
static inline bool mm_fault_here(const mm_settings *s, int rank) {
  return rank == s->fault.rank;
}

/* Whether `what` is the fault asked for in `value` (a fault's text setting)
 * on this rank. */
bool mm_fault_is(const mm_settings *s, const char *value, const char *what, int rank);

#endif
