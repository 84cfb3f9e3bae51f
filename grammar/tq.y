/*
** tq.y - lemon grammar of the tqmon language: sensor configuration,
** TQuel queries and display specifications (docs/language.md).
**
** Actions are one to three lines that call AST constructors; all meaning
** is decided later by the semantic pass.  One expression nonterminal serves
** where, when, valid and target lists (the semantic pass types it), which
** keeps the grammar LALR(1) without conflicts: a conflict fails the build.
*/
%name grParser
%token_prefix TK_
%token_type {GrToken}
%extra_argument {GrParse *ps}
%default_type {AstNode *}
%start_symbol program

%include {
#include <assert.h>
#include <string.h>
#include <stdlib.h>
#include "grammarInt.h"

#define MK(kind, tok) astNew(ps->arena, (kind), (tok).loc)
#define STR(tok) tqArenaStrndup(ps->arena, (tok).z, (size_t)(tok).n)
/* Sets n's depth from its children's (lists included) and refuses a tree
** deeper than AST_MAX_DEPTH, at n's operator: `a and b and ...` is as deep
** as it is long, and every later pass recurses over it. */
static AstNode *deep(GrParse *ps, AstNode *n) {
  int d = 0;
  for (int i = 0; i < 4; i++)
    for (const AstNode *x = n->k[i]; x; x = x->next)
      if ((x->depth ? x->depth : 1) > d) d = x->depth ? x->depth : 1;
  n->depth = n->kind == AST_OPT ? d : d + 1; /* an aggregate's clause is no level of its own */
  if (n->depth > AST_MAX_DEPTH && !ps->failed) {
    tqError(ps->diag, n->loc, "expression nested too deeply: more than %d operators in a chain or nested here (split it into smaller expressions)",
            AST_MAX_DEPTH);
    ps->failed = 1;
  }
  return n;
}
static AstNode *mkBin(GrParse *ps, GrToken op, int code, AstNode *l, AstNode *r) {
  AstNode *n = MK(AST_BIN, op);
  n->op = code;
  n->k[0] = l;
  n->k[1] = r;
  return deep(ps, n);
}
static AstNode *mk2(GrParse *ps, AstKind kind, GrToken op, AstNode *l, AstNode *r) {
  AstNode *n = MK(kind, op);
  n->k[0] = l;
  n->k[1] = r;
  return deep(ps, n);
}
static AstNode *mk1(GrParse *ps, AstKind kind, GrToken op, AstNode *e) { return mk2(ps, kind, op, e, NULL); }
static AstNode *mkOpt(GrParse *ps, GrToken t, int op, int op2, int64_t i, AstNode *k0) {
  AstNode *n = MK(AST_OPT, t);
  n->op = op;
  n->op2 = op2;
  n->i = i;
  n->k[0] = k0;
  return deep(ps, n);
}
static const char *unquote(GrParse *ps, GrToken t) {
  char *s = tqArenaAlloc(ps->arena, (size_t)t.n);
  int j = 0;
  for (int i = 1; i < t.n - 1; i++) {
    if (t.z[i] == '\\' && i + 1 < t.n - 1) {
      i++;
      s[j++] = t.z[i] == 'n' ? '\n' : t.z[i] == 't' ? '\t' : t.z[i];
    } else {
      s[j++] = t.z[i];
    }
  }
  s[j] = 0;
  return s;
}
static int64_t parseInt(GrParse *ps, GrToken t) {
  int64_t v = 0;
  for (int i = 0; i < t.n; i++) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, t.z[i] - '0', &v)) {
      tqError(ps->diag, t.loc, "integer constant %.*s is too large", t.n, t.z);
      return 0;
    }
  }
  return v;
}
static int64_t parseTime(GrParse *ps, GrToken t) {
  TqTime v = 0;
  int rc = tqTimeParse(t.z, (size_t)t.n, &v);
  if (rc == -2)
    tqError(ps->diag, t.loc, "time constant '%.*s' is too large (times are 64-bit nanosecond counts, at most about 2562047h)",
            t.n, t.z);
  else if (rc)
    tqError(ps->diag, t.loc, "malformed time constant '%.*s' (expected h:mm:ss[.fraction] with minutes and seconds 00 to 59)",
            t.n, t.z);
  return v;
}
void grSyntaxError(GrParse *ps, void *parser, int major, GrToken tok);
}

%syntax_error {
  grSyntaxError(ps, yypParser, yymajor, yyminor);
}
%stack_overflow {
  tqError(ps->diag, ps->at, "expression nested too deeply: the parser's stack is full here (fewer parentheses or operators)");
  ps->failed = 1;
}
%stack_size 4000

