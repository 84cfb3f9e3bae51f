/*
** colfil.c - collection files: a compact binary recording, written by the
** colfil CONSUMER (what a run collected, or every record with "all") and
** read back by the colfil EXTRACTOR with the same enabling semantics as the
** text recordings.  Reading is in colread.c.
**
** Layout (little-endian), format version 4:
**   "TQMONCOL"  magic
**   u32         format version (COL_VERSION; a newer one is refused)
**   u32         flags (1: closed properly, the fields below are final;
**               2: it holds WHOLE records, whose begins the reader announces
**               to the engine before the replay: it reads ahead for them)
**   i64 first, i64 last, i64 records   (patched when the file is closed)
**   u32         CRC-32C of the 32 bytes from the version to here (patched
**               with them; a mismatch makes the file read as not closed
**               properly: its range is found by reading it)
**   u32         header length, then the header: host characteristics
**               (strings: host, os, release, machine; varints: cpus, page
**               size, tick ns, wall-clock start ns) and the sensor catalog
**               (relations: name, kind, attributes with name, type, enum
**               values, then a varint: 1 + the attribute its streams go by,
**               its flag entity or, for an entity relation, its entity; 0:
**               none)
**   u32         CRC-32C of the header (a mismatch refuses the file)
**   groups      the records in time order, a group after the other
** Every later version keeps these first 44 bytes, so that a newer file is
** told from a damaged version field (the checksum holds).
**
** A group holds the records of a stretch of time, split into streams: a
** stream is one relation's records whose stream attribute's value (its
** file symbol) is the same modulo COL_NPART, so that a reader can leave
** out the relations, and the entities, no query needs.  A group is
**   u32 directory length, u32 CRC-32C of the directory, the directory:
**     varint symbols the group defines, varint their bytes, u32 their CRC-32C;
**     varint blocks; per block, in stream order (relation, then part):
**       varint relation, part, records, BEGINs, WHOLEs; zigzag its first
**       time, varint last - first; varint payload length, u32 its CRC-32C;
**       varint entities listed (COL_SUMMARY_MAX + 1: too many to list),
**       then their file symbols ascending, as differences;
**     varint losses; per loss (what a producer lost, tq_pm.lost, told
**       while the group was formed, in the order told): varint relation
**       (0: not known), varint the file symbol of its flag entity (0: not
**       known), zigzag its first time, varint last - first, varint records
**       lost (0: some, how many is not known; a tqmon older than PM
**       interface version 12 refuses it as damaged), byte 1 when begins or
**       ends of intervals were among them
**       (else 0); the directory ends there.  A group may hold losses and
**       no block (nothing was written meanwhile, or its losses
**       reached the group's size: colfil.c writeLoss); a reader tells a group's
**       losses to the engine (g->lost) when it has read the group
**   the symbols: each a varint length and its bytes (file symbol ids count
**     up from 1 in order of definition, over the whole file)
**   the blocks' payloads, in directory order
** A group is written once its blocks hold COL_GROUP bytes or one of them
** COL_SBLOCK (the environment variable TQMON_COLFIL_GROUP=BYTES makes both
** smaller, for tests): a reader holds one group at most.  A payload holds records:
** byte kind, varint time since the block's previous record (the first:
** since the block's first time), then by kind: EVENT/SAMPLE values; BEGIN
** values (the interval's id is implicit: the number of the stream's BEGINs
** before it); END the distance back to its BEGIN in the stream and the
** file symbol of its stream attribute (0: none), so that a reader that
** left that entity out knows it; WHOLE the duration then values.  Values:
** int zigzag varint, float 8 bytes, enum varint, entity and string a file
** symbol id.
**
** Format 3 (still read): the same without the losses in the directories
** (a recording of version 3 holds none).  Format 2 (still read): the same
** header without the stream attributes, then blocks (u32 payload length,
** u32 CRC-32C, payload) of every relation's records in time order: a
** record is a tag byte (kind in the high 3 bits, relation in the low 5
** bits, 31 = a varint follows), varint time (the block's first absolute,
** then deltas), then as in format 3;
** BEGIN ids count over the whole file, an END gives no entity, and SYMBOL
** records define the symbols in line.  Version 1 (still read) had neither
** header checksum (the header length at offset 40, the header at 44) and
** CRC-32 (zlib's) for the blocks.  A damaged block or group (bad length or
** CRC) stops the reading with its offset reported; what came before is
** used.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "colfilInt.h"

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

uint32_t snsCrc32(const void *data, size_t n) { return crcSliced(crcTable, 0xedb88320u, data, n); }
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

/* ================================================================ writing */

