/*
** tq.h - base layer shared by every part of tqmon: time, arenas, symbols,
** source positions and diagnostics, small containers.
**
** Invariants: times are signed 64-bit nanoseconds; TQ_OPEN is never a real
** time (it marks an interval end that is not known yet); TQ_FOREVER and
** TQ_BEGINNING are the TQuel constants and saturate arithmetic.  Symbols are
** interned once per process and never freed, so a symbol id is a stable
** 32-bit name for a string (entity names, strings, identifiers).
*/
#ifndef TQ_H
#define TQ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- time */
typedef int64_t TqTime;
#define TQ_OPEN INT64_MAX            /* end not known yet (open interval) */
#define TQ_FOREVER (INT64_MAX - 1)   /* the constant forever */
#define TQ_BEGINNING (INT64_MIN + 1) /* the constant beginning */
#define TQ_NS 1LL
#define TQ_US 1000LL
#define TQ_MS 1000000LL
#define TQ_SEC 1000000000LL
#define TQ_MSEC 1000000LL
/* Times from here on (1973) are wall-clock times of live runs (CLOCK_REALTIME
** ns) and print as UTC dates; smaller ones print as h:mm:ss from the origin. */
#define TQ_WALLCLOCK 100000000000000000LL

/* Saturating a+b on times: infinities stay infinite, no overflow.  (Inline:
** the temporal evaluation of every overlap adds times.) */
static inline TqTime tqTimeAdd(TqTime a, TqTime b) {
  if (a == TQ_OPEN || b == TQ_OPEN) return TQ_OPEN;
  if (a >= TQ_FOREVER || b >= TQ_FOREVER) return TQ_FOREVER;
  if (a <= TQ_BEGINNING || b <= TQ_BEGINNING) return TQ_BEGINNING;
  TqTime r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? TQ_FOREVER : TQ_BEGINNING;
  if (r >= TQ_FOREVER) return TQ_FOREVER;
  if (r <= TQ_BEGINNING) return TQ_BEGINNING;
  return r;
}
/* The first multiple of tick (> 0) after t: the base tick that closes t's
** snapshot; forever when that would lie past it (no overflow). */
static inline TqTime tqTickAfter(TqTime t, TqTime tick) {
  TqTime q = t / tick;
  if (q * tick > t) q--;
  return q >= TQ_FOREVER / tick ? TQ_FOREVER : (q + 1) * tick;
}
/* The first multiple of tick (> 0) at or after t; forever when past it. */
static inline TqTime tqTickAtOrAfter(TqTime t, TqTime tick) {
  TqTime q = t / tick;
  if (q * tick < t) q++;
  return q > TQ_FOREVER / tick ? TQ_FOREVER : q * tick;
}
/* Formats t as h:mm:ss[.fraction] (fraction only when not whole seconds);
** beginning/forever/open print as words. Returns buf. */
/* A wall-clock time (CLOCK_REALTIME ns) as ISO 8601: local time (TZ) with
** its offset (2026-11-24T22:54:54.25+01:00), or UTC (...Z); fraction digits
** as needed, or all nine (allNs: exact). */
char *tqTimeIso(char *buf, size_t n, TqTime t, int utc, int allNs);
char *tqTimeFormat(char *buf, size_t n, TqTime t);
/* d in the shortest form that reads back as d (strtod), as Python's repr
** and JavaScript print it: 0.8333333333333334, not %.17g's
** 0.83333333333333337; "nan", "inf", "-inf" when not finite.  Writes at
** most n bytes (32 are always enough) into buf and returns buf. */
char *tqFloatFormat(char *buf, size_t n, double d);
/* Parses "h:mm:ss[.frac]", "N[ns|us|ms|s|min|h]" or a bare integer of ns.
** Returns 0 and sets *out, -1 on a malformed string, -2 when the value does
** not fit in 64-bit nanoseconds. */
int tqTimeParse(const char *s, size_t len, TqTime *out);
/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for durations (progress,
** time limits, redraw rates), never for stream time. */
double tqWallSeconds(void);