/* Keywords that may also be used as names where no keyword is expected. */
%fallback ID PERFORMER INITIATOR TARGET COUNTER KEY CLOCK ENTITY EVENT INTERVAL
             TRACED SAMPLED DISABLE INSTANT EVER EACH ALL AGG DELTA MONITOR PROGRAMS COST RATE ONCE.

%left OR.
%left AND.
%right NOT.
%nonassoc EQ NE LT LE GT GE PRECEDE EQUAL LIKE.
%left OVERLAP EXTEND.
%left PLUS MINUS CONCAT.
%left STAR SLASH.
%right BEGIN END UMINUS.

program ::= stmts.

stmts ::= .
stmts ::= stmts stmt(S).          { astAppendTail(&ps->stmts, &ps->stmtsTail, S); }
stmts ::= stmts SEMI.

/* ---------------------------------------------------------- sensor configuration */
stmt(A) ::= CLOCK(T) DURATION(D).   { A = MK(AST_CLOCK, T); A->i = parseTime(ps, D); A->loc2 = D.loc; }
stmt(A) ::= CLOCK(T) INTEGER(D).    { A = MK(AST_CLOCK, T); A->i = parseTime(ps, D); A->loc2 = D.loc; }
stmt(A) ::= ENTITY(T) ID(N) attrsopt(L). { A = MK(AST_ENTITY, T); A->s = STR(N); A->k[0] = L; A->loc2 = N.loc; }
stmt(A) ::= EVENT(T) ID(N) LP attrs(L) RP relopts(O).
                                     { A = MK(AST_REL, T); A->s = STR(N); A->op = REL_EVENT; A->k[0] = L; A->k[1] = O; A->loc2 = N.loc; }
stmt(A) ::= INTERVAL(T) ID(N) LP attrs(L) RP relopts(O).
                                     { A = MK(AST_REL, T); A->s = STR(N); A->op = REL_INTERVAL; A->k[0] = L; A->k[1] = O; A->loc2 = N.loc; }

attrsopt(A) ::= .                    { A = NULL; }
attrsopt(A) ::= LP attrs(L) RP.      { A = L; }
attrs(A) ::= attr(X).                { A = X; }
attrs(A) ::= attrs(L) COMMA attr(X). { A = astAppend(L, X); }
attr(A) ::= ID(N) COLON type(T) role(R). { A = MK(AST_ATTR, N); A->s = STR(N); A->k[0] = T; A->op = R; }

type(A) ::= INT(T).                  { A = MK(AST_TYPE, T); A->op = AT_INT; }
type(A) ::= FLOAT(T).                { A = MK(AST_TYPE, T); A->op = AT_FLOAT; }
type(A) ::= STRING(T).               { A = MK(AST_TYPE, T); A->op = AT_STRING; }
type(A) ::= ENUM(T) LP ids(L) RP.    { A = MK(AST_TYPE, T); A->op = AT_ENUM; A->k[0] = L; }
type(A) ::= ID(T).                   { A = MK(AST_TYPE, T); A->op = AT_NAMED; A->s = STR(T); }

%type role {int}
role(A) ::= .                        { A = ROLE_NONE; }
role(A) ::= PERFORMER.               { A = ROLE_PERFORMER; }
role(A) ::= INITIATOR.               { A = ROLE_INITIATOR; }
role(A) ::= TARGET.                  { A = ROLE_TARGET; }

ids(A) ::= ID(N).                    { A = MK(AST_ID, N); A->s = STR(N); }
ids(A) ::= ids(L) COMMA ID(N).       { AstNode *x = MK(AST_ID, N); x->s = STR(N); A = astAppend(L, x); }

