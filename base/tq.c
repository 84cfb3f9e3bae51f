/*
** tq.c - implementation of the base layer (see tq.h): time formatting and
** parsing, allocation helpers, arenas, the symbol table, hash maps and
** diagnostics with source carets.
*/
#include "tq.h"

#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* ================================================================ time */

char *tqFloatFormat(char *buf, size_t n, double d) {
  if (isnan(d)) {
    snprintf(buf, n, "nan");
    return buf;
  }
  if (isinf(d)) {
    snprintf(buf, n, d < 0 ? "-inf" : "inf");
    return buf;
  }
  /* the fewest significant digits that read back (17 always do) */
  char e[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(e, sizeof e, "%.*e", p - 1, d);
    if (strtod(e, NULL) == d) break;
  }
  /* e is [-]D[.DDD]e(+|-)XX: the digits and the decimal exponent */
  const char *m = e + (e[0] == '-');
  char dig[24];
  int nd = 0;
  for (; *m && *m != 'e'; m++)
    if (*m != '.') dig[nd++] = *m;
  int x = atoi(m + 1);
  while (nd > 1 && dig[nd - 1] == '0') nd--;
  char out[48];
  int k = 0;
  if (e[0] == '-') out[k++] = '-';
  if (x >= -4 && x < 16) { /* positional, as Python's repr (without its ".0") */
    if (x < 0) {
      out[k++] = '0';
      out[k++] = '.';
      for (int i = 0; i < -x - 1; i++) out[k++] = '0';
      for (int i = 0; i < nd; i++) out[k++] = dig[i];
    } else {
      for (int i = 0; i <= x; i++) out[k++] = i < nd ? dig[i] : '0';
      if (nd > x + 1) {
        out[k++] = '.';
        for (int i = x + 1; i < nd; i++) out[k++] = dig[i];
      }
    }
    out[k] = 0;
  } else {
    out[k++] = dig[0];
    if (nd > 1) {
      out[k++] = '.';
      for (int i = 1; i < nd; i++) out[k++] = dig[i];
    }
    snprintf(out + k, sizeof out - (size_t)k, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
  }
  snprintf(buf, n, "%s", out);
  return buf;
}

char *tqTimeIso(char *buf, size_t n, TqTime t, int utc, int allNs) {
  time_t sec = (time_t)(t / TQ_SEC);
  long frac = (long)(t % TQ_SEC);
  if (frac < 0) {
    frac += TQ_SEC;
    sec--;
  }
  struct tm tmv;
  if (utc) gmtime_r(&sec, &tmv);
  else localtime_r(&sec, &tmv);
  char day[48], f[16] = "", zone[24];
  strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tmv);
  if (frac || allNs) {
    snprintf(f, sizeof f, ".%09ld", frac);
    int k = 10;
    while (!allNs && k > 2 && f[k - 1] == '0') k--;
    f[k] = 0;
  }
  if (utc) snprintf(zone, sizeof zone, "Z");
  else {
    long off = tmv.tm_gmtoff;
    char sign = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    snprintf(zone, sizeof zone, "%c%02d:%02d", sign, (int)(off / 3600 % 100), (int)(off / 60 % 60));
  }
  snprintf(buf, n, "%s%s%s", day, f, zone);
  return buf;
}

