/*
** pcp.c - Performance Co-Pilot hosts and archives as relations: the
** processor module `pcp` (PRODUCER of "*"), and the time range of
** archives (snsPcpArchiveRange: the built-in clock ticks over it).  sensors/pcp.md documents them for users;
** pcpconf.c reads the mapping of relations to metrics.
**
** Hosts.  Every host of `host=` gets a PMAPI context of its own, owned by a
** worker thread: all PMAPI calls for a host run in its thread, so a slow
** host delays only its own answers.  At each snapshot the PM hands every
** idle worker a job (list the instance domains the queries need, fetch the
** sampled relations with their profiles) and waits for them until a
** deadline (0.8 of a tick in a live run; no deadline over archives).  A
** worker that misses it is "late": its host gives nothing for that tick
** (counted), and gets no new job until it is done.  A host whose pmcd is
** lost (the connection fails) is reported; its entities end at that
** snapshot, and the other hosts go on.
**
** Entities.  An instance domain mapped by "-- pcp: entity R D.S" is the
** entity relation R: its entities are named HOST:INSTANCE (the instance
** name up to its first space) and carry Host, Inst and Name.  With a
** program list (monitor programs, --programs), a process of a live host
** (instance domain 3.9) whose command the list does not name is no entity
** (procLeftOut).  Host is the
** entity relation of the hosts themselves, named by pmcd's host name (or
** the archive's).  Instances are listed (pmGetInDom) only for entity
** relations the operation needs.
**
** Enabling is the instance profile.  enable(e, on) adds or removes e's
** instance in the enabled set of (e's host, relation).  A fetch of a
** relation on a host sets the context's profile to exactly the enabled
** instances that exist now (pmDelProfile of all, pmAddProfile of them),
** and a relation with no enabled instance on a host is not fetched there.
** sample() answers from the values fetched for that tick; an instance
** enabled during the tick (an entity that began in it) gets one more
** fetch of its relation on its host, at that tick.
**
** Values received are counted from the results (numval of every value
** set): the PM's detail in --stats shows them per host and relation, with
** the instances of the last fetch, the fetches, late and lost ticks, and
** the clock offset of each host (pmcd's timestamps against the monitor's
** clock, from the fetch with the shortest round trip of the last 16).
**
** Archives.  With archive= instead of host=, each host's archives (by the
** host name of their labels) form one archive context, read at each tick
** in PM_MODE_INTERP; the instance domains are as the archive holds them at
** the tick.  Every archive
** is read through once at START: a truncated or corrupt one refuses the
** run (FATAL) before anything is produced.
**
** Why one file of over 1,000 lines: hosts, archives, enabling and the
** workers share the per-host state and its lock; pcpconf.c (the
** configuration), pcpagent.c and pcpsock.c are apart already.
*/
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "pcpInt.h" /* <pcp/pmapi.h> first: import.h needs its types */
#include "sensors.h"
#include <pcp/import.h>
#include "pcpdl.h"

#define SEC INT64_C(1000000000)
#define MAX_HOSTS 256
#define OFFSET_WINDOW 16
#define PCP_MAX_ATTRS 64 /* attributes of a relation the PM fills */

/* ================================================================ small helpers */

static int64_t nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}
static struct timespec tsOf(int64_t t) {
  struct timespec ts = {(time_t)(t / SEC), (long)(t % SEC)};
  if (ts.tv_nsec < 0) {
    ts.tv_sec--;
    ts.tv_nsec += SEC;
  }
  return ts;
}
static int64_t nsOf(const struct timespec *ts) { return (int64_t)ts->tv_sec * SEC + ts->tv_nsec; }

/* The instance name up to its first space: what names an entity (PCP's
** instance names are unique in their leading non-space characters). */
static void firstWord(const char *s, char *out, size_t n) {
  size_t k = 0;
  while (s[k] && s[k] != ' ' && k + 1 < n) {
    out[k] = s[k];
    k++;
  }
  out[k] = 0;
}

/* A JSON string of s into b. */
static void bufJsonString(TqBuf *b, const char *s) {
  tqBufPuts(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') tqBufPrintf(b, "\\%c", c);
    else if (c < 0x20) tqBufPrintf(b, "\\u%04x", c);
    else tqBufAdd(b, s, 1);
  }
  tqBufPuts(b, "\"");
}

/* ================================================================ the mapping, bound to the program */

/* An entity relation: an instance domain, or the hosts (indom null). */
typedef struct Ent {
  char name[PCP_NAME_MAX];
  int rel;       /* relation id, -1: the program does not declare it */
  pmInDom indom; /* PM_INDOM_NULL: Host */
  int nattr;
  int aHost, aInst, aName, aSpec; /* attribute indexes, -1 when absent */
  int needed;    /* the operation needs it (its instances are listed) */
} Ent;

/* A sampled relation: the metrics of one instance domain. */
typedef struct Rel {
  char name[PCP_NAME_MAX];
  int rel;        /* relation id */
  int ent;        /* its entity relation (index in Pcp.ent) */
  pmInDom indom;
  int nattr;
  int flagAttr;   /* the attribute holding the entity (the performer) */
  int hostAttr;   /* Host, or -1 */
  int nm;         /* metrics */
  int metric[PCP_MAX_METRICS]; /* index in conf.metric */
  int attr[PCP_MAX_METRICS];   /* attribute each fills */
  int ty[PCP_MAX_METRICS];     /* TQ_TY_* of that attribute */
  int needed;
  int delta[8], ndelta; /* the delta relations over its entity (their flags enable it too) */
} Rel;

/* One fetched value. */
typedef struct Val {
  int ok;
  int64_t i;
  double d;
  char *s;
} Val;

/* The values of one relation on one host at one tick. */
typedef struct Cache {
  int64_t t;   /* the tick (valid when set) */
  int valid;
  int n;       /* instances */
  int *inst;   /* their ids */
  Val *v;      /* n * Rel.nm */
  int refetched; /* no more fetch of it at t: done again for the entities enabled during the tick, or
                 ** none was missing */
  int *asked;    /* the profile of its fetch (the instances asked for) */
  int nasked;
} Cache;

/* An instance of an entity relation on a host, while it exists. */
typedef struct Inst {
  int id;
  char *name;   /* up to the first space */
  char *full;   /* the whole external name */
  int64_t sym;  /* the entity (HOST:NAME) */
  uint64_t iv;  /* its interval */
  int64_t from;
  int mark;     /* seen in the current listing */
  int recorded; /* added to the recording's instance domain (1), refused (-1) */
} Inst;

typedef struct InstSet {
  Inst *v;
  int n, cap;
} InstSet;

/* The names a relation is enabled on, on one host. */
typedef struct NameSet {
  char **v;
  int n, cap;
} NameSet;

/* A listing of an instance domain made by a worker. */
typedef struct Listing {
  int want;     /* asked in this job */
  int n;
  int *id;
  char **name;
  TqMap cmd;    /* processes, with a program list: instance + 2 -> its command (proc.psinfo.cmd, malloc'd) */
} Listing;

enum { H_NEW = 0, H_UP, H_LOST, H_OUT, H_ENDED };
enum { JOB_NONE = 0, JOB_CONNECT, JOB_TICK, JOB_RECONNECT, JOB_QUIT };

typedef struct Pcp Pcp;

typedef struct Host {
  Pcp *pcp;
  char spec[512];     /* as given (host, host:port; archives: the files, comma-separated) */
  char name[512];     /* pmcd's host name (or the archive label's; the spec when two share one) */
  int64_t sym;        /* the Host entity */
  int ctx;            /* PMAPI context (-1 none) */
  int state;          /* H_* */
  char why[512];      /* why it is out, lost or ended */
  pmID *pmid;         /* per conf metric (this host's PMNS) */
  pmDesc *desc;       /* per conf metric: its descriptor (for a recording) */
  pmID *exist;        /* per Ent: over archives, the existence metric tqmon.entity.ENT
                      ** of a recording (0: none, pmGetInDom lists) */
  int absent;         /* over archives: the recording says the host was away at the job's tick */
  int recording;      /* over archives: a recording of tqmon's (it has tqmon.entity.*) */
  int rec;            /* --pcp-record: the LOGIMPORT context (-1: none) */
  int64_t recT;       /* the tick whose record is still to be written (0: none) */
  int64_t recWritten, recLost; /* records written; values the archive refused */
  int *recMaxId;      /* per Ent: the highest instance number recorded */
  /* the worker */
  pthread_t th;
  int thread;         /* started */
  int job;            /* JOB_* posted, JOB_NONE when idle */
  int busy;           /* running a job */
  int done;           /* the job is done, results not yet taken */
  int64_t jobT;       /* the tick of the job */
  int *fetch;         /* per Rel: fetch it in this job */
  int **prof;         /* per Rel: the profile (instance ids) */
  int *nprof;
  Listing *list;      /* per Ent */
  Cache *next;        /* per Rel: what the job fetched */
  int sts;            /* the job's error (<0), 0 */
  char err[256];      /* its message */
  int64_t rttBest[OFFSET_WINDOW], offBest[OFFSET_WINDOW];
  int noff;
  /* engine-side state */
  InstSet *inst;      /* per Ent: the instances that exist */
  NameSet *en;        /* per Rel: enabled names */
  Cache *cache;       /* per Rel: values of the last tick */
  uint64_t hostIv;    /* its Host interval (0: none open) */
  int64_t hostFrom;
  int64_t *lastN;     /* per Rel: instances in the last fetch */
  int64_t *relValues; /* per Rel: values received */
  int64_t *relExcluded; /* per Rel: instances that existed and were left out of a fetch's
                      ** profile (their values pmcd did not send), summed over the fetches
                      ** (a snapshot that does not fetch the relation leaves out all) */
  int64_t missed;     /* samples asked and not answered though the instance was there:
                      ** its fetch at the tick was late or failed, or a metric had no
                      ** value for it (each told to the engine: g->lost) */
  /* counts (written by the worker under the lock) */
  int64_t fetches, values, listings, late, pending, reconnects;
  int64_t offset, rtt; /* the estimate (ns) */
  int64_t skew;       /* over archives: the host's clock ahead of the monitor's (offset=), ns */
  int64_t first;      /* over archives: their start, in the host's time */
  int fd;             /* the context's socket to pmcd (-1: not known) */
  int64_t bytesBefore, bytes; /* received on earlier sockets; in all (tcp_info) */
  int offsetKnown;
  int64_t progOut;    /* processes of its last listing the program list left out */
  pmID cmdPmid;       /* proc.psinfo.cmd on its context (0: not looked up; PM_ID_NULL: none) */
} Host;

struct Pcp {
  PcpConf conf;
  int archive;        /* replaying archives */
  char *record;       /* record=PREFIX: a PCP archive PREFIX-HOST per host (libpcp_import) */
  char *offsets;      /* offset=HOST=MS,...: the hosts' clocks against the monitor's, over archives */
  Ent *ent;
  int nent;
  int hostEnt;        /* index of Host in ent, -1 if not declared */
  Rel *rel;
  int nrel;
  Host *host;
  int nhost;
  pthread_mutex_t mu;
  pthread_cond_t work, finished;
  int quit;
  uint64_t nextIv;
  int64_t tick;
  int64_t ticks;
  int64_t deadline;   /* live: when the current tick's jobs are given up (its refetches too) */
  int64_t behind;     /* live: snapshots taken more than half a tick after their tick (the monitor
                      ** itself fell behind: those rows hold values of a later time), once it had
                      ** caught up with its ticks */
  int64_t behindAtStart; /* those before (a start that took long: connecting through slow links) */
  int caughtUp;
  int programs;       /* a program list is given (g->program_wanted): live hosts' processes outside it
                      ** are no entities */
};

static Rel *relById(Pcp *pc, int rel) {
  for (int i = 0; i < pc->nrel; i++)
    if (pc->rel[i].rel == rel) return &pc->rel[i];
  return NULL;
}
static Host *hostByName(Pcp *pc, const char *name, size_t len) {
  for (int i = 0; i < pc->nhost; i++)
    if (strlen(pc->host[i].name) == len && !strncmp(pc->host[i].name, name, len)) return &pc->host[i];
  return NULL;
}