relopts(A) ::= .                     { A = NULL; }
relopts(A) ::= relopts(L) relopt(X). { A = astAppend(L, X); }
relopt(A) ::= TRACED(T) ON role(R).  { A = mkOpt(ps, T, OPT_MODE, MODE_TRACED, R, NULL); }
relopt(A) ::= SAMPLED(T) ON role(R). { A = mkOpt(ps, T, OPT_MODE, MODE_SAMPLED, R, NULL); }
relopt(A) ::= DISABLE(T) TRACED ON role(R). { A = mkOpt(ps, T, OPT_MODE, MODE_DISABLE, R, NULL); }
relopt(A) ::= COUNTER INTEGER(N).    { A = mkOpt(ps, N, OPT_COUNTER, 0, parseInt(ps, N), NULL); }
relopt(A) ::= KEY(T) LP ids(L) RP.   { A = mkOpt(ps, T, OPT_KEY, 0, 0, L); }
relopt(A) ::= COST(T) DURATION(D).  { A = mkOpt(ps, T, OPT_COST, 0, parseTime(ps, D), NULL); A->loc2 = D.loc; }
relopt(A) ::= COST(T) INTEGER(D).   { A = mkOpt(ps, T, OPT_COST, 0, parseInt(ps, D), NULL); A->loc2 = D.loc; }
/* cost NAME from "FILE": the figure NAME of a costs file (make bench writes
** build/bench/costs.txt: what it measured) */
relopt(A) ::= COST(T) ID(N) FROM STRINGLIT(F). { A = mkOpt(ps, T, OPT_COST, 0, 0, NULL); A->s = STR(N); A->s2 = unquote(ps, F); A->loc2 = N.loc; }
relopt(A) ::= ONCE(T).              { A = mkOpt(ps, T, OPT_ONCE, 0, 0, NULL); }
relopt(A) ::= RATE(T) INTEGER(N).   { A = mkOpt(ps, T, OPT_RATE, 0, parseInt(ps, N), NULL); A->loc2 = N.loc; }
relopt(A) ::= DELTA(T) ID(N).        { A = mkOpt(ps, T, OPT_DELTA, 0, 0, NULL); A->s = STR(N); A->loc2 = N.loc; }

/* monitor programs "db*", "httpd": only processes whose command matches one
** of the patterns become entities of the live sources */
stmt(A) ::= MONITOR(T) PROGRAMS strs(L). { A = MK(AST_PROGRAMS, T); A->k[0] = L; }
strs(A) ::= STRINGLIT(S).            { A = MK(AST_STR, S); A->s = unquote(ps, S); }
strs(A) ::= strs(L) COMMA STRINGLIT(S). { AstNode *x = MK(AST_STR, S); x->s = unquote(ps, S); A = astAppend(L, x); }

/* ---------------------------------------------------------- TQuel */
stmt(A) ::= RANGE(T) OF ID(V) IS ID(R).  { A = MK(AST_RANGE, T); A->s = STR(V); A->s2 = STR(R); A->loc = R.loc; }
stmt(A) ::= RANGE(T) OF ID(V) IS ID(R) LB INTEGER(N) RB.
                                     { A = MK(AST_RANGE, T); A->s = STR(V); A->s2 = STR(R); A->i = parseInt(ps, N); A->op = 1; A->loc = R.loc; }

stmt(A) ::= RETRIEVE(T) into(N) LP targets(L) RP clauses(C).
                                     { A = C; A->loc = T.loc; A->s = N ? N->s : NULL; A->loc2 = N ? N->loc : T.loc; A->k[0] = L; }
into(A) ::= .                        { A = NULL; }
into(A) ::= INTO ID(N).              { A = MK(AST_ID, N); A->s = STR(N); }
into(A) ::= ID(N).                   { A = MK(AST_ID, N); A->s = STR(N); }

targets(A) ::= target(X).            { A = X; }
targets(A) ::= targets(L) COMMA target(X). { A = astAppend(L, X); }
target(A) ::= ID(N) EQ expr(E).      { A = MK(AST_TARGET, N); A->s = STR(N); A->k[0] = E; }
target(A) ::= ID(V) DOT ID(N).       { A = MK(AST_TARGET, V); A->k[0] = MK(AST_COL, V); A->k[0]->s = STR(V); A->k[0]->s2 = STR(N); }
target(A) ::= ID(V) DOT ALL.         { A = MK(AST_TARGET, V); A->op = 1; A->k[0] = MK(AST_NAME, V); A->k[0]->s = STR(V); }

/* The clauses of a retrieve, in any order; the node collects them. */
clauses(A) ::= .                     { GrToken t = {0}; A = astNew(ps->arena, AST_RETRIEVE, t.loc); }
clauses(A) ::= clauses(C) VALID(T) AT expr(E).
                                     { A = C; AstNode *v = MK(AST_VALID, T); v->op = VALID_AT; v->k[0] = E; v->next = A->k[1]; A->k[1] = v; }
clauses(A) ::= clauses(C) VALID(T) FROM expr(E) TO expr(F).
                                     { A = C; AstNode *v = mk2(ps, AST_VALID, T, E, F); v->op = VALID_FROMTO; v->next = A->k[1]; A->k[1] = v; }
