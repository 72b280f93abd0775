#include "mm_error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one record of the current error on this rank. */
static struct {
  mm_err code;
  char message[MM_ERROR_MAX];
  char where[512];
} mm_error_record;

/* The message of fmt into the record. One longer than the record (a file
 * name or value of 100 KB) has its middle left out, so that its end, the
 * reason, is kept; what is kept leaves half the record for the prefixes
 * that the unwinding adds (mm_error_prefix, mm_agree's rank). */
static void record_message(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  const int n = vsnprintf(mm_error_record.message, sizeof mm_error_record.message, fmt, ap);
  char *whole = n >= (int)sizeof mm_error_record.message ? malloc((size_t)n + 1) : NULL;
  if (whole) {
    vsnprintf(whole, (size_t)n + 1, fmt, again);
    enum { KEEP = MM_ERROR_MAX / 4 - 32 };
    /* both cuts at the start of a UTF-8 character (not inside a file
     * name's "é"), so that the message stays valid text */
    int head = KEEP, tail = n - KEEP;
    while (head > 0 && ((unsigned char)whole[head] & 0xC0) == 0x80)
      head--;
    while (tail < n && ((unsigned char)whole[tail] & 0xC0) == 0x80)
      tail++;
    snprintf(mm_error_record.message, sizeof mm_error_record.message,
             "%.*s [... %d bytes left out ...] %s", head, whole, tail - head, whole + tail);
    free(whole);
  }
  va_end(again);
}

mm_err mm_error_set(mm_err code, const char *file, int line, const char *fmt, ...) {
  if (mm_error_record.code != MM_OK) return mm_error_trace(code, file, line);
  mm_error_record.code = code;
  va_list ap;
  va_start(ap, fmt);
  record_message(fmt, ap);
  va_end(ap);
  snprintf(mm_error_record.where, sizeof mm_error_record.where, "%s:%d", file, line);
  return code;
}

static void record_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void record_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record_message(fmt, ap);
  va_end(ap);
}

mm_err mm_error_prefix(mm_err code, const char *fmt, ...) {
  if (code == MM_OK || mm_error_record.code == MM_OK) return code;
  char prefix[MM_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  char *old = strdup(mm_error_record.message);
  if (old) record_printf("%s%s", prefix, old);
  free(old);
  return code;
}

mm_err mm_error_trace(mm_err code, const char *file, int line) {
  size_t used = strlen(mm_error_record.where);
  if (used + 64 < sizeof mm_error_record.where)
    snprintf(mm_error_record.where + used, sizeof mm_error_record.where - used, " <- %s:%d", file,
             line);
  return code;
}

mm_err mm_mpi_error(int rc, const char *call, const char *file, int line) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", rc);
  /* the call's name, without its arguments: "MPI_Allreduce" */
  const char *paren = strchr(call, '(');
  const int name = paren ? (int)(paren - call) : (int)strlen(call);
  return mm_error_set(MM_ERR_RUN, file, line, "MPI error in %.*s: %s", name, call, text);
}

mm_err mm_agree_with(MPI_Comm comm, mm_err local, int extra, int *extra_max) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  /* {worst code, then the lowest rank of those with it; largest extra} in
   * one reduction: the message travels with the exit status it explains */
  const long long key = local != MM_OK ? ((long long)local << 32) + (long long)(INT_MAX - rank) : 0;
  long long in[2] = {key, extra}, out[2];
  MM_MPI(MPI_Allreduce(in, out, 2, MPI_LONG_LONG, MPI_MAX, comm));
  if (extra_max) *extra_max = (int)out[1];
  if (out[0] == 0) return MM_OK;
  const mm_err worst = (mm_err)(out[0] >> 32);
  const int first = INT_MAX - (int)(out[0] & 0xffffffffLL);
  char msg[MM_ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", mm_error_message());
  MM_MPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm));
  if (rank == first) return worst;
  mm_error_clear();
  if (first != 0) return mm_error_set(worst, __FILE__, __LINE__, "rank %d: %s", first, msg);
  return mm_error_set(worst, __FILE__, __LINE__, "%s", msg);
}

mm_err mm_bcast_text(MPI_Comm comm, const char *text, size_t len, char **out, size_t *out_len) {
  int rank;
  *out = NULL;
  *out_len = 0;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  long n = rank == 0 && text && len <= INT_MAX ? (long)len : -1; /* rank 0's, after the Bcast */
  MM_MPI(MPI_Bcast(&n, 1, MPI_LONG, 0, comm));
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  int all = buf != NULL;
  MM_MPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm));
  if (!all) {
    free(buf);
    return mm_error_set(MM_ERR_RUN, __FILE__, __LINE__, "out of memory");
  }
  if (rank == 0) memcpy(buf, text, (size_t)n);
  const mm_err err = MM_MPI_ERR(MPI_Bcast(buf, (int)n, MPI_CHAR, 0, comm));
  if (err != MM_OK) {
    free(buf);
    return err;
  }
  buf[n] = '\0';
  *out = buf;
  *out_len = (size_t)n;
  return MM_OK;
}

mm_err mm_agree(MPI_Comm comm, mm_err local) {
  return mm_agree_with(comm, local, 0, NULL);
}

mm_err mm_mpi_check(int rc, const char *call, const char *file, int line) {
  return rc == MPI_SUCCESS ? MM_OK : mm_mpi_error(rc, call, file, line);
}

const char *mm_error_message(void) {
  return mm_error_record.message;
}
const char *mm_error_where(void) {
  return mm_error_record.where;
}

void mm_error_clear(void) {
  mm_error_record.code = MM_OK;
  mm_error_record.message[0] = '\0';
  mm_error_record.where[0] = '\0';
}
