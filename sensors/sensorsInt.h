/*
** sensorsInt.h - the in-memory form of a recording, shared by trace.c
** (parsing, writing) and pms.c (the trace PM).
*/
#ifndef SENSORSINT_H
#define SENSORSINT_H

#include "../runtime/engine.h"
#include "sensors.h"

enum { PK_EVENT = 1, PK_BEGIN, PK_END, PK_SAMPLE, PK_WHOLE };

/* One recorded packet, 16 bytes: a recording is held whole (limits:
** SNS_MAX_* below). */
typedef struct SnsPacket {
  TqTime t;        /* when */
  union {
    uint32_t iv;   /* PK_BEGIN/PK_END/PK_WHOLE: interval index */
    uint32_t vals; /* PK_EVENT/PK_SAMPLE: offset of the values in SnsTrace.vals */
  };
  uint16_t rel;    /* relation index (id - 1) */
  uint16_t kind;   /* PK_* */
} SnsPacket;
#define SNS_MAX_RELS 65535
#define SNS_MAX_VALS 4294967295u
#define SNS_MAX_IVS 2147483647

/* One recorded interval. */
typedef struct SnsIv {
  int32_t rel;     /* relation index */
  int32_t nextSame;/* parse: next open interval with the same key, -1 */
  int64_t vals;    /* offset of its values */
  TqTime from, to; /* to == TQ_OPEN when never ended */
  int32_t pos;     /* replay: position in the open list, -1 when closed */
  int32_t dropped; /* parse: checked, not kept (snsTraceParseSome) */
} SnsIv;

/* A loss line (TIME NAME! ...): what a producer lost, told again to the
** engine (g->lost) when the replay reaches it. */
typedef struct SnsLoss {
  int64_t at;      /* the packets before it (it is told before packet at) */
  int rel;         /* relation id (0: not known) */
  int spans;       /* begins or ends of intervals among them */
  int64_t entity;  /* its flag entity (a symbol), or TQ_PM_ENTITY_UNKNOWN */
  TqTime from, to; /* the period */
  int64_t count;   /* records lost; TQ_PM_LOST_UNKNOWN: how many is not known */
} SnsLoss;

struct SnsTrace {
  TqSource *src;
  const CpProgram *prog;
  SnsPacket *pk;  /* packets in time order */
  int64_t npk, cpk;
  SnsIv *iv;      /* intervals */
  int64_t niv, civ;
  int64_t *vals;  /* value pool */
  int64_t nvals, cvals;
  TqTime first, last;
  int marked;     /* a range mark ("TIME .") came before any record: first is its time */
  SnsLoss *loss;  /* its loss lines, in order */
  int64_t nloss, closs;
  int64_t nall;   /* the records of the recording (npk and those dropped) */
  int64_t *dropped; /* per relation: its records checked, not kept (snsTraceParseSome) */
};

/* snsTraceParse, but some records are checked as the others and not kept
** (replay.c: those no query needs): by drop[relation id - 1] (NULL: none),
** 1 every record of the relation, 2 those whose entity (the value of its
** flag attribute, of its entity attribute for an entity relation) need
** says is not needed (need(ctx, relation id, entity): 1 needed, 0 not;
** asked once per entity).  Their packets are counted in dropped, and the
** room of their intervals that end serves the relation's next ones. */
typedef int (*SnsNeedFn)(void *ctx, int rel, int64_t entity);
/* The byte of entity e (0 <= e) in a cache by entity: *v, of *n bytes,
** grown with zeros to hold it. */
unsigned char *snsEntSlot(unsigned char **v, int64_t *n, int64_t e);
/* The count of entity e in a count by entity: *v, of *n counts, grown with
** zeros to hold it; NULL for a value that is not a symbol (e < 0, e > 2^40). */
int32_t *snsCountSlot(int32_t **v, int64_t *n, int64_t e);
SnsTrace *snsTraceParseSome(TqSource *src, const CpProgram *prog, const unsigned char *drop, SnsNeedFn need, void *needCtx,
                            TqDiag *d);
/* The same, of the text read from f (after its first bytes head, read
** already), SNS_TEXT_PART bytes at a time: a line longer than maxLine
** bytes (0: no bound), a NUL byte or a read error refuses it, at its
** place, with that one message (not its lines' before it). */
#define SNS_TEXT_PART (256 << 10)
SnsTrace *snsTraceParseFile(FILE *f, const char *name, const void *head, size_t nhead, size_t maxLine,
                            const CpProgram *prog, const unsigned char *drop, SnsNeedFn need, void *needCtx, TqDiag *d);

/* The text form writer (the trace PM's consumer side, tqmon convert). */
typedef struct SnsTextWriter SnsTextWriter;
SnsTextWriter *snsTextWriterOpen(const char *path, const CpProgram *prog); /* NULL: errno */
int snsTextWrite(SnsTextWriter *w, const tq_record *r);
/* A loss (tq_pm.lost) as a loss line, at the time of the last record
** written (before the first record: at its time).  0 or -1. */
int snsTextWriteLoss(SnsTextWriter *w, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans);
/* The run's first time (the network's origin): written as a range mark
** ("TIME .") before the first line, when it is not after that line's time. */
void snsTextWriterOrigin(SnsTextWriter *w, TqTime first);
/* Closes the file; last (TQ_BEGINNING: not known) is the run's last time,
** written as a range mark after the last line when a record was written
** and it is not before that line's time.  0 or -1. */
int snsTextWriterClose(SnsTextWriter *w, TqTime last);

/* A recording opened for reading (replay.c). */
struct SnsInput {
  char *name;              /* in messages: the path, "<stdin>" for "-" */
  FILE *f;                 /* open once; what is left after head */
  int binary;              /* a collection file (its magic) */
  int regular;             /* a regular file: may be read twice */
  int stream;              /* it came as a stream (a pipe, a device; perhaps spooled since) */
  unsigned char head[16];  /* its first bytes, read to tell the format */
  size_t nhead;            /* how many (fewer: a shorter input) */
  int64_t spooled;         /* bytes copied from a stream into a temporary file */
};

/* The EXTRACTOR half of the trace, colfil and replay PMs (replay.c): at
** START, the recordings of p->args (one FILE a line, "full:FILE" every
** block) or the one handed by the caller (tr read already, or in opened;
** either stays the caller's) are opened and merged; END frees them.
** Extract produces a snapshot's records. */
tq_pm_status snsReplayStart(tq_pm_global *g, tq_pm_private *p, SnsTrace *tr, SnsInput *in);
tq_pm_status snsReplayExtract(tq_pm_global *g, tq_pm_private *p);
void snsReplayEnd(tq_pm_global *g, tq_pm_private *p);

/* CRC-32C (Castagnoli) of n bytes, as collection files check them: the
** CPU's instruction where it has one; the Soft one always by table. */
uint32_t snsCrc32c(const void *data, size_t n);
uint32_t snsCrc32cSoft(const void *data, size_t n);

#endif