clauses(A) ::= clauses(C) WHERE(T) expr(E).
                                     { A = C; AstNode *v = mkOpt(ps, T, OPT_WHERE, 0, 0, E); v->next = A->k[2]; A->k[2] = v; }
clauses(A) ::= clauses(C) WHEN(T) expr(E).
                                     { A = C; AstNode *v = mkOpt(ps, T, OPT_WHEN, 0, 0, E); v->next = A->k[3]; A->k[3] = v; }

/* ---------------------------------------------------------- expressions */
expr(A) ::= expr(L) OR(T) expr(R).   { A = mkBin(ps, T, OPB_OR, L, R); }
expr(A) ::= expr(L) AND(T) expr(R).  { A = mkBin(ps, T, OPB_AND, L, R); }
expr(A) ::= NOT(T) expr(E).          { A = mk1(ps, AST_NOT, T, E); }
expr(A) ::= expr(L) EQ(T) expr(R).   { A = mkBin(ps, T, OPB_EQ, L, R); }
expr(A) ::= expr(L) NE(T) expr(R).   { A = mkBin(ps, T, OPB_NE, L, R); }
expr(A) ::= expr(L) LT(T) expr(R).   { A = mkBin(ps, T, OPB_LT, L, R); }
expr(A) ::= expr(L) LE(T) expr(R).   { A = mkBin(ps, T, OPB_LE, L, R); }
expr(A) ::= expr(L) GT(T) expr(R).   { A = mkBin(ps, T, OPB_GT, L, R); }
expr(A) ::= expr(L) GE(T) expr(R).   { A = mkBin(ps, T, OPB_GE, L, R); }
expr(A) ::= expr(L) PLUS(T) expr(R). { A = mkBin(ps, T, OPB_ADD, L, R); }
expr(A) ::= expr(L) MINUS(T) expr(R). { A = mkBin(ps, T, OPB_SUB, L, R); }
expr(A) ::= expr(L) STAR(T) expr(R). { A = mkBin(ps, T, OPB_MUL, L, R); }
expr(A) ::= expr(L) SLASH(T) expr(R). { A = mkBin(ps, T, OPB_DIV, L, R); }
expr(A) ::= MINUS(T) expr(E). [UMINUS] { A = mk1(ps, AST_NEG, T, E); }
expr(A) ::= expr(L) PRECEDE(T) expr(R). { A = mk2(ps, AST_PRECEDE, T, L, R); }
expr(A) ::= expr(L) EQUAL(T) expr(R). { A = mk2(ps, AST_EQUAL, T, L, R); }
expr(A) ::= expr(L) LIKE(T) expr(R). { A = mk2(ps, AST_LIKE, T, L, R); }
expr(A) ::= expr(L) CONCAT(T) expr(R). { A = mk2(ps, AST_CONCAT, T, L, R); }
expr(A) ::= expr(L) OVERLAP(T) expr(R). { A = mk2(ps, AST_OVERLAP, T, L, R); }
expr(A) ::= expr(L) EXTEND(T) expr(R). { A = mk2(ps, AST_EXTEND, T, L, R); }
expr(A) ::= BEGIN(T) OF expr(E).     { A = mk1(ps, AST_BEGINOF, T, E); }
expr(A) ::= END(T) OF expr(E).       { A = mk1(ps, AST_ENDOF, T, E); }
expr(A) ::= LP expr(E) RP.           { A = E; }
expr(A) ::= ID(V) DOT ID(N).         { A = MK(AST_COL, V); A->s = STR(V); A->s2 = STR(N); }
expr(A) ::= ID(N).                   { A = MK(AST_NAME, N); A->s = STR(N); }
expr(A) ::= INTEGER(N).              { A = MK(AST_INT, N); A->i = parseInt(ps, N); }
expr(A) ::= FLOATNUM(N).             { A = MK(AST_FLOAT, N); A->f = strtod(STR(N), NULL); }
expr(A) ::= STRINGLIT(N).            { A = MK(AST_STR, N); A->s = unquote(ps, N); }
expr(A) ::= TIMECONST(N).            { A = MK(AST_TIME, N); A->i = parseTime(ps, N); }
expr(A) ::= DURATION(N).             { A = MK(AST_DUR, N); A->i = parseTime(ps, N); }
expr(A) ::= NOW(N).                  { A = MK(AST_NOW, N); }
expr(A) ::= BEGINNING(N).            { A = MK(AST_BEGINNING, N); }
expr(A) ::= FOREVER(N).              { A = MK(AST_FOREVER, N); }
expr(A) ::= AGG(F) LP expr(E) aggopts(O) RP.
                                     { A = mk2(ps, AST_AGG, F, E, O); A->s = STR(F); }
