/*
** model.c - the incremental display engine (paper sections 7 and 8.7).
**
** Result rows arrive from the update network as a consumer (insert, close,
** delete by row id).  They are put back into valid-time order in a heap and
** released up to the network's watermark (no result row can still start or
** end before it), so the picture at time t never changes after it is
** drawn.  Each instant released is a step:
**   1. rows update the displays' elements (an entity's icon, a relationship,
**      a flash, a timeline tuple); an event stays drawn for its hold time
**      (samples of a sampled relation are joined into one stretch);
**   2. lanes whose members changed are ordered again (positions);
**   3. the changed elements and everything drawn with them (pointers of a
**      moved icon, the children of a grown container) are collected, and
**      only their drawn objects are recomputed: fixed aspects were computed
**      once per display at the start, attribute-dependent ones per row;
**   4. temporal aspects: ghosts of moved or removed objects fade over the
**      next steps (animationtrace), the clock shows the step's time;
**   5. the objects whose properties differ from what is drawn are handed
**      to the outputs, with the timeline bars that opened or closed.
** Invariant: after a step, DObj.cur of every shown object is exactly what
** the outputs were told.  Memory: one element per distinct key, one bar per
** tuple; rows are copied once.
**
** This file holds the rows, the elements, the steps and the consumer;
** aspects.c computes attribute-dependent aspects (colour, intensity,
** scale, rotation, labels), layout.c places elements in lanes and draws
** them; modelInt.h holds the state they share.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modelInt.h"

/* ================================================================ objects */

static DObj *objNew(DspModel *m, int disp, const char *name, int32_t rel, int32_t key) {
  DObj *o = tqCalloc(1, sizeof *o);
  o->id = m->objs.n;
  o->name = tqSymZ(name);
  o->rel = rel;
  o->key = key;
  o->disp = disp;
  objVecPush(&m->objs, o);
  return o;
}

static int propsEq(const DProps *a, const DProps *b) {
  return a->kind == b->kind && !memcmp(a->shape, b->shape, sizeof a->shape) && a->sides == b->sides &&
         a->labelPos == b->labelPos && a->ghost == b->ghost && fabs(a->x - b->x) < 0.05 && fabs(a->y - b->y) < 0.05 &&
         fabs(a->w - b->w) < 0.05 && fabs(a->h - b->h) < 0.05 && fabs(a->x2 - b->x2) < 0.05 &&
         fabs(a->y2 - b->y2) < 0.05 && fabs(a->rot - b->rot) < 0.05 && fabs(a->opacity - b->opacity) < 0.005 &&
         a->fill == b->fill && a->stroke == b->stroke && a->label == b->label && a->at == b->at && a->in == b->in && a->target == b->target;
}

static void change(DspModel *m, DObj *o, int op) {
  objVecPush(&m->chg, o);
  objVecPush(&m->chg, (void *)(intptr_t)op);
}

/* Past state of an object that moved or went away (animationtrace). */
static void ghostOf(DspModel *m, DObj *o) {
  if (m->timeRep == DSPT_ANIMATION || m->timeRep == DSPT_TIMELINE || m->fade <= 0) return;
  if (o->cur.kind != OK_ICON && o->cur.kind != OK_ARROW && o->cur.kind != OK_SEGMENT) return;
  /* its name is the object's and the step (dspObjName): no symbol per ghost */
  DObj *g = m->freeGhosts.n ? m->freeGhosts.v[--m->freeGhosts.n] : objNew(m, o->disp, "", 0, 0);
  g->name = o->name;
  g->rel = o->rel;
  g->key = o->key;
  g->disp = o->disp;
  g->cur = o->cur;
  g->cur.ghost = 1;
  g->cur.in = 0;
  g->ghostStep = (int)m->stepSeq;
  g->ghostBase = o->cur.opacity * 0.5;
  g->cur.opacity = g->ghostBase;
  g->shown = 1;
  change(m, g, CH_ADD);
  objVecPush(&m->ghosts, g);
}

/* Sets what object o should look like after this step (want = 0: not drawn). */
void dspObjSet(DspModel *m, DObj *o, int want, const DProps *p) {
  if (!want) {
    if (o->shown) {
      ghostOf(m, o);
      o->shown = 0;
      change(m, o, CH_REMOVE);
    }
    return;
  }
  if (!o->shown) {
    o->shown = 1;
    o->cur = *p;
    change(m, o, CH_ADD);
    return;
  }
  if (propsEq(&o->cur, p)) return;
  if (fabs(o->cur.x - p->x) >= 0.05 || fabs(o->cur.y - p->y) >= 0.05 || fabs(o->cur.x2 - p->x2) >= 0.05 ||
      fabs(o->cur.y2 - p->y2) >= 0.05)
    ghostOf(m, o);
  o->cur = *p;
  change(m, o, CH_CHANGE);
}

