/*
** replay.c - reading recordings back: opening one once (a file, a pipe,
** "-" for standard input) and telling its format by its first bytes, and
** the replay of one or several recordings, text or collection files,
** merged in time order.  It is the EXTRACTOR half of the trace and colfil
** PMs, and the replay PM of tqmon run --replay (args: one FILE a line;
** "full:FILE" reads every block of a collection file).
**
** An input is opened once: the bytes read to tell its format stay with it
** and are read first, so that a pipe loses nothing.  A regular file may be
** read twice (a collection file that holds whole intervals, or whose range
** is not known, is read ahead at START); a stream cannot, so a collection
** file that says it holds whole intervals is first copied from the stream
** into an unlinked temporary file (owner-only) and read from there:
** --stats says so ("streams", "spooled" bytes).  An input that holds no
** record at all is an error.
**
** Merging: the recordings are read side by side, and each record goes to
** the engine in time order (records of the same time: in the order the
** recordings were given).  Times are taken as recorded: recordings of one
** clock (live recordings are CLOCK_REALTIME ns) line up, and recordings
** whose times count from their own start are merged as if they started
** together; a recording of dates (live) and one of times from a start
** cannot share an axis and are refused.  A name is one entity in every
** recording (it exists while any recording says so); an interval's end is
** matched with its begin in its own recording only (each recording's
** interval ids get its own bits 48-55).
*/
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "colfilInt.h"

#define REPLAY_MAX 64          /* recordings merged at most */
#define SNS_MAX_LINE (1 << 20) /* a text recording's longest line */

/* ================================================================ inputs */

SnsInput *snsInputOpen(const char *path, TqDiag *d) {
  int std = !strcmp(path, "-");
  FILE *f = NULL;
  if (std) {
    int fd = dup(0); /* (closing the input leaves fd 0 alone) */
    f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f && fd >= 0) close(fd);
  } else {
    f = fopen(path, "rb");
  }
  if (!f) {
    tqErrorAt(d, std ? "<stdin>" : path, "cannot open: %s", strerror(errno));
    return NULL;
  }
  SnsInput *in = tqCalloc(1, sizeof *in);
  in->name = tqStrdup(std ? "<stdin>" : path);
  in->f = f;
  struct stat st;
  in->regular = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
  in->stream = !in->regular;
  in->nhead = fread(in->head, 1, sizeof in->head, f);
  in->binary = in->nhead >= 8 && !memcmp(in->head, COL_MAGIC, 8);
  if (ferror(f)) {
    tqErrorAt(d, in->name, "read error: %s", strerror(errno));
    snsInputClose(in);
    return NULL;
  }
  return in;
}

/* An input that yields no record says so (an error: nothing is replayed). */
static void noRecord(const SnsInput *in, TqDiag *d) {
  tqErrorAt(d, in->name, "the recording holds no record%s", in->stream && !in->spooled ? " (an empty stream)" : "");
}

int snsInputIsCollection(const SnsInput *in) { return in->binary; }
const char *snsInputName(const SnsInput *in) { return in->name; }

void snsInputClose(SnsInput *in) {
  if (!in) return;
  if (in->f) fclose(in->f);
  free(in->name);
  free(in);
}

/* snsTraceReadInput, the records of the relations drop names checked and
** not kept (snsTraceParseSome). */
static SnsTrace *readSome(SnsInput *in, const CpProgram *prog, const unsigned char *drop, SnsNeedFn need, void *needCtx,
                          TqDiag *d) {
  SnsTrace *t = snsTraceParseFile(in->f, in->name, in->head, in->nhead, SNS_MAX_LINE, prog, drop, need, needCtx, d);
  in->nhead = 0;
  if (t && !t->nall) {
    noRecord(in, d);
    snsTraceFree(t);
    t = NULL;
  }
  return t;
}

SnsTrace *snsTraceReadInput(SnsInput *in, const CpProgram *prog, TqDiag *d) { return readSome(in, prog, NULL, NULL, NULL, d); }

SnsTrace *snsTraceRead(const char *path, const CpProgram *prog, TqDiag *d) {
  SnsInput *in = snsInputOpen(path, d);
  SnsTrace *t = in ? snsTraceReadInput(in, prog, d) : NULL;
  snsInputClose(in);
  return t;
}

int snsIsCollectionFile(const char *path) {
  char m[8];
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(m, 1, 8, f);
  fclose(f);
  return n == 8 && !memcmp(m, COL_MAGIC, 8);
}