char *tqTimeFormat(char *buf, size_t n, TqTime t) {
  if (t == TQ_OPEN) {
    snprintf(buf, n, "now");
    return buf;
  }
  if (t >= TQ_FOREVER) {
    snprintf(buf, n, "forever");
    return buf;
  }
  if (t <= TQ_BEGINNING) {
    snprintf(buf, n, "beginning");
    return buf;
  }
  if (t >= TQ_WALLCLOCK) {
    /* a live run's time: CLOCK_REALTIME nanoseconds, shown as UTC */
    time_t sec = (time_t)(t / TQ_SEC);
    long frac = (long)(t % TQ_SEC);
    struct tm tmv;
    gmtime_r(&sec, &tmv);
    char day[40];
    strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tmv);
    if (frac) {
      char f[16];
      snprintf(f, sizeof f, "%09ld", frac);
      int k = 9;
      while (k > 1 && f[k - 1] == '0') k--;
      f[k] = 0;
      snprintf(buf, n, "%s.%s", day, f);
    } else {
      snprintf(buf, n, "%s", day);
    }
    return buf;
  }
  const char *sign = "";
  uint64_t u = (uint64_t)t;
  if (t < 0) {
    sign = "-";
    u = (uint64_t)0 - (uint64_t)t;
  }
  uint64_t sec = u / (uint64_t)TQ_SEC, frac = u % (uint64_t)TQ_SEC;
  uint64_t h = sec / 3600, m = (sec / 60) % 60, s = sec % 60;
  if (frac == 0) {
    snprintf(buf, n, "%s%llu:%02llu:%02llu", sign, (unsigned long long)h, (unsigned long long)m,
             (unsigned long long)s);
  } else {
    char f[16];
    snprintf(f, sizeof f, "%09llu", (unsigned long long)frac);
    int k = 9;
    while (k > 1 && f[k - 1] == '0') k--;
    f[k] = 0;
    snprintf(buf, n, "%s%llu:%02llu:%02llu.%s", sign, (unsigned long long)h, (unsigned long long)m,
             (unsigned long long)s, f);
  }
  return buf;
}

/* Parses digits [s,e) as an unsigned value; -1 on overflow or no digit. */
static int parseDigits(const char *s, const char *e, int64_t *out) {
  int64_t v = 0;
  if (s >= e) return -1;
  for (; s < e; s++) {
    if (!isdigit((unsigned char)*s)) return -1;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v)) return -1;
  }
  *out = v;
  return 0;
}

/* Fraction digits [s,e) scaled to ns of a unit of `unit` ns. */
static int parseFrac(const char *s, const char *e, int64_t unit, int64_t *out) {
  int64_t v = 0;
  int64_t scale = unit;
  for (; s < e; s++) {
    if (!isdigit((unsigned char)*s)) return -1;
    scale /= 10;
    v += (*s - '0') * scale;
  }
  *out = v;
  return 0;
}

double tqWallSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Are the 8 bytes of x (in memory order) all ASCII digits? */
static inline int digits8(uint64_t x) {
  return ((x & 0xF0F0F0F0F0F0F0F0ULL) | (((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
         0x3333333333333333ULL;
}
/* The value of 8 ASCII digits loaded little-endian (the first digit in the
** low byte): pairs, then fours, then the eight, a few multiplies. */
static inline uint64_t value8(uint64_t x) {
  x -= 0x3030303030303030ULL;
  x = x * 10 + (x >> 8);
  return ((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)) +
          ((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32))) >> 32;
}

int tqTimeParse(const char *s, size_t len, TqTime *out) {
  const char *e = s + len;
  if (len > 0 && len < 19) {
    /* fast path: a bare integer of ns (a recording's times: eight digits
    ** a step where the machine is little-endian) */
    int64_t v = 0;
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; len - i >= 8; i += 8) {
      uint64_t x;
      memcpy(&x, s + i, 8);
      if (!digits8(x)) break;
      v = v * 100000000 + (int64_t)value8(x);
    }
    if (len - i >= 4) {
      uint32_t x;
      memcpy(&x, s + i, 4);
      if (digits8((uint64_t)x | 0x3030303000000000ULL)) {
        x -= 0x30303030u;
        x = x * 10 + (x >> 8); /* two-digit values in bytes 0 and 2 */
        v = v * 10000 + (int64_t)((x & 0xFF) * 100 + (x >> 16 & 0xFF));
        i += 4;
      }
    }
#endif
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) v = v * 10 + (s[i] - '0');
    if (i == len) {
      *out = v;
      return 0;
    }
  }
  int neg = 0;
  if (s < e && *s == '-') {
    neg = 1;
    s++;
  }
  const char *c1 = memchr(s, ':', (size_t)(e - s));
  int64_t v;
  if (c1) {
    /* h:mm:ss[.frac] */
    const char *c2 = memchr(c1 + 1, ':', (size_t)(e - c1 - 1));
    if (!c2 || c2 - c1 != 3) return -1;
    const char *dot = memchr(c2 + 1, '.', (size_t)(e - c2 - 1));
    const char *se = dot ? dot : e;
    int64_t h, m, sec, frac = 0;
    if (parseDigits(s, c1, &h) || parseDigits(c1 + 1, c2, &m) || parseDigits(c2 + 1, se, &sec)) return -1;
    if (se - (c2 + 1) != 2 || m >= 60 || sec >= 60) return -1;
    if (dot && (dot + 1 >= e || parseFrac(dot + 1, e, TQ_SEC, &frac))) return -1;
    if (h > (INT64_MAX / TQ_SEC) / 3600 - 1) return -2;
    v = ((h * 3600 + m * 60 + sec) * TQ_SEC) + frac;
  } else {
    const char *p = s;
    while (p < e && isdigit((unsigned char)*p)) p++;
    const char *ie = p, *fs = NULL, *fe = NULL;
    if (p < e && *p == '.') {
      fs = p + 1;
      p++;
      while (p < e && isdigit((unsigned char)*p)) p++;
      fe = p;
      if (fs == fe) return -1;
    }
    size_t ul = (size_t)(e - p);
    int64_t unit;
    if (ul == 0) unit = TQ_NS;
    else if (ul == 2 && !strncmp(p, "ns", 2)) unit = TQ_NS;
    else if (ul == 2 && !strncmp(p, "us", 2)) unit = TQ_US;
    else if (ul == 2 && !strncmp(p, "ms", 2)) unit = TQ_MS;
    else if (ul == 1 && *p == 's') unit = TQ_SEC;
    else if (ul == 3 && !strncmp(p, "min", 3)) unit = 60 * TQ_SEC;
    else if (ul == 1 && *p == 'h') unit = 3600 * TQ_SEC;
    else return -1;
    if (fs && unit == TQ_NS) return -1;
    int64_t ip, fp = 0;
    if (ie == s) return -1;
    if (parseDigits(s, ie, &ip)) return -2; /* only digits: too many of them */
    if (fs && parseFrac(fs, fe, unit, &fp)) return -1;
    if (__builtin_mul_overflow(ip, unit, &v) || __builtin_add_overflow(v, fp, &v)) return -2;
    if (v >= TQ_FOREVER) return -2;
  }
  *out = neg ? -v : v;
  return 0;
}

/* ================================================================ memory */

static void oom(void) {
  fputs("tqmon: out of memory\n", stderr);
  abort();
}
void *tqMalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom();
  return p;
}
void *tqCalloc(size_t n, size_t m) {
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) oom();
  return p;
}
void *tqRealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom();
  return p;
}
void tqHugePages(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (n < 4 * huge) return;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + n) & ~(huge - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* (advice: refused, nothing changes) */
#else
  (void)p;
  (void)n;
#endif
}
char *tqStrdup(const char *s) { return tqStrndup(s, strlen(s)); }
char *tqStrndup(const char *s, size_t n) {
  char *p = tqMalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}
char *tqMprintf(const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = tqMalloc((size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, aq);
  va_end(aq);
  return p;
}

typedef struct ArenaBlock {
  struct ArenaBlock *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} ArenaBlock;
struct TqArena {
  ArenaBlock *head;
};

TqArena *tqArenaNew(void) { return tqCalloc(1, sizeof(TqArena)); }
void tqArenaDelete(TqArena *a) {
  if (!a) return;
  ArenaBlock *b = a->head;
  while (b) {
    ArenaBlock *n = b->next;
    free(b);
    b = n;
  }
  free(a);
}
void tqArenaReset(TqArena *a) {
  ArenaBlock *b = a->head;
  if (!b) return;
  /* keep the newest block (the largest in use lately), free the others */
  ArenaBlock *n = b->next;
  while (n) {
    ArenaBlock *x = n->next;
    free(n);
    n = x;
  }
  b->next = NULL;
  b->used = 0;
}
void *tqArenaAllocRaw(TqArena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ArenaBlock *b = a->head;
  if (__builtin_expect(b && b->used + n <= b->cap, 1)) {
    void *p = b->data + b->used;
    b->used += n;
    return p;
  }
  size_t cap = n > 16384 ? n : 16384;
  b = tqMalloc(sizeof(ArenaBlock) + cap);
  b->used = n;
  b->cap = cap;
  b->next = a->head;
  a->head = b;
  return b->data;
}
void *tqArenaAlloc(TqArena *a, size_t n) {
  void *p = tqArenaAllocRaw(a, n);
  memset(p, 0, n);
  return p;
}
char *tqArenaStrndup(TqArena *a, const char *s, size_t n) {
  char *p = tqArenaAlloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}
char *tqArenaStrdup(TqArena *a, const char *s) { return s ? tqArenaStrndup(a, s, strlen(s)) : NULL; }
char *tqArenaPrintf(TqArena *a, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = tqArenaAlloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, aq);
  va_end(aq);
  return p;
}

