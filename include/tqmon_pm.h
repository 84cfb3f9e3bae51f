/*
** tqmon_pm.h - the processor module (PM) interface of tqmon, after the HP OpenVMS
** Performance Data Collector (TDC V2).  Every source and sink of data is a
** PM: producers of primitive relations (sensors), the timer, extractors
** that read recordings back, consumers (SQLite, text, collection files),
** filters, groupers, supporters and monitors.  Built-in PMs use this same
** interface; third-party PMs are shared objects loaded at run time.
**
** This header is self-contained (C11, <stdint.h> only) and versioned: a PM
** sets version = TQ_PM_VERSION; the engine loads PMs of its version and of
** the older ones down to TQ_PM_VERSION_MIN (the interface only grows at
** the end of its structures), and refuses any other.  A PM that uses
** something newer than version 1 checks g->version.  Version 2 added
** g->set_range, version 3 g->announce_whole, version 4 g->set_start,
** g->counts and TQ_PM_SYNC_DISPLAYS, version 5 g->needed,
** g->attribute_type, g->relation_mode and tq_pm.describe, version 6
** g->relation_name and g->set_detail, version 7 g->program_wanted, version
** 8 g->needed_records and g->sample_period, version 9 g->lost, version 10
** g->sensor_filter and g->suppressed, version 11 tq_pm.lost (a CONSUMER
** told each loss: a recording keeps them), version 12 TQ_PM_LOST_UNKNOWN
** (a loss whose count is not known).  sensors/README.md describes the
** interface with a worked example; docs/design.md says where PMs sit.
**
** Life of a PM in an operation (collection or extraction):
**   init        once after loading: the PM declares its capabilities,
**               synchronisation points, dependencies, privileges, and (for a
**               PRODUCER) the one relation it produces.  Nothing else.
**   START       every PM, before the operation (dependencies first).
**   PREBASELINE TIMER/MONITOR PMs that asked for it, before the first snapshot.
**   SNAPSHOT    at each snapshot, PMs that asked for it (PRODUCERs produce).
**   SNAPSHOT_END after all snapshot PMs (CONSUMERs; derived PRODUCERs).
**   COLLECTION_END after all collection activity.
**   END         every PM, after the operation (dependents first).
** A PRODUCER no query needs is never called past START/END.
**
** Status: every call returns a tq_pm_status.  TQ_PM_ERROR disables that PM
** for the rest of the operation (PMs that depend on it are told with
** DEP_DISABLED) and the operation goes on; TQ_PM_FATAL stops the operation
** cleanly (results so far are kept).  A PM never calls exit() or abort().
** A PM never prints: it reports through the log callback.
*/
#ifndef TQMON_PM_H
#define TQMON_PM_H

#include <stdint.h>

#define TQ_PM_VERSION 12
#define TQ_PM_VERSION_MIN 1

typedef int64_t tq_time; /* nanoseconds */

/* Capabilities (any combination). */
enum {
  TQ_PM_PRODUCER = 1 << 0,  /* provides the records of exactly one primitive relation */
  TQ_PM_CONSUMER = 1 << 1,  /* uses records and/or derived result rows */
  TQ_PM_TIMER = 1 << 2,     /* times the snapshots of a collection */
  TQ_PM_FILTER = 1 << 3,    /* may drop records of the PMs it depends on */
  TQ_PM_EXTRACTOR = 1 << 4, /* reads a recording back (extraction) */
  TQ_PM_GROUPER = 1 << 5,   /* only loads a set of other PMs */
  TQ_PM_SUPPORTER = 1 << 6, /* services for other PMs; not called at snapshots */
  TQ_PM_MONITOR = 1 << 7    /* watches the state of the operation */
};

