#include "mm_outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mm_io.h"
#include "mm_report.h"
#include "mm_run.h"

/* A resolved path: a real directory of up to PATH_MAX and what follows. */
#define MM_PATH_TEXT (PATH_MAX + 2 * MM_STR_MAX + 64)
/* The longest absolute path of an output file: PATH_MAX less room for the
 * files that MPI-IO makes beside the one it opens (docs/reliability.md). */
#define MM_OUTPUT_PATH_MAX (PATH_MAX - 256)

/* The files a case writes in output.dir: `<run.name><suffix>`; renamed: 1
 * for those written whole as a .tmp and renamed into place (the rename
 * replaces a link that stands there), 0 for those written in place. */
static const struct {
  const char *suffix, *what;
  int renamed;
} mm_output_files[] = {
    {".nc", "history file", 0},
    {".restart.nc", "restart file", 1},
    {".restart.nc.tmp", "temporary restart file", 0},
    {".crash.nc", "crash file", 1},
    {".crash.nc.tmp", "temporary crash file", 0},
    {".timing.json", "timing file", 1},
    {".timing.json.tmp", "temporary timing file", 0},
    {".resolved.ini", "resolved configuration", 1},
    {".resolved.ini.tmp", "temporary resolved configuration", 0},
    {".lock", "lock file", 0},
    {".nc.drop", "journal of the removal of records", 0},
};
enum { MM_NOUTPUT = sizeof mm_output_files / sizeof mm_output_files[0] };
enum { MM_OUTPUT_HISTORY = 0 }; /* the history's index in mm_output_files */

/* path as an absolute path with every symbolic link, '.' and '..' resolved
 * as far as it exists (realpath of its longest existing prefix); the rest,
 * which does not exist yet (an output.dir that the run will create), is
 * appended with '.' dropped and '..' taken lexically. So `output/`,
 * `./output` and `x/../output` give the same text. */
