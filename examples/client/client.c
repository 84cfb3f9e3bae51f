/*
** client.c - an example client application of the tqmon engine (after
** TDC's client applications).  It includes only include/tqmon.h and links
** build/libtqmon.a.
**
**   usage: client RECORDING.trace FILE.tq...
**
** It replays a text recording with the built-in EXTRACTOR `trace`, and
** registers a processor module of its own, `printer`: a CONSUMER that
** prints every change of every result as it happens, and the record sets
** of each snapshot at snapshot-end.  It reads the recording one snapshot at
** a time (tq_read_snapshot), saying after each how far the engine got, then
** ends the operation and prints what tq_get_info knows about the PMs and
** the sensors.  Everything printed is deterministic (no wall times).
**
** Exit status: 0, or 1 when the engine reported an error (the messages of
** tq_errors go to standard error).
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tqmon.h"

/* ================================================================ printing */

/* h:mm:ss[.fraction] of a time in ns; the TQuel constants beginning
** (INT64_MIN + 1) and forever (INT64_MAX - 1), and TQ_PM_OPEN, as words. */
static const char *fmtTime(char *buf, size_t n, tq_time t) {
  if (t == TQ_PM_OPEN) return "open";
  if (t == INT64_MIN + 1) return "beginning";
  if (t == INT64_MAX - 1) return "forever";
  if (t < 0) {
    snprintf(buf, n, "%" PRId64 "ns", t);
    return buf;
  }
  int64_t s = t / 1000000000, ns = t % 1000000000;
  int k = snprintf(buf, n, "%" PRId64 ":%02d:%02d", s / 3600, (int)(s / 60 % 60), (int)(s % 60));
  if (ns && k > 0 && (size_t)k < n) {
    char frac[16];
    snprintf(frac, sizeof frac, "%09d", (int)ns);
    for (int i = 8; i > 0 && frac[i] == '0'; i--) frac[i] = 0;
    snprintf(buf + k, n - (size_t)k, ".%s", frac);
  }
  return buf;
}

/* One value of a result row, by its type code. */
static void printValue(tq_pm_global *g, int type, int64_t v) {
  double d;
  switch (type) {
    case TQ_TY_INT: printf("%" PRId64, v); break;
    case TQ_TY_FLOAT:
      memcpy(&d, &v, sizeof d);
      printf("%g", d);
      break;
    case TQ_TY_STRING:
    case TQ_TY_ENTITY: printf("%s", g->symbol_name(g, v)); break;
    case TQ_TY_ENUM: printf("#%" PRId64, v); break; /* the interface gives the index, not the name */
    default: printf("?");
  }
}

/* ================================================================ the client's own PM */

/* State of the printer PM (p->data, from START to END). */
typedef struct Printer {
  int64_t rows[3]; /* result changes seen: inserts, closes, deletes */
} Printer;

static tq_pm_status printerInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_CONSUMER;
  p->sync = TQ_PM_SYNC_SNAPSHOT_END;
  return TQ_PM_OK;
}

