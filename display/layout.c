/*
** layout.c - where the display model draws: lanes (the icons of one
** display ordered by their position attribute at the left or the right,
** groups and sub-orders), the geometry of an element (its size, a
** container's children inside it, the point where a pointer meets an
** icon's edge), and drawing an element's objects: an entity's icon, a
** relationship's pointer or line, a flash's rings.  Changed elements touch
** those drawn with them (touchDeps), so one step recomputes only those.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modelInt.h"

static Elem *containerOf(DspModel *m, Elem *icon);

/* ================================================================ lanes and geometry */

static int laneCmp(const Elem *a, const Elem *b) {
  const Disp *d = a->d;
  const CpDisplay *cd = d->cd;
  int axes[2] = {cd->pos[1], cd->pos[0]};
  int ords[2] = {cd->order[1], cd->order[0]};
  if (!d->lane->vertical) {
    axes[0] = cd->pos[0], axes[1] = cd->pos[1];
    ords[0] = cd->order[0], ords[1] = cd->order[1];
  }
  for (int k = 0; k < 2; k++) {
    if (axes[k] < 0) continue;
    int c = valCmp(d->attr[axes[k]].type, a->vals[axes[k]], b->vals[axes[k]]);
    if (c) return ords[k] == DSPO_DESCENDING ? -c : c;
  }
  return strcmp(tqSymName(a->keyText), tqSymName(b->keyText));
}

static void laneSort(TqVec *v) {
  /* insertion sort: lanes are short and nearly sorted between steps */
  for (int i = 1; i < v->n; i++) {
    Elem *x = v->v[i];
    int j = i - 1;
    while (j >= 0 && laneCmp(v->v[j], x) > 0) {
      v->v[j + 1] = v->v[j];
      j--;
    }
    v->v[j + 1] = x;
  }
}

/* The attribute that groups a lane's icons into rows (vertical) or columns. */
int dspLaneGroupAttr(const Lane *l) {
  const CpDisplay *cd = l->d->cd;
  return l->vertical ? cd->pos[1] : cd->pos[0];
}

int dspLaneSubAttr(const Lane *l) {
  const CpDisplay *cd = l->d->cd;
  return l->vertical ? cd->pos[0] : cd->pos[1];
}

/* Orders a lane again; members whose place changed are redrawn. */
void dspLaneUpdate(DspModel *m, Lane *l) {
  laneSort(&l->members);
  int g = dspLaneGroupAttr(l), sub = dspLaneSubAttr(l);
  int row = -1, col = 0, nsub = 0;
  AlgType gt = g >= 0 ? l->d->attr[g].type : (AlgType){0};
  /* columns by the second attribute: dense rank over the lane */
  TqVec subs = {0};
  if (sub >= 0) {
    AlgType st = l->d->attr[sub].type;
    for (int i = 0; i < l->members.n; i++) tqVecPush(&subs, l->members.v[i]);
    for (int i = 1; i < subs.n; i++) { /* sort by the sub attribute */
      Elem *x = subs.v[i];
      int j = i - 1;
      while (j >= 0 && valCmp(st, ((Elem *)subs.v[j])->vals[sub], x->vals[sub]) > 0) {
        subs.v[j + 1] = subs.v[j];
        j--;
      }
      subs.v[j + 1] = x;
    }
  }
  for (int i = 0; i < l->members.n; i++) {
    Elem *e = l->members.v[i], *prev = i ? l->members.v[i - 1] : NULL;
    if (!prev || g < 0 || valCmp(gt, prev->vals[g], e->vals[g])) {
      row++;
      col = 0;
    } else {
      col++;
    }
    int c = col;
    if (sub >= 0) {
      AlgType st = l->d->attr[sub].type;
      c = 0;
      for (int k = 0; k < subs.n; k++) {
        Elem *x = subs.v[k];
        if (x == e) break;
        if (k + 1 < subs.n && valCmp(st, x->vals[sub], ((Elem *)subs.v[k + 1])->vals[sub])) c++;
      }
      if (c > nsub) nsub = c;
    }
    if (e->row != row || e->col != c) {
      e->row = row;
      e->col = c;
      dspTouch(m, e);
    }
  }
  tqVecFree(&subs);
  l->nrows = row + 1;
  l->dirty = 0;
}

void dspLaneAdd(Lane *l, Elem *e) {
  tqVecPush(&l->members, e);
  e->inLane = 1;
  e->row = e->col = -1;
  l->dirty = 1;
}

void dspLaneDel(Lane *l, Elem *e) {
  for (int i = 0; i < l->members.n; i++)
    if (l->members.v[i] == e) {
      memmove(l->members.v + i, l->members.v + i + 1, sizeof(void *) * (size_t)(l->members.n - i - 1));
      l->members.n--;
      break;
    }
  e->inLane = 0;
  l->dirty = 1;
}