/* ================================================================ slots (entity icons) */

static Slot *slotGet(DspModel *m, int disp, int64_t ent, int create) {
  uint64_t h = tqHash64(((uint64_t)disp << 40) ^ (uint64_t)ent) | 2;
  for (Slot *s = tqMapGet(&m->slots, h); s; s = s->next)
    if (s->disp == disp && s->ent == ent) return s;
  if (!create) return NULL;
  Slot *s = tqCalloc(1, sizeof *s);
  s->disp = disp;
  s->ent = ent;
  s->next = tqMapGet(&m->slots, h);
  tqMapPut(&m->slots, h, s);
  return s;
}

static void depAdd(Slot *s, Elem *e) { tqVecPush(&s->deps, e); }

static void depDel(Slot *s, Elem *e) {
  for (int i = 0; i < s->deps.n; i++)
    if (s->deps.v[i] == e) {
      memmove(s->deps.v + i, s->deps.v + i + 1, sizeof(void *) * (size_t)(s->deps.n - i - 1));
      s->deps.n--;
      return;
    }
}

/* The icon display of entity type ent (checked to exist by the compiler). */
static int iconDisp(DspModel *m, const AlgEntity *ent) {
  for (int i = 0; i < m->ndisp; i++)
    if (m->disp[i].kind == DSPK_ICON && m->disp[i].cd->prim == ent->rel) return i;
  return -1;
}

/* ================================================================ elements */

static Elem *elemGet(DspModel *m, Disp *d, const int64_t *vals) {
  int64_t k[TQ_MAX_ATTRS];
  int n;
  if (d->cd && d->cd->entityKey && d->kind == DSPK_ICON) {
    k[0] = vals[0];
    n = 1;
  } else {
    n = d->nattr;
    memcpy(k, vals, sizeof(int64_t) * (size_t)n);
  }
  uint64_t h = keyHash(d->index, k, n);
  for (Elem *e = tqMapGet(&d->keys, h); e; e = e->next)
    if (e->h == h && !memcmp(e->key, k, sizeof(int64_t) * (size_t)n)) return e;
  Elem *e = tqCalloc(1, sizeof(Elem) + sizeof(int64_t) * (size_t)(n ? n : 1));
  e->d = d;
  e->h = h;
  e->nkey = n;
  memcpy(e->key, k, sizeof(int64_t) * (size_t)n);
  e->until = TQ_BEGINNING;
  e->vals = tqCalloc((size_t)(d->nattr ? d->nattr : 1), sizeof(int64_t));
  char buf[256];
  TqBuf b = {0};
  if (n == 1 || (d->cd && d->cd->entityKey)) {
    tqBufPuts(&b, dspValue(buf, sizeof buf, d->attr[0].type, k[0]));
  } else {
    for (int i = 0; i < n; i++) tqBufPrintf(&b, "%s%s", i ? "," : "", dspValue(buf, sizeof buf, d->attr[i].type, k[i]));
  }
  e->keyText = tqSymZ(b.s ? b.s : "");
  tqBufFree(&b);
  e->next = tqMapGet(&d->keys, h);
  tqMapPut(&d->keys, h, e);
  tqVecPush(&d->elems, e);
  int32_t rel = tqSymZ(d->cd ? d->cd->rel : d->res->name);
  const char *rn = tqSymName(rel), *kt = tqSymName(e->keyText);
  char name[600];
  switch (d->kind) {
    case DSPK_ICON:
      snprintf(name, sizeof name, "%s[%s]", rn, kt);
      e->obj = objNew(m, d->index, name, rel, e->keyText);
      if (d->cd->entityKey) e->slot = slotGet(m, d->index, k[0], 1);
      break;
    case DSPK_POINTER:
    case DSPK_LINE:
      snprintf(name, sizeof name, "%s[%s]", rn, kt);
      e->obj = objNew(m, d->index, name, rel, e->keyText);
      /* fall through */
    case DSPK_INSIDE:
      for (int i = 0; i < 2; i++) e->ends[i] = slotGet(m, iconDisp(m, d->cd->ent[i]), vals[d->cd->end[i]], 1);
      break;
    case DSPK_FLASH:
      e->fslots = tqCalloc((size_t)d->cd->nflash, sizeof(Slot *));
      e->fobj = tqCalloc((size_t)d->cd->nflash, sizeof(DObj *));
      for (int i = 0; i < d->cd->nflash; i++) {
        int a = d->cd->flash[i];
        e->fslots[i] = slotGet(m, iconDisp(m, d->attr[a].type.ent), vals[a], 1);
        if (d->cd->nflash > 1) snprintf(name, sizeof name, "%s[%s].%s", rn, kt, d->attr[a].name);
        else snprintf(name, sizeof name, "%s[%s]", rn, kt);
        e->fobj[i] = objNew(m, d->index, name, rel, e->keyText);
      }
      break;
    default: break;
  }
  return e;
}

