/*
** host.c - the Linux host as built-in processor modules: processes and
** processors read from /proc.  sensors/host.tq declares the relations and
** sensors/host.md documents them for users.
**
**   host               GROUPER: every PM below (tqmon run --host)
**   host_process       PRODUCER of the entity relation Process
**   host_processor     PRODUCER of the entity relation Processor
**   host_processstate  PRODUCER of ProcessState  (sampled: /proc/PID/stat)
**   host_lastprocessor PRODUCER of LastProcessor (sampled: /proc/PID/stat)
**   host_cputime       PRODUCER of CpuTime       (sampled: /proc/PID/stat)
**   host_memory        PRODUCER of Memory        (sampled: /proc/PID/statm)
**   host_io            PRODUCER of Io            (sampled: /proc/PID/io)
**   host_runningon     PRODUCER of RunningOn_sampled, the sampled sensor of
**                      the kernel's RunningOn (sensors/kernel.tq; rule
**                      SENSOR): /proc/TID/stat of the enabled Threads of
**                      the kernel sensors, their state R and CPU (field 39);
**                      not a member of host: a run names it (--pm
**                      host_runningon), its answer being near the traced
**                      sensor's, not the same
**
** Entities are named by their kernel numbers: the Process "1234" is pid
** 1234, the Processor "cpu0" the first CPU.  Values are filled by attribute
** name (Process, Pid, Command, State, Ppid, Threads, Processor, Ns, UserNs,
** SystemNs, Rss, Vsize, ReadBytes, WriteBytes), so a program may declare a
** relation with fewer attributes or in another order than host.tq; an
** attribute the host does not know, or of the wrong type, disables the PM
** at START with a message.
**
** What each read costs (the point of alpha: sampling an entity reads only
** that entity's files):
**   - host_process lists /proc once per snapshot; a pid it has not seen
**     before has its stat read once, and only when the Process relation
**     has an attribute from it (Command, ...).  A pid that disappears from
**     the listing ends its Process interval.  A pid reused between two
**     snapshots is not noticed.
**   - host_processor reads /proc/stat once, at the first snapshot (CPUs
**     coming online later are not seen).
**   - a sampled PM reads one file of the pid it is asked about, at each
**     sample request; the engine asks only about the processes a query
**     enabled, and only while their Process entity exists.
** Every PM counts its reads in its message (tq_get_info, the "pms" of
** --stats): "reads=N failed=N [lost=N] pids=N [P,...]" for a sampled PM
** (the first pids it read, in order), "listings=N reads=N failed=N
** [lost=N] begun=N ended=N alive=N" for host_process (lost= when some).  Tests check from these which
** files were read.  A read that fails because the process is gone is no
** loss (it has no tuple then); one of a process that is still there (a
** file it may not read, a format it does not know) is: "lost", and told to
** the engine (g->lost), so that the answers that read it say they may be
** incomplete (docs/losses.md).
*/
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "sensorsInt.h"

/* ================================================================ fields */

/* What a host attribute holds, and which file it comes from. */
enum {
  F_PROCESS = 1, /* the process entity (its pid as text) */
  F_PID,         /* pid */
  F_COMMAND,     /* comm (stat field 2) */
  F_STATE,       /* state letter (field 3) as an enum */
  F_PPID,        /* field 4 */
  F_THREADS,     /* num_threads (field 20) */
  F_PROCESSOR,   /* the CPU it last ran on (field 39) as a Processor entity */
  F_NS,          /* utime + stime (fields 14, 15) in ns */
  F_USERNS,      /* utime in ns */
  F_SYSTEMNS,    /* stime in ns */
  F_RSS,         /* resident set in bytes (statm resident, pages; what ps shows) */
  F_VSIZE,       /* virtual size in bytes (statm size, pages) */
  F_READBYTES,   /* /proc/PID/io read_bytes */
  F_WRITEBYTES   /* /proc/PID/io write_bytes */
};
enum { NEED_STAT = 1, NEED_STATM = 2, NEED_IO = 4 };

typedef struct FieldDef {
  const char *name; /* attribute name (any case) */
  int field;        /* F_* */
  int type;         /* TY_* the attribute must have */
  const char *ent;  /* TY_ENTITY: the entity type it must have */
  int need;         /* NEED_* */
} FieldDef;

