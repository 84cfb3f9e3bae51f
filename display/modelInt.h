/*
** modelInt.h - the state of the display model shared by its files (model.c:
** rows, elements, steps, the consumer; aspects.c: attribute-dependent
** aspects; layout.c: lanes, geometry, drawing), and the functions one of
** them calls in another.  Private to them; outputs see dspInt.h only.
*/
#ifndef MODELINT_H
#define MODELINT_H

#include <string.h>

#include "dspInt.h"

/* ================================================================ structures */

typedef struct Disp Disp;

typedef struct Elem Elem;

typedef struct RowRec {
  uint64_t rowid;
  Elem *el;             /* element it belongs to */
  TqTime from;
  DBar *bar;            /* its timeline bar (NULL until the step draws it) */
  int64_t vals[];
} RowRec;

typedef struct Slot {
  struct Slot *next;    /* hash chain */
  int disp;             /* icon display */
  int64_t ent;          /* entity */
  Elem *icon;           /* its alive icon, or NULL */
  TqVec deps;           /* alive relationship elements naming it (Elem*) */
} Slot;

struct Elem {
  Elem *next;           /* chain in the display's key map */
  Disp *d;
  uint64_t h;           /* key hash */
  int alive;            /* drawn after the last step */
  int nrow, crow;
  RowRec **rows;        /* live rows, oldest first */
  TqTime until;         /* held event: drawn until (TQ_BEGINNING: not held) */
  TqTime since;         /* held event: drawn since */
  DBar *bar;            /* held event: its open bar */
  int64_t *vals;        /* current values (the latest live row or held event) */
  int32_t keyText;      /* "P1", "P1,A" */
  int mark;             /* in the step's changed list */
  int touched;          /* step stamp: in the redraw set */
  int sortDirty;        /* its lane order may have changed */
  Slot *slot;           /* entity icon: its slot */
  Slot *ends[2];        /* inside/pointer/line: the slots of its ends */
  Slot **fslots;        /* flash: slot per flash attribute */
  int inLane;           /* member of its lane's order */
  int row, col;         /* place in the lane */
  int gstamp, gbusy;    /* geometry memo */
  double gx, gy, gw, gh;
  DObj *obj;            /* icon, arrow or segment */
  DObj **fobj;          /* flash rings */
  int nkey;
  int64_t key[];
};

typedef struct Lane {
  Disp *d;
  int vertical;         /* icons ordered top to bottom (else left to right) */
  int anchor;           /* 1 left 2 center 3 right 4 top 5 middle 6 bottom */
  double x, y;          /* vertical: center x; horizontal: center y of the first row */
  double cellW, cellH;  /* room per icon */
  TqVec members;        /* Elem*, ordered */
  int dirty;            /* order again at the end of the step */
  int nrows;            /* rows (vertical) or columns used */
} Lane;

struct Disp {
  const CpDisplay *cd;  /* NULL: the default timeline of a result */
  int index;            /* band */
  int kind;             /* DSPK_*, 0 for a default display */
  const RtResult *res;
  int nattr;
  const AlgAttr *attr;
  int isEvent;
  TqTime hold;          /* events: how long they stay drawn */
  TqMap keys;           /* key hash -> Elem* chain */
  TqVec elems;          /* every element (for freeing and whole-display redraws) */
  Lane *lane;           /* icon displays */
  Disp *child;          /* container: the display of the icons put inside */
  int isContainer;
  double bw, bh;        /* base icon size */
  uint32_t colour;      /* fixed colour */
  double lo[DSPA_NVALUE], hi[DSPA_NVALUE]; /* observed numeric ranges */
  int seen[DSPA_NVALUE];
  TqMap rows;           /* rowid + 2 -> RowRec* */
};

typedef struct Pend {
  TqTime t;
  int pri;              /* 0 rows, 1 expiries (after the rows of the same instant) */
  uint64_t seq;
  int op;               /* RT_ROW_INSERT, RT_ROW_CLOSE, or 0: expiry */
  Disp *d;
  uint64_t rowid;
  TqTime from, to;
  Elem *el;             /* expiry */
  int64_t *vals;        /* insert: a copy (owned until applied) */
} Pend;