void tqVecPush(TqVec *v, void *p) {
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 8;
    v->v = tqRealloc(v->v, sizeof(void *) * (size_t)v->cap);
  }
  v->v[v->n++] = p;
}
void tqVecFree(TqVec *v) {
  free(v->v);
  v->v = NULL;
  v->n = v->cap = 0;
}

void tqBufAdd(TqBuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + n + 1) cap *= 2;
    b->s = tqRealloc(b->s, cap);
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}
void tqBufPuts(TqBuf *b, const char *s) { tqBufAdd(b, s, strlen(s)); }
int tqUtf8Len(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  int n;
  unsigned min, cp;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000, cp = c & 0x07;
  else return 0;
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0; /* (also stops at the NUL) */
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

void tqBufJsonStr(TqBuf *b, const char *s, int html) {
  tqBufAdd(b, "\"", 1);
  const unsigned char *u = (const unsigned char *)s;
  while (*u) {
    unsigned c = *u;
    if (c == '"' || c == '\\') tqBufPrintf(b, "\\%c", c);
    else if (c < 32 || (html && (c == '<' || c == '>' || c == '&'))) tqBufPrintf(b, "\\u%04x", c);
    else if (c < 0x80) tqBufAdd(b, (const char *)u, 1);
    else {
      int n = tqUtf8Len(u);
      if (n) {
        tqBufAdd(b, (const char *)u, (size_t)n);
        u += n;
        continue;
      }
      tqBufPuts(b, "\\ufffd"); /* one byte that is not UTF-8 */
    }
    u++;
  }
  tqBufAdd(b, "\"", 1);
}

void tqBufPrintf(TqBuf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) { /* more than INT_MAX bytes: callers bound what they print */
    va_end(aq);
    return;
  }
  if (n < (int)sizeof tmp) {
    tqBufAdd(b, tmp, (size_t)n);
  } else {
    char *p = tqMalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, aq);
    tqBufAdd(b, p, (size_t)n);
    free(p);
  }
  va_end(aq);
}
void tqBufFree(TqBuf *b) {
  free(b->s);
  b->s = NULL;
  b->n = b->cap = 0;
}

/* ================================================================ hashing */

uint64_t tqHash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}
uint64_t tqHashBytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ULL ^ seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    s += 8;
    n -= 8;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
  h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
  return tqHash64(h);
}