static const FieldDef fieldDefs[] = {
    {"Process", F_PROCESS, TY_ENTITY, "Process", 0},
    {"Pid", F_PID, TY_INT, NULL, 0},
    {"Command", F_COMMAND, TY_STRING, NULL, NEED_STAT},
    {"State", F_STATE, TY_ENUM, NULL, NEED_STAT},
    {"Ppid", F_PPID, TY_INT, NULL, NEED_STAT},
    {"Threads", F_THREADS, TY_INT, NULL, NEED_STAT},
    {"Processor", F_PROCESSOR, TY_ENTITY, "Processor", NEED_STAT},
    {"Ns", F_NS, TY_INT, NULL, NEED_STAT},
    {"UserNs", F_USERNS, TY_INT, NULL, NEED_STAT},
    {"SystemNs", F_SYSTEMNS, TY_INT, NULL, NEED_STAT},
    {"Rss", F_RSS, TY_INT, NULL, NEED_STATM},
    {"Vsize", F_VSIZE, TY_INT, NULL, NEED_STATM},
    {"ReadBytes", F_READBYTES, TY_INT, NULL, NEED_IO},
    {"WriteBytes", F_WRITEBYTES, TY_INT, NULL, NEED_IO},
};

/* The scheduling states of /proc/PID/stat and their enum value names. */
static const char *stateName(char c) {
  switch (c) {
    case 'R': return "Running";
    case 'S': return "Sleeping";
    case 'D': return "DiskSleep";
    case 'T': return "Stopped";
    case 't': return "TracingStop";
    case 'Z': return "Zombie";
    case 'X':
    case 'x': return "Dead";
    case 'I': return "Idle";
    case 'P': return "Parked";
    default: return "Other";
  }
}
static const char stateLetters[] = "RSDTtZXxIP?";

/* One process as read from its files. */
typedef struct ProcInfo {
  int64_t pid;
  char comm[64];
  char state;
  int64_t ppid, threads, utime, stime, processor;
  int64_t size, resident; /* statm, pages */
  int64_t readBytes, writeBytes;
} ProcInfo;

/* How a PM fills its relation's values: one field per attribute. */
typedef struct Layout {
  int nattr;
  int field[TQ_MAX_ATTRS];
  int64_t stateVal[sizeof stateLetters]; /* enum value per state letter (-1: none) */
  int need;                              /* NEED_* of all fields */
} Layout;

/* Binds the attributes of the PM's relation to host fields.  Returns 0, or
** -1 with the reason in p->message. */
static int layoutBind(tq_pm_global *g, tq_pm_private *p, Layout *l) {
  const AlgRel *r = enProgram(g)->cat.rels.v[p->rel - 1];
  memset(l, 0, sizeof *l);
  l->nattr = r->nattr;
  for (int i = 0; i < r->nattr; i++) {
    const FieldDef *f = NULL;
    for (size_t k = 0; k < TQ_ARRAY_SIZE(fieldDefs); k++)
      if (!strcasecmp(fieldDefs[k].name, r->attr[i].name)) f = &fieldDefs[k];
    if (!f) {
      snprintf(p->message, sizeof p->message, "%s.%s: the host has no such attribute (see sensors/host.md)", r->name,
               r->attr[i].name);
      return -1;
    }
    const AlgType *ty = &r->attr[i].type;
    if ((int)ty->kind != f->type || (f->ent && (!ty->ent || strcasecmp(ty->ent->name, f->ent)))) {
      char want[64];
      AlgType t = {(AlgTypeKind)f->type, NULL, NULL};
      snprintf(p->message, sizeof p->message, "%s.%s must be of type %s", r->name, r->attr[i].name,
               f->ent ? f->ent : algTypeName(t, want, sizeof want));
      return -1;
    }
    l->field[i] = f->field;
    l->need |= f->need;
    if (f->field == F_STATE) {
      int64_t other = g->enum_value(g, p->rel, i, "Other");
      for (size_t k = 0; k < sizeof stateLetters; k++) {
        int64_t v = g->enum_value(g, p->rel, i, stateName(stateLetters[k]));
        l->stateVal[k] = v >= 0 ? v : other;
      }
    }
  }
  return 0;
}

static int64_t stateValue(const Layout *l, char c) {
  const char *s = strchr(stateLetters, c);
  if (!c || !s) s = strchr(stateLetters, '?');
  return l->stateVal[s - stateLetters];
}

