/*
** colfil.c - collection files: a compact binary recording, written by the
** colfil CONSUMER (what a run collected, or every record with "all") and
** read back by the colfil EXTRACTOR with the same enabling semantics as the
** text recordings.  Also the text form writer (tqmon convert).
**
** Layout (little-endian), format version 2:
**   "TQMONCOL"  magic
**   u32         format version (COL_VERSION; a newer one is refused)
**   u32         flags (1: closed properly, the fields below are final;
**               2: it holds WHOLE records, whose begins the reader announces
**               to the engine before the replay: it reads the file twice)
**   i64 first, i64 last, i64 records   (patched when the file is closed)
**   u32         CRC-32C of the 32 bytes from the version to here (patched
**               with them; a mismatch makes the file read as not closed
**               properly: its range is found by reading it)
**   u32         header length, then the header: host characteristics
**               (strings: host, os, release, machine; varints: cpus, page
**               size, tick ns, wall-clock start ns) and the sensor catalog
**               (relations: name, kind, attributes with name, type, enum
**               values)
**   u32         CRC-32C of the header (a mismatch refuses the file)
**   blocks      u32 payload length, u32 CRC-32C of the payload, payload
** Every later version keeps these first 44 bytes, so that a newer file is
** told from a damaged version field (the checksum holds).
** Version 1 (still read) had neither header checksum (the header length
** at offset 40, the header at 44) and CRC-32 (zlib's) for the blocks.
** A payload holds records; the first record of a block has an absolute time,
** the others a delta from the previous one.  Record = tag byte (kind in the
** high 3 bits, relation in the low 5 bits, 31 = a varint follows), varint
** time, then by kind: EVENT/SAMPLE values; BEGIN values (the interval's id
** is implicit: the number of BEGINs so far); END the distance back to its
** BEGIN (values and begin come from it); WHOLE the duration then values;
** SYMBOL a string (file symbol ids count up from 1 in order of definition).
** Values: int zigzag varint, float 8 bytes, enum varint, entity and string
** a file symbol id.  A damaged block (bad length or CRC) stops the reading
** with its offset reported; the blocks before it are used.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "sensorsInt.h"

#define COL_MAGIC "TQMONCOL"
#define COL_VERSION 2u
#define COL_BLOCK 65536
enum { CK_EVENT = 1, CK_BEGIN, CK_END, CK_WHOLE, CK_SAMPLE, CK_SYMBOL };

/* ================================================================ CRC-32, CRC-32C */
/* Slicing by 8: eight tables, eight bytes per step.  CRC-32 (zlib's,
** polynomial 0xedb88320) checks the blocks of format 1; CRC-32C
** (Castagnoli, 0x82f63b78) the header and blocks of format 2, with the
** SSE4.2 instruction where the CPU has it (about ten times faster). */
typedef uint32_t CrcTable[8][256];
static CrcTable crcTable, crcTableC;

static void crcInit(CrcTable tab, uint32_t poly) {
  if (tab[0][1]) return;
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? poly ^ (c >> 1) : c >> 1;
    tab[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xff];
}

static uint32_t crcSliced(CrcTable tab, uint32_t poly, const unsigned char *p, size_t n) {
  crcInit(tab, poly);
  uint32_t c = 0xffffffffu;
  while (n >= 8) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + 4, 4);
    lo ^= c; /* little-endian */
    c = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^ tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
        tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^ tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