double dspYTop(DspModel *m) {
  double y = 70;
  for (int i = 0; i < m->nlane; i++)
    if (!m->lanes[i].vertical && m->lanes[i].anchor == 4) y += m->lanes[i].cellH * (m->lanes[i].nrows ? m->lanes[i].nrows : 1);
  return y;
}

double dspYBottom(DspModel *m) {
  double y = dspYTop(m), most = 0;
  for (int i = 0; i < m->nlane; i++)
    if (m->lanes[i].vertical && m->lanes[i].nrows * m->lanes[i].cellH > most) most = m->lanes[i].nrows * m->lanes[i].cellH;
  return y + most + 10;
}

int dspChildrenOf(DspModel *m, Elem *c, Elem **out, int max) {
  int n = 0;
  if (!c->slot) return 0;
  for (int i = 0; i < c->slot->deps.n; i++) {
    Elem *r = c->slot->deps.v[i];
    if (r->d->kind != DSPK_INSIDE || r->ends[1] != c->slot) continue;
    Elem *ch = r->ends[0]->icon;
    if (!ch || containerOf(m, ch) != c) continue;
    int dup = 0;
    for (int k = 0; k < n; k++) dup |= out[k] == ch;
    if (dup) continue;
    if (n < max) out[n++] = ch;
  }
  /* in lane order */
  for (int i = 1; i < n; i++) {
    Elem *x = out[i];
    int j = i - 1;
    while (j >= 0 && laneCmp(out[j], x) > 0) {
      out[j + 1] = out[j];
      j--;
    }
    out[j + 1] = x;
  }
  return n;
}

/* The latest relationship that puts icon inside an alive container. */
static Elem *containerOf(DspModel *m, Elem *icon) {
  if (!icon->slot) return NULL;
  for (int i = icon->slot->deps.n - 1; i >= 0; i--) {
    Elem *r = icon->slot->deps.v[i];
    if (r->d->kind != DSPK_INSIDE || r->ends[0] != icon->slot) continue;
    Elem *c = r->ends[1]->icon;
    if (c && c != icon) return c;
  }
  return NULL;
}

/* Size of an alive icon: its base size at its scale; a container grows to
** hold its icons side by side. */
static void elemSize(DspModel *m, Elem *e, double *w, double *h, int depth) {
  Disp *d = e->d;
  double s = dspScaleOf(m, d, e->vals);
  *w = d->bw * s;
  *h = d->bh * s;
  if (!d->isContainer || depth > 8) return;
  Elem *kids[64];
  int n = dspChildrenOf(m, e, kids, 64);
  double cw = 0, ch = 0;
  for (int i = 0; i < n; i++) {
    double kw, kh;
    elemSize(m, kids[i], &kw, &kh, depth + 1);
    cw += kw + 8;
    if (kh > ch) ch = kh;
  }
  if (cw + 16 > *w) *w = cw + 16;
  if (ch + 34 > *h) *h = ch + 34;
}

/* Geometry of an alive icon (memoized per step): at its place in its lane,
** or in its container's row of icons. */
static void geom(DspModel *m, Elem *e) {
  if (e->gstamp == m->stamp || e->gbusy) return;
  e->gbusy = 1;
  Lane *l = e->d->lane;
  double w, h, x, y;
  elemSize(m, e, &w, &h, 0);
  if (l->vertical) {
    int dir = l->anchor == 3 ? -1 : 1;
    x = l->x + dir * e->col * l->cellW;
    y = dspYTop(m) + e->row * l->cellH + l->cellH / 2;
  } else {
    x = 24 + e->row * l->cellW + l->cellW / 2;
    double y0;
    if (l->anchor == 4) {
      y0 = 70;
      for (Lane *o = m->lanes; o < l; o++)
        if (!o->vertical && o->anchor == 4) y0 += o->cellH * (o->nrows ? o->nrows : 1);
    } else {
      y0 = dspYBottom(m);
      for (Lane *o = m->lanes; o < l; o++)
        if (!o->vertical && o->anchor != 4) y0 += o->cellH * 1.5;
    }
    y = y0 + e->col * l->cellH + l->cellH / 2;
  }
  e->gw = w;
  e->gh = h;
  Elem *c = containerOf(m, e);
  if (c && !c->gbusy) {
    geom(m, c);
    Elem *kids[64];
    int n = dspChildrenOf(m, c, kids, 64);
    double cx = c->gx - c->gw / 2 + 8;
    for (int i = 0; i < n; i++) {
      double kw, kh;
      elemSize(m, kids[i], &kw, &kh, 1);
      if (kids[i] == e) {
        x = cx + kw / 2;
        break;
      }
      cx += kw + 8;
    }
    y = c->gy + 9;
  }
  e->gx = x;
  e->gy = y;
  e->gstamp = m->stamp;
  e->gbusy = 0;
}