static void markChanged(DspModel *m, Elem *e) {
  if (e->mark) return;
  e->mark = 1;
  tqVecPush(&m->changed, e);
}

void dspTouch(DspModel *m, Elem *e) {
  if (!e || e->touched == m->stamp) return;
  e->touched = m->stamp;
  e->gstamp = 0;
  tqVecPush(&m->redraw, e);
}

/* ================================================================ applying rows */

static void heapPush(DspModel *m, Pend p) {
  if (m->nheap == m->cheap) {
    m->cheap = m->cheap ? 2 * m->cheap : 256;
    m->heap = tqRealloc(m->heap, sizeof(Pend) * (size_t)m->cheap);
  }
  int i = m->nheap++;
  p.seq = ++m->seq;
  m->heap[i] = p;
#define PLESS(a, b) ((a).t < (b).t || ((a).t == (b).t && ((a).pri < (b).pri || ((a).pri == (b).pri && (a).seq < (b).seq))))
  while (i > 0 && PLESS(m->heap[i], m->heap[(i - 1) / 2])) {
    Pend t = m->heap[i];
    m->heap[i] = m->heap[(i - 1) / 2];
    m->heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static Pend heapPop(DspModel *m) {
  Pend top = m->heap[0];
  m->heap[0] = m->heap[--m->nheap];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, s = i;
    if (l < m->nheap && PLESS(m->heap[l], m->heap[s])) s = l;
    if (r < m->nheap && PLESS(m->heap[r], m->heap[s])) s = r;
    if (s == i) break;
    Pend t = m->heap[i];
    m->heap[i] = m->heap[s];
    m->heap[s] = t;
    i = s;
  }
  return top;
}

/* ================================================================ bars
** A bar is open (in m->bars) until its tuple ends; the step that closes it
** hands it to the outputs, then it is freed: memory holds the open bars
** only, however long the run. */

static DBar *barNew(DspModel *m, Disp *d, Elem *e, TqTime from) {
  DBar *b = tqCalloc(1, sizeof *b);
  b->id = m->nbars++;
  b->band = d->index;
  b->row = e->keyText;
  b->from = from;
  b->to = TQ_OPEN;
  b->live = m->bars.n;
  tqVecPush(&m->bars, b);
  tqVecPush(&m->openBars, b);
  return b;
}

static void barClose(DspModel *m, DBar *b, TqTime to) {
  b->to = to;
  DBar *last = m->bars.v[--m->bars.n];
  m->bars.v[b->live] = last;
  last->live = b->live;
  b->live = -1;
  tqVecPush(&m->closeBars, b);
}

static void applyInsert(DspModel *m, Pend *p) {
  Disp *d = p->d;
  Elem *e = elemGet(m, d, p->vals);
  if (dspObserve(d, p->vals))
    for (int i = 0; i < d->elems.n; i++) markChanged(m, d->elems.v[i]);
  if (d->isEvent) {
    TqTime until = tqTimeAdd(p->from, d->hold);
    if (e->until <= p->from || e->until == TQ_BEGINNING) e->since = p->from;
    if (until > e->until) {
      e->until = until;
      heapPush(m, (Pend){until, 1, 0, 0, d, 0, 0, 0, e, NULL});
    }
    memcpy(e->vals, p->vals, sizeof(int64_t) * (size_t)d->nattr);
    free(p->vals);
  } else {
    RowRec *r = tqMalloc(sizeof(RowRec) + sizeof(int64_t) * (size_t)(d->nattr ? d->nattr : 1));
    r->rowid = p->rowid;
    r->el = e;
    r->from = p->from;
    r->bar = NULL;
    memcpy(r->vals, p->vals, sizeof(int64_t) * (size_t)d->nattr);
    free(p->vals);
    if (e->nrow == e->crow) {
      e->crow = e->crow ? 2 * e->crow : 2;
      e->rows = tqRealloc(e->rows, sizeof(RowRec *) * (size_t)e->crow);
    }
    e->rows[e->nrow++] = r;
    tqMapPut(&d->rows, p->rowid + 2, r);
    if (p->to != TQ_OPEN) heapPush(m, (Pend){p->to, 0, 0, RT_ROW_CLOSE, d, p->rowid, p->from, p->to, NULL, NULL});
    memcpy(e->vals, r->vals, sizeof(int64_t) * (size_t)d->nattr);
    /* its bar */
    DBar *b = barNew(m, d, e, p->from);
    b->colour = d->cd ? dspFillOf(m, d, r->vals) : d->colour;
    b->text = dspBarText(m, d, r->vals);
    r->bar = b;
  }
  markChanged(m, e);
}

static void applyClose(DspModel *m, Pend *p) {
  Disp *d = p->d;
  RowRec *r = tqMapDel(&d->rows, p->rowid + 2);
  if (!r) return;
  Elem *e = r->el;
  for (int i = 0; i < e->nrow; i++)
    if (e->rows[i] == r) {
      memmove(e->rows + i, e->rows + i + 1, sizeof(RowRec *) * (size_t)(e->nrow - i - 1));
      e->nrow--;
      break;
    }
  if (e->nrow) memcpy(e->vals, e->rows[e->nrow - 1]->vals, sizeof(int64_t) * (size_t)d->nattr);
  barClose(m, r->bar, p->to);
  free(r);
  markChanged(m, e);
}

static void applyExpire(DspModel *m, Pend *p) {
  if (p->el->until != p->t) return; /* held longer by a later tuple */
  markChanged(m, p->el);
}

/* ================================================================ a step */

/* Brings element e's presence up to date at time t after its rows changed. */
static void settle(DspModel *m, Elem *e, TqTime t) {
  Disp *d = e->d;
  int alive = d->isEvent ? e->until > t : e->nrow > 0;
  if (d->isEvent) {
    if (alive && !e->alive) {
      DBar *b = barNew(m, d, e, e->since);
      b->colour = d->cd ? dspFillOf(m, d, e->vals) : d->colour;
      b->text = dspBarText(m, d, e->vals);
      e->bar = b;
    } else if (!alive && e->alive && e->bar) {
      barClose(m, e->bar, e->until);
      e->bar = NULL;
    }
  }
  int was = e->alive;
  e->alive = alive;
  switch (d->kind) {
    case DSPK_ICON:
      if (alive != was) {
        if (alive) dspLaneAdd(d->lane, e);
        else dspLaneDel(d->lane, e);
        if (e->slot) e->slot->icon = alive ? e : NULL;
        if (e->slot) dspTouchDeps(m, e);
      } else if (alive && (dspLaneGroupAttr(d->lane) >= 0 || dspLaneSubAttr(d->lane) >= 0)) {
        d->lane->dirty = 1; /* its ordering value may have changed */
      }
      dspTouch(m, e);
      break;
    case DSPK_INSIDE:
    case DSPK_POINTER:
    case DSPK_LINE:
      if (alive != was)
        for (int i = 0; i < 2; i++) {
          if (alive) depAdd(e->ends[i], e);
          else depDel(e->ends[i], e);
        }
      if (d->kind == DSPK_INSIDE) {
        dspTouch(m, e->ends[0]->icon);
        if (e->ends[1]->icon) {
          dspTouch(m, e->ends[1]->icon);
          dspTouchDeps(m, e->ends[1]->icon);
        }
      } else {
        dspTouch(m, e);
      }
      break;
    case DSPK_FLASH:
      if (alive != was)
        for (int i = 0; i < d->cd->nflash; i++) {
          if (alive) depAdd(e->fslots[i], e);
          else depDel(e->fslots[i], e);
        }
      dspTouch(m, e);
      break;
    default: break;
  }
}

static int chgCmp(const void *a, const void *b) {
  const DChange *x = a, *y = b;
  return x->o->id - y->o->id;
}

static void emitStep(DspModel *m, TqTime t) {
  /* temporal aspects: ghosts fade, the clock shows the time */
  int keep = 0;
  for (int i = 0; i < m->ghosts.n; i++) {
    DObj *g = m->ghosts.v[i];
    int age = (int)m->stepSeq - g->ghostStep;
    if (age <= 0) {
      m->ghosts.v[keep++] = g;
      continue;
    }
    if (age >= m->fade) {
      g->shown = 0;
      change(m, g, CH_REMOVE);
      tqVecPush(&m->freeGhosts, g);
      continue;
    }
    g->cur.opacity = g->ghostBase * (m->fade - age) / m->fade;
    change(m, g, CH_CHANGE);
    m->ghosts.v[keep++] = g;
  }
  m->ghosts.n = keep;
  DProps cp = {0};
  cp.kind = OK_CLOCK;
  /* wide enough for its text (16 px monospace, 10 px a character): a
  ** recording's h:mm:ss fits 150; a live run's date with nanoseconds
  ** ("2026-11-24 22:56:12.123456789") is given the width of the longest */
  char text[64];
  size_t len = t >= TQ_WALLCLOCK && t < TQ_FOREVER ? 29 : strlen(tqTimeFormat(text, sizeof text, t));
  cp.w = len <= 12 ? 150 : 24 + 10 * (double)len, cp.h = 30;
  cp.x = m->width - 24 - cp.w / 2, cp.y = 30;
  cp.opacity = 1;
  cp.fill = 0x222222;
  cp.stroke = 0x222222;
  cp.at = t; /* its label: the outputs format the time (no symbol per step) */
  dspObjSet(m, m->clock, 1, &cp);
  DProps vp = {0};
  vp.kind = OK_CANVAS;
  vp.w = m->width;
  vp.h = m->height;
  vp.opacity = 1;
  vp.fill = DSP_NOCOLOUR;
  vp.stroke = DSP_NOCOLOUR;
  dspObjSet(m, m->canvas, 1, &vp);

  int n = m->chg.n / 2;
  DChange *ch = tqMalloc(sizeof(DChange) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    ch[i].o = m->chg.v[2 * i];
    ch[i].op = (int)(intptr_t)m->chg.v[2 * i + 1];
  }
  qsort(ch, (size_t)n, sizeof(DChange), chgCmp);
  /* one change per object: the last one wins, an add then a change is an add */
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (k && ch[k - 1].o == ch[i].o) {
      int first = ch[k - 1].op;
      ch[k - 1].op = first == CH_ADD && ch[i].op == CH_CHANGE ? CH_ADD
                     : first == CH_ADD && ch[i].op == CH_REMOVE ? 0
                     : first == CH_REMOVE && ch[i].op == CH_ADD ? CH_CHANGE
                                                                 : ch[i].op;
      if (!ch[k - 1].op) k--;
      continue;
    }
    ch[k++] = ch[i];
  }
  DspStep st = {m->stepSeq, t, k, ch, m->openBars.n, 0, (DBar **)m->openBars.v, NULL};
  /* bars closed this step that were opened earlier */
  TqVec closed = {0};
  for (int i = 0; i < m->closeBars.n; i++) {
    DBar *b = m->closeBars.v[i];
    int opened = 0;
    for (int j = 0; j < m->openBars.n && !opened; j++) opened = m->openBars.v[j] == b;
    if (!opened) tqVecPush(&closed, b);
  }
  st.nclose = closed.n;
  st.close = (DBar **)closed.v;
  m->changes += k;
  if (!m->haveRange) m->first = t;
  m->haveRange = 1;
  m->last = t;
  for (int i = 0; i < m->outs.n; i++) {
    DspOut *o = m->outs.v[i];
    if (o->step) o->step(o->self, m, &st);
  }
  tqVecFree(&closed);
  free(ch);
  for (int i = 0; i < m->closeBars.n; i++) free(m->closeBars.v[i]); /* drawn: done with */
  m->chg.n = 0;
  m->openBars.n = 0;
  m->closeBars.n = 0;
}