/* Fills vals from pi.  Returns 0, or -1 when a value cannot be given (a
** state the enum has no name for, and no Other). */
static int layoutFill(tq_pm_global *g, const Layout *l, const ProcInfo *pi, int64_t entity, int64_t *vals) {
  static long hz, page;
  if (!hz) hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
  if (!page) page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  int64_t nsPerTick = TQ_SEC / hz;
  char cpu[32];
  for (int i = 0; i < l->nattr; i++) {
    switch (l->field[i]) {
      case F_PROCESS: vals[i] = entity; break;
      case F_PID: vals[i] = pi->pid; break;
      case F_COMMAND: vals[i] = g->symbol(g, pi->comm, -1); break;
      case F_STATE:
        vals[i] = stateValue(l, pi->state);
        if (vals[i] < 0) return -1;
        break;
      case F_PPID: vals[i] = pi->ppid; break;
      case F_THREADS: vals[i] = pi->threads; break;
      case F_PROCESSOR:
        snprintf(cpu, sizeof cpu, "cpu%lld", (long long)pi->processor);
        vals[i] = g->symbol(g, cpu, -1);
        break;
      case F_NS: vals[i] = (pi->utime + pi->stime) * nsPerTick; break;
      case F_USERNS: vals[i] = pi->utime * nsPerTick; break;
      case F_SYSTEMNS: vals[i] = pi->stime * nsPerTick; break;
      case F_RSS: vals[i] = pi->resident * page; break;
      case F_VSIZE: vals[i] = pi->size * page; break;
      case F_READBYTES: vals[i] = pi->readBytes; break;
      case F_WRITEBYTES: vals[i] = pi->writeBytes; break;
      default: return -1;
    }
  }
  return 0;
}

/* ================================================================ reading /proc */

/* Reads a whole small file into buf (NUL-terminated).  Returns its length,
** or -1 (errno set). */
static ssize_t readSmall(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len + 1 < n) {
    ssize_t k = read(fd, buf + len, n - 1 - len);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int err = errno;
      close(fd);
      errno = err;
      return -1;
    }
    if (k == 0) break;
    len += (size_t)k;
  }
  close(fd);
  buf[len] = 0;
  return (ssize_t)len;
}

/* Parses /proc/PID/stat text.  Returns 0, or -1 when malformed. */
static int parseStat(const char *s, ProcInfo *pi) {
  const char *lp = strchr(s, '('), *rp = strrchr(s, ')');
  if (!lp || !rp || rp < lp) return -1;
  size_t n = (size_t)(rp - lp - 1);
  if (n >= sizeof pi->comm) n = sizeof pi->comm - 1;
  memcpy(pi->comm, lp + 1, n);
  pi->comm[n] = 0;
  const char *q = rp + 1;
  while (*q == ' ') q++;
  pi->state = *q;
  if (!*q) return -1;
  q++;
  /* fields 4 .. 39 */
  int64_t f[40] = {0};
  for (int k = 4; k <= 39; k++) {
    char *end;
    long long v = strtoll(q, &end, 10);
    if (end == q) return -1;
    f[k] = v;
    q = end;
  }
  pi->ppid = f[4];
  pi->utime = f[14];
  pi->stime = f[15];
  pi->threads = f[20];
  pi->processor = f[39];
  return 0;
}

/* Parses /proc/PID/statm text (size resident ... in pages).  Returns 0 or -1.
** (The rss of /proc/PID/stat is not what ps shows on every kernel: statm's
** resident is.) */
static int parseStatm(const char *s, ProcInfo *pi) {
  char *end;
  pi->size = strtoll(s, &end, 10);
  if (end == s) return -1;
  s = end;
  pi->resident = strtoll(s, &end, 10);
  return end == s ? -1 : 0;
}

/* Parses /proc/PID/io text.  Returns 0, or -1 when a field is missing. */
static int parseIo(const char *s, ProcInfo *pi) {
  const char *r = strstr(s, "\nread_bytes:"), *w = strstr(s, "\nwrite_bytes:");
  if (!r || !w) return -1;
  pi->readBytes = strtoll(r + 12, NULL, 10);
  pi->writeBytes = strtoll(w + 13, NULL, 10);
  return 0;
}