static void mm_resolve(const char *path, char out[MM_PATH_TEXT]) {
  char head[MM_PATH_TEXT], tail[MM_PATH_TEXT] = "", real[MM_PATH_TEXT]; /* realpath: PATH_MAX */
  char cwd[PATH_MAX] = ".";
  if (path[0] != '/' && !getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
  snprintf(head, sizeof head, "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/", path);
  while (!realpath(head, real)) {
    char *slash = strrchr(head, '/');
    if (!slash || !strcmp(head, "/")) { /* nothing of it exists: as written */
      snprintf(real, sizeof real, "%s", head);
      break;
    }
    char moved[MM_PATH_TEXT];
    snprintf(moved, sizeof moved, "%s/%s", slash + 1, tail);
    snprintf(tail, sizeof tail, "%s", moved);
    if (slash == head)
      head[1] = '\0'; /* "/" */
    else
      *slash = '\0';
  }
  snprintf(out, MM_PATH_TEXT, "%s", real);
  char *save = NULL;
  for (char *c = strtok_r(tail, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    if (!strcmp(c, ".")) continue;
    if (!strcmp(c, "..")) {
      char *s = strrchr(out, '/');
      if (s == out)
        out[1] = '\0';
      else if (s)
        *s = '\0';
      continue;
    }
    const size_t used = strlen(out);
    snprintf(out + used, MM_PATH_TEXT - used, "%s%s", used && out[used - 1] == '/' ? "" : "/", c);
  }
}

/* A resolved path and the file it leads to (stat: through links), where
 * there is one: looked at once, compared many times. */
typedef struct {
  const char *path;
  bool exists;
  dev_t dev;
  ino_t ino;
} mm_file_id;

static mm_file_id mm_file_id_of(const char *path) {
  struct stat st;
  mm_file_id id = {.path = path};
  if (stat(path, &st) == 0) id.exists = true, id.dev = st.st_dev, id.ino = st.st_ino;
  return id;
}

/* Two resolved paths name one file: the same text, or (both existing) the
 * same device and inode (a hard link, a bind mount). */
static bool mm_same_id(const mm_file_id *a, const mm_file_id *b) {
  return !strcmp(a->path, b->path) ||
         (a->exists && b->exists && a->dev == b->dev && a->ino == b->ino);
}

/* The same for two paths looked at now. */
static bool mm_same_file(const char *a, const char *b) {
  const mm_file_id ia = mm_file_id_of(a), ib = mm_file_id_of(b);
  return mm_same_id(&ia, &ib);
}

void mm_output_dir_parent(const char *dir, char *parent, size_t size) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", dir);
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/')
    path[--len] = '\0';
  mm_io_dir_of(path, parent, size);
}

const char *mm_output_dir_problem(const char *dir, char *buf, size_t size) {
  struct stat st, link;
  if (stat(dir, &st) == 0) return S_ISDIR(st.st_mode) ? NULL : "exists and is not a directory";
  const int e = errno;
  if (e == ENOENT && lstat(dir, &link) == 0 && S_ISLNK(link.st_mode)) {
    char target[PATH_MAX];
    const ssize_t len = readlink(dir, target, sizeof target - 1);
    target[len > 0 ? len : 0] = '\0';
    snprintf(buf, size, "is a symbolic link to '%s', which does not exist", target);
    return buf;
  }
  if (e == ENOENT) { /* the run creates it, where it may */
    char parent[PATH_MAX];
    mm_output_dir_parent(dir, parent, sizeof parent);
    struct stat up;
    if (stat(parent, &up) != 0 || !S_ISDIR(up.st_mode)) return NULL;
    if (access(parent, W_OK | X_OK) != 0) {
      snprintf(buf, size, "cannot be created in '%s': %s", parent, strerror(errno));
      return buf;
    }
    /* the mode allows it, the file system may not: root passes access() in
     * /proc (mkdir: ENOENT) and /sys (EPERM). So make a folder of a name of
     * its own there, and remove it at once. */
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.minimodel-probe-XXXXXX", parent) >= (int)sizeof probe)
      return NULL; /* (a parent too long for a path: the run's mkdir says why) */
    if (!mkdtemp(probe)) {
      snprintf(buf, size, "cannot be created in '%s': %s", parent, strerror(errno));
      return buf;
    }
    rmdir(probe);
    return NULL;
  }
  if (e == ELOOP) return "too many levels of symbolic links (a loop of links?)";
  if (e == ENOTDIR) return "a part of the path before its last name is not a directory";
  snprintf(buf, size, "cannot be looked at: %s", strerror(e));
  return buf;
}

/* The file at path holds the text case cfg writes as its resolved
 * configuration (no more and no less: one byte past it is read). */
static bool mm_same_resolved(const char *path, const mm_config *cfg) {
  char *want = mm_run_resolved_text(cfg);
  const size_t n = want ? strlen(want) : 0;
  char *have = want ? malloc(n + 1) : NULL;
  FILE *f = have ? fopen(path, "rb") : NULL;
  const bool same = f && fread(have, 1, n + 1, f) == n && memcmp(have, want, n) == 0;
  if (f) fclose(f);
  free(have);
  free(want);
  return same;
}

/* "<dir>/<name><suffix>" into out. */
static void mm_output_path(const char *dir, const mm_config *cfg, int which,
                           char out[MM_PATH_TEXT]) {
  const int n = mm_dir_file(out, MM_PATH_TEXT, dir, cfg->run_name, mm_output_files[which].suffix);
  if (n < 0) out[0] = '\0'; /* (too long: cut, as a real path of PATH_MAX never is) */
}

/* File `which` is written in place (the history, the lock file), not made
 * anew (a .tmp: a file or link at its name removed first) or renamed into
 * place. */
static bool mm_output_in_place(int which) {
  const char *suffix = mm_output_files[which].suffix;
  const size_t len = strlen(suffix);
  return !mm_output_files[which].renamed && (len < 4 || strcmp(suffix + len - 4, ".tmp") != 0);
}

/* The file that case cfg's file `which` in the resolved directory dir
 * reaches, into out: its name, or for the history, written in place through
 * a symbolic link at its name, the file the links lead to (resolved, also
 * where it does not exist yet). */
static void mm_output_target(const char *dir, const mm_config *cfg, int which,
                             char out[MM_PATH_TEXT]) {
  char at[MM_PATH_TEXT];
  mm_output_path(dir, cfg, which, at);
  if (strcmp(mm_output_files[which].suffix, ".nc") != 0) {
    snprintf(out, MM_PATH_TEXT, "%s", at);
    return;
  }
  struct stat st;
  for (int hop = 0; hop < 40 && lstat(at, &st) == 0 && S_ISLNK(st.st_mode); hop++) {
    char target[PATH_MAX], next[MM_PATH_TEXT];
    const ssize_t len = readlink(at, target, sizeof target - 1);
    if (len <= 0) break;
    target[len] = '\0';
    char *slash = strrchr(at, '/'); /* at is absolute */
    if (slash) slash[1] = '\0';
    snprintf(next, sizeof next, "%s%s", target[0] == '/' ? "" : at, target);
    snprintf(at, sizeof at, "%s", next);
  }
  mm_resolve(at, out);
}

/* The head of a message about the value of a case's `key` ("section.key"):
 * where the value was set, "a.ini:4" or "--set" (after the case's file,
 * "b.ini: --set", where several cases run), or the case's file for a value
 * at its default. buf[MM_WHERE_MAX] holds the text where needed. */
#define MM_WHERE_MAX (PATH_MAX + 16)
static const char *value_where(const mm_config *cfg, const char *file, int n, const char *key,
                               char *buf) {
  const char *o = mm_config_origin(cfg, key);
  if (!o[0]) return file;
  if (n < 2 || strcmp(o, "--set") != 0) return o;
  snprintf(buf, MM_WHERE_MAX, "%s: %s", file, o);
  return buf;
}

/* Rank 0's part of mm_cases_check: the file names. later[2c] (initial.file)
 * and later[2c + 1] (initial.restart) are set to 1 + e for an input that an
 * earlier case e writes. */
static MM_NODISCARD mm_err mm_outputs_rank0(const mm_config *cfgs, const char *const *files, int n,
                                            int *later) {
  /* each case's directory, resolved; cases in one directory (also
   * reached otherwise: a bind mount) share the text of the first; each
   * file a case writes, its name, the file a write reaches (a history
   * through a link) and the file at its name: all found once (n cases make
   * n^2 comparisons) */
  char(*dirs)[MM_PATH_TEXT] = malloc((size_t)n * sizeof *dirs);
  mm_file_id *dir_ids = malloc((size_t)n * sizeof *dir_ids);
  mm_file_id *outs = calloc((size_t)n * MM_NOUTPUT, sizeof *outs);
  const char **targets = calloc((size_t)n * MM_NOUTPUT, sizeof *targets);
  mm_err err = dirs && dir_ids && outs && targets ? MM_OK : MM_ERROR(MM_ERR_RUN, "out of memory");
  char pa[MM_PATH_TEXT], pb[MM_PATH_TEXT], at[MM_WHERE_MAX];
  for (int c = 0; c < n && err == MM_OK; c++) {
    mm_resolve(cfgs[c].output_dir, dirs[c]);
    dir_ids[c] = mm_file_id_of(dirs[c]);
    for (int e = 0; e < c; e++)
      if (mm_same_id(&dir_ids[e], &dir_ids[c])) {
        snprintf(dirs[c], MM_PATH_TEXT, "%s", dirs[e]);
        break;
      }
    dir_ids[c].path = dirs[c];
    for (int i = 0; i < MM_NOUTPUT && err == MM_OK; i++) {
      mm_output_path(dirs[c], &cfgs[c], i, pa);
      mm_output_target(dirs[c], &cfgs[c], i, pb);
      char *path = strdup(pa), *target = strdup(pb);
      if (!path || !target) err = MM_ERROR(MM_ERR_RUN, "out of memory");
      outs[c * MM_NOUTPUT + i] = mm_file_id_of(path ? path : "");
      outs[c * MM_NOUTPUT + i].path = path ? path : "";
      targets[c * MM_NOUTPUT + i] = target ? target : "";
    }
  }
#define MM_OUT(c, i) (&outs[(c)*MM_NOUTPUT + (i)])

  /* files whose absolute path is too long for the system (or the MPI-IO
   * library, which makes files of its own beside them, and past about
   * 4080 bytes fails to create one or crashes) */
  size_t longest = 0;
  for (int i = 0; i < MM_NOUTPUT; i++)
    if (strlen(mm_output_files[i].suffix) > longest) longest = strlen(mm_output_files[i].suffix);
  for (int c = 0; c < n && err == MM_OK; c++) {
    const size_t len = strlen(dirs[c]) + 1 + strlen(cfgs[c].run_name) + longest;
    if (len > MM_OUTPUT_PATH_MAX)
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: output.dir = %s: the absolute paths of the case's files would be up to "
                     "%zu bytes long (%s/%s...), more than the %d this system's libraries take: "
                     "give a shorter output.dir or run.name, or run from a folder nearer the root",
                     value_where(&cfgs[c], files[c], n, "output.dir", at), cfgs[c].output_dir, len,
                     dirs[c], cfgs[c].run_name, MM_OUTPUT_PATH_MAX);
  }

  /* a directory where a case writes a file: found now, not when the file is
   * written (the restart file after restart_interval steps, the timing file
   * after the whole run); a symbolic link to one where the file is renamed
   * into place (the link is replaced) or made anew (a .tmp: the link is
   * removed) is no obstacle, nor a restart file's name in a case that
   * writes none */
  for (int c = 0; c < n && err == MM_OK; c++)
    for (int i = 0; i < MM_NOUTPUT && err == MM_OK; i++) {
      const char *suffix = mm_output_files[i].suffix;
      const size_t sl = strlen(suffix);
      const bool tmp = sl >= 4 && !strcmp(suffix + sl - 4, ".tmp");
      const bool restarts =
          cfgs[c].restart_at_stop ||
          (cfgs[c].restart_interval > 0 && cfgs[c].restart_interval <= cfgs[c].run_steps);
      if (!restarts && !strncmp(suffix, ".restart.nc", 11)) continue;
      struct stat st;
      mm_output_path(dirs[c], &cfgs[c], i, pa);
      const int got = mm_output_files[i].renamed || tmp ? lstat(pa, &st) : stat(pa, &st);
      /* the history is written in place, through a link at its name: what
       * is there must be a regular file (a FIFO, a device or a file of
       * /proc there left every rank but one waiting in the create) */
      const char *kind = got != 0                 ? NULL
                         : S_ISDIR(st.st_mode)    ? "a directory"
                         : i == MM_OUTPUT_HISTORY ? mm_io_file_kind(pa, &st)
                                                  : NULL;
      if (kind)
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: %s is %s, where the case writes its %s: move it away, or "
                       "give the case another run.name or output.dir",
                       files[c], pa, kind, mm_output_files[i].what);
    }

  /* two cases, one file: in one directory, the same name; a history whose
   * name is a symbolic link (written through it) to another case's file, or
   * to one of its own case's, also where that does not exist yet; files
   * written in place that exist already and are one (a hard link). A file
   * renamed into place replaces a link at its name. */
  for (int a = 0; a < n && err == MM_OK; a++)
    for (int b = a; b < n && err == MM_OK; b++)
      for (int i = 0; i < MM_NOUTPUT && err == MM_OK; i++)
        for (int j = a == b ? i + 1 : 0; j < MM_NOUTPUT && err == MM_OK; j++) {
          const char *ta = targets[a * MM_NOUTPUT + i], *tb = targets[b * MM_NOUTPUT + j];
          const char *name_a = MM_OUT(a, i)->path, *name_b = MM_OUT(b, j)->path;
          const bool in_place = mm_output_in_place(i) && mm_output_in_place(j);
          if (strcmp(ta, tb) != 0 && !(in_place && mm_same_id(MM_OUT(a, i), MM_OUT(b, j))))
            continue;
          char via[MM_PATH_TEXT + 64] = ""; /* the link that leads there */
          const char *link = strcmp(name_a, ta) ? name_a : strcmp(name_b, tb) ? name_b : NULL;
          if (link) snprintf(via, sizeof via, " (through the symbolic link %s)", link);
          if (a == b)
            err = MM_ERROR(MM_ERR_INPUT,
                           "%s: its %s and its %s would be one file, %s%s: remove the link, or "
                           "give the case another run.name or output.dir",
                           files[a], mm_output_files[i].what, mm_output_files[j].what, ta, via);
          else
            err = MM_ERROR(MM_ERR_INPUT,
                           "cases %d (%s) and %d (%s) would both write %s%s (output.dir = %s, "
                           "run.name = %s; output.dir = %s, run.name = %s): give one of them "
                           "another run.name or output.dir",
                           a + 1, files[a], b + 1, files[b], link ? ta : name_a, via,
                           cfgs[a].output_dir, cfgs[a].run_name, cfgs[b].output_dir,
                           cfgs[b].run_name);
        }

  /* a case's output.dir that is (or is under) a file another case writes:
   * the one fails when it comes to make it, after the other has run */
  for (int c = 0; c < n && err == MM_OK; c++)
    for (int e = 0; e < n && err == MM_OK; e++)
      for (int i = 0; i < MM_NOUTPUT && err == MM_OK && e != c; i++) {
        const char *file = MM_OUT(e, i)->path;
        const size_t len = strlen(file);
        if (strncmp(dirs[c], file, len) != 0 || (dirs[c][len] != '\0' && dirs[c][len] != '/'))
          continue;
        err =
            MM_ERROR(MM_ERR_INPUT,
                     "%s: output.dir = %s is %scase %d's (%s) %s (%s): give one of the cases "
                     "another run.name or output.dir",
                     value_where(&cfgs[c], files[c], n, "output.dir", at), cfgs[c].output_dir,
                     dirs[c][len] ? "under " : "", e + 1, files[e], mm_output_files[i].what, file);
      }

  /* an input that is one of the case's own outputs, or another case's */
  for (int c = 0; c < n && err == MM_OK; c++) {
    const char *const keys[2] = {"initial.file", "initial.restart"};
    const char *const inputs[2] = {cfgs[c].initial_file, cfgs[c].initial_restart};
    for (int k = 0; k < 2 && err == MM_OK; k++) {
      if (!inputs[k][0]) continue;
      char in[MM_PATH_TEXT];
      mm_resolve(inputs[k], in);
      const mm_file_id in_id = mm_file_id_of(in);
      for (int i = 0; i < MM_NOUTPUT && err == MM_OK; i++) {
        if (k == 1 && !strcmp(mm_output_files[i].suffix, ".restart.nc"))
          continue; /* continuing in place: read whole before it is replaced */
        const char *out = MM_OUT(c, i)->path;
        if (mm_same_id(&in_id, MM_OUT(c, i)))
          err = MM_ERROR(MM_ERR_INPUT,
                         "%s: %s = %s is this case's own %s (%s), which the run replaces: copy "
                         "it elsewhere first, or give the case another run.name or output.dir",
                         value_where(&cfgs[c], files[c], n, keys[k], at), keys[k], inputs[k],
                         mm_output_files[i].what, out);
      }
      /* another case's output: an earlier case's restart file as
       * initial.restart is a chain (checked when its case reads it), and so
       * is the restart file of a later case that continues from it in
       * place; any other is refused, for the user's file of that name is
       * replaced before it is read (an earlier case), or after (a later
       * one) */
      for (int e = 0; e < n && err == MM_OK; e++)
        for (int i = 0; i < MM_NOUTPUT && err == MM_OK && e != c; i++) {
          const char *out = MM_OUT(e, i)->path;
          if (!mm_same_id(&in_id, MM_OUT(e, i))) continue;
          const bool restart_file = !strcmp(mm_output_files[i].suffix, ".restart.nc");
          if (e < c && k == 1 && restart_file) {
            /* a chain: only from a case that writes restart files, or the
             * file there (of an earlier invocation) would be read */
            if (cfgs[e].restart_interval <= 0 || cfgs[e].restart_interval > cfgs[e].run_steps)
              err = MM_ERROR(MM_ERR_INPUT,
                             "%s: %s = %s is case %d's (%s) restart file, but that case writes "
                             "none (output.restart_interval = %ld, run.steps = %ld): the file "
                             "there would be an earlier run's",
                             value_where(&cfgs[c], files[c], n, keys[k], at), keys[k], inputs[k],
                             e + 1, files[e], cfgs[e].restart_interval, cfgs[e].run_steps);
            later[2 * c + k] = 1 + e;
            continue;
          }
          /* a later case that continues in place from this restart file (a
           * branch listed before the run it branches from) */
          if (e > c && k == 1 && restart_file && cfgs[e].initial_restart[0]) {
            char own[MM_PATH_TEXT];
            mm_resolve(cfgs[e].initial_restart, own);
            if (mm_same_file(own, out)) continue;
          }
          err = MM_ERROR(MM_ERR_INPUT,
                         "%s: %s = %s is case %d's (%s) %s (%s), which that case replaces %s: copy "
                         "it elsewhere first, or give one of the cases another run.name or "
                         "output.dir%s",
                         value_where(&cfgs[c], files[c], n, keys[k], at), keys[k], inputs[k], e + 1,
                         files[e], mm_output_files[i].what, out,
                         e < c ? "before this case reads it" : "after this case has read it",
                         e < c ? "; a case may continue from an earlier case's restart file "
                                 "(initial.restart)"
                               : "");
        }
    }
  }
  /* a configuration file that a case writes: its resolved configuration
   * run again is allowed where the run writes the same text into it */
  for (int f = 0; f < n && err == MM_OK; f++) {
    char in[MM_PATH_TEXT];
    mm_resolve(files[f], in);
    const mm_file_id in_id = mm_file_id_of(in);
    for (int c = 0; c < n && err == MM_OK; c++)
      for (int i = 0; i < MM_NOUTPUT && err == MM_OK; i++) {
        const char *out = MM_OUT(c, i)->path;
        if (!mm_same_id(&in_id, MM_OUT(c, i))) continue;
        const bool resolved = !strcmp(mm_output_files[i].suffix, ".resolved.ini");
        if (resolved && mm_same_resolved(files[f], &cfgs[c])) continue;
        char whose[64] = "this case's own";
        if (c != f) snprintf(whose, sizeof whose, "case %d's", c + 1);
        err =
            MM_ERROR(MM_ERR_INPUT,
                     "%s: this configuration file is %s %s (%s), which the run would replace%s: "
                     "copy it elsewhere first, or give the case another run.name or output.dir",
                     files[f], whose, mm_output_files[i].what, out,
                     resolved ? " with another text (a --set, other files, edited keys, or a file "
                                "written by another version)"
                              : "");
      }
  }

  /* an output.dir that cannot be one; one whose folder does not exist,
   * unless an earlier case's output.dir is that folder (its run makes it):
   * the run makes output.dir, not its parents, and found it only when the
   * case ran (exit 1, and --dry-run said "configuration valid") */
  for (int c = 0; c < n && err == MM_OK; c++) {
    char why[PATH_MAX + 64];
    const char *bad = mm_output_dir_problem(cfgs[c].output_dir, why, sizeof why);
    if (bad) {
      err = MM_ERROR(MM_ERR_INPUT, "%s: output.dir = %s: %s",
                     value_where(&cfgs[c], files[c], n, "output.dir", at), cfgs[c].output_dir, bad);
      break;
    }
    struct stat st;
    char parent[PATH_MAX], up[MM_PATH_TEXT];
    if (stat(cfgs[c].output_dir, &st) == 0 || errno != ENOENT) continue;
    mm_output_dir_parent(cfgs[c].output_dir, parent, sizeof parent);
    if (stat(parent, &st) == 0 || errno != ENOENT) continue;
    mm_resolve(parent, up);
    bool made = false;
    for (int e = 0; e < c && !made; e++)
      made = !strcmp(dirs[e], up);
    if (!made)
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: output.dir = %s: its folder %s does not exist (minimodel creates "
                     "output.dir, not its parents): create it first, or give another output.dir",
                     value_where(&cfgs[c], files[c], n, "output.dir", at), cfgs[c].output_dir,
                     parent);
  }