/* any other name used like one: the semantic pass reports the unknown aggregate */
expr(A) ::= ID(F) LP expr(E) aggopts(O) RP.
                                     { A = mk2(ps, AST_AGG, F, E, O); A->s = STR(F); }

/* a function of two or more arguments (prefix(s, 3)); the semantic pass
** checks its name */
expr(A) ::= ID(F) LP expr(E) COMMA exprs(L) RP.
                                     { A = MK(AST_CALL, F); A->s = STR(F); A->k[0] = astAppend(E, L); }

aggopts(A) ::= .                     { A = NULL; }
aggopts(A) ::= aggopts(L) aggopt(X). { A = astAppend(L, X); }
aggopt(A) ::= BY(T) exprs(L).        { A = mkOpt(ps, T, OPT_BY, 0, 0, L); }
aggopt(A) ::= FOR(T) EACH INSTANT.   { A = mkOpt(ps, T, OPT_WINDOW, WIN_INSTANT, 0, NULL); }
aggopt(A) ::= FOR(T) EVER.           { A = mkOpt(ps, T, OPT_WINDOW, WIN_EVER, 0, NULL); }
aggopt(A) ::= FOR(T) EACH DURATION(D). { A = mkOpt(ps, T, OPT_WINDOW, WIN_EACH, parseTime(ps, D), NULL); A->loc2 = D.loc; }
aggopt(A) ::= WHERE(T) expr(E).      { A = mkOpt(ps, T, OPT_WHERE, 0, 0, E); }
aggopt(A) ::= WHEN(T) expr(E).       { A = mkOpt(ps, T, OPT_WHEN, 0, 0, E); }
exprs(A) ::= expr(E).                { A = E; }
exprs(A) ::= exprs(L) COMMA expr(E). { A = astAppend(L, E); }

/* ---------------------------------------------------------- display specification (paper section 7)
** display REL as ICONS [aspects]            icons: point line circle rectangle oval
**                                             polygon [N] text, combined with '+'
** display REL as inside (CHILD, CONTAINER)  the CHILD entity's icon inside the CONTAINER's
** display REL as pointer|line from A to B   an arrow (a line) between the entities' icons
** display REL as flash [(ATTRS)]            the icons of the tuple's entities flash
** aspects: label V, intensity|colour|rotation|scale V [(VALUES) | from N to N],
**          horizontal|vertical ATTR [ascending|descending], at POSITION, hold DURATION
**          (V: an attribute, or a constant: "text", "#colour", a number)
** time as animation|animationtrace|timeline [fade N]
** Every keyword here is also a name where no keyword is expected. */
%fallback ID DISPLAY AS TIME ANIMATION ANIMATIONTRACE TIMELINE FADE POINT LINE CIRCLE RECTANGLE OVAL
             POLYGON TEXT INSIDE POINTER FLASH LABEL INTENSITY COLOUR ROTATION SCALE HORIZONTAL
             VERTICAL ASCENDING DESCENDING HOLD.

stmt(A) ::= DISPLAY(T) ID(N) AS dspform(F) dspaspects(L).
                                     { A = F; A->loc = T.loc; A->s = STR(N); A->loc2 = N.loc; A->k[1] = L; }
stmt(A) ::= TIME(T) AS dsptime(K) dspfade(F). { A = MK(AST_TIMEREP, T); A->op = K; A->i = F; }

dspform(A) ::= dspicons(L).          { A = astNew(ps->arena, AST_DISPLAY, L->loc); A->op = DSPK_ICON; A->k[0] = L; }
dspform(A) ::= INSIDE(T) LP dspid(C) COMMA dspid(P) RP.
                                     { A = MK(AST_DISPLAY, T); A->op = DSPK_INSIDE; A->k[0] = astAppend(C, P); }
dspform(A) ::= POINTER(T) FROM dspid(X) TO dspid(Y).
                                     { A = MK(AST_DISPLAY, T); A->op = DSPK_POINTER; A->k[0] = astAppend(X, Y); }
dspform(A) ::= LINE(T) FROM dspid(X) TO dspid(Y).
                                     { A = MK(AST_DISPLAY, T); A->op = DSPK_LINE; A->k[0] = astAppend(X, Y); }
