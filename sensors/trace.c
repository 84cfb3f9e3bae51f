/*
** trace.c - reading the text recording format (see sensors.h).
**
** The whole file is checked before anything runs: a bad line is reported
** with file:line:col and a caret, and no packet of a bad recording is ever
** replayed, so nothing is stored half-way.  Intervals are matched here: a
** NAME- line names an interval begun earlier (by all its values, or by its
** key for keyed relations); a keyed NAME+ closes the open interval with the
** same key at the same time.
*/
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "sensorsInt.h"

/* The words seen last, by their bytes (up to 16): the symbol and what was
** looked up for it, so that a frequent word (a relation name, an entity,
** an enum value) is interned and checked once, not on every line. */
typedef struct WordSlot {
  uint64_t w[2];        /* the word's bytes, zero-padded */
  int32_t n;            /* its length; 0: empty slot */
  int32_t sym;          /* tqSym of it, -1 until asked (slotSym) */
  const AlgRel *rel;    /* as a relation name (NULL: none or not asked) */
  const AlgEnum *en;    /* as a value of this enum ... */
  int32_t enIdx;        /* ... this one */
  int32_t entOk;        /* a well-formed entity name */
} WordSlot;
#define WORD_BITS 10

/* The tails seen last: the bytes of a line after its time (up to
** TAIL_BYTES) and what the line parsed to, up to its values, when it
** parsed without error.  Parsing them is a function of those bytes alone
** (the catalog is fixed, symbols are interned once), and a recording
** repeats a few thousand of them (a relation, its sign and its values),
** so a tail seen before is not parsed again: its relation, sign and
** values are taken from its slot, and the line goes on from there as if
** parsed (what follows the values depends on the recording's state, not
** on the bytes: it always runs). */
#define TAIL_WORDS 5 /* (tailSet and tailIs take five) */
#define TAIL_BYTES (8 * TAIL_WORDS)
#define TAIL_VALS 4
#define TAIL_BITS 12 /* sets, of TAIL_WAYS slots each (the newest first) */
#define TAIL_WAYS 2
typedef struct TailSlot {
  uint64_t w[TAIL_WORDS]; /* the tail's bytes, zero-padded */
  int32_t n;              /* its length; 0: empty slot */
  int16_t nameOff;        /* the name's offset in the tail */
  int16_t nn;             /* its length, without the sign */
  int8_t sign, sample;    /* as parseLine's */
  int8_t nv;              /* values given */
  const AlgRel *r;        /* the relation */
  int64_t v[TAIL_VALS];   /* the values */
} TailSlot;

typedef struct Parser {
  SnsTrace *tr;
  TqDiag *d;
  const char *p, *e;   /* cursor in the current line */
  const char *ls;      /* start of the line */
  int line;
  TqMap open;          /* key hash -> first open interval index + 1 */
  char *badRel;        /* relations with an error on some line (no cascades) */
  TqMap relBySym;      /* symbol of a name as written -> relation + 1 (cache) */
  TqTime lastT;
  int haveT;
  int64_t lost;        /* records its loss lines say were lost, so far (at most TQ_PM_LOST_MAX) */
  WordSlot *wc;        /* 1 << WORD_BITS slots */
  TailSlot *tc;        /* 1 << TAIL_BITS slots */
  const char *textEnd; /* end of the whole text */
  uint64_t lastTw[2];  /* the last line's time word, zero-padded ... */
  int lastTn;          /* ... its length (0: none) */
  const unsigned char *drop; /* per relation: 1 its records checked, not kept; 2 some (NULL: none) */
  SnsNeedFn need;      /* ... which of a 2: by entity */
  void *needCtx;
  unsigned char **entNeed; /* ... cached: 0 not asked, 1 dropped, 2 kept (by entity) */
  int64_t *nentNeed;   /* ... their sizes */
  int32_t *freeIv;     /* per relation: its dropped intervals that ended, to serve again (-1 ends) */
  TqSource win;        /* the current line, as errors show it (locAt) */
  int nerr0;           /* errors before the parse ... */
  size_t out0;         /* ... and the length of their messages */
  int cut;             /* 20 errors: the lines are no longer parsed */
} Parser;

/* The bytes of each word of a tail of n bytes (keepMask[n][i]). */
static uint64_t keepMask[TAIL_BYTES + 1][TAIL_WORDS];
static void keepMaskInit(void) {
  for (int n = 0; n <= TAIL_BYTES; n++)
    for (int i = 0; i < TAIL_WORDS; i++) {
      int k = n - 8 * i;
      keepMask[n][i] = k >= 8 ? ~(uint64_t)0 : k <= 0 ? 0 : ((uint64_t)1 << (8 * k)) - 1;
    }
}

/* The set of tail [s, s + n) (its bytes into w: TAIL_WAYS slots), or NULL
** when it is too long to be kept. */
static TailSlot *tailSet(Parser *ps, const char *s, int n, uint64_t *w) {
  if (n <= 0 || n > TAIL_BYTES || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) return NULL;
  if (ps->textEnd - s >= TAIL_BYTES) {
    memcpy(w, s, TAIL_BYTES); /* (the bytes past the tail are masked off) */
  } else { /* near the end of the text */
    memset(w, 0, TAIL_BYTES);
    memcpy(w, s, (size_t)n);
  }
  const uint64_t *m = keepMask[n];
  w[0] &= m[0], w[1] &= m[1], w[2] &= m[2], w[3] &= m[3], w[4] &= m[4]; /* (TAIL_WORDS) */
  uint64_t h = ((w[0] + w[1] * 0xc2b2ae3d27d4eb4fULL) ^ (w[2] + w[3] * 0x165667b19e3779f9ULL) ^ (w[4] * 0x27d4eb2f165667c5ULL) ^
                (uint64_t)n) * 0x9e3779b97f4a7c15ULL;
  return &ps->tc[(h >> (64 - TAIL_BITS)) * TAIL_WAYS];
}
static int tailIs(const TailSlot *t, const uint64_t *w, int n) {
  return t->n == n && !((t->w[0] ^ w[0]) | (t->w[1] ^ w[1]) | (t->w[2] ^ w[2]) | (t->w[3] ^ w[3]) | (t->w[4] ^ w[4]));
}

static WordSlot *wordSlot(Parser *ps, const char *s, int n) {
  if (n <= 0 || n > 16) return NULL;
  uint64_t w[2] = {0, 0};
  if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && ps->textEnd - s >= 16) {
    /* two whole loads, masked to the word (no byte stores to read back) */
    memcpy(&w[0], s, 8);
    memcpy(&w[1], s + 8, 8);
    if (n < 8) {
      w[0] &= ((uint64_t)1 << (8 * n)) - 1;
      w[1] = 0;
    } else if (n < 16) {
      w[1] &= ((uint64_t)1 << (8 * (n - 8))) - 1;
    }
  } else {
    memcpy(w, s, (size_t)n);
  }
  uint64_t h = (w[0] ^ (w[1] * 0xc2b2ae3d27d4eb4fULL) ^ (uint64_t)n) * 0x9e3779b97f4a7c15ULL;
  WordSlot *ws = &ps->wc[h >> (64 - WORD_BITS)];
  if (ws->n == n && ws->w[0] == w[0] && ws->w[1] == w[1]) return ws;
  *ws = (WordSlot){{w[0], w[1]}, n, -1, NULL, NULL, -1, 0};
  return ws;
}