/* A stream that must be read twice: what is left of it (after its head)
** into an unlinked temporary file, which then stands for it.  0, or -1
** with the error in d. */
static int spool(SnsInput *in, TqDiag *d) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR, 0600);
  if (fd < 0) { /* (a file system without O_TMPFILE) */
    char *tmpl = tqMprintf("%s/tqmon-spool.XXXXXX", dir);
    fd = mkstemp(tmpl);
    if (fd >= 0) unlink(tmpl);
    free(tmpl);
  }
  FILE *t = fd >= 0 ? fdopen(fd, "w+b") : NULL;
  if (!t) {
    tqErrorAt(d, in->name, "cannot make a temporary file in %s to read the stream ahead: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  char buf[65536];
  size_t n;
  int bad = fwrite(in->head, 1, in->nhead, t) != in->nhead;
  in->spooled = (int64_t)in->nhead;
  while (!bad && (n = fread(buf, 1, sizeof buf, in->f)) > 0) {
    bad = fwrite(buf, 1, n, t) != n;
    in->spooled += (int64_t)n;
  }
  if (bad || ferror(in->f) || fflush(t) || fseek(t, 0, SEEK_SET)) {
    tqErrorAt(d, in->name, "cannot copy the stream into a temporary file in %s: %s", dir, strerror(errno));
    fclose(t);
    return -1;
  }
  fclose(in->f);
  in->f = t;
  in->nhead = 0;
  in->regular = 1;
  return 0;
}

/* ================================================================ the replay */

struct Replay;

/* One recording of a replay. */
/* A collection file decoded by a thread of its own, beside the engine
** (a pipeline: the thread decodes a group's records while the engine
** runs those before).  The engine's thread does the file's I/O, group by
** group (snsReaderGroup: symbols, losses, the needs of blocks), so every
** callback but the needs of entities (a network that does not change:
** enThreads) stays on it; the thread takes the loaded group's records
** (snsReaderTake) into a ring of AHEAD_CHUNKS chunks, which bounds what is
** decoded ahead, and the engine's thread takes them in the same order. */
enum { AHEAD_CHUNKS = 16, AHEAD_N = 128 };
typedef struct AheadChunk {
  int n;                 /* records */
  int end;               /* after them: 0 more of the group, 1 the group is taken, -1 damaged */
  tq_record rec[AHEAD_N]; /* kind 0: a run of id records of relation rel skipped (counted
                         ** as the engine's thread passes it, as one thread counts them:
                         ** not those decoded ahead of a run that stops) */
  int64_t *vals;         /* AHEAD_N rows of width values */
} AheadChunk;
typedef struct Ahead {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;     /* (both ways: broadcast) */
  int go, stop;          /* to the thread: take the loaded group; end */
  int thWaits, mainWaits; /* the thread waits for room; the engine's for a chunk */
  int64_t head, tail;    /* chunks filled by the thread, given back by the engine's */
  AheadChunk chunk[AHEAD_CHUNKS];
  int width;             /* values of the widest relation */
  AheadChunk *cur;       /* the engine's thread: the chunk it takes from, */
  int pos;               /* its next record */
  int loadGroup;         /* the next group is to be read */
} Ahead;

/* A text recording: an entity relation needed only for whether its
** entities exist (enAliveOnly), and their intervals open, as read. */
typedef struct TextAlive {
  int on;                /* -1 not asked yet */
  int32_t *n;            /* by entity (snsCountSlot) */
  int64_t cap;
} TextAlive;

typedef struct Src {
  struct Replay *x;      /* its replay */
  SnsInput *in;          /* NULL: a recording read already (snsReplay) */
  char *path;            /* as given */
  const char *name;      /* in messages */
  int full;              /* full:FILE: every block, needed or not */
  SnsTrace *tr;          /* a text recording, read whole */
  int borrowed;          /* tr or in is the caller's */
  int64_t next;          /* its next packet */
  int64_t nextLoss;      /* its next loss line */
  Reader rd;             /* a collection file */
  int reading;           /* rd is open */
  int ranged;            /* rd's range is known (its header's, or read ahead) */
  tq_record cur;         /* the next record, read ahead (its values: the reader's or the text's) */
  int have;              /* cur holds one */
  TqTime t;              /* its time */
  uint64_t idBits;       /* its intervals' ids apart from the other recordings' */
  signed char *relNeed;  /* a text recording: RT_NEED_* of each relation (by id - 1; -1 not asked yet) */
  unsigned char **entNeed; /* ... of a RT_NEED_SOME one, by entity: 0 not asked, 1 no, 2 yes */
  int64_t *nentNeed;     /* ... their sizes */
  int nrelNeed;          /* relations in relNeed */
  TqTime *period;        /* a text recording: g->sample_period of each relation (-1 not asked yet) */
  TextAlive *alive;      /* ... and its TextAlive, by id - 1 */
  int nalive;
  Ahead *ahead;          /* a collection file decoded by a thread of its own (or NULL) */
} Src;

typedef struct Replay {
  Src src[REPLAY_MAX];
  int nsrc;
  int threads;           /* decoding threads started (Ahead) */
  int bounded;           /* a semi-join narrowed the needs (replayBound): text
                         ** recordings read already are asked them again */
  SnsLoss *lost;         /* losses read, told at the next extract (a recording
                         ** is read ahead at START, before the consumers start) */
  int nlost, clost;
} Replay;

/* A loss read from a recording, to be told (tellLosses). */
static void keepLoss(void *ctx, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans) {
  Replay *x = ctx;
  if (x->nlost == x->clost) {
    x->clost = x->clost ? 2 * x->clost : 16;
    x->lost = tqRealloc(x->lost, sizeof(SnsLoss) * (size_t)x->clost);
  }
  x->lost[x->nlost++] = (SnsLoss){0, rel, spans, entity, from, to, count};
}

/* The losses read so far go to the engine (g->lost), in order. */
static void tellLosses(tq_pm_global *g, Replay *x) {
  for (int i = 0; i < x->nlost; i++) {
    const SnsLoss *l = &x->lost[i];
    g->lost(g, l->rel, l->entity, l->from, l->to, l->count, l->spans);
  }
  x->nlost = 0;
}

static TqTime recTime(const tq_record *r) {
  return r->kind == TQ_REC_BEGIN ? r->from : r->kind == TQ_REC_END || r->kind == TQ_REC_WHOLE ? r->to : r->t;
}

/* The reader asks the engine what the operation needs. */
static int needOf(void *g, int rel, int64_t entity) { return ((tq_pm_global *)g)->needed_records(g, rel, entity); }
static TqTime periodOf(void *g, int rel) { return ((tq_pm_global *)g)->sample_period(g, rel); }
static int aliveOnlyOf(void *g, int rel) { return enAliveOnly(g, rel); }
static void announce(void *g, int rel, TqTime from) { ((tq_pm_global *)g)->announce_whole(g, rel, from); }

/* Does the operation need packet pk of text recording s (g->needed_records,
** asked once per relation and per entity, as the collection-file reader
** asks)?  A session's needs change as queries come and go, and the packet
** after the current one is read ahead, before a query added now: there
** every packet is delivered (srcNext), and the engine passes over what no
** query takes.  A packet not needed is never delivered whatever the enabling,
** and keeps alive no entity a used sensor lives in: leaving it out
** changes no answer (tq_pm_global.needed_records), and saves the engine
** its instant. */
static int textNeeded(tq_pm_global *g, Src *s, const SnsPacket *pk) {
  const SnsTrace *tr = s->tr;
  const CpProgram *prog = tr->prog;
  int nrel = prog->cat.rels.n;
  if (!s->relNeed) {
    s->relNeed = tqMalloc((size_t)(nrel ? nrel : 1));
    memset(s->relNeed, -1, (size_t)(nrel ? nrel : 1));
    s->entNeed = tqCalloc((size_t)(nrel ? nrel : 1), sizeof *s->entNeed);
    s->nentNeed = tqCalloc((size_t)(nrel ? nrel : 1), sizeof *s->nentNeed);
    s->nrelNeed = nrel;
  }
  int ri = pk->rel;
  if (s->relNeed[ri] < 0) s->relNeed[ri] = (signed char)g->needed_records(g, ri + 1, TQ_PM_NEED_ANY);
  if (s->relNeed[ri] != TQ_PM_NEED_SOME) return s->relNeed[ri] == TQ_PM_NEED_ALL;
  const AlgRel *rel = prog->cat.rels.v[ri];
  int at = rel->entity ? 0 : rel->flagAttr;
  if (at < 0) return 1;
  int64_t v = pk->kind == PK_EVENT || pk->kind == PK_SAMPLE ? tr->vals[pk->vals + at] : tr->vals[tr->iv[pk->iv].vals + at];
  if (v < 0 || v > (int64_t)1 << 40) return g->needed_records(g, ri + 1, v) != 0;
  unsigned char *c = snsEntSlot(&s->entNeed[ri], &s->nentNeed[ri], v);
  if (!*c) *c = g->needed_records(g, ri + 1, v) ? 2 : 1;
  return *c == 2;
}

/* Is packet pk of text recording s a begin or an end of an interval that
** no sample sees: its relation is sampled only at multiples of P
** (g->sample_period), and it ends before the first multiple at or after
** its begin?  Neither of its packets is delivered, as a collection file's
** reader leaves out such an interval within a block (blockKeep): the
** engine would open it and close it for nothing. */
static int textUnsampled(tq_pm_global *g, Src *s, const SnsPacket *pk) {
  if (pk->kind != PK_BEGIN && pk->kind != PK_END) return 0;
  const SnsTrace *tr = s->tr;
  if (!s->period) {
    int nrel = tr->prog->cat.rels.n;
    s->period = tqMalloc(sizeof(TqTime) * (size_t)(nrel ? nrel : 1));
    for (int i = 0; i < nrel; i++) s->period[i] = -1;
  }
  TqTime *P = &s->period[pk->rel];
  if (*P < 0) *P = g->sample_period(g, pk->rel + 1);
  if (*P <= 0) return 0;
  const SnsIv *iv = &tr->iv[pk->iv];
  return tqTickAtOrAfter(iv->from, *P) >= iv->to;
}

/* How many packets from pk of text recording s may be left out for an
** entity relation needed only for whether its entities exist
** (enAliveOnly): a begin while another interval of its entity is open, an
** end that leaves one open (1), an end followed by a begin of its entity
** at its instant (a change of its state: 2); else 0.  As a collection
** file's reader does (colread.c, aliveSkip). */
static int textAliveSkip(tq_pm_global *g, Src *s, const SnsPacket *pk) {
  if (pk->kind != PK_BEGIN && pk->kind != PK_END) return 0;
  const SnsTrace *tr = s->tr;
  if (!s->alive) {
    s->nalive = tr->prog->cat.rels.n;
    s->alive = tqCalloc((size_t)(s->nalive ? s->nalive : 1), sizeof *s->alive);
    for (int i = 0; i < s->nalive; i++) s->alive[i].on = -1;
  }
  TextAlive *a = &s->alive[pk->rel];
  if (a->on < 0) a->on = enAliveOnly(g, pk->rel + 1);
  if (!a->on) return 0;
  int64_t x = tr->vals[tr->iv[pk->iv].vals];
  int32_t *n = snsCountSlot(&a->n, &a->cap, x);
  if (!n) return 0;
  if (pk->kind == PK_BEGIN) return (*n)++ > 0;
  if (*n > 1) {
    (*n)--;
    return 1;
  }
  if (*n == 0) return 0; /* (an end with no begin counted: the parse refuses it, kept as a guard) */
  const SnsPacket *q = pk + 1;
  if (q < tr->pk + tr->npk && q->kind == PK_BEGIN && q->rel == pk->rel && q->t == pk->t && tr->vals[tr->iv[q->iv].vals] == x)
    return 2;
  *n = 0;
  return 0;
}

/* ---------------------------------------------------------------- decoding thread */

static void *aheadMain(void *arg) {
  Src *s = arg;
  Ahead *a = s->ahead;
  Reader *r = &s->rd;
  for (;;) {
    pthread_mutex_lock(&a->mu);
    while (!a->go && !a->stop) pthread_cond_wait(&a->cv, &a->mu);
    a->go = 0;
    int stop = a->stop;
    pthread_mutex_unlock(&a->mu);
    if (stop) return NULL;
    for (int end = 0; !end;) { /* the loaded group, a chunk at a time */
      pthread_mutex_lock(&a->mu);
      if (a->head - a->tail == AHEAD_CHUNKS) { /* full: on again when half is free (fewer wakes) */
        a->thWaits = 1;
        while (a->head - a->tail > AHEAD_CHUNKS / 2 && !a->stop) pthread_cond_wait(&a->cv, &a->mu);
        a->thWaits = 0;
      }
      stop = a->stop;
      AheadChunk *c = &a->chunk[a->head % AHEAD_CHUNKS];
      pthread_mutex_unlock(&a->mu);
      if (stop) return NULL;
      c->n = 0;
      while (c->n < AHEAD_N) {
        tq_record *rec = &c->rec[c->n];
        int skip, rc = snsReaderTake(r, rec, &skip);
        if (rc <= 0) {
          end = rc < 0 ? -1 : 1;
          break;
        }
        if (skip) {
          tq_record *run = c->n ? &c->rec[c->n - 1] : NULL;
          if (run && run->kind == 0 && run->rel == rec->rel) {
            run->id += (uint64_t)r->nskip;
          } else {
            *rec = (tq_record){.rel = rec->rel, .kind = 0, .id = (uint64_t)r->nskip};
            c->n++;
          }
          continue;
        }
        if (rec->nvals > a->width) { /* (the reader gives the program's relations only) */
          snprintf(r->err, sizeof r->err, "%s: a record of %d values, more than any relation of the program", r->path,
                   rec->nvals);
          end = -1;
          break;
        }
        int64_t *v = c->vals + (size_t)c->n * (size_t)a->width;
        for (int k = 0; k < rec->nvals; k++) v[k] = rec->vals[k];
        rec->vals = v;
        c->n++;
      }
      c->end = end;
      pthread_mutex_lock(&a->mu);
      a->head++;
      if (a->mainWaits) pthread_cond_broadcast(&a->cv);
      pthread_mutex_unlock(&a->mu);
    }
  }
}

static void aheadFree(Ahead *a) {
  pthread_mutex_destroy(&a->mu);
  pthread_cond_destroy(&a->cv);
  for (int i = 0; i < AHEAD_CHUNKS; i++) free(a->chunk[i].vals);
  free(a);
}

/* Starts s's decoding thread (a collection file of format 3, when the
** engine gives this replay more threads): 0, or -1 when it cannot (s is
** then read by the engine's thread: said at debug level). */
static int aheadStart(tq_pm_global *g, tq_pm_private *p, Src *s) {
  const CpProgram *prog = enProgram(g);
  Ahead *a = tqCalloc(1, sizeof *a);
  a->width = 1;
  for (int i = 0; prog && i < prog->cat.rels.n; i++) {
    const AlgRel *rel = prog->cat.rels.v[i];
    if (rel->nattr > a->width) a->width = rel->nattr;
  }
  for (int i = 0; i < AHEAD_CHUNKS; i++) a->chunk[i].vals = tqMalloc(sizeof(int64_t) * AHEAD_N * (size_t)a->width);
  a->loadGroup = 1;
  pthread_mutex_init(&a->mu, NULL);
  pthread_cond_init(&a->cv, NULL);
  s->ahead = a;
  s->rd.callerCounts = 1; /* (in the chunks, as runs) */
  /* signals are the engine's thread's (a stop ends the run there) */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&a->th, NULL, aheadMain, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    g->log(g, p, TQ_LOG_DEBUG, "%s: decoded without a thread of its own: %s", s->name, strerror(rc));
    s->rd.callerCounts = 0;
    s->ahead = NULL;
    aheadFree(a);
    return -1;
  }
  return 0;
}