/* Synchronisation points a PM asks to be called at (any combination). */
enum {
  TQ_PM_SYNC_PREBASELINE = 1 << 0,
  TQ_PM_SYNC_SNAPSHOT = 1 << 1,
  TQ_PM_SYNC_SNAPSHOT_END = 1 << 2,
  TQ_PM_SYNC_COLLECTION_END = 1 << 3,
  /* CONSUMER: every record produced goes to record(), not only the ones
  ** delivered to the queries (recording everything, converting files) */
  TQ_PM_SYNC_ALL_RECORDS = 1 << 4,
  /* (version 4) CONSUMER that draws the program's display statements: the
  ** relations they show get queries of their own, whose rows come to
  ** result() (displaying a relation is what enables its sensors) */
  TQ_PM_SYNC_DISPLAYS = 1 << 5
};

/* What a call asks for ("do what"). */
enum {
  TQ_PM_START = 1,
  TQ_PM_PREBASELINE,
  TQ_PM_SNAPSHOT,
  TQ_PM_SNAPSHOT_END,
  TQ_PM_COLLECTION_END,
  TQ_PM_END,
  TQ_PM_DEP_DISABLED /* a PM this one depends on has disabled itself */
};

typedef enum tq_pm_status {
  TQ_PM_OK = 0,
  TQ_PM_WARNING = 1, /* logged, goes on */
  TQ_PM_ERROR = 2,   /* this PM is disabled, the operation goes on */
  TQ_PM_FATAL = 3,   /* the operation stops, cleanly */
  TQ_PM_DONE = 4     /* EXTRACTOR/TIMER: no more snapshots */
} tq_pm_status;

/* Operations. */
enum { TQ_OP_COLLECT = 1, TQ_OP_EXTRACT = 2 };

/* Log levels (the global context's trace level filters them). */
enum { TQ_LOG_ERROR = 0, TQ_LOG_WARNING = 1, TQ_LOG_INFO = 2, TQ_LOG_DEBUG = 3 };

/* Record kinds. */
enum {
  TQ_REC_EVENT = 1, /* an event at t */
  TQ_REC_BEGIN,     /* an interval begins at from (open) */
  TQ_REC_END,       /* an interval [from, to) ends */
  TQ_REC_SAMPLE,    /* a sample taken at t (a tuple valid at t) */
  TQ_REC_DELTA,     /* a delta record at t (difference from the previous snapshot) */
  TQ_REC_WHOLE      /* an interval [from, to) reported only at its end (an extractor announces it) */
};

/* One record: values are 64-bit slots in the relation's attribute order
** (int: the value; float: its bits; enum: the index; entity and string:
** a symbol from the engine, see tq_pm_global.symbol). */
typedef struct tq_record {
  int rel;              /* relation id */
  int kind;             /* TQ_REC_* */
  tq_time t;            /* when it happened / was taken */
  tq_time from, to;     /* interval bounds (BEGIN: to unused; END: both) */
  uint64_t id;          /* interval identity (BEGIN/END) */
  int nvals;
  const int64_t *vals;
} tq_record;

/* The records of one relation in one snapshot. */
typedef struct tq_record_set {
  int rel;              /* relation id */
  const char *name;     /* relation name */
  int n;                /* records */
  const tq_record *rec;
} tq_record_set;

/* A snapshot: the record sets of every producer between two timer ticks. */
typedef struct tq_snapshot {
  int64_t seq;          /* 1, 2, ... */
  tq_time time;         /* the tick that closed it */
  int nsets;
  const tq_record_set *sets;
} tq_snapshot;

