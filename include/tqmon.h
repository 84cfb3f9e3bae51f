/*
** tqmon.h - the engine API of libtqmon, for client applications (after
** TDC's engine API).  The tqmon command is itself a client of it; see
** examples/client/ for a small one.
**
** An operation goes: tq_init, tq_register (processor modules), tq_prepare
** (compile the program, build the network, bind the PMs), then either
** tq_start (run to completion) or tq_read_snapshot / tq_collect_snapshot
** one snapshot at a time followed by tq_continue, then tq_end; tq_finish
** releases everything.
**
** Errors: functions returning int give 0 on success and -1 on failure, with
** the messages (file:line:col where they come from a source) available from
** tq_errors until the next call.  No function exits the process.
** Ownership: strings passed in are copied; pointers returned stay valid
** until tq_finish unless said otherwise.
*/
#ifndef TQMON_H
#define TQMON_H

#include <stdint.h>

#include "tqmon_pm.h"

/* The release of tqmon and libtqmon (tqmon --version, pkg-config). */
#define TQ_VERSION "0.1.0"

typedef struct tq_engine tq_engine;

/* Creates an engine.  Returns NULL only when out of memory. */
tq_engine *tq_init(void);

/* Sets an option before tq_prepare.  Names: "pm-path" (colon-separated
** directories PMs are loaded from; never the current directory unless
** named; tq_init takes TQMON_PM_PATH, whose entries must be absolute; a
** library another user owns or anyone may write is refused), "no-opt" ("1": run the unoptimized algebra), "trace-level"
** (0-3), "time-limit" (seconds, extraction).  Returns 0, or -1 for an
** unknown name or a bad value. */
int tq_set_option(tq_engine *e, const char *name, const char *value);

/* Loads a processor module by name with its arguments (args may be NULL):
** a built-in PM ("trace", "colfil", "clock", "text", "sqlite", "progress",
** the groupers "default" and "all"), or NAME.so from the PM path, a shared
** object exporting tqmon_pm_list.  A GROUPER loads its members too.
** Returns 0, or -1 (not found, wrong interface version, init failed). */
int tq_register(tq_engine *e, const char *name, const char *args);

/* Registers a PM that lives in the client itself.  pm must stay valid
** until tq_finish. */
int tq_register_pm(tq_engine *e, const tq_pm *pm, const char *args);

/* Compiles files[0..n) as one program, optimizes it and builds the
** network; binds producers and checks that the operation can run (one
** EXTRACTOR for an extraction, or a TIMER and a PRODUCER for every relation
** a query needs for a collection).  Returns 0 or -1. */
int tq_prepare(tq_engine *e, int nfiles, const char *const *files);

/* Starts the operation (START calls, privilege checks) and runs it to the
** end.  Returns 0, or -1 when it could not start or a PM was fatal (the
** results up to that point are kept). */
int tq_start(tq_engine *e);

/* Starts if needed, then reads (extraction) or collects (collection) one
** snapshot.  Returns 1 when there is more, 0 at the end, -1 on error. */
int tq_read_snapshot(tq_engine *e);
int tq_collect_snapshot(tq_engine *e);

/* Runs the started operation to its end.  Returns 0 or -1. */
int tq_continue(tq_engine *e);

/* Asks the running operation to finish as soon as it can, as if its
** source had ended: the snapshot being taken is completed (the built-in
** realtime clock stops waiting for its next tick and takes it at once),
** then tq_start, tq_continue, tq_read_snapshot and tq_collect_snapshot
** return as at the end; tq_end then emits and stores what the queries
** decided, and intervals still open stay open.  why (a signal number, or
** 0) is reported by tq_stats_json as "halted_by".  It only sets a flag:
** safe in a signal handler and from any thread, before or during the run
** (a request before tq_start ends the run at its first snapshot). */
void tq_halt(tq_engine *e, int why);