/* Ends s's decoding thread (what it decoded ahead is dropped). */
static void aheadStop(tq_pm_global *g, Src *s) {
  Ahead *a = s->ahead;
  if (!a) return;
  pthread_mutex_lock(&a->mu);
  a->stop = 1;
  pthread_cond_broadcast(&a->cv);
  pthread_mutex_unlock(&a->mu);
  pthread_join(a->th, NULL);
  s->rd.callerCounts = 0;
  aheadFree(a);
  s->ahead = NULL;
}

/* s's next record from its decoding thread, into s->cur (the one before
** went to the engine: its chunk may go back).  1, 0 at its end, -1
** damaged (said). */
static int aheadNext(tq_pm_global *g, tq_pm_private *p, Src *s) {
  Ahead *a = s->ahead;
  for (;;) {
    if (a->cur) {
      while (a->pos < a->cur->n) {
        const tq_record *rec = &a->cur->rec[a->pos++];
        if (rec->kind) {
          s->cur = *rec;
          return 1;
        }
        RtNet *net = enNet(g); /* a run of skipped records */
        if (net && rec->rel >= 1 && rec->rel <= net->nsensor) net->sensor[rec->rel - 1].skipped += (int64_t)rec->id;
      }
      int end = a->cur->end;
      pthread_mutex_lock(&a->mu);
      a->tail++;
      if (a->thWaits && a->head - a->tail <= AHEAD_CHUNKS / 2) pthread_cond_broadcast(&a->cv);
      pthread_mutex_unlock(&a->mu);
      a->cur = NULL;
      if (end < 0) return -1;
      if (end > 0) a->loadGroup = 1;
    }
    if (a->loadGroup) { /* (the thread waits for it) */
      a->loadGroup = 0;
      int rc = snsReaderGroup(&s->rd);
      if (rc <= 0) return rc;
      pthread_mutex_lock(&a->mu);
      a->go = 1;
      pthread_cond_broadcast(&a->cv);
      pthread_mutex_unlock(&a->mu);
    }
    pthread_mutex_lock(&a->mu);
    a->mainWaits = 1;
    while (a->head == a->tail) pthread_cond_wait(&a->cv, &a->mu);
    a->mainWaits = 0;
    a->cur = &a->chunk[a->tail % AHEAD_CHUNKS];
    pthread_mutex_unlock(&a->mu);
    a->pos = 0;
  }
}