static void mapGrow(TqMap *m) {
  uint32_t ocap = m->cap;
  TqMapSlot *old = m->slot;
  uint32_t cap = ocap ? ocap : 16;
  while (m->n * 2 + 2 > cap) cap *= 2;
  if (cap == ocap && m->used * 4 < ocap * 3) cap = ocap; /* only cleanup */
  m->cap = cap;
  m->slot = tqCalloc(cap, sizeof(TqMapSlot));
  m->n = m->used = 0;
  for (uint32_t i = 0; i < ocap; i++)
    if (old[i].key > 1) tqMapPut(m, old[i].key, old[i].val);
  free(old);
}
void *tqMapGet(const TqMap *m, uint64_t key) {
  if (!m->cap) return NULL;
  uint32_t mask = m->cap - 1, i = (uint32_t)tqHash64(key) & mask;
  for (;;) {
    uint64_t k = m->slot[i].key;
    if (k == key) return m->slot[i].val;
    if (k == 0) return NULL;
    i = (i + 1) & mask;
  }
}
void tqMapPut(TqMap *m, uint64_t key, void *val) {
  if ((m->used + 1) * 4 >= m->cap * 3) mapGrow(m);
  uint32_t mask = m->cap - 1, i = (uint32_t)tqHash64(key) & mask;
  int64_t tomb = -1;
  for (;;) {
    uint64_t k = m->slot[i].key;
    if (k == key) {
      m->slot[i].val = val;
      return;
    }
    if (k == 1 && tomb < 0) tomb = i;
    if (k == 0) break;
    i = (i + 1) & mask;
  }
  if (tomb >= 0) {
    i = (uint32_t)tomb;
  } else {
    m->used++;
  }
  m->slot[i].key = key;
  m->slot[i].val = val;
  m->n++;
}
void **tqMapRef(TqMap *m, uint64_t key) {
  if ((m->used + 1) * 4 >= m->cap * 3) mapGrow(m);
  uint32_t mask = m->cap - 1, i = (uint32_t)tqHash64(key) & mask;
  int64_t tomb = -1;
  for (;;) {
    uint64_t k = m->slot[i].key;
    if (k == key) return &m->slot[i].val;
    if (k == 1 && tomb < 0) tomb = i;
    if (k == 0) break;
    i = (i + 1) & mask;
  }
  if (tomb >= 0) i = (uint32_t)tomb;
  else m->used++;
  m->slot[i].key = key;
  m->slot[i].val = NULL;
  m->n++;
  return &m->slot[i].val;
}
void *tqMapDel(TqMap *m, uint64_t key) {
  if (!m->cap) return NULL;
  uint32_t mask = m->cap - 1, i = (uint32_t)tqHash64(key) & mask;
  for (;;) {
    uint64_t k = m->slot[i].key;
    if (k == key) {
      void *v = m->slot[i].val;
      m->slot[i].val = NULL;
      m->n--;
      if (m->slot[(i + 1) & mask].key != 0) {
        m->slot[i].key = 1; /* a probe chain goes on through here */
        return v;
      }
      /* the chain ends here: this slot and the deleted ones before it are
      ** free again, so churn does not fill the table with tombstones (only
      ** deleted or empty slots change: iterating callers are unaffected) */
      do {
        m->slot[i].key = 0;
        m->used--;
        i = (i - 1) & mask;
      } while (m->slot[i].key == 1);
      return v;
    }
    if (k == 0) return NULL;
    i = (i + 1) & mask;
  }
}
void tqMapFree(TqMap *m) {
  free(m->slot);
  memset(m, 0, sizeof *m);
}

/* ================================================================ symbols */

static struct {
  char **name;   /* id -> string */
  uint32_t *len; /* id -> length */
  int32_t n, cap;
  int32_t *slot; /* hash slots holding ids */
  uint32_t nslot;
} symtab;

static void symRehash(void) {
  uint32_t ns = symtab.nslot ? symtab.nslot * 2 : 1024;
  int32_t *slot = tqCalloc(ns, sizeof(int32_t));
  for (int32_t id = 1; id < symtab.n; id++) {
    uint32_t i = (uint32_t)tqHashBytes(symtab.name[id], symtab.len[id], 0) & (ns - 1);
    while (slot[i]) i = (i + 1) & (ns - 1);
    slot[i] = id;
  }
  free(symtab.slot);
  symtab.slot = slot;
  symtab.nslot = ns;
}

int32_t tqSym(const char *s, size_t len) {
  if (symtab.n == 0) {
    symtab.cap = 256;
    symtab.name = tqCalloc((size_t)symtab.cap, sizeof(char *));
    symtab.len = tqCalloc((size_t)symtab.cap, sizeof(uint32_t));
    symtab.name[0] = tqStrdup("");
    symtab.n = 1;
    symRehash();
  }
  uint32_t mask = symtab.nslot - 1, i = (uint32_t)tqHashBytes(s, len, 0) & mask;
  while (symtab.slot[i]) {
    int32_t id = symtab.slot[i];
    if (symtab.len[id] == len && !memcmp(symtab.name[id], s, len)) return id;
    i = (i + 1) & mask;
  }
  if (symtab.n == symtab.cap) {
    symtab.cap *= 2;
    symtab.name = tqRealloc(symtab.name, sizeof(char *) * (size_t)symtab.cap);
    symtab.len = tqRealloc(symtab.len, sizeof(uint32_t) * (size_t)symtab.cap);
  }
  int32_t id = symtab.n++;
  symtab.name[id] = tqStrndup(s, len);
  symtab.len[id] = (uint32_t)len;
  if ((uint32_t)symtab.n * 2 > symtab.nslot) {
    symRehash();
  } else {
    symtab.slot[i] = id;
  }
  return id;
}
int32_t tqSymZ(const char *s) { return tqSym(s, strlen(s)); }
const char *tqSymName(int32_t id) {
  if (id <= 0 || id >= symtab.n) return "";
  return symtab.name[id];
}
int32_t tqSymCount(void) { return symtab.n; }