/* A pid from an entity name or a /proc entry: digits only.  -1 if not. */
static int64_t pidOf(const char *s) {
  if (!s || !*s || strlen(s) > 10) return -1;
  int64_t v = 0;
  for (; *s; s++) {
    if (!isdigit((unsigned char)*s)) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

/* The read counters of one PM.  The distinct pids are counted up to
** MAX_PIDS (a long run over every process would otherwise keep one entry
** per pid it ever saw). */
#define MAX_PIDS 4096
typedef struct Reads {
  int64_t reads;   /* files opened (attempts) */
  int64_t failed;  /* of which could not be read or parsed */
  int64_t lost;    /* of those, of a process that was still there (unreadable,
                   ** malformed): told to the engine (g->lost) */
  TqMap pids;      /* distinct pids whose files were read (pid + 2 -> 1), up to MAX_PIDS */
  int64_t first[8];/* the first of them, in order */
  int nfirst;
} Reads;

/* A read of a file of process pid failed: -1 when the process is gone
** (nothing to report: it no longer exists), -2 when it is there and its
** file could not be read or parsed (permissions, a kernel that formats it
** otherwise): a loss. */
static int readFailed(Reads *rd, int64_t pid) {
  int err = errno;
  rd->failed++;
  if (err == ENOENT || err == ESRCH) return -1;
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%lld", (long long)pid);
  if (access(dir, F_OK) && errno == ENOENT) return -1;
  rd->lost++;
  return -2;
}

/* Reads the files need asks for of process pid into pi.  Returns 0, -1
** when the process is gone, or -2 when a file of a process still there is
** unreadable or malformed (readFailed). */
static int readProc(Reads *rd, int64_t pid, int need, ProcInfo *pi) {
  char path[64], buf[4096];
  memset(pi, 0, sizeof *pi);
  pi->pid = pid;
  if (rd->pids.n < MAX_PIDS && !tqMapGet(&rd->pids, (uint64_t)pid + 2)) {
    tqMapPut(&rd->pids, (uint64_t)pid + 2, (void *)1);
    if (rd->nfirst < (int)TQ_ARRAY_SIZE(rd->first)) rd->first[rd->nfirst++] = pid;
  }
  if (need & NEED_STAT) {
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    rd->reads++;
    errno = 0;
    if (readSmall(path, buf, sizeof buf) < 0 || parseStat(buf, pi)) return readFailed(rd, pid);
  }
  if (need & NEED_STATM) {
    snprintf(path, sizeof path, "/proc/%lld/statm", (long long)pid);
    rd->reads++;
    errno = 0;
    if (readSmall(path, buf, sizeof buf) < 0 || parseStatm(buf, pi)) return readFailed(rd, pid);
  }
  if (need & NEED_IO) {
    snprintf(path, sizeof path, "/proc/%lld/io", (long long)pid);
    rd->reads++;
    errno = 0;
    if (readSmall(path, buf + 1, sizeof buf - 1) < 0 || (buf[0] = '\n', parseIo(buf, pi))) return readFailed(rd, pid);
  }
  return 0;
}

static void readsMessage(tq_pm_private *p, const Reads *rd) {
  char list[128] = "";
  size_t n = 0;
  for (int i = 0; i < rd->nfirst && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%lld", i ? "," : "", (long long)rd->first[i]);
  char lost[40] = "";
  if (rd->lost) snprintf(lost, sizeof lost, " lost=%lld", (long long)rd->lost);
  snprintf(p->message, sizeof p->message, "reads=%lld failed=%lld%s pids=%u%s [%s%s]", (long long)rd->reads,
           (long long)rd->failed, lost, rd->pids.n, rd->pids.n >= MAX_PIDS ? "+" : "", list,
           rd->pids.n > (uint32_t)rd->nfirst ? ",..." : "");
}

/* ================================================================ sampled PMs */

/* An answer given at the current instant: asked again at the same time
** (by another query, or for a delta relation) it is given again without a
** second read. */
typedef struct Answer {
  int ok;               /* the process could be read */
  int64_t vals[];       /* the tuple */
} Answer;

typedef struct SampledState {
  Layout l;
  Reads rd;
  TqTime at;            /* the instant of the answers kept */
  TqMap answers;        /* pid + 2 -> Answer* given at `at` */
} SampledState;

static void answersClear(SampledState *st) {
  for (uint32_t k = 0; k < st->answers.cap; k++)
    if (st->answers.slot[k].key > 1) free(st->answers.slot[k].val);
  tqMapFree(&st->answers);
}

static tq_pm_status sampledCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  SampledState *st = p->data;
  if (what == TQ_PM_START) {
    st = tqCalloc(1, sizeof *st);
    p->data = st;
    if (layoutBind(g, p, &st->l)) return TQ_PM_ERROR;
    readsMessage(p, &st->rd);
  } else if (what == TQ_PM_END && st) {
    answersClear(st);
    tqMapFree(&st->rd.pids);
    free(st);
    p->data = NULL;
  }
  return TQ_PM_OK;
}

/* A sample of the process `who` (the performer) at t: one read of its
** file, once per instant. */
static tq_pm_status sampledSample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  SampledState *st = p->data;
  int64_t pid = pidOf(g->symbol_name(g, who));
  if (!st || pid < 0) return TQ_PM_OK; /* not a process of this host: nothing to read */
  if (t != st->at) {
    answersClear(st);
    st->at = t;
  }
  Answer *a = tqMapGet(&st->answers, (uint64_t)pid + 2);
  if (!a) {
    ProcInfo pi;
    a = tqMalloc(sizeof(Answer) + sizeof(int64_t) * (size_t)(st->l.nattr ? st->l.nattr : 1));
    int rc = readProc(&st->rd, pid, st->l.need, &pi);
    a->ok = rc == 0 && layoutFill(g, &st->l, &pi, who, a->vals) == 0;
    tqMapPut(&st->answers, (uint64_t)pid + 2, a);
    readsMessage(p, &st->rd);
    /* a process that is there and could not be read: its sample is lost,
    ** and the answers that read it say they may be incomplete (once per
    ** read; a gone process has no tuple to give) */
    if (rc == -2 && g->version >= 9 && g->lost) g->lost(g, p->rel, who, t, t, 1, 0);
  }
  if (a->ok) g->sample_answer(g, cookie, a->vals); /* gone or unreadable: no tuple */
  return TQ_PM_OK;
}

static tq_pm_status sampledInit(tq_pm_private *p, const char *rel) {
  p->caps = TQ_PM_PRODUCER;
  p->produces = rel;
  p->privileges[p->nprivileges++] = "read:/proc";
  return TQ_PM_OK;
}

#define SAMPLED_PM(var, pmName, rel, what)                                                                 \
  static tq_pm_status var##Init(tq_pm_global *g, tq_pm_private *p) { return sampledInit(p, rel); }        \
  const tq_pm var = {.version = TQ_PM_VERSION,                                                      \
                            .name = pmName,                                                                \
                            .description = "PRODUCER of " rel " (sampled on the process: " what ")",      \
                            .init = var##Init,                                                             \
                            .call = sampledCall,                                                           \
                            .sample = sampledSample}

SAMPLED_PM(snsHostStatePm, "host_processstate", "ProcessState", "/proc/PID/stat");
SAMPLED_PM(snsHostLastProcessorPm, "host_lastprocessor", "LastProcessor", "/proc/PID/stat");
SAMPLED_PM(snsHostCpuTimePm, "host_cputime", "CpuTime", "/proc/PID/stat");
SAMPLED_PM(snsHostMemoryPm, "host_memory", "Memory", "/proc/PID/statm");
SAMPLED_PM(snsHostIoPm, "host_io", "Io", "/proc/PID/io");

/* ================================================================ host_runningon */

/* RunningOn_sampled (sensors/kernel.tq): RunningOn's sampled sensor, on its
** target, the Thread of the kernel sensors (named by its tid, "1234", or
** "1234#2" for a later thread with that id).  The engine enables it on the
** threads its queries ask about (enable) and asks each Processor, the
** performer, what runs on it (sample): at each instant this reads
** /proc/TID/stat of every enabled thread once, and a thread in state R is
** on its CPU (field 39).  R is what /proc says of a thread on a CPU's run
** queue: running, or runnable and waiting for that CPU (Ready); the traced
** sensor reports the first only (sensors/kernel.md, "RunningOn's two
** sensors"). */
typedef struct RunningState {
  Reads rd;
  int athread, aproc;   /* the attributes Thread and Processor */
  TqMap on;             /* enabled thread entity + 2 -> 1 */
  int64_t running;      /* threads found in state R, over the instants */
  TqTime at;            /* the instant of the reads kept */
  int64_t (*seen)[2];   /* at `at`: (thread entity, its CPU's symbol) of those in state R */
  int nseen, cseen;
} RunningState;

static void runningMessage(tq_pm_private *p, const RunningState *st) {
  readsMessage(p, &st->rd);
  size_t n = strlen(p->message);
  snprintf(p->message + n, sizeof p->message - n, " running=%lld enabled=%u", (long long)st->running, st->on.n);
}

static tq_pm_status runningCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  RunningState *st = p->data;
  if (what == TQ_PM_START) {
    st = tqCalloc(1, sizeof *st);
    st->at = TQ_BEGINNING;
    p->data = st;
    st->athread = g->attribute(g, p->rel, "Thread");
    st->aproc = g->attribute(g, p->rel, "Processor");
    const char *et = NULL, *ep = NULL;
    if (g->nattributes(g, p->rel) != 2 || st->athread < 0 || st->aproc < 0 ||
        g->attribute_type(g, p->rel, st->athread, &et) != TQ_TY_ENTITY || !et || strcasecmp(et, "Thread") ||
        g->attribute_type(g, p->rel, st->aproc, &ep) != TQ_TY_ENTITY || !ep || strcasecmp(ep, "Processor")) {
      snprintf(p->message, sizeof p->message,
               "RunningOn must be (Thread: Thread, Processor: Processor), as in sensors/kernel.tq");
      return TQ_PM_ERROR;
    }
    runningMessage(p, st);
  } else if (what == TQ_PM_END && st) {
    tqMapFree(&st->on);
    tqMapFree(&st->rd.pids);
    free(st->seen);
    free(st);
    p->data = NULL;
  }
  return TQ_PM_OK;
}

