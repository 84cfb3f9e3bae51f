/*
** sensorsInt.h - the in-memory form of a recording, shared by trace.c
** (parsing, writing) and builtins.c (the trace PM).
*/
#ifndef SENSORSINT_H
#define SENSORSINT_H

#include "../runtime/engine.h"
#include "sensors.h"

enum { PK_EVENT = 1, PK_BEGIN, PK_END, PK_SAMPLE, PK_WHOLE };

/* One recorded packet. */
typedef struct SnsPacket {
  TqTime t;        /* when */
  int32_t rel;     /* relation index (id - 1) */
  int32_t kind;    /* PK_* */
  int32_t iv;      /* interval index (PK_BEGIN/PK_END), -1 for events */
  int32_t line;    /* source line */
  int64_t vals;    /* offset of the values in SnsTrace.vals (PK_EVENT) */
} SnsPacket;

/* One recorded interval. */
typedef struct SnsIv {
  int32_t rel;     /* relation index */
  int64_t vals;    /* offset of its values */
  TqTime from, to; /* to == TQ_OPEN when never ended */
  int32_t pos;     /* replay: position in the open list, -1 when closed */
  int32_t emitted; /* replay: its begin was delivered */
  int32_t nextSame;/* parse: next open interval with the same key, -1 */
} SnsIv;

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
};

/* The text form writer (the trace PM's consumer side, tqmon convert). */
typedef struct SnsTextWriter SnsTextWriter;
SnsTextWriter *snsTextWriterOpen(const char *path, const CpProgram *prog); /* NULL: errno */
int snsTextWrite(SnsTextWriter *w, const tq_record *r);
int snsTextWriterClose(SnsTextWriter *w);

#endif