/* s is read to its end: the time of its last record, read or left out
** (a collection file's groups give their blocks' last times, skipped ones
** too), is the run's end at the earliest (enSeenUntil). */
static int srcEnd(tq_pm_global *g, Src *s) {
  TqTime last = s->tr ? s->tr->last : s->ranged ? s->rd.last : s->rd.lastT > s->rd.groupLast ? s->rd.lastT : s->rd.groupLast;
  if (last > TQ_BEGINNING) enSeenUntil(g, last);
  return 0;
}

/* Reads s's next record into s->cur.  1, 0 at its end, -1 damaged (said). */
static int srcNext(tq_pm_global *g, tq_pm_private *p, Src *s) {
  s->have = 0;
  if (s->tr) {
    RtNet *net = NULL;
    for (;;) {
      /* the loss lines before the packet (after the last one: at its end),
      ** to be told as the recording run was told them */
      for (; s->nextLoss < s->tr->nloss && s->tr->loss[s->nextLoss].at <= s->next; s->nextLoss++) {
        const SnsLoss *l = &s->tr->loss[s->nextLoss];
        keepLoss(s->x, l->rel, l->entity, l->from, l->to, l->count, l->spans);
      }
      if (s->next >= s->tr->npk) return srcEnd(g, s);
      const SnsPacket *pk = &s->tr->pk[s->next];
      /* (a recording this replay read left out already what is not
      ** needed: see srcOpen; one read by the caller is asked here) */
      int n = 0; /* packets left out */
      if (!s->full && enNeedsFixed(g))
        n = ((s->borrowed || s->x->bounded) && !textNeeded(g, s, pk)) || textUnsampled(g, s, pk)
                ? 1
                : textAliveSkip(g, s, pk);
      if (!n) break;
      /* (counted as a collection file's reader counts what it leaves out) */
      if (net || (net = enNet(g))) net->sensor[pk->rel].skipped += n;
      s->next += n;
    }
    snsTraceRecord(s->tr, s->next++, &s->cur);
  } else {
    int skip;
    for (;;) {
      int rr = s->ahead ? aheadNext(g, p, s) : snsReaderNext(&s->rd, &s->cur, &skip);
      if (s->ahead) skip = 0;
      if (rr == 0) return srcEnd(g, s);
      if (rr < 0) { /* damaged: what came before is used; say where */
        snsReaderReport(enDiag(g), &s->rd, " (the records before it were used)");
        snprintf(p->message, sizeof p->message, "%s", s->rd.err);
        return -1;
      }
      if (!skip) break;
    }
    /* (s->cur.vals are the reader's own: they stay until s's next record
    ** is read, after s->cur went to the engine) */
  }
  s->t = recTime(&s->cur);
  s->have = 1;
  return 1;
}