/* The symbol of the slot's word s (interned on first use only: an enum
** value or a relation name is not a symbol). */
static int32_t slotSym(WordSlot *ws, const char *s) {
  if (ws->sym < 0) ws->sym = tqSym(s, (size_t)ws->n);
  return ws->sym;
}

/* Bytes that end an unquoted word: white space, '#' and NUL. */
static const unsigned char wordEnd[256] = {[0] = 1,    [' '] = 1,  ['\t'] = 1, ['\n'] = 1,
                                           ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, ['#'] = 1};

/* Where at is, in the current line: an error shows that line, which is
** what the parser holds of a file read in parts (win stands for it). */
static TqLoc locAt(Parser *ps, const char *at) {
  ps->win.name = ps->tr->src->name;
  ps->win.text = (char *)ps->ls;
  ps->win.len = (size_t)(ps->e - ps->ls);
  ps->win.line0 = ps->line - 1;
  TqLoc l = {&ps->win, ps->line, (int)(at - ps->ls) + 1};
  return l;
}

/* A line ends at its '\n' or at the text's terminating NUL, and neither is
** skipped as white space nor part of a word: the scans need no bound. */
static void skipWs(Parser *ps) {
  const char *p = ps->p;
  while (*p == ' ' || *p == '\t' || *p == '\r') p++;
  if (p < ps->e && *p == '#') p = ps->e;
  ps->p = p;
}

/* Next whitespace-separated word (a quoted string counts as one). */
static int word(Parser *ps, const char **s, int *n) {
  skipWs(ps);
  if (ps->p >= ps->e) return 0;
  *s = ps->p;
  if (*ps->p == '"') {
    ps->p++;
    while (ps->p < ps->e && *ps->p != '"') {
      if (*ps->p == '\\' && ps->p + 1 < ps->e) ps->p++;
      ps->p++;
    }
    if (ps->p >= ps->e) {
      tqError(ps->d, locAt(ps, *s), "unterminated string");
      *n = -1;
      return 1;
    }
    ps->p++;
  } else {
    const char *p = ps->p;
    while (!wordEnd[(unsigned char)*p]) p++;
    ps->p = p;
  }
  *n = (int)(ps->p - *s);
  return 1;
}

static int64_t addVals(SnsTrace *tr, int n) {
  if (tr->nvals + n > tr->cvals) {
    tr->cvals = tr->cvals ? tr->cvals * 2 : 4096;
    while (tr->nvals + n > tr->cvals) tr->cvals *= 2;
    tr->vals = tqRealloc(tr->vals, sizeof(int64_t) * (size_t)tr->cvals);
    tqHugePages(tr->vals, sizeof(int64_t) * (size_t)tr->cvals);
  }
  int64_t off = tr->nvals;
  tr->nvals += n;
  return off;
}

static SnsPacket *addPk(SnsTrace *tr) {
  if (tr->npk == tr->cpk) {
    tr->cpk = tr->cpk ? tr->cpk * 2 : 4096;
    tr->pk = tqRealloc(tr->pk, sizeof(SnsPacket) * (size_t)tr->cpk);
    tqHugePages(tr->pk, sizeof(SnsPacket) * (size_t)tr->cpk);
  }
  SnsPacket *p = &tr->pk[tr->npk++];
  memset(p, 0, sizeof *p);
  return p;
}

static int32_t addIv(SnsTrace *tr) {
  if (tr->niv == tr->civ) {
    tr->civ = tr->civ ? tr->civ * 2 : 1024;
    tr->iv = tqRealloc(tr->iv, sizeof(SnsIv) * (size_t)tr->civ);
    tqHugePages(tr->iv, sizeof(SnsIv) * (size_t)tr->civ);
  }
  memset(&tr->iv[tr->niv], 0, sizeof(SnsIv));
  return (int32_t)tr->niv++;
}

/* Parses one value of type `ty` from word [s, s+n). */
static int parseValue(Parser *ps, const AlgAttr *at, const char *s, int n, int64_t *out) {
  char buf[64];
  const AlgType *ty = &at->type;
  if (n > 0 && s[0] == '"') {
    if (ty->kind != TY_STRING && ty->kind != TY_ENTITY) {
      tqError(ps->d, locAt(ps, s), "attribute %s expects %s, not a string", at->name,
              algTypeName(*ty, buf, sizeof buf));
      return -1;
    }
    char *tmp = tqMalloc((size_t)n);
    int j = 0;
    for (int i = 1; i < n - 1; i++) {
      if (s[i] == '\\' && i + 1 < n - 1) i++;
      tmp[j++] = s[i];
    }
    *out = tqSym(tmp, (size_t)j);
    free(tmp);
    return 0;
  }
  switch (ty->kind) {
    case TY_INT: {
      char *end;
      char num[32];
      if (n >= (int)sizeof num) goto bad;
      memcpy(num, s, (size_t)n);
      num[n] = 0;
      long long v = strtoll(num, &end, 10);
      if (*end || end == num) goto bad;
      *out = v;
      return 0;
    }
    case TY_FLOAT: {
      char *end;
      char num[64];
      if (n >= (int)sizeof num) goto bad;
      memcpy(num, s, (size_t)n);
      num[n] = 0;
      double v = strtod(num, &end);
      if (*end || end == num || !isfinite(v)) goto bad;
      memcpy(out, &v, sizeof v);
      return 0;
    }
    case TY_STRING: {
      WordSlot *ws = wordSlot(ps, s, n);
      *out = ws ? slotSym(ws, s) : tqSym(s, (size_t)n);
      return 0;
    }
    case TY_ENUM: {
      WordSlot *ws = wordSlot(ps, s, n);
      if (ws && ws->en == ty->en) {
        *out = ws->enIdx;
        return 0;
      }
      for (int i = 0; i < ty->en->n; i++) {
        if ((int)strlen(ty->en->names[i]) == n && !strncasecmp(ty->en->names[i], s, (size_t)n)) {
          *out = i;
          if (ws) {
            ws->en = ty->en;
            ws->enIdx = i;
          }
          return 0;
        }
      }
    }
      {
        TqBuf b = {0};
        for (int i = 0; i < ty->en->n; i++) tqBufPrintf(&b, "%s%s", i ? ", " : "", ty->en->names[i]);
        tqError(ps->d, locAt(ps, s), "'%.*s' is not a value of %s (one of: %s)", n, s, at->name, b.s ? b.s : "");
        tqBufFree(&b);
      }
      return -1;
    case TY_ENTITY: {
      WordSlot *ws = wordSlot(ps, s, n);
      if (ws && ws->entOk) {
        *out = slotSym(ws, s);
        return 0;
      }
      for (int i = 0; i < n; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.' && s[i] != ':' && s[i] != '/') {
          tqError(ps->d, locAt(ps, s + i), "malformed entity name '%.*s' for %s (quote names with other characters)", n,
                  s, at->name);
          return -1;
        }
      }
      if (ws) ws->entOk = 1;
      *out = ws ? slotSym(ws, s) : tqSym(s, (size_t)n);
      return 0;
    }
    default: break;
  }