/* One change of a derived result, for CONSUMERs of results. */
typedef struct tq_result_row {
  const char *relation; /* result name */
  int op;               /* 1 insert, 2 close (to known), 3 delete */
  uint64_t rowid;       /* stable id within the result */
  int is_event;
  tq_time from, to;     /* to = TQ_PM_OPEN while open; at = from for events */
  int nvals;
  const int64_t *vals;
  const char *const *names; /* attribute names */
  const int *types;     /* attribute type codes (TQ_TY_*) */
} tq_result_row;
#define TQ_PM_OPEN INT64_MAX
enum { TQ_TY_INT = 1, TQ_TY_FLOAT, TQ_TY_STRING, TQ_TY_ENUM, TQ_TY_ENTITY };
/* How a relation is collected (g->relation_mode). */
enum { TQ_MODE_ENTITY = 1, TQ_MODE_TRACED, TQ_MODE_SAMPLED, TQ_MODE_DISABLE, TQ_MODE_DELTA };

typedef struct tq_pm_global tq_pm_global;
struct tq_pm_cond; /* (version 10) below */
typedef struct tq_pm_private tq_pm_private;

/* Engine-owned context passed to every call. */
struct tq_pm_global {
  int version;                  /* TQ_PM_VERSION */
  int operation;                /* TQ_OP_COLLECT or TQ_OP_EXTRACT */
  tq_time tick;                 /* timer: time between snapshots (base Clock tick) */
  tq_time now;                  /* current time */
  const tq_snapshot *current;   /* the snapshot being formed / just closed */
  const tq_snapshot *previous;  /* the one before it */
  int trace_level;              /* TQ_LOG_* up to which messages are shown */
  void *engine;                 /* opaque */