dspform(A) ::= FLASH(T).             { A = MK(AST_DISPLAY, T); A->op = DSPK_FLASH; }
dspform(A) ::= FLASH(T) LP ids(L) RP. { A = MK(AST_DISPLAY, T); A->op = DSPK_FLASH; A->k[0] = L; }
dspid(A) ::= ID(N).                  { A = MK(AST_ID, N); A->s = STR(N); }

dspicons(A) ::= dspicon(X).          { A = X; }
dspicons(A) ::= dspicons(L) PLUS dspicon(X). { A = astAppend(L, X); }
dspicon(A) ::= POINT(T).             { A = MK(AST_ASPECT, T); A->op = DSPI_POINT; }
dspicon(A) ::= LINE(T).              { A = MK(AST_ASPECT, T); A->op = DSPI_LINE; }
dspicon(A) ::= CIRCLE(T).            { A = MK(AST_ASPECT, T); A->op = DSPI_CIRCLE; }
dspicon(A) ::= RECTANGLE(T).         { A = MK(AST_ASPECT, T); A->op = DSPI_RECTANGLE; }
dspicon(A) ::= OVAL(T).              { A = MK(AST_ASPECT, T); A->op = DSPI_OVAL; }
dspicon(A) ::= TEXT(T).              { A = MK(AST_ASPECT, T); A->op = DSPI_TEXT; }
dspicon(A) ::= POLYGON(T).           { A = MK(AST_ASPECT, T); A->op = DSPI_POLYGON; A->i = 6; }
dspicon(A) ::= POLYGON(T) INTEGER(N). { A = MK(AST_ASPECT, T); A->op = DSPI_POLYGON; A->i = parseInt(ps, N); A->loc2 = N.loc; }

dspaspects(A) ::= .                  { A = NULL; }
dspaspects(A) ::= dspaspects(L) dspaspect(X). { A = astAppend(L, X); }
dspaspect(A) ::= LABEL(T) dspval(V). { A = MK(AST_ASPECT, T); A->op = DSPA_LABEL; A->k[0] = V; }
dspaspect(A) ::= INTENSITY(T) dspval(V) dspmap(M). { A = M; A->loc = T.loc; A->op = DSPA_INTENSITY; A->k[0] = V; }
dspaspect(A) ::= COLOUR(T) dspval(V) dspmap(M).    { A = M; A->loc = T.loc; A->op = DSPA_COLOUR; A->k[0] = V; }
dspaspect(A) ::= ROTATION(T) dspval(V) dspmap(M).  { A = M; A->loc = T.loc; A->op = DSPA_ROTATION; A->k[0] = V; }
dspaspect(A) ::= SCALE(T) dspval(V) dspmap(M).     { A = M; A->loc = T.loc; A->op = DSPA_SCALE; A->k[0] = V; }
dspaspect(A) ::= HORIZONTAL(T) ID(N) dsporder(O). { A = MK(AST_ASPECT, T); A->op = DSPA_HORIZONTAL; A->s = STR(N); A->loc2 = N.loc; A->op2 = O; }
dspaspect(A) ::= VERTICAL(T) ID(N) dsporder(O). { A = MK(AST_ASPECT, T); A->op = DSPA_VERTICAL; A->s = STR(N); A->loc2 = N.loc; A->op2 = O; }
dspaspect(A) ::= AT(T) ID(N).        { A = MK(AST_ASPECT, T); A->op = DSPA_AT; A->s = STR(N); A->loc2 = N.loc; }
dspaspect(A) ::= HOLD(T) DURATION(D). { A = MK(AST_ASPECT, T); A->op = DSPA_HOLD; A->i = parseTime(ps, D); A->loc2 = D.loc; }

dspval(A) ::= ID(N).                 { A = MK(AST_NAME, N); A->s = STR(N); }
dspval(A) ::= STRINGLIT(N).          { A = MK(AST_STR, N); A->s = unquote(ps, N); }
dspval(A) ::= dspnum(X).             { A = X; }
dspnum(A) ::= INTEGER(N).            { A = MK(AST_FLOAT, N); A->f = (double)parseInt(ps, N); }
dspnum(A) ::= FLOATNUM(N).           { A = MK(AST_FLOAT, N); A->f = strtod(STR(N), NULL); }

dspmap(A) ::= .                      { GrToken t = {0}; A = astNew(ps->arena, AST_ASPECT, t.loc); }
dspmap(A) ::= LP ids(L) RP.          { GrToken t = {0}; A = astNew(ps->arena, AST_ASPECT, t.loc); A->k[1] = L; }
dspmap(A) ::= FROM dspnum(X) TO dspnum(Y).
                                     { GrToken t = {0}; A = astNew(ps->arena, AST_ASPECT, t.loc); A->k[2] = X; A->k[3] = Y; }