/* ---------------------------------------------------------------- memory */
/* Out-of-memory is the one error we do not recover from: these abort. */
void *tqMalloc(size_t n);
void *tqCalloc(size_t n, size_t m);
void *tqRealloc(void *p, size_t n);
char *tqStrdup(const char *s);
char *tqStrndup(const char *s, size_t n);
/* Advice for a large buffer of n bytes at p that is filled once, front to
** back (a recording read whole, the arrays parsed from it): its 2 MiB
** aligned part is backed by transparent huge pages where the kernel offers
** them on request, one page fault per 2 MiB instead of per 4 KiB.  Below
** 8 MiB, or where the kernel offers none, nothing changes. */
void tqHugePages(void *p, size_t n);
char *tqMprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An arena frees everything it handed out at once (one per compiled program). */
typedef struct TqArena TqArena;
TqArena *tqArenaNew(void);
void tqArenaDelete(TqArena *a); /* accepts NULL */
void tqArenaReset(TqArena *a);  /* frees everything allocated, keeps one block for reuse */
void *tqArenaAlloc(TqArena *a, size_t n); /* zeroed, 16-byte aligned */
void *tqArenaAllocRaw(TqArena *a, size_t n); /* the same, not zeroed (the caller fills it) */
char *tqArenaStrdup(TqArena *a, const char *s);
char *tqArenaStrndup(TqArena *a, const char *s, size_t n);
char *tqArenaPrintf(TqArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Growable array of pointers. */
typedef struct TqVec {
  void **v; /* items */
  int n;    /* number used */
  int cap;  /* allocated */
} TqVec;
void tqVecPush(TqVec *v, void *p);
void tqVecFree(TqVec *v);

/* Growable byte buffer for building strings. */
typedef struct TqBuf {
  char *s;    /* NUL-terminated content */
  size_t n;   /* length */
  size_t cap; /* allocated */
} TqBuf;
void tqBufAdd(TqBuf *b, const char *s, size_t n);
void tqBufPuts(TqBuf *b, const char *s);
void tqBufPrintf(TqBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tqBufFree(TqBuf *b);
/* Appends s as a JSON string (quoted, escaped).  Bytes that are not valid
** UTF-8 (a recording's strings are bytes) become U+FFFD, escaped, so the
** output is always valid UTF-8 JSON.  html: also escapes < > & (safe
** inside an HTML <script>). */
void tqBufJsonStr(TqBuf *b, const char *s, int html);
/* The length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes
** there are not one (overlong, a surrogate, beyond U+10FFFF, cut short). */
int tqUtf8Len(const unsigned char *s);

/* ---------------------------------------------------------------- symbols */
/* Interns s[0..len) and returns its id (>= 1). Case is kept. */
int32_t tqSym(const char *s, size_t len);
int32_t tqSymZ(const char *s);
const char *tqSymName(int32_t id); /* "" for 0 */
int32_t tqSymCount(void);

/* ---------------------------------------------------------------- hashing */
/* Open-addressing map from a nonzero 64-bit key to a pointer. */
typedef struct TqMapSlot {
  uint64_t key; /* 0 = empty slot, 1 = deleted */
  void *val;
} TqMapSlot;
typedef struct TqMap {
  TqMapSlot *slot; /* key and value side by side: one cache line per probe */
  uint32_t cap;    /* power of two */
  uint32_t n;      /* live entries */
  uint32_t used;   /* live + deleted */
} TqMap;
void *tqMapGet(const TqMap *m, uint64_t key);
void tqMapPut(TqMap *m, uint64_t key, void *val); /* key must be > 1 */
void *tqMapDel(TqMap *m, uint64_t key);           /* returns old value */
/* The value of key, inserted as NULL when absent: one probe for a lookup
** followed by a store.  Valid until the next insertion. */
void **tqMapRef(TqMap *m, uint64_t key);
void tqMapFree(TqMap *m);
/* Iteration: for (i = 0; i < m->cap; i++) if (m->slot[i].key > 1) ... */
uint64_t tqHash64(uint64_t x);
uint64_t tqHashBytes(const void *p, size_t n, uint64_t seed);

/* ---------------------------------------------------------------- diagnostics */
/* A source file kept in memory so errors can show the offending line. */
typedef struct TqSource {
  char *name; /* file name as given */
  char *text; /* whole content, NUL-terminated */
  size_t len; /* length of text */
  int line0;  /* lines before text's first (0: text is the whole file; a
              ** file read in parts shows errors in the part held) */
} TqSource;

typedef struct TqLoc {
  const TqSource *src; /* NULL for positions outside any file */
  int line, col;       /* 1-based */
} TqLoc;

typedef struct TqDiag {
  TqBuf out;   /* formatted messages, in order */
  int nerr;    /* number of errors */
  int maxerr;  /* stop recording after this many (0 = 50) */
  int notes;   /* record notes (tqNote); 0: they are dropped (commands other than check and run) */
} TqDiag;

/* Records "file:line:col: error: msg" followed by the source line and a
** caret under col.  Never fails. */
void tqError(TqDiag *d, TqLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tqErrorV(TqDiag *d, TqLoc loc, const char *fmt, va_list ap);
/* Error without a source line: "where: msg" (where may be NULL). */
void tqErrorAt(TqDiag *d, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Records "file:line:col: note: msg" with the source line and a caret: a
** remark that is no error (nerr does not count it; a run goes on); only
** when d->notes is set. */
void tqNote(TqDiag *d, TqLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tqDiagFree(TqDiag *d);

/* Reads a whole file into a TqSource. Returns NULL and records an error on failure. */
TqSource *tqSourceRead(const char *path, TqDiag *d);
/* Reads what is left of f (kept open) into a TqSource called name, after
** the nhead bytes of head (read already to tell the file's kind).  The
** input is checked as it comes: the first NUL byte, or a line longer than
** maxLine bytes (0: no bound), stops the reading with an error at
** name:line:col, so that an endless input costs one buffer, not all
** memory.  Returns NULL with the error recorded in d. */
TqSource *tqSourceReadFile(FILE *f, const char *name, const void *head, size_t nhead, size_t maxLine, TqDiag *d);
TqSource *tqSourceFromString(const char *name, const char *text);
void tqSourceFree(TqSource *s);

/* memcpy that accepts NULL pointers when n is 0 (UBSan-clean). */
#define TQ_MEMCPY(d, s, n) \
  do {                     \
    if ((n) > 0) memcpy((d), (s), (n)); \
  } while (0)
#define TQ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* Most attributes a relation may have (primitive or derived): records and
** packets carry their values in fixed arrays of this size. */
#define TQ_MAX_ATTRS 64
#define TQ_LIKELY(x) __builtin_expect(!!(x), 1)
#define TQ_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
