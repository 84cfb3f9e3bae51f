/*
** pcpagent.c - the central monitor's side of remote generated sensors:
** the `pcpsensors` processor module, a live PRODUCER of every primitive
** relation no other PM produces ("*"), from the pmdatqmon agents
** (sensors/pmdatqmon.c) of many hosts, through their pmcd (libpcp).
**
**   args "host=H[:PORT][@PROXY[:PORT]][#COMMAND],...[;lag=MS]"  the hosts (through
**                                       pmproxy, PCP's own H@PROXY); on each,
**                                       the one program the agent watches
**                                       (whose command is COMMAND, when
**                                       given) with a catalog that matches
**                                       the configuration; the lag of the
**                                       realtime clock (--pcp-lag: when the
**                                       run is behind its snapshots)
**
** At START each host's pmcd is contacted (a PMAPI context per host), the
** agent's program is chosen and its catalog checked against the
** program's declarations; the entity relations and the traced interval
** relations the queries use are asked whole ("set PID/REL * 1" into
** tqmon.control).  The engine's enables of (relation, entity) become
** stores of the entity's count on the entity's host.  At each snapshot
** every host's records are fetched (tqmon.records), converted (an entity
** named N on host H is the entity "H:N"; clock offsets estimated from
** pmcd's timestamps are taken off), and merged over all hosts in time
** order up to the snapshot's time; the realtime clock takes each snapshot
** a lag after its time (--pcp-lag), the bound on how late a host's records
** may come.  A record at or before an instant the engine has processed
** already is late: counted, and (an end) produced just after that instant
** so no tuple stays open.
** A host whose pmcd or agent is lost has its open tuples end at the last
** time seen from it, with a message; the others go on.  When every host's
** program has exited or every host is lost the collection ends.
**
** After START each host's context belongs to a worker thread of its own,
** which makes its stores (the enables, in order) and its fetches: a
** snapshot asks every host for its records at once and waits only for
** those that may still hold records up to its time, a lag at most; a host
** that has not answered by then is taken at a later snapshot (its records
** late past the lag, counted), never holding the others longer.  Only the
** main thread calls the engine.
*/
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcp/pmapi.h>
#include "pcpdl.h"

#include "../runtime/engine.h"
#include "sensorsInt.h"

#define AG_EXIT 100   /* record kind: the program exited (pmdatqmon.c) */
#define AG_MISSED 101 /* record kind: records the agent dropped for us, in its first int */
#define PA_LOST 200   /* record kind of our own: the host was lost, its open tuples end here */
#define PA_MAXHOST 64

typedef struct PaRec {  /* a record fetched, waiting for its time */
  TqTime t, from;
  int64_t seq;          /* arrival order (a stable sort) */
  uint64_t id;
  int host, rel, kind, n;
  int64_t v[16];
} PaRec;

typedef struct PaRaw {  /* a record as a worker decoded it (nothing of the engine's yet) */
  TqTime t, from;       /* as the host stamped them */
  uint64_t id;
  int rel, kind, n;
  int64_t missed;       /* AG_MISSED: how many */
  int64_t v[16];        /* 'i': integer, 'f': double's bits */
  char *str[16];        /* 's': the string (owned) */
  char tag[16];         /* per value: 'i', 'f' or 's' */
} PaRaw;

typedef struct PaOpen { /* a tuple begun and not ended */
  int rel;
  uint64_t id;
  TqTime from;
  int n;
  int64_t v[16];
} PaOpen;

typedef struct PaHost {
  char spec[160];       /* as given: HOST[:PORT][@PROXY[:PORT]] */
  char want[64];        /* #COMMAND, or "" */
  char name[64];        /* pmcd.hostname */
  int ctx;              /* PMAPI context, -1 when lost */
  uint32_t agentPid;    /* the agent's process (another one: pmcd started it again) */
  int pid;              /* the program's pid on the host (0: the kernel's relations) */
  char prog[16];        /* its instance in the agent: the pid, or "kernel" (pmdatqmon -k) */
  char *perEntity;      /* by relation id: the agent enables it per entity only, never whole
                        ** (its catalog line says per-entity: the kernel's traced relations) */
  int up, done;         /* connected; its program exited or it was lost */
  int *inst;            /* by relation id: instance of PID/REL in tqmon.records (-1) */
  TqTime lastT;         /* time of its last record */
  double offset, rtt;   /* clock offset estimate (ns), its round trip: from the fetch with the
                        ** shortest round trip so far (reported) */
  double applied;       /* the offset taken off its records: measured at the start and then kept,
                        ** so that a better estimate later never reorders a host's own records */
  int64_t records, late, missed, bad, fetches, stores, storeErrors;
  char why[200];        /* why it was lost */
  char badWhy[160];     /* the first invalid record */
  char failed[320];     /* a store failed (in enable): lost at the next snapshot, never
                        ** inside the engine's enable call */
  pmID recs, ctl, pKind, pId, pFrom, pInt, pFloat, pString, agentPidId; /* on its pmcd */
  /* its worker (the fields below under Pa.mu) */
  pthread_t th;
  int thread;           /* started */
  int stop;             /* asked to end (the host is lost, or the run ends) */
  char **cmds;          /* stores to make, in order */
  int ncmd, ccmd;
  int fetchAsked;       /* a fetch asked and not yet begun */
  int fetching;         /* in pmFetch */
  int storing;          /* in pmStore */
  PaRaw *raw;           /* a fetch done and not yet taken: its records, decoded */
  int nraw, craw;
  int sts, fetched;     /* its status (<0: failed) */
  int vsNum, apNum;     /* numval of tqmon.records and tqmon.agent.pid in it */
  int64_t undecoded;    /* event arrays libpcp could not unpack (invalid: added to bad at the end) */
  uint32_t apPid;       /* the agent's process */
  TqTime stamp;         /* pmcd's time stamp of it */
  TqTime before, after; /* its round trip */
  char refused[320];    /* the first store refused (logged by the main thread) */
  struct Pa *pa;
  int refusedLogged;
  int64_t slow;         /* snapshots it had not answered by their deadline */
  int given;            /* the run gave up waiting for it, until its fetch comes */
  TqTime lastStart;     /* when its last fetch taken began (the monitor's clock) */
} PaHost;

