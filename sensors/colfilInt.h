/*
** colfilInt.h - collection files inside sensors/: the encoding helpers
** and the reader that colfil.c (the PM, the writer) and colread.c (the
** reader of every format version) share.  The format is described at the
** top of colfil.c.
*/
#ifndef COLFILINT_H
#define COLFILINT_H

#include <stdio.h>

#include "sensorsInt.h"

#define COL_MAGIC "TQMONCOL"
#define COL_VERSION 4u
#define COL_BLOCK 65536          /* formats 1, 2: a block is written once it holds this much */
#define COL_SBLOCK (256 * 1024)  /* format 3: a group is written once a stream's block holds this much */
#define COL_GROUP (1024 * 1024)  /* format 3: ... or its blocks hold this much */
#define COL_NPART 16             /* format 3: streams per relation, by flag entity */
#define COL_SUMMARY_MAX 64       /* format 3: entities a block lists at most (more: none listed) */
enum { CK_EVENT = 1, CK_BEGIN, CK_END, CK_WHOLE, CK_SAMPLE, CK_SYMBOL };

/* ================================================================ encoding */
typedef struct Out {
  unsigned char *b;
  size_t n, cap;
} Out;
static inline void outGrow(Out *o, size_t k) {
  if (o->n + k <= o->cap) return;
  o->cap = o->cap ? o->cap * 2 : 4096;
  while (o->n + k > o->cap) o->cap *= 2;
  o->b = tqRealloc(o->b, o->cap);
}
static inline void putByte(Out *o, unsigned v) {
  outGrow(o, 1);
  o->b[o->n++] = (unsigned char)v;
}
static inline void putVar(Out *o, uint64_t v) {
  outGrow(o, 10);
  while (v >= 0x80) {
    o->b[o->n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  o->b[o->n++] = (unsigned char)v;
}
static inline void putZig(Out *o, int64_t v) { putVar(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
static inline void putRaw(Out *o, const void *p, size_t k) {
  outGrow(o, k);
  memcpy(o->b + o->n, p, k);
  o->n += k;
}
static inline void putU32(Out *o, uint32_t v) { putRaw(o, &v, 4); }

typedef struct In {
  const unsigned char *p, *e;
  int bad;
} In;
uint64_t snsGetVarSlow(In *in);
/* A varint; the common case (ten bytes left, so no bounds check per byte)
** first.  Past the end or overlong: 0 and in->bad. */
static inline uint64_t getVar(In *in) {
  const unsigned char *p = in->p;
  if (in->e - p < 10) return snsGetVarSlow(in);
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
static inline int64_t getZig(In *in) {
  uint64_t v = getVar(in);
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
static inline uint32_t getU32(In *in) {
  uint32_t v = 0;
  if (in->e - in->p < 4) in->bad = 1;
  else memcpy(&v, in->p, 4), in->p += 4;
  return v;
}
char *snsGetStr(In *in); /* a length and bytes, as a new string ("" when bad) */
uint32_t snsCrc32(const void *data, size_t n); /* zlib's CRC-32 (format 1) */

/* ================================================================ reading */

/* An open interval whose END has not come (its begin's values). */
typedef struct OpenRec {
  int64_t id;           /* its file interval id (format 3: within its stream) */
  TqTime from;
  int rel;
  int frel;             /* its file relation: an END must be of the same */
  int nvals;
  struct OpenRec *next; /* in the free list of its size */
  int64_t vals[];
} OpenRec;

/* Format 4: a loss in a group's directory. */
typedef struct ColLoss {
  int rel;             /* program relation id (0: not known; -1: not declared by the program) */
  int spans;
  int64_t entity;      /* engine symbol, or TQ_PM_ENTITY_UNKNOWN */
  TqTime from, to;
  int64_t count;
} ColLoss;

/* A file relation as the values decoder needs it (no pointer chasing). */
typedef struct FileRel {
  const AlgRel *rel;   /* the program's, NULL when it does not declare it */
  int id;              /* program relation id */
  int nattr;
  int isEvent;         /* the file's kind: EVENT records, or BEGIN/END/WHOLE */
  int sumAttr;         /* format 3: the attribute its streams and summaries go by, -1: none */
  int needAttr;        /* the program's flag attribute (its entity for an entity relation), -1: none */
  int need;            /* RT_NEED_* for this run (-1: not asked yet) */
  TqTime period;       /* sampled: only intervals holding a multiple are needed (0: all; -1: not asked) */
  uint8_t *needEnt;    /* RT_NEED_SOME: by engine symbol, 0 not asked, 1 no, 2 yes */
  int64_t nneedEnt;
  int alive;           /* format 3: an entity relation needed only for whether its
                       ** entities exist (Reader.aliveOnly; -1: not asked) */
  int32_t *aliveN;     /* ... its intervals open per entity (engine symbol), as read */
  int64_t naliveN;
  unsigned char kind[TQ_MAX_ATTRS];
  int32_t nenum[TQ_MAX_ATTRS]; /* TY_ENUM: how many values (the file's) */
  int32_t *emap[TQ_MAX_ATTRS]; /* TY_ENUM: file value -> program value, by name (NULL: the same) */
} FileRel;

/* Format 3: one stream (a relation's records of one partition). */
typedef struct RStream {
  int64_t begins;      /* BEGINs so far (read or skipped): the next one's id */
  OpenRec **ring;      /* open intervals by id & (cring - 1) */
  int64_t cring;
} RStream;

/* Format 3: a block of the group being read. */
typedef struct RBlock {
  int frel, part;      /* its stream */
  int64_t nrec, nbegin, nwhole;
  TqTime first, last;
  uint32_t len, crc;
  size_t off;          /* its payload's offset in the file */
  int nent;            /* entities listed (COL_SUMMARY_MAX + 1: not listed) */
  const unsigned char *ents; /* their varints in the directory */
  int read;            /* needed: its payload is in buf */
  unsigned char *buf;  /* payload */
  size_t cbuf;
  In cur;              /* decoding position */
  TqTime t;            /* time of the next record (peeked) */
  int kind;            /* its kind */
  const unsigned char *at; /* its start (for messages) */
  int64_t done, begun; /* records and BEGINs decoded */
  int64_t begin0;      /* the stream's BEGINs before the block (the first one's id) */
  struct Kept *kept;   /* sampled: the records a sample can see, in order (NULL: every record) */
  int64_t nkept, ckept, ki; /* how many, room, the next one */
  int64_t nbAt;        /* the stream's BEGINs in the block before the record taken */
} RBlock;

/* A record of a block that is read (the others are never looked at again). */
typedef struct Kept {
  uint32_t at, off;    /* its start and its values, in the payload */
  int32_t kind;
  int32_t nb;          /* BEGINs of the block before it */
  TqTime t;            /* its time */
} Kept;

typedef struct Reader {
  FILE *f;             /* read a block (format 3: a group) at a time */
  int ownF;            /* f is the reader's: closed with it */
  const unsigned char *head; /* bytes of the file read ahead (its format's sniffing), taken first */
  size_t nhead, headAt;
  unsigned char *blk;  /* the block being read (formats 1, 2) */
  size_t cblk;
  size_t len;          /* the file's size when known (regular file), else 0 */
  uint32_t version;    /* of its format */
  int rangeBad;        /* the range fields failed their checksum (1) or are out of range (2) */
  int ranged;          /* the header's range holds: every record time lies in it */
  int wholeOk;         /* its WHOLE records were announced (read ahead) */
  size_t off;          /* next block (format 3: group) */
  unsigned char *hdr;  /* the header (catalog) and its checksum */
  const char *path;
  uint32_t flags;
  TqTime first, last;
  int64_t records;     /* as the header says (a file closed properly) */
  int64_t nread;       /* records read (format 3: in the groups read, skipped or not) */
  int nrel;
  FileRel *rels;       /* by file relation */
  int64_t *symMap;     /* file symbol -> engine symbol */
  int64_t nsym, csym;
  OpenRec **ivs;       /* formats 1, 2: the last IV_WINDOW begins, by id % IV_WINDOW */
  TqMap oldIvs;        /* id + 2 -> OpenRec* (format 3: by stream and id): open ones moved aside */
  OpenRec *freeRec[TQ_MAX_ATTRS + 1]; /* ended ones, by number of values, for reuse */
  int64_t nbegin;
  TqTime lastT;
  In cur;              /* the block being read (formats 1, 2) */
  int inBlock;
  int firstRec;        /* the next record is the block's first (absolute time) */
  size_t blockOff;
  int64_t vals[64];
  char err[256];
  /* format 3 */
  RStream *streams;    /* by (file relation - 1) * COL_NPART + part */
  unsigned char *dir;  /* the group's directory and symbols */
  size_t cdir;
  size_t dirOff;       /* its offset */
  RBlock *gb;          /* the group's blocks */
  int ngb, cgb;
  __extension__ unsigned __int128 *key; /* per block of the group: the time of its next record
                       ** (order-preserving, unsigned) and the block's index, as
                       ** one number (blocks with no record left: time all ones,
                       ** index + ngb); apart from RBlock, a few cache lines
                       ** each: a record's step compares keys only */
  int *tree;           /* loser tree over the blocks by key (colread.c): tree[0]
                       ** the next block, tree[1..ngb) the loser of each match,
                       ** 3 ngb ints (the rest: room to build it) */
  int nheap;           /* blocks with records left */
  TqTime groupLast;    /* the last time of the groups before */
  TqTime firstSeen;    /* the first time read: the first group's directory's,
                       ** or the first record's (formats 1, 2); TQ_BEGINNING
                       ** until then */
  int64_t nwhole;      /* WHOLE records read (their identities) */
  int scan;            /* snsReaderScan: only blocks with WHOLE records, no intervals kept */
  int only;            /* snsReaderValues: the relation (id) whose blocks alone are read (0: all) */
  int64_t blocksTaken, bytesTaken; /* format 3: blocks read and their bytes, with the directories */
  /* what the operation needs (NULL: everything) */
  int (*need)(void *ctx, int rel, int64_t entity);
  TqTime (*period)(void *ctx, int rel); /* RtNetSamplePeriod (NULL: 0) */
  int (*aliveOnly)(void *ctx, int rel); /* enAliveOnly (NULL: 0) */
  void *needCtx;
  int nskip;           /* format 3: records the last step passed over (1, or 2: an
                       ** entity's end and begin at one instant, FileRel.alive) */
  int64_t *begAt;      /* blockKeep: the BEGINs of the block (their Kept entries) */
  size_t cbegAt;
  RtNet *net;          /* statistics go there (NULL: none) */
  int callerCounts;    /* the caller counts the records a step skips (a
                       ** decoding thread, replay.c), not net */
  /* format 4: each loss of a group read (NULL: not told), with the
  ** program's relation id (0: not known) and an engine symbol (or
  ** TQ_PM_ENTITY_UNKNOWN); a loss of a relation the program does not
  ** declare is not told */
  void (*lost)(void *ctx, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans);
  void *lostCtx;
  struct ColLoss *loss; /* the group's losses, checked, told once it is read whole */
  int nloss, closs;
} Reader;

/* Opens path and maps its catalog onto prog's: 0, or -1 with r->err. */
int snsReaderOpen(Reader *r, const char *path, const CpProgram *prog);
/* The same on f, open already and kept by the caller (path names it in
** messages), whose first nhead bytes were read already into head (kept by
** the caller until the reader is closed). */
int snsReaderOpenFile(Reader *r, FILE *f, const char *path, const unsigned char *head, size_t nhead,
                      const CpProgram *prog);
void snsReaderClose(Reader *r);
/* The next record: 1 (skip set when the program does not want it), 0 at
** the end, -1 damaged (r->err: "FILE:OFFSET: message"). */
int snsReaderNext(Reader *r, tq_record *rec, int *skip);
/* snsReaderNext of format 3 (version >= 3) in its two steps, for a caller
** that decodes in a thread of its own: snsReaderGroup reads the next group
** that holds a record to take (the file's I/O, its symbols and losses,
** and the operation's needs of its blocks): 1, 0 at the end, -1 damaged;
** snsReaderTake takes the loaded group's next record: 1 (skip as above),
** 0 when the group is taken whole, -1 damaged.  A step touches only the
** reader, and asks the operation's needs (need) of the entities it meets. */
int snsReaderGroup(Reader *r);
int snsReaderTake(Reader *r, tq_record *rec, int *skip);
/* Reports r->err as "FILE[:OFFSET]: error: message" + suffix. */
void snsReaderReport(TqDiag *d, const Reader *r, const char *suffix);
/* Calls f for each interval still open (after the last record). */
void snsReaderOpenIvs(Reader *r, void (*f)(void *ctx, const OpenRec *o), void *ctx);
/* Reads r ahead (a second reader of the file, used up): its range and
** record count (format 3: from the group directories alone) and f for
** each WHOLE record a replay reads (its relation and begin; format 3 reads
** only the blocks that hold some).  Returns 1, or 0 when it found no
** record (damage ends the scan quietly: the replay reports it). */
int snsReaderScan(Reader *r, TqTime *first, TqTime *last, int64_t *records,
                  void (*f)(void *ctx, int rel, TqTime from), void *ctx);
/* Reads r (format 3, a second reader of the file, used up) for the records
** of relation rel (its id) the operation needs (need), and calls f with
** the values of each (an END's are its BEGIN's: not given again); only
** that relation's blocks are read.  1, 0 when the format is older, -1
** damaged (r->err). */
int snsReaderValues(Reader *r, int rel, void (*f)(void *ctx, const int64_t *vals), void *ctx);

#endif
