/*
** flags.c - reads the enable words of one sensor in a sensor segment, the
** producer's side of enabling (tests/scripts/daemon_exec.sh): what the
** instrumented program's inline sensors test, not what the engine counts.
**
**   flags SEGMENT SENSOR
**
** SEGMENT is a file holding the segment: /dev/shm/tqmon.PID, or for a
** program the monitor started (--exec, a memfd) /proc/PID/fd/N with N its
** TQMON_SHM_FD.  Prints the sensor's word (`on=N`: the entities enabled)
** and, sorted by name, `ENTITY=COUNT` for each entity whose counter is not
** 0 (`ENTITY=pending` for one the monitor has not settled yet).  Exit 1
** with a message when the segment or the sensor is not there.
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tqshm.h"

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: flags SEGMENT SENSOR\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < sizeof(tq_shm_header)) {
    fprintf(stderr, "flags: no segment in %s\n", argv[1]);
    return 1;
  }
  const char *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    perror("flags: mmap");
    return 1;
  }
  const tq_shm_header *h = (const tq_shm_header *)base;
  if (memcmp(h->magic, TQ_SHM_MAGIC, 8) || h->version != TQ_SHM_VERSION || h->size > (uint64_t)st.st_size) {
    fprintf(stderr, "flags: %s is no sensor segment of version %u\n", argv[1], TQ_SHM_VERSION);
    return 1;
  }
  const tq_shm_sensor *cat = (const tq_shm_sensor *)(base + h->off_catalog);
  uint32_t si = 0, n = h->nsensors < h->max_sensors ? h->nsensors : h->max_sensors;
  while (si < n && strncmp(cat[si].name, argv[2], TQ_SHM_NAME_LEN)) si++;
  if (si == n) {
    fprintf(stderr, "flags: the segment has no sensor %s\n", argv[2]);
    return 1;
  }
  const volatile uint32_t *on = (const volatile uint32_t *)(base + h->off_on);
  const volatile uint32_t *cnt = (const volatile uint32_t *)(base + h->off_counters);
  const tq_shm_entity *ents = (const tq_shm_entity *)(base + h->off_entities);
  printf("on=%u\n", on[si] & ~(TQ_SHM_ALL | TQ_SHM_USED));
  uint64_t ne = h->entities_taken < h->max_entities ? h->entities_taken : h->max_entities - 1;
  char **lines = calloc(ne + 1, sizeof *lines);
  size_t k = 0;
  for (uint64_t e = 1; e <= ne; e++) {
    uint32_t c = cnt[e * h->max_sensors + si];
    if (!c || !ents[e].sensor) continue;
    char buf[TQ_SHM_NAME_LEN + 32];
    if (c & TQ_SHM_PENDING) snprintf(buf, sizeof buf, "%.*s=pending", TQ_SHM_NAME_LEN, ents[e].name);
    else snprintf(buf, sizeof buf, "%.*s=%u", TQ_SHM_NAME_LEN, ents[e].name, c);
    lines[k++] = strdup(buf);
  }
  qsort(lines, k, sizeof *lines, cmp);
  for (size_t i = 0; i < k; i++) printf("%s\n", lines[i]);
  return 0;
}