/* ================================================================ sets */

static int nameFind(const NameSet *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], name)) return i;
  return -1;
}
static void nameAdd(NameSet *s, const char *name) {
  if (nameFind(s, name) >= 0) return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->v = tqRealloc(s->v, sizeof *s->v * (size_t)s->cap);
  }
  s->v[s->n++] = tqStrdup(name);
}
static void nameSetFree(NameSet *s) {
  for (int k = 0; k < s->n; k++) free(s->v[k]);
  free(s->v);
  memset(s, 0, sizeof *s);
}
static void nameDel(NameSet *s, const char *name) {
  int k = nameFind(s, name);
  if (k < 0) return;
  free(s->v[k]);
  s->v[k] = s->v[--s->n];
}
static Inst *instByName(InstSet *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->v[i].name, name)) return &s->v[i];
  return NULL;
}
static Inst *instById(InstSet *s, int id) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i].id == id) return &s->v[i];
  return NULL;
}

static void cacheClear(Cache *c, int nm) {
  for (int i = 0; c->v && i < c->n * nm; i++) free(c->v[i].s);
  free(c->v);
  free(c->inst);
  free(c->asked);
  memset(c, 0, sizeof *c);
}

/* ================================================================ the worker */

/* Is this error a lost connection to pmcd? */
static int connectionLost(int sts) {
  return sts == PM_ERR_IPC || sts == PM_ERR_TIMEOUT || sts == -ECONNRESET || sts == -EPIPE || sts == -ECONNREFUSED ||
         sts == PM_ERR_NOCONTEXT || sts == -ETIMEDOUT || sts == -ENOTCONN;
}

static int checkMetadata(Host *h);

/* Connects (or opens the archives) and checks the metadata against the
** configuration.  Runs in the worker.  Returns 0, or -1 with h->err. */
static int workConnect(Host *h) {
  Pcp *pc = h->pcp;
  h->ctx = pmNewContext(pc->archive ? PM_CONTEXT_ARCHIVE : PM_CONTEXT_HOST, h->spec);
  if (h->ctx < 0) {
    pcpSay(h->err, sizeof h->err, "%s %s: %s", pc->archive ? "cannot read the archive" : "cannot reach pmcd on", h->spec,
             pmErrStr(h->ctx));
    return -1;
  }
  if (pc->archive) {
    pmHighResLogLabel lab;
    int sts = pmGetHighResArchiveLabel(&lab);
    if (sts < 0) {
      pcpSay(h->err, sizeof h->err, "%s: %s", h->spec, pmErrStr(sts));
      return -1;
    }
    snprintf(h->name, sizeof h->name, "%s", lab.hostname);
    h->first = nsOf(&lab.start);
  } else {
    char nm[256];
    if (pmGetContextHostName_r(h->ctx, nm, sizeof nm) && nm[0]) snprintf(h->name, sizeof h->name, "%s", nm);
    else snprintf(h->name, sizeof h->name, "%s", h->spec);
  }
  h->pmid = tqCalloc((size_t)pc->conf.nmetric, sizeof(pmID));
  h->desc = tqCalloc((size_t)pc->conf.nmetric, sizeof(pmDesc));
  h->exist = tqCalloc((size_t)pc->nent, sizeof(pmID));
  for (int e = 0; pc->archive && e < pc->nent; e++) {
    char name[PCP_NAME_MAX + 16];
    const char *nm = name;
    snprintf(name, sizeof name, "tqmon.entity.%s", pc->ent[e].name);
    if (pmLookupName(1, &nm, &h->exist[e]) < 0) h->exist[e] = 0; /* not a recording of tqmon's */
    else h->recording = 1;
  }
  return checkMetadata(h);
}

/* Looks the metrics the operation needs up on h's context and checks them
** against the configuration (at the start, and again when a lost pmcd is
** back: it may have other agents now).  Returns 0, or -1 with h->err. */
static int checkMetadata(Host *h) {
  Pcp *pc = h->pcp;
  for (int i = 0; i < pc->conf.nmetric; i++) {
    const PcpMetricConf *m = &pc->conf.metric[i];
    int used = 0;
    for (int r = 0; r < pc->nrel && !used; r++)
      if (pc->rel[r].needed && !strcasecmp(pc->rel[r].name, m->rel)) used = 1;
    if (!used) continue; /* a relation no query needs: never looked up */
    const char *name = m->metric;
    pmDesc d;
    int sts = pmLookupName(1, &name, &h->pmid[i]);
    if (sts >= 0) sts = pmLookupDesc(h->pmid[i], &d);
    if (sts >= 0) h->desc[i] = d;
    if (sts < 0) {
      pcpSay(h->err, sizeof h->err, "%s:%d: %s has no metric %s (%s)", m->file, m->line, h->name, m->metric,
               pmErrStr(sts));
      return -1;
    }
    if (d.type != m->type || d.sem != m->sem || d.indom != m->indom) {
      char want[32], got[32];
      pcpIndomText(m->indom, want, sizeof want);
      pcpIndomText(d.indom, got, sizeof got);
      pcpSay(h->err, sizeof h->err,
               "%s:%d: on %s, %s is %s %s over instance domain %s; the configuration says %s %s over %s", m->file,
               m->line, h->name, m->metric, pcpTypeName(d.type), pcpSemName(d.sem), got, pcpTypeName(m->type),
               pcpSemName(m->sem), want);
      return -1;
    }
  }
  return 0;
}

/* Reads the whole archive set once: a truncated or corrupt archive is
** refused before the run.  Runs in the worker.  Returns 0 or -1. */
static int workCheckArchive(Host *h) {
  struct timespec origin = {0, 0}, step = {0, 0};
  int sts = pmSetModeHighRes(PM_MODE_FORW, &origin, &step);
  int64_t records = 0;
  while (sts >= 0) {
    pmHighResResult *r;
    sts = pmFetchHighResArchive(&r);
    if (sts >= 0) {
      records++;
      pmFreeHighResResult(r);
    }
  }
  if (sts != PM_ERR_EOL) {
    pcpSay(h->err, sizeof h->err, "archive %s is truncated or corrupt after %lld records: %s", h->spec,
             (long long)records, pmErrStr(sts));
    return -1;
  }
  if (records == 0) {
    pcpSay(h->err, sizeof h->err, "archive %s holds no records", h->spec);
    return -1;
  }
  return 0;
}

static void offsetNote(Host *h, int64_t sent, int64_t got, int64_t stamp) {
  int64_t rtt = got - sent, off = stamp - (sent + got) / 2;
  int k = h->noff % OFFSET_WINDOW;
  h->rttBest[k] = rtt;
  h->offBest[k] = off;
  h->noff++;
  int n = h->noff < OFFSET_WINDOW ? h->noff : OFFSET_WINDOW, best = 0;
  for (int i = 1; i < n; i++)
    if (h->rttBest[i] < h->rttBest[best]) best = i;
  h->offset = h->offBest[best];
  h->rtt = h->rttBest[best];
  h->offsetKnown = 1;
}

/* Over archives: reads at the job's tick (PM_MODE_INTERP; every pmFetch
** moves the archive's time on by the delta, so it is set before each).
** Returns 0 or a PMAPI error with h->err. */
static int archiveAt(Host *h) {
  if (!h->pcp->archive) return 0;
  /* (FORW: from a microsecond before, so the record at the tick comes next,
  ** the archive's last one too) */
  struct timespec when = tsOf(h->jobT + h->skew - (h->recording ? 1000 : 0)), delta = tsOf(h->recording ? 0 : h->pcp->tick);
  int sts = pmSetModeHighRes(h->recording ? PM_MODE_FORW : PM_MODE_INTERP, &when, &delta);
  if (sts < 0) pcpSay(h->err, sizeof h->err, "pmSetMode: %s", pmErrStr(sts));
  return sts < 0 ? sts : 0;
}

/* Finds the socket of h's context (pcpsock.c), one no other host has. */
static void contextSocket(Host *h) {
  Pcp *pc = h->pcp;
  int taken[MAX_HOSTS], n = 0;
  pthread_mutex_lock(&pc->mu);
  for (int i = 0; i < pc->nhost; i++)
    if (&pc->host[i] != h && pc->host[i].fd >= 0) taken[n++] = pc->host[i].fd;
  pthread_mutex_unlock(&pc->mu);
  int fd = pcpSocketOf(h->spec, taken, n);
  pthread_mutex_lock(&pc->mu);
  h->fd = fd;
  pthread_mutex_unlock(&pc->mu);
}

/* The bytes received from pmcd so far: the kernel's count on the
** context's socket, after those of earlier sockets.  Runs in the worker
** after a job, while the context's socket is open. */
static void countBytes(Host *h) {
  int64_t n;
  if (h->fd < 0 || pcpSocketBytes(h->fd, &n)) return;
  pthread_mutex_lock(&h->pcp->mu);
  h->bytes = h->bytesBefore + n;
  pthread_mutex_unlock(&h->pcp->mu);
}

/* A fetch of ids at the job's tick.  pmlogger archives are read in
** PM_MODE_INTERP (their records are not at the ticks); a recording of
** tqmon's (--pcp-record) has a record at each tick it was up, read as it
** is (PM_MODE_FORW): interpolation would carry a discrete value over the
** ticks an instance had none.  A record after the tick means nothing at
** it: *res is then NULL and 0 returned. */
static int fetchAt(Host *h, int n, pmID *ids, pmHighResResult **res) {
  *res = NULL;
  int sts = archiveAt(h);
  if (sts >= 0) sts = pmFetchHighRes(n, ids, res);
  if (sts >= 0 && h->recording && nsOf(&(*res)->timestamp) != h->jobT + h->skew) {
    pmFreeHighResResult(*res);
    *res = NULL;
  }
  return sts < 0 ? sts : 0;
}

/* A listing from a recording of tqmon's (--pcp-record): the instances of
** entity relation e that the existence metric tqmon.entity.E has a value
** for at the job's tick (PCP's instance domains only grow: they cannot
** say when an instance went away).  For Host (e 0) it sets h->absent.
** Returns 0 or a PMAPI error with h->err. */
static int existing(Host *h, int e, Listing *l) {
  Pcp *pc = h->pcp;
  pmInDom indom = pc->ent[e].indom;
  pmHighResResult *res;
  int sts = 0;
  if (indom != PM_INDOM_NULL && ((sts = pmDelProfile(indom, 0, NULL)) < 0 || (sts = pmAddProfile(indom, 0, NULL)) < 0))
    return sts;
  if ((sts = fetchAt(h, 1, &h->exist[e], &res)) < 0) {
    if (sts == PM_ERR_EOL) return sts;
    pcpSay(h->err, sizeof h->err, "existence of %s: %s", pc->ent[e].name, pmErrStr(sts));
    return sts;
  }
  int n = res && res->numpmid ? res->vset[0]->numval : 0;
  if (e == 0) {
    h->absent = n <= 0;
    if (res) pmFreeHighResResult(res);
    return 0;
  }
  /* like pmGetInDom's: the names in one allocation with the pointers */
  char *names[n > 0 ? n : 1];
  size_t bytes = 0;
  l->id = tqCalloc((size_t)(n > 0 ? n : 1), sizeof(int));
  l->n = 0;
  for (int k = 0; k < n; k++) {
    int id = res->vset[0]->vlist[k].inst;
    if (pmNameInDom(indom, id, &names[l->n]) < 0) continue;
    bytes += strlen(names[l->n]) + 1;
    l->id[l->n++] = id;
  }
  if (res) pmFreeHighResResult(res);
  l->name = tqMalloc(sizeof(char *) * (size_t)(l->n ? l->n : 1) + bytes);
  char *q = (char *)(l->name + (l->n ? l->n : 1));
  for (int k = 0; k < l->n; k++) {
    l->name[k] = strcpy(q, names[k]);
    q += strlen(names[k]) + 1;
    free(names[k]);
  }
  h->listings++;
  return 0;
}