#undef MM_OUT
  for (int o = 0; outs && targets && o < n * MM_NOUTPUT; o++) {
    if (outs[o].path && outs[o].path[0]) free((char *)outs[o].path);
    if (targets[o] && targets[o][0]) free((char *)targets[o]);
  }
  free(targets);
  free(outs);
  free(dir_ids);
  free(dirs);
  return err;
}

/* Every rank reads the configuration files itself: a file replaced while
 * the ranks start (an editor's save, a script's mv) can give them other
 * cases, which then wait for each other for ever in different collectives.
 * Each case's resolved text is compared with rank 0's; the first line that
 * differs is named. Collective. */
static MM_NODISCARD mm_err mm_cases_same(const mm_config *cfgs, const char *const *files, int n,
                                         MPI_Comm comm) {
  mm_err err = MM_OK;
  for (int c = 0; c < n && err == MM_OK; c++) {
    char *mine = mm_run_resolved_text(&cfgs[c]), *first = NULL; /* first: rank 0's */
    size_t len = 0;
    err = mm_bcast_text(comm, mine, mine ? strlen(mine) : 0, &first, &len);
    if (err == MM_OK && !mine) err = MM_ERROR(MM_ERR_RUN, "out of memory");
    if (err == MM_OK && strcmp(mine, first) != 0) {
      /* the first line that differs, each side */
      const char *a = mine, *b = first;
      while (*a && *a == *b) {
        a++;
        b++;
      }
      while (a > mine && a[-1] != '\n')
        a--, b--;
      const int la = (int)strcspn(a, "\n"), lb = (int)strcspn(b, "\n");
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: read otherwise than on rank 0 ('%.*s' against '%.*s' there): was the "
                     "file changed while the run started? Every rank reads it",
                     files[c], la, a, lb, b);
    }
    free(first);
    free(mine);
    err = mm_agree(comm, err);
  }
  return err;
}