typedef struct Pa {
  PaHost h[PA_MAXHOST];
  int nh, nrel;
  pthread_mutex_t mu;   /* the workers' fields of the hosts */
  pthread_cond_t work, done;
  PaRec *q;             /* fetched, not yet produced: q[q0, nq); q[q0, nsorted) in merge order, */
  int64_t q0, nq, cq;   /* the rest fetched since the last snapshot */
  int64_t nsorted;
  TqMap open;           /* (host, rel, id) -> PaOpen */
  TqTime start, outT;  /* the collection's start; the time of the last record produced */
  TqTime closed;        /* the last instant the engine has processed: nothing may come at or before it */
  int64_t produced, late, unmatched, seq;
  int ending;           /* snapshots since every host was done */
  int64_t behind;       /* snapshots taken more than a lag after their time (the monitor itself
                        ** fell behind), once it had caught up; behindAtStart: those before */
  int64_t behindAtStart;
  int caughtUp;
  TqTime lag;           /* the clock's (;lag=MS in the args; 250 ms by default) */
  TqTime worst;         /* the longest a snapshot came after its time plus the lag, once caught up */
} Pa;

/* (id holds its host in its top byte already) */
static uint64_t openKey(int rel, uint64_t id) { return tqHash64(id ^ tqHash64((uint64_t)rel)) | 2; }

static TqTime realNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (TqTime)ts.tv_sec * TQ_SEC + ts.tv_nsec;
}

/* A string fetched from pmcd: metric name, instance (PM_IN_NULL: none). */
static int fetchString(const char *metric, int inst, char *out, size_t n) {
  pmID id;
  const char *nm = metric;
  if (pmLookupName(1, &nm, &id) < 0) return -1;
  pmResult *r;
  if (pmFetch(1, &id, &r) < 0) return -1;
  int rc = -1;
  pmValueSet *vs = r->vset[0];
  for (int j = 0; j < vs->numval; j++) {
    if (inst != (int)PM_IN_NULL && vs->vlist[j].inst != inst) continue;
    pmAtomValue av;
    if (pmExtractValue(vs->valfmt, &vs->vlist[j], PM_TYPE_STRING, &av, PM_TYPE_STRING) >= 0) {
      snprintf(out, n, "%s", av.cp);
      free(av.cp);
      rc = 0;
    }
    break;
  }
  pmFreeResult(r);
  return rc;
}

/* The catalog line tqmon's own declaration of rel gives (pmdatqmon's
** tqmon.program.catalog form, without the flag). */
static void expectLine(tq_pm_global *g, int rel, TqBuf *b) {
  const CpProgram *prog = enProgram(g);
  const AlgRel *r = prog->cat.rels.v[rel - 1];
  int mode = g->relation_mode(g, rel);
  tqBufPrintf(b, "%s %s%s ", r->name,
              mode == TQ_MODE_ENTITY ? "entity" : mode == TQ_MODE_SAMPLED ? "sampled" : r->isEvent ? "event" : "interval",
              mode == TQ_MODE_DISABLE ? " disable" : "");
  static const char *const kn[] = {"?", "int", "float", "string", "enum", "entity"};
  for (int k = 0; k < r->nattr; k++) {
    int tk = r->attr[k].type.kind;
    if (tk == TY_ENUM) tqBufPrintf(b, "%senum%d", k ? "," : "", r->attr[k].type.en->n);
    else tqBufPrintf(b, "%s%s", k ? "," : "", kn[tk >= 1 && tk <= 5 ? tk : 0]);
  }
}