struct DspModel {
  RtConsumer c;
  const CpProgram *prog;
  RtNet *net;
  int ndisp;
  Disp *disp;
  Disp **byResult;      /* query index -> display */
  Lane *lanes;
  int nlane;
  Pend *heap;
  int nheap, cheap;
  uint64_t seq;
  TqMap slots;          /* (display, entity) -> Slot* chain */
  TqVec objs;           /* DObj* by id */
  TqVec freeGhosts;     /* DObj* ghosts to reuse */
  TqVec ghosts;         /* DObj* fading now */
  TqVec bars;           /* DBar* open now (DBar.live is the index) */
  int64_t nbars;        /* bars made (the next id) */
  TqVec outs;           /* DspOut* */
  DBand *bands;
  int timeRep, fade;
  TqTime tick;
  int64_t stepSeq;
  int stamp;            /* step stamp for memos */
  TqTime first, last;
  int haveRange;
  /* the step being built */
  TqVec changed;        /* Elem* whose rows changed */
  TqVec redraw;         /* Elem* to recompute */
  TqVec chg;            /* DChange as pairs (obj, op) */
  TqVec openBars, closeBars;
  DObj *clock, *canvas;
  double width, height;
  int64_t rowsIn, steps, changes;
  int ended;
};

static const uint32_t palette[10] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                     0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};

/* ================================================================ small helpers */

static inline uint64_t keyHash(int disp, const int64_t *k, int n) {
  return tqHashBytes(k, sizeof(int64_t) * (size_t)n, (uint64_t)disp * 0x9e3779b97f4a7c15ULL) | 2;
}

static inline int valCmp(AlgType t, int64_t a, int64_t b) {
  if (t.kind == TY_FLOAT) {
    double x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x < y ? -1 : x > y;
  }
  if (t.kind == TY_ENTITY || t.kind == TY_STRING) return a == b ? 0 : strcmp(tqSymName((int32_t)a), tqSymName((int32_t)b));
  return a < b ? -1 : a > b;
}

static inline double valNum(AlgType t, int64_t v) {
  if (t.kind == TY_FLOAT) {
    double x;
    memcpy(&x, &v, sizeof x);
    return x;
  }
  return (double)v;
}

static inline void objVecPush(TqVec *v, void *p) { tqVecPush(v, p); }

/* ================================================================ across the model's files */

/* ---------------------------------------------------------------- model.c: rows, elements, steps */
void dspObjSet(DspModel *m, DObj *o, int want, const DProps *p);
void dspTouch(DspModel *m, Elem *e);

/* ---------------------------------------------------------------- aspects.c: aspects */
int32_t dspBarText(DspModel *m, Disp *d, const int64_t *vals);
uint32_t dspColourOf(DspModel *m, Disp *d, const int64_t *vals);
uint32_t dspFillOf(DspModel *m, Disp *d, const int64_t *vals);
double dspIntensityOf(DspModel *m, Disp *d, const int64_t *vals);
int32_t dspLabelOf(Disp *d, Elem *e);
uint32_t dspMix(uint32_t a, uint32_t b, double k);
int dspObserve(Disp *d, const int64_t *vals);
uint32_t dspParseColour(const char *s);
double dspRotationOf(DspModel *m, Disp *d, const int64_t *vals);
double dspScaleOf(DspModel *m, Disp *d, const int64_t *vals);

/* ---------------------------------------------------------------- layout.c: lanes, geometry, drawing */
int dspChildrenOf(DspModel *m, Elem *c, Elem **out, int max);
void dspDrawFlash(DspModel *m, Elem *e);
void dspDrawIcon(DspModel *m, Elem *e);
void dspDrawLink(DspModel *m, Elem *e);
void dspLaneAdd(Lane *l, Elem *e);
void dspLaneDel(Lane *l, Elem *e);
int dspLaneGroupAttr(const Lane *l);
int dspLaneSubAttr(const Lane *l);
void dspLaneUpdate(DspModel *m, Lane *l);
void dspTouchDeps(DspModel *m, Elem *e);
double dspYBottom(DspModel *m);
double dspYTop(DspModel *m);

#endif