/* The files a case names by a relative path (output.dir, initial.file,
 * initial.restart) must be the same on every rank, which opens them
 * together: on a rank in another working directory (mpirun's -wdir, a
 * launcher that starts ranks elsewhere) it names another file, and the ranks
 * then waited for each other for ever in MPI-IO's collective open. Each
 * rank's resolved path is compared with rank 0's. An absolute path is the
 * same text on every rank, whatever it resolves to on each node (a /scratch
 * that is a link on one and a mount on another). Collective. */
static MM_NODISCARD mm_err mm_cases_paths_same(const mm_config *cfgs, const char *const *files,
                                               int n, MPI_Comm comm) {
  mm_err err = MM_OK;
  char at[MM_WHERE_MAX];
  for (int c = 0; c < n && err == MM_OK; c++) {
    const char *const keys[3] = {"output.dir", "initial.file", "initial.restart"};
    const char *const paths[3] = {cfgs[c].output_dir, cfgs[c].initial_file,
                                  cfgs[c].initial_restart};
    for (int k = 0; k < 3 && err == MM_OK; k++) {
      if (!paths[k][0] || paths[k][0] == '/') continue; /* (the same: mm_cases_same) */
      char mine[MM_PATH_TEXT], *first = NULL;           /* first: rank 0's */
      size_t len = 0;
      mm_resolve(paths[k], mine);
      err = mm_bcast_text(comm, mine, strlen(mine), &first, &len);
      if (err == MM_OK && strcmp(mine, first) != 0)
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: %s = %s is %s here and %s on rank 0: the ranks run in other "
                       "working directories; give an absolute path",
                       value_where(&cfgs[c], files[c], n, keys[k], at), keys[k], paths[k], mine,
                       first);
      free(first);
      err = mm_agree(comm, err);
    }
  }
  return err;
}

