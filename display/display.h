/*
** display.h - showing results: the text consumer (tables, CSV, JSON lines)
** for now; the declarative pictures of paper section 7 come with the
** display issue.  Sees only runtime.h.
*/
#ifndef DISPLAY_H
#define DISPLAY_H

#include "../runtime/runtime.h"

enum { DSP_TABLE = 1, DSP_CSV, DSP_JSONL };

/* A consumer that collects every result's rows and writes them to out at
** the end of the run, sorted by valid time then values: tables with times
** as h:mm:ss (open ends as "now"), CSV with integer ns (open ends empty),
** or one JSON object per row.  Unnamed results are included. */
RtConsumer *dspTextConsumer(FILE *out, int format);
void dspTextConsumerFree(RtConsumer *c);

/* Formats one value of type t into buf (names for entities and enums). */
const char *dspValue(char *buf, size_t n, AlgType t, int64_t v);

#endif