  /* Messages: never print, log. */
  void (*log)(tq_pm_global *g, tq_pm_private *p, int level, const char *fmt, ...)
      __attribute__((format(printf, 4, 5)));
  /* Catalog: relation id by name (-1 if none), attribute index (-1). */
  int (*relation)(tq_pm_global *g, const char *name);
  int (*attribute)(tq_pm_global *g, int rel, const char *name);
  int (*nattributes)(tq_pm_global *g, int rel);
  int (*is_event)(tq_pm_global *g, int rel);
  /* Values: a symbol for a name or string, and back; an enum index. */
  int64_t (*symbol)(tq_pm_global *g, const char *text, int len);
  const char *(*symbol_name)(tq_pm_global *g, int64_t sym);
  int64_t (*enum_value)(tq_pm_global *g, int rel, int attr, const char *name);
  /* Sensor state: is relation rel's sensor enabled on this entity now? */
  int (*enabled)(tq_pm_global *g, int rel, int64_t entity);
  /* PRODUCERs and EXTRACTORs deliver records (the engine applies enabling
  ** and counts them).  Times never decrease across calls.  Returns 0, or
  ** -1 for a record refused (with a message): the wrong number of values
  ** or a kind its relation does not have, a time before the engine's, a
  ** WHOLE too late (see announce_whole), or the operation halted. */
  int (*produce)(tq_pm_global *g, const tq_record *r);
  /* Answer to a sample request (see tq_pm.sample). */
  int (*sample_answer)(tq_pm_global *g, void *cookie, const int64_t *vals);
  /* EXTRACTORs/TIMERs move time to t (all records before t delivered). */
  int (*advance)(tq_pm_global *g, tq_time t);
  /* Ask the operation to halt early (as soon as convenient). */
  void (*halt)(tq_pm_global *g);
  /* (version 2) EXTRACTORs, at START, when the recording says: the times of its first
  ** and last records, and how many records it holds (-1: not known).  The
  ** Clock then ticks from the first record, and `now` is the last record's
  ** time from the start, as with the built-in recordings.  Returns 0, or -1
  ** (and ignores it) after the first record, with first > last, or with a
  ** time not strictly between beginning and forever. */
  int (*set_range)(tq_pm_global *g, tq_time first, tq_time last, int64_t records);
  /* (version 3) EXTRACTORs, at START: the recording holds a TQ_REC_WHOLE
  ** of relation rel beginning at from (an interval reported only at its
  ** end).  Queries cannot move past a time before that interval comes, so
  ** an extractor that reads ahead announces each one; call it once per
  ** record (the same begin twice for two records).  produce refuses (-1,
  ** with a message) a WHOLE that was not announced unless the engine can
  ** tell that the queries did not go past its begin: an interval of its
  ** relation that began at or before it while disabled is still open (or
  ** an announced one has not come yet), or the record cannot reach a
  ** query (its sensor is disabled on its entity).  A relation no query
  ** traces needs no announce (0, and nothing is held).  Returns 0, or -1
  ** (and ignores
  ** it) outside an extraction, after the first record, for a relation the
  ** program lacks, or with from not strictly between beginning and
  ** forever. */
  int (*announce_whole)(tq_pm_global *g, int rel, tq_time from);
  /* (version 4) TIMERs of a collection, at START: its first time is t
  ** (the built-in realtime clock gives CLOCK_REALTIME ns, the pcp PM an
  ** archive's first sample; Clock ticks and `now` start there).  An
  ** EXTRACTOR whose recording's range is known only at its end (a stream:
  ** no set_range) gives its first time so, at its START (the built-in
  ** replay: the first time it read); else the Clock would tick from 0.
  ** Returns 0, or -1 (and ignores it) outside the START calls, from
  ** another PM of an extraction, after set_range, or with t not strictly
  ** between beginning and forever. */
  int (*set_start)(tq_pm_global *g, tq_time t);
  /* (version 4) How far the operation is (MONITORs): the records produced
  ** and the snapshots closed so far (either pointer may be NULL). */
  void (*counts)(tq_pm_global *g, int64_t *records, int64_t *snapshots);
  /* (version 5) Does the operation need relation rel's records: a query
  ** uses it (or its delta relation), or it is the entity relation a used
  ** sensor lives in (the PRODUCERs the engine calls at SNAPSHOT).  A PM
  ** that sets something costly up at START (a kernel tracepoint, a
  ** thread) asks, so that a relation no query needs costs nothing.
  ** Returns 1 or 0; 0 before tq_prepare and for an unknown rel. */
  int (*needed)(tq_pm_global *g, int rel);
  /* (version 5) The type of attribute attr of relation rel: TQ_TY_*, or 0
  ** when there is no such attribute.  For TQ_TY_ENTITY, *entity (when
  ** entity is not NULL) is set to the entity type's name. */
  int (*attribute_type)(tq_pm_global *g, int rel, int attr, const char **entity);
  /* (version 5) How relation rel is collected: TQ_MODE_ENTITY (an entity
  ** relation), TQ_MODE_TRACED, TQ_MODE_SAMPLED, TQ_MODE_DISABLE (disable
  ** traced) or TQ_MODE_DELTA (a delta relation, made by the engine); 0 for
  ** an unknown rel. */
  int (*relation_mode)(tq_pm_global *g, int rel);
  /* (version 6) The name of relation rel, NULL if there is none (ids run
  ** from 1 up to the first NULL): a PRODUCER of "*" whose relations come
  ** from its own configuration names the ones it cannot map. */
  const char *(*relation_name)(tq_pm_global *g, int rel);
  /* (version 6) Any PM: its figures as one JSON value (an object, say),
  ** shown as its "detail" in tq_stats_json (--stats).  The text is copied;
  ** NULL clears it.  Returns 0, or -1 (and keeps the old one) when json is
  ** not one JSON value. */
  int (*set_detail)(tq_pm_global *g, tq_pm_private *p, const char *json);
  /* (version 7) The program list (`monitor programs "db*"` in the program,
  ** --programs): may process pid, whose command name is `command`, become
  ** an entity of a live source (or be sampled)?  1 when no list is given
  ** or one of its patterns (shell wildcards) matches the name, and each
  ** pattern that matches counts pid; else 0.  command NULL asks only
  ** whether a list is given (0 when one is).  A pattern that matched no
  ** process by the end of a collection is reported.  (The built-in PMs
  ** find a pid's names with snsProcessWanted, sensors/programs.c.) */
  int (*program_wanted)(tq_pm_global *g, int64_t pid, const char *command);
  /* (version 8) EXTRACTORs, from START on: which records of relation rel
  ** the queries need, so that a recording is read no more than that.  With
  ** entity TQ_PM_NEED_ANY: TQ_PM_NEED_NONE (no query can see a record of
  ** it), TQ_PM_NEED_ALL, or TQ_PM_NEED_SOME (those of some entities); with
  ** an entity (the value of rel's flag attribute, of its entity attribute
  ** for an entity relation): 1 if its records are needed, 0 if not.
  ** Records not needed are never delivered whatever the enabling (no alpha
  ** can enable their sensor on that entity: every alpha takes constants)
  ** and keep alive no entity a used sensor lives in: leaving them out
  ** changes no answer.  Everything is needed while a CONSUMER takes
  ** records or a FILTER is loaded. */
  int (*needed_records)(tq_pm_global *g, int rel, int64_t entity);
  /* (version 8) EXTRACTORs: P > 0 when the queries use sampled relation rel
  ** only through samples at multiples of P (Clock[n] ticks, a delta's base
  ** ticks): an interval [from, to) that holds no multiple of P is seen by
  ** no sample and need not be produced (neither its begin nor its end).
  ** 0: not known so. */
  tq_time (*sample_period)(tq_pm_global *g, int rel);
  /* (version 9) PRODUCERs: count records were lost (a full buffer, a
  ** malformed packet, a table full), of relation rel (0: not known which),
  ** between from and to, on the flag entity `entity` (a symbol;
  ** TQ_PM_ENTITY_UNKNOWN: not known, or several); spans: begins or ends of
  ** intervals were among them (an interval may be missing, or end late).
  ** Report each loss once, as soon as it is known.  The engine counts them
  ** (--stats: "lost" per relation, "packets_lost", and in
  ** "packets_total"), marks every answer that reads rel as possibly
  ** incomplete over that period (docs/losses.md), and says so.  count
  ** TQ_PM_LOST_UNKNOWN (version 12): records were lost, how many is not
  ** known (a program that ran before its monitor was ready); the answers
  ** are marked the same, the counts say "not known".  Returns 0, or -1
  ** (ignored) for an unknown rel, another count <= 0, to < from, or a
  ** count that would take the operation's losses past TQ_PM_LOST_MAX (no
  ** run loses so many: a damaged recording's). */
  int (*lost)(tq_pm_global *g, int rel, int64_t entity, tq_time from, tq_time to, int64_t count, int spans);
  /* (version 10) PRODUCERs, from START on: the condition a record of
  ** relation rel must satisfy to be of any use (the queries select on its
  ** attributes: the optimizer's rule SF), as n conditions in disjunctive
  ** normal form: a record is wanted when, for some group, every condition
  ** of that group holds (tq_pm_conds_hold).  A producer that checks them
  ** before it writes a record (a sensor in the subject, a BPF program) need
  ** not write the others, and says how many it did not (g->suppressed).
  ** The engine checks them again on what it is given.  Returns n (at most
  ** TQ_PM_MAX_CONDS) with *conds valid for the operation, or 0: every
  ** record is wanted (no query selects, one alpha of rel has no condition,
  ** a CONSUMER takes records or a FILTER is loaded). */
  int (*sensor_filter)(tq_pm_global *g, int rel, const struct tq_pm_cond **conds);
  /* (version 10) PRODUCERs: n more records of rel were not written because
  ** they failed sensor_filter (shown per sensor as "suppressed" in --stats). */
  void (*suppressed)(tq_pm_global *g, int rel, int64_t n);
};
#define TQ_PM_ENTITY_UNKNOWN INT64_MIN
#define TQ_PM_LOST_MAX ((int64_t)1 << 62) /* (g->lost) records an operation may lose in all */
#define TQ_PM_LOST_UNKNOWN ((int64_t)-1) /* (g->lost, tq_pm.lost; version 12) some records, how many not known */