bad:
  tqError(ps->d, locAt(ps, s), "attribute %s expects %s, not '%.*s'", at->name, algTypeName(*ty, buf, sizeof buf), n, s);
  return -1;
}

static uint64_t keyOf(const AlgRel *r, const int64_t *v, int keyed) {
  uint64_t h = (uint64_t)r->id * 0x9e3779b97f4a7c15ULL;
  if (keyed) {
    for (int i = 0; i < r->nkey; i++) h = tqHash64(h ^ (uint64_t)v[r->key[i]]);
  } else {
    h = tqHashBytes(v, sizeof(int64_t) * (size_t)r->nattr, h);
  }
  return h | 2;
}

static int sameKey(const AlgRel *r, const int64_t *a, const int64_t *b, int keyed) {
  if (!keyed) return !memcmp(a, b, sizeof(int64_t) * (size_t)r->nattr);
  for (int i = 0; i < r->nkey; i++)
    if (a[r->key[i]] != b[r->key[i]]) return 0;
  return 1;
}

/* Finds (and unlinks) the open interval of r matching v; -1 when none. */
static int32_t takeOpen(Parser *ps, const AlgRel *r, const int64_t *v, int keyed) {
  SnsTrace *tr = ps->tr;
  uint64_t h = keyOf(r, v, keyed);
  intptr_t first = (intptr_t)tqMapGet(&ps->open, h) - 1;
  int32_t prev = -1;
  for (int32_t i = (int32_t)first; i >= 0; prev = i, i = tr->iv[i].nextSame) {
    SnsIv *iv = &tr->iv[i];
    if (iv->rel != r->id - 1 || !sameKey(r, tr->vals + iv->vals, v, keyed)) continue;
    if (prev < 0) {
      if (iv->nextSame >= 0) tqMapPut(&ps->open, h, (void *)(intptr_t)(iv->nextSame + 1));
      else tqMapDel(&ps->open, h);
    } else {
      tr->iv[prev].nextSame = iv->nextSame;
    }
    return i;
  }
  return -1;
}

static void putOpen(Parser *ps, const AlgRel *r, int32_t ivi, int keyed) {
  SnsTrace *tr = ps->tr;
  uint64_t h = keyOf(r, tr->vals + tr->iv[ivi].vals, keyed);
  void **first = tqMapRef(&ps->open, h);
  /* append at the end of the chain: NAME- closes the earliest such interval */
  tr->iv[ivi].nextSame = -1;
  if (!*first) {
    *first = (void *)(intptr_t)(ivi + 1);
    return;
  }
  int32_t i = (int32_t)((intptr_t)*first - 1);
  while (tr->iv[i].nextSame >= 0) i = tr->iv[i].nextSame;
  tr->iv[i].nextSame = ivi;
}

/* Are the records of relation r with values v checked and not kept
** (ps->drop)? */
static int dropped(Parser *ps, const AlgRel *r, const int64_t *v) {
  int ri = r->id - 1;
  if (!ps->drop || !ps->drop[ri]) return 0;
  if (ps->drop[ri] == 1) return 1;
  int at = r->entity ? 0 : r->flagAttr;
  if (at < 0) return 0;
  int64_t e = v[at];
  if (e < 0 || e > (int64_t)1 << 40) return !ps->need(ps->needCtx, r->id, e);
  unsigned char *c = snsEntSlot(&ps->entNeed[ri], &ps->nentNeed[ri], e);
  if (!*c) *c = ps->need(ps->needCtx, r->id, e) ? 2 : 1;
  return *c == 1;
}

unsigned char *snsEntSlot(unsigned char **v, int64_t *n, int64_t e) {
  if (e >= *n) {
    int64_t nc = *n ? 2 * *n : 256;
    while (nc <= e) nc *= 2;
    *v = tqRealloc(*v, (size_t)nc);
    memset(*v + *n, 0, (size_t)(nc - *n));
    *n = nc;
  }
  return *v + e;
}

int32_t *snsCountSlot(int32_t **v, int64_t *n, int64_t e) {
  if (e < 0 || e > (int64_t)1 << 40) return NULL;
  if (e >= *n) {
    int64_t nc = *n ? 2 * *n : 256;
    while (nc <= e) nc *= 2;
    *v = tqRealloc(*v, sizeof(int32_t) * (size_t)nc);
    memset(*v + *n, 0, sizeof(int32_t) * (size_t)(nc - *n));
    *n = nc;
  }
  return *v + e;
}

static void endIv(Parser *ps, int32_t ivi, TqTime t) {
  SnsTrace *tr = ps->tr;
  int ri = tr->iv[ivi].rel;
  tr->nall++;
  if (tr->iv[ivi].dropped) {
    /* checked, not kept: its room and its values' serve the next one */
    tr->iv[ivi].nextSame = ps->freeIv[ri];
    ps->freeIv[ri] = ivi;
    tr->dropped[ri]++;
    return;
  }
  tr->iv[ivi].to = t;
  SnsPacket *p = addPk(tr);
  p->t = t;
  p->rel = tr->iv[ivi].rel;
  p->kind = PK_END;
  p->iv = ivi;
}

/* After an error on a line: remember its relation so later lines that
** depend on it (the end of an interval whose begin was bad) stay quiet. */
static void markBad(Parser *ps) {
  const char *s;
  int n;
  if (!word(ps, &s, &n) || n <= 0) return;
  if (n > 1 && (s[n - 1] == '+' || s[n - 1] == '-')) n--;
  char name[128];
  if (n >= (int)sizeof name) return;
  memcpy(name, s, (size_t)n);
  name[n] = 0;
  const AlgRel *r = algCatRel(&ps->tr->prog->cat, name);
  if (r) ps->badRel[r->id - 1] = 1;
}