static uint32_t crc32(const unsigned char *p, size_t n) { return crcSliced(crcTable, 0xedb88320u, p, n); }
uint32_t snsCrc32cSoft(const void *data, size_t n) { return crcSliced(crcTableC, 0x82f63b78u, data, n); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc32cHw(const unsigned char *p, size_t n) {
  uint64_t c = 0xffffffffu;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = (uint32_t)c;
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32 ^ 0xffffffffu;
}
#define CRC32C_HW 1
#endif
uint32_t snsCrc32c(const void *data, size_t n) {
#ifdef CRC32C_HW
  static int hw = -1; /* (a benign race: every thread finds the same) */
  if (hw < 0) hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
  if (hw) return crc32cHw(data, n);
#endif
  return snsCrc32cSoft(data, n);
}

/* ================================================================ encoding */
typedef struct Out {
  unsigned char *b;
  size_t n, cap;
} Out;
static void outGrow(Out *o, size_t k) {
  if (o->n + k <= o->cap) return;
  o->cap = o->cap ? o->cap * 2 : 4096;
  while (o->n + k > o->cap) o->cap *= 2;
  o->b = tqRealloc(o->b, o->cap);
}
static void putByte(Out *o, unsigned v) {
  outGrow(o, 1);
  o->b[o->n++] = (unsigned char)v;
}
static void putVar(Out *o, uint64_t v) {
  outGrow(o, 10);
  while (v >= 0x80) {
    o->b[o->n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  o->b[o->n++] = (unsigned char)v;
}
static void putZig(Out *o, int64_t v) { putVar(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
static void putRaw(Out *o, const void *p, size_t k) {
  outGrow(o, k);
  memcpy(o->b + o->n, p, k);
  o->n += k;
}
static void putStr(Out *o, const char *s) {
  size_t k = strlen(s);
  putVar(o, k);
  putRaw(o, s, k);
}
static void putU32(Out *o, uint32_t v) { putRaw(o, &v, 4); }

typedef struct In {
  const unsigned char *p, *e;
  int bad;
} In;
static uint64_t getVarSlow(In *in) {
  uint64_t v = 0;
  for (int s = 0; s < 64; s += 7) {
    if (in->p >= in->e) {
      in->bad = 1;
      return 0;
    }
    unsigned c = *in->p++;
    v |= (uint64_t)(c & 0x7f) << s;
    if (!(c & 0x80)) return v;
  }
  in->bad = 1;
  return 0;
}
/* A varint; the common case (ten bytes left, so no bounds check per byte)
** first. */
static inline uint64_t getVar(In *in) {
  const unsigned char *p = in->p;
  if (in->e - p < 10) return getVarSlow(in);
  uint64_t v = p[0] & 0x7f;
  if (!(p[0] & 0x80)) {
    in->p = p + 1;
    return v;
  }
  for (int i = 1; i < 10; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      in->p = p + i + 1;
      return v;
    }
  }
  in->bad = 1;
  return 0;
}
static int64_t getZig(In *in) {
  uint64_t v = getVar(in);
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
static char *getStr(In *in) {
  uint64_t k = getVar(in);
  if (in->bad || k > (uint64_t)(in->e - in->p)) {
    in->bad = 1;
    return tqStrdup("");
  }
  char *s = tqStrndup((const char *)in->p, (size_t)k);
  in->p += k;
  return s;
}

/* ================================================================ writing */

typedef struct Writer {
  FILE *f;
  char *path;
  Out block;          /* current block payload */
  int firstInBlock;
  TqTime lastT;
  TqTime first, last;
  int64_t records;
  int64_t nbegin;     /* BEGINs written: the next interval id */
  TqMap ivs;          /* (rel, engine id) -> file id + 1 */
  TqMap syms;         /* engine symbol -> file symbol */
  int64_t nsym;
  const CpProgram *prog;
  int any;
  int64_t wholes;     /* WHOLE records written (flag 2 at the close) */
} Writer;

static void writeHeader(Writer *w) {
  Out h = {0};
  struct utsname u;
  if (uname(&u) != 0) memset(&u, 0, sizeof u);
  putStr(&h, u.nodename);
  putStr(&h, u.sysname);
  putStr(&h, u.release);
  putStr(&h, u.machine);
  putVar(&h, (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
  putVar(&h, (uint64_t)sysconf(_SC_PAGESIZE));
  putVar(&h, (uint64_t)w->prog->cat.tick);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  putVar(&h, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
  const AlgCatalog *c = &w->prog->cat;
  putVar(&h, (uint64_t)c->rels.n);
  for (int i = 0; i < c->rels.n; i++) {
    const AlgRel *r = c->rels.v[i];
    putStr(&h, r->name);
    putByte(&h, (unsigned)(r->isEvent | (r->entity ? 2 : 0)));
    putVar(&h, (uint64_t)r->nattr);
    for (int k = 0; k < r->nattr; k++) {
      putStr(&h, r->attr[k].name);
      putByte(&h, r->attr[k].type.kind);
      if (r->attr[k].type.kind == TY_ENUM) {
        putVar(&h, (uint64_t)r->attr[k].type.en->n);
        for (int j = 0; j < r->attr[k].type.en->n; j++) putStr(&h, r->attr[k].type.en->names[j]);
      }
    }
  }
  Out f = {0};
  putRaw(&f, COL_MAGIC, 8);
  putU32(&f, COL_VERSION);
  putU32(&f, 0); /* flags: not closed yet */
  int64_t z = 0;
  putRaw(&f, &z, 8);
  putRaw(&f, &z, 8);
  putRaw(&f, &z, 8);
  putU32(&f, snsCrc32c(f.b + 8, 32));
  putU32(&f, (uint32_t)h.n);
  putRaw(&f, h.b, h.n);
  putU32(&f, snsCrc32c(h.b, h.n));
  fwrite(f.b, 1, f.n, w->f);
  free(f.b);
  free(h.b);
}

static int flushBlock(Writer *w) {
  if (!w->block.n) return 0;
  uint32_t len = (uint32_t)w->block.n, crc = snsCrc32c(w->block.b, w->block.n);
  if (fwrite(&len, 4, 1, w->f) != 1 || fwrite(&crc, 4, 1, w->f) != 1 || fwrite(w->block.b, 1, w->block.n, w->f) != w->block.n)
    return -1;
  w->block.n = 0;
  w->firstInBlock = 1;
  return 0;
}

static uint64_t fileSym(Writer *w, int64_t sym) {
  uint64_t f = (uint64_t)(uintptr_t)tqMapGet(&w->syms, (uint64_t)sym + 2);
  if (f) return f;
  f = (uint64_t)++w->nsym;
  tqMapPut(&w->syms, (uint64_t)sym + 2, (void *)(uintptr_t)f);
  /* define it: tag, time (a zero delta), the string */
  putByte(&w->block, CK_SYMBOL << 5);
  if (w->firstInBlock) {
    putZig(&w->block, w->lastT);
    w->firstInBlock = 0;
  } else {
    putVar(&w->block, 0);
  }
  putStr(&w->block, tqSymName((int32_t)sym));
  return f;
}

static void putVals(Writer *w, const AlgRel *r, const int64_t *v) {
  /* symbols first, so their definitions come before the record */
  uint64_t fs[64];
  for (int i = 0; i < r->nattr && i < 64; i++)
    if (r->attr[i].type.kind == TY_ENTITY || r->attr[i].type.kind == TY_STRING) fs[i] = fileSym(w, v[i]);
  (void)fs;
}

static void putValsNow(Writer *w, const AlgRel *r, const int64_t *v) {
  for (int i = 0; i < r->nattr; i++) {
    switch (r->attr[i].type.kind) {
      case TY_INT: putZig(&w->block, v[i]); break;
      case TY_FLOAT: putRaw(&w->block, &v[i], 8); break;
      case TY_ENUM: putVar(&w->block, (uint64_t)v[i]); break;
      default: putVar(&w->block, (uint64_t)(uintptr_t)tqMapGet(&w->syms, (uint64_t)v[i] + 2)); break;
    }
  }
}

static int writeRecord(Writer *w, const tq_record *rec) {
  const AlgRel *r = w->prog->cat.rels.v[rec->rel - 1];
  TqTime t = rec->kind == TQ_REC_BEGIN ? rec->from : (rec->kind == TQ_REC_END || rec->kind == TQ_REC_WHOLE) ? rec->to : rec->t;
  int kind;
  uint64_t back = 0;
  switch (rec->kind) {
    case TQ_REC_EVENT: kind = CK_EVENT; break;
    case TQ_REC_SAMPLE: kind = CK_SAMPLE; break;
    case TQ_REC_BEGIN: kind = CK_BEGIN; break;
    case TQ_REC_END: {
      uint64_t key = tqHash64(((uint64_t)rec->rel << 48) ^ rec->id) | 2;
      uint64_t fid = (uint64_t)(uintptr_t)tqMapDel(&w->ivs, key);
      if (fid) {
        kind = CK_END;
        back = (uint64_t)w->nbegin - (fid - 1);
      } else {
        kind = CK_WHOLE; /* its begin was not recorded */
      }
      break;
    }
    case TQ_REC_WHOLE: kind = CK_WHOLE; break;
    default: return 0;
  }
  if (w->block.n > COL_BLOCK && flushBlock(w)) return -1;
  if (!w->any) w->lastT = t; /* symbol definitions are stamped with it: times may be negative */
  if (kind != CK_END) putVals(w, r, rec->vals); /* symbol definitions */
  unsigned relc = rec->rel < 31 ? (unsigned)rec->rel : 31;
  putByte(&w->block, (unsigned)(kind << 5) | relc);
  if (relc == 31) putVar(&w->block, (uint64_t)rec->rel);
  if (w->firstInBlock) {
    putZig(&w->block, t);
    w->firstInBlock = 0;
  } else {
    putVar(&w->block, (uint64_t)(t - w->lastT));
  }
  w->lastT = t;
  switch (kind) {
    case CK_EVENT:
    case CK_SAMPLE: putValsNow(w, r, rec->vals); break;
    case CK_BEGIN: {
      putValsNow(w, r, rec->vals);
      uint64_t key = tqHash64(((uint64_t)rec->rel << 48) ^ rec->id) | 2;
      tqMapPut(&w->ivs, key, (void *)(uintptr_t)(w->nbegin + 1));
      w->nbegin++;
      break;
    }
    case CK_END: putVar(&w->block, back); break;
    case CK_WHOLE:
      putVar(&w->block, (uint64_t)(rec->to - rec->from));
      putValsNow(w, r, rec->vals);
      break;
  }
  if (!w->any) w->first = t;
  w->any = 1;
  w->last = t;
  w->records++;
  if (kind == CK_WHOLE) w->wholes++;
  return 0;
}

static int closeWriter(Writer *w, TqTime first, TqTime last) {
  int rc = flushBlock(w);
  /* patch the header: closed, first, last, records, and their checksum */
  uint32_t version = COL_VERSION, flags = 1 | (w->wholes ? 2 : 0);
  int64_t f = first, l = last, n = w->records;
  unsigned char fix[36];
  memcpy(fix, &version, 4);
  memcpy(fix + 4, &flags, 4);
  memcpy(fix + 8, &f, 8);
  memcpy(fix + 16, &l, 8);
  memcpy(fix + 24, &n, 8);
  uint32_t crc = snsCrc32c(fix, 32);
  memcpy(fix + 32, &crc, 4);
  if (!rc && (fseek(w->f, 8, SEEK_SET) || fwrite(fix, 1, sizeof fix, w->f) != sizeof fix)) rc = -1;
  if (fclose(w->f)) rc = -1;
  free(w->block.b);
  tqMapFree(&w->ivs);
  tqMapFree(&w->syms);
  free(w->path);
  return rc;
}

/* ================================================================ reading */

/* The reader keeps the intervals of the last IV_WINDOW begins in a ring
** (an END names its BEGIN by the distance back); older open ones move to
** a map, so its memory is bounded by the open intervals, not the file. */
#define IV_WINDOW 65536

typedef struct OpenRec {
  int64_t id;           /* its file interval id */
  TqTime from;
  int rel;
  int frel;             /* its file relation: an END must be of the same */
  int nvals;
  struct OpenRec *next; /* in the free list of its size */
  int64_t vals[];
} OpenRec;

/* A file relation as the values decoder needs it (no pointer chasing). */
typedef struct FileRel {
  const AlgRel *rel;   /* the program's, NULL when it does not declare it */
  int id;              /* program relation id */
  int nattr;
  int isEvent;         /* the file's kind: EVENT records, or BEGIN/END/WHOLE */
  unsigned char kind[TQ_MAX_ATTRS];
  int32_t nenum[TQ_MAX_ATTRS]; /* TY_ENUM: how many values (the file's) */
  int32_t *emap[TQ_MAX_ATTRS]; /* TY_ENUM: file value -> program value, by name (NULL: the same) */
} FileRel;

typedef struct Reader {
  FILE *f;             /* read a block at a time: memory is one block */
  unsigned char *blk;  /* the block being read */
  size_t cblk;
  size_t len;          /* the file's size when known (regular file), else 0 */
  uint32_t version;    /* of its format */
  int rangeBad;        /* the range fields failed their checksum (1) or are out of range (2) */
  int ranged;          /* the header's range holds: every record time lies in it */
  int wholeOk;         /* its WHOLE records were announced (read ahead) */
  size_t off;          /* next block */
  unsigned char *hdr;  /* the header (catalog) and its checksum */
  const char *path;
  uint32_t flags;
  TqTime first, last;
  int64_t records;     /* as the header says (a file closed properly) */
  int64_t nread;       /* records read */
  int nrel;
  FileRel *rels;       /* by file relation */
  int64_t *symMap;     /* file symbol -> engine symbol */
  int64_t nsym, csym;
  OpenRec **ivs;       /* the last IV_WINDOW begins, by id % IV_WINDOW */
  TqMap oldIvs;        /* id + 2 -> OpenRec*: open ones that began before */
  OpenRec *freeRec[TQ_MAX_ATTRS + 1]; /* ended ones, by number of values, for reuse */
  int64_t nbegin;
  TqTime lastT;
  In cur;              /* the block being read */
  int inBlock;
  int firstRec;        /* the next record is the block's first (absolute time) */
  size_t blockOff;
  int64_t vals[64];
  char err[256];
} Reader;

/* Reports the reader's error as "FILE[:OFFSET]: error: message". */
static void reportReader(TqDiag *d, const Reader *r, const char *suffix) {
  size_t n = strlen(r->path);
  const char *sep = !strncmp(r->err, r->path, n) ? strstr(r->err + n, ": ") : NULL;
  if (sep) {
    char where[sizeof r->err];
    memcpy(where, r->err, (size_t)(sep - r->err));
    where[sep - r->err] = 0;
    tqErrorAt(d, where, "%s%s", sep + 2, suffix);
  } else {
    tqErrorAt(d, NULL, "%s%s", r->err, suffix);
  }
}

static int readerFail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int readerFail(Reader *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof r->err, fmt, ap);
  va_end(ap);
  return -1;
}

/* Reads the file, checks the header and maps its catalog onto the program's. */
static int openReader(Reader *r, const char *path, const CpProgram *prog) {
  memset(r, 0, sizeof *r);
  r->path = path;
  r->lastT = TQ_BEGINNING; /* (no record yet: any time is after it) */
  FILE *f = fopen(path, "rb");
  if (!f) return readerFail(r, "%s: cannot open: %s", path, strerror(errno));
  r->f = f;
  struct stat st;
  if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode)) r->len = (size_t)st.st_size;
  unsigned char fix[48];
  size_t got = fread(fix, 1, 12, f);
  if (got < 12 || memcmp(fix, COL_MAGIC, 8)) return readerFail(r, "%s: not a tqmon collection file", path);
  uint32_t version;
  memcpy(&version, fix + 8, 4);
  if (version > COL_VERSION) {
    /* every version from 2 on begins like 2 (its first 44 bytes): a
    ** version whose range checksum holds is newer, one whose does not is
    ** a damaged version field */
    uint32_t sum;
    got += fread(fix + 12, 1, 32, f);
    memcpy(&sum, fix + 40, 4);
    if (got < 44 || snsCrc32c(fix + 8, 32) != sum)
      return readerFail(r, "%s:8: corrupt header (format version %u, and its checksum does not match)", path, version);
    return readerFail(r, "%s: collection file format version %u is newer than this tqmon reads (%u); use a newer tqmon",
                      path, version, COL_VERSION);
  }
  if (version == 0) return readerFail(r, "%s:8: corrupt header (format version 0)", path);
  r->version = version;
  size_t hoff = version == 1 ? 44 : 48; /* the header */
  got += fread(fix + 12, 1, hoff - 12, f);
  if (got < hoff) return readerFail(r, "%s:%zu: truncated header", path, got);
  memcpy(&r->flags, fix + 12, 4);
  memcpy(&r->first, fix + 16, 8);
  memcpy(&r->last, fix + 24, 8);
  memcpy(&r->records, fix + 32, 8);
  uint32_t hlen;
  memcpy(&hlen, fix + hoff - 4, 4);
  size_t tail = version == 1 ? 0 : 4; /* its checksum */
  if ((r->len && (size_t)hlen + tail > r->len - hoff) || hlen > (64u << 20))
    return readerFail(r, "%s:%zu: truncated header", path, hoff);
  r->hdr = tqMalloc((size_t)hlen + tail + 1);
  if (fread(r->hdr, 1, (size_t)hlen + tail, f) != (size_t)hlen + tail) return readerFail(r, "%s:%zu: truncated header", path, hoff);
  if (version >= 2) {
    uint32_t hcrc, fcrc;
    memcpy(&hcrc, r->hdr + hlen, 4);
    if (snsCrc32c(r->hdr, hlen) != hcrc) return readerFail(r, "%s:%zu: corrupt header (checksum mismatch)", path, hoff);
    memcpy(&fcrc, fix + 40, 4);
    if (snsCrc32c(fix + 8, 32) != fcrc) {
      /* its range cannot be trusted: read as a file not closed properly */
      r->rangeBad = 1;
      r->flags = 0;
      r->first = r->last = r->records = 0;
    }
  }
  if ((r->flags & 1) && (r->first <= TQ_BEGINNING || r->first > r->last || r->last >= TQ_FOREVER || r->records < 0)) {
    /* a range no writer gives (a version-1 header has no checksum) */
    r->rangeBad = 2;
    r->flags = 0;
    r->first = r->last = r->records = 0;
  }
  r->ranged = r->flags & 1;
  In h = {r->hdr, r->hdr + hlen, 0};
  for (int i = 0; i < 4; i++) free(getStr(&h));
  for (int i = 0; i < 4; i++) getVar(&h);
  uint64_t nrel = getVar(&h);
  if (h.bad || nrel > 100000) return readerFail(r, "%s:%zu: corrupt header", path, hoff);
  r->nrel = (int)nrel;
  r->rels = tqCalloc(nrel + 1, sizeof(FileRel));
  for (uint64_t i = 0; i < nrel && !h.bad; i++) {
    char *name = getStr(&h);
    unsigned kind = h.p < h.e ? *h.p++ : 0;
    uint64_t na = getVar(&h);
    if (na > TQ_MAX_ATTRS) h.bad = 1;
    const AlgRel *pr = algCatRel(&prog->cat, name);
    int ok = pr && (int)na == pr->nattr && pr->isEvent == (int)(kind & 1);
    /* the file's own description: a relation the program does not declare
    ** is decoded by it, and skipped */
    FileRel *fr = &r->rels[i + 1];
    fr->nattr = h.bad ? 0 : (int)na;
    fr->isEvent = (int)(kind & 1);
    char why[160] = "";
    for (uint64_t k = 0; k < na && !h.bad; k++) {
      char *an = getStr(&h);
      unsigned ty = h.p < h.e ? *h.p++ : 0;
      if (ok && (strcasecmp(an, pr->attr[k].name) || ty != pr->attr[k].type.kind)) ok = 0;
      fr->kind[k] = (unsigned char)ty;
      if (ty == TY_ENUM) {
        /* values by name: the program may list them in another order */
        uint64_t ne = getVar(&h);
        if (ne > (uint64_t)(h.e - h.p)) h.bad = 1; /* each takes a byte at least */
        const AlgEnum *pe = ok ? pr->attr[k].type.en : NULL;
        fr->nenum[k] = h.bad ? 0 : (int32_t)ne;
        if (pe && !h.bad) fr->emap[k] = tqMalloc(sizeof(int32_t) * (size_t)(ne ? ne : 1));
        int same = 1;
        for (uint64_t j = 0; j < ne && !h.bad; j++) {
          char *vn = getStr(&h);
          int at = -1;
          for (int q = 0; pe && q < pe->n; q++)
            if (!strcasecmp(pe->names[q], vn)) at = q;
          if (pe && at < 0 && !why[0]) {
            snprintf(why, sizeof why, " (%s has no value %s)", pr->attr[k].name, vn);
            ok = 0;
          }
          if (fr->emap[k]) fr->emap[k][j] = at;
          if (at != (int)j) same = 0;
          free(vn);
        }
        if (same) {
          free(fr->emap[k]);
          fr->emap[k] = NULL;
        }
      }
      free(an);
    }
    if (pr && !ok && !h.bad) {
      int rc = readerFail(r, "%s: relation %s of the recording does not match the program's declaration%s", path, name, why);
      free(name);
      return rc;
    }
    fr->rel = ok ? pr : NULL;
    fr->id = ok ? pr->id : 0;
    free(name);
  }
  if (h.bad) return readerFail(r, "%s:%zu: corrupt header", path, hoff);
  r->off = hoff + hlen + tail;
  return 0;
}

static void closeReader(Reader *r) {
  if (r->f) fclose(r->f);
  free(r->hdr);
  free(r->blk);
  for (int i = 0; r->rels && i <= r->nrel; i++)
    for (int k = 0; k < TQ_MAX_ATTRS; k++) free(r->rels[i].emap[k]);
  free(r->rels);
  free(r->symMap);
  if (r->ivs)
    for (int64_t i = 0; i < IV_WINDOW; i++) free(r->ivs[i]);
  free(r->ivs);
  for (uint32_t i = 0; i < r->oldIvs.cap; i++)
    if (r->oldIvs.slot[i].key > 1) free(r->oldIvs.slot[i].val);
  tqMapFree(&r->oldIvs);
  for (int k = 0; k <= TQ_MAX_ATTRS; k++)
    while (r->freeRec[k]) {
      OpenRec *o = r->freeRec[k];
      r->freeRec[k] = o->next;
      free(o);
    }
}

/* Starts the next block: 1 ok, 0 end of file, -1 damaged (r->err). */
static int nextBlock(Reader *r) {
  unsigned char bh[8];
  size_t n = fread(bh, 1, 8, r->f);
  if (n == 0) return 0;
  if (n < 8) return readerFail(r, "%s:%zu: truncated block header", r->path, r->off);
  uint32_t len, crc;
  memcpy(&len, bh, 4);
  memcpy(&crc, bh + 4, 4);
  /* a block the size of the writer's (COL_BLOCK and one record) or so:
  ** a far larger length is damage, not a reason to allocate it */
  if ((r->len && (size_t)len > r->len - r->off - 8) || len > (64u << 20))
    return readerFail(r, "%s:%zu: truncated block (%u bytes announced)", r->path, r->off, len);
  if (!r->blk || (size_t)len > r->cblk) { /* (an empty block too has a buffer) */
    r->cblk = (size_t)len > 2 * r->cblk ? (size_t)len : 2 * r->cblk;
    if (r->cblk < 4096) r->cblk = 4096;
    free(r->blk);
    r->blk = tqMalloc(r->cblk);
  }
  if (fread(r->blk, 1, len, r->f) != len)
    return readerFail(r, "%s:%zu: truncated block (%u bytes announced)", r->path, r->off, len);
  uint32_t sum = r->version == 1 ? crc32(r->blk, len) : snsCrc32c(r->blk, len);
  if (sum != crc) return readerFail(r, "%s:%zu: corrupt block (checksum mismatch)", r->path, r->off);
  r->blockOff = r->off;
  r->cur = (In){r->blk, r->blk + len, 0};
  r->off += 8 + (size_t)len;
  r->inBlock = 1;
  r->firstRec = 1;
  return 1;
}

static int getVals(Reader *r, const FileRel *fr, int64_t *v) {
  In *in = &r->cur;
  for (int i = 0; i < fr->nattr; i++) {
    switch (fr->kind[i]) {
      case TY_INT: v[i] = getZig(in); break;
      case TY_FLOAT:
        if (in->e - in->p < 8) {
          in->bad = 1;
          return -1;
        }
        memcpy(&v[i], in->p, 8);
        in->p += 8;
        break;
      case TY_ENUM: {
        uint64_t x = getVar(in);
        if (x >= (uint64_t)fr->nenum[i]) in->bad = 1;
        else v[i] = fr->emap[i] ? fr->emap[i][x] : (int64_t)x;
        break;
      }
      default: {
        uint64_t s = getVar(in);
        if (s == 0 || s > (uint64_t)r->nsym) in->bad = 1;
        else v[i] = r->symMap[s];
        break;
      }
    }
  }
  return in->bad ? -1 : 0;
}

/* Decodes one record into *rec: 1 a record, 0 end of file, -1 damaged. */
static int readRecord(Reader *r, tq_record *rec, int *skip) {
  *skip = 0;
  for (;;) {
    if (!r->inBlock || r->cur.p >= r->cur.e) {
      r->inBlock = 0;
      int b = nextBlock(r);
      if (b == 0 && (r->flags & 1) && r->nread != r->records) /* cut at a block's end */
        return readerFail(r, "%s:%zu: truncated (%lld of the %lld records it was closed with)", r->path, r->off,
                          (long long)r->nread, (long long)r->records);
      if (b <= 0) return b;
    }
    const unsigned char *start = r->cur.p; /* its offset, for a message */
#define AT (r->blockOff + 8 + (size_t)(start - r->blk))
    unsigned tag = *r->cur.p++;
    int kind = (int)(tag >> 5);
    uint64_t frel = tag & 31;
    if (frel == 31) frel = getVar(&r->cur);
    /* times lie strictly between beginning and forever and never go back,
    ** also from a block to the next (whose first time is absolute) */
    TqTime t;
    int first = r->firstRec;
    r->firstRec = 0;
    if (first) {
      t = getZig(&r->cur);
    } else {
      uint64_t d = getVar(&r->cur);
      if (d >= (uint64_t)TQ_FOREVER - (uint64_t)r->lastT) return readerFail(r, "%s:%zu: time out of range", r->path, AT);
      t = r->lastT + (TqTime)d;
    }
    if (r->cur.bad) return readerFail(r, "%s:%zu: truncated record", r->path, AT);
    if (t <= TQ_BEGINNING || t >= TQ_FOREVER) return readerFail(r, "%s:%zu: time out of range", r->path, AT);
    if (t < r->lastT) return readerFail(r, "%s:%zu: time goes backwards", r->path, AT);
    r->lastT = t;
    if (kind == CK_SYMBOL) {
      char *s = getStr(&r->cur);
      if (r->cur.bad) {
        free(s);
        return readerFail(r, "%s:%zu: truncated symbol", r->path, AT);
      }
      if (r->nsym + 1 >= r->csym) {
        r->csym = r->csym ? 2 * r->csym : 1024;
        r->symMap = tqRealloc(r->symMap, sizeof(int64_t) * (size_t)r->csym);
      }
      r->symMap[++r->nsym] = tqSymZ(s);
      free(s);
      continue;
    }
    /* (a symbol's time is only the base of the next delta) */
    if (r->ranged && (t < r->first || t > r->last))
      return readerFail(r, "%s:%zu: time %lld outside the file's range (%lld to %lld): corrupt", r->path, AT,
                        (long long)t, (long long)r->first, (long long)r->last);
    if (kind < CK_EVENT || kind > CK_SAMPLE || frel == 0 || frel > (uint64_t)r->nrel)
      return readerFail(r, "%s:%zu: corrupt record (kind %d, relation %llu)", r->path, AT, kind, (unsigned long long)frel);
    const FileRel *fr = &r->rels[frel];
    if ((kind == CK_EVENT) != fr->isEvent && kind != CK_SAMPLE)
      return readerFail(r, "%s:%zu: corrupt record (%s record of %s relation %llu)", r->path, AT,
                        kind == CK_EVENT ? "an event" : "an interval", fr->isEvent ? "event" : "interval",
                        (unsigned long long)frel);
    int na = fr->nattr;
    int64_t *v = r->vals;
    rec->rel = fr->id;
    rec->t = t;
    rec->nvals = na;
    rec->vals = v;
    switch (kind) {
      case CK_EVENT:
      case CK_SAMPLE:
        if (getVals(r, fr, v)) return readerFail(r, "%s:%zu: corrupt values", r->path, AT);
        rec->kind = kind == CK_EVENT ? TQ_REC_EVENT : TQ_REC_SAMPLE;
        rec->from = rec->to = 0;
        rec->id = 0;
        break;
      case CK_BEGIN: {
        if (getVals(r, fr, v)) return readerFail(r, "%s:%zu: corrupt values", r->path, AT);
        if (!r->ivs) r->ivs = tqCalloc(IV_WINDOW, sizeof(OpenRec *));
        OpenRec *o = r->freeRec[na];
        if (o) r->freeRec[na] = o->next;
        else o = tqMalloc(sizeof(OpenRec) + sizeof(int64_t) * (size_t)(na ? na : 1));
        o->nvals = na;
        o->from = t;
        o->rel = fr->id;
        o->frel = (int)frel;
        for (int k = 0; k < na; k++) o->vals[k] = v[k]; /* a few: no call */
        rec->id = (uint64_t)r->nbegin;
        o->id = r->nbegin;
        OpenRec **slot = &r->ivs[r->nbegin++ % IV_WINDOW];
        if (*slot) tqMapPut(&r->oldIvs, (uint64_t)(*slot)->id + 2, *slot); /* still open: out of the window */
        *slot = o;
        rec->kind = TQ_REC_BEGIN;
        rec->from = t;
        rec->to = 0;
        break;
      }
      case CK_END: {
        uint64_t back = getVar(&r->cur);
        int ok = !r->cur.bad && back > 0 && back <= (uint64_t)r->nbegin;
        int64_t id = ok ? r->nbegin - (int64_t)back : -1;
        OpenRec *o = NULL;
        if (ok && back <= IV_WINDOW) o = r->ivs[id % IV_WINDOW];
        else if (ok) o = tqMapDel(&r->oldIvs, (uint64_t)id + 2);
        if (!o || o->id != id) return readerFail(r, "%s:%zu: END of an interval that is not open", r->path, AT);
        if (o->frel != (int)frel) {
          if (back > IV_WINDOW) tqMapPut(&r->oldIvs, (uint64_t)id + 2, o); /* (still its begin's) */
          return readerFail(r, "%s:%zu: END of an interval of another relation", r->path, AT);
        }
        rec->kind = TQ_REC_END;
        rec->id = (uint64_t)id;
        rec->from = o->from;
        rec->to = t;
        for (int k = 0; k < na; k++) v[k] = o->vals[k];
        o->next = r->freeRec[o->nvals];
        r->freeRec[o->nvals] = o;
        if (back <= IV_WINDOW) r->ivs[id % IV_WINDOW] = NULL;
        break;
      }
      case CK_WHOLE: {
        if (!r->wholeOk)
          return readerFail(r, "%s:%zu: a whole interval, which %s", r->path, AT,
                            r->len ? "the file's header says it does not hold (corrupt)"
                                   : "a stream cannot announce before its begin (replay the file itself)");
        uint64_t d = getVar(&r->cur);
        if (d >= (uint64_t)t - (uint64_t)TQ_BEGINNING)
          return readerFail(r, "%s:%zu: corrupt record (an interval beginning before the beginning)", r->path, AT);
        if (getVals(r, fr, v)) return readerFail(r, "%s:%zu: corrupt values", r->path, AT);
        rec->kind = TQ_REC_WHOLE;
        rec->from = t - (TqTime)d;
        rec->to = t;
        rec->id = (uint64_t)1 << 62 | (uint64_t)r->nread; /* its own identity */
        break;
      }
    }
#undef AT
    r->nread++;
    if (!fr->rel) *skip = 1;
    return 1;
  }
}

/* ================================================================ rows (tqmon load --csv) */

int snsIsCollectionFile(const char *path) {
  char m[8];
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(m, 1, 8, f);
  fclose(f);
  return n == 8 && !memcmp(m, COL_MAGIC, 8);
}

int snsColfilRows(const char *path, const CpProgram *prog, SnsCsv *c, TqDiag *d) {
  Reader r;
  int rc = openReader(&r, path, prog);
  r.wholeOk = 1; /* read once, in order: a whole interval needs no announcing */
  tq_record rec;
  int skip, got = 0;
  while (!rc && (got = readRecord(&r, &rec, &skip)) > 0) {
    if (skip) continue;
    switch (rec.kind) {
      case TQ_REC_EVENT:
      case TQ_REC_SAMPLE:
        rc = snsCsvRow(c, rec.rel, rec.vals, rec.t, ((const AlgRel *)prog->cat.rels.v[rec.rel - 1])->isEvent ? rec.t : rec.t + 1);
        break;
      case TQ_REC_END:
      case TQ_REC_WHOLE: rc = snsCsvRow(c, rec.rel, rec.vals, rec.from, rec.to); break;
      default: break;
    }
  }
  if (!rc && got < 0) rc = -1;
  if (rc && r.err[0]) {
    reportReader(d, &r, "");
  } else if (!rc) {
    /* the intervals still open at the end */
    for (int64_t i = 0; r.ivs && i < IV_WINDOW && !rc; i++)
      if (r.ivs[i] && r.rels[r.ivs[i]->frel].rel) rc = snsCsvRow(c, r.ivs[i]->rel, r.ivs[i]->vals, r.ivs[i]->from, TQ_OPEN);
    for (uint32_t i = 0; i < r.oldIvs.cap && !rc; i++) {
      const OpenRec *o = r.oldIvs.slot[i].key > 1 ? r.oldIvs.slot[i].val : NULL;
      if (o && r.rels[o->frel].rel) rc = snsCsvRow(c, o->rel, o->vals, o->from, TQ_OPEN);
    }
  }
  closeReader(&r);
  return rc ? -1 : 0;
}

/* ================================================================ the colfil PM */

typedef struct Colfil {
  int reading;
  Reader rd;
  Writer wr;
  int started;
  tq_record pending;   /* read ahead (crossed a snapshot boundary) */
  int havePending;
  int64_t pendVals[64];
} Colfil;

/* args: FILE to read (EXTRACTOR), or "write:FILE" / "all:FILE" to write
** what the run collected / every record (CONSUMER). */
static tq_pm_status colInit(tq_pm_global *g, tq_pm_private *p) {
  const char *a = p->args ? p->args : "";
  if (!*a) {
    snprintf(p->message, sizeof p->message, "give a file: colfil=FILE (read) or colfil=write:FILE");
    return TQ_PM_ERROR;
  }
  if (!strncmp(a, "write:", 6)) {
    p->caps = TQ_PM_CONSUMER;
    p->sync = TQ_PM_SYNC_COLLECTION_END;
  } else if (!strncmp(a, "all:", 4)) {
    p->caps = TQ_PM_CONSUMER;
    p->sync = TQ_PM_SYNC_COLLECTION_END | TQ_PM_SYNC_ALL_RECORDS;
  } else {
    p->caps = TQ_PM_EXTRACTOR;
  }
  return TQ_PM_OK;
}

static tq_pm_status colCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Colfil *c = p->data;
  switch (what) {
    case TQ_PM_START: {
      c = tqCalloc(1, sizeof *c);
      p->data = c;
      const char *a = p->args;
      if (p->caps & TQ_PM_EXTRACTOR) {
        c->reading = 1;
        if (openReader(&c->rd, a, enProgram(g))) {
          snprintf(p->message, sizeof p->message, "%s", c->rd.err);
          reportReader(enDiag(g), &c->rd, "");
          return TQ_PM_FATAL;
        }
        /* a regular file is read once more when its range is not known
        ** (not closed properly, damaged range fields) or it may hold whole
        ** intervals (their begins are announced to the engine, which holds
        ** the relation's low mark back for them); a stream (a pipe) cannot
        ** be: its range is known at its end, and it may not hold whole
        ** intervals */
        int ranged = c->rd.flags & 1;
        int mayWhole = c->rd.version == 1 || !ranged || (c->rd.flags & 2);
        if (c->rd.len && (!ranged || mayWhole)) {
          Reader scan = {0};
          if (!openReader(&scan, a, enProgram(g))) {
            tq_record rec;
            int skip, any = 0;
            scan.wholeOk = 1;
            while (readRecord(&scan, &rec, &skip) > 0) {
              if (rec.kind == TQ_REC_WHOLE && !skip) g->announce_whole(g, rec.rel, rec.from);
              if (ranged) continue;
              TqTime t = rec.kind == TQ_REC_BEGIN ? rec.from : rec.kind == TQ_REC_END || rec.kind == TQ_REC_WHOLE ? rec.to : rec.t;
              if (!any) c->rd.first = t;
              c->rd.last = t;
              any = 1;
            }
            if (!ranged) c->rd.records = scan.nread;
            ranged |= any;
            c->rd.wholeOk = mayWhole;
          }
          closeReader(&scan);
        }
        if (!(c->rd.flags & 1)) {
          const char *how = c->rd.len ? "reading what it holds" : "its range is known at its end";
          if (c->rd.rangeBad)
            g->log(g, p, TQ_LOG_WARNING, "%s:12: its range fields are damaged (%s): %s", a,
                   c->rd.rangeBad == 1 ? "checksum mismatch" : "out of range", how);
          else
            g->log(g, p, TQ_LOG_WARNING, "%s was not closed properly: %s", a, how);
        }
        if (ranged) g->set_range(g, c->rd.first, c->rd.last, c->rd.records);
      } else {
        const char *path = strchr(a, ':') + 1;
        c->wr.f = fopen(path, "w+b");
        if (!c->wr.f) {
          snprintf(p->message, sizeof p->message, "cannot write %s: %s", path, strerror(errno));
          return TQ_PM_FATAL;
        }
        c->wr.path = tqStrdup(path);
        c->wr.prog = enProgram(g);
        c->wr.firstInBlock = 1;
        writeHeader(&c->wr);
      }
      c->started = 1;
      return TQ_PM_OK;
    }
    case TQ_PM_COLLECTION_END:
      return TQ_PM_OK;
    case TQ_PM_END:
      if (!c) return TQ_PM_OK;
      if (c->reading) {
        closeReader(&c->rd);
      } else if (c->started) {
        RtNet *net = enNet(g);
        TqTime first = net ? net->origin : c->wr.first, last = net ? net->now : c->wr.last;
        if (net && net->opt.nowValue != TQ_OPEN) last = net->opt.nowValue;
        /* it covers every record written (a live record may come after the
        ** network's last time: the reader holds records to the range) */
        if (c->wr.any && c->wr.first < first) first = c->wr.first;
        if (c->wr.any && c->wr.last > last) last = c->wr.last;
        if (closeWriter(&c->wr, first, last)) {
          free(c);
          p->data = NULL;
          snprintf(p->message, sizeof p->message, "error writing the collection file");
          return TQ_PM_ERROR;
        }
      }
      free(c);
      p->data = NULL;
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

static tq_pm_status colRecord(tq_pm_global *g, tq_pm_private *p, const tq_record *r) {
  Colfil *c = p->data;
  if (!c || c->reading) return TQ_PM_OK;
  if (writeRecord(&c->wr, r)) {
    snprintf(p->message, sizeof p->message, "cannot write %s: %s", c->wr.path, strerror(errno));
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

static tq_pm_status colExtract(tq_pm_global *g, tq_pm_private *p) {
  Colfil *c = p->data;
  Reader *r = &c->rd;
  TqTime boundary = TQ_FOREVER;
  tq_record rec;
  int skip;
  if (c->havePending) {
    rec = c->pending;
    rec.vals = c->pendVals;
    c->havePending = 0;
    goto have;
  }
  for (;;) {
    int rr = readRecord(r, &rec, &skip);
    if (rr == 0) return TQ_PM_DONE;
    if (rr < 0) {
      /* damaged: what came before is used; say where */
      reportReader(enDiag(g), r, " (the records before it were used)");
      snprintf(p->message, sizeof p->message, "%s", r->err);
      return TQ_PM_ERROR;
    }
    if (skip) continue;
  have: {
    TqTime t = rec.kind == TQ_REC_BEGIN ? rec.from : rec.kind == TQ_REC_END || rec.kind == TQ_REC_WHOLE ? rec.to : rec.t;
    if (boundary == TQ_FOREVER) {
      boundary = tqTickAfter(t, g->tick);
    } else if (t >= boundary) {
      c->pending = rec;
      memcpy(c->pendVals, rec.vals, sizeof(int64_t) * (size_t)rec.nvals);
      c->havePending = 1;
      return TQ_PM_OK;
    }
    if (g->produce(g, &rec)) return TQ_PM_FATAL;
  }
  }
}

const tq_pm snsColfilPm = {
    .version = TQ_PM_VERSION,
    .name = "colfil",
    .description = "collection files: EXTRACTOR (args: FILE) and CONSUMER (args: write:FILE or all:FILE)",
    .init = colInit,
    .call = colCall,
    .extract = colExtract,
    .record = colRecord,
};
