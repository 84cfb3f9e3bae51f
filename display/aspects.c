/*
** aspects.c - the attribute-dependent aspects of the display model (paper
** section 7): a value of a row turned into a drawn property, by the
** display statement's aspects: intensity, colour (a value order, a range,
** or the palette), fill, scale and rotation, over the range of values seen
** so far or the one the statement gives, and the text of labels and
** timeline bars.  Pure functions of a display and a row's values (observe
** widens the seen range); model.c and layout.c call them.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modelInt.h"

/* ================================================================ aspects */

/* A value of attribute a mapped to 0..1 for aspect k of display d. */
static double norm(DspModel *m, Disp *d, int k, const int64_t *vals) {
  const CpAspect *a = &d->cd->asp[k];
  AlgType t = d->attr[a->attr].type;
  int64_t v = vals[a->attr];
  if (a->nmap) {
    for (int i = 0; i < a->nmap; i++)
      if (a->map[i] == v) return a->nmap > 1 ? (double)i / (a->nmap - 1) : 1.0;
    return 0;
  }
  switch (t.kind) {
    case TY_ENUM: return t.en->n > 1 ? (double)v / (t.en->n - 1) : 1.0;
    case TY_INT:
    case TY_FLOAT: {
      double x = valNum(t, v), lo = a->ranged ? a->lo : d->lo[k], hi = a->ranged ? a->hi : d->hi[k];
      if (hi == lo) return 0.5;
      double r = (x - lo) / (hi - lo);
      return r < 0 ? 0 : r > 1 ? 1 : r;
    }
    default: return (double)(tqHashBytes(tqSymName((int32_t)v), strlen(tqSymName((int32_t)v)), 7) % 5) / 4.0;
  }
}

/* Widens the observed range of numeric aspects; returns 1 when it changed
** (every element of the display must be drawn again). */
int dspObserve(Disp *d, const int64_t *vals) {
  if (!d->cd) return 0;
  int changed = 0;
  for (int k = DSPA_INTENSITY; k < DSPA_NVALUE; k++) {
    const CpAspect *a = &d->cd->asp[k];
    if (!a->set || a->attr < 0 || a->ranged || a->nmap) continue;
    AlgType t = d->attr[a->attr].type;
    if (t.kind != TY_INT && t.kind != TY_FLOAT) continue;
    double x = valNum(t, vals[a->attr]);
    if (isnan(x)) continue;
    if (!d->seen[k]) {
      d->seen[k] = 1;
      d->lo[k] = d->hi[k] = x;
      changed = 1;
    } else if (x < d->lo[k] || x > d->hi[k]) {
      if (x < d->lo[k]) d->lo[k] = x;
      if (x > d->hi[k]) d->hi[k] = x;
      changed = 1;
    }
  }
  return changed;
}

uint32_t dspMix(uint32_t a, uint32_t b, double k) {
  uint32_t r = 0;
  for (int s = 0; s < 24; s += 8) {
    double x = ((a >> s) & 255) * (1 - k) + ((b >> s) & 255) * k;
    r |= (uint32_t)(x + 0.5) << s;
  }
  return r;
}

uint32_t dspParseColour(const char *s) {
  static const struct {
    const char *n;
    uint32_t c;
  } names[] = {{"black", 0x000000}, {"white", 0xffffff}, {"red", 0xd62728},   {"green", 0x2ca02c},
               {"blue", 0x1f77b4},  {"yellow", 0xe8c31a}, {"orange", 0xff7f0e}, {"purple", 0x9467bd},
               {"grey", 0x7f7f7f},  {"gray", 0x7f7f7f},  {"brown", 0x8c564b}, {"pink", 0xe377c2},
               {"cyan", 0x17becf},  {"magenta", 0xc2185b}, {"navy", 0x1f3b73}, {"teal", 0x2a9d8f}};
  if (s[0] == '#') {
    size_t n = strlen(s + 1);
    unsigned v = (unsigned)strtoul(s + 1, NULL, 16);
    if (n == 3) return ((v >> 8 & 15) * 17) << 16 | ((v >> 4 & 15) * 17) << 8 | (v & 15) * 17;
    if (n == 6) return v & 0xffffff;
  }
  for (size_t i = 0; i < TQ_ARRAY_SIZE(names); i++)
    if (!strcmp(names[i].n, s)) return names[i].c;
  return 0x4e79a7;
}