/* Stores cmd into tqmon.control on h's context (before the workers start,
** or in h's worker).  Returns pmStore's status. */
static int store(PaHost *h, const char *cmd) {
  pmUseContext(h->ctx);
  size_t len = strlen(cmd);
  pmValueBlock *vb = tqCalloc(1, PM_VAL_HDR_SIZE + len + 1);
  vb->vtype = PM_TYPE_STRING;
  vb->vlen = (unsigned)(PM_VAL_HDR_SIZE + len);
  memcpy(vb->vbuf, cmd, len);
  pmResult *r = tqCalloc(1, sizeof(pmResult) + sizeof(pmValueSet *));
  pmValueSet vs;
  vs.pmid = h->ctl;
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

/* Connects to host h, chooses its program, checks its catalog.  0, or -1
** with the reason in h->why (the host is left out). */
static int connectHost(Pa *s, tq_pm_global *g, PaHost *h) {
  h->ctx = pmNewContext(PM_CONTEXT_HOST, h->spec);
  if (h->ctx < 0) {
    snprintf(h->why, sizeof h->why, "cannot reach pmcd: %s", pmErrStr(h->ctx));
    return -1;
  }
  const char *names[9] = {"tqmon.records",   "tqmon.control",   "tqmon.param.kind",   "tqmon.param.id",  "tqmon.param.from",
                          "tqmon.param.int", "tqmon.param.float", "tqmon.param.string", "tqmon.agent.pid"};
  pmID ids[9];
  int rc = pmLookupName(9, names, ids);
  if (rc < 9) {
    snprintf(h->why, sizeof h->why, "no tqmon agent (pmdatqmon) under its pmcd: %s", rc < 0 ? pmErrStr(rc) : "metrics missing");
    return -1;
  }
  h->recs = ids[0], h->ctl = ids[1], h->pKind = ids[2], h->pId = ids[3], h->pFrom = ids[4], h->pInt = ids[5];
  h->pFloat = ids[6], h->pString = ids[7], h->agentPidId = ids[8];
  if (fetchString("pmcd.hostname", PM_IN_NULL, h->name, sizeof h->name)) snprintf(h->name, sizeof h->name, "%.63s", h->spec);
  /* the programs: running, with the command asked for, with our catalog */
  pmID pst;
  const char *nst = "tqmon.program.state";
  pmDesc d;
  if (pmLookupName(1, &nst, &pst) < 0 || pmLookupDesc(pst, &d) < 0) {
    snprintf(h->why, sizeof h->why, "the agent has no tqmon.program.state");
    return -1;
  }
  int *insts = NULL;
  char **inames = NULL;
  int n = pmGetInDom(d.indom, &insts, &inames);
  int found = 0;
  TqBuf want = {0};
  char why[200] = "the agent watches no program";
  for (int i = 0; i < n && !found; i++) {
    char st[32], cmd[64], cat[16384];
    if (fetchString("tqmon.program.state", insts[i], st, sizeof st) || strcmp(st, "running")) continue;
    if (h->want[0] && (fetchString("tqmon.program.command", insts[i], cmd, sizeof cmd) || strcmp(cmd, h->want))) {
      snprintf(why, sizeof why, "no program %s among those the agent watches", h->want);
      continue;
    }
    if (fetchString("tqmon.program.catalog", insts[i], cat, sizeof cat)) continue;
    int ok = 1;
    for (int rel = 1; rel <= s->nrel && ok; rel++) {
      int mode = g->relation_mode(g, rel);
      if (mode != TQ_MODE_ENTITY && mode != TQ_MODE_TRACED && mode != TQ_MODE_DISABLE) continue;
      want.n = 0;
      if (want.s) want.s[0] = 0;
      expectLine(g, rel, &want);
      const char *line = strstr(cat, g->relation_name(g, rel));
      while (line && ((line > cat && line[-1] != '\n') || strncmp(line, want.s, want.n) || line[want.n] != ' '))
        line = strstr(line + 1, g->relation_name(g, rel));
      if (!line) {
        snprintf(why, sizeof why, "program %s: its sensors do not match the configuration (%s)", inames[i], want.s);
        ok = 0;
      }
    }
    if (ok) {
      h->pid = atoi(inames[i]);
      snprintf(h->prog, sizeof h->prog, "%s", inames[i]);
      found = 1;
      /* the relations the agent enables per entity only */
      h->perEntity = tqCalloc((size_t)s->nrel + 1, 1);
      for (int rel = 1; rel <= s->nrel; rel++) {
        size_t k = strlen(g->relation_name(g, rel));
        for (const char *l = cat; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
          const char *e = strchr(l, '\n');
          size_t len = e ? (size_t)(e - l) : strlen(l);
          if (!strncmp(l, g->relation_name(g, rel), k) && l[k] == ' ' && len > 11 && !strncmp(l + len - 11, " per-entity", 11))
            h->perEntity[rel] = 1;
        }
      }
    }
  }
  tqBufFree(&want);
  free(insts);
  free(inames);
  if (!found) {
    snprintf(h->why, sizeof h->why, "%s", why);
    return -1;
  }
  /* the instances of tqmon.records of its relations */
  pmDesc rd;
  pmLookupDesc(h->recs, &rd);
  h->inst = tqMalloc(sizeof(int) * (size_t)(s->nrel + 1));
  for (int rel = 0; rel <= s->nrel; rel++) h->inst[rel] = -1;
  for (int rel = 1; rel <= s->nrel; rel++) {
    char nm[128];
    snprintf(nm, sizeof nm, "%s/%s", h->prog, g->relation_name(g, rel));
    int in = pmLookupInDom(rd.indom, nm);
    if (in >= 0) h->inst[rel] = in;
  }
  /* the clock offset applied: the best of 8 round trips now */
  pmID ap = ids[8];
  for (int i = 0; i < 8; i++) {
    pmResult *r;
    TqTime before = realNow();
    if (pmFetch(1, &ap, &r) < 0) break;
    TqTime after = realNow();
    double rtt = (double)(after - before);
    TqTime stamp = (TqTime)r->timestamp.tv_sec * TQ_SEC + (TqTime)r->timestamp.tv_usec * 1000;
    pmFreeResult(r);
    if (!i || rtt < h->rtt) {
      h->rtt = rtt;
      h->offset = h->applied = (double)stamp - ((double)before + rtt / 2);
    }
  }
  h->up = 1;
  return 0;
}

/* The host of an entity "HOST:NAME", and where NAME starts. */
static PaHost *hostOf(Pa *s, const char *ent, const char **name) {
  const char *c = strchr(ent, ':');
  if (!c) return NULL;
  for (int i = 0; i < s->nh; i++)
    if (strlen(s->h[i].name) == (size_t)(c - ent) && !strncmp(s->h[i].name, ent, (size_t)(c - ent))) {
      *name = c + 1;
      return &s->h[i];
    }
  return NULL;
}

static tq_pm_status paInit(tq_pm_global *g, tq_pm_private *p) {
  if (!p->args || strncmp(p->args, "host=", 5) || !p->args[5]) {
    snprintf(p->message, sizeof p->message, "give the hosts: host=H[:PORT][@PROXY[:PORT]][#COMMAND],...");
    return TQ_PM_ERROR;
  }
  if (tqPcpLoad(p->message, sizeof p->message)) return TQ_PM_ERROR;
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "*";
  return TQ_PM_OK;
}

static void pushRec(Pa *s, const PaRec *r) {
  if (s->nq == s->cq) {
    s->cq = s->cq ? 2 * s->cq : 1024;
    s->q = tqRealloc(s->q, sizeof(PaRec) * (size_t)s->cq);
  }
  s->q[s->nq] = *r;
  s->q[s->nq++].seq = s->seq++;
}

/* Ends the open tuples of host hi at time t (a lost host). */
static void endHost(Pa *s, tq_pm_global *g, int hi, TqTime t) {
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t k = 0; k < s->open.cap; k++) {
      if (s->open.slot[k].key <= 1) continue;
      PaOpen *o = s->open.slot[k].val;
      if ((int)(o->id >> 56) != hi) continue;
      if ((pass == 0) == (g->relation_mode(g, o->rel) == TQ_MODE_ENTITY)) continue;
      tq_record r;
      memset(&r, 0, sizeof r);
      r.rel = o->rel;
      r.kind = TQ_REC_END;
      r.id = o->id;
      r.from = o->from;
      r.to = r.t = t > o->from ? t : o->from + 1;
      r.nvals = o->n;
      r.vals = o->v;
      g->produce(g, &r);
      free(tqMapDel(&s->open, s->open.slot[k].key));
    }
}