static tq_pm_status runningEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  RunningState *st = p->data;
  if (!st) return TQ_PM_OK;
  if (on > 0) tqMapPut(&st->on, (uint64_t)entity + 2, (void *)1);
  else tqMapDel(&st->on, (uint64_t)entity + 2);
  runningMessage(p, st);
  return TQ_PM_OK;
}

/* Reads the stat of every enabled thread at t, once: those in state R. */
static void runningRead(tq_pm_global *g, tq_pm_private *p, RunningState *st, TqTime t) {
  st->at = t;
  st->nseen = 0;
  for (uint32_t i = 0; i < st->on.cap; i++) {
    if (st->on.slot[i].key <= 1) continue;
    int64_t ent = (int64_t)(st->on.slot[i].key - 2);
    const char *name = g->symbol_name(g, ent);
    char b[24];
    snprintf(b, sizeof b, "%s", name ? name : "");
    char *h = strchr(b, '#'); /* a later thread with the id: the one there now */
    if (h) *h = 0;
    int64_t tid = pidOf(b);
    if (tid <= 0) continue; /* not a thread of this host: nothing to read */
    ProcInfo pi;
    int rc = readProc(&st->rd, tid, NEED_STAT, &pi);
    if (rc == -2 && g->version >= 9 && g->lost) g->lost(g, p->rel, ent, t, t, 1, 0);
    if (rc || pi.state != 'R') continue;
    char cpu[32];
    snprintf(cpu, sizeof cpu, "cpu%lld", (long long)pi.processor);
    if (st->nseen == st->cseen) {
      st->cseen = st->cseen ? 2 * st->cseen : 16;
      st->seen = tqRealloc(st->seen, sizeof *st->seen * (size_t)st->cseen);
    }
    st->seen[st->nseen][0] = ent;
    st->seen[st->nseen][1] = g->symbol(g, cpu, -1);
    st->nseen++;
    st->running++;
  }
  runningMessage(p, st);
}