/* Is entity relation en the processes of a host (the proc PMDA's
** instance domain 3.9)? */
static int isProcIndom(const Ent *en) {
  return en->indom != PM_INDOM_NULL && pmInDom_domain(en->indom) == 3 && pmInDom_serial(en->indom) == 9;
}

static void cmdsFree(TqMap *m) {
  for (uint32_t i = 0; i < m->cap; i++)
    if (m->slot[i].key > 1) free(m->slot[i].val);
  tqMapFree(m);
}

/* The command of every process of the listing l of entity relation e
** (proc.psinfo.cmd: what the process runs now, also after an exec, which
** its instance name, kept from its first listing, does not say), for the
** program list.  Runs in the worker.  Returns 0, or a PMAPI error with
** h->err. */
static int listCommands(Host *h, int e, Listing *l) {
  Pcp *pc = h->pcp;
  cmdsFree(&l->cmd);
  if (!h->cmdPmid) {
    const char *nm = "proc.psinfo.cmd";
    if (pmLookupName(1, &nm, &h->cmdPmid) < 0) h->cmdPmid = PM_ID_NULL;
  }
  if (h->cmdPmid == PM_ID_NULL) return 0; /* (the instance names say it then) */
  pmInDom indom = pc->ent[e].indom;
  pmHighResResult *res;
  int sts;
  if ((sts = pmDelProfile(indom, 0, NULL)) < 0 || (sts = pmAddProfile(indom, 0, NULL)) < 0 ||
      (sts = pmFetchHighRes(1, &h->cmdPmid, &res)) < 0) {
    pcpSay(h->err, sizeof h->err, "the commands of %s (proc.psinfo.cmd, for the program list): %s", pc->ent[e].name, pmErrStr(sts));
    return sts;
  }
  pmValueSet *vs = res->numpmid ? res->vset[0] : NULL;
  for (int k = 0; vs && k < vs->numval; k++) {
    pmAtomValue a;
    if (pmExtractValue(vs->valfmt, &vs->vlist[k], PM_TYPE_STRING, &a, PM_TYPE_STRING) < 0) continue;
    free(tqMapDel(&l->cmd, (uint64_t)(uint32_t)vs->vlist[k].inst + 2));
    tqMapPut(&l->cmd, (uint64_t)(uint32_t)vs->vlist[k].inst + 2, a.cp);
  }
  pmFreeHighResResult(res);
  return 0;
}

/* One tick's job: the listings and fetches asked.  Runs in the worker.
** Returns 0, or the first PMAPI error (h->err says where). */
static int workTick(Host *h) {
  Pcp *pc = h->pcp;
  int sts;
  if ((sts = archiveAt(h)) < 0) return sts;
  for (int e = 0; e < pc->nent; e++) {
    Listing *l = &h->list[e];
    if (!l->want) continue;
    free(l->id);
    free(l->name);
    l->id = NULL;
    l->name = NULL;
    l->n = 0;
    if (h->exist[e] && (sts = existing(h, e, l)) < 0) return sts;
    if (h->exist[e]) continue;
    if ((sts = pmGetInDom(pc->ent[e].indom, &l->id, &l->name)) < 0) {
      if (pc->archive && (sts == PM_ERR_INDOM_LOG || sts == PM_ERR_INDOM)) continue; /* none yet at t */
      pcpSay(h->err, sizeof h->err, "instances of %s: %s", pc->ent[e].name, pmErrStr(sts));
      return sts;
    }
    l->n = sts;
    h->listings++;
    if (pc->programs && !pc->archive && isProcIndom(&pc->ent[e]) && (sts = listCommands(h, e, l)) < 0) return sts;
  }
  for (int r = 0; r < pc->nrel; r++) {
    if (!h->fetch[r]) continue;
    Rel *rl = &pc->rel[r];
    Cache *c = &h->next[r];
    cacheClear(c, rl->nm);
    if (rl->indom != PM_INDOM_NULL) {
      if ((sts = pmDelProfile(rl->indom, 0, NULL)) < 0 || (sts = pmAddProfile(rl->indom, h->nprof[r], h->prof[r])) < 0) {
        pcpSay(h->err, sizeof h->err, "profile of %s: %s", rl->name, pmErrStr(sts));
        return sts;
      }
    }
    pmID ids[PCP_MAX_METRICS];
    for (int k = 0; k < rl->nm; k++) ids[k] = h->pmid[rl->metric[k]];
    pmHighResResult *res;
    int64_t sent = nowNs();
    sts = fetchAt(h, rl->nm, ids, &res); /* over archives, at the tick: every fetch moves it on */
    int64_t got = nowNs();
    if (sts < 0) {
      pcpSay(h->err, sizeof h->err, "fetch of %s: %s", rl->name, pmErrStr(sts));
      return sts;
    }
    h->fetches++;
    if (!res) { /* a recording with nothing at the tick */
      c->t = h->jobT;
      c->valid = 1;
      continue;
    }
    if (!pc->archive) offsetNote(h, sent, got, nsOf(&res->timestamp));
    /* the instances: those of the profile that came back */
    int cap = 0;
    for (int k = 0; k < res->numpmid; k++)
      if (res->vset[k]->numval > cap) cap = res->vset[k]->numval;
    c->inst = tqCalloc((size_t)cap, sizeof(int));
    c->v = tqCalloc((size_t)cap * (size_t)rl->nm, sizeof(Val));
    for (int k = 0; k < res->numpmid && k < rl->nm; k++) {
      pmValueSet *vs = res->vset[k];
      if (vs->numval <= 0) continue;
      h->values += vs->numval;
      h->relValues[r] += vs->numval;
      int type = pc->conf.metric[rl->metric[k]].type;
      for (int j = 0; j < vs->numval; j++) {
        int inst = rl->indom == PM_INDOM_NULL ? (int)PM_IN_NULL : vs->vlist[j].inst;
        int slot = 0;
        while (slot < c->n && c->inst[slot] != inst) slot++;
        if (slot == c->n) {
          if (c->n == cap) break; /* more instances than any value set: cannot happen */
          c->inst[c->n++] = inst;
        }
        pmAtomValue a;
        Val *v = &c->v[slot * rl->nm + k];
        int out = type == PM_TYPE_STRING ? PM_TYPE_STRING
                  : type == PM_TYPE_FLOAT || type == PM_TYPE_DOUBLE ? PM_TYPE_DOUBLE
                  : type == PM_TYPE_U64 || type == PM_TYPE_U32 ? PM_TYPE_U64
                                                               : PM_TYPE_64;
        if (pmExtractValue(vs->valfmt, &vs->vlist[j], type, &a, out) < 0) continue;
        v->ok = 1;
        if (out == PM_TYPE_STRING) v->s = a.cp;
        else if (out == PM_TYPE_DOUBLE) v->d = a.d;
        else if (out == PM_TYPE_U64) v->i = (int64_t)a.ull;
        else v->i = a.ll;
      }
    }
    pmFreeHighResResult(res);
    c->t = h->jobT;
    c->valid = 1;
  }
  return 0;
}

static pthread_mutex_t archiveLock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
  Host *h = arg;
  Pcp *pc = h->pcp;
  pthread_mutex_lock(&pc->mu);
  for (;;) {
    while (h->job == JOB_NONE && !pc->quit) pthread_cond_wait(&pc->work, &pc->mu);
    if (pc->quit || h->job == JOB_QUIT) break;
    int job = h->job;
    h->busy = 1;
    pthread_mutex_unlock(&pc->mu);
    int sts = 0;
    h->err[0] = 0;
    /* over archives the hosts' jobs take turns: libpcp 6.0's archive reading
    ** is not safe in two threads at once (two interpolated pmFetch of two
    ** archive contexts crashed in __pmLogFetch, or gave one host nothing) */
    if (pc->archive) pthread_mutex_lock(&archiveLock);
    if (job == JOB_CONNECT) {
      sts = workConnect(h);
      if (!sts && pc->archive) sts = workCheckArchive(h);
      if (!sts && !pc->archive) contextSocket(h);
    } else if (job == JOB_RECONNECT) {
      /* libpcp's own backoff (PMCD_RECONNECT_TIMEOUT) spaces the attempts:
      ** one too soon fails at once */
      if ((sts = pmReconnectContext(h->ctx)) >= 0 && checkMetadata(h)) sts = PM_ERR_GENERIC;
      else if (sts < 0) pcpSay(h->err, sizeof h->err, "%s", pmErrStr(sts));
      if (sts >= 0) {
        h->bytesBefore = h->bytes; /* a new socket counts from 0 */
        h->fd = -1;
        contextSocket(h);
      }
    } else if (h->ctx >= 0) {
      if ((sts = pmUseContext(h->ctx)) >= 0) sts = workTick(h);
    }
    if (pc->archive) pthread_mutex_unlock(&archiveLock);
    if (sts >= 0 && !pc->archive) countBytes(h);
    else if (sts < 0 && job == JOB_TICK) h->fd = -1; /* lost: libpcp closes it */
    pthread_mutex_lock(&pc->mu);
    h->sts = sts;
    h->busy = 0;
    h->job = JOB_NONE;
    h->done = 1;
    pthread_cond_broadcast(&pc->finished);
  }
  pthread_mutex_unlock(&pc->mu);
  if (pc->archive) pthread_mutex_lock(&archiveLock);
  if (h->ctx >= 0) pmDestroyContext(h->ctx);
  if (pc->archive) pthread_mutex_unlock(&archiveLock);
  h->ctx = -1;
  return NULL;
}

/* Posts job posted[i] (JOB_*, JOB_NONE: none) to every host i and waits
** for them until deadline (0: none).  Hosts still busy then are left
** running. */
static void runJobs(Pcp *pc, const int *posted, int64_t deadline) {
  pthread_mutex_lock(&pc->mu);
  for (int i = 0; i < pc->nhost; i++)
    if (posted[i]) {
      pc->host[i].job = posted[i];
      pc->host[i].done = 0;
    }
  pthread_cond_broadcast(&pc->work);
  for (;;) {
    int left = 0;
    for (int i = 0; i < pc->nhost; i++)
      if (posted[i] && !pc->host[i].done) left++;
    if (!left) break;
    if (deadline) {
      struct timespec ts = tsOf(deadline);
      if (pthread_cond_timedwait(&pc->finished, &pc->mu, &ts) == ETIMEDOUT) break;
    } else {
      pthread_cond_wait(&pc->finished, &pc->mu);
    }
  }
  pthread_mutex_unlock(&pc->mu);
}

/* When a tick's jobs are given up: 0.8 of a tick after the snapshot began
** in a live run (the fetches of entities begun in the tick, made while
** the engine samples, share it: a slow host never holds the others past
** it); never over archives (0). */
static int64_t tickDeadline(const Pcp *pc) { return pc->archive ? 0 : nowNs() + pc->tick * 8 / 10; }

/* Is the worker of h on a job (one not taken yet included)? */
static int hostBusy(Pcp *pc, Host *h) {
  pthread_mutex_lock(&pc->mu);
  int busy = h->busy || h->job != JOB_NONE;
  pthread_mutex_unlock(&pc->mu);
  return busy;
}

/* Did the job posted to h end (then its results are taken)?  A tick's job
** (tick) that did not, by the deadline, makes the host late for it. */
static int jobEnded(Pcp *pc, Host *h, int tick) {
  pthread_mutex_lock(&pc->mu);
  int done = h->done;
  h->done = 0;
  pthread_mutex_unlock(&pc->mu);
  if (!done && tick) h->late++;
  return done;
}

/* ================================================================ binding the program */

/* The attribute of rel named name, checked for type ty (and entity type
** ent).  Returns its index, -1 when absent; -2 with msg when of another type. */
static int attrOf(tq_pm_global *g, int rel, const char *name, int ty, const char *ent, char *msg, size_t n) {
  int a = g->attribute(g, rel, name);
  if (a < 0) return -1;
  const char *e = NULL;
  int t = g->attribute_type(g, rel, a, &e);
  if (t != ty || (ent && (!e || strcasecmp(e, ent)))) {
    pcpSay(msg, n, "%s.%s must be of type %s", g->relation_name(g, rel), name,
             ent ? ent : ty == TQ_TY_INT ? "int" : ty == TQ_TY_STRING ? "string" : "float");
    return -2;
  }
  return a;
}