/* Host hi is lost (its pmcd or agent failed).  The records fetched from
** it before are kept: they happened.  Its open tuples end at the last time
** seen from it (its last record, fetched or produced), when the merge
** gets there (a PA_LOST record), so no record of it comes after its end. */
static void loseHost(Pa *s, tq_pm_global *g, tq_pm_private *p, int hi, const char *why) {
  PaHost *h = &s->h[hi];
  if (!h->up) return;
  h->up = 0;
  h->done = 1;
  snprintf(h->why, sizeof h->why, "%s", why);
  TqTime t = h->lastT;
  for (int64_t k = s->q0; k < s->nq; k++)
    if (s->q[k].host == hi && s->q[k].t > t) t = s->q[k].t;
  t = t + 1 > s->closed + 1 ? t + 1 : s->closed + 1; /* (a chronon after its last record: after any begin) */
  g->log(g, p, TQ_LOG_WARNING, "host %s (%s) lost at %lld: %s: its entities end", h->name, h->spec, (long long)t, why);
  PaRec r;
  memset(&r, 0, sizeof r);
  r.host = hi;
  r.kind = PA_LOST;
  r.t = t;
  pushRec(s, &r);
  /* its worker ends, and destroys its context (the agent releases our
  ** enables there, if it is still alive) */
  pthread_mutex_lock(&s->mu);
  h->stop = 1;
  pthread_cond_broadcast(&s->work);
  pthread_mutex_unlock(&s->mu);
}

static void decodeRecord(PaHost *h, int rel, pmHighResResult *e);

/* Frees the n records pmUnpackHighResEventRecords gave, the last one
** first.  libpcp (6.0) finds a result it frees in a list of every result
** it allocated, the newest first: freed in their order, n records took
** n^2/2 steps (a backlog of 18,000 records took 2.6 s of CPU to free,
** held libpcp's lock against the other hosts' workers meanwhile, and
** kept the host's records late long after its pmcd answered again).
** Reversed, each is found at the front. */
static void freeRecords(pmHighResResult **er, int n) {
  if (n <= 0) return;
  for (int i = 0, j = n - 1; i < j; i++, j--) {
    pmHighResResult *x = er[i];
    er[i] = er[j];
    er[j] = x;
  }
  pmFreeHighResEventResult(er); /* (its NULL sentinel stays at er[n]) */
}

/* The worker of host h: its stores, in order, then a fetch when one is
** asked (after the stores asked before it: the main thread asks for none
** while it waits for the fetch); the results wait in h for the main
** thread.  It owns h's context from its start, and destroys it when it
** ends. */
static void *worker(void *arg) {
  PaHost *h = arg;
  Pa *s = h->pa;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!h->stop && !h->ncmd && !h->fetchAsked) pthread_cond_wait(&s->work, &s->mu);
    if (h->stop) break;
    if (h->ncmd && h->failed[0]) { /* (lost at the next snapshot: no more stores) */
      for (int i = 0; i < h->ncmd; i++) free(h->cmds[i]);
      h->ncmd = 0;
      continue;
    }
    if (h->ncmd) {
      char *cmd = h->cmds[0];
      memmove(h->cmds, h->cmds + 1, sizeof(char *) * (size_t)--h->ncmd);
      h->storing = 1;
      pthread_mutex_unlock(&s->mu);
      int rc = store(h, cmd);
      pthread_mutex_lock(&s->mu);
      h->storing = 0;
      h->stores++;
      if (rc < 0) h->storeErrors++;
      if (rc == PM_ERR_IPC || rc == PM_ERR_NOAGENT || rc == PM_ERR_TIMEOUT || rc == -ECONNRESET || rc == -EPIPE) {
        if (!h->failed[0]) snprintf(h->failed, sizeof h->failed, "'%.200s' failed: %s", cmd, pmErrStr(rc));
      } else if (rc < 0 && !h->refused[0]) {
        snprintf(h->refused, sizeof h->refused, "'%.200s' refused: %s", cmd, pmErrStr(rc));
      }
      free(cmd);
      continue;
    }
    h->fetchAsked = 0;
    h->fetching = 1;
    pthread_mutex_unlock(&s->mu);
    /* (the fields of the fetch are the worker's until fetched is set) */
    pmResult *res = NULL;
    pmUseContext(h->ctx);
    pmID two[2] = {h->recs, h->agentPidId};
    h->before = realNow();
    h->sts = pmFetch(2, two, &res);
    h->after = realNow();
    if (h->sts >= 0) {
      h->stamp = (TqTime)res->timestamp.tv_sec * TQ_SEC + (TqTime)res->timestamp.tv_usec * 1000;
      pmValueSet *vs = res->vset[0], *ap = res->vset[1];
      pmAtomValue apv = {0};
      if (ap->numval == 1) pmExtractValue(ap->valfmt, &ap->vlist[0], PM_TYPE_U32, &apv, PM_TYPE_U32);
      h->vsNum = vs->numval;
      h->apNum = ap->numval;
      h->apPid = apv.ul;
      for (int j = 0; j < vs->numval; j++) {
        int rel = 0;
        for (int r = 1; r <= h->pa->nrel && !rel; r++)
          if (h->inst[r] == vs->vlist[j].inst) rel = r;
        if (!rel) continue;
        pmHighResResult **er;
        int n = pmUnpackHighResEventRecords(vs, j, &er);
        if (n < 0) {
          h->undecoded++;
          continue;
        }
        for (int k = 0; k < n; k++) decodeRecord(h, rel, er[k]);
        freeRecords(er, n);
      }
      pmFreeResult(res);
    }
    pthread_mutex_lock(&s->mu);
    h->fetching = 0;
    h->fetched = 1;
    pthread_cond_broadcast(&s->done);
  }
  for (int i = 0; i < h->ncmd; i++) free(h->cmds[i]);
  h->ncmd = 0;
  pthread_mutex_unlock(&s->mu);
  pmDestroyContext(h->ctx); /* the agent releases this client's enables */
  return NULL;
}

