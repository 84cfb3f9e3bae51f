/*
** display.h - showing results: the text consumer (tables, CSV, JSON lines)
** and the display engine that draws the declarative pictures of paper
** section 7 (entities as icons, relationships with their icons, time as an
** animation or a timeline) into an HTML page, a live page, a terminal view
** or a list of drawn objects.  Sees only runtime.h.  See display/README.md.
*/
#ifndef DISPLAY_H
#define DISPLAY_H

#include "../runtime/runtime.h"
#include "../include/tqmon_pm.h"

enum { DSP_TABLE = 1, DSP_CSV, DSP_JSONL };

/* How times are shown in tables: wall-clock times (a live run's) as ISO
** 8601 dates in the local zone (TZ) with its offset, or in UTC; others (a
** recording's) as h:mm:ss from time 0; or every time relative to the
** run's first time (+h:mm:ss). */
enum { DSP_TIME_LOCAL = 0, DSP_TIME_UTC, DSP_TIME_RELATIVE };
typedef struct DspTextOpts {
  int stream; /* write each instant's rows after it, flushed (text.c) */
  int time;   /* DSP_TIME_* (tables) */
} DspTextOpts;

/* A consumer that collects every result's rows and writes them to out at
** the end of the run, sorted by valid time then values: tables with times
** as h:mm:ss (open ends as "now"), CSV with integer ns (open ends empty),
** or one JSON object per row (wall-clock times also as NAME_iso, UTC with
** every ns digit).  Unnamed results are included. */
RtConsumer *dspTextConsumer(FILE *out, int format);
/* The same with options: streamed, the rows of each instant are written
** after it and flushed (an interval when it begins, and again when it
** ends). */
RtConsumer *dspTextConsumerWith(FILE *out, int format, const DspTextOpts *o);
void dspTextConsumerFree(RtConsumer *c);

/* Formats one value of type t into buf (names for entities and enums). */
const char *dspValue(char *buf, size_t n, AlgType t, int64_t v);

/* ================================================================ the display engine */

/* The incremental display model of a program's displays (and a default
** timeline for every result without a display).  It is fed as a result
** consumer; its outputs (dspInt.h) get the drawn objects that changed at
** each step.  The program must outlive the model. */
typedef struct DspModel DspModel;
DspModel *dspModelNew(const CpProgram *p);
void dspModelFree(DspModel *m); /* accepts NULL; call after the consumer's end */
RtConsumer *dspModelConsumer(DspModel *m);

typedef struct DspStats {
  int64_t rows;         /* result rows absorbed */
  int64_t steps;        /* instants drawn */
  int64_t changes;      /* drawn-object changes handed to the outputs */
  int64_t objects;      /* drawn objects made */
  int64_t bars;         /* timeline bars */
} DspStats;
void dspModelStats(const DspModel *m, DspStats *s);

/* The display processor module (CONSUMER), args: comma-separated outputs
**   html=FILE        the page with the animation and the timeline
**   list[=FILE]      the drawn objects that change at each step (tests)
**   tty              the current state, in place when standard output is a
**                    terminal, else as plain lines of what changed
**   serve=[ADDR:]PORT  the live page over HTTP (loopback unless ADDR)
**   linger           (with serve) keep serving after the run until SIGINT
**   pace=S           each step drawn takes at least S seconds (a replay
**                    watched live in the terminal or the browser)
**   history=MB       the steps the page and the server keep (default 64):
**                    older ones are summarised as the picture then
**                    (display/history.c) */
extern const tq_pm dspDisplayPm;
/* The text PM (CONSUMER of results): dspTextConsumer on standard output or
** a file (args: table, csv or jsonl, optionally :FILE). */
extern const tq_pm dspTextPm;
/* export.c: pcpexport, the named results valid now for the PCP agent pmdatqmon. */
extern const tq_pm dspPcpExportPm;

#endif