/* Binds the mapping to the program's catalog.  Returns 0, or -1 with the
** reason in msg. */
static int bindProgram(tq_pm_global *g, Pcp *pc, char *msg, size_t n) {
  const PcpConf *c = &pc->conf;
  /* entity relations: Host, then each mapped instance domain */
  pc->ent = tqCalloc((size_t)c->nindom + 1, sizeof(Ent));
  pc->hostEnt = 0;
  Ent *h = &pc->ent[pc->nent++];
  snprintf(h->name, sizeof h->name, "Host");
  h->indom = PM_INDOM_NULL;
  for (int i = 0; i < c->nindom; i++) {
    Ent *e = &pc->ent[pc->nent++];
    snprintf(e->name, sizeof e->name, "%s", c->indom[i].rel);
    e->indom = c->indom[i].indom;
  }
  for (int i = 0; i < pc->nent; i++) {
    Ent *e = &pc->ent[i];
    e->rel = g->relation(g, e->name);
    e->aHost = e->aInst = e->aName = e->aSpec = -1;
    if (e->rel < 0) {
      if (i > 0) {
        pcpSay(msg, n, "%s:%d: the program declares no entity relation %s", c->indom[i - 1].file, c->indom[i - 1].line,
                 e->name);
        return -1;
      }
      continue;
    }
    const char *et = NULL;
    e->nattr = g->nattributes(g, e->rel);
    if (g->attribute_type(g, e->rel, 0, &et) != TQ_TY_ENTITY || !et || strcasecmp(et, e->name)) {
      pcpSay(msg, n, "%s must be an entity relation (entity %s ...)", e->name, e->name);
      return -1;
    }
    int k = 1;
    if (i == 0) {
      if ((e->aSpec = attrOf(g, e->rel, "Spec", TQ_TY_STRING, NULL, msg, n)) == -2) return -1;
      k += e->aSpec >= 0;
    } else {
      if ((e->aHost = attrOf(g, e->rel, "Host", TQ_TY_ENTITY, "Host", msg, n)) == -2 ||
          (e->aInst = attrOf(g, e->rel, "Inst", TQ_TY_INT, NULL, msg, n)) == -2 ||
          (e->aName = attrOf(g, e->rel, "Name", TQ_TY_STRING, NULL, msg, n)) == -2)
        return -1;
      k += (e->aHost >= 0) + (e->aInst >= 0) + (e->aName >= 0);
    }
    if (k != e->nattr) {
      pcpSay(msg, n, "%s has attributes the pcp sensors do not fill (they fill %s)", e->name,
               i == 0 ? "Spec" : "Host, Inst and Name");
      return -1;
    }
    e->needed = g->needed(g, e->rel);
  }
  /* sampled relations: one per relation named in the metric lines */
  pc->rel = tqCalloc((size_t)c->nmetric, sizeof(Rel));
  for (int i = 0; i < c->nmetric; i++) {
    const PcpMetricConf *m = &c->metric[i];
    Rel *r = NULL;
    for (int k = 0; k < pc->nrel && !r; k++)
      if (!strcasecmp(pc->rel[k].name, m->rel)) r = &pc->rel[k];
    if (!r) {
      r = &pc->rel[pc->nrel++];
      snprintf(r->name, sizeof r->name, "%s", m->rel);
      r->indom = m->indom;
      r->ent = -1;
      for (int e = 0; e < pc->nent; e++)
        if (pc->ent[e].indom == m->indom) r->ent = e;
      if (r->ent < 0) {
        char ind[32];
        pcpIndomText(m->indom, ind, sizeof ind);
        pcpSay(msg, n, "%s:%d: no '-- pcp: entity' line maps instance domain %s", m->file, m->line, ind);
        return -1;
      }
      r->rel = g->relation(g, r->name);
      if (r->rel < 0) {
        pcpSay(msg, n, "%s:%d: the program declares no relation %s", m->file, m->line, r->name);
        return -1;
      }
      const Ent *e = &pc->ent[r->ent];
      if (e->rel < 0) {
        pcpSay(msg, n, "%s is sampled on %s, which the program does not declare", r->name, e->name);
        return -1;
      }
      r->nattr = g->nattributes(g, r->rel);
      r->flagAttr = r->hostAttr = -1;
      for (int a = 0; a < r->nattr; a++) {
        const char *et = NULL;
        if (g->attribute_type(g, r->rel, a, &et) == TQ_TY_ENTITY && et && !strcasecmp(et, e->name)) {
          r->flagAttr = a;
          break;
        }
      }
      if (r->flagAttr < 0) {
        pcpSay(msg, n, "%s needs an attribute of type %s (its performer)", r->name, e->name);
        return -1;
      }
      if (r->ent != 0 && (r->hostAttr = attrOf(g, r->rel, "Host", TQ_TY_ENTITY, "Host", msg, n)) == -2) return -1;
      r->needed = g->needed(g, r->rel);
    }
    if (r->nm == PCP_MAX_METRICS) {
      pcpSay(msg, n, "%s:%d: %s maps more than %d metrics", m->file, m->line, r->name, PCP_MAX_METRICS);
      return -1;
    }
    int a = g->attribute(g, r->rel, m->attr);
    if (a < 0) {
      pcpSay(msg, n, "%s:%d: %s has no attribute %s", m->file, m->line, r->name, m->attr);
      return -1;
    }
    int ty = g->attribute_type(g, r->rel, a, NULL);
    int want = m->type == PM_TYPE_STRING ? TQ_TY_STRING
               : m->type == PM_TYPE_FLOAT || m->type == PM_TYPE_DOUBLE ? TQ_TY_FLOAT
                                                                       : TQ_TY_INT;
    if (ty != want && !(want == TQ_TY_INT && ty == TQ_TY_FLOAT)) {
      pcpSay(msg, n, "%s:%d: %s.%s holds %s (a %s metric): it must be of type %s", m->file, m->line, r->name, m->attr,
               m->metric, pcpTypeName(m->type), want == TQ_TY_STRING ? "string" : want == TQ_TY_FLOAT ? "float" : "int");
      return -1;
    }
    r->metric[r->nm] = i;
    r->attr[r->nm] = a;
    r->ty[r->nm] = ty;
    r->nm++;
  }
  for (int k = 0; k < pc->nrel; k++) {
    Rel *r = &pc->rel[k];
    int filled = 1 + (r->hostAttr >= 0) + r->nm;
    if (filled != r->nattr) {
      pcpSay(msg, n, "%s has attributes no '-- pcp: metric' line maps", r->name);
      return -1;
    }
  }
  /* the delta relations, by the entity they are
  ** sampled on: the engine samples their sampled relation for the
  ** entities their alphas enable */
  for (int id = 1; g->relation_name(g, id); id++) {
    if (g->relation_mode(g, id) != TQ_MODE_DELTA) continue; /* (needed() is 0 for them: the engine makes them) */
    for (int k = 0; k < pc->nrel; k++) {
      Rel *r = &pc->rel[k];
      const char *et = NULL;
      if (g->nattributes(g, id) == r->nattr && g->attribute_type(g, id, r->flagAttr, &et) == TQ_TY_ENTITY && et &&
          !strcasecmp(et, pc->ent[r->ent].name) && r->ndelta < 8)
        r->delta[r->ndelta++] = id;
    }
  }
  /* every relation the operation needs must be mapped (this PM produces
  ** every relation no other PM produces) */
  for (int id = 1; g->relation_name(g, id); id++) {
    if (!g->needed(g, id)) continue;
    int ok = relById(pc, id) != NULL;
    for (int e = 0; e < pc->nent && !ok; e++) ok = pc->ent[e].rel == id;
    if (!ok) {
      pcpSay(msg, n, "relation %s is needed by a query, but no '-- pcp:' line maps it", g->relation_name(g, id));
      return -1;
    }
  }
  return 0;
}

/* ================================================================ arguments */

/* The items of a comma-separated list v (empty items skipped), appended
** to *list (*n of them). */
static void splitList(const char *v, char ***list, int *n) {
  while (*v) {
    size_t k = strcspn(v, ",");
    if (k) {
      *list = tqRealloc(*list, sizeof(char *) * (size_t)(*n + 1));
      (*list)[(*n)++] = tqStrndup(v, k);
    }
    v += k + (v[k] == ',');
  }
}

/* The hosts of one host= value: a comma-separated list of hosts or
** host:port, or a file of them (one a line, '#' comments), appended to
** *list.  Returns 0 or -1 with msg. */
static int hostList(const char *v, char ***list, int *nl, char *msg, size_t n) {
  struct stat st;
  if (stat(v, &st) != 0 || !S_ISREG(st.st_mode)) {
    splitList(v, list, nl);
    return 0;
  }
  FILE *f = fopen(v, "r");
  if (!f) {
    pcpSay(msg, n, "%s: %s", v, strerror(errno));
    return -1;
  }
  int before = *nl;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *s = line;
    s[strcspn(s, "#\r\n")] = 0;
    while (*s == ' ' || *s == '\t') s++;
    size_t k = strlen(s);
    while (k && (s[k - 1] == ' ' || s[k - 1] == '\t')) s[--k] = 0;
    if (!*s) continue;
    *list = tqRealloc(*list, sizeof(char *) * (size_t)(*nl + 1));
    (*list)[(*nl)++] = tqStrdup(s);
  }
  fclose(f);
  if (*nl == before) {
    pcpSay(msg, n, "%s lists no host", v);
    return -1;
  }
  return 0;
}

static void freeList(char **list, int n) {
  for (int i = 0; i < n; i++) free(list[i]);
  free(list);
}

/* Adds a host (or an archive host) named by spec. */
static Host *addHost(Pcp *pc, const char *spec, char *msg, size_t n) {
  if (pc->nhost >= MAX_HOSTS) {
    pcpSay(msg, n, "more than %d hosts", MAX_HOSTS);
    return NULL;
  }
  Host *h = &pc->host[pc->nhost++];
  snprintf(h->spec, sizeof h->spec, "%s", spec);
  return h;
}

/* The label of archive file and the time of its last record.  Returns 0,
** or a PMAPI error (< 0) with msg. */
static int archiveInfo(const char *file, pmHighResLogLabel *lab, struct timespec *end, char *msg, size_t n) {
  int ctx = pmNewContext(PM_CONTEXT_ARCHIVE, file), sts = ctx;
  if (ctx >= 0 && (sts = pmGetHighResArchiveLabel(lab)) >= 0) sts = pmGetHighResArchiveEnd(end);
  if (ctx >= 0) pmDestroyContext(ctx);
  if (sts < 0) pcpSay(msg, n, "cannot read the archive %s: %s", file, pmErrStr(sts));
  return sts < 0 ? sts : 0;
}

/* The clock offset offsets ("HOST=MS,...") gives host (its clock ahead of
** the monitor's, in ns into *ns; 0 when the host is not named).  Returns 0,
** or -1 with msg for an item that is not HOST=MS. */
static int offsetFor(const char *offsets, const char *host, int64_t *ns, char *msg, size_t n) {
  char **list = NULL;
  int nl = 0, rc = 0;
  *ns = 0;
  splitList(offsets ? offsets : "", &list, &nl);
  for (int i = 0; i < nl && !rc; i++) {
    char *eq = strrchr(list[i], '='), *end = NULL;
    double ms = eq ? strtod(eq + 1, &end) : 0;
    if (!eq || eq == list[i] || end == eq + 1 || *end) {
      pcpSay(msg, n, "clock offset '%s': give HOST=MS (the host's clock ahead of the monitor's, in ms)", list[i]);
      rc = -1;
    } else if ((size_t)(eq - list[i]) == strlen(host) && !strncmp(list[i], host, strlen(host))) {
      *ns = (int64_t)(ms * 1e6);
    }
  }
  freeList(list, nl);
  return rc;
}