/* ================================================================ diagnostics */

static void diagLine(TqDiag *d, TqLoc loc) {
  if (!loc.src || loc.line <= 0) return;
  const char *t = loc.src->text, *e = t + loc.src->len;
  int line = 1 + loc.src->line0;
  while (t < e && line < loc.line) {
    if (*t++ == '\n') line++;
  }
  const char *le = t;
  while (le < e && *le != '\n') le++;
  /* a long line is cut to a window around the caret, "..." marking the cuts */
  enum { WIDTH = 160 };
  long len = le - t, col = loc.col - 1 < 0 ? 0 : loc.col - 1 > len ? len : loc.col - 1;
  long from = 0, to = len;
  if (len > WIDTH) {
    from = col > WIDTH / 2 ? col - WIDTH / 2 : 0;
    to = from + WIDTH < len ? from + WIDTH : len;
    if (to - from < WIDTH) from = to - WIDTH;
  }
  tqBufPuts(&d->out, from > 0 ? "  ..." : "  ");
  for (const char *p = t + from; p < t + to; p++) tqBufAdd(&d->out, *p == '\t' ? " " : p, 1);
  tqBufPuts(&d->out, to < len ? "...\n  " : "\n  ");
  for (long i = from > 0 ? -3 : 0; i < col - from; i++) tqBufPuts(&d->out, " ");
  tqBufPuts(&d->out, "^\n");
}

/* One message: "WHERE: KIND: text" (WHERE is file:line:col from loc, or
** where, or nothing), then the source line and a caret when loc has one. */
static void diagAdd(TqDiag *d, TqLoc loc, const char *where, const char *kind, const char *fmt, va_list ap) {
  if (loc.src) tqBufPrintf(&d->out, "%s:%d:%d: %s: ", loc.src->name, loc.line, loc.col, kind);
  else if (where) tqBufPrintf(&d->out, "%s: %s: ", where, kind);
  else tqBufPrintf(&d->out, "%s: ", kind);
  char tmp[1024];
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  tqBufPuts(&d->out, tmp);
  tqBufPuts(&d->out, "\n");
  diagLine(d, loc);
}

void tqErrorV(TqDiag *d, TqLoc loc, const char *fmt, va_list ap) {
  d->nerr++;
  if (d->nerr > (d->maxerr ? d->maxerr : 50)) return;
  diagAdd(d, loc, NULL, "error", fmt, ap);
}
void tqError(TqDiag *d, TqLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tqErrorV(d, loc, fmt, ap);
  va_end(ap);
}
void tqErrorAt(TqDiag *d, const char *where, const char *fmt, ...) {
  d->nerr++;
  if (d->nerr > (d->maxerr ? d->maxerr : 50)) return;
  TqLoc none = {0};
  va_list ap;
  va_start(ap, fmt);
  diagAdd(d, none, where, "error", fmt, ap);
  va_end(ap);
}
void tqNote(TqDiag *d, TqLoc loc, const char *fmt, ...) {
  if (!d->notes) return;
  va_list ap;
  va_start(ap, fmt);
  diagAdd(d, loc, NULL, "note", fmt, ap);
  va_end(ap);
}
void tqDiagFree(TqDiag *d) { tqBufFree(&d->out); }