static void canvasSize(DspModel *m) {
  double h = dspYBottom(m);
  for (int i = 0; i < m->nlane; i++) {
    Lane *l = &m->lanes[i];
    if (!l->vertical && l->anchor != 4) h += l->cellH * 1.5 * (l->nrows ? 1 : 1);
  }
  m->height = h + 30;
}

/* Processes everything pending at the heap's first time. */
static void step(DspModel *m) {
  TqTime t = m->heap[0].t;
  m->stepSeq++;
  m->steps++;
  m->stamp++;
  while (m->nheap && m->heap[0].t == t) {
    Pend p = heapPop(m);
    if (p.op == RT_ROW_INSERT) applyInsert(m, &p);
    else if (p.op == RT_ROW_CLOSE) applyClose(m, &p);
    else applyExpire(m, &p);
  }
  for (int i = 0; i < m->changed.n; i++) {
    Elem *e = m->changed.v[i];
    e->mark = 0;
    settle(m, e, t);
  }
  m->changed.n = 0;
  double oldBottom = dspYBottom(m);
  double oldTop = dspYTop(m);
  for (int i = 0; i < m->nlane; i++)
    if (m->lanes[i].dirty) dspLaneUpdate(m, &m->lanes[i]);
  if (dspYBottom(m) != oldBottom || dspYTop(m) != oldTop)
    for (int i = 0; i < m->nlane; i++)
      if (!m->lanes[i].vertical || dspYTop(m) != oldTop)
        for (int k = 0; k < m->lanes[i].members.n; k++) dspTouch(m, m->lanes[i].members.v[k]);
  canvasSize(m);
  /* redraw the touched elements; a moved icon touches what is drawn with it */
  for (int i = 0; i < m->redraw.n; i++) {
    Elem *e = m->redraw.v[i];
    switch (e->d->kind) {
      case DSPK_ICON: {
        DProps before = e->obj->cur;
        int was = e->obj->shown;
        dspDrawIcon(m, e);
        if (was != e->obj->shown || !propsEq(&before, &e->obj->cur)) dspTouchDeps(m, e);
        break;
      }
      case DSPK_POINTER:
      case DSPK_LINE: dspDrawLink(m, e); break;
      case DSPK_FLASH: dspDrawFlash(m, e); break;
      default: break;
    }
  }
  m->redraw.n = 0;
  if (!m->chg.n && !m->openBars.n && !m->closeBars.n) {
    /* nothing to draw (a sample that only extends what is drawn) */
    m->stepSeq--;
    m->steps--;
    return;
  }
  emitStep(m, t);
}