/* Opens collection file s: read ahead for its range and whole intervals
** when it must be (a stream that holds some is spooled first).  0, or -1
** (said). */
static int srcOpenCollection(tq_pm_global *g, tq_pm_private *p, Src *s) {
  SnsInput *in = s->in;
  RtNet *net = enNet(g);
  const unsigned char *h = in->head;
  uint32_t version = 0, flags = 0;
  if (in->nhead >= 16) {
    memcpy(&version, h + 8, 4);
    memcpy(&flags, h + 12, 4);
  }
  /* a stream that holds whole intervals (closed with flag 2; version 1
  ** does not say) is read ahead from a copy */
  if (!in->regular && (version == 1 || (flags & 3) == 3)) {
    if (spool(in, enDiag(g))) return -1;
    if (net) net->read.spooled += in->spooled;
  }
  Reader *r = &s->rd;
  s->reading = 1;
  if (snsReaderOpenFile(r, in->f, in->name, in->head, in->nhead, enProgram(g))) {
    snprintf(p->message, sizeof p->message, "%s", r->err);
    snsReaderReport(enDiag(g), r, "");
    return -1;
  }
  /* format 3 reads only what the queries need */
  r->need = s->full ? NULL : needOf;
  r->period = periodOf;
  r->aliveOnly = aliveOnlyOf;
  r->needCtx = g;
  r->net = net;
  r->lost = keepLoss; /* (format 4: its groups' losses) */
  r->lostCtx = s->x;
  if (net && r->version >= 3) net->read.bytes += (int64_t)r->len;
  if (net) net->read.bytesRead += (int64_t)r->off; /* its header */
  if (net && in->stream) net->read.streams++;
  /* a regular file is read once more when its range is not known (not
  ** closed properly, damaged range fields) or it may hold whole intervals
  ** (their begins are announced to the engine, which holds the relation's
  ** low mark back for them); a stream cannot be: its range is known at
  ** its end, and a whole interval in it is refused */
  int ranged = r->flags & 1;
  int mayWhole = r->version == 1 || !ranged || (r->flags & 2);
  if (in->regular && (!ranged || mayWhole)) {
    long at = ftell(in->f);
    if (at >= 0 && !fseek(in->f, 0, SEEK_SET)) {
      Reader scan;
      if (!snsReaderOpenFile(&scan, in->f, in->name, NULL, 0, enProgram(g))) {
        TqTime first, last;
        int64_t records;
        scan.wholeOk = 1;
        scan.need = r->need;
        scan.needCtx = g;
        int any = snsReaderScan(&scan, &first, &last, &records, announce, g);
        if (!ranged && any) {
          r->first = first;
          r->last = last;
          r->records = records;
        }
        ranged |= any;
        r->wholeOk = mayWhole;
      }
      snsReaderClose(&scan);
    }
    if (at < 0 || fseek(in->f, at, SEEK_SET)) {
      tqErrorAt(enDiag(g), in->name, "cannot read it again: %s", strerror(errno));
      return -1;
    }
  }
  if (!(r->flags & 1)) {
    const char *how = in->regular ? "reading what it holds" : "its range is known at its end";
    if (r->rangeBad)
      g->log(g, p, TQ_LOG_WARNING, "%s:12: its range fields are damaged (%s): %s", in->name,
             r->rangeBad == 1 ? "checksum mismatch" : "out of range", how);
    else
      g->log(g, p, TQ_LOG_WARNING, "%s has no range in its header (written to a pipe, or not closed properly): %s",
             in->name, how);
  }
  s->ranged = ranged; /* (the header's, or the one read ahead) */
  if (r->version >= 3 && s->x->threads + 1 < enThreads(g) && !aheadStart(g, p, s)) {
    s->x->threads++;
    if (net) net->read.threads++;
  }
  return 0;
}