static tq_pm_status printerCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Printer *pr = p->data;
  char tb[32];
  switch (what) {
    case TQ_PM_START:
      pr = calloc(1, sizeof *pr);
      if (!pr) return TQ_PM_FATAL;
      p->data = pr;
      printf("printer: start (%s)\n", g->operation == TQ_OP_EXTRACT ? "extraction" : "collection");
      return TQ_PM_OK;
    case TQ_PM_SNAPSHOT_END: {
      const tq_snapshot *s = g->current;
      printf("  snapshot %" PRId64 " closed at %s:", s->seq, fmtTime(tb, sizeof tb, s->time));
      for (int i = 0; i < s->nsets; i++) printf(" %s=%d", s->sets[i].name, s->sets[i].n);
      printf("%s\n", s->nsets ? "" : " (no records)");
      return TQ_PM_OK;
    }
    case TQ_PM_END:
      if (pr) {
        printf("printer: end: %" PRId64 " inserted, %" PRId64 " closed, %" PRId64 " deleted\n", pr->rows[0], pr->rows[1],
               pr->rows[2]);
        snprintf(p->message, sizeof p->message, "%" PRId64 " result rows", pr->rows[0]);
        free(pr);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

/* One change of a derived result: "+" insert, "]" close, "-" delete. */
static tq_pm_status printerResult(tq_pm_global *g, tq_pm_private *p, const tq_result_row *row) {
  Printer *pr = p->data;
  char a[32], b[32];
  if (row->op >= 1 && row->op <= 3) pr->rows[row->op - 1]++;
  printf("    %c %s (", "?+]-"[row->op >= 1 && row->op <= 3 ? row->op : 0], row->relation);
  for (int i = 0; i < row->nvals; i++) {
    printf("%s%s=", i ? ", " : "", row->names[i]);
    printValue(g, row->types[i], row->vals[i]);
  }
  if (row->is_event) printf(") at %s\n", fmtTime(a, sizeof a, row->from));
  else printf(") from %s to %s\n", fmtTime(a, sizeof a, row->from), fmtTime(b, sizeof b, row->to));
  return TQ_PM_OK;
}

static const tq_pm printerPm = {
    .version = TQ_PM_VERSION,
    .name = "printer",
    .description = "CONSUMER: prints result changes and snapshots (the example client's own PM)",
    .init = printerInit,
    .call = printerCall,
    .result = printerResult,
};

/* ================================================================ the client */

/* Capabilities as words. */
static void printCaps(unsigned caps) {
  static const char *const names[] = {"producer", "consumer", "timer", "filter", "extractor", "grouper", "supporter",
                                      "monitor"};
  int any = 0;
  for (int i = 0; i < 8; i++)
    if (caps & (1u << i)) printf("%s%s", any++ ? "+" : "", names[i]);
  if (!any) printf("-");
}

static int fail(tq_engine *e, const char *what) {
  fprintf(stderr, "client: %s failed:\n%s", what, tq_errors(e));
  tq_finish(e);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: client RECORDING.trace FILE.tq...\n");
    return 2;
  }
  tq_engine *e = tq_init();
  if (!e) {
    fprintf(stderr, "client: out of memory\n");
    return 1;
  }
  if (tq_register(e, "trace", argv[1])) return fail(e, "tq_register trace");
  if (tq_register_pm(e, &printerPm, NULL)) return fail(e, "tq_register_pm printer");
  if (tq_prepare(e, argc - 2, (const char *const *)(argv + 2))) return fail(e, "tq_prepare");

  /* one snapshot at a time */
  tq_info info;
  char tb[32];
  int rc, n = 0;
  while ((rc = tq_read_snapshot(e)) >= 0) {
    tq_get_info(e, &info);
    printf("read %d: %" PRId64 " snapshots, %" PRId64 " records, time %s\n", ++n, info.snapshots, info.packets,
           fmtTime(tb, sizeof tb, info.now));
    if (rc == 0) break;
  }
  if (rc < 0) return fail(e, "tq_read_snapshot");
  if (tq_end(e)) return fail(e, "tq_end");

  /* what the engine knows */
  tq_get_info(e, &info);
  printf("\n%" PRId64 " snapshots, %" PRId64 " records, %" PRId64 " tuples through the network\n", info.snapshots,
         info.packets, info.tuples);
  printf("processor modules:\n");
  for (int i = 0; i < info.npms; i++) {
    const tq_pm_info *m = &info.pms[i];
    printf("  %-8s ", m->name);
    printCaps(m->caps);
    printf(", %" PRId64 " calls%s%s%s\n", m->calls, m->disabled ? ", disabled" : "", m->message[0] ? ": " : "",
           m->message);
  }
  printf("sensors:\n");
  for (int i = 0; i < info.nsensors; i++) {
    const tq_sensor_info *s = &info.sensors[i];
    printf("  %-12s %s, %" PRId64 " recorded, %" PRId64 " delivered, at most %d enabled\n", s->name,
           s->used ? "used" : "unused", s->recorded, s->delivered, s->max_enabled);
  }
  tq_finish(e);
  return 0;
}