/* Information about the engine. */
typedef struct tq_pm_info {
  const char *name;
  unsigned caps, sync;
  int disabled;        /* disabled itself, or was disabled by an error */
  int64_t calls;       /* times it was called */
  const char *message; /* its last message */
} tq_pm_info;
typedef struct tq_sensor_info {
  const char *name;
  int used;            /* some query needs it */
  int64_t recorded;    /* records the producer made */
  int64_t delivered;   /* records that passed the enable check */
  int enabled_now;     /* entities enabled now */
  int max_enabled;     /* most entities enabled at once */
} tq_sensor_info;
typedef struct tq_info {
  int npms;
  const tq_pm_info *pms;
  int nsensors;
  const tq_sensor_info *sensors;
  int64_t snapshots;       /* snapshots so far */
  int64_t tuples;          /* tuples processed by the network */
  int64_t packets;         /* records produced */
  tq_time now;             /* current time */
} tq_info;
/* Fills info (valid until the next call on e).  Returns 0 or -1. */
int tq_get_info(tq_engine *e, tq_info *info);

/* The explain text of every query (optimized unless no-opt). */
const char *tq_explain(tq_engine *e);

/* How relation's producer collects it in this operation, as one line
** "Relation by PM: how" (the PM's describe callback, or its description),
** written into out (n bytes).  After tq_prepare.  Returns 0, or -1 when the
** program has no such relation or no PM produces it. */
int tq_describe(tq_engine *e, const char *relation, char *out, int n);

/* Statistics as JSON (per sensor: recorded, delivered, max enabled; per
** result: rows; wall time and peak memory; per PM: calls, disabled, its
** last message). */
const char *tq_stats_json(tq_engine *e);

/* ---------------------------------------------------------------- a session
** Queries that come and go while a collection runs (tqmon daemon; after
** Paradyn's Data Manager).  Set the option "session" to "1" before
** tq_prepare; the program given to tq_prepare declares the sensors (it
** may hold queries of its own).  Then, before or between snapshots:
**   tq_query_add     compiles a query file after the program's files and
**                    builds its network into the running one: its alphas
**                    enable their sensors from now (an enable count per
**                    sensor and entity, shared by every query);
**   tq_query_remove  gives its enables back (a sensor entity no other query
**                    enables is disabled) and frees its state;
**   tq_query_watch   streams its rows as JSON lines;
**   tq_phase_start   ends the current phase and starts a new one: the
**                    current-phase queries start again from nothing.
** With the option "session-db" (a file) each query's rows are stored in a
** table named after it, with a column `phase`: the phase each row was
** decided in.  Flags (TQ_QUERY_*):
**   PERSIST_DATA        its table stays in the store after it is removed
**                       (without: the table is dropped);
**   PERSIST_COLLECTION  it keeps collecting when its last watcher leaves
**                       (without: it pauses then, its enables given back,
**                       and starts again from nothing at the next watch);
**   CURRENT_PHASE       it covers the current phase (without: the whole
**                       session, global); at a new phase its open rows end
**                       at the boundary and it starts again.
** While a persistent-collection query runs, the engine keeps the records
** of the relations it reads (bounded: the option "session-history", 64M
** unless set; the oldest go first).  A query added later is first run
** over them, from the earliest point where they hold all it reads (within
** the current phase for a current-phase query), then goes on live: its
** answer covers from there (tq_query_info.covers_from), not from its
** addition; where they do not hold it, from its addition, and covers_note
** says why (docs/design.md, "a session"). */
#define TQ_QUERY_PERSIST_DATA 1u
#define TQ_QUERY_PERSIST_COLLECTION 2u
#define TQ_QUERY_CURRENT_PHASE 4u

