/* libFuzzer harness: the configuration loader, INI text through validation
 * (mm_config_load_string). The input is the INI text; bytes after a 0x01
 * byte are --set overrides, one per 0x01.
 *
 * Beyond "no crash and no sanitizer report", it checks: a refused input
 * has an exit code and a message; an accepted configuration's resolved text
 * (what the history file stores, what --dry-run prints) loads again, to the
 * same text and the same solution hash (the restart's config_hash). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_config.h"
#include "mm_error.h"

enum { MAX_OVERRIDES = 8 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  mm_config *cfg = malloc(sizeof *cfg), *again = malloc(sizeof *again);
  if (!text || !cfg || !again) abort();
  if (size) memcpy(text, data, size);
  text[size] = '\0';
  mm_config_override ovr[MAX_OVERRIDES];
  int n_ovr = 0;
  for (char *p = text; n_ovr < MAX_OVERRIDES && (p = memchr(p, 1, (size_t)(text + size - p)));) {
    *p++ = '\0';
    ovr[n_ovr++].text = p;
  }

  mm_error_clear();
  mm_err err = mm_config_load_string(cfg, "fuzz.ini", text, ovr, n_ovr);
  if (err == MM_OK) {
    char *resolved = mm_config_to_string(cfg);
    if (!resolved) abort();
    mm_error_clear();
    if (mm_config_load_string(again, "resolved.ini", resolved, NULL, 0) != MM_OK) {
      fprintf(stderr, "the resolved text of an accepted configuration is refused: %s\n%s",
              mm_error_message(), resolved);
      abort();
    }
    char *resolved2 = mm_config_to_string(again);
    if (!resolved2 || strcmp(resolved, resolved2) != 0 ||
        mm_config_solution_hash(cfg) != mm_config_solution_hash(again)) {
      fprintf(stderr, "the resolved text does not load back to itself:\n%s\n---\n%s", resolved,
              resolved2 ? resolved2 : "(null)");
      abort();
    }
    free(resolved2);
    free(resolved);
  } else if ((err != MM_ERR_INPUT && err != MM_ERR_RUN) || !mm_error_message()[0]) {
    fprintf(stderr, "refused without a proper message (error %d): '%s'\n", (int)err,
            mm_error_message());
    abort();
  }
  free(again);
  free(cfg);
  free(text);
  return 0;
}