/* Rank 0's part of mm_streams_check. */
static MM_NODISCARD mm_err mm_streams_rank0(const mm_config *cfgs, const char *const *files,
                                            int n) {
  /* rank 0's stdout and stderr where they are files, and the launcher's
   * (where the ranks' output is forwarded to) */
  struct stat streams[4];
  const char *stream_names[4];
  int n_streams = 0;
  const long owner = n > 0 ? mm_output_owner(cfgs[0].env.launched) : -1;
  for (int fd = 1; fd <= 2; fd++) {
    struct stat *st = &streams[n_streams];
    if (fstat(fd, st) == 0 && S_ISREG(st->st_mode))
      stream_names[n_streams++] = fd == 1 ? "the standard output" : "the standard error";
    char link[64];
    snprintf(link, sizeof link, "/proc/%ld/fd/%d", owner, fd);
    st = &streams[n_streams];
    if (owner > 0 && owner != (long)getpid() && stat(link, st) == 0 && S_ISREG(st->st_mode))
      stream_names[n_streams++] = fd == 1 ? "the launcher's standard output (where the ranks' goes)"
                                          : "the launcher's standard error (where the ranks' goes)";
  }
  mm_err err = MM_OK;
  char path[MM_PATH_TEXT], dir[MM_PATH_TEXT];
  for (int c = 0; c < n && err == MM_OK; c++) {
    mm_resolve(cfgs[c].output_dir, dir);
    for (int i = 0; i < MM_NOUTPUT && err == MM_OK; i++) {
      /* the history is written through a symbolic link at its name (stat),
       * and a file there is replaced; the lock is made in place (a link
       * refused); the others are made anew and renamed over the name (a
       * link there replaced, lstat). The file goes with its name even where
       * it has another (a hard link): that one may be an output too. */
      const bool history = !strcmp(mm_output_files[i].suffix, ".nc");
      if (cfgs[c].restart_interval == 0 && !cfgs[c].restart_at_stop &&
          !strncmp(mm_output_files[i].suffix, ".restart", 8))
        continue; /* a case without restarts leaves them as they are */
      struct stat st;
      mm_output_path(dir, &cfgs[c], i, path);
      if ((history ? stat(path, &st) : lstat(path, &st)) != 0) continue;
      for (int k = 0; k < n_streams && err == MM_OK; k++)
        if (st.st_dev == streams[k].st_dev && st.st_ino == streams[k].st_ino)
          err = MM_ERROR(MM_ERR_INPUT,
                         "%s: %s is %s %s (%s), which the run writes: redirect it to "
                         "another file",
                         files[c], stream_names[k], n > 1 ? "a case's" : "the case's",
                         mm_output_files[i].what, path);
    }
  }
  return err;
}