/* One stream's block in the group being formed. */
typedef struct WStream {
  Out b;                 /* its payload */
  int inGroup;           /* holds records in the group */
  TqTime first, lastT;   /* its first and latest time */
  int64_t nrec, nbegin, nwhole;
  int64_t begins;        /* BEGINs written to the stream: the next one's id */
  int nent;              /* entities listed (COL_SUMMARY_MAX + 1: more) */
  uint64_t ent[COL_SUMMARY_MAX]; /* their file symbols */
} WStream;

/* An interval whose BEGIN was written (its END goes to the same stream). */
typedef struct WOpen {
  int64_t stream, id;    /* its stream and its id there */
  uint64_t ent;          /* the file symbol of its stream attribute (0: none) */
  struct WOpen *next;    /* free list */
} WOpen;

typedef struct Writer {
  FILE *f;
  char *path;
  const CpProgram *prog;
  int *sumAttr;          /* per relation id - 1: its stream attribute, -1: none */
  WStream *st;           /* by (relation id - 1) * COL_NPART + part */
  int nst;
  int *used;             /* streams holding records in the group */
  int nused;
  size_t groupBytes;     /* their payloads' bytes */
  Out syms;              /* the symbols the group defines */
  int64_t gsym;          /* how many */
  TqMap symOf;           /* engine symbol + 2 -> file symbol */
  int64_t nsym;
  TqMap ivs;             /* (relation, engine id) -> WOpen* */
  WOpen *freeOpen;
  TqTime first, last;
  int64_t records;
  int any;
  int64_t wholes;        /* WHOLE records written (flag 2 at the close) */
  Out loss;              /* the losses told during the group, encoded (format 4) */
  int64_t nloss;         /* how many */
  size_t groupMax, blockMax; /* COL_GROUP, COL_SBLOCK (TQMON_COLFIL_GROUP: smaller, for tests) */
  int stream;            /* not a regular file (a pipe): its header cannot be rewritten */
} Writer;

/* The attribute a relation's streams go by: its flag entity, or its entity
** for an entity relation; none for a sampled relation (queries sample
** every entity a recording holds, so its records are read whole). */
static int streamAttr(const AlgRel *r) {
  if (r->entity) return r->nattr > 0 && r->attr[0].type.kind == TY_ENTITY ? 0 : -1;
  if (r->mode == ALG_MODE_SAMPLED) return -1;
  return r->flagAttr >= 0 && r->attr[r->flagAttr].type.kind == TY_ENTITY ? r->flagAttr : -1;
}