/* Where the segment from (x, y) toward (tx, ty) leaves icon e's outline. */
static void edgePoint(const Elem *e, double tx, double ty, double *ox, double *oy) {
  double dx = tx - e->gx, dy = ty - e->gy, len = sqrt(dx * dx + dy * dy);
  if (len < 1e-9) {
    *ox = e->gx;
    *oy = e->gy;
    return;
  }
  double ux = dx / len, uy = dy / len, a = e->gw / 2, b = e->gh / 2, r;
  int box = 0;
  for (int i = 0; i < e->d->cd->nicon; i++) box |= e->d->cd->icon[i] == DSPI_RECTANGLE || e->d->cd->icon[i] == DSPI_TEXT;
  if (box) {
    double rx = fabs(ux) > 1e-9 ? a / fabs(ux) : 1e18, ry = fabs(uy) > 1e-9 ? b / fabs(uy) : 1e18;
    r = rx < ry ? rx : ry;
  } else {
    r = 1 / sqrt((ux * ux) / (a * a) + (uy * uy) / (b * b));
  }
  *ox = e->gx + ux * r;
  *oy = e->gy + uy * r;
}

/* ================================================================ drawing an element */

void dspDrawIcon(DspModel *m, Elem *e) {
  Disp *d = e->d;
  DProps p = {0};
  if (e->alive) {
    geom(m, e);
    p.kind = OK_ICON;
    for (int i = 0; i < d->cd->nicon; i++) p.shape[i] = (uint8_t)d->cd->icon[i];
    for (int i = 0; i < d->cd->nicon; i++)
      if (d->cd->icon[i] == DSPI_POLYGON) p.sides = (uint8_t)d->cd->sides[i];
    p.x = e->gx;
    p.y = e->gy;
    p.w = e->gw;
    p.h = e->gh;
    p.rot = dspRotationOf(m, d, e->vals);
    p.opacity = 1;
    p.fill = dspFillOf(m, d, e->vals);
    p.stroke = dspMix(dspColourOf(m, d, e->vals), 0, 0.35);
    p.label = dspLabelOf(d, e);
    p.labelPos = d->isContainer || (d->cd->nicon == 1 && d->cd->icon[0] == DSPI_RECTANGLE);
    Elem *c = containerOf(m, e);
    p.in = c ? c->obj->id + 1 : 0;
  }
  dspObjSet(m, e->obj, e->alive, &p);
}

void dspDrawLink(DspModel *m, Elem *e) {
  Disp *d = e->d;
  Elem *a = e->ends[0]->icon, *b = e->ends[1]->icon;
  int want = e->alive && a && b && a != b;
  DProps p = {0};
  if (want) {
    geom(m, a);
    geom(m, b);
    double x1, y1, x2, y2;
    edgePoint(a, b->gx, b->gy, &x1, &y1);
    edgePoint(b, a->gx, a->gy, &x2, &y2);
    double dx = x2 - x1, dy = y2 - y1, len = sqrt(dx * dx + dy * dy), off = ((d->index % 3) - 1) * 5.0;
    if (len > 1e-9 && off != 0) {
      x1 += -dy / len * off, y1 += dx / len * off;
      x2 += -dy / len * off, y2 += dx / len * off;
    }
    p.kind = d->kind == DSPK_POINTER ? OK_ARROW : OK_SEGMENT;
    p.x = x1, p.y = y1, p.x2 = x2, p.y2 = y2;
    p.opacity = 1;
    p.fill = DSP_NOCOLOUR;
    p.stroke = dspMix(0xffffff, dspColourOf(m, d, e->vals),
                   d->cd->asp[DSPA_INTENSITY].set ? 0.15 + 0.85 * dspIntensityOf(m, d, e->vals) : 1.0);
    p.label = dspLabelOf(d, e);
  }
  dspObjSet(m, e->obj, want, &p);
}

void dspDrawFlash(DspModel *m, Elem *e) {
  Disp *d = e->d;
  for (int i = 0; i < d->cd->nflash; i++) {
    Elem *t = e->fslots[i]->icon;
    int want = e->alive && t;
    DProps p = {0};
    if (want) {
      geom(m, t);
      p.kind = OK_FLASH;
      p.x = t->gx, p.y = t->gy, p.w = t->gw + 16, p.h = t->gh + 16;
      p.opacity = 1;
      p.fill = DSP_NOCOLOUR;
      p.stroke = d->cd->asp[DSPA_COLOUR].set ? dspColourOf(m, d, e->vals) : 0xe8a317;
      p.target = t->obj->id + 1;
    }
    dspObjSet(m, e->fobj[i], want, &p);
  }
}

/* Everything drawn with icon e is drawn again. */
void dspTouchDeps(DspModel *m, Elem *e) {
  if (!e->slot) return;
  for (int i = 0; i < e->slot->deps.n; i++) {
    Elem *r = e->slot->deps.v[i];
    if (r->d->kind == DSPK_INSIDE) {
      if (r->ends[1] == e->slot && r->ends[0]->icon) dspTouch(m, r->ends[0]->icon); /* our children */
      if (r->ends[0] == e->slot && r->ends[1]->icon) dspTouch(m, r->ends[1]->icon); /* our container */
    } else {
      dspTouch(m, r);
    }
  }
}
