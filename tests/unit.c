/*
** unit.c - white-box unit tests: time constants, the scanner, the parser,
** temporal evaluation with bounds, and each runtime operator on small
** networks (some built by hand, to test operators the translator does not
** produce by itself); the optimizer rule preconditions no query can make
** fail, on hand-built trees; folding histograms and a session's queries
** over recordings (catching up over kept records).  Prints "ok N - name"
** or "not ok N - name" per test.
**
** Why one file of over 1,000 lines: the tests share one small harness
** (CHECK, the counts, main's list) and each is short; split, every file
** would carry the harness and the build a target per file.
*/
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler.h"
#include "display.h"
#include "grammar.h"
#include "rtInt.h"
#include "engine.h"
#include "sensors.h"
#include "sensorsInt.h"

static int ntest, nfail;

/* The sanitizer allocator's bytes in use (the unit tests are built with
** ASan; gcc installs no header for it: sanitizer/allocator_interface.h). */
size_t __sanitizer_get_current_allocated_bytes(void);

#define CHECK(cond, name)                                                 \
  do {                                                                    \
    ntest++;                                                              \
    if (cond) {                                                           \
      printf("ok %d - %s\n", ntest, name);                                \
    } else {                                                              \
      nfail++;                                                            \
      printf("not ok %d - %s (%s:%d)\n", ntest, name, __FILE__, __LINE__); \
    }                                                                     \
  } while (0)

static const char *SENSORS =
    "clock 1s;\n"
    "entity Processor;\n"
    "entity Process (State: enum(Ready, Running, Blocked, Done));\n"
    "entity Mailbox;\n"
    "event SendMessage (Process: Process initiator, Mailbox: Mailbox target) traced on initiator;\n"
    "interval RunningOn (Process: Process target, Processor: Processor performer) sampled on performer;\n"
    "interval Waiting (Process: Process initiator, Mailbox: Mailbox target) disable traced on target counter 8;\n"
    "interval Load (Process: Process performer, N: int) traced on performer;\n";

/* ---------------------------------------------------------------- helpers */

static CpProgram *compileStr(const char *text, TqDiag *d) {
  TqSource *s = tqSourceFromString("t.tq", text);
  return cpCompileSources(1, &s, d);
}

