/*
** sensors.h - recordings in the text .trace format, read by the trace PM
** (sensors/builtins.c) and replayed through the engine with the same
** enabling semantics as live sensors (a packet is delivered only when its
** sensor is enabled on the flag entity at that time), and written by it
** (tqmon convert).
**
** Text recording format: one packet per line, "TIME NAME VALUE...", values
** in the declared attribute order, '#' starts a comment.  TIME is
** h:mm:ss[.frac], an integer with ns|us|ms|s|min|h, or a bare integer of ns;
** times never decrease.  NAME is an event relation, or NAME+ / NAME- to
** begin / end an interval (entity relations included); a keyed interval is
** also closed by the next NAME+ with the same key, and NAME- may give only
** the key.  NAME@ is a sample taken at TIME (sampled relations); NAME= FROM
** is an interval [FROM, TIME) delivered whole at its end (it began while its
** sensor was disabled).  Values are names (entities, enum values), numbers
** or double-quoted strings.
*/
#ifndef SENSORS_H
#define SENSORS_H

#include "../runtime/runtime.h"

typedef struct SnsTrace SnsTrace;

/* Reads and checks a text recording against the catalog of prog.  Returns
** NULL after recording every error (file:line:col) in d. */
SnsTrace *snsTraceRead(const char *path, const CpProgram *prog, TqDiag *d);
SnsTrace *snsTraceParse(TqSource *src, const CpProgram *prog, TqDiag *d); /* takes src */
void snsTraceFree(SnsTrace *t);
int64_t snsTracePackets(const SnsTrace *t);
TqTime snsTraceFirst(const SnsTrace *t);
TqTime snsTraceLast(const SnsTrace *t);

/* Writes the whole recording (every packet, all sensors enabled) as
** primitive relation tables into an SQLite file: the "traditional way"
** and the input of the SQL oracle.  Returns 0 or -1 with an error in d. */
int snsTraceToSqlite(const SnsTrace *t, const CpProgram *prog, const char *path, TqDiag *d);

/* Writes the C header of generated sensors for the primitive relations of
** p into out (src names the configuration in its comment).  Returns 0, or
** -1 with the reason in err. */
int snsGenHeader(const CpProgram *p, const char *src, TqBuf *out, TqBuf *err);

#endif