static tq_pm_status paStart(tq_pm_global *g, tq_pm_private *p) {
  Pa *s = tqCalloc(1, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->done, NULL);
  p->data = s;
  s->nrel = enProgram(g)->cat.rels.n;
  char *list = tqStrdup(p->args + 5);
  char *lag = strstr(list, ";lag=");
  s->lag = 250 * TQ_MSEC;
  if (lag) {
    *lag = 0;
    s->lag = (TqTime)(atof(lag + 5) * (double)TQ_MSEC);
  }
  for (char *w = strtok(list, ","); w && s->nh < PA_MAXHOST; w = strtok(NULL, ",")) {
    PaHost *h = &s->h[s->nh++];
    h->ctx = -1;
    h->pa = s;
    /* ('#', not '@': H@PROXY is PCP's own syntax for going through pmproxy) */
    char *hash = strchr(w, '#');
    if (hash) {
      *hash = 0;
      snprintf(h->want, sizeof h->want, "%s", hash + 1);
    }
    snprintf(h->spec, sizeof h->spec, "%s", w);
  }
  free(list);
  int up = 0;
  for (int i = 0; i < s->nh; i++) {
    PaHost *h = &s->h[i];
    if (connectHost(s, g, h)) {
      g->log(g, p, TQ_LOG_WARNING, "host %s left out: %s", h->spec, h->why);
      h->done = 1;
      if (h->ctx >= 0) pmDestroyContext(h->ctx);
      h->ctx = -1;
      continue;
    }
    up++;
    /* the entity relations, and the traced intervals the queries use, whole */
    for (int rel = 1; rel <= s->nrel; rel++) {
      int mode = g->relation_mode(g, rel);
      int whole = mode == TQ_MODE_ENTITY ||
                  ((mode == TQ_MODE_TRACED || mode == TQ_MODE_DISABLE) && !g->is_event(g, rel) && g->needed(g, rel));
      if (!whole || h->inst[rel] < 0 || (h->perEntity[rel] && mode != TQ_MODE_ENTITY)) continue;
      char cmd[160];
      snprintf(cmd, sizeof cmd, "set %s/%s * 1", h->prog, g->relation_name(g, rel));
      int rc = store(h, cmd);
      h->stores++;
      if (rc < 0) h->storeErrors++;
      if (rc < 0) g->log(g, p, TQ_LOG_WARNING, "host %s: '%s' refused: %s", h->name, cmd, pmErrStr(rc));
    }
    g->log(g, p, TQ_LOG_INFO, "host %s (%s): program %s", h->name, h->spec, h->prog);
    if (pthread_create(&h->th, NULL, worker, h)) {
      snprintf(p->message, sizeof p->message, "cannot start a thread: %s", strerror(errno));
      return TQ_PM_FATAL;
    }
    h->thread = 1;
  }
  if (!up) {
    snprintf(p->message, sizeof p->message, "no host with a tqmon agent watching a program of this configuration");
    return TQ_PM_FATAL;
  }
  s->start = s->outT = g->now;
  s->closed = g->now - 1;
  return TQ_PM_OK;
}

/* Decodes one unpacked record of relation rel into h's raw records (in
** h's worker: nothing of the engine's is used). */
static void decodeRecord(PaHost *h, int rel, pmHighResResult *e) {
  if (h->nraw == h->craw) {
    h->craw = h->craw ? 2 * h->craw : 256;
    h->raw = tqRealloc(h->raw, sizeof(PaRaw) * (size_t)h->craw);
  }
  PaRaw *r = &h->raw[h->nraw++];
  memset(r, 0, sizeof *r);
  r->rel = rel;
  r->t = (TqTime)e->timestamp.tv_sec * TQ_SEC + e->timestamp.tv_nsec;
  for (int i = 0; i < e->numpmid; i++) {
    pmValueSet *q = e->vset[i];
    if (q->numval <= 0) continue;
    pmAtomValue av;
    if (q->pmid == h->pKind) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_U32, &av, PM_TYPE_U32);
      r->kind = (int)av.ul;
    } else if (q->pmid == h->pId) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_U64, &av, PM_TYPE_U64);
      r->id = av.ull;
    } else if (q->pmid == h->pFrom) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_64, &av, PM_TYPE_64);
      r->from = av.ll;
    } else if (r->kind == AG_MISSED && q->pmid == h->pInt) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_64, &av, PM_TYPE_64);
      r->missed = av.ll;
    } else if (r->n >= 16) {
      r->n++; /* (more than any relation has: invalid) */
    } else if (q->pmid == h->pInt) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_64, &av, PM_TYPE_64);
      r->tag[r->n] = 'i';
      r->v[r->n++] = av.ll;
    } else if (q->pmid == h->pFloat) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_DOUBLE, &av, PM_TYPE_DOUBLE);
      r->tag[r->n] = 'f';
      memcpy(&r->v[r->n++], &av.d, 8);
    } else if (q->pmid == h->pString) {
      pmExtractValue(q->valfmt, &q->vlist[0], PM_TYPE_STRING, &av, PM_TYPE_STRING);
      r->tag[r->n] = 's';
      r->str[r->n++] = av.cp;
    } else {
      r->tag[r->n++] = '?';
    }
  }
}

static void rawFree(PaRaw *r) {
  for (int k = 0; k < r->n && k < 16; k++) free(r->str[k]);
}

/* Converts host hi's raw record r into the merge (the main thread: its
** symbols are the engine's).  An event or a begin already past the
** instant the run has processed is late: counted, and dropped here, before
** its values are converted; an end needs no values (its begin's are used). */
static void convertRaw(Pa *s, tq_pm_global *g, int hi, const PaRaw *raw) {
  PaHost *h = &s->h[hi];
  if (raw->kind == AG_MISSED) {
    if (raw->missed > 0) h->missed += raw->missed; /* the agent's queue for us was full: that many dropped */
    return;
  }
  PaRec r;
  memset(&r, 0, sizeof r);
  r.host = hi;
  r.rel = raw->rel;
  r.kind = raw->kind;
  r.t = raw->t - (TqTime)llround(h->applied);
  r.id = ((uint64_t)hi << 56) ^ (raw->id & ((1ull << 56) - 1));
  if (raw->kind == AG_EXIT) {
    pushRec(s, &r);
    return;
  }
  int rel = raw->rel, nattr = g->nattributes(g, rel);
  if (raw->kind < 1 || raw->kind > 3 || raw->n != nattr) {
    if (!h->bad++)
      snprintf(h->badWhy, sizeof h->badWhy, "%s: kind %d with %d of %d attributes", g->relation_name(g, rel), raw->kind,
               raw->n, nattr);
    return;
  }
  h->records++;
  r.n = nattr;
  if (raw->kind == 3) {
    r.from = raw->from - (TqTime)llround(h->applied);
    pushRec(s, &r);
    return;
  }
  if ((r.t > s->start ? r.t : s->start) <= s->closed) { /* (produceRec's test, as early as it can be) */
    s->late++;
    h->late++;
    return;
  }
  for (int k = 0; k < nattr; k++) {
    const char *ent = NULL;
    int ty = g->attribute_type(g, rel, k, &ent);
    char c = raw->tag[k];
    if (c == 'i' && (ty == TQ_TY_INT || ty == TQ_TY_ENUM)) {
      r.v[k] = raw->v[k];
    } else if (c == 'f' && ty == TQ_TY_FLOAT) {
      r.v[k] = raw->v[k];
    } else if (c == 's' && (ty == TQ_TY_STRING || ty == TQ_TY_ENTITY)) {
      char buf[200];
      if (ty == TQ_TY_ENTITY) snprintf(buf, sizeof buf, "%s:%s", h->name, raw->str[k]);
      else snprintf(buf, sizeof buf, "%s", raw->str[k]);
      r.v[k] = g->symbol(g, buf, -1);
    } else {
      h->records--;
      if (!h->bad++) snprintf(h->badWhy, sizeof h->badWhy, "%s: attribute %d of the wrong type", g->relation_name(g, rel), k + 1);
      return;
    }
  }
  pushRec(s, &r);
}