/* A loss line, after its TIME and NAME!: COUNT FROM TO ENTITY [spans]
** (NAME and ENTITY `*` when not known, COUNT `?` when how many is not
** known).  Kept in tr->loss, told before the packets that follow it. */
static void parseLoss(Parser *ps, TqTime t, const char *ns, int nn) {
  SnsTrace *tr = ps->tr;
  static const AlgAttr entAttr = {"the loss's entity", {TY_ENTITY, NULL, NULL}, 0};
  static const char *const need[4] = {"the records lost (a count, or ? when not known)", "the time the loss began",
                                      "the time it ended", "its entity (* when not known)"};
  const AlgRel *r = NULL;
  if (nn != 1 || ns[0] != '*') {
    char name[128];
    if (nn >= (int)sizeof name) nn = (int)sizeof name - 1;
    memcpy(name, ns, (size_t)nn);
    name[nn] = 0;
    r = algCatRel(&tr->prog->cat, name);
    if (!r) {
      if (algCatDerived(&tr->prog->cat, name))
        tqError(ps->d, locAt(ps, ns), "'%s' is a derived relation; a recording holds only the losses of primitive relations", name);
      else
        tqError(ps->d, locAt(ps, ns), "unknown relation '%s' (a loss of a relation not known is *!)", name);
      return;
    }
  }
  const char *w[4];
  int wn[4];
  for (int i = 0; i < 4; i++) {
    if (!word(ps, &w[i], &wn[i])) {
      tqError(ps->d, locAt(ps, ps->p), "%.*s! needs %s: TIME NAME! COUNT FROM TO ENTITY [spans]", nn, ns, need[i]);
      return;
    }
    if (wn[i] < 0) return;
  }
  char num[32];
  char *end;
  long long count = 0;
  if (wn[0] == 1 && w[0][0] == '?') {
    count = TQ_PM_LOST_UNKNOWN; /* some, how many is not known */
  } else {
    if (wn[0] < (int)sizeof num) {
      memcpy(num, w[0], (size_t)wn[0]);
      num[wn[0]] = 0;
      count = strtoll(num, &end, 10);
      if (*end || end == num) count = 0;
    }
    if (count <= 0 || count > TQ_PM_LOST_MAX) {
      tqError(ps->d, locAt(ps, w[0]), "the records lost must be a count from 1 to 2^62 (or ? when not known), not '%.*s'",
              wn[0], w[0]);
      return;
    }
    /* (no run loses so many: the engine would ignore the loss, and the
    ** sums of the counts must stay in range) */
    if (count > TQ_PM_LOST_MAX - ps->lost) {
      tqError(ps->d, locAt(ps, w[0]), "the losses of the recording add up to more than 2^62 records with '%.*s' (a damaged recording)",
              wn[0], w[0]);
      return;
    }
  }
  TqTime ft[2];
  for (int i = 0; i < 2; i++) {
    int trc = tqTimeParse(w[1 + i], (size_t)wn[1 + i], &ft[i]);
    if (trc) {
      tqError(ps->d, locAt(ps, w[1 + i]), "malformed time '%.*s' (expected h:mm:ss[.frac], N[ns|us|ms|s|min|h] or ns)",
              wn[1 + i], w[1 + i]);
      return;
    }
  }
  if (ft[1] < ft[0]) {
    tqError(ps->d, locAt(ps, w[2]), "the loss ends before it begins (FROM TO: %.*s after %.*s)", wn[1], w[1], wn[2], w[2]);
    return;
  }
  int64_t ent = TQ_PM_ENTITY_UNKNOWN;
  if ((wn[3] != 1 || w[3][0] != '*') && parseValue(ps, &entAttr, w[3], wn[3], &ent)) return;
  const char *x;
  int xn, spans = 0;
  if (word(ps, &x, &xn)) {
    if (xn < 0) return;
    if (xn != 5 || strncmp(x, "spans", 5)) {
      tqError(ps->d, locAt(ps, x), "'%.*s' after a loss's entity: only spans may follow (begins or ends of intervals were lost)",
              xn, x);
      return;
    }
    spans = 1;
    if (word(ps, &x, &xn)) {
      if (xn >= 0) tqError(ps->d, locAt(ps, x), "'%.*s' after a loss's spans: the line ends there", xn, x);
      return;
    }
  }
  ps->lastT = t;
  ps->haveT = 1;
  ps->lastTn = 0; /* (its time word is not kept) */
  if (tr->nloss == tr->closs) {
    tr->closs = tr->closs ? 2 * tr->closs : 16;
    tr->loss = tqRealloc(tr->loss, sizeof(SnsLoss) * (size_t)tr->closs);
  }
  tr->loss[tr->nloss++] = (SnsLoss){tr->npk, r ? r->id : 0, spans, ent, ft[0], ft[1], count};
  if (count != TQ_PM_LOST_UNKNOWN) ps->lost += count;
}

/* A line read without error at t (its time word lw, ln bytes): the next
** line's time is compared with it; the recording covers t. */
static inline void lineAt(Parser *ps, TqTime t, const uint64_t lw[2], int ln) {
  SnsTrace *tr = ps->tr;
  ps->lastT = t;
  ps->haveT = 1;
  ps->lastTw[0] = lw[0];
  ps->lastTw[1] = lw[1];
  ps->lastTn = ln;
  if (!tr->nall && !tr->marked) tr->first = t;
  tr->last = t;
}