/* (version 10) One condition of g->sensor_filter: attribute attr compared
** with a constant. */
enum { TQ_PM_EQ = 1, TQ_PM_NE, TQ_PM_LT, TQ_PM_LE, TQ_PM_GT, TQ_PM_GE };
#define TQ_PM_MAX_CONDS 16
typedef struct tq_pm_cond {
  int group;        /* the conjunction it belongs to: 0, 1, ... (sorted) */
  int attr;         /* attribute index */
  int op;           /* TQ_PM_EQ ... TQ_PM_GE */
  int type;         /* TQ_TY_* of the attribute */
  int fcmp;         /* compare as doubles (a float attribute or constant) */
  int64_t val;      /* the constant: an int, an enum index, the symbol of an
                    ** entity or string (TQ_PM_EQ and TQ_PM_NE only) */
  double fval;      /* the constant as a double (fcmp) */
  const char *text; /* entity or string: the constant's name */
} tq_pm_cond;

/* Does value v (a record's slot of c->attr) satisfy c? */
static inline int tq_pm_cond_holds(const tq_pm_cond *c, int64_t v) {
  int r;
  if (c->fcmp) {
    double a;
    if (c->type == TQ_TY_FLOAT) __builtin_memcpy(&a, &v, sizeof a);
    else a = (double)v;
    r = a < c->fval ? -1 : a > c->fval ? 1 : 0;
  } else {
    r = v < c->val ? -1 : v > c->val ? 1 : 0;
  }
  switch (c->op) {
    case TQ_PM_EQ: return r == 0;
    case TQ_PM_NE: return r != 0;
    case TQ_PM_LT: return r < 0;
    case TQ_PM_LE: return r <= 0;
    case TQ_PM_GT: return r > 0;
    default: return r >= 0;
  }
}