TqSource *tqSourceFromString(const char *name, const char *text) {
  TqSource *s = tqCalloc(1, sizeof *s);
  s->name = tqStrdup(name);
  s->len = strlen(text);
  s->text = tqStrndup(text, s->len);
  return s;
}
TqSource *tqSourceRead(const char *path, TqDiag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    tqErrorAt(d, path, "cannot open: %s", strerror(errno));
    return NULL;
  }
  TqSource *s = tqSourceReadFile(f, path, NULL, 0, 0, d);
  fclose(f);
  return s;
}

/* Reports the first NUL byte or over-long line in b->s[from, b->n) (the
** lines before from were checked already); *ls is the start of the line
** that was not complete at the last call (lines are not counted: only an
** error's place needs its line number, counted then).  A line holds at
** most maxLine bytes (0: no bound) when every maxLine + 1 bytes from a
** line's start hold a '\n': one search a window, not one a line.  0, or
** -1 with the error in d. */
static int sourceCheck(const TqBuf *b, size_t from, size_t *ls, size_t maxLine, const char *name, TqDiag *d) {
  const char *nul = memchr(b->s + from, 0, b->n - from);
  size_t upto = nul ? (size_t)(nul - b->s) : b->n, p = *ls;
  int tooLong = 0;
  while (maxLine && upto - p > maxLine) {
    const char *nl = memrchr(b->s + p, '\n', maxLine + 1);
    if (!nl) {
      tooLong = 1;
      break;
    }
    p = (size_t)(nl - b->s) + 1;
  }
  if (!tooLong) { /* the start of the line upto is in */
    const char *nl = upto > p ? memrchr(b->s + p, '\n', upto - p) : NULL;
    if (nl) p = (size_t)(nl - b->s) + 1;
  }
  *ls = p;
  if (!tooLong && !nul) return 0;
  int line = 1;
  for (const char *q = b->s; (q = memchr(q, '\n', (size_t)(b->s + p - q))) != NULL; q++) line++;
  char where[4200];
  if (tooLong) {
    snprintf(where, sizeof where, "%.4096s:%d:1", name, line);
    tqErrorAt(d, where, "line longer than %zu bytes", maxLine);
    return -1;
  }
  /* where: line and column of the first NUL */
  snprintf(where, sizeof where, "%.4096s:%d:%zu", name, line, upto - p + 1);
  tqErrorAt(d, where, "binary file (contains a NUL byte)");
  return -1;
}

TqSource *tqSourceReadFile(FILE *f, const char *name, const void *head, size_t nhead, size_t maxLine, TqDiag *d) {
  TqBuf b = {0};
  struct stat st;
  if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
    /* a file: read it whole into a buffer of its size (no copies) */
    b.cap = (size_t)st.st_size + nhead + 1;
    b.s = tqMalloc(b.cap);
    tqHugePages(b.s, b.cap);
    TQ_MEMCPY(b.s, head, nhead);
    b.n = nhead + fread(b.s + nhead, 1, (size_t)st.st_size, f);
    b.s[b.n] = 0;
  } else if (nhead) {
    tqBufAdd(&b, head, nhead);
  }
  /* whatever else comes (a pipe, a device, a file that grew), checked as
  ** it comes: an endless input (/dev/zero) stops at its first NUL byte or
  ** over-long line, not at the end of memory */
  size_t ls = 0, checked = 0;
  char tmp[65536];
  size_t n;
  int bad = b.n && sourceCheck(&b, 0, &ls, maxLine, name, d);
  checked = b.n;
  while (!bad && (n = fread(tmp, 1, sizeof tmp, f)) > 0) {
    tqBufAdd(&b, tmp, n);
    bad = sourceCheck(&b, checked, &ls, maxLine, name, d);
    checked = b.n;
  }
  if (!bad && ferror(f)) {
    tqErrorAt(d, name, "read error: %s", strerror(errno));
    bad = 1;
  }
  if (bad) {
    tqBufFree(&b);
    return NULL;
  }
  if (!b.s) tqBufAdd(&b, "", 0);
  TqSource *s = tqCalloc(1, sizeof *s);
  s->name = tqStrdup(name);
  s->text = b.s;
  s->len = b.n;
  return s;
}
void tqSourceFree(TqSource *s) {
  if (!s) return;
  free(s->name);
  free(s->text);
  free(s);
}