/* A sample of processor `who` at t: the enabled threads running on it
** (each thread's stat read once per instant, whichever processor asks
** first). */
static tq_pm_status runningSample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  RunningState *st = p->data;
  if (!st) return TQ_PM_OK;
  if (t != st->at) runningRead(g, p, st, t);
  for (int i = 0; i < st->nseen; i++) {
    if (st->seen[i][1] != who) continue;
    int64_t vals[2];
    vals[st->athread] = st->seen[i][0];
    vals[st->aproc] = who;
    g->sample_answer(g, cookie, vals);
  }
  return TQ_PM_OK;
}

static tq_pm_status runningInit(tq_pm_global *g, tq_pm_private *p) { return sampledInit(p, "RunningOn_sampled"); }

const tq_pm snsHostRunningOnPm = {.version = TQ_PM_VERSION,
                                  .name = "host_runningon",
                                  .description = "PRODUCER of RunningOn_sampled, the sampled sensor of the kernel's "
                                                 "RunningOn (enabled per thread, asked per processor: /proc/TID/stat of the enabled threads; one in "
                                                 "state R, running or waiting on that CPU's run queue, counts as running "
                                                 "on it)",
                                  .init = runningInit,
                                  .call = runningCall,
                                  .enable = runningEnable,
                                  .sample = runningSample};