/* Runs prog over trace text; returns the CSV output (caller frees). */
static char *runWith(CpProgram *p, const char *trace, int noOpt) {
  TqDiag d = {0};
  SnsTrace *tr = snsTraceParse(tqSourceFromString("t.trace", trace), p, &d);
  if (!tr) {
    fprintf(stderr, "%s", d.out.s ? d.out.s : "?");
    tqDiagFree(&d);
    return NULL;
  }
  RtOptions o = {noOpt, snsTraceLast(tr), 0};
  RtNet *net = rtNetNew(p, &o, &d);
  if (!net) {
    fprintf(stderr, "%s", d.out.s ? d.out.s : "?");
    snsTraceFree(tr);
    tqDiagFree(&d);
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
  rtNetFree(net);
  snsTraceFree(tr);
  tqDiagFree(&d);
  return buf;
}

static char *run(const char *queries, const char *trace) {
  TqDiag d = {0};
  char *text = tqMprintf("%s%s", SENSORS, queries);
  CpProgram *p = compileStr(text, &d);
  free(text);
  if (!p) {
    fprintf(stderr, "%s", d.out.s ? d.out.s : "?");
    tqDiagFree(&d);
    return NULL;
  }
  cpOptimize(p, NULL);
  char *r = runWith(p, trace, 0);
  cpProgramFree(p);
  tqDiagFree(&d);
  return r;
}

static int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* ---------------------------------------------------------------- tests */

/* The hash map under churn: random puts and deletes of few live keys (the
** pattern of pending tuples) against a plain array; deleting the end of a
** probe chain frees the tombstones before it, and nothing is lost. */
static void testMapChurn(void) {
  enum { NK = 64 };
  void *ref[NK] = {0};
  TqMap m = {0};
  uint64_t r = 88172645463325252ULL;
  int bad = 0;
  for (int i = 0; i < 200000 && !bad; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    int k = (int)(r % NK);
    uint64_t key = (uint64_t)k * 0x9E3779B97F4A7C15ULL + 2;
    if (r >> 40 & 1) {
      ref[k] = (void *)(uintptr_t)(i + 1);
      tqMapPut(&m, key, ref[k]);
    } else {
      if (tqMapDel(&m, key) != ref[k]) bad = 1;
      ref[k] = NULL;
    }
    for (int j = 0; j < NK && !(i % 997); j++)
      if (tqMapGet(&m, (uint64_t)j * 0x9E3779B97F4A7C15ULL + 2) != ref[j]) bad = 1;
  }
  uint32_t n = 0;
  for (int j = 0; j < NK; j++) n += ref[j] != NULL;
  CHECK(!bad && m.n == n, "map under churn keeps exactly the live keys");
  CHECK(m.cap <= 4 * NK, "map under churn does not grow past its live keys");
  tqMapFree(&m);
}

static void testTime(void) {
  TqTime t;
  char b[64];
  CHECK(tqTimeParse("2:54:20", 7, &t) == 0 && t == (2 * 3600 + 54 * 60 + 20) * TQ_SEC, "time h:mm:ss");
  CHECK(tqTimeParse("0:00:01.25", 10, &t) == 0 && t == TQ_SEC + 250 * TQ_MS, "time with fraction");
  CHECK(tqTimeParse("250ms", 5, &t) == 0 && t == 250 * TQ_MS, "duration ms");
  CHECK(tqTimeParse("10s", 3, &t) == 0 && t == 10 * TQ_SEC, "duration s");
  CHECK(tqTimeParse("3min", 4, &t) == 0 && t == 180 * TQ_SEC, "duration min");
  CHECK(tqTimeParse("12345", 5, &t) == 0 && t == 12345, "bare ns");
  CHECK(tqTimeParse("1:60:00", 7, &t) != 0, "minutes out of range rejected");
  CHECK(tqTimeParse("10x", 3, &t) != 0, "unknown unit rejected");
  CHECK(!strcmp(tqTimeFormat(b, sizeof b, 9260 * TQ_SEC), "2:34:20"), "format h:mm:ss");
  CHECK(!strcmp(tqTimeFormat(b, sizeof b, TQ_SEC + 5 * TQ_MS), "0:00:01.005"), "format fraction");
  CHECK(!strcmp(tqTimeFormat(b, sizeof b, TQ_OPEN), "now"), "format open as now");
  CHECK(tqTimeAdd(TQ_FOREVER, 5) == TQ_FOREVER && tqTimeAdd(TQ_BEGINNING, -5) == TQ_BEGINNING, "saturation");
}

static void testLexer(void) {
  TqDiag d = {0};
  TqSource *s = tqSourceFromString("lex.tq", "RANGE of W is Waiting -- comment\n when W precede 2:54:20 /* c */ and x.y >= 10s \"a\\\"b\"");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int e = grDumpTokens(s, f, &d);
  fclose(f);
  CHECK(e == 0, "lexer: no error");
  CHECK(contains(buf, "1:1 'range' RANGE"), "lexer: keywords are case-insensitive");
  CHECK(contains(buf, "2:17 a time constant 2:54:20"), "lexer: time constant with position");
  CHECK(contains(buf, "a duration such as 10s 10s"), "lexer: duration");
  CHECK(contains(buf, "'>=' >="), "lexer: two-character operator");
  CHECK(contains(buf, "a string \"a\\\"b\""), "lexer: string with escape");
  CHECK(!contains(buf, "comment") && !contains(buf, " c "), "lexer: comments skipped");
  free(buf);
  tqSourceFree(s);
  TqSource *s2 = tqSourceFromString("lex2.tq", "retrieve (x = 12abc)");
  f = open_memstream(&buf, &len);
  e = grDumpTokens(s2, f, &d);
  fclose(f);
  CHECK(e == 1 && contains(d.out.s, "lex2.tq:1:15: error: malformed number '12abc'"), "lexer: malformed number");
  free(buf);
  tqSourceFree(s2);
  tqDiagFree(&d);
}

static void testParser(void) {
  TqDiag d = {0};
  TqArena *a = tqArenaNew();
  TqSource *s = tqSourceFromString("p.tq",
                                   "range of S is SendMessage\n"
                                   "retrieve into R (P = S.Process) valid at S where S.Process = P1 when S overlap S");
  AstNode *st = grParse(a, s, &d);
  CHECK(st && st->kind == AST_RANGE && st->next && st->next->kind == AST_RETRIEVE, "parser: statements");
  AstNode *r = st ? st->next : NULL;
  CHECK(r && r->s && !strcmp(r->s, "R") && r->k[0] && r->k[0]->kind == AST_TARGET, "parser: retrieve into");
  CHECK(r && r->k[1] && r->k[1]->op == VALID_AT && r->k[2] && r->k[3], "parser: clauses");
  CHECK(r && r->k[2]->k[0]->kind == AST_BIN && r->k[2]->k[0]->op == OPB_EQ, "parser: where comparison");
  TqSource *s2 = tqSourceFromString("p2.tq", "retrieve (x = ) ");
  AstNode *bad = grParse(a, s2, &d);
  CHECK(!bad && contains(d.out.s, "p2.tq:1:15: error: unexpected token ')', expected an expression"),
        "parser: error names what was expected");
  TqSource *s3 = tqSourceFromString("p3.tq", "range of x is");
  d.nerr = 0;
  tqBufFree(&d.out);
  bad = grParse(a, s3, &d);
  CHECK(!bad && contains(d.out.s, "p3.tq:1:14: error: unexpected end of input, expected a name"), "parser: end of input");
  /* precedence: begin of a overlap b == (begin of a) overlap b */
  TqSource *s4 = tqSourceFromString("p4.tq", "retrieve (x = 1) when begin of a overlap b and not c precede d");
  st = grParse(a, s4, &d);
  AstNode *w = st ? st->k[3]->k[0] : NULL;
  CHECK(w && w->kind == AST_BIN && w->op == OPB_AND && w->k[0]->kind == AST_OVERLAP &&
            w->k[0]->k[0]->kind == AST_BEGINOF && w->k[1]->kind == AST_NOT && w->k[1]->k[0]->kind == AST_PRECEDE,
        "parser: temporal precedence");
  tqSourceFree(s);
  tqSourceFree(s2);
  tqSourceFree(s3);
  tqSourceFree(s4);
  tqArenaDelete(a);
  tqDiagFree(&d);
}

/* Temporal evaluation on spans: t0 = [10,20), t1 = [20, open), t2 = event at 20,
** t3 = [15, open). */
static void testTemporal(void) {
  int64_t span[8] = {10, 20, 20, TQ_OPEN, 20, 21, 15, TQ_OPEN};
  RtExpr v3 = {.kind = AX_TVAR, .idx = 3}, v0 = {.kind = AX_TVAR, .idx = 0}, v1 = {.kind = AX_TVAR, .idx = 1}, v2 = {.kind = AX_TVAR, .idx = 2, .isEvent = 1};
  RtTCtx c = {span, 25, TQ_OPEN, 25};
  RtExpr pr = {.kind = AX_PRECEDE, .a = &v0, .b = &v1};
  CHECK(rtTPred(&pr, &c) == TRI_T, "[10,20) precede [20,...) (meets counts)");
  RtExpr ov = {.kind = AX_TOVERLAP, .a = &v0, .b = &v1};
  CHECK(rtTPred(&ov, &c) == TRI_F, "[10,20) does not overlap [20,...)");
  RtExpr ov2 = {.kind = AX_TOVERLAP, .a = &v2, .b = &v1};
  CHECK(rtTPred(&ov2, &c) == TRI_T, "event at 20 overlaps [20,...)");
  RtExpr ov3 = {.kind = AX_TOVERLAP, .a = &v2, .b = &v0};
  CHECK(rtTPred(&ov3, &c) == TRI_F, "event at 20 does not overlap [10,20)");
  RtExpr e1 = {.kind = AX_ENDOF, .a = &v1}, e3 = {.kind = AX_ENDOF, .a = &v3};
  RtExpr pr1 = {.kind = AX_PRECEDE, .a = &v2, .b = &e1};
  RtExpr pr2 = {.kind = AX_PRECEDE, .a = &v2, .b = &e3};
  RtTCtx c20 = {span, 20, TQ_OPEN, 20};
  CHECK(rtTPred(&pr1, &c20) == TRI_T, "event at 20 precede end of an interval begun at 20: known (it ends at 21 or later)");
  CHECK(rtTPred(&pr2, &c20) == TRI_U, "event at 20 precede end of open interval: unknown at 20");
  CHECK(rtTPred(&pr2, &c) == TRI_T, "... known once time has passed 20");
  RtExpr eq = {.kind = AX_TEQUAL, .a = &v0, .b = &v1};
  CHECK(rtTPred(&eq, &c) == TRI_F, "different begins are not equal");
  RtExpr e0 = {.kind = AX_ENDOF, .a = &v0}, b1 = {.kind = AX_BEGINOF, .a = &v1};
  RtExpr eq2 = {.kind = AX_TEQUAL, .a = &e0, .b = &b1};
  CHECK(rtTPred(&eq2, &c) == TRI_T, "end of [10,20) equal begin of [20,..)");
  RtExpr pr3 = {.kind = AX_PRECEDE, .a = &e0, .b = &b1};
  CHECK(rtTPred(&pr3, &c) == TRI_F, "instant 20 does not precede instant 20");
  RtExpr ix = {.kind = AX_OVERLAP, .a = &v0, .b = &v2};
  RtTVal x;
  rtTEval(&ix, &c, &x);
  CHECK(x.kind == TV_EMPTY, "intersection of [10,20) and event 20 is empty");
  RtExpr ex = {.kind = AX_EXTEND, .a = &v0, .b = &v1};
  rtTEval(&ex, &c, &x);
  CHECK(x.kind == TV_INTERVAL && x.b.lo == 10 && x.e.lo >= 25 && x.e.hi == TQ_FOREVER, "extend with an open end");
  RtExpr nt = {.kind = AX_NOT, .a = &pr2};
  CHECK(rtTPred(&nt, &c20) == TRI_U && rtTPred(&nt, &c) == TRI_F, "not is three-valued");
  /* lower bounds for marks: constants and shifts on the way count */
  RtExpr k3 = {.kind = AX_TCONST, .ival = 3}, k3m = {.kind = AX_TSHIFT, .a = &k3, .ival = -6};
  CHECK(rtTExprLow(&k3m, 40, 40, 40, 1).b == -3, "low of 3 - 6ns is -3 (the shift applies to the constant)");
  RtExpr s1 = {.kind = AX_TSHIFT, .a = &v0, .ival = -3}, s2 = {.kind = AX_TSHIFT, .a = &s1, .ival = -4};
  RtExpr bs2 = {.kind = AX_BEGINOF, .a = &s2};
  CHECK(rtTExprLow(&bs2, 40, 40, 40, 1).b == 33, "low of begin of ((V - 3ns) - 4ns) is 7 below the spans' low");
  RtExpr up = {.kind = AX_TSHIFT, .a = &v0, .ival = 5}, ext = {.kind = AX_EXTEND, .a = &up, .b = &k3m};
  RtLow lx = rtTExprLow(&ext, 40, 50, 40, 1);
  CHECK(lx.b == -3 && lx.e == 45 && lx.oe == 55, "an extend begins at the earlier begin, ends at the later end");
  RtExpr k14 = {.kind = AX_TCONST, .ival = 14}, e14 = {.kind = AX_ENDOF, .a = &k14}, ext2 = {.kind = AX_EXTEND, .a = &e14, .b = &v0};
  CHECK(rtTExprLow(&ext2, 40, TQ_FOREVER, 40, 1).oe == TQ_FOREVER, "end of (end of 14 extend V), unknown, is V's end, not 14");
  RtExpr v9 = {.kind = AX_TSHIFT, .a = &v1, .ival = 9}, ext4 = {.kind = AX_EXTEND, .a = &v9, .b = &v0};
  CHECK(rtTExprLow(&ext4, 10, 50, 40, 1).oe == 50, "(W + 9ns) extend V, unknown: W may be closed early, V open from 50");
  RtExpr ov5 = {.kind = AX_OVERLAP, .a = &v0, .b = &v1};
  CHECK(rtTExprLow(&ov5, 10, 50, 40, 1).oe == 50, "an unknown end of an intersection is an open span's");
  RtExpr nw = {.kind = AX_NOW}, ov4 = {.kind = AX_OVERLAP, .a = &v0, .b = &nw};
  RtLow lo4 = rtTExprLow(&ov4, 20, 40, 30, 0);
  CHECK(lo4.b == 30 && lo4.e == 30 && lo4.oe == 30, "V overlap now is an instant at now, from now's own lower bound");
  CHECK(rtTExprLow(&ov4, 20, 40, 30, 1).oe == TQ_FOREVER, "... known when now's value is");
  RtExpr beg = {.kind = AX_TCONST, .ival = TQ_BEGINNING}, ext3 = {.kind = AX_EXTEND, .a = &beg, .b = &v2};
  CHECK(rtTExprLow(&ext3, 20, 40, 30, 1).oe == TQ_FOREVER, "the end of (beginning extend event) is always known");
}

static void testOperators(void) {
  char *r;
  /* sigma + pi over an event alpha (T:I) */
  r = run("range of S is SendMessage\nretrieve into X (M = S.Mailbox) where S.Process = P1\n",
          "1 Process+ P1 Ready\n1 Process+ P2 Ready\n1 Mailbox+ M1\n2 SendMessage P1 M1\n3 SendMessage P2 M1\n4 SendMessage P1 M1\n");
  CHECK(r && !strcmp(r, "# X\nM,valid_at\nM1,2\nM1,4\n"), "sigma and pi over alpha T:I");
  free(r);
  /* interval alpha with open interval at the end: valid_to empty */
  r = run("range of L is Load\nretrieve into X (L.Process, L.N)\n",
          "0 Process+ P1 Ready\n5 Load+ P1 3\n9 Load- P1 3\n12 Load+ P1 4\n");
  CHECK(r && !strcmp(r, "# X\nProcess,N,valid_from,valid_to\nP1,3,5,9\nP1,4,12,\n"), "interval alpha, open at end");
  free(r);
  /* sigmaT decided late: S precede end of W (W still open at S) */
  r = run("range of S is SendMessage\nrange of W is Waiting\n"
          "retrieve into X (P = W.Process) valid at end of W where S.Mailbox = W.Mailbox when S precede end of W\n",
          "0 Process+ P1 Ready\n0 Process+ P2 Ready\n0 Mailbox+ M1\n5 Waiting+ P2 M1\n7 SendMessage P1 M1\n"
          "7 Waiting- P2 M1\n8 Waiting+ P2 M1\n9 SendMessage P1 M1\n10 Waiting- P2 M1\n");
  CHECK(r && !strcmp(r, "# X\nP,valid_at\nP2,10\n"), "sigmaT: precede is strict at the same instant");
  free(r);
  /* product with default when/valid: intersection of two intervals */
  r = run("range of A is Load\nrange of B is Load\nretrieve into X (A.N, M = B.N) where A.N < B.N\n",
          "0 Process+ P1 Ready\n0 Process+ P2 Ready\n1 Load+ P1 1\n3 Load+ P2 2\n6 Load- P1 1\n8 Load- P2 2\n");
  CHECK(r && !strcmp(r, "# X\nN,M,valid_from,valid_to\n1,2,3,6\n"), "product + default valid = intersection");
  free(r);
  /* sink dedup: two bindings give the same event */
  r = run("range of S is SendMessage\nrange of T is SendMessage\nretrieve into X (S.Process) where S.Process = T.Process\n",
          "0 Process+ P1 Ready\n0 Mailbox+ M1\n0 Mailbox+ M2\n4 SendMessage P1 M1\n4 SendMessage P1 M2\n");
  CHECK(r && !strcmp(r, "# X\nProcess,valid_at\nP1,4\n"), "results are sets (duplicates emitted once)");
  free(r);
  /* entity source ranged directly, keyed state changes */
  r = run("range of P is Process\nretrieve into X (P.Process, P.State) where P.State = Running\n",
          "0 Process+ P1 Ready\n3 Process+ P1 Running\n7 Process+ P1 Blocked\n9 Process+ P1 Running\n");
  CHECK(r && !strcmp(r, "# X\nProcess,State,valid_from,valid_to\nP1,Running,3,7\nP1,Running,9,\n"), "entity source, keyed");
  free(r);
  /* clock and sampling (S:P) with explicit when */
  r = run("range of RO is RunningOn\nrange of C is Clock[2]\nretrieve into X (RO.Process) when C overlap RO\n",
          "0 Processor+ A\n0 Process+ P1 Ready\n1s RunningOn+ P1 A\n5s RunningOn- P1 A\n6s Processor- A\n");
  CHECK(r && !strcmp(r, "# X\nProcess,valid_at\nP1,2000000000\nP1,4000000000\n"), "clock and sampled alpha");
  free(r);
  /* piT from..to with a constant */
  r = run("range of L is Load\nretrieve into X (L.N) valid from begin of L to 100\n",
          "0 Process+ P1 Ready\n5 Load+ P1 1\n9 Load- P1 1\n200 Load+ P1 2\n201 Load- P1 2\n");
  CHECK(r && !strcmp(r, "# X\nN,valid_from,valid_to\n1,5,100\n"), "piT from..to, empty result dropped");
  free(r);
}

/* Hand-built trees: intersect and a constant enabling set. */
static void testIntersect(void) {
  TqDiag d = {0};
  char *text = tqMprintf("%s%s", SENSORS, "range of S is SendMessage\nretrieve into X (S.Mailbox)\n");
  CpProgram *p = compileStr(text, &d);
  free(text);
  CHECK(p != NULL, "compile for hand-built tree");
  if (!p) return;
  CpQuery *q = p->queries.v[0];
  /* alpha_S((pi[Process](Process)) intersect P1) */
  AlgNode *alpha = q->tree->kid[0]->kid[0];
  AlgType pt = alpha->rel->attr[0].type;
  AlgNode *k = algConst(p->arena, pt, tqSymZ("P1"));
  alpha->kid[0] = algIntersect(p->arena, alpha->kid[0], k);
  char *r = runWith(p, "0 Process+ P1 Ready\n0 Process+ P2 Ready\n0 Mailbox+ M1\n2 SendMessage P1 M1\n"
                       "3 SendMessage P2 M1\n4 Process- P1\n5 SendMessage P1 M1\n",
                    1);
  CHECK(r && !strcmp(r, "# X\nMailbox,valid_at\nM1,2\n"), "intersect of an entity source with a constant");
  free(r);
  cpProgramFree(p);
  tqDiagFree(&d);
}

/* A pi, a sigma and two more pis over an alpha, all fused into it (net.c
** builds such a chain only when the optimizer's SIGMA-PI and PI-MERGE
** leave it: a hand-built tree).  The middle pi swaps two columns: it must
** not write the buffer it reads (it did when the scratch half was chosen
** by the operator's place, a sigma in between: (P1, 105, 105)). */
static AlgExpr *unitCol(TqArena *a, const char *name, AlgType t) { return algExprCol(a, "L", name, t); }
/* The program of SENSORS and query (over L, a Load), compiled, and the
** alpha of its query in *alpha; NULL (checked, said as what) when either
** is not there. */
static CpProgram *loadAlpha(const char *query, const char *what, TqDiag *d, AlgNode **alpha) {
  char *text = tqMprintf("%s%s", SENSORS, query);
  CpProgram *p = compileStr(text, d);
  free(text);
  CHECK(p != NULL, what);
  if (!p) return NULL;
  *alpha = ((CpQuery *)p->queries.v[0])->tree;
  while (*alpha && (*alpha)->kind != ALG_ALPHA) *alpha = (*alpha)->nkid ? (*alpha)->kid[0] : NULL;
  CHECK(*alpha != NULL, "the query's alpha");
  if (*alpha) return p;
  cpProgramFree(p);
  return NULL;
}

static void testFusedChain(void) {
  TqDiag d = {0};
  AlgNode *alpha;
  CpProgram *p = loadAlpha("range of L is Load\nretrieve into X (L.Process, A = L.N, B = L.N)\n", "compile for the fused chain", &d, &alpha);
  if (!p) return;
  CpQuery *q = p->queries.v[0];
  TqArena *a = p->arena;
  AlgType pt = alpha->rel->attr[0].type, ti = {TY_INT, NULL, NULL}, tb = {TY_BOOL, NULL, NULL};
  static const char *names[] = {"Process", "A", "B"};
  AlgExpr *k100 = algExprNew(a, AX_CONST, ti), *k0 = algExprNew(a, AX_CONST, ti);
  k100->ival = 100;
  k0->ival = 0;
  AlgExpr **e1 = tqArenaAlloc(a, 3 * sizeof(AlgExpr *)), **e2 = tqArenaAlloc(a, 3 * sizeof(AlgExpr *)),
          **e3 = tqArenaAlloc(a, 3 * sizeof(AlgExpr *));
  e1[0] = unitCol(a, "Process", pt), e1[1] = unitCol(a, "N", ti);
  e1[2] = algExprBin(a, AX_ARITH, OPB_ADD, ti, unitCol(a, "N", ti), k100);
  e2[0] = unitCol(a, "Process", pt), e2[1] = unitCol(a, "B", ti), e2[2] = unitCol(a, "A", ti);
  e3[0] = unitCol(a, "Process", pt), e3[1] = unitCol(a, "A", ti), e3[2] = unitCol(a, "B", ti);
  AlgNode *t = algPi(a, 3, e1, names, "L", alpha);
  t = algSigma(a, algExprBin(a, AX_CMP, OPB_GT, tb, unitCol(a, "A", ti), k0), t);
  t = algPi(a, 3, e3, names, "L", algPi(a, 3, e2, names, "L", t));
  q->tree = t;
  q->opt = NULL;
  const char *trace = "0 Process+ P1 Ready\n0 Process+ P2 Ready\n1 Load+ P1 5\n2 Load+ P2 0\n3 Load- P1 5\n4 Load- P2 0\n";
  char *fused = runWith(p, trace, 0), *apart = runWith(p, trace, 1);
  CHECK(fused && !strcmp(fused, "# X\nProcess,A,B,valid_from,valid_to\nP1,105,5,1,3\n"), "fused pi, sigma, pi, pi: the swap");
  CHECK(fused && apart && !strcmp(fused, apart), "fused pi, sigma, pi, pi: as the network apart (--no-opt)");
  if (fused && strcmp(fused, "# X\nProcess,A,B,valid_from,valid_to\nP1,105,5,1,3\n")) fprintf(stderr, "fused: %s", fused);
  free(fused);
  free(apart);
  cpProgramFree(p);
  tqDiagFree(&d);
}

/* A conjunction of comparisons of a column with a constant is tested as a
** range of the column (eval.c's cmpRange): each operator, either way
** round, at the ends of the integers, against the comparison itself. */
static void testCmpRange(void) {
  TqDiag d = {0};
  AlgNode *alpha;
  CpProgram *p = loadAlpha("range of L is Load\nretrieve (L.Process, L.N)\n", "compile for the comparison ranges", &d, &alpha);
  if (!p) return;
  TqArena *a = p->arena;
  AlgType ti = {TY_INT, NULL, NULL}, tb = {TY_BOOL, NULL, NULL};
  int col = algSchemaCol(&alpha->sch, "L", "N");
  CHECK(col >= 0, "column L.N");
  if (col < 0) {
    cpProgramFree(p);
    return;
  }
  static const int64_t ks[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX};
  static const int ops[] = {OPB_EQ, OPB_NE, OPB_LT, OPB_LE, OPB_GT, OPB_GE};
  int wrong = 0, tried = 0;
  for (size_t i = 0; i < TQ_ARRAY_SIZE(ks); i++) {
    for (size_t o = 0; o < TQ_ARRAY_SIZE(ops); o++) {
      for (int round = 0; round < 2; round++) {
        AlgExpr *k = algExprNew(a, AX_CONST, ti), *any = algExprNew(a, AX_CONST, ti);
        k->ival = ks[i];
        any->ival = INT64_MIN;
        AlgExpr *c = round ? algExprBin(a, AX_CMP, ops[o], tb, k, unitCol(a, "N", ti))
                           : algExprBin(a, AX_CMP, ops[o], tb, unitCol(a, "N", ti), k);
        /* (and N >= INT64_MIN: a conjunction, always true) */
        AlgExpr *e = algExprBin(a, AX_AND, OPB_AND, tb, c, algExprBin(a, AX_CMP, OPB_GE, tb, unitCol(a, "N", ti), any));
        TqBuf msg = {0};
        RtExpr *r = rtExprCompile(e, &alpha->sch, &msg);
        tqBufFree(&msg);
        if (!r || r->fast != RX_AND || !r->cx) {
          wrong++;
          rtExprFree(r);
          continue;
        }
        int64_t vals[8] = {0};
        for (size_t j = 0; j < TQ_ARRAY_SIZE(ks); j++) {
          for (int dv = -1; dv <= 1; dv++) {
            int64_t v = ks[j];
            if ((dv < 0 && v == INT64_MIN) || (dv > 0 && v == INT64_MAX)) continue;
            v += dv;
            vals[col] = v;
            int64_t l = round ? ks[i] : v, rr = round ? v : ks[i];
            int want = ops[o] == OPB_EQ ? l == rr : ops[o] == OPB_NE ? l != rr : ops[o] == OPB_LT ? l < rr
                     : ops[o] == OPB_LE ? l <= rr : ops[o] == OPB_GT ? l > rr : l >= rr;
            tried++;
            if (rtEvalBoolQ(r, vals) != want) wrong++;
          }
        }
        rtExprFree(r);
      }
    }
  }
  CHECK(wrong == 0 && tried > 1000, "comparisons with a constant as ranges, at the ends of the integers");
  cpProgramFree(p);
  tqDiagFree(&d);
}

/* ---------------------------------------------------------------- optimizer preconditions
** Rule preconditions no TQuel query can make fail (tests/explain covers the
** others): a where clause never names time, and Clock[n] has n <= 10^9
** while the alpha's default sampling clock is Clock[1].  Hand-built trees. */

/* Did rule fire in trace (a line "rule: ...")? */
static int fired(const char *trace, const char *rule) {
  size_t n = strlen(rule);
  for (const char *l = trace; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (!strncmp(l, rule, n) && l[n] == ':') return 1;
  return 0;
}

/* Optimizes t; returns whether rule fired, the result in *out. */
static int optFires(TqArena *a, const AlgNode *t, const char *rule, AlgNode **out) {
  TqBuf tr = {0};
  *out = algOptimize(a, t, &tr);
  int f = fired(tr.s, rule);
  tqBufFree(&tr);
  return f;
}

/* sigma[begin of var precede now] (a selection on time) and sigma[var.N > 3]. */
static AlgExpr *timePred(TqArena *a, const char *var) {
  AlgType tb = {TY_BOOL, NULL, NULL}, tt = {TY_TIME, NULL, NULL};
  AlgExpr *v = algExprNew(a, AX_TVAR, tt), *b = algExprNew(a, AX_BEGINOF, tt);
  v->var = var;
  b->a = v;
  return algExprBin(a, AX_PRECEDE, 0, tb, b, algExprNew(a, AX_NOW, tt));
}
static AlgExpr *colPred(TqArena *a, const char *var) {
  AlgType tb = {TY_BOOL, NULL, NULL}, ti = {TY_INT, NULL, NULL};
  AlgExpr *k = algExprNew(a, AX_CONST, ti);
  k->ival = 3;
  return algExprBin(a, AX_CMP, OPB_GT, tb, algExprCol(a, var, "N", ti), k);
}

static void testRulePreconditions(void) {
  TqDiag d = {0};
  char *text = tqMprintf("%s%s", SENSORS,
                         "range of A is Load\nrange of B is Load\nretrieve (A.N, N2 = B.N) when A precede B\n");
  CpProgram *p = compileStr(text, &d);
  free(text);
  CHECK(p != NULL, "compile for the optimizer's hand-built trees");
  if (!p) return;
  TqArena *a = p->arena;
  AlgNode *out;
  /* O7: Clock[n] intersect Clock[m] -> Clock[lcm], unless the lcm passes 10^9 */
  CHECK(optFires(a, algIntersect(a, algClock(a, 4, NULL), algClock(a, 6, NULL)), "O7", &out) &&
            out->kind == ALG_CLOCK && out->clockN == 12,
        "O7 fires: Clock[4] intersect Clock[6] is Clock[12]");
  CHECK(!optFires(a, algIntersect(a, algClock(a, 999999937, NULL), algClock(a, 999999929, NULL)), "O7", &out) &&
            out->kind == ALG_INTERSECT,
        "O7 does not fire: the lcm of Clock[999999937] and Clock[999999929] passes 10^9");
  /* O1: a selection naming one product input moves onto it, unless it names time */
  CpQuery *q = p->queries.v[0];
  AlgNode *prod = q->tree;
  while (prod->kind != ALG_PRODUCT) prod = prod->kid[0];
  CHECK(optFires(a, algSigma(a, colPred(a, "A"), prod), "O1", &out), "O1 fires: sigma[A.N>3](A x B)");
  CHECK(!optFires(a, algSigma(a, timePred(a, "A"), prod), "O1", &out),
        "O1 does not fire: sigma[begin of A precede now](A x B) names time");
  /* SIGMA-PIT: a selection moves below piT, unless it names time */
  AlgNode *pit = q->tree->kid[0];
  CHECK(pit->kind == ALG_PIT && optFires(a, algSigma(a, colPred(a, "A"), pit), "SIGMA-PIT", &out),
        "SIGMA-PIT fires: sigma[A.N>3](piT[...](...))");
  CHECK(!optFires(a, algSigma(a, timePred(a, "A"), pit), "SIGMA-PIT", &out),
        "SIGMA-PIT does not fire: sigma[begin of A precede now](piT[...](...)) names time");
  cpProgramFree(p);
  tqDiagFree(&d);
}

/* x1 forgets what can no longer overlap: peak stored stays near the number
** of live intervals, while x keeps the history. */
static int64_t productPeak(int noOpt) {
  TqDiag d = {0};
  char *text = tqMprintf("%s%s", SENSORS,
                         "interval Load2 (Process: Process performer, N: int) traced on performer;\n"
                         "range of A is Load\nrange of B is Load2\nretrieve (A.N, M = B.N) where A.Process = B.Process\n");
  CpProgram *p = compileStr(text, &d);
  free(text);
  if (!p) return -1;
  cpOptimize(p, NULL);
  TqBuf tr = {0};
  tqBufPuts(&tr, "0 Process+ P1 Ready\n0 Process+ P2 Ready\n");
  for (int i = 1; i <= 2000; i++) {
    tqBufPrintf(&tr, "%d Load+ P%d %d\n%d Load2+ P%d %d\n", 10 * i, 1 + i % 2, i, 10 * i + 1, 1 + i % 2, i);
    tqBufPrintf(&tr, "%d Load- P%d %d\n%d Load2- P%d %d\n", 10 * i + 5, 1 + i % 2, i, 10 * i + 6, 1 + i % 2, i);
  }
  SnsTrace *t = snsTraceParse(tqSourceFromString("x.trace", tr.s), p, &d);
  tqBufFree(&tr);
  RtOptions o = {noOpt, snsTraceLast(t), 0};
  RtNet *net = rtNetNew(p, &o, &d);
  snsReplay(p, net, t);
  int64_t peak = -1, rows = net->result[0].rows;
  for (int i = 0; i < net->ops.n; i++) {
    RtOp *op = net->ops.v[i];
    if (!strcmp(op->vt->name, "product")) peak = op->peakStored;
  }
  rtNetFree(net);
  snsTraceFree(t);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rows == 2000 ? peak : -2;
}

/* Tuples alive at the end of a run where one Load interval (N = 7) stays
** open while its process sends 2000 messages and 2000 pings (V = 0 and
** 100 in turn): every pair is an event result that piT settles, or a pair
** that sigma drops (query 2: P.V > L.N), so the product need not keep the
** pairs for the interval's END (-1 when the answer is not the rows). */
static int64_t liveWithOpenInterval(const char *query, int64_t rows) {
  TqDiag d = {0};
  char *text = tqMprintf("%s%s%s", SENSORS, "event Ping (Process: Process performer, V: int) traced on performer;\n",
                         query);
  CpProgram *p = compileStr(text, &d);
  free(text);
  if (!p) return -1;
  cpOptimize(p, NULL);
  TqBuf tr = {0};
  tqBufPuts(&tr, "0 Process+ P1 Ready\n0 Mailbox+ M1\n1 Load+ P1 7\n");
  for (int i = 1; i <= 2000; i++) tqBufPrintf(&tr, "%d SendMessage P1 M1\n%d Ping P1 %d\n", 10 * i, 10 * i + 5, i % 2 * 100);
  SnsTrace *t = snsTraceParse(tqSourceFromString("x.trace", tr.s), p, &d);
  tqBufFree(&tr);
  int64_t before = rtTupLive();
  RtOptions o = {0, snsTraceLast(t), 0};
  RtNet *net = rtNetNew(p, &o, &d);
  snsReplay(p, net, t);
  int64_t live = net->result[0].rows == rows ? rtTupLive() - before : -1;
  rtNetFree(net);
  snsTraceFree(t);
  cpProgramFree(p);
  tqDiagFree(&d);
  return live;
}

static void testOverlapProduct(void) {
  int64_t x1 = productPeak(0), x = productPeak(1);
  CHECK(x1 >= 0 && x1 <= 8, "x1 keeps only what can still overlap (peak stored small)");
  CHECK(x >= 4000, "x keeps the whole history");
  int64_t live = liveWithOpenInterval("range of L is Load\nrange of S is SendMessage\n"
                                      "retrieve (L.N, S.Mailbox) where L.Process = S.Process\n",
                                      2000);
  CHECK(live >= 0 && live < 100, "x1 forgets the settled pairs of an interval still open");
  live = liveWithOpenInterval("range of L is Load\nrange of P is Ping\n"
                              "retrieve (L.N, P.V) where L.Process = P.Process and P.V > L.N\n",
                              1000);
  CHECK(live >= 0 && live < 100, "x1 forgets the pairs sigma dropped of an interval still open");
}

/* Rows of a result as text, in the order they come. */
static int rowsText(void *self, RtResult *res, const RtRow *r) {
  tqBufPrintf(self, "%d %lld %lld %lld %lld\n", r->op, (long long)r->from, (long long)r->to, (long long)r->vals[0],
              (long long)r->vals[1]);
  return 0;
}

/* An x1 joining on an integer whose values are above the symbol ids at
** first (hashed), then below them once 4000 more symbols are interned
** during the run (the index grows over the stored ones): the rows
** and their order are those of the same run made with every value indexed
** from the start (the second run: the symbols are there by then). */
static char *denseKeyRun(int64_t base) {
  TqDiag d = {0};
  CpProgram *p = compileStr("clock 1s;\nentity Key;\n"
                            "interval L (K: Key performer, N: int, V: int) traced on performer;\n"
                            "event R (K: Key performer, N: int, W: int) traced on performer;\n"
                            "range of A is L\nrange of B is R\nretrieve (A.V, B.W) where A.N = B.N\n",
                            &d);
  if (!p) return NULL;
  cpOptimize(p, NULL);
  RtOptions o = {0, TQ_OPEN, 0};
  RtNet *net = rtNetNew(p, &o, &d);
  TqBuf out = {0};
  RtConsumer c = {"rows", &out, NULL, rowsText, NULL, NULL};
  rtNetAddConsumer(net, &c);
  RtSensor *key = rtNetSensor(net, "Key"), *L = rtNetSensor(net, "L"), *R = rtNetSensor(net, "R");
  int64_t k = tqSymZ("DenseKeyK1");
  rtNetStart(net, 0);
  rtEntityBegin(net, key, 1, 0, &k);
  rtNetEndInstant(net);
  int64_t open[8][3];
  for (int i = 0; i < 8; i++) {
    int64_t v[3] = {k, base + 1 + 3 * i, 100 + i};
    memcpy(open[i], v, sizeof v);
  }
  TqTime t = 10;
  for (int i = 0; i < 8; i++) {
    rtNetAdvance(net, t);
    rtDeliverBegin(net, L, (uint64_t)i + 10, t, open[i]);
    rtNetEndInstant(net);
    t += 10;
  }
  /* open intervals that match nothing: an index covers values up to four
  ** times the entries stored (rtDenseFits), so these let it cover base */
  rtNetAdvance(net, t);
  for (int i = 0; i < 600; i++) {
    int64_t v[3] = {k, base + 100 + i, 0};
    rtDeliverBegin(net, L, (uint64_t)i + 1000, t, v);
  }
  rtNetEndInstant(net);
  t += 10;
  for (int step = 0; step < 60; step++) {
    if (step == 20) {
      char name[32];
      for (int i = 0; i < 4000; i++) {
        snprintf(name, sizeof name, "DenseKeyS%d", i);
        tqSymZ(name);
      }
    }
    rtNetAdvance(net, t);
    if (step == 25) {
      /* stored after the index grew over the values: the stored ones move
      ** into it, ahead of this one with the same key */
      int64_t v[3] = {k, base + 1 + 3 * 7, 200};
      rtDeliverBegin(net, L, 99, t, v);
    }
    int64_t e[3] = {k, base + 1 + 3 * (step % 9), step};
    rtDeliverEvent(net, R, t, e);
    if (step % 10 == 9) {
      int i = step / 10 % 8;
      rtDeliverEnd(net, L, (uint64_t)i + 10, 10 + 10 * i, t, open[i]);
    }
    rtNetEndInstant(net);
    t += 10;
  }
  rtNetFinish(net, t, 1);
  rtNetFree(net);
  cpProgramFree(p);
  tqDiagFree(&d);
  return out.s;
}

static int lineCmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The lines of s in sorted order (s is changed): the order of rows within
** an instant may follow tuple addresses. */
static char *sortedLines(char *s) {
  TqVec v = {0};
  for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) tqVecPush(&v, l);
  qsort(v.v, (size_t)v.n, sizeof(char *), lineCmp);
  TqBuf b = {0};
  for (int i = 0; i < v.n; i++) tqBufPrintf(&b, "%s\n", (char *)v.v[i]);
  tqVecFree(&v);
  return b.s;
}

static void testDenseKeys(void) {
  /* the first run stores keys the index does not cover yet (above the
  ** symbols), then interns symbols so that it grows over them; the second
  ** run finds them all covered from the start: same rows */
  int64_t base = tqSymCount() + 2000;
  char *first = denseKeyRun(base), *again = denseKeyRun(base);
  char *a = first ? sortedLines(first) : NULL, *b = again ? sortedLines(again) : NULL;
  CHECK(a && b && !strcmp(a, b) && strlen(a) > 100, "x1 finds a key hashed before the index grew over it");
  free(a);
  free(b);
  free(first);
  free(again);
}

/* A dense index follows what is stored, not the symbol table: one entity
** enabled among 200000 symbols does not make a 200000-slot mirror. */
static void testDenseBound(void) {
  char name[32];
  for (int i = 0; i < 200000; i++) {
    snprintf(name, sizeof name, "DenseBound%d", i);
    tqSymZ(name);
  }
  TqDiag d = {0};
  CpProgram *p = compileStr("clock 1s;\nentity Key;\nevent R (K: Key performer, N: int) traced on performer;\n"
                            "range of B is R\nretrieve (B.N)\n",
                            &d);
  CHECK(p != NULL, "dense bound: the program compiles");
  if (!p) return;
  RtOptions o = {0, TQ_OPEN, 0};
  RtNet *net = rtNetNew(p, &o, &d);
  RtSensor *r = rtNetSensor(net, "R");
  int64_t e = tqSymZ("DenseBound199999");
  rtSensorCount(net, r, e, 1);
  CHECK(rtSensorEnabled(r, e) && r->ndense < 4096, "the sensor's dense mirror is bounded by its enabled entities");
  rtSensorCount(net, r, e, -1);
  CHECK(!rtSensorEnabled(r, e), "an entity disabled again is off");
  rtNetFree(net);
  cpProgramFree(p);
  tqDiagFree(&d);
}

/* When each row of the last result was inserted (stream time). */
typedef struct RowTimes {
  RtNet *net;
  int n;
  TqTime from[16], at[16];
} RowTimes;
static int rowTimesRow(void *self, RtResult *res, const RtRow *r) {
  RowTimes *rt = self;
  if (res != &rt->net->result[rt->net->nresult - 1] || r->op != RT_ROW_INSERT || rt->n == 16) return 0;
  rt->from[rt->n] = r->from;
  rt->at[rt->n++] = rt->net->now;
  return 0;
}

/* An aggregate over a derived relation holding a product answers during the
** run, also unoptimized (x keeps its oldest begin as its low mark, but the
** default valid clause begins at the latest begin of the pair). */
static int aggOverProductTimely(int noOpt) {
  TqDiag d = {0};
  CpProgram *p = compileStr("clock 1s;\nentity Process;\nentity Mailbox;\n"
                            "interval Waiting (Process: Process initiator, Mailbox: Mailbox target) traced on target;\n"
                            "range of W is Waiting\nrange of V is Waiting\n"
                            "retrieve into Pair (W.Process, P2 = V.Process) where W.Mailbox = V.Mailbox\n"
                            "range of Q is Pair\nretrieve into NP (N = count(Q.Process))\n",
                            &d);
  if (!p) return 0;
  cpOptimize(p, NULL);
  SnsTrace *t = snsTraceParse(tqSourceFromString("x.trace",
                                                 "0 Process+ P1\n0 Mailbox+ M1\n10 Waiting+ P1 M1\n"
                                                 "20 Waiting- P1 M1\n30 Mailbox+ M2\n100 Process- P1\n"),
                              p, &d);
  RtOptions o = {noOpt, snsTraceLast(t), 0};
  RtNet *net = rtNetNew(p, &o, &d);
  RowTimes rt = {net, 0, {0}, {0}};
  RtConsumer c = {"rowtimes", &rt, NULL, rowTimesRow, NULL, NULL};
  rtNetAddConsumer(net, &c);
  snsReplay(p, net, t);
  rtNetFree(net);
  snsTraceFree(t);
  cpProgramFree(p);
  tqDiagFree(&d);
  /* 0 from beginning, 1 from 10, 0 from 20: each known at the next instant
  ** of the recording (30 for the change at 20), not only at its end */
  return rt.n == 3 && rt.from[1] == 10 && rt.at[1] <= 20 && rt.from[2] == 20 && rt.at[2] <= 30;
}

static void testAggTimely(void) {
  CHECK(aggOverProductTimely(0), "aggregate over a derived x1 answers during the run");
  CHECK(aggOverProductTimely(1), "aggregate over a derived x answers during the run (--no-opt)");
}

static void testMemory(void) {
  int64_t before = rtTupLive();
  char *r = run("range of S is SendMessage\nrange of W is Waiting\n"
                "retrieve into X (P = W.Process) valid at end of W where S.Mailbox = W.Mailbox when S precede end of W\n",
                "0 Process+ P1 Ready\n0 Process+ P2 Ready\n0 Mailbox+ M1\n5 Waiting+ P2 M1\n7 SendMessage P1 M1\n");
  free(r);
  CHECK(rtTupLive() == before, "no tuple outlives its network");
}

/* Collection files (format 2) check their header and blocks with
** CRC-32C: the standard check value, and the CPU's instruction agrees with
** the table at every length and alignment. */
static void testCrc32c(void) {
  CHECK(snsCrc32c("123456789", 9) == 0xe3069283u, "CRC-32C check value (the CPU's)");
  CHECK(snsCrc32cSoft("123456789", 9) == 0xe3069283u, "CRC-32C check value (by table)");
  CHECK(snsCrc32c("", 0) == 0 && snsCrc32cSoft("", 0) == 0, "CRC-32C of nothing");
  unsigned char buf[300];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (unsigned char)(x >> 16);
  }
  int same = 1;
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; n + off <= sizeof buf; n += 7)
      if (snsCrc32c(buf + off, n) != snsCrc32cSoft(buf + off, n)) same = 0;
  CHECK(same, "CRC-32C: instruction and table agree");
}