mm_err mm_streams_check(const mm_config *cfgs, const char *const *files, int n, MPI_Comm comm) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  return mm_agree(comm, rank == 0 ? mm_streams_rank0(cfgs, files, n) : MM_OK);
}

mm_err mm_cases_check(const mm_config *cfgs, const char *const *files, int n, MPI_Comm comm,
                      int *chain) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  MM_CHECK(mm_cases_same(cfgs, files, n, comm));
  MM_CHECK(mm_cases_paths_same(cfgs, files, n, comm));
  int *later = calloc(2 * (size_t)n, sizeof *later);
  mm_err err = later ? MM_OK : MM_ERROR(MM_ERR_RUN, "out of memory");
  if (err == MM_OK && rank == 0) err = mm_outputs_rank0(cfgs, files, n, later);
  err = mm_agree(comm, err);
  if (err == MM_OK) err = MM_MPI_ERR(MPI_Bcast(later, 2 * n, MPI_INT, 0, comm));
  for (int c = 0; c < n; c++)
    chain[c] = err == MM_OK ? later[2 * c + 1] - 1 : -1;
  /* the step each case starts from: 0, its restart file's, or the last
   * restart step of the earlier case it continues from */
  long *start = calloc((size_t)n, sizeof *start);
  if (err == MM_OK && !start) err = mm_agree(comm, MM_ERROR(MM_ERR_RUN, "out of memory"));
  for (int c = 0; c < n && err == MM_OK; c++) {
    const bool file = cfgs[c].initial_file[0] && !later[2 * c];
    const bool restart = cfgs[c].initial_restart[0] && !later[2 * c + 1];
    if (!file && !restart) continue;
    err = mm_agree(comm, mm_run_check_inputs(&cfgs[c], file, restart, comm, &start[c]));
    err = mm_error_prefix(err, "%s: ", files[c]); /* name the case */
  }
  /* a chain whose earlier case writes no restart file in the steps it runs
   * (a continuation itself, from a step past the last multiple of its
   * restart_interval): refused before the first case runs, not after */
  char at[MM_WHERE_MAX];
  for (int c = 0; c < n && err == MM_OK; c++) {
    const int e = chain[c];
    if (e < 0) continue;
    const long every = cfgs[e].restart_interval, last = cfgs[e].run_steps / every * every;
    if (last <= start[e])
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: initial.restart = %s is case %d's (%s) restart file, but that case "
                     "writes none: it runs steps %ld to %ld, and no multiple of "
                     "output.restart_interval = %ld is among them; the file there would be an "
                     "earlier run's",
                     value_where(&cfgs[c], files[c], n, "initial.restart", at),
                     cfgs[c].initial_restart, e + 1, files[e], start[e] + 1, cfgs[e].run_steps,
                     every);
    else if (last > cfgs[c].run_steps)
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: initial.restart = %s is case %d's (%s) restart file, of step %ld, "
                     "beyond this case's run.steps = %ld",
                     value_where(&cfgs[c], files[c], n, "initial.restart", at),
                     cfgs[c].initial_restart, e + 1, files[e], last, cfgs[c].run_steps);
    else
      start[c] = last;
  }
  free(start);
  free(later);
  return mm_agree(comm, err);
}