static void parseLine(Parser *ps) {
  SnsTrace *tr = ps->tr;
  const char *s;
  int n;
  if (!word(ps, &s, &n)) return; /* empty or comment */
  TqTime t;
  if (n < 0) return;
  const char *ts = s;
  int trc = 0;
  uint64_t tw[2] = {0, 0};
  if (n <= 16 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && ps->textEnd - s >= 16) {
    /* the same time as the last line's (an instant's lines): its bytes */
    memcpy(tw, s, 16);
    if (n < 8) {
      tw[0] &= ((uint64_t)1 << (8 * n)) - 1;
      tw[1] = 0;
    } else if (n < 16) {
      tw[1] &= ((uint64_t)1 << (8 * (n - 8))) - 1;
    }
  } else if (n <= 16) {
    memcpy(tw, s, (size_t)n);
  }
  if (n == ps->lastTn && tw[0] == ps->lastTw[0] && tw[1] == ps->lastTw[1]) {
    t = ps->lastT;
  } else {
    trc = tqTimeParse(s, (size_t)n, &t);
    ps->lastTn = 0;
  }
  if (trc) {
    if (trc == -2) tqError(ps->d, locAt(ps, s), "time '%.*s' is too large for 64-bit nanoseconds", n, s);
    else tqError(ps->d, locAt(ps, s), "malformed time '%.*s' (expected h:mm:ss[.frac], N[ns|us|ms|s|min|h] or ns)", n, s);
    markBad(ps);
    return;
  }
  if (ps->haveT && t < ps->lastT) {
    char b1[40], b2[40];
    tqError(ps->d, locAt(ps, s), "time goes backwards: %s after %s", tqTimeFormat(b1, sizeof b1, t),
            tqTimeFormat(b2, sizeof b2, ps->lastT));
    return;
  }
  /* (a line read without error sets lastT to t: then its time word is
  ** the one to compare with) */
  uint64_t lw[2] = {tw[0], tw[1]};
  int ln = n <= 16 ? n : 0;
  const char *ns;
  int nn;
  int64_t tmp[64];
  int nv = 0;
  int sign = 0, sample = 0, whole = 0, isIv = 0;
  TqTime wholeFrom = 0;
  const AlgRel *r = NULL;
  uint64_t tailW[TAIL_WORDS];
  const char *tail = s + n;
  int tailN = (int)(ps->e - tail);
  TailSlot *tset = tailSet(ps, tail, tailN, tailW), *tcs = NULL;
  if (tset && (tailIs(&tset[0], tailW, tailN) || tailIs(tcs = &tset[1], tailW, tailN))) {
    tcs = tcs ? tcs : &tset[0];
    ns = tail + tcs->nameOff;
    nn = tcs->nn;
    sign = tcs->sign;
    sample = tcs->sample;
    r = tcs->r;
    nv = tcs->nv;
    isIv = !r->isEvent;
    for (int i = 0; i < nv; i++) tmp[i] = tcs->v[i];
    ps->p = ps->e;
    goto parsed;
  }
  if (!word(ps, &ns, &nn) || nn < 0) {
    tqError(ps->d, locAt(ps, ps->p), "expected a relation name after the time");
    return;
  }
  if (nn == 1 && ns[0] == '.') {
    /* a range mark: the recording covers TIME (a run's first and last
    ** times, which its first and last records need not be) */
    skipWs(ps);
    if (ps->p < ps->e) {
      tqError(ps->d, locAt(ps, ps->p), "unexpected '%.*s' after a range mark (TIME . has only a comment after it)",
              (int)(ps->e - ps->p), ps->p);
      return;
    }
    lineAt(ps, t, lw, ln);
    if (!tr->nall) tr->marked = 1; /* (before any record: first is its time) */
    return;
  }
  if (nn > 1 && ns[nn - 1] == '!') { /* a loss */
    parseLoss(ps, t, ns, nn - 1);
    return;
  }
  if (nn > 1 && (ns[nn - 1] == '+' || ns[nn - 1] == '-')) {
    sign = ns[nn - 1] == '+' ? 1 : -1;
    nn--;
  } else if (nn > 1 && ns[nn - 1] == '@') {
    sample = 1;
    nn--;
  } else if (nn > 1 && ns[nn - 1] == '=') {
    whole = 1;
    nn--;
  }
  char name[128];
  if (nn >= (int)sizeof name) nn = (int)sizeof name - 1;
  WordSlot *ws = wordSlot(ps, ns, nn);
  r = ws ? ws->rel : NULL;
  if (!r) {
    memcpy(name, ns, (size_t)nn);
    name[nn] = 0;
    int32_t nsym = tqSym(name, (size_t)nn);
    r = tqMapGet(&ps->relBySym, (uint64_t)nsym + 2);
    if (!r) {
      r = algCatRel(&tr->prog->cat, name);
      if (r) tqMapPut(&ps->relBySym, (uint64_t)nsym + 2, (void *)r);
    }
    if (ws) ws->rel = r;
  }
  if (!r) {
    if (!strcasecmp(name, "Clock"))
      tqError(ps->d, locAt(ps, ns), "Clock is generated from the clock statement, not recorded");
    else if (algCatDerived(&tr->prog->cat, name))
      tqError(ps->d, locAt(ps, ns), "'%s' is a derived relation; a recording holds only primitive relations", name);
    else
      tqError(ps->d, locAt(ps, ns), "unknown relation '%s'", name);
    return;
  }
  if (r->deltaOf) {
    tqError(ps->d, locAt(ps, ns), "%s is a delta relation, computed from the samples of %s: record %s instead", r->name,
            r->deltaOf->name, r->deltaOf->name);
    return;
  }
  isIv = !r->isEvent;
  if (whole) {
    if (!isIv) {
      tqError(ps->d, locAt(ps, ns + nn), "%s is an event relation: only intervals are delivered whole (NAME=)", r->name);
      ps->badRel[r->id - 1] = 1;
      return;
    }
    const char *fs;
    int fn;
    if (!word(ps, &fs, &fn) || fn < 0 || tqTimeParse(fs, (size_t)(fn > 0 ? fn : 0), &wholeFrom)) {
      tqError(ps->d, locAt(ps, fn > 0 ? fs : ps->p), "%s= needs the time the interval began, then its values", r->name);
      ps->badRel[r->id - 1] = 1;
      return;
    }
    if (wholeFrom >= t) {
      tqError(ps->d, locAt(ps, fs), "%s= interval must begin before it ends (intervals are [from, to) with from < to)",
              r->name);
      return;
    }
  }
  if (isIv && !sign && !sample && !whole) {
    tqError(ps->d, locAt(ps, ns + nn), "%s is an interval relation: write %s+ to begin or %s- to end an interval",
            r->name, r->name, r->name);
    ps->badRel[r->id - 1] = 1;
    return;
  }
  if (!isIv && (sign || whole)) {
    tqError(ps->d, locAt(ps, ns + nn), "%s is an event relation: write it without + or -", r->name);
    ps->badRel[r->id - 1] = 1;
    return;
  }
  if (r->nattr > 64) return;
  while (word(ps, &s, &n)) {
    if (n < 0) return;
    if (nv == r->nattr) {
      tqError(ps->d, locAt(ps, s), "too many values for %s (it has %d attribute%s)", r->name, r->nattr,
              r->nattr == 1 ? "" : "s");
      ps->badRel[r->id - 1] = 1;
      return;
    }
    if (parseValue(ps, &r->attr[nv], s, n, &tmp[nv])) {
      ps->badRel[r->id - 1] = 1;
      return;
    }
    nv++;
  }
  if (tset && !whole && nv <= TAIL_VALS && ps->p >= ps->e) {
    /* parsed without error to here: kept for the next line with this
    ** tail, first in its set (the oldest goes) */
    tset[1] = tset[0];
    tcs = &tset[0];
    memcpy(tcs->w, tailW, sizeof tailW);
    tcs->n = (int)(ps->e - tail);
    tcs->nameOff = (int16_t)(ns - tail);
    tcs->nn = (int16_t)nn;
    tcs->sign = (int8_t)sign;
    tcs->sample = (int8_t)sample;
    tcs->nv = (int8_t)nv;
    tcs->r = r;
    for (int i = 0; i < nv; i++) tcs->v[i] = tmp[i];
  }
parsed:;
  int keyed = r->nkey > 0;
  if (sign < 0 && keyed && nv == r->nkey && nv < r->nattr) {
    /* NAME- with only the key: key attributes are the first ones given in key order */
    int64_t kv[64];
    memcpy(kv, tmp, sizeof(int64_t) * (size_t)nv);
    int ok = 1;
    for (int i = 0; i < r->nkey; i++) {
      if (r->key[i] != i) ok = 0;
      tmp[r->key[i]] = kv[i];
    }
    if (!ok) {
      tqError(ps->d, locAt(ps, ps->p), "%s- with only key values needs the key to be the first attributes", r->name);
      return;
    }
  } else if (nv < r->nattr) {
    tqError(ps->d, locAt(ps, ps->p), "missing value for %s.%s (expected %d value%s, got %d)", r->name,
            r->attr[nv].name, r->nattr, r->nattr == 1 ? "" : "s", nv);
    ps->badRel[r->id - 1] = 1;
    return;
  }

  if (tr->nvals + r->nattr > (int64_t)SNS_MAX_VALS || tr->niv >= SNS_MAX_IVS) {
    tqError(ps->d, locAt(ps, ts), "the recording is too large to be read as text (more than %lld values or %d intervals): "
            "record it as a collection file", (long long)SNS_MAX_VALS, SNS_MAX_IVS);
    return;
  }
  lineAt(ps, t, lw, ln);
  int ri = r->id - 1, drop = sign >= 0 && dropped(ps, r, tmp); /* (an end: as its begin was) */
  if (drop && (whole || !isIv || sample)) { /* checked, not kept */
    tr->nall++;
    tr->dropped[ri]++;
    return;
  }
  if (whole) {
    tr->nall++;
    int32_t ivi = addIv(tr);
    SnsIv *iv = &tr->iv[ivi];
    iv->rel = r->id - 1;
    iv->from = wholeFrom;
    iv->to = t;
    iv->pos = -1;
    iv->nextSame = -1;
    iv->vals = addVals(tr, r->nattr);
    memcpy(tr->vals + iv->vals, tmp, sizeof(int64_t) * (size_t)r->nattr);
    SnsPacket *p = addPk(tr);
    p->t = t;
    p->rel = r->id - 1;
    p->kind = PK_WHOLE;
    p->iv = ivi;
    return;
  }
  if (!isIv || sample) {
    tr->nall++;
    SnsPacket *p = addPk(tr);
    p->t = t;
    p->rel = r->id - 1;
    p->kind = sample ? PK_SAMPLE : PK_EVENT;
    p->vals = (uint32_t)addVals(tr, r->nattr);
    memcpy(tr->vals + p->vals, tmp, sizeof(int64_t) * (size_t)r->nattr);
    return;
  }
  if (sign < 0) {
    int32_t ivi = takeOpen(ps, r, tmp, keyed);
    if (ivi < 0) {
      if (!ps->badRel[r->id - 1])
        tqError(ps->d, locAt(ps, ns), "%s- ends no open %s interval with these values", r->name, r->name);
      return;
    }
    if (tr->iv[ivi].from == t) {
      tqError(ps->d, locAt(ps, ts), "%s interval ends when it begins (intervals are [from, to) with from < to)", r->name);
      return;
    }
    endIv(ps, ivi, t);
    return;
  }
  void **head = NULL; /* keyed: the map's entry the new interval takes over */
  if (keyed) {
    /* the usual case first: the open interval with this key is the only
    ** one under its hash, and the new one takes its place (one probe) */
    uint64_t h = keyOf(r, tmp, 1);
    void **ref = tqMapRef(&ps->open, h);
    int32_t prev = (int32_t)((intptr_t)*ref - 1);
    if (prev >= 0 && tr->iv[prev].nextSame < 0 && tr->iv[prev].rel == r->id - 1 &&
        sameKey(r, tr->vals + tr->iv[prev].vals, tmp, 1))
      head = ref;
    else
      prev = takeOpen(ps, r, tmp, 1);
    if (prev >= 0) {
      if (tr->iv[prev].from == t) {
        if (head) tqMapDel(&ps->open, h); /* unlinked, as takeOpen does */
        tqError(ps->d, locAt(ps, ns), "%s+ at the same time as the previous interval with this key began", r->name);
        return;
      }
      endIv(ps, prev, t);
    }
  }
  int32_t ivi;
  if (drop && ps->freeIv[ri] >= 0) { /* (an ended one's room, its values' too) */
    ivi = ps->freeIv[ri];
    ps->freeIv[ri] = tr->iv[ivi].nextSame;
  } else {
    ivi = addIv(tr);
    tr->iv[ivi].vals = addVals(tr, r->nattr);
  }
  SnsIv *iv = &tr->iv[ivi];
  iv->dropped = drop;
  iv->rel = ri;
  iv->from = t;
  iv->to = TQ_OPEN;
  iv->pos = -1;
  memcpy(tr->vals + iv->vals, tmp, sizeof(int64_t) * (size_t)r->nattr);
  if (head) {
    iv->nextSame = -1;
    *head = (void *)(intptr_t)(ivi + 1);
  } else {
    putOpen(ps, r, ivi, keyed);
  }
  tr->nall++;
  if (drop) {
    tr->dropped[ri]++;
    return;
  }
  SnsPacket *p = addPk(tr);
  p->t = t;
  p->rel = r->id - 1;
  p->kind = PK_BEGIN;
  p->iv = ivi;
}