/* The catalog's lookups by name: case-insensitive, per kind (a relation Pv
** is no derived relation, though their hashes once met: the kind salted
** the hash's first byte), and every one of many names found. */
static void testCatalogNames(void) {
  AlgCatalog c = {0};
  AlgEntity e = {.name = "E"};
  AlgRel pv = {.name = "Pv"};
  tqVecPush(&c.entities, &e);
  tqVecPush(&c.rels, &pv);
  CHECK(algCatRel(&c, "pV") == &pv && algCatEntity(&c, "e") == &e, "catalog: names are case-insensitive");
  CHECK(!algCatDerived(&c, "Sv") && !algCatDerived(&c, "Pv") && !algCatRel(&c, "E"), "catalog: each kind its own names");
  enum { N = 20000 };
  AlgRel *rels = tqCalloc(N, sizeof *rels);
  char(*names)[16] = tqCalloc(N, 16);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], 16, "R%d", i);
    rels[i].name = names[i];
    tqVecPush(&c.rels, &rels[i]);
  }
  int found = 1;
  for (int i = 0; i < N; i++)
    if (algCatRel(&c, names[i]) != &rels[i]) found = 0;
  CHECK(found && algCatRel(&c, "Pv") == &pv && !algCatRel(&c, "R20000"), "catalog: every one of many names found");
  AlgRel dup = {.name = "r7"};
  tqVecPush(&c.rels, &dup);
  CHECK(algCatRel(&c, "R7") == &rels[7], "catalog: the first of two equal names");
  algCatFree(&c);
  free(rels);
  free(names);
}