/* Takes what host hi's worker fetched and decoded (h->raw, or the error
** h->sts, with its round trip); a failure loses the host.  Called with
** Pa.mu held (released while the records are converted: the worker waits
** until they are taken). */
static void takeFetch(Pa *s, tq_pm_global *g, tq_pm_private *p, int hi) {
  PaHost *h = &s->h[hi];
  char why[160] = "";
  if (h->sts < 0) {
    snprintf(why, sizeof why, "fetch failed: %s", pmErrStr(h->sts));
  } else if (h->vsNum < 0 || h->apNum != 1 || (h->agentPid && h->apPid != h->agentPid)) {
    /* pmcd answers, its tqmon agent does not (it died), or it is another one
    ** (pmcd started it again: this client's enables and records are gone) */
    if (h->vsNum < 0 || h->apNum < 0) snprintf(why, sizeof why, "its tqmon agent: %s", pmErrStr(h->vsNum < 0 ? h->vsNum : h->apNum));
    else if (h->apNum != 1) snprintf(why, sizeof why, "its tqmon agent does not answer");
    else snprintf(why, sizeof why, "its tqmon agent was started again (process %u, was %u): the enables are gone", h->apPid, h->agentPid);
  }
  int up = h->up;
  pthread_mutex_unlock(&s->mu);
  if (!why[0] && up) {
    h->fetches++;
    double rtt = (double)(h->after - h->before);
    if (rtt < h->rtt) { /* the shortest round trip gives the best estimate (reported, not applied) */
      h->rtt = rtt;
      h->offset = (double)h->stamp - ((double)h->before + rtt / 2);
    }
    h->agentPid = h->apPid;
    for (int k = 0; k < h->nraw; k++) convertRaw(s, g, hi, &h->raw[k]);
  }
  for (int k = 0; k < h->nraw; k++) rawFree(&h->raw[k]);
  h->nraw = 0;
  if (why[0] && up) loseHost(s, g, p, hi, why);
  pthread_mutex_lock(&s->mu);
  h->fetched = 0;
  h->given = 0;
  if (h->before > h->lastStart) h->lastStart = h->before;
}

