/* fill_on_create DIR NAME FILL DELAY_US: waits until a file NAME is created
 * in DIR, then, DELAY_US microseconds later, fills DIR's file system: FILL
 * (a path on it) takes every free block (fallocate). Prints "filled N bytes"
 * and exits 0; 2 on bad arguments or a failed watch. For disk_fills.sh: a
 * disk that fills between minimodel's check of a file's room and its
 * reservation, inside HDF5's first writes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/statvfs.h>
#include <unistd.h>

static long fill(const char *dir, const char *path) {
  struct statvfs fs;
  const int fd = open(path, O_WRONLY | O_CREAT, 0644);
  if (fd < 0 || statvfs(dir, &fs) != 0) return -1;
  off_t at = 0; /* chunks of half the free room, down to a block */
  for (off_t chunk = (off_t)fs.f_bavail * (off_t)fs.f_frsize; chunk >= 4096; chunk /= 2)
    while (fallocate(fd, 0, at, chunk) == 0)
      at += chunk;
  close(fd);
  return (long)at;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: fill_on_create DIR NAME FILL DELAY_US\n");
    return 2;
  }
  const int watch = inotify_init();
  if (watch < 0 || inotify_add_watch(watch, argv[1], IN_CREATE) < 0) {
    perror("fill_on_create: inotify");
    return 2;
  }
  char events[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    const ssize_t n = read(watch, events, sizeof events);
    if (n <= 0) return 2;
    for (char *p = events; p < events + n;) {
      const struct inotify_event *e = (const struct inotify_event *)p;
      if (e->len && !strcmp(e->name, argv[2])) {
        usleep((useconds_t)atol(argv[4]));
        printf("filled %ld bytes\n", fill(argv[1], argv[3]));
        return 0;
      }
      p += sizeof *e + e->len;
    }
  }
}