/* Floats print in the shortest form that reads back (Python's repr, without
** its ".0" on whole numbers): known cases, and a million random bit patterns
** that must read back exactly. */
static void testFloatFormat(void) {
  static const struct {
    double d;
    const char *s;
  } k[] = {{5.0 / 6, "0.8333333333333334"}, {0.1 + 0.2, "0.30000000000000004"}, {2.55, "2.55"}, {10, "10"},
           {1e15, "1000000000000000"}, {1e16, "1e+16"}, {1e-4, "0.0001"}, {1e-5, "1e-05"}, {-1.5, "-1.5"},
           {0, "0"}, {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
           {123456789012345678.0, "1.2345678901234568e+17"}, {1.0 / 0.0, "inf"}, {-1.0 / 0.0, "-inf"}};
  char b[64];
  for (size_t i = 0; i < TQ_ARRAY_SIZE(k); i++) {
    tqFloatFormat(b, sizeof b, k[i].d);
    CHECK(!strcmp(b, k[i].s), k[i].s);
  }
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  int bad = 0;
  for (int i = 0; i < 1000000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double d;
    memcpy(&d, &x, sizeof d);
    if (d != d || d - d != 0) continue; /* nan, inf */
    if (strtod(tqFloatFormat(b, sizeof b, d), NULL) != d) bad++;
  }
  CHECK(bad == 0, "a million random floats read back exactly");
}

/* ---------------------------------------------------------------- folding histograms */

/* RtHist alone: folds against a direct computation over the same values. */
static void testHistAlone(void) {
  RtHist *h = rtHistNew(8, 100, 10);
  CHECK(h && !rtHistNew(7, 0, 1) && !rtHistNew(8, 0, 0), "hist: even bucket counts, positive widths");
  int64_t ts[64];
  double vs[64];
  int n = 0, folds = 0;
  for (int64_t t = 95; t < 100 + 8 * 10 * 8; t += 13) { /* past three folds */
    ts[n] = t;
    vs[n] = (double)(t % 7);
    folds += rtHistAdd(h, t, vs[n]);
    n++;
  }
  CHECK(folds == 3 && h->folds == 3 && h->width == 80, "hist: three folds, the width doubled each time");
  int ok = h->early == 1 && h->added == n;
  for (int b = 0; b < 8; b++) {
    int64_t c = 0;
    double sum = 0;
    for (int i = 0; i < n; i++)
      if (ts[i] >= 100 + b * h->width && ts[i] < 100 + (b + 1) * h->width) c++, sum += vs[i];
    ok &= h->count[b] == c && h->sum[b] == sum;
  }
  CHECK(ok, "hist: each bucket holds what the direct computation gives");
  rtHistFree(h);
}

typedef struct HistRows {
  int64_t n, cap;
  int64_t *at, *v;
} HistRows;

static void histRow(void *ctx, const char *line) {
  HistRows *r = ctx;
  const char *v = line ? strstr(line, "\"Value\": ") : NULL, *a = line ? strstr(line, "\"at\": ") : NULL;
  if (!v || !a || !strstr(line, "\"op\": \"insert\"")) return;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->at = tqRealloc(r->at, sizeof(int64_t) * (size_t)r->cap);
    r->v = tqRealloc(r->v, sizeof(int64_t) * (size_t)r->cap);
  }
  r->at[r->n] = atoll(a + 6);
  r->v[r->n++] = atoll(v + 9);
}

