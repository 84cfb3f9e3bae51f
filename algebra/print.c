/*
** print.c - the algebra in the paper's notation, and a consistency check.
**
** One-line form (algPrint), as in docs/design.md section 2:
**   pi[W.Process](piT[at end of W](sigmaT[S precede end of W](...)))
** alpha^{D:T}_W(Mailbox), Clock[10]_C, x for products, x1 for the overlap
** product.  Selections print comparisons without spaces (S.Process=P1).
** algPrintTree prints one operator per line with the optimizer's notes;
** algPrintNotes prints only the notes (explain, after a query's line).
*/
#include <string.h>

#include "algebra.h"

/* Binding strength for parenthesising printed expressions. */
static int prec(const AlgExpr *e) {
  switch (e->kind) {
    case AX_OR: return 1;
    case AX_AND: return 2;
    case AX_NOT: return 3;
    case AX_CMP:
    case AX_LIKE:
    case AX_PRECEDE:
    case AX_TEQUAL:
    case AX_TOVERLAP: return 4;
    case AX_OVERLAP:
    case AX_EXTEND: return 5;
    case AX_ARITH: return e->op == OPB_ADD || e->op == OPB_SUB ? 6 : 7;
    case AX_TSHIFT:
    case AX_CONCAT: return 6;
    case AX_NEG:
    case AX_BEGINOF:
    case AX_ENDOF: return 8;
    default: return 9;
  }
}

static void sub(const AlgExpr *e, int p, TqBuf *b) {
  int paren = prec(e) < p;
  if (paren) tqBufPuts(b, "(");
  algExprPrint(e, b);
  if (paren) tqBufPuts(b, ")");
}

static const char *cmpOp(int op) {
  switch (op) {
    case OPB_EQ: return "=";
    case OPB_NE: return "!=";
    case OPB_LT: return "<";
    case OPB_LE: return "<=";
    case OPB_GT: return ">";
    case OPB_GE: return ">=";
    case OPB_ADD: return "+";
    case OPB_SUB: return "-";
    case OPB_MUL: return "*";
    case OPB_DIV: return "/";
    default: return "?";
  }
}