FILE *mm_output_tmp_open(const char *tmp) {
  if (unlink(tmp) != 0 && errno != ENOENT) return NULL;
  const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    const int e = errno;
    close(fd);
    unlink(tmp); /* unchecked: at worst an empty .tmp stays */
    errno = e;
  }
  return f;
}

/* Whether path names the file locked by fd. */
static bool mm_output_lock_in_place(int fd, const char *path) {
  struct stat held, named;
  return fstat(fd, &held) == 0 && lstat(path, &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

/* Rank 0's part of mm_output_lock_create: the lock file at path, locked
 * into *fd_out (-1 where the file system has no locks); *busy: the error
 * is that another run holds it. */
static MM_NODISCARD mm_err mm_output_lock_take(const char *path, int *fd_out, bool *busy) {
  *fd_out = -1;
  *busy = false;
  for (int attempt = 0; attempt < 100; attempt++) {
    /* only a file of its own: the lock file is written, and removed at the
     * end, so never through a link nor into anything else; O_NOFOLLOW and
     * fstat close the gap between the look and the open */
    struct stat st;
    const char *kind = NULL; /* what stands at path when it is not a file */
    int fd = -1;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
      kind = mm_file_kind(st.st_mode);
    } else {
      fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
      if (fd < 0 && errno == ELOOP)
        kind = "a symbolic link";
      else if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
        kind = mm_file_kind(st.st_mode);
    }
    if (kind) {
      if (fd >= 0) close(fd);
      return MM_ERROR(MM_ERR_INPUT,
                      "%s: the lock file's name is %s; minimodel writes the lock into a file of "
                      "its own, not through or into it: remove it",
                      path, kind);
    }
    if (fd < 0) {
      const int e = errno;
      char dir[MM_PATH_TEXT] = ".";
      const char *slash = strrchr(path, '/');
      if (slash) snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
      struct statvfs fs; /* ENOSPC: out of space or out of inodes, which? */
      if (e == ENOSPC && statvfs(dir, &fs) == 0 && fs.f_files > 0 && fs.f_favail == 0)
        return MM_ERROR(MM_ERR_RUN,
                        "%s: cannot create the lock file: no free inode on the file system of "
                        "'%s' (%s)",
                        path, dir, strerror(e));
      /* a folder no file can be made in (read-only, no permission, /proc):
       * the configuration's output.dir, an input error */
      const bool folder = e == EACCES || e == EPERM || e == EROFS || e == ENOENT || e == ENOTDIR;
      return MM_ERROR(folder ? MM_ERR_INPUT : MM_ERR_RUN, "%s: cannot create the lock file: %s%s",
                      path, strerror(e),
                      folder ? " (output.dir is not a folder files can be written in, or the "
                               "lock file there is not this user's to open)"
                             : "");
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EWOULDBLOCK) {
        char holder[160] = "";
        const ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
        close(fd);
        holder[got > 0 ? got : 0] = '\0';
        holder[strcspn(holder, "\r\n")] = '\0';
        for (char *h = holder; *h; h++)
          if (*h < ' ' || *h > '~') *h = '?';
        *busy = true;
        return MM_ERROR(MM_ERR_INPUT,
                        "%s: the outputs of this case are in use by another run (%s): wait "
                        "for it to end, or give this case another run.name or output.dir",
                        path, holder[0] ? holder : "which one is not written in the lock file");
      }
      close(fd);
      if (e == EINTR) continue;
      fprintf(stderr,
              "minimodel: warning: %s: cannot lock (%s): another run of this case at the same "
              "time would not be noticed\n",
              path, strerror(e));
      return MM_OK;
    }
    /* a file with another name (a hard link) that no run holds: the lock
     * text would be written into the file that name holds. Checked once the
     * lock is held, so that a link to a running case's lock (a snapshot of
     * the folder, say) gets the usual refusal above, not advice to remove
     * that run's lock */
    if (fstat(fd, &st) == 0 && st.st_nlink > 1) {
      close(fd);
      return MM_ERROR(MM_ERR_INPUT,
                      "%s: the lock file's name is a hard link (a file with another name too); "
                      "minimodel writes the lock into a file of its own, not through or into "
                      "it: remove it",
                      path);
    }
    /* The previous holder removes the file before it lets go: when the
     * path no longer names the file locked here, lock the new one. */
    if (mm_output_lock_in_place(fd, path)) {
      char host[256] = "?";
      gethostname(host, sizeof host);
      host[sizeof host - 1] = '\0';
      if (ftruncate(fd, 0) == 0) dprintf(fd, "pid %ld on host %s\n", (long)getpid(), host);
      *fd_out = fd;
      return MM_OK;
    }
    close(fd);
  }
  return MM_ERROR(MM_ERR_RUN, "%s: cannot lock: the file keeps being replaced", path);
}