/* Every host's records up to the snapshot: every host is asked for its
** records at once, and the run waits for the answer of each to a fetch
** begun at or after since (the snapshot's due time, its time plus the lag,
** or its start when earlier: the agent may drain a program's rings late,
** so only such a fetch holds every record up to the snapshot's time, as
** far as the lag promises anything), until deadline.  A host that has not
** answered by then is slow: not waited for again until its fetch comes
** (its records past the lag are then late), so it holds the others a lag
** at most.  Its stores (enables) go before its fetch, so a host busy with
** them is waited for like one fetching: the run keeps pace with its
** enables, as when they were made on the main thread. */
static void fetchAll(Pa *s, tq_pm_global *g, tq_pm_private *p, TqTime since, TqTime deadline) {
  struct timespec ts = {(time_t)(deadline / TQ_SEC), (long)(deadline % TQ_SEC)};
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->nh; i++) {
    PaHost *h = &s->h[i];
    if (h->up && h->thread && !h->fetching && !h->fetchAsked && !h->fetched) h->fetchAsked = 1;
  }
  pthread_cond_broadcast(&s->work);
  for (;;) {
    int left = 0;
    for (int i = 0; i < s->nh; i++) {
      PaHost *h = &s->h[i];
      if (h->fetched) takeFetch(s, g, p, i); /* (releases the lock meanwhile) */
      if (!h->up || !h->thread || h->done || h->given || h->lastStart >= since) continue;
      if (!h->fetching && !h->fetchAsked && !h->fetched) {
        h->fetchAsked = 1;
        pthread_cond_broadcast(&s->work);
      }
      left++;
    }
    if (!left) break;
    if (pthread_cond_timedwait(&s->done, &s->mu, &ts) == ETIMEDOUT) {
      for (int i = 0; i < s->nh; i++) {
        PaHost *h = &s->h[i];
        if (h->fetched) takeFetch(s, g, p, i);
        if (!h->up || !h->thread || h->done || h->given || h->lastStart >= since) continue;
        h->given = 1;
        h->slow++;
      }
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
}

static int recCmp(const void *a, const void *b) {
  const PaRec *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  if (x->host != y->host) return x->host - y->host;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merges the waiting records, q[q0, nsorted), with those fetched since,
** q[nsorted, nq), each run in merge order (where their times interleave:
** a host's records that came late, or a lag's worth at once). */
static void mergeRuns(Pa *s) {
  int64_t a = s->q0, b = s->nsorted;
  while (a < b && recCmp(&s->q[a], &s->q[b]) <= 0) a++; /* (those before the second run's first stay) */
  int64_t na = b - a, i = 0, j = b, k = 0;
  PaRec *m = tqMalloc(sizeof(PaRec) * (size_t)na);
  memcpy(m, s->q + a, sizeof(PaRec) * (size_t)na); /* the first run's rest, out of the way */
  while (i < na && j < s->nq) s->q[a + k++] = recCmp(&m[i], &s->q[j]) <= 0 ? m[i++] : s->q[j++];
  while (i < na) s->q[a + k++] = m[i++];
  /* (what is left of the second run is in place) */
  free(m);
}

/* Produces record r in merge order. */
static void produceRec(Pa *s, tq_pm_global *g, tq_pm_private *p, PaRec *r) {
  PaHost *h = &s->h[r->host];
  if (r->t < s->start) r->t = s->start; /* before the collection began (open when asked): at its start */
  if (r->from < s->start) r->from = s->start;
  if (r->kind == PA_LOST) { /* (after every record fetched from it: they sort before) */
    TqTime t = r->t > s->closed ? r->t : s->closed + 1;
    endHost(s, g, r->host, t);
    if (t > s->outT) s->outT = t;
    return;
  }
  /* the engine has processed every instant up to s->closed (an earlier
  ** snapshot's time, or an end put a chronon after its begin): a record at
  ** or before it came after the run went past its time, also one at that
  ** very instant (its ends were decided: no end at it comes any more) */
  if (r->t <= s->closed) {
    s->late++;
    h->late++;
    if (r->kind != 3 && r->kind != AG_EXIT) return; /* an event or a begin: lost, counted */
    r->t = s->closed + 1;                            /* an end: just after, so no tuple stays open */
  }
  if (r->kind == AG_EXIT) {
    h->done = 1;
    /* its agent ended its open tuples before this record; when other
    ** hosts go on, the run says so: what it watches has shrunk */
    int others = 0;
    for (int i = 0; i < s->nh; i++) others += !s->h[i].done;
    g->log(g, p, others ? TQ_LOG_WARNING : TQ_LOG_INFO, "host %s: program %s exited at %lld: its entities end%s", h->name,
           h->prog, (long long)r->t, others ? "; the other hosts go on" : "");
    return;
  }
  if (r->t > s->outT) s->outT = r->t; /* (never back: an end a chronon after its begin went past r->t) */
  if (r->t > h->lastT) h->lastT = r->t;
  tq_record rec;
  memset(&rec, 0, sizeof rec);
  rec.rel = r->rel;
  rec.nvals = r->n;
  rec.vals = r->v;
  uint64_t key = openKey(r->rel, r->id);
  PaOpen *o = NULL;
  switch (r->kind) {
    case 1:
      rec.kind = TQ_REC_EVENT;
      rec.t = r->t;
      break;
    case 2:
      if (tqMapGet(&s->open, key)) {
        if (!h->bad++) snprintf(h->badWhy, sizeof h->badWhy, "%s: tuple %llu begun twice", g->relation_name(g, r->rel), (unsigned long long)r->id);
        return;
      }
      o = tqCalloc(1, sizeof *o);
      o->rel = r->rel;
      o->id = r->id;
      o->from = r->t;
      o->n = r->n;
      memcpy(o->v, r->v, sizeof o->v);
      tqMapPut(&s->open, key, o);
      rec.kind = TQ_REC_BEGIN;
      rec.id = r->id;
      rec.from = rec.t = r->t;
      rec.vals = o->v;
      break;
    default:
      o = tqMapDel(&s->open, key);
      if (!o) {
        s->unmatched++; /* began before the agent came (its history is cut) */
        return;
      }
      rec.kind = TQ_REC_END;
      rec.id = r->id;
      rec.from = o->from;
      rec.to = rec.t = r->t > o->from ? r->t : o->from + 1;
      rec.vals = o->v;
      g->produce(g, &rec);
      if (rec.t > s->outT) s->outT = rec.t; /* (an end a chronon after its begin: the run is there now) */
      free(o);
      s->produced++;
      return;
  }
  g->produce(g, &rec);
  s->produced++;
}

static tq_pm_status paSnapshot(tq_pm_global *g, tq_pm_private *p) {
  Pa *s = p->data;
  /* taken at its time plus the lag: later than that by more than the lag,
  ** the monitor itself fell behind */
  TqTime now = realNow(), lag = s->lag;
  if (now - g->now > 2 * lag) {
    if (s->caughtUp) s->behind++;
    else s->behindAtStart++;
  } else {
    s->caughtUp = 1;
  }
  if (s->caughtUp && now - g->now - lag > s->worst) s->worst = now - g->now - lag;
  for (int i = 0; i < s->nh; i++) {
    PaHost *h = &s->h[i];
    char failed[sizeof h->failed], refused[sizeof h->refused];
    pthread_mutex_lock(&s->mu);
    snprintf(failed, sizeof failed, "%s", h->failed);
    snprintf(refused, sizeof refused, "%s", h->refusedLogged ? "" : h->refused);
    if (refused[0]) h->refusedLogged = 1;
    pthread_mutex_unlock(&s->mu);
    if (refused[0]) g->log(g, p, TQ_LOG_WARNING, "host %s: %s", h->name, refused);
    if (failed[0]) loseHost(s, g, p, i, failed);
  }
  /* (a host is waited for a lag at least, or until the snapshot is a lag
  ** late: a run that is behind waits for its hosts as one on time) */
  TqTime deadline = g->now + 2 * lag;
  fetchAll(s, g, p, now < g->now + lag ? now : g->now + lag, deadline > now + lag ? deadline : now + lag);
  /* the records fetched since the last snapshot are sorted, and merged
  ** with the waiting ones only where their times interleave: a snapshot
  ** costs what came and what goes, not what waits (a lag of every host's
  ** records: sorting them all at every snapshot held a run with a lag of
  ** a second behind its hosts) */
  if (s->nq - s->nsorted > 1) qsort(s->q + s->nsorted, (size_t)(s->nq - s->nsorted), sizeof(PaRec), recCmp);
  if (s->nsorted > s->q0 && s->nq > s->nsorted && recCmp(&s->q[s->nsorted - 1], &s->q[s->nsorted]) > 0) mergeRuns(s);
  for (; s->q0 < s->nq && s->q[s->q0].t <= g->now; s->q0++) produceRec(s, g, p, &s->q[s->q0]);
  if (s->q0 == s->nq) {
    s->q0 = s->nq = 0;
  } else if (s->q0 >= 1024 && 2 * s->q0 >= s->nq) { /* (the room produced is used again) */
    memmove(s->q, s->q + s->q0, sizeof(PaRec) * (size_t)(s->nq - s->q0));
    s->nq -= s->q0;
    s->q0 = 0;
  }
  s->nsorted = s->nq;
  s->closed = s->outT > g->now ? s->outT : g->now;
  /* (--trace-level 3: a test waits for the snapshot after its workload) */
  g->log(g, p, TQ_LOG_DEBUG, "snapshot %lld taken: %lld records produced so far", (long long)g->now, (long long)s->produced);
  int live = 0;
  for (int i = 0; i < s->nh; i++) live += !s->h[i].done;
  if (!live && s->nq == s->q0) s->ending++;
  if (s->ending > 1) g->halt(g); /* a snapshot after the last records: their instant is over */
  return TQ_PM_OK;
}

static tq_pm_status paEnd(tq_pm_global *g, tq_pm_private *p) {
  Pa *s = p->data;
  if (!s) return TQ_PM_OK;
  /* the workers end (one in a fetch from a host that does not answer ends
  ** when libpcp gives up: PMCD_REQUEST_TIMEOUT) */
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->nh; i++) s->h[i].stop = 1;
  pthread_cond_broadcast(&s->work);
  pthread_mutex_unlock(&s->mu);
  for (int i = 0; i < s->nh; i++) {
    PaHost *h = &s->h[i];
    if (h->thread) pthread_join(h->th, NULL);
    for (int k = 0; k < h->nraw; k++) rawFree(&h->raw[k]);
    free(h->raw);
    h->bad += h->undecoded;
  }
  TqBuf b = {0};
  tqBufPrintf(&b,
              "{\"source\": \"pmdatqmon\", \"produced\": %lld, \"late\": %lld, \"unmatched_ends\": %lld, \"behind\": %lld, "
              "\"behind_at_start\": %lld, \"worst_delay_ms\": %.1f, \"hosts\": [",
              (long long)s->produced, (long long)s->late, (long long)s->unmatched, (long long)s->behind,
              (long long)s->behindAtStart, (double)s->worst / 1e6);
  /* (the answers are not changed by it, only later: the engine's time is
  ** behind too, so no record is late for it) */
  if (s->behind)
    g->log(g, p, TQ_LOG_INFO, "%lld snapshots were taken more than the lag after their time (at worst %.0f ms): the monitor fell behind",
           (long long)s->behind, (double)s->worst / 1e6);
  int64_t lost = 0;
  for (int i = 0; i < s->nh; i++) {
    PaHost *h = &s->h[i];
    lost += h->late + h->missed + h->bad;
    tqBufPrintf(&b,
                "%s{\"host\": \"%s\", \"spec\": \"%s\", \"program\": %d, \"state\": \"%s\", \"records\": %lld, "
                "\"late\": %lld, \"missed\": %lld, \"invalid\": %lld, \"fetches\": %lld, \"stores\": %lld, "
                "\"store_errors\": %lld, \"slow\": %lld, \"clock_offset_ms\": %.3f, \"rtt_ms\": %.3f, \"applied_offset_ms\": %.3f}",
                i ? ", " : "", h->name[0] ? h->name : h->spec, h->spec, h->pid,
                h->up ? (h->done ? "exited" : "up") : (h->prog[0] ? "lost" : "left out"), (long long)h->records,
                (long long)h->late, (long long)h->missed, (long long)h->bad, (long long)h->fetches, (long long)h->stores,
                (long long)h->storeErrors, (long long)h->slow, h->offset / 1e6, h->rtt / 1e6, h->applied / 1e6);
    if (h->late + h->missed + h->bad)
      g->log(g, p, TQ_LOG_WARNING, "host %s: %lld records lost: %lld late (past the lag), %lld missed (the agent's queue was full), %lld invalid%s%s",
             h->name, (long long)(h->late + h->missed + h->bad), (long long)h->late, (long long)h->missed, (long long)h->bad,
             h->bad ? ": first " : "", h->badWhy);
    free(h->inst);
    free(h->perEntity);
    free(h->cmds);
  }
  tqBufPrintf(&b, "]}");
  g->set_detail(g, p, b.s);
  tqBufFree(&b);
  snprintf(p->message, sizeof p->message, "%lld records from %d hosts, %lld lost", (long long)s->produced, s->nh,
           (long long)lost);
  for (uint32_t k = 0; k < s->open.cap; k++)
    if (s->open.slot[k].key > 1) free(s->open.slot[k].val);
  tqMapFree(&s->open);
  free(s->q);
  free(s);
  p->data = NULL;
  return TQ_PM_OK;
}

static tq_pm_status paCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  switch (what) {
    case TQ_PM_START: return paStart(g, p);
    case TQ_PM_SNAPSHOT: return paSnapshot(g, p);
    case TQ_PM_END: return paEnd(g, p);
    default: return TQ_PM_OK;
  }
}

