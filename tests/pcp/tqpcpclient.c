/*
** tqpcpclient.c - a PMAPI client of pmdatqmon for the tests: it stores
** enable commands into tqmon.control, fetches tqmon.records for a while and
** prints every record as a line, then withdraws its enables (or, with -x,
** exits without withdrawing them: the agent must release them itself).
**
**   tqpcpclient -h HOST [-t SECONDS] [-i MS] [-d SECONDS] [-x] [-o] [-w FILE] 'set PID/REL ENTITY N' ...
**
** -d: wait that long after enabling before the first fetch (the agent's
** queue for this client fills).  -o: another context of this client
** fetches from the agent just before each store, and ends after them
** (the enables are this context's all the same, not the other's).
**
** A record line: INSTANCE SEC.NSEC kind=K id=I [from=F] VALUES...; a lost
** stretch (the agent's queue for this client was full): ... kind=101 N missed=N.  -w FILE: stop when FILE exists.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcp/pmapi.h>

static pmID lookup(const char *name) {
  pmID id;
  char *n = (char *)name;
  int rc = pmLookupName(1, (const char **)&n, &id);
  if (rc < 0) {
    fprintf(stderr, "tqpcpclient: %s: %s\n", name, pmErrStr(rc));
    exit(1);
  }
  return id;
}

static int store(pmID ctl, const char *cmd) {
  pmValueSet vs;
  pmResult *r = calloc(1, sizeof(pmResult) + sizeof(pmValueSet *));
  size_t len = strlen(cmd);
  pmValueBlock *vb = calloc(1, PM_VAL_HDR_SIZE + len + 1);
  vb->vtype = PM_TYPE_STRING;
  vb->vlen = (unsigned)(PM_VAL_HDR_SIZE + len);
  memcpy(vb->vbuf, cmd, len);
  vs.pmid = ctl;
  vs.numval = 1;
  vs.valfmt = PM_VAL_DPTR;
  vs.vlist[0].inst = PM_IN_NULL;
  vs.vlist[0].value.pval = vb;
  r->numpmid = 1;
  r->vset[0] = &vs;
  int rc = pmStore(r);
  free(vb);
  free(r);
  return rc;
}

int main(int argc, char **argv) {
  const char *host = "local:", *waitFile = NULL;
  double secs = 2, delay = 0;
  int ms = 100, keep = 0, other = 0, opt;
  while ((opt = getopt(argc, argv, "h:t:i:d:xow:")) != -1) {
    switch (opt) {
      case 'h': host = optarg; break;
      case 't': secs = atof(optarg); break;
      case 'i': ms = atoi(optarg); break;
      case 'd': delay = atof(optarg); break;
      case 'x': keep = 1; break;
      case 'o': other = 1; break;
      case 'w': waitFile = optarg; break;
      default: fprintf(stderr, "usage: tqpcpclient -h HOST [-t S] [-i MS] [-x] [-o] [-w FILE] CMD...\n"); return 2;
    }
  }
  int ctx = pmNewContext(PM_CONTEXT_HOST, host);
  if (ctx < 0) {
    fprintf(stderr, "tqpcpclient: %s: %s\n", host, pmErrStr(ctx));
    return 1;
  }
  pmID ctl = lookup("tqmon.control"), rec = lookup("tqmon.records");
  pmID pk = lookup("tqmon.param.kind"), pi = lookup("tqmon.param.id"), pf = lookup("tqmon.param.from");
  pmID pn = lookup("tqmon.param.int"), pd = lookup("tqmon.param.float"), ps = lookup("tqmon.param.string");
  pmDesc desc;
  if (pmLookupDesc(rec, &desc) < 0) return 1;
  int octx = -1;
  pmID apid = lookup("tqmon.agent.pid");
  if (other && (octx = pmNewContext(PM_CONTEXT_HOST, host)) < 0) {
    fprintf(stderr, "tqpcpclient: %s (the other context): %s\n", host, pmErrStr(octx));
    return 1;
  }
  for (int i = optind; i < argc; i++) {
    if (other) { /* the agent's last request is the other context's */
      pmResult *ores;
      pmUseContext(octx);
      if (pmFetch(1, &apid, &ores) < 0) {
        fprintf(stderr, "tqpcpclient: the other context's fetch failed\n");
        return 1;
      }
      pmFreeResult(ores);
      pmUseContext(ctx);
    }
    int rc = store(ctl, argv[i]);
    if (rc < 0) {
      fprintf(stderr, "tqpcpclient: store '%s': %s\n", argv[i], pmErrStr(rc));
      return 1;
    }
  }
  if (other) {
    pmDestroyContext(octx);
    pmUseContext(ctx);
  }
  printf("# enabled\n");
  fflush(stdout);
  if (delay > 0) {
    struct timespec w = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    nanosleep(&w, NULL);
  }
  struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pmResult *res;
    int rc = pmFetch(1, &rec, &res);
    if (rc < 0) {
      fprintf(stderr, "tqpcpclient: fetch: %s\n", pmErrStr(rc));
      return 1;
    }
    pmValueSet *vs = res->vset[0];
    for (int j = 0; j < vs->numval; j++) {
      char *iname = NULL;
      if (pmNameInDom(desc.indom, vs->vlist[j].inst, &iname) < 0) iname = NULL;
      pmHighResResult **er;
      int n = pmUnpackHighResEventRecords(vs, j, &er);
      for (int k = 0; k < n; k++) {
        pmHighResResult *e = er[k];
        printf("%s %lld.%09ld", iname ? iname : "?", (long long)e->timestamp.tv_sec, e->timestamp.tv_nsec);
        int missedKind = 0;
        for (int p = 0; p < e->numpmid; p++) {
          pmValueSet *q = e->vset[p];
          if (q->numval <= 0) continue;
          pmAtomValue av;
          if (q->pmid == pk) {
            pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_U32, &av, PM_TYPE_U32);
            printf(" kind=%u", av.ul);
            missedKind = av.ul == 101; /* the agent dropped records for us: how many follows */
          } else if (q->pmid == pi) {
            pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_U64, &av, PM_TYPE_U64);
            printf(" id=%llu", (unsigned long long)av.ull);
          } else if (q->pmid == pf) {
            pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_64, &av, PM_TYPE_64);
            printf(" from=%lld", (long long)av.ll);
          } else if (q->pmid == pn) {
            pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_64, &av, PM_TYPE_64);
            printf(" %lld", (long long)av.ll);
            if (missedKind) printf(" missed=%lld", (long long)av.ll);
          } else if (q->pmid == pd) {
            pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_DOUBLE, &av, PM_TYPE_DOUBLE);
            printf(" %g", av.d);
          } else if (q->pmid == ps) {
            pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_STRING, &av, PM_TYPE_STRING);
            printf(" %s", av.cp);
            free(av.cp);
          }
        }
        printf("\n");
      }
      if (n > 0) pmFreeHighResEventResult(er);
      free(iname);
    }
    pmFreeResult(res);
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &now);
    double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
    if (waitFile ? access(waitFile, F_OK) == 0 || el > 120 : el >= secs) break;
    nanosleep(&d, NULL);
  }
  if (keep) _exit(0); /* the context goes with the process: nothing withdrawn */
  for (int i = optind; i < argc; i++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s", argv[i]);
    char *last = strrchr(cmd, ' ');
    if (last) strcpy(last, " 0");
    store(ctl, cmd);
  }
  pmDestroyContext(ctx);
  return 0;
}
