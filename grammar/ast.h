/*
** ast.h - the abstract syntax tree built by the grammar actions.
**
** One node type for everything (statements, declarations, expressions),
** allocated in the program's arena and linked into lists through `next`.
** The grammar only calls the constructors below; the meaning of a node is
** decided by the semantic pass (compiler/sema.c).  Every node keeps the
** position of the token that starts it, so later errors point at the
** source.
*/
#ifndef AST_H
#define AST_H

#include "../base/tq.h"
#include "../algebra/algebra.h"

typedef enum AstKind {
  /* statements and declarations */
  AST_CLOCK = 1, /* clock <duration>: i = tick */
  AST_ENTITY,    /* entity s (k0 = attributes) */
  AST_REL,       /* event|interval s (k0 attrs) collection; k1 = key ids */
  AST_ATTR,      /* s : k0(type) [role op] */
  AST_TYPE,      /* op = AT_INT|AT_FLOAT|AT_STRING|AT_ENUM(k0 = ids)|AT_NAMED(s) */
  AST_ID,        /* identifier in a list: s */
  AST_RANGE,     /* range of s is s2 [ i ] */
  AST_RETRIEVE,  /* retrieve [into] s (k0 targets) k1 valid, k2 where, k3 when */
  AST_TARGET,    /* s = k0, or V.attr (s NULL), op = 1 for V.all */
  AST_VALID,     /* op = VALID_AT (k0) | VALID_FROMTO (k0, k1) */
  AST_DISPLAY,   /* display s as ...: op = DSPK_*, k0 = icons (AST_ASPECT, op = DSPI_*,
                    i = polygon sides) or the attribute names (AST_ID), k1 = aspects */
  AST_ASPECT,    /* display aspect: op = DSPA_*, k0 = value (AST_NAME attribute, AST_STR,
                    AST_INT, AST_FLOAT), k1 = value order (AST_ID list) or k2, k3 =
                    numeric range; s = position/order attribute, op2 = DSPO_*, i = hold */
  AST_TIMEREP,   /* time as ...: op = DSPT_*, i = fade (0: default) */
  AST_OPT,       /* option of a sensor or aggregate: op = OPT_*, op2, i, k0 */
  AST_PROGRAMS,  /* monitor programs: k0 = the patterns (AST_STR list) */
  /* expressions */
  AST_COL,       /* s.s2 */
  AST_NAME,      /* bare identifier s */
  AST_INT,       /* i */
  AST_FLOAT,     /* f */
  AST_STR,       /* s */
  AST_TIME,      /* time constant h:mm:ss: i */
  AST_DUR,       /* duration literal 10s: i (ns) */
  AST_NOW,
  AST_BEGINNING,
  AST_FOREVER,
  AST_BIN,       /* op = one of the TK_ codes of the operator: k0 op k1 */
  AST_NOT,       /* not k0 */
  AST_NEG,       /* - k0 */
  AST_BEGINOF,   /* begin of k0 */
  AST_ENDOF,     /* end of k0 */
  AST_OVERLAP,   /* k0 overlap k1 */
  AST_EXTEND,    /* k0 extend k1 */
  AST_PRECEDE,   /* k0 precede k1 */
  AST_EQUAL,     /* k0 equal k1 */
  AST_AGG,       /* op = aggregate; k0 arg, k1 by-list, k2 where, k3 when, i window, op2 kind */
  AST_LIKE,      /* k0 like k1 (a pattern: % any string, _ any character) */
  AST_CONCAT,    /* k0 || k1 (string concatenation) */
  AST_CALL       /* function s (k0 = the arguments, a list) */
} AstKind;

enum { AT_INT = 1, AT_FLOAT, AT_STRING, AT_ENUM, AT_NAMED };

/* Display specification (paper section 7): what a display statement draws
** (DSPK_), its icons (DSPI_), its aspects (DSPA_; the first DSPA_NVALUE take
** a value: an attribute or a constant), orderings (DSPO_) and the time
** representations (DSPT_). */
enum { DSPK_ICON = 1, DSPK_INSIDE, DSPK_POINTER, DSPK_LINE, DSPK_FLASH };
enum { DSPI_POINT = 1, DSPI_LINE, DSPI_CIRCLE, DSPI_RECTANGLE, DSPI_OVAL, DSPI_POLYGON, DSPI_TEXT };
enum { DSPA_LABEL = 0, DSPA_INTENSITY, DSPA_COLOUR, DSPA_ROTATION, DSPA_SCALE, DSPA_NVALUE,
       DSPA_HORIZONTAL = DSPA_NVALUE, DSPA_VERTICAL, DSPA_AT, DSPA_HOLD };
enum { DSPO_ASCENDING = 1, DSPO_DESCENDING };
enum { DSPT_ANIMATION = 1, DSPT_ANIMATIONTRACE, DSPT_TIMELINE };
/* roles, modes, operators, aggregates, windows: see algebra.h */

typedef struct AstNode AstNode;
struct AstNode {
  AstKind kind;    /* what this is */
  TqLoc loc;       /* position of its first token */
  TqLoc loc2;      /* position of the declared name (declarations, retrieve into), of a window's duration */
  AstNode *k[4];   /* children, meaning per kind */
  AstNode *next;   /* next in a list */
  const char *s;   /* identifier / string */
  const char *s2;  /* second identifier */
  int64_t i;       /* integer / time / counter */
  double f;        /* float value */
  int op;          /* operator / sub-kind */
  int op2;         /* second sub-kind (role, window kind, ...) */
  int mode;        /* collection mode for AST_REL */
  int depth;       /* expressions: height of the tree below (0 or 1 for a leaf) */
  AstNode *tail;   /* a list's head: its last node (astAppend stays linear), or NULL */
};

/* The deepest expression tree the front end accepts (as SQLite's
** SQLITE_MAX_EXPR_DEPTH): nested or chained operators, `a and b and ...`
** included.  Every later pass recurses over expressions and algebra
** chains, so this bounds their stacks; tests/scripts/chains.sh runs each
** clause at the limit under the sanitizers. */
#define AST_MAX_DEPTH 1000

/* Constructors; all allocate in arena `a` and never fail. */
AstNode *astNew(TqArena *a, AstKind kind, TqLoc loc);
AstNode *astAppend(AstNode *list, AstNode *item); /* returns the list head; O(1) amortised */
/* Appends item (a list) to *head, whose last node is *tail (both NULL when
** empty), in the time of item's length: for long lists. */
void astAppendTail(AstNode **head, AstNode **tail, AstNode *item);
int astLen(const AstNode *list);

#endif