/* ================================================================ the consumer */

static int mBegin(void *self, RtNet *net) {
  DspModel *m = self;
  const CpProgram *p = m->prog;
  m->net = net;
  m->tick = p->cat.tick;
  m->byResult = tqCalloc((size_t)(net->nresult ? net->nresult : 1), sizeof(Disp *));
  m->disp = tqCalloc((size_t)(net->nresult + p->displays.n + 1), sizeof(Disp));
  m->bands = tqCalloc((size_t)(net->nresult + p->displays.n + 1), sizeof(DBand));
  /* declared displays first (in program order), then the default timelines */
  for (int i = 0; i < p->displays.n; i++) {
    const CpDisplay *cd = p->displays.v[i];
    if (cd->query < 0 || cd->query >= net->nresult) continue;
    Disp *d = &m->disp[m->ndisp];
    d->index = m->ndisp++;
    d->cd = cd;
    d->kind = cd->kind;
    d->res = &net->result[cd->query];
    m->byResult[cd->query] = d;
  }
  for (int i = 0; i < net->nresult; i++) {
    if (m->byResult[i] || net->result[i].q->display) continue;
    Disp *d = &m->disp[m->ndisp];
    d->index = m->ndisp++;
    d->res = &net->result[i];
    m->byResult[i] = d;
  }
  m->lanes = tqCalloc((size_t)(m->ndisp ? m->ndisp : 1), sizeof(Lane));
  for (int i = 0; i < m->ndisp; i++) {
    Disp *d = &m->disp[i];
    d->nattr = d->res->nattr;
    d->attr = d->res->attr;
    d->isEvent = d->res->isEvent;
    d->hold = d->cd && d->cd->hold ? d->cd->hold : m->tick;
    d->colour = palette[i % 10];
    if (d->cd && d->cd->asp[DSPA_COLOUR].set && d->cd->asp[DSPA_COLOUR].attr < 0)
      d->colour = dspParseColour(d->cd->asp[DSPA_COLOUR].str);
    m->bands[i].name = tqSymZ(d->cd ? d->cd->rel : d->res->name);
    m->bands[i].isEvent = d->isEvent;
    m->bands[i].declared = d->cd != NULL;
    if (d->kind != DSPK_ICON) continue;
    double w = 0, h = 0;
    for (int k = 0; k < d->cd->nicon; k++) {
      static const double sz[][2] = {{0, 0}, {10, 10}, {60, 6}, {40, 40}, {150, 76}, {84, 44}, {44, 44}, {70, 22}};
      int ic = d->cd->icon[k];
      if (sz[ic][0] > w) w = sz[ic][0];
      if (sz[ic][1] > h) h = sz[ic][1];
    }
    d->bw = w;
    d->bh = h;
  }
  /* containers: sized for their contents */
  for (int i = 0; i < m->ndisp; i++) {
    Disp *d = &m->disp[i];
    if (d->kind != DSPK_INSIDE) continue;
    int c = iconDisp(m, d->cd->ent[1]), k = iconDisp(m, d->cd->ent[0]);
    if (c < 0 || k < 0) continue;
    m->disp[c].isContainer = 1;
    m->disp[c].child = &m->disp[k];
    double cw = 16 + 3 * (m->disp[k].bw + 8), ch = m->disp[k].bh + 34;
    if (cw > m->disp[c].bw) m->disp[c].bw = cw;
    if (ch > m->disp[c].bh) m->disp[c].bh = ch;
  }
  /* lanes: left ones from the left edge, right ones from the right edge */
  double left = 24, center = 0, right = 24;
  for (int i = 0; i < m->ndisp; i++) {
    Disp *d = &m->disp[i];
    if (d->kind != DSPK_ICON) continue;
    Lane *l = &m->lanes[m->nlane++];
    d->lane = l;
    l->d = d;
    const CpDisplay *cd = d->cd;
    l->vertical = cd->pos[1] >= 0 || (cd->pos[0] < 0 && cd->anchor < 4);
    l->anchor = cd->anchor ? cd->anchor : l->vertical ? 2 : 4;
    /* room for the largest the icons can be scaled to */
    const CpAspect *sc = &cd->asp[DSPA_SCALE];
    double most = !sc->set ? 1 : sc->attr < 0 ? sc->num : 2;
    l->cellW = d->bw * most + 40;
    l->cellH = d->bh * most + 16;
    if (l->vertical) {
      if (l->anchor == 1) l->x = left + l->cellW / 2 - 20, left += l->cellW;
      else if (l->anchor == 3) right += l->cellW;
      else center += l->cellW;
    }
  }
  m->width = left + center + right + 40;
  if (m->width < 1000) m->width = 1000;
  double rx = m->width - 24, cx = (m->width - center) / 2;
  for (int i = 0; i < m->nlane; i++) {
    Lane *l = &m->lanes[i];
    if (!l->vertical) continue;
    if (l->anchor == 3) l->x = rx - l->cellW / 2 + 20, rx -= l->cellW;
    else if (l->anchor == 2) l->x = cx + l->cellW / 2, cx += l->cellW;
  }
  m->height = 200;
  m->clock = objNew(m, -1, "clock", 0, 0);
  m->canvas = objNew(m, -1, "canvas", 0, 0);
  return 0;
}