void algExprPrint(const AlgExpr *e, TqBuf *b) {
  char tb[64];
  switch (e->kind) {
    case AX_COL:
    case AX_AGG:
      if (e->var) tqBufPrintf(b, "%s.%s", e->var, e->name);
      else tqBufPuts(b, e->name);
      break;
    case AX_CONST:
      switch (e->type.kind) {
        case TY_ENTITY: tqBufPuts(b, tqSymName((int32_t)e->ival)); break;
        case TY_ENUM:
          tqBufPuts(b, e->type.en && e->ival >= 0 && e->ival < e->type.en->n ? e->type.en->names[e->ival] : "?");
          break;
        case TY_STRING: tqBufPrintf(b, "\"%s\"", tqSymName((int32_t)e->ival)); break;
        case TY_FLOAT: {
          char num[32];
          tqBufPuts(b, tqFloatFormat(num, sizeof num, e->fval));
          break;
        }
        case TY_BOOL: tqBufPuts(b, e->ival ? "true" : "false"); break;
        default: tqBufPrintf(b, "%lld", (long long)e->ival); break;
      }
      break;
    case AX_ARITH:
    case AX_CMP:
      sub(e->a, prec(e), b);
      tqBufPuts(b, cmpOp(e->op));
      sub(e->b, prec(e) + (e->kind == AX_ARITH), b);
      break;
    case AX_LIKE:
    case AX_CONCAT:
      sub(e->a, prec(e), b);
      tqBufPuts(b, e->kind == AX_LIKE ? " like " : " || ");
      sub(e->b, prec(e) + 1, b);
      break;
    case AX_PREFIX:
      tqBufPuts(b, "prefix(");
      algExprPrint(e->a, b);
      tqBufPuts(b, ", ");
      algExprPrint(e->b, b);
      tqBufPuts(b, ")");
      break;
    case AX_NEG:
      tqBufPuts(b, "-");
      sub(e->a, prec(e), b);
      break;
    case AX_AND:
    case AX_OR:
      sub(e->a, prec(e), b);
      tqBufPuts(b, e->kind == AX_AND ? " and " : " or ");
      sub(e->b, prec(e) + 1, b);
      break;
    case AX_NOT:
      tqBufPuts(b, "not ");
      sub(e->a, prec(e), b);
      break;
    case AX_TVAR: tqBufPuts(b, e->var ? e->var : "?"); break;
    case AX_TCONST: tqBufPuts(b, tqTimeFormat(tb, sizeof tb, e->ival)); break;
    case AX_NOW: tqBufPuts(b, "now"); break;
    case AX_BEGINOF:
    case AX_ENDOF:
      tqBufPuts(b, e->kind == AX_BEGINOF ? "begin of " : "end of ");
      sub(e->a, 9, b);
      break;
    case AX_OVERLAP:
    case AX_EXTEND:
    case AX_PRECEDE:
    case AX_TEQUAL:
    case AX_TOVERLAP: {
      const char *w = e->kind == AX_EXTEND ? " extend " : e->kind == AX_PRECEDE ? " precede "
                      : e->kind == AX_TEQUAL ? " equal " : " overlap ";
      sub(e->a, prec(e), b);
      tqBufPuts(b, w);
      sub(e->b, prec(e) + 1, b);
      break;
    }
    case AX_TSHIFT: {
      sub(e->a, prec(e), b);
      char d[64];
      TqTime v = e->ival < 0 ? -e->ival : e->ival;
      if (v % TQ_SEC == 0) snprintf(d, sizeof d, "%llds", (long long)(v / TQ_SEC));
      else if (v % TQ_MS == 0) snprintf(d, sizeof d, "%lldms", (long long)(v / TQ_MS));
      else if (v % TQ_US == 0) snprintf(d, sizeof d, "%lldus", (long long)(v / TQ_US));
      else snprintf(d, sizeof d, "%lldns", (long long)v);
      tqBufPrintf(b, " %s %s", e->ival < 0 ? "-" : "+", d);
      break;
    }
  }
}

static void printWindow(const AlgAggSpec *s, TqBuf *b) {
  if (s->window == WIN_EVER) tqBufPuts(b, " for ever");
  else if (s->window == WIN_EACH) {
    char tb[64];
    tqBufPrintf(b, " for each %s", tqTimeFormat(tb, sizeof tb, s->width));
  }
}