/* Opens recording s, and reads it whole when it is a text recording.  0,
** or -1 (said). */
static int srcLoad(tq_pm_global *g, tq_pm_private *p, Src *s) {
  if (s->tr) return 0;
  if (!s->in) s->in = snsInputOpen(s->path, enDiag(g));
  if (!s->in) {
    snprintf(p->message, sizeof p->message, "cannot open the recording %s", s->name);
    return -1;
  }
  s->name = snsInputName(s->in);
  if (s->in->binary) return 0;
  /* the records no query needs (of a relation, or of its entities) are
  ** checked and not kept, as srcNext would leave them out (counted as
  ** skipped); not in a session, where a query added later may need them */
  const CpProgram *prog = enProgram(g);
  int nrel = prog->cat.rels.n;
  unsigned char *drop = NULL;
  for (int i = 0; !s->full && enNeedsFixed(g) && i < nrel; i++) {
    int need = g->needed_records(g, i + 1, TQ_PM_NEED_ANY);
    if (need == TQ_PM_NEED_ALL) continue;
    if (!drop) drop = tqCalloc((size_t)nrel, 1);
    drop[i] = need == TQ_PM_NEED_NONE ? 1 : 2;
  }
  s->tr = readSome(s->in, prog, drop, needOf, g, enDiag(g));
  free(drop);
  if (!s->tr) {
    snprintf(p->message, sizeof p->message, "cannot read the recording %s", s->name);
    return -1;
  }
  RtNet *net = s->tr->dropped ? enNet(g) : NULL;
  for (int i = 0; net && i < nrel && i < net->nsensor; i++) net->sensor[i].skipped += s->tr->dropped[i];
  return 0;
}