/* ================================================================ host_process */

/* A process seen in the last listing. */
typedef struct ProcEnt {
  uint64_t id;          /* its interval of Process */
  TqTime from;          /* when it was first seen */
  int64_t epoch;        /* the listing that last saw it */
  int64_t vals[];       /* its Process tuple */
} ProcEnt;

typedef struct ProcTable {
  Layout l;
  Reads rd;
  TqMap ents;           /* pid + 2 -> ProcEnt* */
  int64_t epoch;        /* listings so far */
  uint64_t nextId;
  int64_t begun, ended;
  int list;             /* a program list is given (g->program_wanted) */
  int64_t unwanted;     /* processes of the last listing it left out */
} ProcTable;

static void processMessage(tq_pm_private *p, const ProcTable *st) {
  char other[48] = "";
  if (st->list) snprintf(other, sizeof other, " unwanted=%lld", (long long)st->unwanted);
  char lost[40] = "";
  if (st->rd.lost) snprintf(lost, sizeof lost, " lost=%lld", (long long)st->rd.lost);
  snprintf(p->message, sizeof p->message, "listings=%lld reads=%lld failed=%lld%s begun=%lld ended=%lld alive=%u%s",
           (long long)st->epoch, (long long)st->rd.reads, (long long)st->rd.failed, lost, (long long)st->begun,
           (long long)st->ended, st->ents.n, other);
}

/* One snapshot: list /proc; new pids begin, pids no longer listed end. */
static tq_pm_status processSnapshot(tq_pm_global *g, tq_pm_private *p, ProcTable *st) {
  DIR *d = opendir("/proc");
  if (!d) {
    snprintf(p->message, sizeof p->message, "cannot list /proc: %s", strerror(errno));
    return TQ_PM_ERROR;
  }
  st->epoch++;
  st->unwanted = 0;
  st->list = g->version >= 7 && g->program_wanted && !g->program_wanted(g, -1, NULL);
  TqTime now = g->now;
  int nv = st->l.nattr;
  struct dirent *de;
  int rc = 0;
  while (!rc && (de = readdir(d))) {
    int64_t pid = pidOf(de->d_name);
    if (pid < 0) continue;
    ProcEnt *pe = tqMapGet(&st->ents, (uint64_t)pid + 2);
    if (pe) {
      pe->epoch = st->epoch;
      continue;
    }
    ProcInfo pi;
    /* a program list: only the processes it names (asked again at each
    ** listing: a process may exec a named program later) */
    if (st->list && !snsProcessWanted(g, pid, NULL)) {
      st->unwanted++;
      continue;
    }
    int rrc = readProc(&st->rd, pid, st->l.need, &pi);
    if (rrc == -2 && g->version >= 9 && g->lost) /* there, but unreadable: its begin is lost (tried again next time) */
      g->lost(g, p->rel, g->symbol(g, de->d_name, -1), now, now, 1, 1);
    if (rrc) continue; /* gone already, or unreadable */
    pe = tqCalloc(1, sizeof(ProcEnt) + sizeof(int64_t) * (size_t)(nv ? nv : 1));
    if (layoutFill(g, &st->l, &pi, g->symbol(g, de->d_name, -1), pe->vals)) {
      free(pe);
      continue;
    }
    pe->id = ++st->nextId;
    pe->from = now;
    pe->epoch = st->epoch;
    tqMapPut(&st->ents, (uint64_t)pid + 2, pe);
    tq_record r = {p->rel, TQ_REC_BEGIN, now, now, 0, pe->id, nv, pe->vals};
    if (g->produce(g, &r)) rc = -1;
    st->begun++;
  }
  closedir(d);
  /* the ones the listing no longer shows have ended */
  for (uint32_t k = 0; !rc && k < st->ents.cap; k++) {
    if (st->ents.slot[k].key <= 1) continue;
    ProcEnt *pe = st->ents.slot[k].val;
    if (pe->epoch == st->epoch) continue;
    tq_record r = {p->rel, TQ_REC_END, now, pe->from, now, pe->id, nv, pe->vals};
    if (g->produce(g, &r)) rc = -1;
    st->ended++;
    tqMapDel(&st->ents, st->ents.slot[k].key); /* leaves a tombstone: the scan goes on */
    free(pe);
  }
  processMessage(p, st);
  if (rc) {
    snprintf(p->message, sizeof p->message, "the engine refused a record of %s", p->produces);
    return TQ_PM_FATAL;
  }
  return TQ_PM_OK;
}