void algPrint(const AlgNode *n, TqBuf *b) {
  switch (n->kind) {
    case ALG_SOURCE:
      tqBufPuts(b, n->rel->name);
      if (n->var) tqBufPrintf(b, "_%s", n->var);
      break;
    case ALG_CONST: {
      AlgExpr k = {0};
      k.kind = AX_CONST;
      k.type = n->ktype;
      k.ival = n->kval;
      algExprPrint(&k, b);
      break;
    }
    case ALG_CLOCK:
      tqBufPuts(b, "Clock");
      if (n->clockN != 1) tqBufPrintf(b, "[%d]", n->clockN);
      if (n->var) tqBufPrintf(b, "_%s", n->var);
      break;
    case ALG_ALPHA:
      tqBufPrintf(b, "alpha^{%s}_%s", algVariantName(n->variant), n->var ? n->var : "?");
      if (n->spred) {
        tqBufPuts(b, "[");
        algExprPrint(n->spred, b);
        tqBufPuts(b, "]");
      }
      tqBufPuts(b, "(");
      for (int i = 0; i < n->nkid; i++) {
        if (i) tqBufPuts(b, ", ");
        algPrint(n->kid[i], b);
      }
      tqBufPuts(b, ")");
      break;
    case ALG_SIGMA:
    case ALG_SIGMAT:
      tqBufPuts(b, n->kind == ALG_SIGMA ? "sigma[" : "sigmaT[");
      algExprPrint(n->pred, b);
      tqBufPuts(b, "](");
      algPrint(n->kid[0], b);
      tqBufPuts(b, ")");
      break;
    case ALG_PI:
      tqBufPuts(b, "pi[");
      for (int i = 0; i < n->npi; i++) {
        if (i) tqBufPuts(b, ", ");
        const AlgExpr *e = n->pi[i];
        int plain = (e->kind == AX_COL || e->kind == AX_AGG) && !strcmp(e->name, n->piName[i]);
        if (!plain) tqBufPrintf(b, "%s=", n->piName[i]);
        algExprPrint(e, b);
      }
      tqBufPuts(b, "](");
      algPrint(n->kid[0], b);
      tqBufPuts(b, ")");
      break;
    case ALG_PIT:
      if (n->validAt) {
        tqBufPuts(b, "piT[at ");
        algExprPrint(n->vfrom, b);
      } else {
        tqBufPuts(b, "piT[from ");
        algExprPrint(n->vfrom, b);
        tqBufPuts(b, " to ");
        algExprPrint(n->vto, b);
      }
      tqBufPuts(b, "](");
      algPrint(n->kid[0], b);
      tqBufPuts(b, ")");
      break;
    case ALG_PRODUCT:
    case ALG_OPRODUCT:
    case ALG_INTERSECT: {
      const char *op = n->kind == ALG_PRODUCT ? " x " : n->kind == ALG_OPRODUCT ? " x1 " : " intersect ";
      for (int i = 0; i < 2; i++) {
        const AlgNode *k = n->kid[i];
        int paren = (k->kind == ALG_PRODUCT || k->kind == ALG_OPRODUCT || k->kind == ALG_INTERSECT) &&
                    (i == 1 || k->kind != n->kind);
        if (i) {
          if (n->nkey) {
            tqBufAdd(b, op, strlen(op) - 1);
            tqBufPuts(b, "[");
            for (int j = 0; j < n->nkey; j++) {
              if (j) tqBufPuts(b, ", ");
              algExprPrint(n->keyL[j], b);
              tqBufPuts(b, "=");
              algExprPrint(n->keyR[j], b);
            }
            tqBufPuts(b, "] ");
          } else {
            tqBufPuts(b, op);
          }
        }
        if (paren) tqBufPuts(b, "(");
        algPrint(k, b);
        if (paren) tqBufPuts(b, ")");
      }
      break;
    }
    case ALG_AGG: {
      const AlgAggSpec *g = &n->agg[0];
      tqBufPrintf(b, "agg[%s(", algAggName(g->fn));
      algExprPrint(g->arg, b);
      for (int j = 0; j < g->nby; j++) {
        tqBufPuts(b, j ? ", " : " by ");
        algExprPrint(g->by[j], b);
      }
      printWindow(g, b);
      if (g->where) {
        tqBufPuts(b, " where ");
        algExprPrint(g->where, b);
      }
      if (g->when) {
        tqBufPuts(b, " when ");
        algExprPrint(g->when, b);
      }
      tqBufPrintf(b, ")]_%s(", n->var ? n->var : "?");
      algPrint(n->kid[0], b);
      tqBufPuts(b, ")");
      break;
    }
  }
}

static void indent(TqBuf *b, int n) {
  for (int i = 0; i < n; i++) tqBufPuts(b, "  ");
}

