/*
** programs.c - program lists, after Strobe's: the patterns that name the
** programs a live collection measures (`monitor programs "db*", "httpd"`
** in the program, `--programs` on the command line).
**
** A pattern is a shell wildcard (fnmatch: *, ?, [...]) over a process's
** command name.  The live sources ask, through g->program_wanted, whether a
** process may become an entity; with no pattern every process may.  Each
** pattern counts the distinct processes it matched (up to RT_PROGRAMS_PIDS
** each, then shown with a +), so that the end of the run can say which
** pattern matched nothing instead of leaving an answer silently empty.
*/
#include <fnmatch.h>
#include <string.h>

#include "rtInt.h"

int rtProgramsAdd(RtPrograms *p, const char *pattern, TqBuf *err) {
  if (!*pattern) {
    tqBufPuts(err, "an empty program pattern matches no command (use \"*\" for every program)");
    return -1;
  }
  if (strchr(pattern, '/')) {
    tqBufPrintf(err, "a program pattern matches a command name, which has no '/': '%s'", pattern);
    return -1;
  }
  for (int i = 0; i < p->n; i++)
    if (!strcmp(p->pat[i].text, pattern)) return 0; /* given twice: once is enough */
  if (p->n == RT_PROGRAMS_MAX) {
    tqBufPrintf(err, "more than %d program patterns", RT_PROGRAMS_MAX);
    return -1;
  }
  RtPattern *x = &p->pat[p->n++];
  memset(x, 0, sizeof *x);
  x->text = tqStrdup(pattern);
  return 0;
}

int rtProgramsWanted(RtPrograms *p, int64_t pid, const char *command) {
  if (!p->n) return 1;
  if (!command) return 0;
  int wanted = 0;
  for (int i = 0; i < p->n; i++) {
    RtPattern *x = &p->pat[i];
    if (fnmatch(x->text, command, 0)) continue;
    wanted = 1;
    if (x->pids.n < RT_PROGRAMS_PIDS && !tqMapGet(&x->pids, (uint64_t)pid + 2)) tqMapPut(&x->pids, (uint64_t)pid + 2, x);
    else if (x->pids.n >= RT_PROGRAMS_PIDS && !tqMapGet(&x->pids, (uint64_t)pid + 2)) x->more = 1;
  }
  return wanted;
}

void rtProgramsFree(RtPrograms *p) {
  for (int i = 0; i < p->n; i++) {
    free(p->pat[i].text);
    tqMapFree(&p->pat[i].pids);
  }
  p->n = 0;
}