/* Where case cfg's history is a symbolic link (written through, into the
 * file it leads to), the lock of that file into path[size]: beside it, its
 * name with .lock for .nc, the lock a case whose history that file is
 * takes; "" where the history is no link, or leads to its own name. */
static void mm_output_history_lock_path(const mm_config *cfg, char *path, size_t size) {
  char dir[MM_PATH_TEXT], own[MM_PATH_TEXT], target[MM_PATH_TEXT];
  path[0] = '\0';
  struct stat st;
  mm_output_path(cfg->output_dir, cfg, MM_OUTPUT_HISTORY, own);
  if (lstat(own, &st) != 0 || !S_ISLNK(st.st_mode)) return;
  mm_resolve(cfg->output_dir, dir);
  mm_output_path(dir, cfg, MM_OUTPUT_HISTORY, own);
  mm_output_target(dir, cfg, MM_OUTPUT_HISTORY, target);
  if (!strcmp(own, target)) return;
  const size_t len = strlen(target);
  const bool nc = len > 3 && !strcmp(target + len - 3, ".nc");
  snprintf(path, size, "%.*s.lock", (int)(nc ? len - 3 : len), target);
}

mm_err mm_output_lock_create(const mm_config *cfg, MPI_Comm comm, mm_output_lock *lock) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  lock->fd = lock->history_fd = -1;
  lock->history_path[0] = '\0';
  mm_dir_file(lock->path, sizeof lock->path, cfg->output_dir, cfg->run_name, ".lock");
  bool busy = false;
  mm_err err = rank == 0 ? mm_output_lock_take(lock->path, &lock->fd, &busy) : MM_OK;
  /* a history written through a link into another file: that file's lock
   * too, which a run writing it under its own name holds (two runs wrote
   * one history, each through its own name and lock, and both ended "ok"
   * with the file unreadable). Only another run's hold refuses the case:
   * where the lock cannot be made there (a folder not writable), the
   * case's own lock stands alone. */
  if (err == MM_OK && rank == 0) {
    mm_output_history_lock_path(cfg, lock->history_path, sizeof lock->history_path);
    if (lock->history_path[0]) {
      err = mm_output_lock_take(lock->history_path, &lock->history_fd, &busy);
      if (err != MM_OK && !busy) {
        mm_error_clear();
        err = MM_OK;
        lock->history_path[0] = '\0';
      }
    }
  }
  err = mm_agree(comm, err);
  if (err != MM_OK) mm_output_lock_destroy(lock);
  return err;
}

mm_err mm_output_lock_check(const mm_output_lock *lock, MPI_Comm comm) {
  mm_err err = MM_OK;
  if (lock->fd >= 0 && !mm_output_lock_in_place(lock->fd, lock->path))
    err = MM_ERROR(MM_ERR_RUN,
                   "%s: the lock file was removed or replaced while this run held it: another "
                   "run of this case could now write its files; stopped before writing more",
                   lock->path);
  else if (lock->history_fd >= 0 && !mm_output_lock_in_place(lock->history_fd, lock->history_path))
    err = MM_ERROR(MM_ERR_RUN,
                   "%s: the lock file of the history this run writes through a link was removed "
                   "or replaced while this run held it: another run could now write that file; "
                   "stopped before writing more",
                   lock->history_path);
  return mm_agree(comm, err);
}

/* Remove the lock file at path, when it is still the one fd locks (not a
 * lock file that another run made after this one's was removed), and
 * release the lock. */
static void mm_output_lock_release(int *fd, const char *path) {
  if (*fd < 0) return;
  if (mm_output_lock_in_place(*fd, path)) unlink(path);
  close(*fd);
  *fd = -1;
}

void mm_output_lock_destroy(mm_output_lock *lock) {
  mm_output_lock_release(&lock->history_fd, lock->history_path);
  mm_output_lock_release(&lock->fd, lock->path);
}