/* The '\n' that ends the line at p, or end: eight bytes at a time (a
** line is a few dozen bytes: a call to memchr for each cost more than the
** search itself). */
static inline const char *lineEnd(const char *p, const char *end) {
  const uint64_t ones = 0x0101010101010101ULL, nl = ones * '\n';
  for (; end - p >= 8; p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    w ^= nl; /* a '\n' byte is now zero */
    uint64_t z = (w - ones) & ~w & (ones << 7);
    if (z) return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? p + __builtin_ctzll(z) / 8 : (const char *)memchr(p, '\n', 8);
  }
  while (p < end && *p != '\n') p++;
  return p;
}

/* Sets up ps for a recording into a new trace tr whose text comes from
** src (its name at least), with room for the records of about size bytes
** of text.  0, or -1 with the error in d (tr freed). */
static int parseOpen(Parser *ps, TqSource *src, const CpProgram *prog, const unsigned char *drop, SnsNeedFn need,
                     void *needCtx, int64_t size, TqDiag *d) {
  SnsTrace *tr = tqCalloc(1, sizeof *tr);
  tr->src = src;
  tr->prog = prog;
  *ps = (Parser){0};
  ps->tr = tr;
  ps->d = d;
  if (prog->cat.rels.n > SNS_MAX_RELS) {
    tqErrorAt(d, src->name, "more than %d relations: too many for a text recording", SNS_MAX_RELS);
    snsTraceFree(tr);
    return -1;
  }
  if (drop) {
    int nrel = prog->cat.rels.n ? prog->cat.rels.n : 1;
    ps->drop = drop;
    ps->need = need;
    ps->needCtx = needCtx;
    ps->entNeed = tqCalloc((size_t)nrel, sizeof *ps->entNeed);
    ps->nentNeed = tqCalloc((size_t)nrel, sizeof *ps->nentNeed);
    tr->dropped = tqCalloc((size_t)nrel, sizeof(int64_t));
    ps->freeIv = tqMalloc(sizeof(int32_t) * (size_t)nrel);
    for (int i = 0; i < nrel; i++) ps->freeIv[i] = -1;
  }
  ps->badRel = tqCalloc((size_t)(prog->cat.rels.n + 1), 1);
  ps->wc = tqCalloc((size_t)1 << WORD_BITS, sizeof(WordSlot));
  ps->tc = tqCalloc((size_t)TAIL_WAYS << TAIL_BITS, sizeof(TailSlot));
  if (!keepMask[1][0]) keepMaskInit();
  ps->nerr0 = d->nerr;
  ps->out0 = d->out.n;
  /* room for a line every 16 bytes (what is not used is never touched;
  ** shorter lines grow the arrays) */
  int64_t lines = size / 16 + 16;
  tr->cpk = lines;
  tr->pk = tqMalloc(sizeof(SnsPacket) * (size_t)tr->cpk);
  tqHugePages(tr->pk, sizeof(SnsPacket) * (size_t)tr->cpk);
  tr->cvals = 3 * lines;
  tr->vals = tqMalloc(sizeof(int64_t) * (size_t)tr->cvals);
  tqHugePages(tr->vals, sizeof(int64_t) * (size_t)tr->cvals);
  tr->civ = lines / 2 + 16;
  tr->iv = tqMalloc(sizeof(SnsIv) * (size_t)tr->civ);
  tqHugePages(tr->iv, sizeof(SnsIv) * (size_t)tr->civ);
  return 0;
}