/* Adds query `name` (letters, digits, _; at most 63; not in use) from the
** file named `file`, whose text is `text` (NULL: read the file).  A file
** that does not compile is refused with the compiler's messages
** (file:line:col) in tq_errors; so is one that declares a relation or a
** clock, which belong to the program.  Returns 0 or -1. */
int tq_query_add(tq_engine *e, const char *name, const char *file, const char *text, unsigned flags);
/* Removes query name.  Returns 0, or -1 for an unknown name. */
int tq_query_remove(tq_engine *e, const char *name);
typedef struct tq_query_info {
  const char *name;
  const char *file;
  unsigned flags;       /* TQ_QUERY_* */
  const char *phase;    /* the phase its state began in */
  tq_time added;        /* when it was added (its network's start) */
  int64_t rows;         /* rows inserted since it was added */
  int watchers;
  int paused;           /* no watcher left and no persistent collection */
  int results;          /* the retrieve statements of its file */
  tq_time covers_from;  /* its answer covers time from here: its addition, or earlier
                        ** where kept records of persistent collection held what it reads */
  const char *covers_note; /* why it does not cover earlier ("" when it does) */
} tq_query_info;
/* The session's queries in the order added; *out valid until the next
** call on e.  Returns their count. */
int tq_query_list(tq_engine *e, const tq_query_info **out);
/* Calls fn(ctx, line) with each row change of query name as one JSON line
** (no newline): {"query":..., "result":..., "op":"insert"|"close"|"delete",
** "row":N, "phase":..., the attributes, then "at" or "from" and "to" (ns;
** null while open)}; fn(ctx, NULL) when the query is removed or the
** operation ends.  A paused query starts again.  Returns the watch's id
** (> 0), or -1 for an unknown name. */
typedef void (*tq_watch_fn)(void *ctx, const char *line);
int tq_query_watch(tq_engine *e, const char *name, tq_watch_fn fn, void *ctx);
/* Ends watch id (fn is not called again).  Returns 0, or -1 if unknown. */
int tq_query_unwatch(tq_engine *e, int id);
/* A folding histogram of query name (after Paradyn's): each row its first
** result inserts adds the value of its attribute attr (int or float) at
** the row's time (an event's, an interval's begin) to one of `buckets`
** time buckets (even, 2 to 1000000).  The buckets begin at the first such
** row, each 4 periods of the query's clock wide (4 base ticks without a
** clock); when a time passes the last bucket, adjacent buckets merge
** (counts and sums add) and the width doubles, so the memory stays fixed
** for a session of any length.  At each fold the query's clocks slow down
** to tick 4 times a bucket: what it samples is sampled less often as the
** session goes on.  Returns 0, or -1 (unknown query or attribute, bad
** count, a histogram already). */
int tq_query_histogram(tq_engine *e, const char *name, const char *attr, int buckets);
typedef struct tq_histogram {
  int buckets;
  tq_time start, width;  /* bucket i covers [start + i*width, start + (i+1)*width) */
  int folds;             /* times the width doubled */
  const int64_t *count;  /* per bucket: rows counted (NULL before the first row) */
  const double *sum;     /* per bucket: the sum of their values */
  int64_t added;         /* rows counted */
  int64_t bytes;         /* memory the histogram holds now, as the allocator says (fixed at creation) */
  tq_time sample_period; /* the query's clock period now */
} tq_histogram;
/* The histogram of query name (pointers valid until the next snapshot or
** session call).  Returns 0, or -1 when it has none. */
int tq_query_histogram_get(tq_engine *e, const char *name, tq_histogram *out);

/* The session as one JSON object: "phase", "queries" (as in the stats,
** with each histogram's "count" and "sum" per bucket), "enabled" (per
** sensor, the entities enabled now) and "enabled_entities".  Valid until
** the next call on e. */
const char *tq_session_json(tq_engine *e);

/* Starts phase `name` (letters, digits, _ . -; at most 63; not used
** before) at the current time.  Returns 0 or -1. */
int tq_phase_start(tq_engine *e, const char *name);

/* Messages of the last failing call ("" when none). */
const char *tq_errors(tq_engine *e);

/* Ends the operation (END calls in reverse dependency order, consumers
** flushed).  Returns 0 or -1. */
int tq_end(tq_engine *e);

/* Releases the engine (ends the operation if needed, unloads PMs). */
void tq_finish(tq_engine *e);

#endif