/* The operator of n without its arguments: sigma[...], alpha^{D:T}_W, x. */
static void printHead(const AlgNode *n, TqBuf *b) {
  TqBuf one = {0};
  switch (n->kind) {
    case ALG_SIGMA:
    case ALG_SIGMAT:
    case ALG_PI:
    case ALG_PIT:
    case ALG_AGG: {
      /* print the operator head only */
      AlgNode head = *n;
      AlgNode leaf = {0};
      leaf.kind = ALG_CLOCK;
      leaf.clockN = 1;
      leaf.var = "...";
      head.kid[0] = &leaf;
      algPrint(&head, &one);
      /* strip the fake child "(Clock_...)" */
      char *p = strstr(one.s, "(Clock_...)");
      if (p) *p = 0;
      tqBufPuts(b, one.s);
      break;
    }
    case ALG_ALPHA:
      tqBufPrintf(b, "alpha^{%s}_%s", algVariantName(n->variant), n->var ? n->var : "?");
      if (n->spred) {
        tqBufPuts(b, "[");
        algExprPrint(n->spred, b);
        tqBufPuts(b, "]");
      }
      break;
    case ALG_PRODUCT: tqBufPuts(b, "x"); break;
    case ALG_OPRODUCT: tqBufPuts(b, "x1"); break;
    case ALG_INTERSECT: tqBufPuts(b, "intersect"); break;
    default: algPrint(n, b); break;
  }
  tqBufFree(&one);
}

void algPrintTree(const AlgNode *n, TqBuf *b, int ind) {
  indent(b, ind);
  printHead(n, b);
  if (n->note) tqBufPrintf(b, "    -- %s", n->note);
  tqBufPuts(b, "\n");
  for (int i = 0; i < n->nkid; i++) algPrintTree(n->kid[i], b, ind + 1);
}

void algPrintNotes(const AlgNode *n, TqBuf *b) {
  if (n->note) {
    tqBufPuts(b, "  note: ");
    printHead(n, b);
    tqBufPrintf(b, ": %s\n", n->note);
  }
  for (int i = 0; i < n->nkid; i++) algPrintNotes(n->kid[i], b);
}

/* ================================================================ check */

const char *algAggName(int fn) {
  static const char *names[] = {"?", "count", "countU", "sum", "sumU", "avg", "avgU",
                                "min", "max", "any", "first", "last"};
  return fn > 0 && fn < (int)TQ_ARRAY_SIZE(names) ? names[fn] : "?";
}

static int checkExpr(const AlgExpr *e, const AlgSchema *s, TqBuf *msg) {
  if (!e) return 0;
  if (e->kind == AX_COL && algSchemaCol(s, e->var, e->name) < 0) {
    tqBufPrintf(msg, "column %s.%s not in input", e->var ? e->var : "", e->name);
    return -1;
  }
  if (e->kind == AX_TVAR && algSchemaTvar(s, e->var) < 0) {
    tqBufPrintf(msg, "time of %s not in input", e->var ? e->var : "?");
    return -1;
  }
  if (checkExpr(e->a, s, msg) || checkExpr(e->b, s, msg)) return -1;
  return 0;
}

int algCheck(const AlgNode *n, TqBuf *msg) {
  for (int i = 0; i < n->nkid; i++) {
    if (!n->kid[i]) {
      tqBufPuts(msg, "missing argument");
      return -1;
    }
    if (algCheck(n->kid[i], msg)) return -1;
  }
  const AlgSchema *in = n->nkid ? &n->kid[0]->sch : NULL;
  switch (n->kind) {
    case ALG_SIGMA:
    case ALG_SIGMAT: return checkExpr(n->pred, in, msg);
    case ALG_PI:
      for (int i = 0; i < n->npi; i++)
        if (checkExpr(n->pi[i], in, msg)) return -1;
      return 0;
    case ALG_PIT: return checkExpr(n->vfrom, in, msg) || checkExpr(n->vto, in, msg) ? -1 : 0;
    case ALG_AGG:
      for (int i = 0; i < n->agg->nby; i++)
        if (checkExpr(n->agg->by[i], in, msg)) return -1;
      return checkExpr(n->agg->arg, in, msg) || checkExpr(n->agg->where, in, msg) || checkExpr(n->agg->when, in, msg) ? -1 : 0;
    case ALG_ALPHA:
      if (n->nkid < 1) {
        tqBufPuts(msg, "alpha without entity argument");
        return -1;
      }
      return 0;
    default: return 0;
  }
}
