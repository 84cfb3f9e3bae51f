/*
** engine.h - the engine's internals shared with the built-in processor
** modules (sensors/, display/, runtime/store.c).  Third-party PMs see only
** sensors/pm.h; client applications only include/tqmon.h.
*/
#ifndef ENGINE_H
#define ENGINE_H

#include "../include/tqmon.h"
#include "runtime.h"

/* The engine behind a PM's global context (built-in PMs only). */
tq_engine *enOf(tq_pm_global *g);
CpProgram *enProgram(tq_pm_global *g);
RtNet *enNet(tq_pm_global *g);
TqDiag *enDiag(tq_pm_global *g);
/* A built-in CONSUMER hands the engine its result consumer at START. */
void enAttachConsumer(tq_pm_global *g, tq_pm_private *p, RtConsumer *c);
/* A built-in CONSUMER that draws calls this at init: the displayed
** relations then get the queries that collect them (cpDisplayQueries). */
void enWantDisplay(tq_pm_global *g);
/* A live collection's first time (the realtime clock calls it at START:
** times are then CLOCK_REALTIME nanoseconds). */
void enSetStart(tq_pm_global *g, TqTime t);
/* A built-in extractor that reads ahead, at START: a whole interval of
** relation rel (reported only at its end) began at from.  Its begin holds
** the relation's low mark back until it comes. */
void enAnnounceWhole(tq_pm_global *g, int rel, TqTime from);

/* Replays an already parsed recording through net (built on p, which the
** caller keeps) with the engine's delivery: for tests and tools that hold
** their own network.  Returns 0 or -1 (messages on standard error). */
struct SnsTrace;
int enReplay(CpProgram *p, RtNet *net, struct SnsTrace *tr);
/* The trace PM reads tr (kept by the caller) instead of its file. */
void snsTracePreload(tq_pm_private *p, struct SnsTrace *tr);

/* The built-in PMs (sensors/builtins.c lists them). */
const tq_pm *const *enBuiltinPms(int *n);

#endif