static int mRow(void *self, RtResult *res, const RtRow *r) {
  DspModel *m = self;
  Disp *d = res->q->index < m->net->nresult ? m->byResult[res->q->index] : NULL;
  if (!d || m->ended) return 0;
  m->rowsIn++;
  Pend p = {0};
  p.d = d;
  p.rowid = r->rowid;
  if (r->op == RT_ROW_INSERT) {
    p.op = RT_ROW_INSERT;
    p.t = r->from;
    p.from = r->from;
    p.to = d->isEvent ? r->from : r->to;
    p.vals = tqMalloc(sizeof(int64_t) * (size_t)(res->nattr ? res->nattr : 1));
    TQ_MEMCPY(p.vals, r->vals, sizeof(int64_t) * (size_t)res->nattr);
    if (d->isEvent) p.to = TQ_OPEN;
  } else {
    /* a close, or a delete of an open row whose [from, to) another row holds */
    p.op = RT_ROW_CLOSE;
    p.t = r->to;
    p.to = r->to;
  }
  heapPush(m, p);
  return 0;
}

/* Steps up to (not including) w. */
static void release(DspModel *m, TqTime w) {
  while (m->nheap && m->heap[0].t < w) step(m);
}

static int mBatch(void *self, TqTime now) {
  DspModel *m = self;
  TqTime w = now;
  for (int i = 0; i < m->net->nresult; i++) {
    if (!m->byResult[i]) continue;
    RtOp *root = m->net->result[i].root;
    if (root->low < w) w = root->low;
    if (root->endLow < w) w = root->endLow;
  }
  release(m, w);
  return 0;
}