static tq_pm_status processCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  ProcTable *st = p->data;
  switch (what) {
    case TQ_PM_START:
      st = tqCalloc(1, sizeof *st);
      p->data = st;
      if (layoutBind(g, p, &st->l)) return TQ_PM_ERROR;
      processMessage(p, st);
      return TQ_PM_OK;
    case TQ_PM_SNAPSHOT: return st ? processSnapshot(g, p, st) : TQ_PM_OK;
    case TQ_PM_END:
      if (st) {
        for (uint32_t k = 0; k < st->ents.cap; k++)
          if (st->ents.slot[k].key > 1) free(st->ents.slot[k].val);
        tqMapFree(&st->ents);
        tqMapFree(&st->rd.pids);
        free(st);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

static tq_pm_status processInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "Process";
  p->privileges[p->nprivileges++] = "read:/proc";
  return TQ_PM_OK;
}

const tq_pm snsHostProcessPm = {
    .version = TQ_PM_VERSION,
    .name = "host_process",
    .description = "PRODUCER of the entity relation Process (a listing of /proc per snapshot)",
    .init = processInit,
    .call = processCall,
};

/* ================================================================ host_processor */

typedef struct ProcessorState {
  int done;      /* the CPUs were produced */
  int64_t reads; /* reads of /proc/stat */
  int ncpu;
} ProcessorState;

static tq_pm_status processorCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  ProcessorState *st = p->data;
  if (what == TQ_PM_START) {
    st = tqCalloc(1, sizeof *st);
    p->data = st;
    if (g->nattributes(g, p->rel) != 1) {
      snprintf(p->message, sizeof p->message, "the entity relation Processor has no attributes on this host");
      return TQ_PM_ERROR;
    }
    snprintf(p->message, sizeof p->message, "reads=0 cpus=0");
  } else if (what == TQ_PM_SNAPSHOT && st && !st->done) {
    /* the CPUs: the cpuN lines of /proc/stat, once */
    st->done = 1;
    st->reads++;
    FILE *f = fopen("/proc/stat", "re");
    if (!f) {
      snprintf(p->message, sizeof p->message, "cannot read /proc/stat: %s", strerror(errno));
      return TQ_PM_ERROR;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "cpu", 3) || !isdigit((unsigned char)line[3])) continue;
      size_t n = strcspn(line, " \t\n");
      int64_t v = g->symbol(g, line, (int)n);
      tq_record r = {p->rel, TQ_REC_BEGIN, g->now, g->now, 0, (uint64_t)st->ncpu + 1, 1, &v};
      if (g->produce(g, &r)) {
        fclose(f);
        return TQ_PM_FATAL;
      }
      st->ncpu++;
    }
    fclose(f);
    snprintf(p->message, sizeof p->message, "reads=%lld cpus=%d", (long long)st->reads, st->ncpu);
  } else if (what == TQ_PM_END) {
    free(st);
    p->data = NULL;
  }
  return TQ_PM_OK;
}

static tq_pm_status processorInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "Processor";
  p->privileges[p->nprivileges++] = "read:/proc/stat";
  return TQ_PM_OK;
}

const tq_pm snsHostProcessorPm = {
    .version = TQ_PM_VERSION,
    .name = "host_processor",
    .description = "PRODUCER of the entity relation Processor (the CPUs of /proc/stat)",
    .init = processorInit,
    .call = processorCall,
};

/* ================================================================ host: the grouper */

static tq_pm_status hostInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_GROUPER;
  /* not host_runningon: its answer is near the traced RunningOn's, not the
  ** same (state R holds the threads waiting for the CPU too), so a user
  ** names it (--pm host_runningon) to let rule SENSOR read it */
  static const char *const members[] = {"host_process", "host_processor", "host_processstate", "host_lastprocessor",
                                        "host_cputime", "host_memory",    "host_io"};
  for (size_t i = 0; i < TQ_ARRAY_SIZE(members); i++) p->members[p->nmembers++] = members[i];
  return TQ_PM_OK;
}

const tq_pm snsHostPm = {
    .version = TQ_PM_VERSION,
    .name = "host",
    .description = "GROUPER: the Linux host from /proc (relations of sensors/host.tq)",
    .init = hostInit,
};