%type dsporder {int}
dsporder(A) ::= .                    { A = DSPO_ASCENDING; }
dsporder(A) ::= ASCENDING.           { A = DSPO_ASCENDING; }
dsporder(A) ::= DESCENDING.          { A = DSPO_DESCENDING; }

%type dsptime {int}
dsptime(A) ::= ANIMATION.            { A = DSPT_ANIMATION; }
dsptime(A) ::= ANIMATIONTRACE.       { A = DSPT_ANIMATIONTRACE; }
dsptime(A) ::= TIMELINE.             { A = DSPT_TIMELINE; }
%type dspfade {int64_t}
dspfade(A) ::= .                     { A = 0; }
dspfade(A) ::= FADE INTEGER(N).      { A = parseInt(ps, N); if (A == 0) A = -1; }

%code {

const char *grTokenDesc(int code) {
  switch (code) {
    case 0: return "end of input";
    case TK_ID: return "a name";
    case TK_INTEGER: return "an integer";
    case TK_FLOATNUM: return "a number";
    case TK_STRINGLIT: return "a string";
    case TK_TIMECONST: return "a time constant";
    case TK_DURATION: return "a duration such as 10s";
    case TK_LP: return "'('";
    case TK_RP: return "')'";
    case TK_LB: return "'['";
    case TK_RB: return "']'";
    case TK_COMMA: return "','";
    case TK_SEMI: return "';'";
    case TK_COLON: return "':'";
    case TK_DOT: return "'.'";
    case TK_EQ: return "'='";
    case TK_NE: return "'!='";
    case TK_LT: return "'<'";
    case TK_LE: return "'<='";
    case TK_GT: return "'>'";
    case TK_GE: return "'>='";
    case TK_PLUS: return "'+'";
    case TK_MINUS: return "'-'";
    case TK_STAR: return "'*'";
    case TK_SLASH: return "'/'";
    case TK_CONCAT: return "'||'";
    case TK_AGG: return "an aggregate";
    default: break;
  }
  if (code > 0 && code < YYNTOKEN) {
    static char buf[YYNTOKEN][24];
    if (!buf[code][0]) {
      const char *n = yyTokenName[code];
      size_t i = 0;
      buf[code][i++] = '\'';
      for (; *n && i < sizeof buf[code] - 2; n++) buf[code][i++] = (char)(*n >= 'A' && *n <= 'Z' ? *n + 32 : *n);
      buf[code][i++] = '\'';
      buf[code][i] = 0;
    }
    return buf[code];
  }
  return "?";
}

/* Would terminal `tok` be accepted by a parser whose state stack is
** st[0..n]?  Simulates the reductions lemon would make (default reductions
** included), so the answer is exact. */
static int grAccepts(const YYACTIONTYPE *st0, int n, int tok) {
  YYACTIONTYPE st[YYSTACKDEPTH + 8];
  if (n >= YYSTACKDEPTH) return 0;
  memcpy(st, st0, sizeof(YYACTIONTYPE) * (size_t)(n + 1));
  for (int guard = 0; guard < 10000; guard++) {
    YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)tok, st[n]);
    if (act <= YY_MAX_SHIFTREDUCE) return 1;
    if (act == YY_ACCEPT_ACTION) return 1;
    if (act < YY_MIN_REDUCE || act > YY_MAX_REDUCE) return 0;
    int rule = act - YY_MIN_REDUCE;
    for (;;) {
      n += yyRuleInfoNRhs[rule];
      if (n < 0) return 0;
      YYACTIONTYPE g = yy_find_reduce_action(st[n], (YYCODETYPE)yyRuleInfoLhs[rule]);
      if (g > YY_MAX_SHIFT && g <= YY_MAX_SHIFTREDUCE) {
        /* shift the nonterminal and reduce at once */
        if (n + 1 >= YYSTACKDEPTH) return 0;
        st[++n] = 0;
        rule = g - YY_MIN_SHIFTREDUCE;
        continue;
      }
      if (g > YY_MAX_SHIFT) return 0;
      if (n + 1 >= YYSTACKDEPTH) return 0;
      st[++n] = g;
      break;
    }
  }
  return 0;
}