/* The recording's Load of M1 at t (seconds): a new value every 10 minutes. */
static int64_t loadAt(int64_t sec) { return (sec / 600) * 7 % 13 + 1; }

/* A temporary folder for a run of the engine: s.tq holds SENSORS; r.trace
** and s.db are only named (the test makes them).  0, or -1. */
#define LOAD_SENSORS "clock 1s;\nentity Machine;\ninterval Load (Machine: Machine performer, Value: int) sampled on performer;\n"
typedef struct {
  char dir[48], sens[64], rec[64], db[64];
} TmpRun;
static int tmpRunMake(TmpRun *t, const char *name, const char *sensors) {
  snprintf(t->dir, sizeof t->dir, "/tmp/tqmon-unit-%s.XXXXXX", name);
  if (!mkdtemp(t->dir)) return -1;
  snprintf(t->sens, sizeof t->sens, "%s/s.tq", t->dir);
  snprintf(t->rec, sizeof t->rec, "%s/r.trace", t->dir);
  snprintf(t->db, sizeof t->db, "%s/s.db", t->dir);
  FILE *f = fopen(t->sens, "w");
  if (!f) return -1;
  fputs(sensors, f);
  fclose(f);
  return 0;
}

/* Removes it, and whatever SQLite left beside the store. */
static void tmpRunRemove(const TmpRun *t) {
  char side[80];
  unlink(t->rec);
  unlink(t->sens);
  unlink(t->db);
  snprintf(side, sizeof side, "%s-wal", t->db);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", t->db);
  unlink(side);
  rmdir(t->dir);
}

/* The heap a session histogram's replay of `hours` of the recording above
** grows by (the allocator's count of bytes in use, ASan's), after its
** first snapshot: the most it reached, less what it held then.  *folds:
** the histogram's folds at the end; *hbytes: what its blocks hold. */
static int64_t histHeapGrowth(int64_t hours, int *folds, int64_t *hbytes) {
  TmpRun tr;
  if (tmpRunMake(&tr, "heap", LOAD_SENSORS)) return -1;
  FILE *f = fopen(tr.rec, "w");
  const int64_t end = hours * 3600;
  fprintf(f, "0:00:00 Machine+ M1\n0:00:00 Load+ M1 %lld\n", (long long)loadAt(0));
  for (int64_t t = 600; t <= end; t += 600) {
    fprintf(f, "%lld:%02lld:%02lld Load- M1 %lld\n", (long long)(t / 3600), (long long)(t / 60 % 60), (long long)(t % 60),
            (long long)loadAt(t - 600));
    if (t < end)
      fprintf(f, "%lld:%02lld:%02lld Load+ M1 %lld\n", (long long)(t / 3600), (long long)(t / 60 % 60), (long long)(t % 60),
              (long long)loadAt(t));
  }
  fclose(f);
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 && tq_prepare(e, 1, files) == 0 &&
           tq_query_add(e, "L", "load.tq", "range of L is Load\nretrieve (L.Value) where L.Machine = \"M1\"\n", 0) == 0 &&
           tq_query_histogram(e, "L", "Value", 1000) == 0 && tq_read_snapshot(e) > 0;
  int64_t base = (int64_t)__sanitizer_get_current_allocated_bytes(), most = base;
  int r = ok ? 1 : -1;
  while (r > 0) {
    r = tq_read_snapshot(e);
    int64_t now = (int64_t)__sanitizer_get_current_allocated_bytes();
    if (now > most) most = now;
  }
  tq_histogram h;
  *folds = tq_query_histogram_get(e, "L", &h) ? -1 : h.folds;
  *hbytes = h.bytes;
  if (ok) tq_end(e);
  tq_finish(e);
  tmpRunRemove(&tr);
  return r == 0 ? most - base : -1;
}