static void writeHeader(Writer *w) {
  Out h = {0};
  struct utsname u;
  if (uname(&u) != 0) memset(&u, 0, sizeof u);
  const char *hs[4] = {u.nodename, u.sysname, u.release, u.machine};
  for (int i = 0; i < 4; i++) {
    putVar(&h, strlen(hs[i]));
    putRaw(&h, hs[i], strlen(hs[i]));
  }
  putVar(&h, (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
  putVar(&h, (uint64_t)sysconf(_SC_PAGESIZE));
  putVar(&h, (uint64_t)w->prog->cat.tick);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  putVar(&h, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
  const AlgCatalog *c = &w->prog->cat;
  putVar(&h, (uint64_t)c->rels.n);
#define PUTSTR(o, s) (putVar((o), strlen(s)), putRaw((o), (s), strlen(s)))
  for (int i = 0; i < c->rels.n; i++) {
    const AlgRel *r = c->rels.v[i];
    PUTSTR(&h, r->name);
    putByte(&h, (unsigned)(r->isEvent | (r->entity ? 2 : 0)));
    putVar(&h, (uint64_t)r->nattr);
    for (int k = 0; k < r->nattr; k++) {
      PUTSTR(&h, r->attr[k].name);
      putByte(&h, r->attr[k].type.kind);
      if (r->attr[k].type.kind == TY_ENUM) {
        putVar(&h, (uint64_t)r->attr[k].type.en->n);
        for (int j = 0; j < r->attr[k].type.en->n; j++) PUTSTR(&h, r->attr[k].type.en->names[j]);
      }
    }
    putVar(&h, (uint64_t)(w->sumAttr[i] + 1));
  }
#undef PUTSTR
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

static void openWriter(Writer *w, FILE *f, const char *path, const CpProgram *prog) {
  memset(w, 0, sizeof *w);
  w->f = f;
  struct stat st;
  w->stream = fstat(fileno(f), &st) || !S_ISREG(st.st_mode);
  w->path = tqStrdup(path);
  w->prog = prog;
  int n = prog->cat.rels.n;
  w->sumAttr = tqMalloc(sizeof(int) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) w->sumAttr[i] = streamAttr(prog->cat.rels.v[i]);
  w->nst = n * COL_NPART;
  w->st = tqCalloc((size_t)(w->nst ? w->nst : 1), sizeof(WStream));
  w->used = tqMalloc(sizeof(int) * (size_t)(w->nst ? w->nst : 1));
  /* tests write files of many small groups with TQMON_COLFIL_GROUP=BYTES */
  const char *gs = getenv("TQMON_COLFIL_GROUP");
  long gl = gs ? atol(gs) : 0;
  w->groupMax = gl > 0 && gl < COL_GROUP ? (size_t)gl : COL_GROUP;
  w->blockMax = w->groupMax < COL_SBLOCK ? w->groupMax : COL_SBLOCK;
  writeHeader(w);
}

static int cmpInt(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static int cmpU64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Writes the group formed so far: directory, symbols, payloads. */
static int flushGroup(Writer *w) {
  if (!w->nused && !w->nloss) return 0;
  qsort(w->used, (size_t)w->nused, sizeof(int), cmpInt);
  Out d = {0};
  putVar(&d, (uint64_t)w->gsym);
  putVar(&d, w->syms.n);
  putU32(&d, snsCrc32c(w->syms.b, w->syms.n));
  putVar(&d, (uint64_t)w->nused);
  for (int i = 0; i < w->nused; i++) {
    WStream *s = &w->st[w->used[i]];
    putVar(&d, (uint64_t)(w->used[i] / COL_NPART + 1));
    putVar(&d, (uint64_t)(w->used[i] % COL_NPART));
    putVar(&d, (uint64_t)s->nrec);
    putVar(&d, (uint64_t)s->nbegin);
    putVar(&d, (uint64_t)s->nwhole);
    putZig(&d, s->first);
    putVar(&d, (uint64_t)(s->lastT - s->first));
    putVar(&d, s->b.n);
    putU32(&d, snsCrc32c(s->b.b, s->b.n));
    putVar(&d, (uint64_t)s->nent);
    if (s->nent <= COL_SUMMARY_MAX) {
      qsort(s->ent, (size_t)s->nent, sizeof(uint64_t), cmpU64);
      for (int k = 0; k < s->nent; k++) putVar(&d, s->ent[k] - (k ? s->ent[k - 1] : 0));
    }
  }
  putVar(&d, (uint64_t)w->nloss);
  if (w->loss.n) putRaw(&d, w->loss.b, w->loss.n);
  w->loss.n = 0;
  w->nloss = 0;
  uint32_t len = (uint32_t)d.n, crc = snsCrc32c(d.b, d.n);
  int rc = fwrite(&len, 4, 1, w->f) != 1 || fwrite(&crc, 4, 1, w->f) != 1 || fwrite(d.b, 1, d.n, w->f) != d.n ||
           fwrite(w->syms.b, 1, w->syms.n, w->f) != w->syms.n;
  for (int i = 0; i < w->nused; i++) {
    WStream *s = &w->st[w->used[i]];
    if (!rc && fwrite(s->b.b, 1, s->b.n, w->f) != s->b.n) rc = 1;
    s->b.n = 0;
    s->inGroup = 0;
  }
  free(d.b);
  w->nused = 0;
  w->groupBytes = 0;
  w->syms.n = 0;
  w->gsym = 0;
  return rc ? -1 : 0;
}

/* The file symbol of an engine symbol, defined in the group if new. */
static uint64_t fileSym(Writer *w, int64_t sym) {
  void **ref = tqMapRef(&w->symOf, (uint64_t)sym + 2);
  if (*ref) return (uint64_t)(uintptr_t)*ref;
  uint64_t f = (uint64_t)++w->nsym;
  *ref = (void *)(uintptr_t)f;
  const char *s = tqSymName((int32_t)sym);
  putVar(&w->syms, strlen(s));
  putRaw(&w->syms, s, strlen(s));
  w->gsym++;
  return f;
}

static void putVals(Writer *w, Out *o, const AlgRel *r, const int64_t *v) {
  for (int i = 0; i < r->nattr; i++) {
    switch (r->attr[i].type.kind) {
      case TY_INT: putZig(o, v[i]); break;
      case TY_FLOAT: putRaw(o, &v[i], 8); break;
      case TY_ENUM: putVar(o, (uint64_t)v[i]); break;
      default: putVar(o, fileSym(w, v[i])); break;
    }
  }
}

static uint64_t ivKey(int rel, uint64_t id) { return tqHash64(((uint64_t)rel << 48) ^ id) | 2; }

static int writeRecord(Writer *w, const tq_record *rec) {
  const AlgRel *r = w->prog->cat.rels.v[rec->rel - 1];
  TqTime t = rec->kind == TQ_REC_BEGIN ? rec->from : (rec->kind == TQ_REC_END || rec->kind == TQ_REC_WHOLE) ? rec->to : rec->t;
  int kind;
  WOpen *open = NULL;
  switch (rec->kind) {
    case TQ_REC_EVENT: kind = CK_EVENT; break;
    case TQ_REC_SAMPLE: kind = CK_SAMPLE; break;
    case TQ_REC_BEGIN: kind = CK_BEGIN; break;
    case TQ_REC_END:
      open = tqMapDel(&w->ivs, ivKey(rec->rel, rec->id));
      kind = open ? CK_END : CK_WHOLE; /* without it, its begin was not recorded */
      break;
    case TQ_REC_WHOLE: kind = CK_WHOLE; break;
    default: return 0;
  }
  /* its stream: by the stream attribute's file symbol (values first, so
  ** that their symbols are defined in the group) */
  Out tmp = {0};
  int64_t si;
  uint64_t ent = 0;
  if (open) {
    si = open->stream;
    ent = open->ent;
  } else {
    int sa = w->sumAttr[rec->rel - 1];
    if (sa >= 0) ent = fileSym(w, rec->vals[sa]);
    si = (int64_t)(rec->rel - 1) * COL_NPART + (int64_t)(ent % COL_NPART);
  }
  WStream *s = &w->st[si];
  if (!s->inGroup) {
    s->inGroup = 1;
    s->first = s->lastT = t;
    s->nrec = s->nbegin = s->nwhole = 0;
    s->nent = 0;
    w->used[w->nused++] = (int)si;
  }
  Out *o = &s->b;
  size_t before = o->n;
  putByte(o, (unsigned)kind);
  putVar(o, (uint64_t)(t - s->lastT));
  s->lastT = t;
  switch (kind) {
    case CK_EVENT:
    case CK_SAMPLE: putVals(w, o, r, rec->vals); break;
    case CK_BEGIN: {
      putVals(w, o, r, rec->vals);
      WOpen *x = w->freeOpen;
      if (x) w->freeOpen = x->next;
      else x = tqMalloc(sizeof *x);
      x->stream = si;
      x->id = s->begins++;
      x->ent = ent;
      tqMapPut(&w->ivs, ivKey(rec->rel, rec->id), x);
      s->nbegin++;
      break;
    }
    case CK_END:
      putVar(o, (uint64_t)(s->begins - open->id));
      putVar(o, ent);
      open->next = w->freeOpen;
      w->freeOpen = open;
      break;
    case CK_WHOLE:
      putVar(o, (uint64_t)(rec->to - rec->from));
      putVals(w, o, r, rec->vals);
      s->nwhole++;
      break;
  }
  free(tmp.b);
  /* the block's entities */
  if (ent && s->nent <= COL_SUMMARY_MAX) {
    int k = 0;
    while (k < s->nent && s->ent[k] != ent) k++;
    if (k == s->nent) {
      if (s->nent < COL_SUMMARY_MAX) s->ent[s->nent] = ent;
      s->nent++;
    }
  }
  s->nrec++;
  w->groupBytes += o->n - before;
  if (!w->any) w->first = t;
  w->any = 1;
  w->last = t;
  w->records++;
  if (kind == CK_WHOLE) w->wholes++;
  if ((o->n >= w->blockMax || w->groupBytes >= w->groupMax) && flushGroup(w)) return -1;
  return 0;
}

/* A loss told (tq_pm.lost): into the group's directory, in the order told;
** the group is written once its losses hold as much as a group's blocks
** may (a run that loses much and records little: a group of losses only),
** so that they stay bounded in memory and in a directory.  0, or -1. */
static int writeLoss(Writer *w, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans) {
  if (rel < 0 || rel > w->prog->cat.rels.n || (count <= 0 && count != TQ_PM_LOST_UNKNOWN) || to < from)
    return 0; /* (the engine refuses them) */
  uint64_t ent = entity == TQ_PM_ENTITY_UNKNOWN ? 0 : fileSym(w, entity);
  putVar(&w->loss, (uint64_t)rel);
  putVar(&w->loss, ent);
  putZig(&w->loss, from);
  putVar(&w->loss, (uint64_t)to - (uint64_t)from);
  putVar(&w->loss, count == TQ_PM_LOST_UNKNOWN ? 0 : (uint64_t)count); /* (0: how many is not known) */
  putByte(&w->loss, spans != 0);
  w->nloss++;
  return w->loss.n + w->syms.n >= w->groupMax ? flushGroup(w) : 0;
}

static int closeWriter(Writer *w, TqTime first, TqTime last) {
  int rc = flushGroup(w);
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
  /* (a stream is left as it is: a reader takes its range at its end, as a
  ** file's that was not closed properly) */
  if (!rc && !w->stream && (fseek(w->f, 8, SEEK_SET) || fwrite(fix, 1, sizeof fix, w->f) != sizeof fix)) rc = -1;
  if (fclose(w->f)) rc = -1;
  for (int i = 0; i < w->nst; i++) free(w->st[i].b.b);
  free(w->st);
  free(w->used);
  free(w->sumAttr);
  free(w->syms.b);
  free(w->loss.b);
  for (uint32_t i = 0; i < w->ivs.cap; i++)
    if (w->ivs.slot[i].key > 1) free(w->ivs.slot[i].val);
  tqMapFree(&w->ivs);
  while (w->freeOpen) {
    WOpen *x = w->freeOpen;
    w->freeOpen = x->next;
    free(x);
  }
  tqMapFree(&w->symOf);
  free(w->path);
  return rc;
}

/* ================================================================ rows (tqmon load --csv) */

typedef struct RowsCtx {
  SnsCsv *c;
  const Reader *r;
  int rc;
} RowsCtx;
static void openRow(void *ctx, const OpenRec *o) {
  RowsCtx *x = ctx;
  if (!x->rc && x->r->rels[o->frel].rel) x->rc = snsCsvRow(x->c, o->rel, o->vals, o->from, TQ_OPEN);
}

int snsColfilRows(SnsInput *in, const CpProgram *prog, SnsCsv *c, TqDiag *d) {
  Reader r;
  int rc = snsReaderOpenFile(&r, in->f, in->name, in->head, in->nhead, prog);
  r.wholeOk = 1; /* read once, in order: a whole interval needs no announcing */
  tq_record rec;
  int skip, got = 0;
  while (!rc && (got = snsReaderNext(&r, &rec, &skip)) > 0) {
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
    snsReaderReport(d, &r, "");
  } else if (!rc) {
    RowsCtx x = {c, &r, 0}; /* the intervals still open at the end */
    snsReaderOpenIvs(&r, openRow, &x);
    rc = x.rc;
  }
  snsReaderClose(&r);
  return rc ? -1 : 0;
}

/* ================================================================ the colfil PM */

/* The colfil PM: its EXTRACTOR half is the replay's (replay.c). */
typedef struct Colfil {
  Writer wr;
  int started;
} Colfil;

/* args: FILE to read (EXTRACTOR; "full:FILE" reads every block, needed or
** not), or "write:FILE" / "all:FILE" to write what the run collected /
** every record (CONSUMER). */
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
  if (p->caps & TQ_PM_EXTRACTOR) {
    if (what == TQ_PM_START) return snsReplayStart(g, p, NULL, NULL);
    if (what == TQ_PM_END) snsReplayEnd(g, p);
    return TQ_PM_OK;
  }
  Colfil *c = p->data;
  switch (what) {
    case TQ_PM_START: {
      c = tqCalloc(1, sizeof *c);
      p->data = c;
      const char *path = strchr(p->args, ':') + 1;
      FILE *f = fopen(path, "w+b");
      if (!f) {
        snprintf(p->message, sizeof p->message, "cannot write %s: %s", path, strerror(errno));
        return TQ_PM_FATAL;
      }
      openWriter(&c->wr, f, path, enProgram(g));
      c->started = 1;
      return TQ_PM_OK;
    }
    case TQ_PM_END:
      if (!c) return TQ_PM_OK;
      if (c->started) {
        RtNet *net = enNet(g);
        TqTime first = net && net->originKnown ? net->origin : c->wr.first, last = net ? net->now : c->wr.last;
        if (net && net->opt.nowValue != TQ_OPEN) last = net->opt.nowValue;
        /* it covers every record written (a live record may come after the
        ** network's last time: the reader holds records to the range) */
        if (c->wr.any && c->wr.first < first) first = c->wr.first;
        if (c->wr.any && c->wr.last > last) last = c->wr.last;
        if (c->wr.stream && c->wr.wholes)
          g->log(g, p, TQ_LOG_WARNING,
                 "%s is a stream (not a regular file): its header cannot say it holds %lld interval%s reported "
                 "whole at their end, so its replay refuses the first (write a regular file)",
                 c->wr.path, (long long)c->wr.wholes, c->wr.wholes == 1 ? "" : "s");
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
  if (!c || (p->caps & TQ_PM_EXTRACTOR)) return TQ_PM_OK;
  if (writeRecord(&c->wr, r)) {
    snprintf(p->message, sizeof p->message, "cannot write %s: %s", c->wr.path, strerror(errno));
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

static tq_pm_status colLost(tq_pm_global *g, tq_pm_private *p, int rel, int64_t entity, tq_time from, tq_time to,
                            int64_t count, int spans) {
  Colfil *c = p->data;
  if (c && c->started && !(p->caps & TQ_PM_EXTRACTOR) && writeLoss(&c->wr, rel, entity, from, to, count, spans)) {
    snprintf(p->message, sizeof p->message, "cannot write %s: %s", c->wr.path, strerror(errno));
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

const tq_pm snsColfilPm = {
    .version = TQ_PM_VERSION,
    .name = "colfil",
    .description = "collection files: EXTRACTOR (args: FILE; full:FILE reads every block) and CONSUMER (args: write:FILE or all:FILE)",
    .init = colInit,
    .call = colCall,
    .extract = snsReplayExtract,
    .record = colRecord,
    .lost = colLost,
};
