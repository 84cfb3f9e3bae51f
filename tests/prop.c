/*
** prop.c - property tests on random (query, recording) pairs.
**
**   prop [-n pairs] [-s seed] [-o dir] [-t seconds] [-w 1]
**
** -t: a time budget: no pair starts after it is spent (the pairs checked
** are counted in the summary; make test runs the release build for up to
** thousands of pairs this way, tests/run.sh).
** For each seeded pair: a random program (a fixed sensor configuration with
** every collection mode, plus random queries covering the temporal
** operators, the default clauses, explicit when and valid clauses, derived
** relations (with valid clauses of their own, joined under when clauses,
** aggregated), the optimizer's O3 form, Clock[n], sampling and every
** aggregate and window) and a random
** recording (entities appearing and vanishing, keyed state changes, events
** and intervals with equal and adjacent boundaries on purpose).  Checks:
**   1. the engine's answer equals the SQL oracle's (cpQuerySql over the
**      recording loaded into SQLite; no engine operator involved);
**   2. the unoptimized network gives the same answer as the optimized one;
**   3. snapshot reducibility: for queries with default when and valid, the
**      result sliced at sampled instants equals the non-temporal query over
**      each instant's snapshot.
** A failing pair is written to dir as a ready-made golden case
** (NAME.tq, NAME.trace, NAME.csv with the oracle's answer) and printed;
** so is a pair that crashes (an internal check of the test build aborts).
** Prints "ok N" / "not ok N" lines and a summary; exit status 1 on failure.
** -w 1: only writes each pair into dir as pair-SEED.tq and pair-SEED.trace,
** for the tests that replay them through tqmon in other ways
** (tests/scripts/prop_replays.sh: collection files, full and selective).
**
** Why one file of over 1,000 lines: the generators of the configuration,
** the queries and the recording and the checks share the random streams
** (the seeds known before must keep their pairs) and the pair's state; it
** is one test program, not a library.
*/
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "display.h"
#include "runtime.h"
#include "engine.h"
#include "sensors.h"
#include "../app/app.h"