int snsPcpArchiveRange(const char *files, const char *offsets, int64_t *first, int64_t *last, TqBuf *err) {
  char **list = NULL, msg[512];
  int n = 0, rc = 0;
  if (tqPcpLoad(msg, sizeof msg)) {
    tqBufPuts(err, msg);
    return -1;
  }
  splitList(files, &list, &n);
  for (int i = 0; i < n && !rc; i++) {
    pmHighResLogLabel lab;
    struct timespec end;
    int64_t skew = 0;
    if ((rc = archiveInfo(list[i], &lab, &end, msg, sizeof msg)) || (rc = offsetFor(offsets, lab.hostname, &skew, msg, sizeof msg))) {
      tqBufPuts(err, msg);
      break;
    }
    /* in the monitor's time: the host's clock less its offset */
    if (!i || nsOf(&lab.start) - skew < *first) *first = nsOf(&lab.start) - skew;
    if (!i || nsOf(&end) - skew > *last) *last = nsOf(&end) - skew;
  }
  if (!n && !rc) {
    tqBufPuts(err, "no archive given");
    rc = -1;
  }
  freeList(list, n);
  return rc ? -1 : 0;
}

/* Parses the args lines (pcpArgs: host=, archive=, file=).  Returns 0 or
** -1 with msg. */
static int parseArgs(Pcp *pc, const char *args, char *msg, size_t n) {
  pc->host = tqCalloc(MAX_HOSTS, sizeof(Host));
  char **hosts = NULL, **archives = NULL;
  int nh = 0, na = 0, nfiles = 0, rc = 0;
  for (const char *s = args ? args : ""; *s && !rc;) {
    size_t k = strcspn(s, "\n");
    char *line = tqStrndup(s, k);
    s += k + (s[k] == '\n');
    char *eq = strchr(line, '=');
    if (line[0] && !eq) {
      pcpSay(msg, n, "bad argument '%s' (KEY=VALUE lines: host, archive, file)", line);
      rc = -1;
    } else if (line[0]) {
      *eq = 0;
      const char *v = eq + 1;
      if (!strcmp(line, "host")) rc = hostList(v, &hosts, &nh, msg, n);
      else if (!strcmp(line, "archive")) splitList(v, &archives, &na);
      else if (!strcmp(line, "offset")) {
        free(pc->offsets);
        pc->offsets = tqStrdup(v);
      } else if (!strcmp(line, "record")) {
        free(pc->record);
        pc->record = tqStrdup(v);
      } else if (!strcmp(line, "file")) {
        rc = pcpConfRead(&pc->conf, v, msg, n);
        nfiles++;
      } else {
        pcpSay(msg, n, "unknown argument '%s' (host, archive, file)", line);
        rc = -1;
      }
    }
    free(line);
  }
  if (!rc && na && nh) {
    pcpSay(msg, n, "give hosts or archives, not both");
    rc = -1;
  }
  if (!rc && na && pc->record) {
    pcpSay(msg, n, "record= records a live run (host=), not archives");
    rc = -1;
  }
  for (int i = 0; i < nh && !rc; i++)
    if (!addHost(pc, hosts[i], msg, n)) rc = -1;
  /* archives of one host form one context: group them by their labels */
  pc->archive = na > 0;
  for (int i = 0; i < na && !rc; i++) {
    pmHighResLogLabel lab;
    struct timespec end;
    if (archiveInfo(archives[i], &lab, &end, msg, n)) {
      rc = -1;
      break;
    }
    Host *h = NULL;
    for (int k = 0; k < pc->nhost && !h; k++)
      if (!strcmp(pc->host[k].name, lab.hostname)) h = &pc->host[k];
    if (!h && !(h = addHost(pc, "", msg, n))) rc = -1;
    if (h) {
      snprintf(h->name, sizeof h->name, "%s", lab.hostname);
      size_t used = strlen(h->spec);
      snprintf(h->spec + used, sizeof h->spec - used, "%s%s", used ? "," : "", archives[i]);
    }
  }
  freeList(hosts, nh);
  freeList(archives, na);
  if (rc) return -1;
  if (pc->offsets && !pc->archive) {
    pcpSay(msg, n, "offset= applies to archives: a live run estimates the offsets itself");
    return -1;
  }
  for (int i = 0; i < pc->nhost; i++)
    if (offsetFor(pc->offsets, pc->host[i].name, &pc->host[i].skew, msg, n)) return -1;
  /* every host named has archives (never silently ignored) */
  char **named = NULL;
  int nn = 0;
  splitList(pc->offsets ? pc->offsets : "", &named, &nn);
  for (int i = 0; i < nn && !rc; i++) {
    char *eq = strrchr(named[i], '=');
    if (eq) *eq = 0;
    if (!hostByName(pc, named[i], strlen(named[i]))) {
      pcpSay(msg, n, "clock offset for host %s, of which no archive is given", named[i]);
      rc = -1;
    }
  }
  freeList(named, nn);
  if (rc) return -1;
  if (!pc->nhost) {
    pcpSay(msg, n, "no host and no archive given (host=HOST or archive=FILE)");
    return -1;
  }
  if (!nfiles) {
    pcpSay(msg, n, "no program file given (file=PROGRAM.tq: the '-- pcp:' lines map relations to metrics)");
    return -1;
  }
  return 0;
}

/* ================================================================ records */


/* The tuple of instance in of entity relation e on host h. */
static void entVals(tq_pm_global *g, const Ent *e, const Host *h, const Inst *in, int64_t *v) {
  memset(v, 0, sizeof(int64_t) * (size_t)e->nattr);
  v[0] = in ? in->sym : h->sym;
  if (e->aSpec >= 0) v[e->aSpec] = g->symbol(g, h->spec, -1);
  if (e->aHost >= 0) v[e->aHost] = h->sym;
  if (e->aInst >= 0 && in) v[e->aInst] = in->id;
  if (e->aName >= 0 && in) v[e->aName] = g->symbol(g, in->full, -1);
}

static int produceIv(tq_pm_global *g, int rel, int kind, int64_t from, int64_t to, uint64_t id, int nv,
                     const int64_t *v) {
  tq_record r = {rel, kind, kind == TQ_REC_BEGIN ? from : to, from, to, id, nv, v};
  return g->produce(g, &r);
}

/* Ends every entity of host h at t: it was lost, or its archive ended. */
static int endHost(tq_pm_global *g, Pcp *pc, Host *h, int64_t t) {
  int rc = 0;
  int64_t v[PCP_MAX_ATTRS];
  for (int e = 1; e < pc->nent; e++) {
    Ent *en = &pc->ent[e];
    InstSet *s = &h->inst[e];
    for (int i = 0; i < s->n; i++) {
      Inst *in = &s->v[i];
      if (in->iv && en->rel >= 0) {
        entVals(g, en, h, in, v);
        rc |= produceIv(g, en->rel, TQ_REC_END, in->from, t, in->iv, en->nattr, v);
      }
      free(in->name);
      free(in->full);
    }
    s->n = 0;
  }
  if (h->hostIv && pc->ent[0].rel >= 0) {
    entVals(g, &pc->ent[0], h, NULL, v);
    rc |= produceIv(g, pc->ent[0].rel, TQ_REC_END, h->hostFrom, t, h->hostIv, pc->ent[0].nattr, v);
  }
  h->hostIv = 0;
  for (int r = 0; r < pc->nrel; r++) cacheClear(&h->cache[r], pc->rel[r].nm);
  return rc;
}

/* Is `full`, an instance of entity relation en, a process that the
** program list leaves out?  Processes are PCP's instance domain 3.9 (the
** proc PMDA's), named "PID ARGUMENTS" ("PID (NAME)" for a kernel thread):
** the pid is the leading number; the command matched is `now`, what it
** runs (proc.psinfo.cmd, fetched with the listing), or without it the base
** name of the first argument (the name for a kernel thread).  Only on live
** hosts (a replay ignores the list) with a list given. */
static int procLeftOut(tq_pm_global *g, const Pcp *pc, const Ent *en, const char *full, const char *now) {
  if (!pc->programs || pc->archive || !isProcIndom(en)) return 0;
  char *end;
  long long pid = strtoll(full, &end, 10);
  if (end == full) return 1; /* not a process's name: none of the list's */
  while (*end == ' ') end++;
  char cmd[256];
  firstWord(end, cmd, sizeof cmd);
  const char *c = cmd;
  size_t n = strlen(c);
  if (c[0] == '(' && n > 1 && c[n - 1] == ')') {
    cmd[n - 1] = 0;
    c++;
  } else {
    const char *slash = strrchr(c, '/');
    if (slash && slash[1]) c = slash + 1;
  }
  if (!now) return !g->program_wanted(g, pid, c);
  if (g->program_wanted(g, pid, now)) return 0;
  /* the command is cut at 15 characters: the first argument's base name,
  ** when it begins alike (as for --host, sensors/programs.c) */
  return !(strlen(now) >= 15 && !strncmp(c, now, 15) && g->program_wanted(g, pid, c));
}

/* Applies a listing of entity relation e on h at t: new instances begin,
** vanished ones end.  Processes the program list leaves out never begin
** (they are counted). */
static int applyListing(tq_pm_global *g, Pcp *pc, Host *h, int e, Listing *l, int64_t t) {
  Ent *en = &pc->ent[e];
  InstSet *s = &h->inst[e];
  int64_t v[PCP_MAX_ATTRS];
  int rc = 0;
  int64_t out = 0;
  for (int i = 0; i < s->n; i++) s->v[i].mark = 0;
  for (int k = 0; k < l->n; k++) {
    char nm[256];
    firstWord(l->name[k], nm, sizeof nm);
    Inst *in = instById(s, l->id[k]);
    if (in && strcmp(in->name, nm)) in = NULL; /* the id was reused: another instance */
    if (in) {
      in->mark = 1;
      continue;
    }
    if (procLeftOut(g, pc, en, l->name[k], tqMapGet(&l->cmd, (uint64_t)(uint32_t)l->id[k] + 2))) {
      out++;
      continue;
    }
    if (s->n == s->cap) {
      s->cap = s->cap ? 2 * s->cap : 64;
      s->v = tqRealloc(s->v, sizeof *s->v * (size_t)s->cap);
    }
    in = &s->v[s->n++];
    memset(in, 0, sizeof *in);
    in->id = l->id[k];
    in->name = tqStrdup(nm);
    in->full = tqStrdup(l->name[k]);
    char ent[sizeof h->name + 256 + 1];
    snprintf(ent, sizeof ent, "%s:%s", h->name, nm);
    in->sym = g->symbol(g, ent, -1);
    in->mark = 1;
    in->from = t;
    in->iv = ++pc->nextIv;
    entVals(g, en, h, in, v);
    rc |= produceIv(g, en->rel, TQ_REC_BEGIN, t, 0, in->iv, en->nattr, v);
  }
  for (int i = 0; i < s->n;) {
    Inst *in = &s->v[i];
    if (in->mark) {
      i++;
      continue;
    }
    entVals(g, en, h, in, v);
    rc |= produceIv(g, en->rel, TQ_REC_END, in->from, t, in->iv, en->nattr, v);
    free(in->name);
    free(in->full);
    s->v[i] = s->v[--s->n];
  }
  if (pc->programs && !pc->archive && isProcIndom(en)) h->progOut = out;
  cmdsFree(&l->cmd);
  return rc;
}

/* ================================================================ the detail */

static const char *stateName(int s) {
  return s == H_UP ? "up" : s == H_LOST ? "lost" : s == H_OUT ? "left out" : s == H_ENDED ? "ended" : "new";
}