/* Base colour of a tuple of display d. */
uint32_t dspColourOf(DspModel *m, Disp *d, const int64_t *vals) {
  if (!d->cd || !d->cd->asp[DSPA_COLOUR].set || d->cd->asp[DSPA_COLOUR].attr < 0) return d->colour;
  const CpAspect *a = &d->cd->asp[DSPA_COLOUR];
  AlgType t = d->attr[a->attr].type;
  int64_t v = vals[a->attr];
  if (a->nmap) {
    for (int i = 0; i < a->nmap; i++)
      if (a->map[i] == v) return palette[i % 10];
    return 0xbab0ac;
  }
  if (t.kind == TY_ENUM) return palette[v % 10];
  if (t.kind == TY_INT || t.kind == TY_FLOAT) return dspMix(0x2c7bb6, 0xd7191c, norm(m, d, DSPA_COLOUR, vals));
  const char *s = tqSymName((int32_t)v);
  return palette[tqHashBytes(s, strlen(s), 3) % 10];
}

double dspIntensityOf(DspModel *m, Disp *d, const int64_t *vals) {
  if (!d->cd || !d->cd->asp[DSPA_INTENSITY].set) return 0.55;
  const CpAspect *a = &d->cd->asp[DSPA_INTENSITY];
  return a->attr < 0 ? a->num : norm(m, d, DSPA_INTENSITY, vals);
}

/* Fill of a tuple: its colour at its intensity over white. */
uint32_t dspFillOf(DspModel *m, Disp *d, const int64_t *vals) {
  return dspMix(0xffffff, dspColourOf(m, d, vals), 0.12 + 0.88 * dspIntensityOf(m, d, vals));
}

double dspScaleOf(DspModel *m, Disp *d, const int64_t *vals) {
  if (!d->cd || !d->cd->asp[DSPA_SCALE].set) return 1;
  const CpAspect *a = &d->cd->asp[DSPA_SCALE];
  return a->attr < 0 ? a->num : 0.5 + 1.5 * norm(m, d, DSPA_SCALE, vals);
}

double dspRotationOf(DspModel *m, Disp *d, const int64_t *vals) {
  if (!d->cd || !d->cd->asp[DSPA_ROTATION].set) return 0;
  const CpAspect *a = &d->cd->asp[DSPA_ROTATION];
  if (a->attr < 0) return a->num;
  AlgType t = d->attr[a->attr].type;
  if ((t.kind == TY_INT || t.kind == TY_FLOAT) && !a->ranged) return fmod(valNum(t, vals[a->attr]), 360.0);
  return 360.0 * norm(m, d, DSPA_ROTATION, vals);
}

int32_t dspLabelOf(Disp *d, Elem *e) {
  char buf[256];
  if (!d->cd) return 0;
  const CpAspect *a = &d->cd->asp[DSPA_LABEL];
  if (!a->set) {
    for (int i = 0; i < d->cd->nicon; i++)
      if (d->cd->icon[i] == DSPI_TEXT) return e->keyText;
    return 0;
  }
  if (a->attr < 0) return tqSymZ(a->str);
  return tqSymZ(dspValue(buf, sizeof buf, d->attr[a->attr].type, e->vals[a->attr]));
}

/* Text on a timeline bar: the values that are not the key. */
int32_t dspBarText(DspModel *m, Disp *d, const int64_t *vals) {
  char buf[256];
  TqBuf b = {0};
  if (d->cd && d->cd->asp[DSPA_LABEL].set && d->cd->asp[DSPA_LABEL].attr > 0) {
    int a = d->cd->asp[DSPA_LABEL].attr;
    tqBufPuts(&b, dspValue(buf, sizeof buf, d->attr[a].type, vals[a]));
  } else if (d->cd && d->cd->entityKey) {
    for (int i = 1; i < d->nattr; i++)
      tqBufPrintf(&b, "%s%s", i > 1 ? " " : "", dspValue(buf, sizeof buf, d->attr[i].type, vals[i]));
  }
  int32_t s = b.s ? tqSymZ(b.s) : 0;
  tqBufFree(&b);
  return s;
}
