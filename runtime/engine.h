/*
** engine.h - the engine's side for code compiled into tqmon.  Client
** applications see only include/tqmon.h, third-party PMs only
** include/tqmon_pm.h; the engine itself knows every PM only through
** tqmon_pm.h, and names none.  This header adds two things
** (docs/design.md, "The PM contract"):
**   1. for the program that embeds the engine (app/, the tests, tools):
**      an engine with no PM to load by name but those it is offered, a PM
**      handed an object at registration, and a run over a program and a
**      network its caller holds;
**   2. for the PMs compiled into tqmon (sensors/, display/, the store):
**      what they use beyond tqmon_pm.h because it is tqmon's own types:
**      the compiled program, the network, errors with file:line:col, a
**      result consumer fed with the network's rows, whether a halt was
**      asked and how far a replay is.
*/
#ifndef ENGINE_H
#define ENGINE_H

#include "../include/tqmon.h"
#include "runtime.h"

/* ================================================================ for the embedding program */

/* An engine as tq_init makes one, but offering no PM to load by name:
** tq_register finds only the PMs enOffer gives and the PM path's
** libraries.  (tq_init, in app/builtins.c, is enNew and the built-in PMs.)
** Returns NULL only when out of memory. */
tq_engine *enNew(void);
/* The PMs tq_register loads by name, before the PM path; pms[0..n) stay
** valid until tq_finish. */
void enOffer(tq_engine *e, const tq_pm *const *pms, int n);
/* tq_register_pm with the PM's private data set to data before its init
** runs: a PM handed an object of the embedding program (a recording read
** already).  Returns 0 or -1 (tq_errors). */
int enRegisterData(tq_engine *e, const tq_pm *pm, const char *args, void *data);
/* Instead of tq_prepare: binds the engine to program p and network net
** (built on p), which the caller keeps after tq_finish, for tests and
** tools that build their own network.  Returns 0 or -1 (tq_errors). */
int enBind(tq_engine *e, CpProgram *p, RtNet *net);
/* Before optimizing program p for e's operation (rule SENSOR): marks
** each sensor of p's relations that the operation cannot ask
** (AlgRel.unasked, with the reason).  A replay asks every sensor (it
** answers another sensor of a relation from the relation's records); a
** live collection asks a relation's other sensor only when a registered
** processor module names it in `produces` (a PM producing "*", such as
** shm, is not asked for it), and its first sensor when a PM produces it
** or a PM produces "*".  Call it after the PMs are registered. */
void enSensorsAsked(tq_engine *e, CpProgram *p);

/* ================================================================ for the PMs compiled into tqmon */

/* The compiled program (the catalog with its types, the display
** statements) from tq_prepare on; NULL before. */
CpProgram *enProgram(tq_pm_global *g);
/* The update network from tq_prepare on (its results and their rows,
** its time); NULL before. */
RtNet *enNet(tq_pm_global *g);
/* Threads an extractor may use (option "threads", tqmon run --threads):
** 1, its own thread only; more, that many in all (each decodes one
** recording beside the engine).  The default: 2 on a machine of 2 or more
** processors.  A session (whose queries come and go, and with them what
** the operation needs) is 1: a decoding thread asks the needs of a
** network that does not change. */
int enThreads(tq_pm_global *g);
/* Do the operation's needs (g->needed_records) stay as they are from its
** start?  Not in a session, whose queries come and go: 1 or 0. */
int enNeedsFixed(tq_pm_global *g);
/* May an extractor narrow the needs by a semi-join (rtNetBoundFrom,
** rtNetBound), read before its first record?  Only where the needs are
** asked at all: not in a session, nor when every record goes somewhere
** (recording, a collector, a filter).  1 or 0. */
int enBoundable(tq_pm_global *g);
/* Are the records of relation rel needed only for whether its entities
** exist (an entity relation no query reads, kept for the sensors that
** live in its entities)?  Then only the instants where an entity begins
** to exist or ends matter: an end and a begin of one entity at one
** instant (a change of its state) may both be left out, and so may a
** begin while another interval of it is open and an end that leaves one
** open (the engine counts them per entity; a count that only moves within
** an instant is never looked at).  Not in a session, nor when every
** record goes somewhere (recording, a collector, a filter).  1 or 0. */
int enAliveOnly(tq_pm_global *g, int rel);
/* An extractor that gave no range (g->set_range) read its recording up to
** t, records it left out (no query needs them) included: the run ends at t
** at the earliest (`now`, the Clock's last tick), as if they had been
** produced.  Without it the end would be the last record produced, and
** leaving records out would cut the run short. */
void enSeenUntil(tq_pm_global *g, TqTime t);
/* Has the operation been asked to halt (tq_halt)?  A PM that waits (the
** realtime clock for its next tick, a pacer) stops waiting.  1 or 0. */
int enHaltRequested(tq_pm_global *g);
/* How far an extraction is through its recording, by time over the
** range its extractor gave (g->set_range): 0 to 1, or -1 when not known
** (a collection, an extractor that gave no range). */
double enProgress(tq_pm_global *g);
/* Where errors with a place (file:line:col) are reported: they come out
** with the engine's own (tq_errors). */
TqDiag *enDiag(tq_pm_global *g);
/* A CONSUMER hands its result consumer at START (begun by the PM on
** enNet): the network's rows then go to c instead of the PM's result(),
** while the PM is not disabled; a failing batch disables it. */
void enAttachConsumer(tq_pm_global *g, tq_pm_private *p, RtConsumer *c);

/* The built-in PMs of runtime/ (store.c; app/builtins.c offers them):
** sqlite, every named result into an SQLite file, and store, every record
** as tables of the primitive relations (tqmon load). */
extern const tq_pm rtSqlitePm, rtStorePm;

#endif