/* The PM's message and its detail (--stats). */
static void report(tq_pm_global *g, tq_pm_private *p, Pcp *pc) {
  TqBuf b = {0};
  int64_t values = 0, fetches = 0, late = 0, up = 0, missed = 0, excluded = 0;
  tqBufPrintf(&b, "{\"source\": \"%s\", \"ticks\": %lld, \"hosts\": [", pc->archive ? "archives" : "pmcd",
            (long long)pc->ticks);
  pthread_mutex_lock(&pc->mu);
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    values += h->values;
    fetches += h->fetches;
    late += h->late;
    missed += h->missed;
    up += h->state == H_UP;
    tqBufPrintf(&b, "%s\n    {\"host\": ", i ? "," : "");
    bufJsonString(&b, h->name[0] ? h->name : h->spec);
    tqBufPrintf(&b, ", \"spec\": ");
    bufJsonString(&b, h->spec);
    tqBufPrintf(&b, ", \"state\": \"%s\"", stateName(h->state));
    if (h->why[0]) {
      tqBufPrintf(&b, ", \"why\": ");
      bufJsonString(&b, h->why);
    }
    tqBufPrintf(&b,
                ", \"fetches\": %lld, \"values\": %lld, \"listings\": %lld, \"late\": %lld, \"samples_missed\": %lld, "
                "\"reconnects\": %lld",
                (long long)h->fetches, (long long)h->values, (long long)h->listings, (long long)h->late,
                (long long)h->missed, (long long)h->reconnects);
    if (!pc->archive) tqBufPrintf(&b, ", \"bytes_received\": %lld", (long long)h->bytes);
    if (pc->programs && !pc->archive) tqBufPrintf(&b, ", \"programs_left_out\": %lld", (long long)h->progOut);
    if (pc->record)
      tqBufPrintf(&b, ", \"recorded\": %lld, \"record_refused\": %lld", (long long)h->recWritten, (long long)h->recLost);
    if (pc->archive && h->skew) tqBufPrintf(&b, ", \"clock_offset_ms_applied\": %.3f", (double)h->skew / 1e6);
    if (h->offsetKnown)
      tqBufPrintf(&b, ", \"clock_offset_ms\": %.3f, \"rtt_ms\": %.3f", (double)h->offset / 1e6, (double)h->rtt / 1e6);
    tqBufPrintf(&b, ", \"relations\": {");
    int first = 1;
    for (int r = 0; r < pc->nrel; r++) {
      if (!pc->rel[r].needed) continue;
      tqBufPrintf(&b, "%s", first ? "" : ", ");
      first = 0;
      bufJsonString(&b, pc->rel[r].name);
      int64_t x = h->relExcluded ? h->relExcluded[r] : 0;
      excluded += x;
      tqBufPrintf(&b, ": {\"enabled\": %d, \"instances_last_fetch\": %lld, \"values\": %lld, \"excluded\": %lld}",
                  h->en ? h->en[r].n : 0, h->lastN ? (long long)h->lastN[r] : 0LL,
                  h->relValues ? (long long)h->relValues[r] : 0LL, (long long)x);
    }
    tqBufPrintf(&b, "}}");
  }
  pthread_mutex_unlock(&pc->mu);
  tqBufPrintf(&b,
              "\n  ], \"values\": %lld, \"fetches\": %lld, \"late\": %lld, \"samples_missed\": %lld, \"excluded\": %lld",
              (long long)values, (long long)fetches, (long long)late, (long long)missed, (long long)excluded);
  if (!pc->archive)
    tqBufPrintf(&b, ", \"behind\": %lld, \"behind_at_start\": %lld", (long long)pc->behind, (long long)pc->behindAtStart);
  tqBufPrintf(&b, "}");
  if (g->version >= 6) g->set_detail(g, p, b.s);
  tqBufFree(&b);
  char miss[48] = "";
  if (missed) pcpSay(miss, sizeof miss, " samples_missed=%lld", (long long)missed);
  pcpSay(p->message, sizeof p->message, "hosts=%d up=%lld ticks=%lld fetches=%lld values=%lld late=%lld%s", pc->nhost,
         (long long)up, (long long)pc->ticks, (long long)fetches, (long long)values, (long long)late, miss);
}

/* ================================================================ recording the run (--pcp-record) */

#define REC_DOMAIN 245 /* LOGIMPORT's domain (PMI_DOMAIN): tqmon.entity.* */

/* Starts the recording of h: the archive PREFIX-HOST, with the metrics the
** run fetches (their descriptors as pmcd gave them) and an existence
** metric tqmon.entity.E per entity relation.  Returns 0, or -1 with msg. */
static int recStart(Pcp *pc, Host *h, char *msg, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s-%s", pc->record, h->name);
  h->recMaxId = tqCalloc((size_t)pc->nent, sizeof(int));
  for (int e = 0; e < pc->nent; e++) h->recMaxId[e] = -1;
  if ((h->rec = pmiStart(path, 0)) < 0) {
    pcpSay(msg, n, "cannot record %s: %s", path, pmiErrStr(h->rec));
    return -1;
  }
  int sts = pmiSetHostname(h->name);
  if (sts >= 0) sts = pmiSetTimezone("UTC");
  for (int i = 0; i < pc->conf.nmetric && sts >= 0; i++)
    if (h->pmid[i]) {
      const pmDesc *d = &h->desc[i];
      sts = pmiAddMetric(pc->conf.metric[i].metric, d->pmid, d->type, d->indom, d->sem, d->units);
      if (sts == PMI_ERR_DUPMETRICNAME) sts = 0; /* mapped twice */
    }
  for (int e = 0; e < pc->nent && sts >= 0; e++) {
    char name[PCP_NAME_MAX + 16];
    snprintf(name, sizeof name, "tqmon.entity.%s", pc->ent[e].name);
    sts = pmiAddMetric(name, pmiID(REC_DOMAIN, 1000, e), PM_TYPE_U32, pc->ent[e].indom, PM_SEM_DISCRETE,
                       pmiUnits(0, 0, 0, 0, 0, 0));
  }
  if (sts < 0) {
    pcpSay(msg, n, "cannot record %s: %s", path, pmiErrStr(sts));
    return -1;
  }
  return 0;
}

static void recPut(Host *h, const char *metric, const char *inst, const char *value) {
  if (pmiPutValue(metric, inst, value) < 0) h->recLost++;
}

/* Writes the record of tick h->recT: the instances that existed, and the
** values the run fetched (after the samples of the tick were answered). */
static void recTick(Pcp *pc, Host *h) {
  if (h->rec < 0 || !h->recT) return;
  pmiUseContext(h->rec);
  char name[PCP_NAME_MAX + 16], val[64];
  int any = 0;
  if (h->hostIv) {
    snprintf(name, sizeof name, "tqmon.entity.%s", pc->ent[0].name);
    recPut(h, name, "", "1");
    any = 1;
  }
  /* the new instances first, in increasing numbers: libpcp_import (PCP
  ** 6.0) writes an instance domain with its numbers sorted but its names
  ** in the order they were added, so the two pair wrongly unless they come
  ** in increasing numbers (and a value put before an insertion lands on
  ** another instance).  An instance numbered below one recorded already (a
  ** process number used again) is recorded under the next free number:
  ** its name, which names the entity, is kept, its Inst is not. */
  for (int e = 1; e < pc->nent; e++) {
    InstSet *set = &h->inst[e];
    for (;;) {
      Inst *next = NULL;
      for (int i = 0; i < set->n; i++)
        if (!set->v[i].recorded && (!next || set->v[i].id < next->id)) next = &set->v[i];
      if (!next) break;
      int id = next->id > h->recMaxId[e] ? next->id : h->recMaxId[e] + 1;
      if (pmiAddInstance(pc->ent[e].indom, next->full, id) < 0) {
        next->recorded = -1; /* refused (a name recorded already under another number): never put */
        h->recLost++;
      } else {
        next->recorded = 1;
        h->recMaxId[e] = id;
      }
    }
  }
  for (int e = 1; e < pc->nent; e++) {
    snprintf(name, sizeof name, "tqmon.entity.%s", pc->ent[e].name);
    for (int i = 0; i < h->inst[e].n; i++)
      if (h->inst[e].v[i].recorded == 1) {
        recPut(h, name, h->inst[e].v[i].full, "1");
        any = 1;
      }
  }
  for (int r = 0; r < pc->nrel; r++) {
    Rel *rl = &pc->rel[r];
    Cache *c = &h->cache[r];
    if (!c->valid || c->t != h->recT) continue;
    for (int k = 0; k < c->n; k++) {
      const char *inst = "";
      if (rl->indom != PM_INDOM_NULL) {
        Inst *in = instById(&h->inst[rl->ent], c->inst[k]);
        if (!in || in->recorded != 1) continue;
        inst = in->full;
      }
      for (int j = 0; j < rl->nm; j++) {
        const Val *v = &c->v[k * rl->nm + j];
        int type = pc->conf.metric[rl->metric[j]].type;
        if (!v->ok) continue;
        if (type == PM_TYPE_STRING) recPut(h, pc->conf.metric[rl->metric[j]].metric, inst, v->s ? v->s : "");
        else {
          if (type == PM_TYPE_FLOAT || type == PM_TYPE_DOUBLE) snprintf(val, sizeof val, "%.17g", v->d);
          else if (type == PM_TYPE_U32 || type == PM_TYPE_U64) snprintf(val, sizeof val, "%llu", (unsigned long long)v->i);
          else snprintf(val, sizeof val, "%lld", (long long)v->i);
          recPut(h, pc->conf.metric[rl->metric[j]].metric, inst, val);
        }
        any = 1;
      }
    }
  }
  if (any) {
    int sts = pmiWrite((int)(h->recT / SEC), (int)(h->recT % SEC / 1000));
    if (sts < 0) h->recLost++;
    else h->recWritten++;
  }
  h->recT = 0;
}

/* The host was lost: a <mark> record, so that PCP's tools (and a replay)
** do not interpolate across the gap. */
static void recGap(Host *h) {
  if (h->rec < 0) return;
  pmiUseContext(h->rec);
  if (pmiPutMark() < 0) h->recLost++;
}

static void recEnd(Pcp *pc) {
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    if (h->rec < 0) continue;
    recTick(pc, h);
    pmiUseContext(h->rec);
    if (pmiEnd() < 0) h->recLost++;
    h->rec = -1;
  }
}

/* ================================================================ START, SNAPSHOT, END */

static void stopWorkers(Pcp *pc) {
  pthread_mutex_lock(&pc->mu);
  pc->quit = 1;
  pthread_cond_broadcast(&pc->work);
  pthread_mutex_unlock(&pc->mu);
  for (int i = 0; i < pc->nhost; i++)
    if (pc->host[i].thread) pthread_join(pc->host[i].th, NULL);
}

static void pcpFree(Pcp *pc) {
  if (!pc) return;
  stopWorkers(pc);
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    for (int r = 0; r < pc->nrel; r++) {
      if (h->cache) cacheClear(&h->cache[r], pc->rel[r].nm);
      if (h->next) cacheClear(&h->next[r], pc->rel[r].nm);
      if (h->en) nameSetFree(&h->en[r]);
      if (h->prof) free(h->prof[r]);
    }
    for (int e = 0; h->inst && e < pc->nent; e++) {
      for (int k = 0; k < h->inst[e].n; k++) {
        free(h->inst[e].v[k].name);
        free(h->inst[e].v[k].full);
      }
      free(h->inst[e].v);
    }
    for (int e = 0; h->list && e < pc->nent; e++) {
      free(h->list[e].id);
      if (h->list[e].name) free(h->list[e].name); /* pmGetInDom: one allocation */
      cmdsFree(&h->list[e].cmd);
    }
    free(h->cache), free(h->next), free(h->en), free(h->prof), free(h->nprof),
        free(h->fetch);
    free(h->inst), free(h->list), free(h->pmid), free(h->desc), free(h->exist), free(h->recMaxId), free(h->lastN), free(h->relValues);
    free(h->relExcluded);
  }
  free(pc->host);
  free(pc->ent);
  free(pc->rel);
  pcpConfFree(&pc->conf);
  free(pc->record);
  free(pc->offsets);
  pthread_mutex_destroy(&pc->mu);
  pthread_cond_destroy(&pc->work);
  pthread_cond_destroy(&pc->finished);
  free(pc);
}

static Pcp *pcpNew(void) {
  Pcp *pc = tqCalloc(1, sizeof *pc);
  pthread_mutex_init(&pc->mu, NULL);
  pthread_cond_init(&pc->work, NULL);
  pthread_cond_init(&pc->finished, NULL);
  return pc;
}