/* A recording of 12 hours replayed into a session query's 1000-bucket
** histogram (issue 20): the width doubles at each fold, each folded bucket
** is the sum of the two it merged, every bucket is what a direct
** computation over the rows gives, the rows are the recording's values,
** the memory is flat and the samples follow the bucket width. */
static void testHistFold(void) {
  TmpRun tr;
  if (tmpRunMake(&tr, "hist", LOAD_SENSORS)) {
    CHECK(0, "hist replay: a temporary folder");
    return;
  }
  FILE *f = fopen(tr.rec, "w");
  const int64_t hours = 12, end = hours * 3600;
  fprintf(f, "0:00:00 Machine+ M1\n0:00:00 Load+ M1 %lld\n", (long long)loadAt(0));
  for (int64_t t = 600; t <= end; t += 600) {
    fprintf(f, "%lld:%02lld:%02lld Load- M1 %lld\n", (long long)(t / 3600), (long long)(t / 60 % 60), (long long)(t % 60),
            (long long)loadAt(t - 600));
    if (t < end)
      fprintf(f, "%lld:%02lld:%02lld Load+ M1 %lld\n", (long long)(t / 3600), (long long)(t / 60 % 60), (long long)(t % 60),
              (long long)loadAt(t));
  }
  fclose(f);
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  HistRows rows = {0};
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 && tq_prepare(e, 1, files) == 0 &&
           tq_query_add(e, "L", "load.tq", "range of L is Load\nretrieve (L.Value) where L.Machine = \"M1\"\n", 0) == 0 &&
           tq_query_histogram(e, "L", "Value", 1000) == 0 && tq_query_watch(e, "L", histRow, &rows) > 0;
  CHECK(ok, "hist replay: the session query and its histogram");
  if (!ok) printf("# %s\n", tq_errors(e));
  static int64_t prevCount[1000];
  static double prevSum[1000];
  tq_histogram h;
  int prevFolds = 0, doubled = 1, merged = 1, mergeChecks = 0, flat = 1, slowed = 1;
  int64_t width = 0, bytes = -1, prevN = 0;
  int r = 1;
  while (ok && r > 0) {
    r = tq_read_snapshot(e);
    if (tq_query_histogram_get(e, "L", &h) || !h.count) continue;
    if (bytes < 0) bytes = h.bytes;
    flat &= h.bytes == bytes;
    if (h.folds != prevFolds) {
      doubled &= h.width == width << (h.folds - prevFolds);
      /* each folded bucket: the two it merged, and the rows of this snapshot */
      for (int i = 0; i < 500 && h.folds == prevFolds + 1; i++) {
        int64_t c = prevCount[2 * i] + prevCount[2 * i + 1];
        double sum = prevSum[2 * i] + prevSum[2 * i + 1];
        for (int64_t k = prevN; k < rows.n; k++)
          if (rows.at[k] >= h.start + i * h.width && rows.at[k] < h.start + (i + 1) * h.width) c++, sum += (double)rows.v[k];
        merged &= h.count[i] == c && h.sum[i] == sum;
        mergeChecks += i == 0;
      }
      slowed &= h.sample_period == h.width / 4;
      prevFolds = h.folds;
    }
    width = h.width;
    memcpy(prevCount, h.count, sizeof prevCount);
    memcpy(prevSum, h.sum, sizeof prevSum);
    prevN = rows.n;
  }
  CHECK(ok && r == 0, "hist replay: to the end");
  if (ok) tq_end(e);
  CHECK(h.folds == 4 && h.width == (int64_t)4 * TQ_SEC << 4 && doubled, "hist replay: four folds, the width doubled at each");
  CHECK(merged && mergeChecks >= 3, "hist replay: each folded bucket is the sum of the two it merged");
  CHECK(flat && bytes >= 16000 && bytes < 32768, "hist replay: its blocks hold the same bytes at every fold (1000 buckets)");
  /* the heap, measured: 48 hours (two folds more) take no more than 12 */
  int f12 = 0, f48 = 0;
  int64_t b12 = 0, b48 = 0, g12 = histHeapGrowth(12, &f12, &b12), g48 = histHeapGrowth(48, &f48, &b48);
  printf("# hist heap: 12 h (%d folds) grew the heap by %lld bytes at most, 48 h (%d folds) by %lld; the histogram holds %lld\n",
         f12, (long long)g12, f48, (long long)g48, (long long)b48);
  CHECK(g12 >= 0 && g48 >= 0 && f48 == f12 + 2 && b48 == b12 && g48 <= g12 + 4096,
        "hist replay: the heap over 48 hours grows no more than over 12 (flat)");
  /* the rows are the recording's values; every bucket is their direct sum */
  int vals = rows.n > 0;
  for (int64_t k = 0; k < rows.n; k++) vals &= rows.v[k] == loadAt(rows.at[k] / TQ_SEC);
  CHECK(vals, "hist replay: every sample is the recording's value then");
  int direct = h.added == rows.n;
  for (int b = 0; b < 1000 && direct; b++) {
    int64_t c = 0;
    double sum = 0;
    for (int64_t k = 0; k < rows.n; k++)
      if (rows.at[k] >= h.start + b * h.width && rows.at[k] < h.start + (b + 1) * h.width) c++, sum += (double)rows.v[k];
    direct &= h.count[b] == c && h.sum[b] == sum;
  }
  CHECK(direct, "hist replay: every bucket equals the direct computation over the rows");
  /* the samples follow the width: after each fold they are width/4 apart */
  int64_t last = rows.n ? rows.at[rows.n - 1] : 0, gaps = 0, wrong = 0;
  for (int64_t k = rows.n - 1; k > 0 && rows.at[k - 1] >= last - 3 * 3600 * TQ_SEC; k--, gaps++)
    wrong += rows.at[k] - rows.at[k - 1] != h.sample_period;
  CHECK(slowed && h.sample_period == h.width / 4 && gaps > 100 && wrong == 0,
        "hist replay: the sampling interval followed the bucket width (a quarter of it)");
  CHECK(rows.n < end / 4, "hist replay: fewer samples as the session goes on");
  printf("# hist replay: %lld samples over %lld h, width %lld s after %d folds, sampled every %lld s, %lld bytes\n",
         (long long)rows.n, (long long)hours, (long long)(h.width / TQ_SEC), h.folds, (long long)(h.sample_period / TQ_SEC),
         (long long)bytes);
  tq_finish(e);
  free(rows.at);
  free(rows.v);
  tmpRunRemove(&tr);
}

/* Two queries of a session never share a table of its store: SQLite's
** table names ignore case, and a query "x" with results b and c makes
** tables x_b and x_c.  Sharing one, their rows were mixed, and removing
** one dropped the table under the other. */
static void testSessionTables(void) {
  TmpRun tr;
  if (tmpRunMake(&tr, "tables", LOAD_SENSORS)) {
    CHECK(0, "session tables: a temporary folder");
    return;
  }
  FILE *f = fopen(tr.rec, "w");
  fputs("0:00:00 Machine+ M1\n0:00:00 Load+ M1 1\n0:00:10 Load- M1 1\n", f);
  fclose(f);
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  const char *one = "range of L is Load\nretrieve (L.Value)\n";
  const char *two = "range of L is Load\nretrieve b (L.Value)\nretrieve c (L.Machine)\n";
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 &&
           tq_set_option(e, "session-db", tr.db) == 0 && tq_prepare(e, 1, files) == 0 && tq_query_add(e, "Q", "q.tq", one, 0) == 0;
  CHECK(ok, "session tables: the first query");
  if (!ok) printf("# %s\n", tq_errors(e));
  int caseRefused = ok && tq_query_add(e, "q", "q2.tq", one, 0) != 0;
  CHECK(caseRefused && strstr(tq_errors(e), "table"), "session tables: a query whose table differs only in case is refused");
  int partRefused = ok && tq_query_add(e, "x_b", "x1.tq", one, 0) == 0 && tq_query_add(e, "x", "x2.tq", two, 0) != 0;
  CHECK(partRefused, "session tables: a query whose result's table is another query's is refused");
  CHECK(ok && tq_query_add(e, "y", "y.tq", two, 0) == 0, "session tables: a query of tables of its own is added");
  if (ok) tq_end(e);
  tq_finish(e);
  tmpRunRemove(&tr);
}

/* ---------------------------------------------------------------- kept records: catching up */

static const char *CATCH_SENSORS =
    "clock 1s;\n"
    "entity Proc;\n"
    "interval Busy (P: Proc performer, K: int) traced on performer;\n"
    "event Ping (P: Proc initiator, N: int) traced on initiator;\n"
    "interval Load (P: Proc performer, V: int) sampled on performer;\n";

/* A query reading all three kinds of relation on one process: traced
** intervals, events (and a cumulative count of them), samples. */
static char *catchQuery(const char *proc) {
  return tqMprintf("range of B is Busy\nrange of G is Ping\nrange of L is Load\n"
                   "retrieve into BA (B.P, B.K) where B.P = \"%s\"\n"
                   "retrieve into GA (G.P, G.N) where G.P = \"%s\"\n"
                   "retrieve into LA (L.P, L.V) where L.P = \"%s\"\n"
                   "retrieve into Mine (G.N) where G.P = \"%s\"\n"
                   "range of M is Mine\n"
                   "retrieve into CA (C = count(M.N for ever))\n",
                   proc, proc, proc, proc);
}