void grSyntaxError(GrParse *ps, void *parser, int major, GrToken tok) {
  yyParser *p = (yyParser *)parser;
  ps->failed = 1;
  YYACTIONTYPE st[YYSTACKDEPTH + 8];
  int n = 0;
  for (yyStackEntry *e = p->yystack; e <= p->yytos && n < YYSTACKDEPTH; e++) st[n++] = e->stateno;
  n--;
  TqBuf b = {0};
  int cnt = 0, exprStart = 0, anyOp = 0;
  const char *first[12];
  for (int t = 0; t < YYNTOKEN; t++) {
    int isOp = t == TK_OR || t == TK_AND || t == TK_EQ || t == TK_NE || t == TK_LT || t == TK_LE || t == TK_GT ||
               t == TK_GE || t == TK_PLUS || t == TK_MINUS || t == TK_STAR || t == TK_SLASH || t == TK_PRECEDE ||
               t == TK_EQUAL || t == TK_OVERLAP || t == TK_EXTEND || t == TK_LIKE || t == TK_CONCAT;
    /* in an expression these are implied by "an expression"; elsewhere (a
    ** display aspect's value) they are listed */
    if ((t == TK_FLOATNUM || t == TK_STRINGLIT || t == TK_NOW || t == TK_BEGINNING || t == TK_FOREVER) &&
        grAccepts(st, n, TK_TIMECONST))
      continue;
    if (!grAccepts(st, n, t)) continue;
    if (t != TK_ID && yyFallback[t] == TK_ID && grAccepts(st, n, TK_ID)) continue;
    if (t == TK_INTEGER && grAccepts(st, n, TK_TIMECONST) && grAccepts(st, n, TK_ID)) exprStart = 1;
    if (isOp) {
      anyOp = 1;
      continue;
    }
    if (cnt < 12) first[cnt] = grTokenDesc(t);
    cnt++;
  }
  if (anyOp && !exprStart) {
    if (cnt < 12) first[cnt] = "an operator";
    cnt++;
  }
  if (exprStart) {
    tqBufPuts(&b, "an expression");
  } else {
    for (int i = 0; i < cnt && i < 12; i++) {
      if (i) tqBufPuts(&b, i == cnt - 1 ? " or " : ", ");
      tqBufPuts(&b, first[i]);
    }
    if (cnt > 12) tqBufPuts(&b, ", ...");
  }
  const char *what = major == TK_ID ? "name" : (tok.n && ((tok.z[0] | 32) >= 'a' && (tok.z[0] | 32) <= 'z')) ? "keyword" : "token";
  if (major == 0) {
    tqError(ps->diag, tok.loc, "unexpected end of input, expected %s", cnt ? b.s : "nothing");
  } else if (ps->prevLine && tok.loc.line > ps->prevLine && !grAccepts(st, n, TK_RETRIEVE) &&
             !grAccepts(st, n, TK_RANGE)) {
    /* the statement stopped short: point at where it ends */
    TqLoc at = {tok.loc.src, ps->prevLine, ps->prevCol};
    tqError(ps->diag, at, "expected %s after '%.*s', found %s '%.*s' (on line %d)", cnt ? b.s : "nothing", ps->prevN,
            ps->prevZ, what, tok.n, tok.z, tok.loc.line);
  } else {
    tqError(ps->diag, tok.loc, "unexpected %s '%.*s', expected %s", what, tok.n, tok.z, cnt ? b.s : "nothing");
  }
  tqBufFree(&b);
}

AstNode *grParse(TqArena *a, const TqSource *src, TqDiag *d) {
  GrParse ps = {.arena = a, .diag = d, .src = src};
  GrLexer *lx = grLexerNew(src, d);
  void *p = grParserAlloc(malloc);
  GrToken tok;
  int code, nerr0 = d->nerr;
  while ((code = grLexerNext(lx, &tok)) > 0) {
    ps.at = tok.loc;
    grParser(p, code, tok, &ps);
    if (ps.failed) break;
    /* remember where this token ends, for errors found at the next one */
    ps.prevZ = tok.z;
    ps.prevN = tok.n;
    ps.prevLine = tok.loc.line;
    ps.prevCol = tok.loc.col + tok.n;
    for (int i = 0; i < tok.n; i++)
      if (tok.z[i] == '\n') ps.prevLine = 0; /* multi-line token: do not guess */
  }
  if (code == 0 && !ps.failed) grParser(p, 0, tok, &ps);
  grParserFree(p, free);
  grLexerDelete(lx);
  if (code < 0 || ps.failed || d->nerr > nerr0) return NULL;
  return ps.stmts;
}
}