/* Do the values vals of a record satisfy the n conditions (n = 0: yes)? */
static inline int tq_pm_conds_hold(int n, const tq_pm_cond *c, const int64_t *vals) {
  if (n <= 0) return 1;
  for (int i = 0; i < n;) {
    int g = c[i].group, ok = 1;
    for (; i < n && c[i].group == g; i++)
      if (ok && !tq_pm_cond_holds(&c[i], vals[c[i].attr])) ok = 0;
    if (ok) return 1;
  }
  return 0;
}
#define TQ_PM_NEED_ANY INT64_MIN
enum { TQ_PM_NEED_NONE = 0, TQ_PM_NEED_ALL = 1, TQ_PM_NEED_SOME = 2 };

/* Per-PM context: what the PM declares at init, and the engine's view of it. */
struct tq_pm_private {
  /* declared by the PM in init() */
  unsigned caps;                /* TQ_PM_* capabilities */
  unsigned sync;                /* TQ_PM_SYNC_* points */
  const char *produces;         /* PRODUCER: the relation's name; "*": a live source
                                ** producing every primitive relation no other PM
                                ** produces (rel is set to the relation concerned
                                ** before each enable, sample or delta call) */
  const char *depends[8];       /* names of PMs this one depends on (call order) */
  int ndepends;
  const char *privileges[8];    /* needed privileges: "root", "cap:NAME", "read:PATH", "write:PATH" */
  int nprivileges;
  const char *members[32];      /* GROUPER: the PMs it loads (a member PRODUCER of a relation
                                ** the program does not declare is left out: never called) */
  int nmembers;
  /* set by the engine */
  int rel;                      /* PRODUCER: the relation id (-1 until bound) */
  const char *args;             /* options given with the PM (e.g. a file name) */
  int disabled;                 /* the engine stopped calling it */
  /* for the PM */
  void *data;                   /* its own state */
  void *shared;                 /* to share with other PMs */
  int status;                   /* last status */
  char message[256];            /* last message */
};