/* The flag of entity "HOST:NAME" on relation p->rel: its count, stored on
** its host (the agent sums its clients' counts into the segment). */
static tq_pm_status paEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  Pa *s = p->data;
  if (!s || p->rel < 1 || p->rel > s->nrel || g->relation_mode(g, p->rel) == TQ_MODE_ENTITY) return TQ_PM_OK;
  const char *full = g->symbol_name(g, entity), *local = NULL;
  PaHost *h = full ? hostOf(s, full, &local) : NULL;
  if (!h || !h->up || h->inst[p->rel] < 0 || !*local || strchr(local, ' ')) return TQ_PM_OK; /* not an entity of ours */
  char cmd[200];
  snprintf(cmd, sizeof cmd, "set %s/%s %s %d", h->prog, g->relation_name(g, p->rel), local, on > 0 ? on : 0);
  /* made by the host's worker, in order: a slow host holds no enable of another */
  pthread_mutex_lock(&s->mu);
  if (h->ncmd == h->ccmd) {
    h->ccmd = h->ccmd ? 2 * h->ccmd : 16;
    h->cmds = tqRealloc(h->cmds, sizeof(char *) * (size_t)h->ccmd);
  }
  h->cmds[h->ncmd++] = tqStrdup(cmd);
  pthread_cond_broadcast(&s->work);
  pthread_mutex_unlock(&s->mu);
  return TQ_PM_OK;
}

const tq_pm snsPcpSensorsPm = {
    .version = TQ_PM_VERSION,
    .name = "pcpsensors",
    .description = "PRODUCER of generated sensors on other hosts, through their pmcd and pmdatqmon (args: host=H[:PORT][@PROXY[:PORT]][#COMMAND],...)",
    .init = paInit,
    .call = paCall,
    .enable = paEnable,
};