/* Parses the lines of [p, end), where end is the end of a line ('\n')
** plus one, or the end of the text (a NUL at end); the text held goes on
** to dataEnd (a NUL there).  A line longer than maxLine bytes (0: no
** bound) stops it: 1, ps->line its number (the caller says it).  After
** the twentieth error the lines are no longer parsed, only measured
** (ps->cut). */
static int parseLines(Parser *ps, const char *p, const char *end, const char *dataEnd, size_t maxLine) {
  ps->textEnd = dataEnd;
  while (p < end && !(ps->cut && !maxLine)) {
    const char *le = lineEnd(p, end);
    ps->line++;
    if (maxLine && (size_t)(le - p) > maxLine) return 1;
    if (!ps->cut) {
      ps->ls = ps->p = p;
      ps->e = le;
      parseLine(ps);
      ps->cut = ps->d->nerr - ps->nerr0 >= 20;
    }
    p = le + 1;
  }
  return 0;
}

/* A recording refused whole at where (a NUL byte, a line over the bound,
** a read error): its one message, in place of its lines' (as when the
** whole file was checked before a line was parsed). */
static void refuse(Parser *ps, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(Parser *ps, const char *where, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ps->d->nerr = ps->nerr0;
  ps->d->out.n = ps->out0;
  if (ps->d->out.s) ps->d->out.s[ps->out0] = 0;
  tqErrorAt(ps->d, where, "%s", msg);
}
static void refuseLong(Parser *ps, int line, size_t maxLine) {
  char where[4200];
  snprintf(where, sizeof where, "%.4096s:%d:1", ps->tr->src->name, line);
  refuse(ps, where, "line longer than %zu bytes", maxLine);
}

/* Frees what the parse used, and returns its trace (NULL after an error). */
static SnsTrace *parseClose(Parser *ps) {
  SnsTrace *tr = ps->tr;
  tqMapFree(&ps->open);
  tqMapFree(&ps->relBySym);
  free(ps->wc);
  free(ps->tc);
  free(ps->badRel);
  free(ps->freeIv);
  for (int i = 0; ps->entNeed && i < tr->prog->cat.rels.n; i++) free(ps->entNeed[i]);
  free(ps->entNeed);
  free(ps->nentNeed);
  if (ps->d->nerr > ps->nerr0) {
    snsTraceFree(tr);
    return NULL;
  }
  return tr;
}

SnsTrace *snsTraceParse(TqSource *src, const CpProgram *prog, TqDiag *d) {
  return snsTraceParseSome(src, prog, NULL, NULL, NULL, d);
}

SnsTrace *snsTraceParseSome(TqSource *src, const CpProgram *prog, const unsigned char *drop, SnsNeedFn need, void *needCtx,
                            TqDiag *d) {
  Parser ps;
  if (parseOpen(&ps, src, prog, drop, need, needCtx, (int64_t)src->len, d)) return NULL;
  parseLines(&ps, src->text, src->text + src->len, src->text + src->len, 0);
  return parseClose(&ps);
}

/* The text read in parts of PART bytes into one buffer: the lines it
** holds whole are parsed, and the part of a line at its end moves to its
** start before the next part comes.  The memory is the part and the
** longest line, not the file, and it stays in cache: reading a file whole
** into fresh memory cost the kernel more (zeroing its pages) than the
** copy. */
enum { PART = SNS_TEXT_PART };

SnsTrace *snsTraceParseFile(FILE *f, const char *name, const void *head, size_t nhead, size_t maxLine,
                            const CpProgram *prog, const unsigned char *drop, SnsNeedFn need, void *needCtx, TqDiag *d) {
  struct stat st;
  int64_t size = !fstat(fileno(f), &st) && S_ISREG(st.st_mode) ? (int64_t)st.st_size : 0;
  TqSource *src = tqCalloc(1, sizeof *src);
  src->name = tqStrdup(name);
  src->text = tqStrdup(""); /* (the parts are not kept) */
  Parser ps;
  if (parseOpen(&ps, src, prog, drop, need, needCtx, size > (int64_t)PART ? size : (int64_t)PART, d)) return NULL;
  size_t cap = 2 * (size_t)PART + nhead + 1, n = nhead;
  char *buf = tqMalloc(cap);
  TQ_MEMCPY(buf, head, nhead);
  size_t checked = 0; /* the bytes at buf's start searched for a NUL */
  for (int eof = 0; !eof;) {
    if (n + PART + 1 > cap) { /* a line longer than a part */
      cap = n + PART + 1;
      buf = tqRealloc(buf, cap);
    }
    size_t got = fread(buf + n, 1, PART, f);
    const char *nul = memchr(buf + checked, 0, n + got - checked); /* (the head too, at first) */
    if (got < PART) {
      if (ferror(f)) {
        refuse(&ps, name, "read error: %s", strerror(errno));
        break;
      }
      eof = 1;
    }
    n += got;
    buf[n] = 0;
    /* the lines held whole: to the last '\n', or all at the end */
    const char *end = buf + n;
    if (nul || !eof) {
      const char *nl = memrchr(buf, '\n', (size_t)((nul ? nul : buf + n) - buf));
      end = nl ? nl + 1 : buf;
    }
    if (parseLines(&ps, buf, end, buf + n, maxLine)) {
      refuseLong(&ps, ps.line, maxLine);
      break;
    }
    if (nul && maxLine && (size_t)(nul - end) > maxLine) { /* (its line is over the bound first) */
      refuseLong(&ps, ps.line + 1, maxLine);
      break;
    }
    if (nul) { /* where the first NUL is */
      char where[4200];
      snprintf(where, sizeof where, "%.4096s:%d:%zu", name, ps.line + 1, (size_t)(nul - end) + 1);
      refuse(&ps, where, "binary file (contains a NUL byte)");
      break;
    }
    n -= (size_t)(end - buf);
    memmove(buf, end, n);
    checked = n;
    if (maxLine && n > maxLine) { /* a line that goes on past the bound */
      refuseLong(&ps, ps.line + 1, maxLine);
      break;
    }
  }
  free(buf);
  return parseClose(&ps);
}

void snsTraceFree(SnsTrace *t) {
  if (!t) return;
  tqSourceFree(t->src);
  free(t->pk);
  free(t->iv);
  free(t->vals);
  free(t->loss);
  free(t->dropped);
  free(t);
}

int64_t snsTracePackets(const SnsTrace *t) { return t->npk; }

int64_t snsTraceLosses(const SnsTrace *t) { return t->nloss; }

void snsTraceLoss(const SnsTrace *t, int64_t i, int *rel, int64_t *entity, TqTime *from, TqTime *to, int64_t *count,
                  int *spans) {
  const SnsLoss *l = &t->loss[i];
  *rel = l->rel;
  *entity = l->entity;
  *from = l->from;
  *to = l->to;
  *count = l->count;
  *spans = l->spans;
}

void snsTraceRecord(const SnsTrace *t, int64_t i, tq_record *r) {
  const SnsPacket *pk = &t->pk[i];
  memset(r, 0, sizeof *r);
  r->rel = pk->rel + 1;
  r->nvals = ((const AlgRel *)t->prog->cat.rels.v[pk->rel])->nattr;
  r->t = pk->t;
  if (pk->kind == PK_EVENT || pk->kind == PK_SAMPLE) {
    r->kind = pk->kind == PK_EVENT ? TQ_REC_EVENT : TQ_REC_SAMPLE;
    r->vals = t->vals + pk->vals;
  } else {
    const SnsIv *iv = &t->iv[pk->iv];
    r->kind = pk->kind == PK_BEGIN ? TQ_REC_BEGIN : pk->kind == PK_END ? TQ_REC_END : TQ_REC_WHOLE;
    r->id = (uint64_t)pk->iv;
    r->from = iv->from;
    r->to = iv->to;
    r->vals = t->vals + iv->vals;
  }
}
TqTime snsTraceFirst(const SnsTrace *t) { return t->first; }
TqTime snsTraceLast(const SnsTrace *t) { return t->last; }

/* ================================================================ the traditional way */

/* ================================================================ writing the text form */

struct SnsTextWriter {
  FILE *f;
  const CpProgram *prog;
  int err;
  TqTime lastT;    /* the time of the last line written */
  int any;         /* a record was written */
  SnsLoss *pend;   /* losses told before the first record (written before it) */
  int npend, cpend;
  TqTime origin;   /* the run's first time (TQ_BEGINNING: not known) */
};

SnsTextWriter *snsTextWriterOpen(const char *path, const CpProgram *prog) {
  FILE *f = fopen(path, "w");
  if (!f) return NULL;
  SnsTextWriter *w = tqCalloc(1, sizeof *w);
  w->f = f;
  w->prog = prog;
  w->origin = TQ_BEGINNING;
  fprintf(f, "# written by tqmon: TIME in ns, NAME+ begins, NAME- ends, NAME@ samples, NAME= FROM whole intervals, "
             "NAME! COUNT FROM TO ENTITY [spans] losses, TIME . the run's first and last times\n");
  return w;
}

/* A name or string: bare when it is a plain name (entity), else quoted. */
static void putName(SnsTextWriter *w, const char *s, int entity) {
  int plain = entity && *s;
  for (const char *c = s; *c && plain; c++)
    if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.' && *c != ':' && *c != '/') plain = 0;
  if (plain) {
    fprintf(w->f, " %s", s);
    return;
  }
  fputs(" \"", w->f);
  for (const char *c = s; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', w->f);
    fputc(*c, w->f);
  }
  fputc('"', w->f);
}

static void putValue(SnsTextWriter *w, const AlgAttr *a, int64_t v) {
  switch (a->type.kind) {
    case TY_INT: fprintf(w->f, " %lld", (long long)v); break;
    case TY_FLOAT: {
      double d;
      memcpy(&d, &v, sizeof d);
      char num[32];
      fprintf(w->f, " %s", tqFloatFormat(num, sizeof num, d));
      break;
    }
    case TY_ENUM: fprintf(w->f, " %s", v >= 0 && v < a->type.en->n ? a->type.en->names[v] : "?"); break;
    default: putName(w, tqSymName((int32_t)v), a->type.kind == TY_ENTITY); break;
  }
}

/* Loss l as a line at time t. */
static void putLoss(SnsTextWriter *w, TqTime t, const SnsLoss *l) {
  const AlgRel *rel = l->rel ? w->prog->cat.rels.v[l->rel - 1] : NULL;
  fprintf(w->f, "%lld %s! ", (long long)t, rel ? rel->name : "*");
  if (l->count == TQ_PM_LOST_UNKNOWN) fputc('?', w->f); /* (how many is not known) */
  else fprintf(w->f, "%lld", (long long)l->count);
  fprintf(w->f, " %lld %lld", (long long)l->from, (long long)l->to);
  if (l->entity == TQ_PM_ENTITY_UNKNOWN) fputs(" *", w->f);
  else putName(w, tqSymName((int32_t)l->entity), 1);
  if (fputs(l->spans ? " spans\n" : "\n", w->f) == EOF) w->err = 1;
  w->lastT = t;
}

int snsTextWriteLoss(SnsTextWriter *w, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans) {
  if (rel < 0 || rel > w->prog->cat.rels.n || (count <= 0 && count != TQ_PM_LOST_UNKNOWN) || to < from)
    return 0; /* (the engine refuses them) */
  SnsLoss l = {0, rel, spans != 0, entity, from, to, count};
  if (w->any) {
    putLoss(w, w->lastT, &l);
  } else {
    if (w->npend == w->cpend) {
      w->cpend = w->cpend ? 2 * w->cpend : 8;
      w->pend = tqRealloc(w->pend, sizeof(SnsLoss) * (size_t)w->cpend);
    }
    w->pend[w->npend++] = l;
  }
  return w->err ? -1 : 0;
}

int snsTextWrite(SnsTextWriter *w, const tq_record *r) {
  const AlgRel *rel = w->prog->cat.rels.v[r->rel - 1];
  TqTime t = r->kind == TQ_REC_BEGIN ? r->from : r->kind == TQ_REC_END || r->kind == TQ_REC_WHOLE ? r->to : r->t;
  if (r->kind < TQ_REC_EVENT || r->kind > TQ_REC_WHOLE || r->kind == TQ_REC_DELTA) return 0;
  if (!w->any && w->origin != TQ_BEGINNING && w->origin <= t) fprintf(w->f, "%lld .\n", (long long)w->origin);
  for (int i = 0; i < w->npend; i++) putLoss(w, t, &w->pend[i]);
  w->npend = 0;
  w->any = 1;
  w->lastT = t;
  switch (r->kind) {
    case TQ_REC_EVENT: fprintf(w->f, "%lld %s", (long long)r->t, rel->name); break;
    case TQ_REC_SAMPLE: fprintf(w->f, "%lld %s@", (long long)r->t, rel->name); break;
    case TQ_REC_BEGIN: fprintf(w->f, "%lld %s+", (long long)r->from, rel->name); break;
    case TQ_REC_END: fprintf(w->f, "%lld %s-", (long long)r->to, rel->name); break;
    case TQ_REC_WHOLE: fprintf(w->f, "%lld %s= %lld", (long long)r->to, rel->name, (long long)r->from); break;
    default: return 0;
  }
  for (int i = 0; i < rel->nattr; i++) putValue(w, &rel->attr[i], r->vals[i]);
  if (fputc('\n', w->f) == EOF) w->err = 1;
  return w->err ? -1 : 0;
}

void snsTextWriterOrigin(SnsTextWriter *w, TqTime first) { w->origin = first; }

int snsTextWriterClose(SnsTextWriter *w, TqTime last) {
  if (!w) return 0;
  /* losses and no record: each at its end (in the order told, never back) */
  for (int i = 0; i < w->npend; i++) putLoss(w, i && w->lastT > w->pend[i].to ? w->lastT : w->pend[i].to, &w->pend[i]);
  if (w->any && last != TQ_BEGINNING && last >= w->lastT && fprintf(w->f, "%lld .\n", (long long)last) < 0) w->err = 1;
  free(w->pend);
  int rc = w->err || fclose(w->f) ? -1 : 0;
  free(w);
  return rc;
}