static int mEnd(void *self, RtNet *net, int ok) {
  DspModel *m = self;
  if (m->ended) return 0;
  release(m, TQ_OPEN);
  m->ended = 1;
  int rc = 0;
  for (int i = 0; i < m->outs.n; i++) {
    DspOut *o = m->outs.v[i];
    if (o->end && o->end(o->self, m)) rc = -1;
  }
  m->outs.n = 0;
  return rc;
}

/* ================================================================ public */

DspModel *dspModelNew(const CpProgram *p) {
  DspModel *m = tqCalloc(1, sizeof *m);
  m->prog = p;
  m->timeRep = p->timeRep ? p->timeRep : DSPT_ANIMATIONTRACE;
  m->fade = p->fade ? p->fade : 3;
  m->c.name = "display";
  m->c.self = m;
  m->c.begin = mBegin;
  m->c.row = mRow;
  m->c.batch = mBatch;
  m->c.end = mEnd;
  return m;
}

RtConsumer *dspModelConsumer(DspModel *m) { return &m->c; }

void dspModelAddOutput(DspModel *m, DspOut *o) { tqVecPush(&m->outs, o); }

void dspModelFree(DspModel *m) {
  if (!m) return;
  for (int i = 0; i < m->nheap; i++) free(m->heap[i].vals);
  free(m->heap);
  for (int i = 0; i < m->ndisp; i++) {
    Disp *d = &m->disp[i];
    for (int k = 0; k < d->elems.n; k++) {
      Elem *e = d->elems.v[k];
      for (int r = 0; r < e->nrow; r++) free(e->rows[r]);
      free(e->rows);
      free(e->vals);
      free(e->fslots);
      free(e->fobj);
      free(e);
    }
    tqVecFree(&d->elems);
    tqMapFree(&d->keys);
    tqMapFree(&d->rows);
  }
  for (int i = 0; i < m->nlane; i++) tqVecFree(&m->lanes[i].members);
  free(m->lanes);
  for (uint32_t i = 0; i < m->slots.cap; i++) {
    if (m->slots.slot[i].key <= 1) continue;
    for (Slot *s = m->slots.slot[i].val, *n; s; s = n) {
      n = s->next;
      tqVecFree(&s->deps);
      free(s);
    }
  }
  tqMapFree(&m->slots);
  for (int i = 0; i < m->objs.n; i++) free(m->objs.v[i]);
  tqVecFree(&m->objs);
  for (int i = 0; i < m->bars.n; i++) free(m->bars.v[i]);
  tqVecFree(&m->bars);
  for (int i = 0; i < m->closeBars.n; i++) free(m->closeBars.v[i]);
  tqVecFree(&m->freeGhosts);
  tqVecFree(&m->ghosts);
  tqVecFree(&m->outs);
  tqVecFree(&m->changed);
  tqVecFree(&m->redraw);
  tqVecFree(&m->chg);
  tqVecFree(&m->openBars);
  tqVecFree(&m->closeBars);
  free(m->disp);
  free(m->bands);
  free(m->byResult);
  free(m);
}