static tq_pm_status pcpStart(tq_pm_global *g, tq_pm_private *p) {
  char msg[sizeof p->message];
  if (g->version < 6) {
    pcpSay(p->message, sizeof p->message, "needs an engine of interface version 6");
    return TQ_PM_FATAL;
  }
  Pcp *pc = pcpNew();
  p->data = pc;
  pc->tick = g->tick > 0 ? g->tick : SEC;
  pc->programs = g->version >= 7 && g->program_wanted && !g->program_wanted(g, -1, NULL);
  if (parseArgs(pc, p->args, msg, sizeof msg) || bindProgram(g, pc, msg, sizeof msg)) {
    pcpSay(p->message, sizeof p->message, "%s", msg);
    return TQ_PM_FATAL; /* nothing produced: nothing half-stored */
  }
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    h->pcp = pc;
    h->ctx = -1;
    h->fd = -1;
    h->rec = -1;
    h->fetch = tqCalloc((size_t)pc->nrel, sizeof(int));
    h->prof = tqCalloc((size_t)pc->nrel, sizeof(int *));
    h->nprof = tqCalloc((size_t)pc->nrel, sizeof(int));
    h->next = tqCalloc((size_t)pc->nrel, sizeof(Cache));
    h->cache = tqCalloc((size_t)pc->nrel, sizeof(Cache));
    h->en = tqCalloc((size_t)pc->nrel, sizeof(NameSet));
    h->lastN = tqCalloc((size_t)pc->nrel, sizeof(int64_t));
    h->relValues = tqCalloc((size_t)pc->nrel, sizeof(int64_t));
    h->relExcluded = tqCalloc((size_t)pc->nrel, sizeof(int64_t));
    h->list = tqCalloc((size_t)pc->nent, sizeof(Listing));
    h->inst = tqCalloc((size_t)pc->nent, sizeof(InstSet));
    if (pthread_create(&h->th, NULL, worker, h)) {
      pcpSay(p->message, sizeof p->message, "cannot start a thread: %s", strerror(errno));
      return TQ_PM_FATAL;
    }
    h->thread = 1;
  }
  /* connect to every host at once; each is checked against the mapping */
  int posted[MAX_HOSTS];
  for (int i = 0; i < pc->nhost; i++) posted[i] = JOB_CONNECT;
  runJobs(pc, posted, pc->archive ? 0 : nowNs() + 30 * SEC);
  int usable = 0;
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    pthread_mutex_lock(&pc->mu);
    int done = h->done, sts = h->sts;
    pthread_mutex_unlock(&pc->mu);
    if (!done) pcpSay(h->err, sizeof h->err, "%s did not answer within 30 s", h->spec);
    if (!done || sts) {
      h->state = H_OUT;
      pcpSay(h->why, sizeof h->why, "%s", h->err);
      g->log(g, p, pc->archive ? TQ_LOG_ERROR : TQ_LOG_WARNING, "host %s left out: %s", h->name[0] ? h->name : h->spec,
             h->err);
      if (pc->archive) {
        pcpSay(p->message, sizeof p->message, "%s", h->err);
        return TQ_PM_FATAL; /* a bad archive refuses the run */
      }
      continue;
    }
    for (int k = 0; k < i; k++)
      if (pc->host[k].state == H_UP && !strcmp(pc->host[k].name, h->name)) {
        /* two pmcds answering with one name: tell them apart by spec */
        snprintf(h->name, sizeof h->name, "%s", h->spec);
      }
    h->sym = g->symbol(g, h->name, -1);
    h->state = H_UP;
    usable++;
  }
  if (!usable) {
    pcpSay(p->message, sizeof p->message, "no host can be used (%s)", pc->host[0].why);
    return TQ_PM_FATAL;
  }
  for (int i = 0; pc->record && i < pc->nhost; i++)
    if (pc->host[i].state == H_UP && recStart(pc, &pc->host[i], p->message, sizeof p->message)) return TQ_PM_FATAL;
  report(g, p, pc);
  return TQ_PM_OK;
}

/* The profile of relation r on host h: the enabled instances that exist.
** The instances that exist and are left out (all of them when the relation
** is not fetched on h) are counted: their values pmcd does not send. */
static void buildProfile(tq_pm_global *g, Pcp *pc, Host *h, int r) {
  Rel *rl = &pc->rel[r];
  const NameSet *en = &h->en[r];
  free(h->prof[r]);
  h->prof[r] = NULL;
  h->nprof[r] = 0;
  h->fetch[r] = 0;
  if (!rl->needed) return;
  if (rl->indom != PM_INDOM_NULL) h->relExcluded[r] += h->inst[rl->ent].n; /* less those in the profile, below */
  if (!en->n && !rl->ndelta) return;
  if (rl->indom == PM_INDOM_NULL) {
    h->fetch[r] = nameFind(en, h->name) >= 0;
    for (int k = 0; k < rl->ndelta; k++) h->fetch[r] |= g->enabled(g, rl->delta[k], h->sym);
    return;
  }
  InstSet *s = &h->inst[rl->ent];
  h->prof[r] = tqCalloc((size_t)(rl->ndelta ? s->n : en->n) + 1, sizeof(int));
  if (!rl->ndelta) {
    for (int k = 0; k < en->n; k++) {
      Inst *in = instByName(s, en->v[k]);
      if (in) h->prof[r][h->nprof[r]++] = in->id;
    }
  } else {
    /* a delta relation's entities: the engine samples this relation for
    ** them, but tells only their delta relation's flags */
    for (int i = 0; i < s->n; i++) {
      int on = nameFind(en, s->v[i].name) >= 0;
      for (int k = 0; k < rl->ndelta && !on; k++) on = g->enabled(g, rl->delta[k], s->v[i].sym);
      if (on) h->prof[r][h->nprof[r]++] = s->v[i].id;
    }
  }
  h->relExcluded[r] -= h->nprof[r];
  h->fetch[r] = h->nprof[r] > 0;
}

/* Takes what a host's finished job brought: listings become entity
** records, fetched values the cache of the tick.  A lost host ends. */
static int takeJob(tq_pm_global *g, tq_pm_private *p, Pcp *pc, Host *h, int64_t t) {
  int rc = 0;
  if (h->sts < 0) {
    if (pc->archive && h->sts == PM_ERR_EOL && t + h->skew < h->first) return 0; /* its archives begin later */
    if (pc->archive && h->sts == PM_ERR_EOL) {
      h->state = H_ENDED;
      pcpSay(h->why, sizeof h->why, "the archive ends");
      g->log(g, p, TQ_LOG_INFO, "host %s: its archive ends before %lld", h->name, (long long)t);
    } else if (pc->archive || connectionLost(h->sts)) {
      h->state = H_LOST;
      pcpSay(h->why, sizeof h->why, "%s", h->err);
      g->log(g, p, TQ_LOG_WARNING, "host %s (%s) lost at %lld: %s: its entities end", h->name, h->spec, (long long)t,
             h->err);
      recGap(h);
    } else {
      g->log(g, p, TQ_LOG_WARNING, "host %s: %s", h->name, h->err);
      return 0;
    }
    return endHost(g, pc, h, t);
  }
  if (h->list[0].want && h->absent) return endHost(g, pc, h, t); /* away then, as the recording says */
  if (!h->hostIv && pc->ent[0].rel >= 0 && pc->ent[0].needed) {
    int64_t v[PCP_MAX_ATTRS];
    h->hostIv = ++pc->nextIv;
    h->hostFrom = t;
    entVals(g, &pc->ent[0], h, NULL, v);
    rc |= produceIv(g, pc->ent[0].rel, TQ_REC_BEGIN, t, 0, h->hostIv, pc->ent[0].nattr, v);
  }
  for (int e = 1; e < pc->nent; e++)
    if (h->list[e].want) {
      rc |= applyListing(g, pc, h, e, &h->list[e], t);
      free(h->list[e].id);
      free(h->list[e].name);
      h->list[e].id = NULL;
      h->list[e].name = NULL;
      h->list[e].n = 0;
    }
  for (int r = 0; r < pc->nrel; r++)
    if (h->fetch[r]) {
      cacheClear(&h->cache[r], pc->rel[r].nm);
      h->cache[r] = h->next[r];
      memset(&h->next[r], 0, sizeof h->next[r]);
      Cache *c = &h->cache[r];
      c->nasked = h->nprof[r];
      c->asked = tqMalloc(sizeof(int) * (size_t)(c->nasked + 1));
      if (c->nasked) memcpy(c->asked, h->prof[r], sizeof(int) * (size_t)c->nasked);
      h->lastN[r] = h->cache[r].n;
    }
  return rc;
}

static tq_pm_status pcpSnapshot(tq_pm_global *g, tq_pm_private *p, Pcp *pc) {
  int64_t t = g->now;
  int posted[MAX_HOSTS];
  pc->ticks++;
  pc->deadline = tickDeadline(pc);
  int64_t lag = pc->archive ? 0 : nowNs() - t;
  if (lag > pc->tick / 2) {
    if (pc->caughtUp) pc->behind++;
    else pc->behindAtStart++;
  } else {
    pc->caughtUp = 1;
  }
  for (int i = 0; i < pc->nhost; i++) recTick(pc, &pc->host[i]); /* the last tick, its samples answered */
  for (int e = 0; e < pc->nent; e++) pc->ent[e].needed = pc->ent[e].rel >= 0 && g->needed(g, pc->ent[e].rel);
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    posted[i] = JOB_NONE;
    if (h->state == H_LOST && !pc->archive && !hostBusy(pc, h)) posted[i] = JOB_RECONNECT;
    if (h->state != H_UP) continue;
    if (hostBusy(pc, h)) {
      h->late++; /* still on an earlier tick: nothing from it now */
      continue;
    }
    h->jobT = t;
    for (int e = 1; e < pc->nent; e++) h->list[e].want = pc->ent[e].needed;
    h->list[0].want = h->exist && h->exist[0]; /* a recording says when the host was away */
    for (int r = 0; r < pc->nrel; r++) buildProfile(g, pc, h, r);
    posted[i] = JOB_TICK;
  }
  runJobs(pc, posted, pc->deadline);
  int rc = 0;
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    if (posted[i] == JOB_TICK && jobEnded(pc, h, 1)) {
      rc |= takeJob(g, p, pc, h, t);
      if (h->state == H_UP) h->recT = t;
    }
    else if (posted[i] == JOB_RECONNECT && jobEnded(pc, h, 0)) {
      if (h->sts >= 0) {
        h->state = H_UP;
        h->why[0] = 0;
        h->reconnects++;
        g->log(g, p, TQ_LOG_WARNING, "host %s (%s) back at %lld: its entities begin again from the next snapshot",
               h->name, h->spec, (long long)t);
      }
    }
  }
  report(g, p, pc);
  if (rc) {
    pcpSay(p->message, sizeof p->message, "the engine refused a record");
    return TQ_PM_FATAL;
  }
  int up = 0;
  int64_t values = 0;
  for (int i = 0; i < pc->nhost; i++) {
    up += pc->host[i].state == H_UP;
    values += pc->host[i].values;
  }
  g->log(g, p, TQ_LOG_INFO, "tick %lld: %d of %d hosts up, %lld values so far (taken %.0f ms after the tick)", (long long)t,
         up, pc->nhost, (long long)values, (double)lag / 1e6);
  if (!up && pc->archive) g->halt(g); /* every archive ended */
  return TQ_PM_OK;
}