/* Writes a recording of `secs` seconds: P1 and P2 busy by turns (each
** Busy interval 3 s, one a process every 5 s), a Ping of each every
** `ping` seconds, their Load changing every 7 s. */
static void catchRecording(const char *path, int secs, int ping) {
  FILE *f = fopen(path, "w");
  fputs("0:00:00 Proc+ P1\n0:00:00 Proc+ P2\n0:00:00 Load+ P1 1\n0:00:00 Load+ P2 1\n", f);
  for (int t = 1; t < secs; t++) {
    char ts[32];
    snprintf(ts, sizeof ts, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    for (int p = 1; p <= 2; p++) {
      if ((t + 2 * p) % 5 == 0) fprintf(f, "%s Busy+ P%d %d\n", ts, p, t);
      if ((t + 2 * p) % 5 == 3 && t > 3) fprintf(f, "%s Busy- P%d %d\n", ts, p, t - 3);
      if (t % ping == 0) fprintf(f, "%s Ping P%d %d\n", ts, p, t * 10 + p);
      if (t % 7 == 0) fprintf(f, "%s Load- P%d %d\n%s Load+ P%d %d\n", ts, p, (t - 7) / 7 % 5 + 1, ts, p, t / 7 % 5 + 1);
    }
  }
  fclose(f);
}

static int64_t sqlInt(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  if (v == -1) printf("# sql: %s: %s\n", sql, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return v;
}

/* The rows of table a and b (all their columns, phase included) differ
** in how many, where `cond` holds of them? */
static int64_t sqlDiff(sqlite3 *db, const char *a, const char *b, const char *cond) {
  char *q = tqMprintf("select (select count(*) from (select * from %s where %s except select * from %s where %s)) + "
                      "(select count(*) from (select * from %s where %s except select * from %s where %s))",
                      a, cond, b, cond, b, cond, a, cond);
  int64_t v = sqlInt(db, q);
  free(q);
  return v;
}

/* Reads snapshots of session e until its time reaches t (a replay passes
** over the records no query needs: a snapshot may cover seconds).  1, or 0
** when the run ended or failed first. */
static int readUntil(tq_engine *e, TqTime t) {
  tq_info in;
  while (!tq_get_info(e, &in) && in.now < t)
    if (tq_read_snapshot(e) <= 0) return 0;
  return 1;
}

/* A session over a text recording that begins with a query of Load only
** (Ping and Busy needed by none): G, a query of Ping added a minute in,
** answers every Ping after its addition.  The replay asked once what a
** relation needs, at its first record, and passed over Ping's records for
** the rest of the run: G had no row. */
static void testSessionTextNeeds(void) {
  TmpRun tr;
  if (tmpRunMake(&tr, "needs", CATCH_SENSORS)) {
    CHECK(0, "session needs: a temporary folder");
    return;
  }
  catchRecording(tr.rec, 120, 2);
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 &&
           tq_set_option(e, "session-db", tr.db) == 0 && tq_prepare(e, 1, files) == 0 &&
           tq_query_add(e, "L", "l.tq", "range of L is Load\nretrieve (L.V) where L.P = \"P1\"\n", 0) == 0;
  ok = ok && readUntil(e, 60 * TQ_SEC);
  ok = ok && tq_query_add(e, "G", "g.tq", "range of G is Ping\nretrieve into GA (G.P, G.N)\n", 0) == 0;
  TqTime gFrom = -1;
  const tq_query_info *qi;
  int n = ok ? tq_query_list(e, &qi) : 0;
  for (int i = 0; i < n; i++)
    if (!strcmp(qi[i].name, "G")) gFrom = qi[i].covers_from;
  int r = 1;
  while (ok && r > 0) r = tq_read_snapshot(e);
  if (!ok || r) printf("# %s\n", tq_errors(e));
  tq_end(e);
  tq_finish(e);
  /* the Pings after G's addition (those of its instant came before it):
  ** P1 and P2 at every even second < 120 */
  int64_t want = 0;
  for (int t = 2; t < 120; t += 2)
    if ((TqTime)t * TQ_SEC > gFrom) want += 2;
  sqlite3 *h = NULL;
  int64_t got = -1;
  /* (a query of one result stores it under the query's name) */
  if (ok && sqlite3_open_v2(tr.db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) got = sqlInt(h, "select count(*) from G");
  sqlite3_close(h);
  printf("# G covers from %lld: %lld Pings, %lld wanted\n", (long long)gFrom, (long long)got, (long long)want);
  CHECK(ok && r == 0 && gFrom > 30 * TQ_SEC && want > 50 && got == want,
        "session needs: a query of Ping added later answers every Ping from its addition");
  tmpRunRemove(&tr);
}

/* A session over a recording: A collects persistently from the start; B,
** the same query added a minute later, answers for the time before it
** was added, row for row as A (traced intervals, events, samples, a
** cumulative count); C, about P2, which nothing kept, answers from its
** addition and says why; D about P2, added after E (persistent collection
** of P2) began, answers from E's first kept sample. */
static void testSessionCatchUp(void) {
  TmpRun tr;
  if (tmpRunMake(&tr, "catch", CATCH_SENSORS)) {
    CHECK(0, "catch-up: a temporary folder");
    return;
  }
  catchRecording(tr.rec, 240, 2);
  char *q1 = catchQuery("P1"), *q2 = catchQuery("P2");
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 &&
           tq_set_option(e, "session-db", tr.db) == 0 && tq_prepare(e, 1, files) == 0 &&
           tq_query_add(e, "A", "a.tq", q1, TQ_QUERY_PERSIST_COLLECTION) == 0;
  CHECK(ok, "catch-up: the persistent-collection query");
  if (!ok) printf("# %s\n", tq_errors(e));
  for (int i = 0; ok && i < 60; i++) ok = tq_read_snapshot(e) > 0;
  const tq_query_info *qi;
  int n;
  ok = ok && tq_query_add(e, "B", "b.tq", q1, 0) == 0 && tq_query_add(e, "C", "c.tq", q2, 0) == 0;
  if (!ok) printf("# %s\n", tq_errors(e));
  TqTime aFrom = 0, bFrom = -1, bAdded = 0, cFrom = 0, cAdded = -1;
  n = tq_query_list(e, &qi);
  for (int i = 0; i < n; i++) {
    if (!strcmp(qi[i].name, "A")) aFrom = qi[i].covers_from;
    if (!strcmp(qi[i].name, "B")) bFrom = qi[i].covers_from, bAdded = qi[i].added;
    if (!strcmp(qi[i].name, "C")) cFrom = qi[i].covers_from, cAdded = qi[i].added, printf("# C: %s\n", qi[i].covers_note);
  }
  printf("# A covers from %lld; B added at %lld covers from %lld\n", (long long)aFrom, (long long)bAdded, (long long)bFrom);
  CHECK(ok && bFrom == aFrom && bAdded > bFrom + 30 * TQ_SEC, "catch-up: B added later covers from where A began");
  CHECK(ok && cFrom == cAdded, "catch-up: C, of what nothing kept, covers from its addition");
  for (int i = 0; ok && i < 30; i++) ok = tq_read_snapshot(e) > 0;
  ok = ok && tq_query_remove(e, "C") == 0; /* P2 is collected no more */
  for (int i = 0; ok && i < 30; i++) ok = tq_read_snapshot(e) > 0;
  ok = ok && tq_query_add(e, "E", "e.tq", q2, TQ_QUERY_PERSIST_COLLECTION) == 0;
  TqTime eAdded = 0, dFrom = 0, dAdded = 0;
  for (int i = 0; ok && i < 30; i++) ok = tq_read_snapshot(e) > 0;
  /* F reads the traced relations only: the enablings alone tell where
  ** the records of P2 were kept */
  char *q2t = tqMprintf("range of B is Busy\nrange of G is Ping\n"
                        "retrieve into BA (B.P, B.K) where B.P = \"P2\"\nretrieve into GA (G.P, G.N) where G.P = \"P2\"\n");
  ok = ok && tq_query_add(e, "D", "d.tq", q2, 0) == 0 && tq_query_add(e, "F", "f.tq", q2t, 0) == 0;
  free(q2t);
  TqTime fFrom = 0;
  n = tq_query_list(e, &qi);
  for (int i = 0; i < n; i++) {
    if (!strcmp(qi[i].name, "E")) eAdded = qi[i].added;
    if (!strcmp(qi[i].name, "D")) dFrom = qi[i].covers_from, dAdded = qi[i].added, printf("# D: %s\n", qi[i].covers_note);
    if (!strcmp(qi[i].name, "F")) fFrom = qi[i].covers_from;
  }
  printf("# E added at %lld; D added at %lld covers from %lld, F from %lld\n", (long long)eAdded, (long long)dAdded,
         (long long)dFrom, (long long)fFrom);
  CHECK(ok && dFrom == eAdded && fFrom == eAdded && dFrom < dAdded,
        "catch-up: D and F cover from where E began: P2 was collected before only while C ran (runs tried again further on)");
  int r = 1;
  while (ok && r > 0) r = tq_read_snapshot(e);
  CHECK(ok && r == 0, "catch-up: to the end");
  if (!ok) printf("# %s\n", tq_errors(e));
  tq_end(e);
  tq_finish(e);
  sqlite3 *h = NULL;
  ok = sqlite3_open_v2(tr.db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK;
  const char *res[4] = {"BA", "GA", "LA", "CA"};
  int same = ok, before = ok;
  for (int k = 0; k < 4 && ok; k++) {
    char a[16], b[16], cond[96];
    snprintf(a, sizeof a, "A_%s", res[k]);
    snprintf(b, sizeof b, "B_%s", res[k]);
    int64_t d = sqlDiff(h, a, b, "1");
    char *cnt = tqMprintf("select count(*) from %s", b);
    int64_t nb = sqlInt(h, cnt);
    free(cnt);
    snprintf(cond, sizeof cond, "select count(*) from %s where %s < %lld", b, k == 1 || k == 2 ? "valid_at" : "valid_from", (long long)bAdded);
    int64_t early = sqlInt(h, cond);
    printf("# %s: %lld rows, %lld before B was added, %lld differ from A's\n", res[k], (long long)nb, (long long)early, (long long)d);
    same &= d == 0 && nb > 3;
    before &= early > 2;
  }
  CHECK(same, "catch-up: B's rows are A's, row for row (intervals, events, samples, a count)");
  CHECK(before, "catch-up: B has rows from before it was added");
  /* D against E */
  int same2 = ok;
  for (int k = 0; k < 4 && ok; k++) {
    char a[16], b[16];
    snprintf(a, sizeof a, "E_%s", res[k]);
    snprintf(b, sizeof b, "D_%s", res[k]);
    int64_t d = sqlDiff(h, a, b, "1");
    if (d) printf("# D_%s: %lld rows differ from E's\n", res[k], (long long)d);
    same2 &= d == 0;
  }
  for (int k = 0; k < 2 && ok; k++) {
    char a[16], b[16];
    snprintf(a, sizeof a, "E_%s", res[k]);
    snprintf(b, sizeof b, "F_%s", res[k]);
    int64_t d = sqlDiff(h, a, b, "1");
    if (d) printf("# F_%s: %lld rows differ from E's\n", res[k], (long long)d);
    same2 &= d == 0;
  }
  CHECK(same2, "catch-up: D's and F's rows are E's");
  sqlite3_close(h);
  free(q1);
  free(q2);
  tmpRunRemove(&tr);
}

/* A relation kept, then no more, then again: what was enabled while it was
** kept the first time does not count for the second.  X (persistent
** collection of P2's traced relations) goes at 20 s while W keeps Load:
** Busy and Ping are no longer kept; Y (of P1's) keeps them again from 40 s;
** Z, of P2's, added at 60 s, finds nothing of P2 kept since 40 s and covers
** from its addition (taking X's enablings for live, it covered from 40 s
** with none of P2's records). */
static void testSessionKeptStop(void) {
  TmpRun tr;
  if (tmpRunMake(&tr, "stop", CATCH_SENSORS)) {
    CHECK(0, "kept again: a temporary folder");
    return;
  }
  catchRecording(tr.rec, 100, 2);
  const char *traced = "range of B is Busy\nrange of G is Ping\n"
                       "retrieve into BA (B.P, B.K) where B.P = \"%s\"\nretrieve into GA (G.P, G.N) where G.P = \"%s\"\n";
  char *x = tqMprintf(traced, "P2", "P2"), *y = tqMprintf(traced, "P1", "P1");
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 && tq_prepare(e, 1, files) == 0 &&
           tq_query_add(e, "W", "w.tq", "range of L is Load\nretrieve (L.V) where L.P = \"P1\"\n", TQ_QUERY_PERSIST_COLLECTION) == 0 &&
           tq_query_add(e, "X", "x.tq", x, TQ_QUERY_PERSIST_COLLECTION) == 0;
  ok = ok && readUntil(e, 20 * TQ_SEC);
  ok = ok && tq_query_remove(e, "X") == 0;
  ok = ok && readUntil(e, 40 * TQ_SEC);
  ok = ok && tq_query_add(e, "Y", "y.tq", y, TQ_QUERY_PERSIST_COLLECTION) == 0;
  ok = ok && readUntil(e, 60 * TQ_SEC);
  ok = ok && tq_query_add(e, "Z", "z.tq", x, 0) == 0;
  if (!ok) printf("# %s\n", tq_errors(e));
  const tq_query_info *qi;
  int n = tq_query_list(e, &qi);
  TqTime zFrom = -1, zAdded = 0;
  for (int i = 0; i < n; i++)
    if (!strcmp(qi[i].name, "Z")) zFrom = qi[i].covers_from, zAdded = qi[i].added, printf("# Z: %s\n", qi[i].covers_note);
  printf("# Z added at %lld covers from %lld\n", (long long)zAdded, (long long)zFrom);
  CHECK(ok && zFrom == zAdded && zAdded > 50 * TQ_SEC,
        "kept again: a relation kept anew forgets what was enabled before (Z of P2 covers from its addition)");
  if (ok) tq_end(e);
  tq_finish(e);
  free(x);
  free(y);
  tmpRunRemove(&tr);
}

/* The kept records within their bound (session-history 1M): the oldest
** go, and a query added late covers from the oldest kept, row for row as
** the query collecting from the start over that time. */
static void testSessionKeptBound(void) {
  TmpRun tr;
  if (tmpRunMake(&tr, "kept", CATCH_SENSORS)) {
    CHECK(0, "kept bound: a temporary folder");
    return;
  }
  /* 40 pings a second of each process for 900 s: some 2 MiB kept of P1's */
  FILE *f = fopen(tr.rec, "w");
  fputs("0:00:00 Proc+ P1\n0:00:00 Proc+ P2\n0:00:00 Load+ P1 1\n0:00:00 Load+ P2 1\n", f);
  for (int t = 1; t < 900; t++) {
    char ts[32];
    snprintf(ts, sizeof ts, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    for (int p = 1; p <= 2; p++) {
      if ((t + 2 * p) % 5 == 0) fprintf(f, "%s Busy+ P%d %d\n", ts, p, t);
      if ((t + 2 * p) % 5 == 3 && t > 3) fprintf(f, "%s Busy- P%d %d\n", ts, p, t - 3);
      for (int k = 0; k < 40; k++) fprintf(f, "%s Ping P%d %d\n", ts, p, t * 100 + k);
      if (t % 7 == 0) fprintf(f, "%s Load- P%d %d\n%s Load+ P%d %d\n", ts, p, (t - 7) / 7 % 5 + 1, ts, p, t / 7 % 5 + 1);
    }
  }
  fclose(f);
  char *q1 = catchQuery("P1");
  tq_engine *e = tq_init();
  const char *files[1] = {tr.sens};
  int ok = tq_register(e, "trace", tr.rec) == 0 && tq_set_option(e, "session", "1") == 0 &&
           tq_set_option(e, "session-db", tr.db) == 0 && tq_set_option(e, "session-history", "1M") == 0 &&
           tq_prepare(e, 1, files) == 0 && tq_query_add(e, "A", "a.tq", q1, TQ_QUERY_PERSIST_COLLECTION) == 0;
  CHECK(ok, "kept bound: the persistent-collection query");
  CHECK(tq_set_option(e, "session-history", "1000") != 0 && strstr(tq_errors(e), "needs a size of at least 1M"),
        "kept bound: a bound below 1M is refused");
  /* C2 about P2 (traced relations only) from the 780th second: F, the
  ** same added later, covers from there, and not from the oldest kept
  ** record, where P2's sensors were not enabled */
  char *q2t = tqMprintf("range of B is Busy\nrange of G is Ping\n"
                        "retrieve into BA (B.P, B.K) where B.P = \"P2\"\nretrieve into GA (G.P, G.N) where G.P = \"P2\"\n");
  int64_t most = 0, bound = 0, dropped = 0;
  for (int i = 0; ok && i < 800; i++) {
    if (i == 780) ok = tq_query_add(e, "C2", "c2.tq", q2t, 0) == 0;
    ok = ok && tq_read_snapshot(e) > 0;
    const char *j = tq_session_json(e), *k = strstr(j, "\"kept\": {\"bytes\": ");
    if (!k) continue;
    int64_t b = atoll(k + strlen("\"kept\": {\"bytes\": "));
    if (b > most) most = b;
    bound = atoll(strstr(k, "\"bound\": ") + 9);
    dropped = atoll(strstr(k, "\"dropped\": ") + 11);
  }
  printf("# kept: at most %lld bytes of a bound of %lld; %lld records dropped\n", (long long)most, (long long)bound,
         (long long)dropped);
  CHECK(ok && bound == 1 << 20 && most > 0 && most <= bound && dropped > 10000,
        "kept bound: the kept records stay within the bound, the oldest dropped");
  ok = ok && tq_query_add(e, "B", "b.tq", q1, 0) == 0 && tq_query_add(e, "F", "f.tq", q2t, 0) == 0;
  free(q2t);
  const tq_query_info *qi;
  int n = tq_query_list(e, &qi);
  TqTime bFrom = 0, bAdded = 0, c2Added = 0, fFrom = 0;
  for (int i = 0; i < n; i++) {
    if (!strcmp(qi[i].name, "B")) bFrom = qi[i].covers_from, bAdded = qi[i].added;
    if (!strcmp(qi[i].name, "C2")) c2Added = qi[i].added;
    if (!strcmp(qi[i].name, "F")) fFrom = qi[i].covers_from;
  }
  printf("# B added at %lld covers from %lld; C2 added at %lld, F covers from %lld\n", (long long)bAdded, (long long)bFrom,
         (long long)c2Added, (long long)fFrom);
  CHECK(ok && bFrom > 300 * TQ_SEC && bFrom < bAdded - 5 * TQ_SEC, "kept bound: B covers from the oldest kept record");
  CHECK(ok && fFrom == c2Added, "kept bound: F covers from where P2's sensors were enabled (C2's addition)");
  int r = 1;
  while (ok && r > 0) r = tq_read_snapshot(e);
  tq_end(e);
  tq_finish(e);
  sqlite3 *h = NULL;
  ok = ok && sqlite3_open_v2(tr.db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK;
  char cond[128];
  snprintf(cond, sizeof cond, "valid_at >= %lld", (long long)bFrom);
  int64_t dg = ok ? sqlDiff(h, "A_GA", "B_GA", cond) : -1, dl = ok ? sqlDiff(h, "A_LA", "B_LA", cond) : -1;
  snprintf(cond, sizeof cond, "coalesce(valid_to, %lld) >= %lld", (long long)TQ_FOREVER, (long long)bFrom);
  int64_t db2 = ok ? sqlDiff(h, "A_BA", "B_BA", cond) : -1;
  int64_t ng = ok ? sqlInt(h, "select count(*) from B_GA") : 0;
  printf("# B's rows against A's from where B covers: %lld events (%lld differ), %lld samples differ, %lld intervals differ\n",
         (long long)ng, (long long)dg, (long long)dl, (long long)db2);
  CHECK(ok && dg == 0 && dl == 0 && db2 == 0 && ng > 1000, "kept bound: B's rows are A's from where B covers");
  int64_t df = ok ? sqlDiff(h, "C2_GA", "F_GA", "1") + sqlDiff(h, "C2_BA", "F_BA", "1") : -1;
  CHECK(ok && df == 0, "kept bound: F's rows are C2's");
  sqlite3_close(h);
  free(q1);
  tmpRunRemove(&tr);
}

/* ---------------------------------------------------------------- text read in parts */

/* The text parsed a part at a time from a file (what the replay does) and
** whole from memory: the same records, or the same messages. */
typedef struct PartsRun {
  char *err;     /* the messages (NULL: none) */
  char *records; /* the records, one a line */
} PartsRun;

static void partsRecords(const SnsTrace *t, TqBuf *b) {
  for (int64_t i = 0; t && i < snsTracePackets(t); i++) {
    tq_record r;
    snsTraceRecord(t, i, &r);
    tqBufPrintf(b, "%d %d %lld %lld %lld", r.rel, r.kind, (long long)r.t, (long long)r.from, (long long)r.to);
    for (int k = 0; k < r.nvals; k++) tqBufPrintf(b, " %lld", (long long)r.vals[k]);
    tqBufPuts(b, "\n");
  }
}

/* Parses text (n bytes) in parts (whole: from memory, when no bound) with
** lines of at most maxLine bytes. */
static PartsRun partsRun(CpProgram *p, const char *text, size_t n, size_t maxLine, int whole) {
  TqDiag d = {0};
  SnsTrace *t;
  if (whole) {
    t = snsTraceParse(tqSourceFromString("x.trace", text), p, &d);
  } else {
    FILE *f = tmpfile();
    fwrite(text, 1, n, f);
    rewind(f);
    char head[16]; /* (the replay reads a file's first bytes to tell its format) */
    size_t nhead = fread(head, 1, sizeof head, f);
    t = snsTraceParseFile(f, "x.trace", head, nhead, maxLine, p, NULL, NULL, NULL, &d);
    fclose(f);
  }
  TqBuf b = {0};
  partsRecords(t, &b);
  tqBufPuts(&b, "");
  PartsRun r = {d.out.s ? tqStrdup(d.out.s) : NULL, b.s};
  snsTraceFree(t);
  tqDiagFree(&d);
  return r;
}

/* The message of text refused whole (a NUL byte, a line over maxLine), in
** parts and as reading the whole file first gave it: the same, and
** nothing else.  1 when so. */
static int partsRefused(CpProgram *p, const char *text, size_t n, size_t maxLine, const char *what) {
  PartsRun a = partsRun(p, text, n, maxLine, 0);
  FILE *f = tmpfile();
  fwrite(text, 1, n, f);
  rewind(f);
  TqDiag dw = {0};
  TqSource *src = tqSourceReadFile(f, "x.trace", NULL, 0, maxLine, &dw);
  fclose(f);
  int ok = !src && a.err && dw.out.s && !strcmp(a.err, dw.out.s) && strstr(a.err, what) && !*a.records;
  if (!ok) printf("# in parts:\n%s# whole:\n%s", a.err ? a.err : "(none)\n", dw.out.s ? dw.out.s : "(none)\n");
  tqSourceFree(src);
  tqDiagFree(&dw);
  free(a.err), free(a.records);
  return ok;
}

/* Makes text's bytes [at - 10, at + 10) a line of their own, a bad one
** (its time is not one) when bad. */
static void lineAcross(char *text, size_t at, int bad) {
  text[at - 11] = '\n';
  memset(text + at - 10, ' ', 20);
  memcpy(text + at - 10, bad ? "x12345 Ping" : "# comment", bad ? 11 : 9);
  text[at + 10] = '\n';
}

static void testTextParts(void) {
  TqDiag d = {0};
  CpProgram *p = compileStr(SENSORS, &d);
  if (!p) {
    CHECK(0, "text in parts: sensors compile");
    return;
  }
  /* the parts' ends in the file: its first 16 bytes are read first (to
  ** tell its form), then parts */
  const size_t P1 = 16 + SNS_TEXT_PART, P2 = P1 + SNS_TEXT_PART, P4 = P2 + 2 * SNS_TEXT_PART;
  /* four parts and more: lines of every length across the parts' ends, a
  ** comment longer than two parts from the middle of the second (the
  ** buffer grows), the last line without its '\n' */
  TqBuf tr = {0};
  for (int i = 1; i <= 50; i++) tqBufPrintf(&tr, "0 Process+ P%d Ready\n0 Mailbox+ M%d\n", i, i);
  int longDone = 0;
  for (int i = 1; tr.n < 5 * (size_t)SNS_TEXT_PART; i++) {
    int pr = 1 + i % 50;
    tqBufPrintf(&tr, "%d Load+ P%d %d\n%d SendMessage P%d M%d\n", 10 * i, pr, i * 7919 % 100000, 10 * i + 1, pr,
                1 + i % 13);
    if (i % 997 == 0) tqBufPrintf(&tr, "\n# %*s\n", i % 5000, "");
    if (!longDone && tr.n > P1 + SNS_TEXT_PART / 2) {
      tqBufPuts(&tr, "#");
      for (int k = 0; k < 2 * SNS_TEXT_PART + 100; k++) tqBufPuts(&tr, "x");
      tqBufPuts(&tr, "\n");
      longDone = 1;
    }
    tqBufPrintf(&tr, "%d Load- P%d %d", 10 * i + 5, pr, i * 7919 % 100000);
    if (tr.n < 5 * (size_t)SNS_TEXT_PART) tqBufPuts(&tr, "\n");
  }
  PartsRun a = partsRun(p, tr.s, tr.n, 1 << 20, 0), b = partsRun(p, tr.s, tr.n, 0, 1);
  CHECK(!a.err && !b.err && strlen(a.records) > 1000, "text in parts: parsed without error");
  CHECK(!strcmp(a.records, b.records), "text in parts: the records of the whole text");
  free(a.err), free(a.records), free(b.err), free(b.records);

  /* bad lines across the first part's end and a later one's (their times
  ** made bad): the messages of the whole text (line, column, the line
  ** shown, the caret) */
  char *bad = tqMalloc(tr.n + 1);
  memcpy(bad, tr.s, tr.n + 1);
  lineAcross(bad, P1, 1);
  lineAcross(bad, P4, 1);
  a = partsRun(p, bad, tr.n, 1 << 20, 0), b = partsRun(p, bad, tr.n, 0, 1);
  CHECK(a.err && b.err && !strcmp(a.err, b.err) && strstr(a.err, "x.trace:") && strstr(a.err, "^") &&
            strstr(strstr(a.err, "malformed time 'x12345'") + 1, "malformed time 'x12345'"),
        "text in parts: bad lines across parts' ends: the whole text's messages");
  CHECK(!*a.records, "text in parts: a bad line keeps no record");
  if (a.err && b.err && strcmp(a.err, b.err)) printf("# in parts:\n%s# whole:\n%s", a.err, b.err);
  free(a.err), free(a.records), free(b.err), free(b.records);

  /* refused whole, as reading the whole file first refused it */
  memcpy(bad, tr.s, tr.n + 1);
  bad[P2 + 77] = 0;
  CHECK(partsRefused(p, bad, tr.n, 1 << 20, "NUL byte"), "text in parts: a NUL byte in a later part");
  memcpy(bad, tr.s, tr.n + 1);
  lineAcross(bad, P1, 0);
  bad[P1 + 3] = 0; /* (in a line begun in the part before) */
  CHECK(partsRefused(p, bad, tr.n, 1 << 20, "NUL byte"), "text in parts: a NUL byte in a carried line");
  memcpy(bad, tr.s, tr.n + 1);
  for (int k = 0; k < 30; k++) lineAcross(bad, 4000 + 200 * (size_t)k, 1); /* (more than 20 bad lines) */
  bad[P2 + 5] = 0;
  CHECK(partsRefused(p, bad, tr.n, 1 << 20, "NUL byte"), "text in parts: a NUL byte after 30 bad lines: its one message");
  memcpy(bad, tr.s, tr.n + 1);
  lineAcross(bad, P1 + 20, 0);
  memset(bad + P1 + 10, '#', 5000); /* (from the second part's start) */
  CHECK(partsRefused(p, bad, tr.n, 4000, "longer than"), "text in parts: a line over the bound, whole in a part");
  memcpy(bad, tr.s, tr.n + 1);
  lineAcross(bad, P1 - 5000, 0);
  memset(bad + P1 - 5010, '#', 10000); /* (5010 of it carried: over the bound at the part's end) */
  CHECK(partsRefused(p, bad, tr.n, 4000, "longer than"), "text in parts: a line over the bound at a part's end");
  memcpy(bad, tr.s, tr.n + 1);
  lineAcross(bad, P1 + 100, 0);
  memset(bad + P1 + 90, '#', 4500);
  bad[P1 + 90 + 4200] = 0;
  CHECK(partsRefused(p, bad, tr.n, 4000, "longer than"), "text in parts: a NUL byte past the bound: the line is over it");
  free(bad);
  tqBufFree(&tr);
  cpProgramFree(p);
  tqDiagFree(&d);
}

int main(void) {
  testMapChurn();
  testFloatFormat();
  testCatalogNames();
  testCrc32c();
  testTime();
  testLexer();
  testParser();
  testTemporal();
  testOperators();
  testIntersect();
  testFusedChain();
  testCmpRange();
  testRulePreconditions();
  testOverlapProduct();
  testAggTimely();
  testDenseKeys();
  testMemory();
  testDenseBound();
  testHistAlone();
  testHistFold();
  testSessionTables();
  testSessionCatchUp();
  testSessionTextNeeds();
  testSessionKeptStop();
  testSessionKeptBound();
  testTextParts();
  printf("%d tests, %d failed\n", ntest, nfail);
  return nfail ? 1 : 0;
}