/* Starts the reading of recording s (loaded) and reads its first record.
** 0, or -1 (said). */
static int srcStart(tq_pm_global *g, tq_pm_private *p, Src *s) {
  if (!s->tr && srcOpenCollection(g, p, s)) return -1;
  /* (read whole: its whole intervals are known; not those a semi-join
  ** leaves out, which never come and would hold the relation's low mark
  ** back to the end) */
  int asks = s->tr && s->x->bounded && !s->full && enNeedsFixed(g);
  for (int64_t k = 0; s->tr && k < s->tr->npk; k++)
    if (s->tr->pk[k].kind == PK_WHOLE && (!asks || textNeeded(g, s, &s->tr->pk[k])))
      g->announce_whole(g, s->tr->pk[k].rel + 1, s->tr->iv[s->tr->pk[k].iv].from);
  if (srcNext(g, p, s) < 0) return -1;
  int64_t held = s->tr ? s->tr->nall : s->ranged ? s->rd.records : s->rd.nread;
  if (!held && s->in) {
    noRecord(s->in, enDiag(g));
    snprintf(p->message, sizeof p->message, "%s holds no record", s->name);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- semi-joins */

/* A replay's semi-joins (rtNetBoundFrom, docs/enabling.md): a relation
** whose alphas take their entities from other relations' records (O2's
** set, known only as the run goes) needs only the records of the entities
** those records hold.  They are read before the replay: from a text
** recording's packets, read whole already, and from a collection file's
** blocks of those relations (a second reader, as for the range).  A
** stream cannot be read twice, nor a collection file of format 1 or 2 by
** relation: a relation whose semi-join cannot read every recording keeps
** its needs, and so does one whose reading finds damage (which the replay
** then reports where it comes). */
enum { BOUND_FROM = 4 };
typedef struct Bound {
  int rel, n;                        /* the relation, its (relation, attribute) pairs */
  int from[BOUND_FROM], attr[BOUND_FROM];
  int64_t *v;                        /* the entities found (each once) */
  int64_t nv, cv;
  unsigned char *seen;               /* ... by entity (snsEntSlot): found already */
  int64_t nseen;
  int off;                           /* a recording could not be read for it */
} Bound;
typedef struct BoundRead {
  Bound *b;
  int nb;
  int rel;                           /* the relation read */
} BoundRead;

static void boundAdd(Bound *b, int64_t v) {
  unsigned char *c = v >= 0 && v <= (int64_t)1 << 40 ? snsEntSlot(&b->seen, &b->nseen, v) : NULL;
  if (c && *c) return;
  if (c) *c = 1;
  if (b->nv == b->cv) {
    b->cv = b->cv ? 2 * b->cv : 64;
    b->v = tqRealloc(b->v, sizeof(int64_t) * (size_t)b->cv);
  }
  b->v[b->nv++] = v;
}

/* The values of a record of br->rel, to every semi-join that reads it. */
static void boundVals(void *ctx, const int64_t *vals) {
  BoundRead *br = ctx;
  for (int i = 0; i < br->nb; i++)
    for (int k = 0; k < br->b[i].n; k++)
      if (br->b[i].from[k] == br->rel) boundAdd(&br->b[i], vals[br->b[i].attr[k]]);
}

/* Text recording s: the packets of relation br->rel the operation needs. */
static void boundText(tq_pm_global *g, Src *s, BoundRead *br) {
  const SnsTrace *tr = s->tr;
  const AlgRel *rel = tr->prog->cat.rels.v[br->rel - 1];
  int need = s->full ? TQ_PM_NEED_ALL : g->needed_records(g, br->rel, TQ_PM_NEED_ANY);
  if (need == TQ_PM_NEED_NONE) return;
  unsigned char *c = NULL;
  int64_t nc = 0;
  for (int64_t k = 0; k < tr->npk; k++) {
    const SnsPacket *pk = &tr->pk[k];
    if (pk->rel != br->rel - 1 || pk->kind == PK_END) continue;
    const int64_t *v = pk->kind == PK_EVENT || pk->kind == PK_SAMPLE ? tr->vals + pk->vals : tr->vals + tr->iv[pk->iv].vals;
    if (need == TQ_PM_NEED_SOME && rel->flagAttr >= 0) {
      int64_t e = v[rel->flagAttr];
      unsigned char *slot = e >= 0 && e <= (int64_t)1 << 40 ? snsEntSlot(&c, &nc, e) : NULL;
      int yes;
      if (slot && *slot) yes = *slot == 2;
      else {
        yes = g->needed_records(g, br->rel, e) != 0;
        if (slot) *slot = yes ? 2 : 1;
      }
      if (!yes) continue;
    }
    boundVals(br, v);
  }
  free(c);
}

/* Collection file s: its blocks of relation br->rel.  0, or -1 when it
** cannot be read so (a stream, an older format, damage). */
static int boundCollection(tq_pm_global *g, Src *s, BoundRead *br) {
  SnsInput *in = s->in;
  if (!in || !in->regular) return -1;
  long at = ftell(in->f);
  if (at < 0 || fseek(in->f, 0, SEEK_SET)) return -1;
  Reader pre;
  int rc = -1;
  if (!snsReaderOpenFile(&pre, in->f, in->name, NULL, 0, enProgram(g))) {
    pre.need = s->full ? NULL : needOf;
    pre.needCtx = g;
    rc = snsReaderValues(&pre, br->rel, boundVals, br) == 1 ? 0 : -1;
    RtNet *net = enNet(g);
    net->read.boundBlocks += pre.blocksTaken;
    net->read.boundBytes += pre.bytesTaken;
  }
  snsReaderClose(&pre);
  if (fseek(in->f, at, SEEK_SET)) {
    tqErrorAt(enDiag(g), in->name, "cannot read it again: %s", strerror(errno));
    return -2;
  }
  return rc;
}

/* Reads and installs the replay's semi-joins.  0, or -1 (said). */
static int replayBound(tq_pm_global *g, Replay *x) {
  RtNet *net = enNet(g);
  if (!net || !enBoundable(g)) return 0;
  Bound *b = NULL;
  int nb = 0, rc = 0;
  for (int rel = 1; rel <= net->nsensor; rel++) {
    Bound one = {rel, 0, {0}, {0}, NULL, 0, 0, NULL, 0, 0};
    one.n = rtNetBoundFrom(net, rel, one.from, one.attr, BOUND_FROM);
    if (!one.n) continue;
    b = tqRealloc(b, sizeof(Bound) * (size_t)(nb + 1));
    b[nb++] = one;
  }
  /* each relation read once per recording, for every semi-join it serves */
  for (int rel = 1; rel <= net->nsensor && nb && !rc; rel++) {
    BoundRead br = {b, nb, rel};
    int used = 0;
    for (int i = 0; i < nb && !used; i++)
      for (int k = 0; k < b[i].n; k++) used |= b[i].from[k] == rel && !b[i].off;
    for (int j = 0; used && j < x->nsrc; j++) {
      Src *s = &x->src[j];
      int r = s->tr ? (boundText(g, s, &br), 0) : boundCollection(g, s, &br);
      if (r == -2) { /* (said) */
        rc = -1;
        break;
      }
      if (r < 0) /* (every semi-join that reads rel is given up) */
        for (int i = 0; i < nb; i++)
          for (int k = 0; k < b[i].n; k++) b[i].off |= b[i].from[k] == rel;
    }
  }
  for (int i = 0; i < nb; i++) {
    if (!rc && !b[i].off) {
      rtNetBound(net, b[i].rel, b[i].v, b[i].nv);
      x->bounded = 1;
    }
    free(b[i].v);
    free(b[i].seen);
  }
  free(b);
  return rc;
}

/* The range of s: its first and last times and records (0: not known). */
static int srcRange(const Src *s, TqTime *first, TqTime *last, int64_t *records) {
  if (s->tr) {
    *first = s->tr->first, *last = s->tr->last, *records = s->tr->nall;
    return 1;
  }
  if (!s->ranged) return 0;
  *first = s->rd.first, *last = s->rd.last, *records = s->rd.records;
  return 1;
}

/* The first time of s: its range's, else (known at its end) the first
** time it read, needed or not, as a regular file's read ahead gives it.
** 0: none (nothing read). */
static int srcFirst(const Src *s, TqTime *first) {
  TqTime l;
  int64_t n;
  if (srcRange(s, first, &l, &n)) return 1;
  int seen = s->reading && s->rd.firstSeen > TQ_BEGINNING;
  *first = seen ? s->rd.firstSeen : s->t;
  return seen || s->have;
}

/* Recordings of dates (a live run's CLOCK_REALTIME) and recordings of
** times from a start cannot be merged.  0, or -1 (said). */
static int checkClocks(tq_pm_global *g, tq_pm_private *p, Replay *x) {
  const Src *dated = NULL, *offset = NULL;
  for (int i = 0; i < x->nsrc; i++) {
    const Src *s = &x->src[i];
    TqTime first;
    if (!srcFirst(s, &first)) continue;
    if (first >= TQ_WALLCLOCK && !dated) dated = s;
    if (first < TQ_WALLCLOCK && !offset) offset = s;
  }
  if (!dated || !offset) return 0;
  const Src *later = dated < offset ? offset : dated, *earlier = later == dated ? offset : dated;
  TqTime tl = 0, te = 0;
  srcFirst(later, &tl);
  srcFirst(earlier, &te);
  char a[64], b[64];
  const char *dates = "are dates", *offsets = "count from a start";
  tqErrorAt(enDiag(g), later->name,
            "its times %s (from %s), those of %s %s (from %s): recordings on different clocks cannot be merged",
            later == dated ? dates : offsets, tqTimeFormat(a, sizeof a, tl), earlier->name,
            earlier == dated ? dates : offsets, tqTimeFormat(b, sizeof b, te));
  snprintf(p->message, sizeof p->message, "recordings on different clocks");
  return -1;
}

/* A replay of the recordings of p's args (one FILE a line), or of the
** recording handed at registration: read already (tr, snsReplay) or
** opened (in); either stays the caller's. */
static Replay *replayNew(tq_pm_private *p, SnsTrace *tr, SnsInput *in) {
  Replay *x = tqCalloc(1, sizeof *x);
  for (int i = 0; i < REPLAY_MAX; i++) x->src[i].x = x;
  if (tr || in) {
    Src *s = &x->src[0];
    s->tr = tr;
    s->in = in;
    s->borrowed = 1;
    s->name = in ? snsInputName(in) : "(memory)";
    x->nsrc = 1;
    return x;
  }
  for (const char *a = p->args; a && *a && x->nsrc < REPLAY_MAX;) {
    const char *e = strchr(a, '\n');
    size_t n = e ? (size_t)(e - a) : strlen(a);
    Src *s = &x->src[x->nsrc];
    s->full = n > 5 && !strncmp(a, "full:", 5);
    s->path = s->full ? tqStrndup(a + 5, n - 5) : tqStrndup(a, n);
    s->name = s->path;
    s->idBits = (uint64_t)x->nsrc << 48;
    x->nsrc++;
    a += n + (e ? 1 : 0);
  }
  return x;
}

tq_pm_status snsReplayStart(tq_pm_global *g, tq_pm_private *p, SnsTrace *tr, SnsInput *in) {
  Replay *x = replayNew(p, tr, in);
  p->data = x;
  if (!x->nsrc) {
    snprintf(p->message, sizeof p->message, "give the recording: FILE");
    return TQ_PM_FATAL;
  }
  for (int i = 0; i < x->nsrc; i++)
    if (srcLoad(g, p, &x->src[i])) return TQ_PM_FATAL;
  if (replayBound(g, x)) return TQ_PM_FATAL;
  for (int i = 0; i < x->nsrc; i++)
    if (srcStart(g, p, &x->src[i])) return TQ_PM_FATAL;
  if (x->nsrc > 1 && checkClocks(g, p, x)) return TQ_PM_FATAL;
  TqTime first = TQ_FOREVER, last = TQ_BEGINNING;
  int64_t records = 0;
  int ranged = 1;
  for (int i = 0; i < x->nsrc; i++) {
    const Src *s = &x->src[i];
    TqTime f, l;
    int64_t n;
    if (!srcRange(s, &f, &l, &n)) { /* known at its end (a stream): its first time only */
      ranged = 0;
      l = TQ_BEGINNING, n = 0;
      if (!srcFirst(s, &f)) f = TQ_FOREVER;
    }
    if (f < first) first = f;
    if (l > last) last = l;
    records += n;
  }
  if (ranged) g->set_range(g, first, last, records);
  else if (first < TQ_FOREVER) g->set_start(g, first); /* (the Clock ticks from there, not from 0) */
  return TQ_PM_OK;
}

tq_pm_status snsReplayExtract(tq_pm_global *g, tq_pm_private *p) {
  Replay *x = p->data;
  TqTime boundary = TQ_FOREVER;
  for (;;) {
    tellLosses(g, x);
    Src *s = NULL;
    for (int i = 0; i < x->nsrc; i++)
      if (x->src[i].have && (!s || x->src[i].t < s->t)) s = &x->src[i];
    if (!s) return TQ_PM_DONE;
    if (boundary == TQ_FOREVER) boundary = tqTickAfter(s->t, g->tick);
    else if (s->t >= boundary) return TQ_PM_OK;
    tq_record r = s->cur;
    if (r.kind == TQ_REC_BEGIN || r.kind == TQ_REC_END || r.kind == TQ_REC_WHOLE) r.id ^= s->idBits;
    if (g->produce(g, &r)) return TQ_PM_FATAL;
    if (srcNext(g, p, s) < 0) {
      tellLosses(g, x); /* (those read before the damage) */
      return TQ_PM_ERROR;
    }
  }
}

void snsReplayEnd(tq_pm_global *g, tq_pm_private *p) {
  Replay *x = p->data;
  if (!x) return;
  RtNet *net = enNet(g);
  for (int i = 0; i < x->nsrc; i++) {
    Src *s = &x->src[i];
    aheadStop(g, s);
    if (s->reading) {
      if (net && s->in && !s->in->regular) net->read.bytes += (int64_t)s->rd.off; /* (a stream's length: what came) */
      snsReaderClose(&s->rd);
    }
    if (!s->borrowed) {
      snsTraceFree(s->tr);
      snsInputClose(s->in);
    }
    free(s->path);
    for (int k = 0; k < s->nrelNeed; k++) free(s->entNeed[k]);
    free(s->entNeed);
    free(s->nentNeed);
    free(s->relNeed);
    free(s->period);
    for (int k = 0; k < s->nalive; k++) free(s->alive[k].n);
    free(s->alive);
  }
  free(x->lost);
  free(x);
  p->data = NULL;
}

/* ---------------------------------------------------------------- the replay PM */

/* args: the recordings, one FILE a line; or an input opened by the
** caller as the private data (tqmon load), kept by it. */
static tq_pm_status rpInit(tq_pm_global *g, tq_pm_private *p) {
  if (!p->data && (!p->args || !*p->args)) {
    snprintf(p->message, sizeof p->message, "give the recordings: replay=FILE (one a line)");
    return TQ_PM_ERROR;
  }
  p->caps = TQ_PM_EXTRACTOR;
  return TQ_PM_OK;
}
static tq_pm_status rpCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  if (what == TQ_PM_START) return snsReplayStart(g, p, NULL, p->data);
  if (what == TQ_PM_END) snsReplayEnd(g, p);
  return TQ_PM_OK;
}

const tq_pm snsReplayPm = {
    .version = TQ_PM_VERSION,
    .name = "replay",
    .description = "recordings, text or collection files, several merged in time order: EXTRACTOR (args: FILE a "
                   "line, - standard input; full:FILE reads every block)",
    .init = rpInit,
    .call = rpCall,
    .extract = snsReplayExtract,
};
