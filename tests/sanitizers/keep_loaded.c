/* keep_loaded.c: linked into every executable of the asan build
 * (MINIMODEL_KEEP_LOADED, cmake/KeepLoaded.cmake), never into a release.
 *
 * Open MPI unloads its MCA components (dlclose) in MPI_Finalize, before
 * LeakSanitizer looks for leaks at the exit. The fast unwinder's record of
 * where a block was allocated then holds addresses in libraries no longer
 * mapped, which the suppressions (tests/reliability/lsan.supp) cannot name;
 * the slow unwinder, which reaches past them, costs about a second at every
 * start of a process. An executable's own definition of dlclose comes first
 * in the search for the symbol, so every dlclose of the process lands here
 * and unloads nothing: the fast unwinder's stacks name the components
 * (Open MPI's mca_*.so, PMIx's pmix_mca_*.so, hwloc's plugins;
 * docs/reliability.md, "Sanitizer build"). Nothing in minimodel calls
 * dlclose. */
int dlclose(void *handle);

int dlclose(void *handle) {
  (void)handle;
  return 0; /* success, as the C library's: the library stays mapped */
}