/* ================================================================ random */
static uint64_t rs;
static uint64_t rnd(void) {
  rs ^= rs >> 12;
  rs ^= rs << 25;
  rs ^= rs >> 27;
  return rs * 2685821657736338717ULL;
}
static int ri(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

/* The additions to the generator draw from a stream of their own, so the
** pairs of the seeds known before stay as they were (extended only). */
static uint64_t rsX;
static uint64_t xSave;
static void xBegin(void) {
  xSave = rs;
  rs = rsX;
}
static void xEnd(void) {
  rsX = rs;
  rs = xSave;
}
static int chance(int pct) { return ri(0, 99) < pct; }
#define PICK(arr) (arr)[ri(0, (int)TQ_ARRAY_SIZE(arr) - 1)]

/* ================================================================ the program */

/* The sensor configuration: one declaration each, without its ';'.  Each
** gets a random enable counter width (`counter 1..3`) or none (a 1-bit
** flag) per pair: the engine keeps the exact count whatever the width
** (docs/enabling.md, counter widths), so the answers must not change. */
static const char *const SENSORS[] = {
    "entity E (S: enum(A, B, C))",
    "entity M",
    "event Ev (X: E initiator, Y: M target, N: int) traced on initiator",
    "event Dv (X: E initiator, Y: M target, N: int) disable traced on target",
    "interval Iv (X: E performer, Y: M target, N: int) traced on target",
    "interval Jv (X: E initiator, N: int, F: float) disable traced on initiator",
    "interval Pv (X: E performer, N: int) traced on performer",
    "interval Sv (X: E target, Y: M performer, N: int) sampled on performer",
    "interval Tv (X: E target, Y: M performer) sampled on target",
    /* two sensors each (SENSOR): the sampled one is by far the cheaper */
    "interval Rv (X: E target, Y: M performer, N: int) traced on performer cost 1h rate 1000000\n"
    "  sampled on performer cost 1ns",
    "interval Qv (X: E target, Y: M performer) traced on target cost 1h rate 1000000 sampled on performer cost 1ns",
    /* two traced sensors (SENSOR): the second, on the other role, is the cheaper */
    "interval Wv (X: E target, Y: M performer, N: int) traced on performer cost 1us rate 5 traced on target cost 1ns rate 5",
    /* one tuple per flag entity at most (O3-ONCE) */
    "interval Ov (X: E target, N: int) disable traced on target once",
    "event Ow (X: E target, N: int) disable traced on target once",
};

/* The configuration of one pair into b, drawn from a stream of its own
** (seeded by the pair's seed): the queries and recordings of the seeds
** known before stay as they were. */
static int pairCounters; /* declarations of this pair with a counter width */
static int counterPairs; /* pairs with at least one */
static void genSensors(TqBuf *b, int seed) {
  uint64_t save = rs;
  rs = (uint64_t)seed * 0x94d049bb133111ebULL + 0x2545f4914f6cdd1dULL;
  for (int i = 0; i < 4; i++) rnd();
  pairCounters = 0;
  for (size_t i = 0; i < TQ_ARRAY_SIZE(SENSORS); i++) {
    tqBufPuts(b, SENSORS[i]);
    if (strncmp(SENSORS[i], "entity", 6) && chance(50)) {
      tqBufPrintf(b, " counter %d", ri(1, 3));
      pairCounters++;
    }
    tqBufPuts(b, ";\n");
  }
  rs = save;
}

typedef struct RelDesc {
  const char *name;
  int hasY, hasN, hasF, isEntityE;
} RelDesc;
static const RelDesc rels[] = {
    {"Ev", 1, 1, 0, 0}, {"Dv", 1, 1, 0, 0}, {"Iv", 1, 1, 0, 0}, {"Jv", 0, 1, 1, 0},
    {"Pv", 0, 1, 0, 0}, {"Sv", 1, 1, 0, 0}, {"Tv", 1, 0, 0, 0}, {"E", 0, 0, 0, 1},
};

static const RelDesc *pickRel(void) { return &rels[ri(0, (int)TQ_ARRAY_SIZE(rels) - 1)]; }

/* A random condition on the attributes of variable v of relation r. */
static void cond1(TqBuf *b, const char *v, const RelDesc *r) {
  for (;;) {
    switch (ri(0, 5)) {
      case 0:
        if (r->isEntityE) {
          tqBufPrintf(b, "%s.E %s E%d", v, PICK(((const char *[]){"=", "!=", "<", ">="})), ri(1, 4));
          return;
        }
        tqBufPrintf(b, "%s.X %s E%d", v, PICK(((const char *[]){"=", "!=", "<", ">="})), ri(1, 4));
        return;
      case 1:
        if (!r->hasN) break;
        tqBufPrintf(b, "%s.N %s %d", v, PICK(((const char *[]){"=", "!=", "<", "<=", ">", ">="})), ri(0, 4));
        return;
      case 2:
        if (!r->hasY) break;
        tqBufPrintf(b, "%s.Y %s M%d", v, PICK(((const char *[]){"=", "!="})), ri(1, 3));
        return;
      case 3:
        if (!r->isEntityE) break;
        tqBufPrintf(b, "%s.S %s %s", v, PICK(((const char *[]){"=", "!=", "<", ">"})), PICK(((const char *[]){"A", "B", "C"})));
        return;
      case 4:
        if (!r->hasN) break;
        tqBufPrintf(b, "%s.N * 2 + 1 > %d", v, ri(2, 8));
        return;
      case 5:
        if (!r->hasF) break;
        tqBufPrintf(b, "%s.F %s %s", v, PICK(((const char *[]){"<", ">="})), PICK(((const char *[]){"1.25", "0.5", "2"})));
        return;
    }
  }
}

static void cond(TqBuf *b, const char *v, const RelDesc *r) {
  switch (ri(0, 3)) {
    case 0:
      tqBufPuts(b, "(");
      cond1(b, v, r);
      tqBufPuts(b, " or ");
      cond1(b, v, r);
      tqBufPuts(b, ")");
      break;
    case 1:
      tqBufPuts(b, "not (");
      cond1(b, v, r);
      tqBufPuts(b, ")");
      break;
    default: cond1(b, v, r); break;
  }
}

static const char *idAttr(const RelDesc *r) { return r->isEntityE ? "E" : "X"; }

/* A random temporal expression (value) over variables a and b. */
static void texpr(TqBuf *b, const char *x, const char *y, int depth) {
  switch (ri(0, depth > 1 ? 3 : 8)) {
    case 0: tqBufPuts(b, x); break;
    case 1: tqBufPuts(b, y); break;
    case 2: tqBufPrintf(b, "%d", ri(0, 60)); break;
    case 3: tqBufPuts(b, PICK(((const char *[]){"now", "beginning", "forever"}))); break;
    case 4:
      tqBufPuts(b, "begin of ");
      texpr(b, x, y, depth + 2);
      break;
    case 5:
      tqBufPuts(b, "end of ");
      texpr(b, x, y, depth + 2);
      break;
    case 6:
      tqBufPuts(b, "(");
      texpr(b, x, y, depth + 1);
      tqBufPuts(b, " overlap ");
      texpr(b, x, y, depth + 1);
      tqBufPuts(b, ")");
      break;
    case 7:
      tqBufPuts(b, "(");
      texpr(b, x, y, depth + 1);
      tqBufPuts(b, " extend ");
      texpr(b, x, y, depth + 1);
      tqBufPuts(b, ")");
      break;
    default:
      tqBufPuts(b, "(");
      texpr(b, x, y, depth + 2);
      tqBufPrintf(b, " %s %dns)", chance(50) ? "+" : "-", ri(1, 9));
      break;
  }
}

static void tpred1(TqBuf *b, const char *x, const char *y) {
  texpr(b, x, y, 0);
  tqBufPrintf(b, " %s ", PICK(((const char *[]){"precede", "overlap", "equal", "precede", "overlap"})));
  texpr(b, x, y, 0);
}

static void tpred(TqBuf *b, const char *x, const char *y) {
  switch (ri(0, 4)) {
    case 0:
      tqBufPuts(b, "not (");
      tpred1(b, x, y);
      tqBufPuts(b, ")");
      break;
    case 1:
      tpred1(b, x, y);
      tqBufPuts(b, chance(50) ? " and " : " or ");
      tpred1(b, x, y);
      break;
    default: tpred1(b, x, y); break;
  }
}

static int isEventRel(const RelDesc *r) {
  return !strcmp(r->name, "Ev") || !strcmp(r->name, "Dv") || !strcmp(r->name, "Sv") || !strcmp(r->name, "Tv");
}

/* A random aggregate over variable v of relation r (e.g. "count(v.N by v.X)"). */
static void aggregate(TqBuf *b, const char *v, const RelDesc *r, int link) {
  static const char *fns[] = {"count", "countU", "sum", "sumU", "avg", "avgU", "min", "max", "any", "first", "last"};
  const char *fn = PICK(fns);
  int numeric = !strcmp(fn, "sum") || !strcmp(fn, "sumU") || !strcmp(fn, "avg") || !strcmp(fn, "avgU");
  const char *arg;
  if (numeric) arg = r->hasF && chance(50) ? "F" : r->hasN ? "N" : NULL;
  else arg = r->hasN && chance(50) ? "N" : idAttr(r);
  if (!arg) {
    fn = "count";
    arg = idAttr(r);
  }
  tqBufPrintf(b, "%s(%s.%s", fn, v, arg);
  if (link || chance(40)) tqBufPrintf(b, " by %s.%s", v, idAttr(r));
  int w = ri(0, 5);
  if (w == 1) tqBufPuts(b, " for ever");
  else if (w == 2) tqBufPrintf(b, " for each %dns", ri(2, 12));
  else if (w == 3) tqBufPuts(b, " for each instant");
  if (chance(30)) {
    tqBufPuts(b, " where ");
    cond1(b, v, r);
  }
  if (chance(20)) tqBufPrintf(b, " when %s overlap %d", v, ri(5, 50));
  tqBufPuts(b, ")");
}

static void genQueries(TqBuf *b, int *nderived) {
  int nq = ri(1, 3);
  for (int q = 0; q < nq; q++) {
    const RelDesc *r = pickRel(), *s = pickRel();
    int kind = ri(0, 9);
    tqBufPrintf(b, "\nrange of a%d is %s\nrange of b%d is %s\n", q, r->name, q, s->name);
    char A[16], Bv[16];
    snprintf(A, sizeof A, "a%d", q);
    snprintf(Bv, sizeof Bv, "b%d", q);
    switch (kind) {
      case 0: /* selection and projection */
        tqBufPrintf(b, "retrieve into Q%d (%s.%s", q, A, idAttr(r));
        if (r->hasN) tqBufPrintf(b, ", K = %s.N + 1", A);
        tqBufPuts(b, ")");
        if (chance(70)) {
          tqBufPuts(b, " where ");
          cond(b, A, r);
        }
        break;
      case 1: /* a join with default when and valid */
        tqBufPrintf(b, "retrieve into Q%d (P = %s.%s, R = %s.%s) where %s.%s = %s.%s", q, A, idAttr(r), Bv, idAttr(s), A,
                    idAttr(r), Bv, idAttr(s));
        if (chance(50)) {
          tqBufPuts(b, " and ");
          cond1(b, Bv, s);
        }
        break;
      case 2: /* explicit when */
        tqBufPrintf(b, "retrieve into Q%d (P = %s.%s, R = %s.%s) when ", q, A, idAttr(r), Bv, idAttr(s));
        tpred(b, A, Bv);
        if (chance(50)) tqBufPrintf(b, " where %s.%s != %s.%s", A, idAttr(r), Bv, idAttr(s));
        break;
      case 3: /* explicit valid */
        tqBufPrintf(b, "retrieve into Q%d (P = %s.%s, R = %s.%s) ", q, A, idAttr(r), Bv, idAttr(s));
        if (chance(50)) {
          tqBufPuts(b, "valid at ");
          texpr(b, A, Bv, 0);
        } else {
          tqBufPuts(b, "valid from ");
          texpr(b, A, Bv, 0);
          tqBufPuts(b, " to ");
          texpr(b, A, Bv, 0);
        }
        if (chance(50)) {
          tqBufPuts(b, " when ");
          tpred(b, A, Bv);
        }
        tqBufPrintf(b, " where %s.%s = %s.%s", A, idAttr(r), Bv, idAttr(s));
        break;
      case 4: /* an aggregate alone */
        tqBufPrintf(b, "retrieve into Q%d (V = ", q);
        aggregate(b, A, r, 0);
        tqBufPuts(b, ")");
        break;
      case 5: /* an aggregate linked to its outer variable */
        tqBufPrintf(b, "retrieve into Q%d (%s.%s, V = ", q, A, idAttr(r));
        aggregate(b, A, r, 1);
        tqBufPuts(b, ")");
        if (chance(40)) {
          tqBufPuts(b, " where ");
          cond1(b, A, r);
        }
        break;
      case 6: /* an aggregate in where */
        tqBufPrintf(b, "retrieve into Q%d (%s.%s) where count(%s.%s by %s.%s) %s %d", q, Bv, idAttr(s), Bv, idAttr(s),
                    Bv, idAttr(s), PICK(((const char *[]){">", "<=", "="})), ri(0, 2));
        break;
      case 7: { /* a derived relation, ranged over */
        tqBufPrintf(b, "retrieve into D%d (P = %s.%s, R = %s.%s)", q, A, idAttr(r), Bv, idAttr(s));
        /* extension: the derived relation's own valid clause, and a join
        ** of it with a when clause (its marks matter to the product) */
        xBegin();
        int xValid = chance(50), xJoin = chance(50);
        if (xValid) {
          if (chance(25)) {
            tqBufPuts(b, " valid at ");
            texpr(b, A, Bv, 0);
          } else {
            tqBufPuts(b, " valid from ");
            texpr(b, A, Bv, 0);
            tqBufPuts(b, " to ");
            texpr(b, A, Bv, 0);
          }
        }
        xEnd();
        tqBufPrintf(b, " where %s.%s = %s.%s\n", A, idAttr(r), Bv, idAttr(s));
        tqBufPrintf(b, "range of d%d is D%d\nretrieve into Q%d (d%d.P) where d%d.R %s E%d", q, q, q, q, q,
                    PICK(((const char *[]){"=", "!=", ">"})), ri(1, 4));
        if (xJoin) {
          xBegin();
          const RelDesc *e = pickRel();
          char Dv[16], Ev[16];
          snprintf(Dv, sizeof Dv, "d%d", q);
          snprintf(Ev, sizeof Ev, "j%d", q); /* not e1: that is entity E1 */
          tqBufPrintf(b, "\nrange of j%d is %s\nretrieve into X%d (d%d.P, T = j%d.%s)", q, e->name, q, q, q, idAttr(e));
          if (chance(40)) {
            int v = ri(0, 2);
            tqBufPrintf(b, " valid at %s%s", v == 0 ? "begin of " : v == 1 ? "" : "end of ", v == 2 ? Dv : Ev);
          }
          tqBufPuts(b, " when ");
          tpred(b, Dv, Ev);
          tqBufPrintf(b, " where d%d.P = j%d.%s", q, q, idAttr(e));
          xEnd();
        }
        /* extension: an aggregate over the derived relation, alone or
        ** linked to it */
        xBegin();
        if (chance(30)) {
          static const char *fns[] = {"count", "countU", "min", "max", "any", "first", "last"};
          int linked = chance(50);
          tqBufPrintf(b, "\nretrieve into G%d (", q);
          if (linked) tqBufPrintf(b, "d%d.P, ", q);
          tqBufPrintf(b, "V = %s(d%d.%s", PICK(fns), q, chance(50) ? "P" : "R");
          if (linked || chance(50)) tqBufPrintf(b, " by d%d.P", q);
          int w = ri(0, 3);
          if (w == 1) tqBufPuts(b, " for ever");
          else if (w == 2) tqBufPrintf(b, " for each %dns", ri(2, 9));
          tqBufPuts(b, "))");
        }
        xEnd();
        (*nderived)++;
        break;
      }
      case 8: /* Clock[n] */
        tqBufPrintf(b, "range of c%d is Clock[%d]\nretrieve into Q%d (%s.%s) when c%d overlap %s", q, ri(2, 5), q, A,
                    idAttr(r), q, A);
        break;
      default: { /* three variables */
        const RelDesc *t3 = pickRel();
        tqBufPrintf(b, "range of t%d is %s\nretrieve into Q%d (P = %s.%s, R = %s.%s, T = t%d.%s) where %s.%s = %s.%s", q,
                    t3->name, q, A, idAttr(r), Bv, idAttr(s), q, idAttr(t3), A, idAttr(r), Bv, idAttr(s));
        break;
      }
    }
    (void)isEventRel;
    tqBufPuts(b, "\n");
  }
  /* extension: the optimizer's O3 form (an alpha armed by events): the
  ** end of an interval after a qualifying event on its flag entity */
  xBegin();
  if (chance(20)) {
    static const char *ivs[] = {"Iv", "Jv", "Pv"}, *flag[] = {"Y", "X", "X"};
    int k = ri(0, 2);
    const char *ev = chance(50) ? "Ev" : "Dv";
    tqBufPrintf(b, "\nrange of o is %s\nrange of s is %s\nretrieve into O (o.X, o.N) valid at end of o where s.%s = o.%s", ivs[k],
                ev, flag[k], flag[k]);
    if (chance(50)) tqBufPrintf(b, " and s.N %s %d", PICK(((const char *[]){"<", ">=", "="})), ri(0, 4));
    tqBufPuts(b, " when s precede end of o\n");
  }
  xEnd();
  /* extension: a sampled relation joined with a selection of the entity
  ** relation of its flag (the optimizer's SJS samples only those
  ** entities), and a scalar aggregate whose inner where names the flag
  ** (AGG-WHERE, then O2) */
  xBegin();
  if (chance(25)) {
    if (chance(50))
      tqBufPrintf(b, "\nrange of ss is Tv\nrange of ee is E\nretrieve into SJ (ss.X, ss.Y, ee.S) where ss.X = ee.E and ee.S %s %s\n",
                  PICK(((const char *[]){"=", "!="})), PICK(((const char *[]){"A", "B", "C"})));
    else
      tqBufPrintf(b, "\nrange of ss is Sv\nrange of mm is M\nretrieve into SJ (ss.X, ss.N) where ss.Y = mm.M and mm.M %s M%d\n",
                  PICK(((const char *[]){"=", "!="})), ri(1, 3));
  }
  if (chance(25)) {
    static const char *fns[] = {"count", "sum", "min", "max", "avg", "any"};
    const char *rel = PICK(((const char *[]){"Sv", "Ev", "Iv", "Jv"}));
    tqBufPrintf(b, "\nrange of ag is %s\nretrieve into AW (V = %s(ag.N where ag.X %s E%d%s))\n", rel, PICK(fns),
                PICK(((const char *[]){"=", "!="})), ri(1, 3), chance(50) ? " and ag.N > 1" : "");
  }
  /* extension: a relation with a traced and a sampled sensor read at a
  ** Clock's ticks (SENSOR takes the sampled one), or otherwise (it keeps
  ** the traced one) */
  if (chance(30)) {
    int q = chance(50);
    const char *rel = q ? "Qv" : "Rv";
    int k = ri(1, 4);
    tqBufPrintf(b, "\nrange of rv is %s\nrange of cc is Clock[%d]\nretrieve into RS (rv.X, rv.Y%s)", rel, k, q ? "" : ", rv.N");
    int v = ri(0, 4);
    if (v == 1) tqBufPuts(b, " valid at cc");
    else if (v == 2) tqBufPuts(b, " valid at begin of (rv overlap cc)");
    else if (v == 3) tqBufPuts(b, " valid at begin of rv"); /* needs the intervals */
    else if (v == 4) tqBufPuts(b, " valid at begin of (cc overlap rv)");
    tqBufPuts(b, ri(0, 5) ? " when cc overlap rv" : " when cc precede end of rv"); /* the second: intervals */
    int w = ri(0, 3);
    if (w == 1) tqBufPrintf(b, " where rv.Y %s M%d", PICK(((const char *[]){"=", "!="})), ri(1, 3));
    else if (w == 2) tqBufPrintf(b, " where rv.X %s E%d", PICK(((const char *[]){"=", "!="})), ri(1, 4));
    else if (w == 3 && !q) tqBufPrintf(b, " where rv.N > %d", ri(0, 3));
    tqBufPuts(b, "\n");
  }
  /* extension: a relation with two traced sensors: SENSOR takes the other
  ** (cheaper, flagged on the target) when the alpha is enabled on every
  ** entity or O2 narrows it on the target afterwards, and keeps the first
  ** when O2 narrowed it on the performer */
  if (chance(25)) {
    tqBufPuts(b, "\nrange of wv is Wv\nretrieve into WQ (wv.X, wv.Y, wv.N)");
    int v = ri(0, 2);
    if (v == 1) tqBufPuts(b, " valid at begin of wv");
    else if (v == 2) tqBufPuts(b, " valid at end of wv");
    int w = ri(0, 3);
    if (w == 1) tqBufPrintf(b, " where wv.Y %s M%d", PICK(((const char *[]){"=", "!="})), ri(1, 3));
    else if (w == 2) tqBufPrintf(b, " where wv.X %s E%d", PICK(((const char *[]){"=", "!="})), ri(1, 4));
    else if (w == 3) tqBufPrintf(b, " where wv.N > %d", ri(0, 3));
    tqBufPuts(b, "\n");
  }
  /* extension: O3 over a disable-traced relation declared once (O3-ONCE's
  ** consuming form) */
  if (chance(30)) {
    int ev = chance(50);
    const char *arm = chance(50) ? "Ev" : "Dv";
    if (ev)
      tqBufPrintf(b, "\nrange of ow is Ow\nrange of sw is %s\nretrieve into OX (ow.X, ow.N) valid at ow where sw.X = ow.X", arm);
    else
      tqBufPrintf(b, "\nrange of ow is Ov\nrange of sw is %s\nretrieve into OX (ow.X, ow.N) valid at end of ow where sw.X = ow.X",
                  arm);
    if (chance(50)) tqBufPrintf(b, " and sw.N %s %d", PICK(((const char *[]){"<", ">=", "="})), ri(0, 4));
    tqBufPrintf(b, " when sw precede %sow\n", ev ? "" : "end of ");
  }
  /* extension: a selection on a sampled relation that reads a value as
  ** well as the flag: O2 cannot take it; SF's sampled form puts the
  ** condition it implies on the flag into the argument (none when a
  ** disjunct does not constrain the flag) */
  if (chance(25)) {
    tqBufPrintf(b, "\nrange of sf is Sv\nretrieve into SFS (sf.X, sf.Y, sf.N) where sf.Y %s M%d and sf.N %s %d or ",
                PICK(((const char *[]){"=", "!="})), ri(1, 3), PICK(((const char *[]){"<", ">=", "="})), ri(0, 4));
    int k = ri(0, 2);
    if (k == 0) tqBufPrintf(b, "sf.Y = M%d\n", ri(1, 3));
    else if (k == 1) tqBufPrintf(b, "sf.Y != M%d and sf.N < %d\n", ri(1, 3), ri(0, 4));
    else tqBufPrintf(b, "sf.N > %d\n", ri(0, 4));
  }
  /* extension: a second query over Rv that needs its intervals and traces
  ** it on every entity (the cheapest combination: SENSOR then leaves the
  ** queries at ticks on the traced sensor) */
  if (strstr(b->s, "range of rv is Rv") && chance(40))
    tqBufPrintf(b, "\nrange of rw is Rv\nretrieve into RW (rw.X, rw.N) valid at %s rw\n", chance(50) ? "begin of" : "end of");
  xEnd();
}

/* ================================================================ the recording */

typedef struct Line {
  int t;
  int seq;
  char text[96];
} Line;
static Line lines[1000];
static int nlines;

static void add(int t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(int t, const char *fmt, ...) {
  if (nlines >= 1000) return;
  Line *l = &lines[nlines];
  l->t = t;
  l->seq = nlines;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(l->text, sizeof l->text, fmt, ap);
  va_end(ap);
  nlines++;
}
static int lineCmp(const void *x, const void *y) {
  const Line *a = x, *b = y;
  return a->t != b->t ? a->t - b->t : a->seq - b->seq;
}

static int gridTime(int lo, int hi) {
  if (lo > hi) return hi;
  if (chance(50)) {
    int a = (lo + 4) / 5, z = hi / 5;
    if (a <= z) return 5 * ri(a, z);
  }
  return ri(lo, hi);
}

static void genTrace(TqBuf *b) {
  nlines = 0;
  const int T = 60;
  /* entities: lifetimes, E with keyed states */
  int eFrom[5][8], eTo[5][8], eN[5] = {0}; /* E's lifetimes */
  for (int e = 1; e <= 4; e++) {
    int t = ri(0, 15);
    while (t < T - 5) {
      int end = chance(60) ? T : gridTime(t + 3, T);
      if (eN[e] < 8) {
        eFrom[e][eN[e]] = t;
        eTo[e][eN[e]++] = end;
      }
      add(t, "E+ E%d %s", e, PICK(((const char *[]){"A", "B", "C"})));
      for (int s = t + ri(2, 8); s < end - 1; s += ri(3, 12)) add(s, "E+ E%d %s", e, PICK(((const char *[]){"A", "B", "C"})));
      add(end, "E- E%d", e);
      t = end + ri(1, 10);
      if (end >= T) break;
    }
  }
  int mFrom[4] = {0}, mTo[4] = {0};
  for (int m = 1; m <= 3; m++) {
    int t = ri(0, 10), end = chance(70) ? T : gridTime(t + 10, T);
    add(t, "M+ M%d", m);
    add(end, "M- M%d", m);
    mFrom[m] = t;
    mTo[m] = end;
  }
  /* events */
  for (int i = ri(4, 12); i > 0; i--) add(gridTime(0, T - 1), "Ev E%d M%d %d", ri(1, 4), ri(1, 3), ri(0, 4));
  for (int i = ri(4, 12); i > 0; i--) add(gridTime(0, T - 1), "Dv E%d M%d %d", ri(1, 4), ri(1, 3), ri(0, 4));
  /* intervals (closed by the end) */
  static const char *fl[] = {"0.5", "1.25", "2", "3.5"};
  for (int i = ri(3, 8); i > 0; i--) {
    int f = gridTime(0, T - 5), t = gridTime(f + 1, T);
    int x = ri(1, 4), y = ri(1, 3), n = ri(0, 4);
    add(f, "Iv+ E%d M%d %d", x, y, n);
    add(t, "Iv- E%d M%d %d", x, y, n);
  }
  for (int i = ri(3, 8); i > 0; i--) {
    int f = gridTime(0, T - 5), t = gridTime(f + 1, T);
    int x = ri(1, 4), n = ri(0, 4);
    const char *fv = PICK(fl);
    add(f, "Jv+ E%d %d %s", x, n, fv);
    add(t, "Jv- E%d %d %s", x, n, fv);
  }
  for (int i = ri(2, 6); i > 0; i--) {
    int f = gridTime(0, T - 5), t = gridTime(f + 1, T);
    int x = ri(1, 4), n = ri(0, 4);
    add(f, "Pv+ E%d %d", x, n);
    add(t, "Pv- E%d %d", x, n);
  }
  for (int i = ri(2, 6); i > 0; i--) {
    int f = gridTime(0, T - 5), t = gridTime(f + 1, T);
    int x = ri(1, 4), y = ri(1, 3), n = ri(0, 4);
    add(f, "Sv+ E%d M%d %d", x, y, n);
    add(t, "Sv- E%d M%d %d", x, y, n);
  }
  for (int i = ri(2, 5); i > 0; i--) {
    int f = gridTime(0, T - 5), t = gridTime(f + 1, T);
    int x = ri(1, 4), y = ri(1, 3);
    add(f, "Tv+ E%d M%d", x, y);
    add(t, "Tv- E%d M%d", x, y);
  }
  /* extension: Rv and Qv, each tuple within the lifetime of its flag
  ** entities (a sensor lives in its flag entity: docs/enabling.md, SENSOR) */
  xBegin();
  for (int i = ri(2, 7); i > 0; i--) {
    int y = ri(1, 3), x = ri(1, 4), n = ri(0, 4);
    if (mTo[y] - mFrom[y] < 2) continue;
    int f = gridTime(mFrom[y], mTo[y] - 1), t = gridTime(f + 1, mTo[y]);
    add(f, "Rv+ E%d M%d %d", x, y, n);
    add(t, "Rv- E%d M%d %d", x, y, n);
  }
  for (int i = ri(2, 6); i > 0; i--) {
    int y = ri(1, 3), x = ri(1, 4);
    if (!eN[x]) continue;
    int l = ri(0, eN[x] - 1);
    int lo = eFrom[x][l] > mFrom[y] ? eFrom[x][l] : mFrom[y], hi = eTo[x][l] < mTo[y] ? eTo[x][l] : mTo[y];
    if (hi - lo < 2) continue;
    int f = gridTime(lo, hi - 1), t = gridTime(f + 1, hi);
    add(f, "Qv+ E%d M%d", x, y);
    add(t, "Qv- E%d M%d", x, y);
  }
  /* Wv: each tuple within the lifetimes of both its flag entities (its two
  ** traced sensors, docs/enabling.md, SENSOR) */
  for (int i = ri(2, 6); i > 0; i--) {
    int y = ri(1, 3), x = ri(1, 4), n = ri(0, 4);
    if (!eN[x]) continue;
    int l = ri(0, eN[x] - 1);
    int lo = eFrom[x][l] > mFrom[y] ? eFrom[x][l] : mFrom[y], hi = eTo[x][l] < mTo[y] ? eTo[x][l] : mTo[y];
    if (hi - lo < 2) continue;
    int f = gridTime(lo, hi - 1), t = gridTime(f + 1, hi);
    add(f, "Wv+ E%d M%d %d", x, y, n);
    add(t, "Wv- E%d M%d %d", x, y, n);
  }
  /* Ov and Ow: at most one tuple per E entity in the run (declared once) */
  for (int x = 1; x <= 4; x++) {
    if (chance(60)) {
      int f = gridTime(0, T - 5), t = gridTime(f + 1, T), n = ri(0, 4);
      add(f, "Ov+ E%d %d", x, n);
      add(t, "Ov- E%d %d", x, n);
    }
    if (chance(60)) add(gridTime(0, T - 1), "Ow E%d %d", x, ri(0, 4));
  }
  xEnd();
  qsort(lines, (size_t)nlines, sizeof(Line), lineCmp);
  for (int i = 0; i < nlines; i++) tqBufPrintf(b, "%d %s\n", lines[i].t, lines[i].text);
}

/* ================================================================ running */

static int sortLines(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* CSV blocks "# Name\nheader\nrows" -> one string per row "Name|row", sorted
** (and without repeats when dedup: a snapshot is a set). */
static char *canonX(const char *csv, int dedup) {
  TqVec rows = {0};
  const char *name = "";
  char *copy = tqStrdup(csv ? csv : "");
  int header = 0;
  for (char *l = strtok(copy, "\n"); l; l = strtok(NULL, "\n")) {
    if (l[0] == '#') {
      name = l + 2;
      header = 1;
      continue;
    }
    if (header) {
      header = 0;
      continue;
    }
    tqVecPush(&rows, tqMprintf("%s|%s", name, l));
  }
  if (rows.n > 1) qsort(rows.v, (size_t)rows.n, sizeof(char *), sortLines);
  TqBuf b = {0};
  tqBufPuts(&b, "");
  for (int i = 0; i < rows.n; i++) {
    if (!dedup || i == 0 || strcmp(rows.v[i], rows.v[i - 1])) {
      tqBufPuts(&b, rows.v[i]);
      tqBufPuts(&b, "\n");
    }
  }
  for (int i = 0; i < rows.n; i++) free(rows.v[i]);
  tqVecFree(&rows);
  free(copy);
  return b.s;
}

static char *canon(const char *csv) { return canonX(csv, 0); }

/* pairs where some sensor's enable count went past its counter's width
** (the optimized network's --stats "saturated") */
static int saturatedPairs, pairSaturated;

static char *engineRun(CpProgram *p, const char *trace, int noOpt, TqDiag *d) {
  SnsTrace *tr = snsTraceParse(tqSourceFromString("prop.trace", trace), p, d);
  if (!tr) return NULL;
  RtOptions o = {noOpt, snsTraceLast(tr), 0};
  RtNet *net = rtNetNew(p, &o, d);
  if (!net) {
    snsTraceFree(tr);
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  RtConsumer *c = dspTextConsumer(f, DSP_CSV);
  rtNetAddConsumer(net, c);
  snsReplay(p, net, tr);
  fclose(f);
  dspTextConsumerFree(c);
  if (!noOpt) {
    TqBuf st = {0};
    rtNetStatsJson(net, &st);
    for (const char *x = st.s; x && (x = strstr(x, "\"saturated\": ")); x++)
      if (x[13] != '0') pairSaturated = 1;
    tqBufFree(&st);
  }
  rtNetFree(net);
  snsTraceFree(tr);
  return buf;
}

static char *sqlRun(RtStore *st, const char *sql) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int rc = rtStoreQueryCsv(st, sql, f);
  fclose(f);
  if (rc) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int checked, failed, snapshots;
static const char *outDir = "build/test-out";

static void report(int seed, const char *prog, const char *trace, const char *oracle, const char *what, const char *got) {
  failed++;
  printf("not ok %d - seed %d: %s\n", checked, seed, what);
  char *tq = tqMprintf("%s/prop-%d.tq", outDir, seed), *trf = tqMprintf("%s/prop-%d.trace", outDir, seed),
       *csv = tqMprintf("%s/prop-%d.csv", outDir, seed);
  FILE *f;
  if ((f = fopen(tq, "w"))) fprintf(f, "-- property test pair, seed %d: %s\n%s", seed, what, prog), fclose(f);
  if ((f = fopen(trf, "w"))) fputs(trace, f), fclose(f);
  if ((f = fopen(csv, "w"))) fputs(oracle ? oracle : "", f), fclose(f);
  printf("    golden case written: %s %s %s (expected = the oracle's answer)\n", tq, trf, csv);
  printf("    program:\n%s", prog);
  char *co = oracle ? canon(oracle) : NULL, *cg = got ? canon(got) : NULL;
  printf("    oracle (sorted):\n%s", co ? co : "(none)\n");
  printf("    engine (sorted):\n%s", cg ? cg : "(none)\n");
  free(co);
  free(cg);
  free(tq);
  free(trf);
  free(csv);
}

/* The pair being checked, for a crash (an internal check of the test
** build aborts) or a hang (no answer within PAIR_SECONDS): it is written
** as a golden case before dying. */
#define PAIR_SECONDS 120
static int curSeed;
static const char *curProg, *curTrace;
static int writeOnly; /* -w: the pairs are written, not checked */

/* Writes text to dir/pair-SEED.EXT; 0 on success. */
static int writePair(int seed, const char *ext, const char *text) {
  char *path = tqMprintf("%s/pair-%d.%s", outDir, seed, ext);
  FILE *f = fopen(path, "w");
  int rc = !f || fputs(text, f) < 0;
  if (f && fclose(f)) rc = 1;
  if (rc) fprintf(stderr, "prop: cannot write %s: %s\n", path, strerror(errno));
  free(path);
  return rc;
}

static void onCrash(int sig) {
  signal(sig, SIG_DFL);
  char *what = sig == SIGALRM ? tqMprintf("no answer within %d s (a hang)", PAIR_SECONDS)
                              : tqMprintf("crash (signal %d) in the engine", sig);
  report(curSeed, curProg, curTrace, "", what, NULL);
  fflush(stdout);
  raise(sig);
}

/* The rules of docs/enabling.md: in how many pairs each fired (the
** generated queries must cover them). */
static const char *const newRules[] = {"SF", "SJS", "AGG-WHERE", "SENSOR", "O3-ONCE"};
static int newFired[TQ_ARRAY_SIZE(newRules)];
/* pairs optimized as for a live collection that cannot ask some sensors
** (AlgRel.unasked, what enSensorsAsked sets), and of those the pairs in
** which SENSOR took the sampled sensor of a relation whose traced one it
** could not ask */
static int unaskedPairs, unaskedSampled;
static int sfSampledFired; /* pairs where SF narrowed a sampled alpha's argument */
/* pairs in which SENSOR chose a relation's other traced sensor (Wv_traced) */
static int otherTraced;

static int readsOtherTraced(const AlgNode *t) {
  if (t->kind == ALG_ALPHA && t->rel->sensorOf && t->rel->mode == ALG_MODE_TRACED) return 1;
  for (int i = 0; i < t->nkid; i++)
    if (readsOtherTraced(t->kid[i])) return 1;
  return 0;
}

static void onePair(int seed) {
  rs = (uint64_t)seed * 0x9e3779b97f4a7c15ULL + 7;
  for (int i = 0; i < 4; i++) rnd();
  rsX = (uint64_t)seed * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL;
  TqBuf prog = {0}, trace = {0};
  int nderived = 0;
  tqBufPrintf(&prog, "clock %dns;\n", ri(1, 3));
  genSensors(&prog, seed);
  counterPairs += pairCounters > 0;
  genQueries(&prog, &nderived);
  genTrace(&trace);
  if (writeOnly) {
    if (writePair(seed, "tq", prog.s) || writePair(seed, "trace", trace.s)) failed++;
    else checked++;
    tqBufFree(&prog);
    tqBufFree(&trace);
    return;
  }
  checked++;
  curSeed = seed;
  curProg = prog.s;
  curTrace = trace.s;
  alarm(PAIR_SECONDS);
  if (getenv("PROP_DUMP")) printf("%s\n-- trace\n%s", prog.s, trace.s);
  TqDiag d = {0};
  TqSource *src = tqSourceFromString("prop.tq", prog.s);
  CpProgram *p = cpCompileSources(1, &src, &d);
  if (!p) {
    report(seed, prog.s, trace.s, NULL, "generated program does not compile", d.out.s);
    goto done;
  }
  /* as a live collection whose PMs produce one sensor of Rv or Qv only:
  ** SENSOR must then choose the other, or keep the traced one */
  int unasked = 0;
  for (int i = 0; i < p->cat.rels.n; i++) {
    AlgRel *r = p->cat.rels.v[i];
    if ((r->altSensor || r->sensorOf) && chance(20)) {
      r->unasked = "not produced (prop)";
      unasked |= r->altSensor ? 2 : 1;
    }
  }
  for (int i = 0; i < p->cat.rels.n; i++) { /* one of each pair at most: a query may need either */
    AlgRel *r = p->cat.rels.v[i];
    if (r->altSensor && r->unasked && r->altSensor->unasked) r->altSensor->unasked = NULL;
  }
  unaskedPairs += unasked != 0;
  TqBuf fired = {0};
  cpOptimize(p, &fired);
  if ((unasked & 2) && fired.s && strstr(fired.s, "\nSENSOR: ")) unaskedSampled++;
  for (int i = 0; i < p->queries.n; i++) {
    const CpQuery *q = p->queries.v[i];
    if (q->opt && readsOtherTraced(q->opt)) {
      otherTraced++;
      break;
    }
  }
  for (size_t r = 0; r < TQ_ARRAY_SIZE(newRules); r++) {
    char pat[32];
    snprintf(pat, sizeof pat, "\n%s: ", newRules[r]);
    if (fired.s && strstr(fired.s, pat)) newFired[r]++;
  }
  tqBufFree(&fired);
  /* SF's sampled form (an alpha's argument narrowed): its note */
  for (int i = 0; i < p->queries.n; i++) {
    TqBuf nb = {0};
    const CpQuery *q = p->queries.v[i];
    if (q->opt) algPrintNotes(q->opt, &nb);
    int hit = nb.s && strstr(nb.s, "SF: sampled only on");
    tqBufFree(&nb);
    if (hit) {
      sfSampledFired++;
      break;
    }
  }
  pairSaturated = 0;
  char *eng = engineRun(p, trace.s, 0, &d);
  saturatedPairs += pairSaturated;
  char *un = engineRun(p, trace.s, 1, &d);
  char *dbp = tqMprintf("%s/prop-%d.db", outDir, getpid());
  unlink(dbp);
  SnsTrace *tr = snsTraceParse(tqSourceFromString("prop.trace", trace.s), p, &d);
  RtStore *st = NULL;
  TqBuf ora = {0};
  if (tr && !appLoadTrace(tr, p, dbp, &d)) st = rtStoreOpen(dbp, &d);
  CpSqlParams par = {tr ? snsTraceFirst(tr) : 0, tr ? snsTraceLast(tr) : 0};
  for (int i = 0; st && i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    TqBuf sql = {0}, err = {0};
    if (cpQuerySql(p, q, &par, &sql, &err)) {
      tqBufPrintf(&ora, "# cannot translate: %s\n", err.s);
    } else {
      char *r = sqlRun(st, sql.s);
      tqBufPrintf(&ora, "# %s\n", q->name ? q->name : "query");
      tqBufPuts(&ora, r ? r : "sql failed\n");
      if (!r) tqBufPrintf(&ora, "-- %s\n", sql.s);
      free(r);
    }
    tqBufFree(&sql);
    tqBufFree(&err);
  }
  char *ce = canon(eng), *cu = canon(un), *co = canon(ora.s);
  if (!eng || !un || !st) {
    report(seed, prog.s, trace.s, ora.s, "a run failed", d.out.s);
  } else if (strcmp(ce, co)) {
    report(seed, prog.s, trace.s, ora.s, "engine and SQL oracle differ", eng);
  } else if (strcmp(ce, cu)) {
    report(seed, prog.s, trace.s, ora.s, "optimized and unoptimized networks differ", un);
  } else {
    /* snapshot reducibility on eligible queries */
    int bad = 0;
    for (int i = 0; i < p->queries.n && !bad; i++) {
      CpQuery *q = p->queries.v[i];
      const CpSem *sem = q->sem;
      if (sem->when || sem->valid || sem->nagg) continue;
      for (int k = 0; k < 6 && !bad; k++) {
        TqTime t = ri(0, 60);
        TqBuf sql = {0}, err = {0};
        if (cpQuerySnapshotSql(p, q, &par, t, &sql, &err)) {
          tqBufFree(&sql);
          tqBufFree(&err);
          continue;
        }
        char *snap = sqlRun(st, sql.s);
        tqBufFree(&sql);
        tqBufFree(&err);
        /* the engine's rows of this query valid at t, values only */
        TqBuf sl = {0};
        tqBufPuts(&sl, "# s\nh\n");
        const char *name = q->name;
        char *copy = tqStrdup(eng);
        int in = 0, header = 0;
        for (char *l = strtok(copy, "\n"); l; l = strtok(NULL, "\n")) {
          if (l[0] == '#') {
            in = !strcmp(l + 2, name);
            header = 1;
            continue;
          }
          if (header) {
            header = 0;
            continue;
          }
          if (!in) continue;
          /* split off the times */
          char *c1 = strrchr(l, ',');
          long long from, to = 0;
          int open = 0;
          if (q->isEvent) {
            from = atoll(c1 + 1);
            *c1 = 0;
            to = from + 1;
          } else {
            open = c1[1] == 0;
            to = open ? 0 : atoll(c1 + 1);
            *c1 = 0;
            char *c2 = strrchr(l, ',');
            from = atoll(c2 + 1);
            *c2 = 0;
          }
          if (from <= t && (open || t < to)) tqBufPrintf(&sl, "%s\n", l);
        }
        free(copy);
        TqBuf sn = {0};
        tqBufPuts(&sn, "# s\n");
        tqBufPuts(&sn, snap ? snap : "h\n(failed)\n");
        char *a = canonX(sl.s, 1), *z = canonX(sn.s, 1);
        /* drop the ",<times>" difference: the snapshot has values only */
        if (strcmp(a, z)) {
          char *w = tqMprintf("snapshot reducibility fails at t=%lld for %s:\nsliced:\n%ssnapshot:\n%s", (long long)t, name, a, z);
          report(seed, prog.s, trace.s, ora.s, w, eng);
          free(w);
          bad = 1;
        }
        snapshots++;
        free(a);
        free(z);
        free(snap);
        tqBufFree(&sl);
        tqBufFree(&sn);
      }
    }
    if (!bad) printf("ok %d - seed %d\n", checked, seed);
  }
  free(ce);
  free(cu);
  free(co);
  free(eng);
  free(un);
  tqBufFree(&ora);
  rtStoreFree(st);
  snsTraceFree(tr);
  unlink(dbp);
  char *w = tqMprintf("%s-wal", dbp), *s2 = tqMprintf("%s-shm", dbp);
  unlink(w);
  unlink(s2);
  free(w);
  free(s2);
  free(dbp);
  cpProgramFree(p);
done:
  alarm(0);
  tqDiagFree(&d);
  tqBufFree(&prog);
  tqBufFree(&trace);
}

int main(int argc, char **argv) {
  int n = 200, seed = 1, budget = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGABRT, onCrash);
  signal(SIGSEGV, onCrash);
  signal(SIGALRM, onCrash);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-n")) n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-s")) seed = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-o")) outDir = argv[i + 1];
    else if (!strcmp(argv[i], "-t")) budget = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) writeOnly = atoi(argv[i + 1]);
  }
  if (mkdir(outDir, 0777) && errno != EEXIST) { /* its pairs' stores and failing cases go there */
    fprintf(stderr, "prop: cannot make %s: %s\n", outDir, strerror(errno));
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int spent = 0;
  for (int i = 0; i < n; i++) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (budget > 0 && t1.tv_sec - t0.tv_sec >= budget) {
      spent = 1;
      break;
    }
    onePair(seed + i);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (writeOnly) {
    printf("%d pairs written to %s, %d failed\n", checked, outDir, failed);
    return failed ? 1 : 0;
  }
  if (budget > 0)
    printf("time budget %d s: %d of %d pairs in %lld s%s\n", budget, checked, n, (long long)(t1.tv_sec - t0.tv_sec),
           spent ? " (the budget was spent first)" : "");
  printf("%d pairs, %d failed, %d snapshot checks; pairs where a rule of docs/enabling.md fired:", checked, failed,
         snapshots);
  for (size_t r = 0; r < TQ_ARRAY_SIZE(newRules); r++) printf(" %s %d", newRules[r], newFired[r]);
  printf(" (SF on a sampled alpha %d)", sfSampledFired);
  printf("; pairs with a counter width %d, a counter saturated %d", counterPairs, saturatedPairs);
  printf("; pairs with a sensor the operation cannot ask %d, SENSOR on such a relation's sampled sensor %d; pairs reading "
         "another traced sensor %d\n", unaskedPairs, unaskedSampled, otherTraced);
  return failed ? 1 : 0;
}