static tq_pm_status pcpCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Pcp *pc = p->data;
  switch (what) {
    case TQ_PM_START: return pcpStart(g, p);
    case TQ_PM_SNAPSHOT: return pc ? pcpSnapshot(g, p, pc) : TQ_PM_OK;
    case TQ_PM_END:
      if (pc) {
        if (pc->behind)
          g->log(g, p, TQ_LOG_WARNING,
                 "%lld snapshots were taken more than half a tick after their tick: their rows hold values of a later time",
                 (long long)pc->behind);
        recEnd(pc);
        report(g, p, pc);
        pcpFree(pc);
      }
      p->data = NULL;
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

/* ================================================================ enable, sample, delta */

/* The host and instance name an entity names ("HOST:NAME"), or for the
** Host entity the host alone (*inst = NULL).  Returns the host or NULL. */
static Host *entityHost(tq_pm_global *g, Pcp *pc, const Rel *rl, int64_t entity, const char **inst) {
  const char *s = g->symbol_name(g, entity);
  *inst = NULL;
  if (!s) return NULL;
  if (rl->indom == PM_INDOM_NULL) return hostByName(pc, s, strlen(s));
  const char *colon = strchr(s, ':');
  if (!colon) return NULL;
  *inst = colon + 1;
  return hostByName(pc, s, (size_t)(colon - s));
}

/* A sample of `who` at t that the instance was there for and that has no
** tuple: counted on its host and told to the engine, so that the answers
** that read the relation say they may be incomplete at t (docs/losses.md). */
static void missedSample(tq_pm_global *g, tq_pm_private *p, Host *h, int64_t who, int64_t t) {
  h->missed++;
  if (g->version >= 9 && g->lost) g->lost(g, p->rel, who, t, t, 1, 0);
}

static tq_pm_status pcpEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  Pcp *pc = p->data;
  Rel *rl = pc ? relById(pc, p->rel) : NULL;
  if (!rl) return TQ_PM_OK;
  const char *inst;
  Host *h = entityHost(g, pc, rl, entity, &inst);
  if (!h) {
    if (on) g->log(g, p, TQ_LOG_INFO, "%s enabled on %s, which names no host of the run", rl->name, g->symbol_name(g, entity));
    return TQ_PM_OK;
  }
  NameSet *en = &h->en[rl - pc->rel];
  const char *key = inst ? inst : h->name;
  if (on) nameAdd(en, key);
  else nameDel(en, key);
  return TQ_PM_OK;
}

/* Was instance id in the profile of c's fetch (so, not in it, it went
** away)?  A relation without an instance domain is asked whole. */
static int cacheAsked(const Rel *rl, const Cache *c, int id) {
  if (rl->indom == PM_INDOM_NULL) return 1;
  for (int k = 0; k < c->nasked; k++)
    if (c->asked[k] == id) return 1;
  return 0;
}

/* Entities enabled during tick t (they began in it) were not in the
** tick's fetch.  At the first sample that misses one, relation r is
** fetched again on every host where an instance enabled now was not asked
** at t (or whose fetch at t did not come), all at once and within what is
** left of the tick's deadline: a slow host holds the others no longer
** than the snapshot would (each used to be fetched in turn, with a fresh
** 0.8 of a tick each).  Once per relation, host and tick.  Returns -1
** when the engine refused a record. */
static int refetch(tq_pm_global *g, tq_pm_private *p, Pcp *pc, int r, int64_t t) {
  if (pc->deadline && nowNs() >= pc->deadline) return 0; /* (what is missing is a loss) */
  int posted[MAX_HOSTS] = {0}, any = 0;
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    Cache *c = &h->cache[r];
    int atT = c->valid && c->t == t;
    if (h->state != H_UP || (atT && c->refetched) || hostBusy(pc, h)) continue;
    int64_t excluded = h->relExcluded[r];
    for (int k = 0; k < pc->nrel; k++) h->fetch[k] = 0;
    for (int e = 0; e < pc->nent; e++) h->list[e].want = 0;
    buildProfile(g, pc, h, r);
    int need = h->fetch[r] && !atT;
    for (int k = 0; h->fetch[r] && !need && k < h->nprof[r]; k++) need = !cacheAsked(&pc->rel[r], c, h->prof[r][k]);
    if (!need) { /* nothing enabled since: not fetched, not counted */
      h->relExcluded[r] = excluded;
      h->fetch[r] = 0;
      if (atT) c->refetched = 1;
      continue;
    }
    h->jobT = t;
    posted[i] = JOB_TICK;
    any = 1;
  }
  if (!any) return 0;
  runJobs(pc, posted, pc->deadline);
  int rc = 0;
  for (int i = 0; i < pc->nhost; i++) {
    Host *h = &pc->host[i];
    /* a failed fetch (a host lost, an archive at its end) is dealt with at
    ** the next snapshot: a sample is no place to end entities begun at
    ** this very instant */
    if (!posted[i] || !jobEnded(pc, h, 1) || h->sts < 0) continue;
    rc |= takeJob(g, p, pc, h, t);
    if (h->state == H_UP) h->cache[r].refetched = 1;
  }
  return rc ? -1 : 0;
}

static tq_pm_status pcpSample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  Pcp *pc = p->data;
  Rel *rl = pc ? relById(pc, p->rel) : NULL;
  if (!rl || attr != rl->flagAttr) return TQ_PM_OK;
  const char *inst;
  Host *h = entityHost(g, pc, rl, who, &inst);
  if (!h || h->state != H_UP) return TQ_PM_OK;
  int r = (int)(rl - pc->rel);
  int id = (int)PM_IN_NULL;
  if (inst) {
    Inst *in = instByName(&h->inst[rl->ent], inst);
    if (!in) return TQ_PM_OK; /* not an instance now */
    id = in->id;
  }
  Cache *c = &h->cache[r];
  int slot = -1;
  for (int tries = 0; tries < 2 && slot < 0; tries++) {
    if (c->valid && c->t == t)
      for (int k = 0; k < c->n && slot < 0; k++)
        if (c->inst[k] == id) slot = k;
    if (slot >= 0 || tries || (c->valid && c->t == t && (c->refetched || cacheAsked(rl, c, id)))) break;
    if (refetch(g, p, pc, r, t)) return TQ_PM_FATAL;
    if (h->state != H_UP) return TQ_PM_OK;
    c = &h->cache[r];
  }
  if (slot < 0) {
    /* asked at t and not there: the instance went away (no tuple, no
    ** loss); not asked at t (the host late, the fetch failed, no time left
    ** in the tick to fetch an entity begun in it): a loss */
    if (!(c->valid && c->t == t && cacheAsked(rl, c, id))) missedSample(g, p, h, who, t);
    return TQ_PM_OK;
  }
  int64_t v[PCP_MAX_ATTRS];
  memset(v, 0, sizeof v);
  v[rl->flagAttr] = who;
  if (rl->hostAttr >= 0) v[rl->hostAttr] = h->sym;
  for (int k = 0; k < rl->nm; k++) {
    const Val *x = &c->v[slot * rl->nm + k];
    if (!x->ok) { /* a metric without a value for it: no tuple, a loss */
      missedSample(g, p, h, who, t);
      return TQ_PM_OK;
    }
    int type = pc->conf.metric[rl->metric[k]].type;
    if (rl->ty[k] == TQ_TY_STRING) {
      v[rl->attr[k]] = g->symbol(g, x->s ? x->s : "", -1);
    } else if (rl->ty[k] == TQ_TY_FLOAT) {
      double d = type == PM_TYPE_FLOAT || type == PM_TYPE_DOUBLE ? x->d : (double)x->i;
      memcpy(&v[rl->attr[k]], &d, sizeof d);
    } else {
      v[rl->attr[k]] = x->i;
    }
  }
  g->sample_answer(g, cookie, v);
  return TQ_PM_OK;
}

/* The delta relation: a counter's increase over the tick (a counter that
** wrapped at 32 or 64 bits counts from its wrap), the other metrics as
** they are at the tick. */
static tq_pm_status pcpDelta(tq_pm_global *g, tq_pm_private *p, const tq_record *cur, const tq_record *prev,
                             int64_t *out) {
  Pcp *pc = p->data;
  Rel *rl = pc ? relById(pc, p->rel) : NULL;
  if (!rl) return TQ_PM_OK;
  for (int k = 0; k < rl->nm; k++) {
    const PcpMetricConf *m = &pc->conf.metric[rl->metric[k]];
    int a = rl->attr[k];
    if (m->sem != PM_SEM_COUNTER || rl->ty[k] == TQ_TY_STRING) {
      out[a] = cur->vals[a];
    } else if (rl->ty[k] == TQ_TY_FLOAT) {
      double c, q;
      memcpy(&c, &cur->vals[a], sizeof c);
      memcpy(&q, &prev->vals[a], sizeof q);
      c -= q;
      memcpy(&out[a], &c, sizeof c);
    } else if (m->type == PM_TYPE_U32) {
      out[a] = (int64_t)(((uint64_t)cur->vals[a] - (uint64_t)prev->vals[a]) & 0xffffffffu);
    } else {
      out[a] = (int64_t)((uint64_t)cur->vals[a] - (uint64_t)prev->vals[a]);
    }
  }
  return TQ_PM_OK;
}

/* The line tqmon explain shows for relation rel (after tq_prepare, before
** or without START): the metrics fetched, from which hosts, and the
** instance profile the queries' alpha operators set. */
static tq_pm_status pcpDescribe(tq_pm_global *g, tq_pm_private *p, int rel, char *out, int n) {
  const char *name = g->relation_name(g, rel);
  Pcp *pc = pcpNew();
  char msg[256];
  if (!name || parseArgs(pc, p->args, msg, sizeof msg)) {
    pcpSay(out, (size_t)n, "%s", name ? msg : "no such relation");
    pcpFree(pc);
    return TQ_PM_OK;
  }
  TqBuf b = {0}, hosts = {0};
  for (int i = 0; i < pc->nhost; i++) tqBufPrintf(&hosts, "%s%s", i ? ", " : "", pc->host[i].spec);
  const char *from = pc->archive ? "the archives" : "pmcd on";
  for (int i = 0; i < pc->conf.nindom; i++)
    if (!strcasecmp(pc->conf.indom[i].rel, name)) {
      char ind[32];
      pcpIndomText(pc->conf.indom[i].indom, ind, sizeof ind);
      tqBufPrintf(&b, "instance domain %s listed (pmGetInDom) at each snapshot from %s %s; entities HOST:INSTANCE", ind,
                  from, hosts.s);
    }
  pmInDom indom = PM_INDOM_NULL;
  int nm = 0;
  for (int i = 0; i < pc->conf.nmetric; i++)
    if (!strcasecmp(pc->conf.metric[i].rel, name)) {
      tqBufPrintf(&b, "%s%s", nm++ ? ", " : "pmFetch of ", pc->conf.metric[i].metric);
      indom = pc->conf.metric[i].indom;
    }
  if (nm && indom == PM_INDOM_NULL)
    tqBufPrintf(&b, " (one value a host) from %s %s, on the hosts the alpha enables", from, hosts.s);
  else if (nm)
    tqBufPrintf(&b, " from %s %s; instance profile on each host: exactly the instances the alpha enables there "
                    "(entity HOST:INSTANCE), set before each fetch; a host where it enables none is not asked "
                    "(a selection on the instance is in the alpha's argument, so in the profile; one on values is "
                    "checked in the monitor)",
                from, hosts.s);
  if (!b.s && !strcasecmp(name, "Host")) tqBufPrintf(&b, "the hosts reached: %s (named as pmcd names itself)", hosts.s);
  if (!b.s) tqBufPrintf(&b, "no '-- pcp:' line maps %s", name);
  pcpSay(out, (size_t)n, "%s", b.s);
  tqBufFree(&b);
  tqBufFree(&hosts);
  pcpFree(pc);
  return TQ_PM_OK;
}

static tq_pm_status pcpInit(tq_pm_global *g, tq_pm_private *p) {
  if (tqPcpLoad(p->message, sizeof p->message)) return TQ_PM_ERROR;
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "*";
  return TQ_PM_OK;
}

const tq_pm snsPcpPm = {
    .version = TQ_PM_VERSION,
    .name = "pcp",
    .description = "PRODUCER of the relations the program's '-- pcp:' lines map, from pmcd on many hosts or archives",
    .init = pcpInit,
    .call = pcpCall,
    .enable = pcpEnable,
    .sample = pcpSample,
    .delta = pcpDelta,
    .describe = pcpDescribe,
};
