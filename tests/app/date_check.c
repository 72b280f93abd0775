/* date_check: reads lines "CALENDAR DATE" (DATE up to the line's end) and
 * prints for each "ok" or "bad: MESSAGE", the verdict of
 * mm_config_date_problem; check_dates.py compares them with cftime's. */
#include <stdio.h>
#include <string.h>

#include "mm_config.h"

int main(void) {
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = '\0';
    char *date = strchr(line, ' ');
    if (!date) return 2;
    *date++ = '\0';
    int cal = -1;
    for (int c = 0; c <= (int)MM_CAL_JULIAN; c++)
      if (!strcmp(line, mm_config_calendar_name((mm_calendar)c))) cal = c;
    if (cal < 0) return 2;
    char buf[160];
    const char *why = mm_config_date_problem(date, (mm_calendar)cal, buf, sizeof buf);
    printf(why ? "bad: %s\n" : "ok\n", why);
  }
  return 0;
}