/* A processor module. */
typedef struct tq_pm {
  int version;                  /* TQ_PM_VERSION */
  const char *name;             /* unique name */
  const char *description;      /* one line */
  /* After loading: fill in p's declarations.  Required. */
  tq_pm_status (*init)(tq_pm_global *g, tq_pm_private *p);
  /* START, synchronisation points, END, DEP_DISABLED.  rs is the PM's own
  ** record set of the snapshot (SNAPSHOT/SNAPSHOT_END) or NULL. */
  tq_pm_status (*call)(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs);
  /* PRODUCER: the flag of entity changed: on is its enable count now (0:
  ** disabled).  Called when the flag goes on or off, and for a disable-traced
  ** relation whenever the count changes (the sensor counts down as it fires). */
  tq_pm_status (*enable)(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on);
  /* PRODUCER of a sampled relation: the tuples whose attribute attr is the
  ** entity who, valid at t, each through g->sample_answer(g, cookie, vals). */
  tq_pm_status (*sample)(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie);
  /* PRODUCER of a sampled relation with a delta relation: the delta record
  ** from a sample of the current base tick and the matching one of the
  ** previous tick (same flag entity; each record's t is its tick); out has
  ** nvals slots and starts as the plain difference.  NULL: numeric
  ** attributes are subtracted, others copied. */
  tq_pm_status (*delta)(tq_pm_global *g, tq_pm_private *p, const tq_record *cur, const tq_record *prev, int64_t *out);
  /* EXTRACTOR: deliver the records up to the next snapshot (g->produce,
  ** g->advance); TQ_PM_DONE at the end of the recording. */
  tq_pm_status (*extract)(tq_pm_global *g, tq_pm_private *p);
  /* TIMER: the time of the next snapshot after now (a live timer waits
  ** until then); TQ_PM_DONE when the collection should end. */
  tq_pm_status (*timer)(tq_pm_global *g, tq_pm_private *p, tq_time *next);
  /* CONSUMER: a record delivered to the queries (what the run collected). */
  tq_pm_status (*record)(tq_pm_global *g, tq_pm_private *p, const tq_record *r);
  /* CONSUMER: a change of a derived result. */
  tq_pm_status (*result)(tq_pm_global *g, tq_pm_private *p, const tq_result_row *row);
  /* FILTER: keep (1) or drop (0) a record of a PM it depends on. */
  int (*filter)(tq_pm_global *g, tq_pm_private *p, const tq_record *r);
  /* (version 5) PRODUCER: one line saying how it collects relation rel in
  ** this operation (the files it reads, the kernel tracepoints it attaches),
  ** written NUL-terminated into out (n bytes); tqmon explain shows it under
  ** each query that uses rel.  Called after tq_prepare, with or without
  ** START.  NULL: the PM's description is shown. */
  tq_pm_status (*describe)(tq_pm_global *g, tq_pm_private *p, int rel, char *out, int n);
  /* (version 11) CONSUMER: a loss a producer (or, replaying, an
  ** extractor) told the engine through g->lost and the engine counted,
  ** with the same arguments, once, in the order told (a recorder writes it
  ** into the recording, so that a replay tells it again: docs/losses.md).
  ** count may be TQ_PM_LOST_UNKNOWN for a PM of version 12 or later (one
  ** of an older version is not told those losses).  Called from START to
  ** END, whatever TQ_PM_SYNC_ALL_RECORDS.  NULL: not told. */
  tq_pm_status (*lost)(tq_pm_global *g, tq_pm_private *p, int rel, int64_t entity, tq_time from, tq_time to,
                       int64_t count, int spans);
} tq_pm;

/* A shared object of PMs exports this function: it returns its PMs and
** their number.  The engine checks every PM's version. */
typedef const tq_pm *const *(*tq_pm_list_fn)(int *n);
#define TQ_PM_LIST_SYMBOL "tqmon_pm_list"

#endif