void dspModelStats(const DspModel *m, DspStats *s) {
  s->rows = m->rowsIn;
  s->steps = m->steps;
  s->changes = m->changes;
  s->objects = m->objs.n;
  s->bars = m->nbars;
}

int dspModelNObj(const DspModel *m) { return m->objs.n; }

const DObj *dspModelObj(const DspModel *m, int id) { return id >= 0 && id < m->objs.n ? m->objs.v[id] : NULL; }

int dspModelNBand(const DspModel *m) { return m->ndisp; }

const DBand *dspModelBand(const DspModel *m, int i) { return &m->bands[i]; }

const CpProgram *dspModelProgram(const DspModel *m) { return m->prog; }

int dspModelTimeRep(const DspModel *m) { return m->timeRep; }

int dspModelFade(const DspModel *m) { return m->fade; }

TqTime dspModelTick(const DspModel *m) { return m->tick; }

int dspModelNOpenBar(const DspModel *m) { return m->bars.n; }

const DBar *dspModelOpenBar(const DspModel *m, int i) { return m->bars.v[i]; }

void dspModelRange(const DspModel *m, TqTime *first, TqTime *last) {
  *first = m->haveRange ? m->first : 0;
  *last = m->haveRange ? m->last : 0;
}

/* ================================================================ state as text (terminal) */

static int elemTextCmp(const void *a, const void *b) {
  const Elem *x = *(Elem *const *)a, *y = *(Elem *const *)b;
  return strcmp(tqSymName(x->keyText), tqSymName(y->keyText));
}

void dspModelStateText(DspModel *m, TqBuf *out) {
  char buf[256];
  for (int i = 0; i < m->ndisp; i++) {
    Disp *d = &m->disp[i];
    TqVec v = {0};
    for (int k = 0; k < d->elems.n; k++)
      if (((Elem *)d->elems.v[k])->alive) tqVecPush(&v, d->elems.v[k]);
    if (v.n > 1) qsort(v.v, (size_t)v.n, sizeof(void *), elemTextCmp);
    const char *rel = tqSymName(m->bands[i].name);
    for (int k = 0; k < v.n; k++) {
      Elem *e = v.v[k];
      tqBufPrintf(out, "%s %s", rel, d->kind == DSPK_POINTER || d->kind == DSPK_LINE || d->kind == DSPK_INSIDE ? "" : tqSymName(e->keyText));
      switch (d->kind) {
        case DSPK_ICON: {
          int start = d->cd->entityKey ? 1 : d->nattr;
          for (int a = start; a < d->nattr; a++)
            tqBufPrintf(out, " %s=%s", d->attr[a].name, dspValue(buf, sizeof buf, d->attr[a].type, e->vals[a]));
          if (d->isContainer) {
            Elem *kids[64];
            int n = dspChildrenOf(m, e, kids, 64);
            tqBufPuts(out, " [");
            for (int c = 0; c < n; c++) tqBufPrintf(out, "%s%s", c ? " " : "", tqSymName(kids[c]->keyText));
            tqBufPuts(out, "]");
          }
          break;
        }
        case DSPK_INSIDE:
        case DSPK_POINTER:
        case DSPK_LINE: {
          const char *a = dspValue(buf, sizeof buf, d->attr[d->cd->end[0]].type, e->vals[d->cd->end[0]]);
          tqBufPuts(out, a);
          tqBufPrintf(out, " %s ", d->kind == DSPK_INSIDE ? "in" : d->kind == DSPK_POINTER ? "->" : "--");
          tqBufPuts(out, dspValue(buf, sizeof buf, d->attr[d->cd->end[1]].type, e->vals[d->cd->end[1]]));
          break;
        }
        case DSPK_FLASH: tqBufPuts(out, " (flashing)"); break;
        default: break;
      }
      tqBufPuts(out, "\n");
    }
    tqVecFree(&v);
  }
}
