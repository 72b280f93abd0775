/* The stop signals, SIGTERM, SIGINT, SIGHUP, SIGQUIT, those batch systems
 * send before a kill (SIGUSR1, SIGUSR2, SIGXCPU, SIGALRM) and a failing
 * power supply's (SIGPWR): a
 * handler records the signal, and the time
 * loop (app/run.c) stops every rank at the next step boundary, closes the
 * files and ends with exit status 128 + N (docs/reliability.md, "Signals"). */
#ifndef MM_SIGNAL_H
#define MM_SIGNAL_H

/* Hold the stop signals back (block them in the calling thread, and so in
 * the threads it creates) until mm_signal_install: called before MPI_Init,
 * which takes a fraction of a second to a few seconds, so that a signal in
 * that time stops the run with its line and status instead of killing the
 * process with no word. */
void mm_signal_defer(void);

/* Install the handlers (after MPI_Init, which may install its own), then
 * deliver a signal that mm_signal_defer held back. A
 * signal that is ignored on entry (nohup, a background job) stays ignored.
 * Further signals change nothing: one signal often arrives twice (timeout(1)
 * sends it to the command and to its process group, a terminal's Ctrl-C
 * reaches mpirun and the ranks). SIGKILL ends a stop that hangs. */
void mm_signal_install(void);

/* The first of these signals received by this process, 0 when none. */
int mm_signal_received(void);

/* "SIGTERM", "SIGINT", ... for each stop signal (otherwise "a signal"). */
const char *mm_signal_name(int signo);

/* Before MPI_Finalize: end the process with `status` should it still be
 * running 0.25 s after a stop signal, one received already (a stop by a
 * signal) or one that comes while MPI ends (after the last step, the run
 * done). A signal to mpirun makes Open MPI 4.1 send the ranks SIGTERM, and
 * SIGKILL 1 s after it (odls_base_sigkill_timeout); meanwhile MPI_Finalize
 * waits for an answer from the launcher that is ending, which never comes:
 * a run that had ended was killed. */
void mm_signal_exit_guard(int status);

#endif
