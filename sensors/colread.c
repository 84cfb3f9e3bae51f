/*
** colread.c - reading collection files (the format is at the top of
** colfil.c): formats 1 and 2 block by block in file order; format 3 group
** by group, reading only the blocks whose relation and entities the
** operation needs (Reader.need) and merging them in time order.
**
** Memory is bounded by what the file holds at once, not by its length:
** formats 1 and 2 one block, format 3 one group; the open intervals (their
** begins' values, which an END takes) in a ring per stream (formats 1 and
** 2: one ring of the last IV_WINDOW begins), the older ones in a map.
**
** Every check reports FILE:OFFSET: a damaged block stops the reading there,
** and what came before it is used.  Format 3 decodes only the blocks it
** reads, so damage in a skipped block goes unseen (its checksum is checked
** when a read needs it).
**
** Why one file of about 1,050 lines: both formats' block decoders share
** the record decoder and the interval rings, and format 3's group merge is
** the only caller of the block reader's state; splitting them would expose
** the reader's state (Reader) to a second file for no reader's gain.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "colfilInt.h"

#define IV_WINDOW 65536  /* formats 1, 2: begins kept in the ring */
#define RING_MAX 65536   /* format 3: most slots of a stream's ring */

uint64_t snsGetVarSlow(In *in) {
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

char *snsGetStr(In *in) {
  uint64_t k = getVar(in);
  if (in->bad || k > (uint64_t)(in->e - in->p)) {
    in->bad = 1;
    return tqStrdup("");
  }
  char *s = tqStrndup((const char *)in->p, (size_t)k);
  in->p += k;
  return s;
}

void snsReaderReport(TqDiag *d, const Reader *r, const char *suffix) {
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

/* ================================================================ opening */

int snsReaderOpen(Reader *r, const char *path, const CpProgram *prog) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    memset(r, 0, sizeof *r);
    r->path = path;
    return readerFail(r, "%s: cannot open: %s", path, strerror(errno));
  }
  int rc = snsReaderOpenFile(r, f, path, NULL, 0, prog);
  r->ownF = 1;
  return rc;
}

/* Reads n bytes of the header: the bytes read ahead first (the format's
** sniffing), then the file's.  Returns how many it read. */
static size_t headRead(Reader *r, void *buf, size_t n) {
  size_t k = r->nhead - r->headAt < n ? r->nhead - r->headAt : n;
  TQ_MEMCPY(buf, r->head + r->headAt, k);
  r->headAt += k;
  return k + (n > k ? fread((unsigned char *)buf + k, 1, n - k, r->f) : 0);
}

int snsReaderOpenFile(Reader *r, FILE *f, const char *path, const unsigned char *head, size_t nhead,
                      const CpProgram *prog) {
  memset(r, 0, sizeof *r);
  r->path = path;
  r->lastT = TQ_BEGINNING; /* (no record yet: any time is after it) */
  r->groupLast = TQ_BEGINNING;
  r->firstSeen = TQ_BEGINNING;
  r->f = f;
  r->head = head;
  r->nhead = nhead;
  struct stat st;
  if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode)) r->len = (size_t)st.st_size;
  unsigned char fix[48];
  size_t got = headRead(r, fix, 12);
  if (got < 12 || memcmp(fix, COL_MAGIC, 8)) return readerFail(r, "%s: not a tqmon collection file", path);
  uint32_t version;
  memcpy(&version, fix + 8, 4);
  if (version > COL_VERSION) {
    /* every version from 2 on begins like 2 (its first 44 bytes): a
    ** version whose range checksum holds is newer, one whose does not is
    ** a damaged version field */
    uint32_t sum;
    got += headRead(r, fix + 12, 32);
    memcpy(&sum, fix + 40, 4);
    if (got < 44 || snsCrc32c(fix + 8, 32) != sum)
      return readerFail(r, "%s:8: corrupt header (format version %u, and its checksum does not match)", path, version);
    return readerFail(r, "%s: collection file format version %u is newer than this tqmon reads (%u); use a newer tqmon",
                      path, version, COL_VERSION);
  }
  if (version == 0) return readerFail(r, "%s:8: corrupt header (format version 0)", path);
  r->version = version;
  size_t hoff = version == 1 ? 44 : 48; /* the header */
  got += headRead(r, fix + 12, hoff - 12);
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
  if (headRead(r, r->hdr, (size_t)hlen + tail) != (size_t)hlen + tail) return readerFail(r, "%s:%zu: truncated header", path, hoff);
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
  for (int i = 0; i < 4; i++) free(snsGetStr(&h));
  for (int i = 0; i < 4; i++) getVar(&h);
  uint64_t nrel = getVar(&h);
  if (h.bad || nrel > 100000) return readerFail(r, "%s:%zu: corrupt header", path, hoff);
  r->nrel = (int)nrel;
  r->rels = tqCalloc(nrel + 1, sizeof(FileRel));
  for (uint64_t i = 0; i < nrel && !h.bad; i++) {
    char *name = snsGetStr(&h);
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
    fr->need = -1;
    fr->period = -1;
    fr->alive = -1;
    char why[160] = "";
    for (uint64_t k = 0; k < na && !h.bad; k++) {
      char *an = snsGetStr(&h);
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
          char *vn = snsGetStr(&h);
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
    /* format 3: the attribute its streams go by (an entity's) */
    fr->sumAttr = -1;
    if (version >= 3) {
      uint64_t sa = getVar(&h);
      if (sa > (uint64_t)fr->nattr || (sa && fr->kind[sa - 1] != TY_ENTITY)) h.bad = 1;
      fr->sumAttr = h.bad ? -1 : (int)sa - 1;
    }
    if (pr && !ok && !h.bad) {
      int rc = readerFail(r, "%s: relation %s of the recording does not match the program's declaration%s", path, name, why);
      free(name);
      return rc;
    }
    fr->rel = ok ? pr : NULL;
    fr->id = ok ? pr->id : 0;
    fr->needAttr = !ok ? -1 : pr->entity ? 0 : pr->flagAttr;
    free(name);
  }
  if (h.bad) return readerFail(r, "%s:%zu: corrupt header", path, hoff);
  r->off = hoff + hlen + tail;
  if (version >= 3) r->streams = tqCalloc((size_t)nrel * COL_NPART + 1, sizeof(RStream));
  return 0;
}

void snsReaderClose(Reader *r) {
  if (r->f && r->ownF) fclose(r->f);
  free(r->hdr);
  free(r->blk);
  for (int i = 0; r->rels && i <= r->nrel; i++) {
    for (int k = 0; k < TQ_MAX_ATTRS; k++) free(r->rels[i].emap[k]);
    free(r->rels[i].needEnt);
    free(r->rels[i].aliveN);
  }
  free(r->rels);
  free(r->symMap);
  if (r->ivs)
    for (int64_t i = 0; i < IV_WINDOW; i++) free(r->ivs[i]);
  free(r->ivs);
  for (int64_t i = 0; r->streams && i < (int64_t)r->nrel * COL_NPART; i++) {
    RStream *s = &r->streams[i];
    for (int64_t k = 0; k < s->cring; k++) free(s->ring[k]);
    free(s->ring);
  }
  free(r->streams);
  for (uint32_t i = 0; i < r->oldIvs.cap; i++)
    if (r->oldIvs.slot[i].key > 1) free(r->oldIvs.slot[i].val);
  tqMapFree(&r->oldIvs);
  for (int k = 0; k <= TQ_MAX_ATTRS; k++)
    while (r->freeRec[k]) {
      OpenRec *o = r->freeRec[k];
      r->freeRec[k] = o->next;
      free(o);
    }
  for (int i = 0; i < r->cgb; i++) {
    free(r->gb[i].buf);
    free(r->gb[i].kept);
  }
  free(r->begAt);
  free(r->gb);
  free(r->key);
  free(r->tree);
  free(r->dir);
  free(r->loss);
}

void snsReaderOpenIvs(Reader *r, void (*f)(void *ctx, const OpenRec *o), void *ctx) {
  for (int64_t i = 0; r->ivs && i < IV_WINDOW; i++)
    if (r->ivs[i]) f(ctx, r->ivs[i]);
  for (int64_t i = 0; r->streams && i < (int64_t)r->nrel * COL_NPART; i++)
    for (int64_t k = 0; k < r->streams[i].cring; k++)
      if (r->streams[i].ring[k]) f(ctx, r->streams[i].ring[k]);
  for (uint32_t i = 0; i < r->oldIvs.cap; i++)
    if (r->oldIvs.slot[i].key > 1) f(ctx, r->oldIvs.slot[i].val);
}

/* ================================================================ values */

static int getVals(Reader *r, In *in, const FileRel *fr, int64_t *v) {
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

static void defineSym(Reader *r, const char *s) {
  if (r->nsym + 1 >= r->csym) {
    r->csym = r->csym ? 2 * r->csym : 1024;
    r->symMap = tqRealloc(r->symMap, sizeof(int64_t) * (size_t)r->csym);
  }
  r->symMap[++r->nsym] = tqSymZ(s);
}

static OpenRec *newOpen(Reader *r, const FileRel *fr, int frel, TqTime from, const int64_t *v) {
  int na = fr->nattr;
  OpenRec *o = r->freeRec[na];
  if (o) r->freeRec[na] = o->next;
  else o = tqMalloc(sizeof(OpenRec) + sizeof(int64_t) * (size_t)(na ? na : 1));
  o->nvals = na;
  o->from = from;
  o->rel = fr->id;
  o->frel = frel;
  for (int k = 0; k < na; k++) o->vals[k] = v[k]; /* a few: no call */
  return o;
}
static void freeOpen(Reader *r, OpenRec *o) {
  o->next = r->freeRec[o->nvals];
  r->freeRec[o->nvals] = o;
}

/* A record of fr at t: its relation, time and values (into r->vals). */
static void recStart(Reader *r, const FileRel *fr, TqTime t, tq_record *rec) {
  rec->rel = fr->id;
  rec->t = t;
  rec->nvals = fr->nattr;
  rec->vals = r->vals;
}

/* The rest of an EVENT, SAMPLE or WHOLE record of fr at time t into rec
** (recStart done; a WHOLE record's identity is wholeId); at is its offset
** in the file, for messages.  0, or -1 with r->err. */
static int takeSimple(Reader *r, In *in, const FileRel *fr, int kind, TqTime t, uint64_t wholeId, size_t at,
                      tq_record *rec) {
  int64_t *v = r->vals;
  if (kind != CK_WHOLE) {
    if (getVals(r, in, fr, v)) return readerFail(r, "%s:%zu: corrupt values", r->path, at);
    rec->kind = kind == CK_EVENT ? TQ_REC_EVENT : TQ_REC_SAMPLE;
    rec->from = rec->to = 0;
    rec->id = 0;
    return 0;
  }
  if (!r->wholeOk)
    return readerFail(r, "%s:%zu: a whole interval, which %s", r->path, at,
                      r->len ? "the file's header says it does not hold (corrupt)"
                             : "a stream cannot announce before its begin (replay the file itself)");
  uint64_t d = getVar(in);
  if (d >= (uint64_t)t - (uint64_t)TQ_BEGINNING)
    return readerFail(r, "%s:%zu: corrupt record (an interval beginning before the beginning)", r->path, at);
  if (getVals(r, in, fr, v)) return readerFail(r, "%s:%zu: corrupt values", r->path, at);
  rec->kind = TQ_REC_WHOLE;
  rec->from = t - (TqTime)d;
  rec->to = t;
  rec->id = wholeId;
  return 0;
}

/* ================================================================ formats 1 and 2 */

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
  uint32_t sum = r->version == 1 ? snsCrc32(r->blk, len) : snsCrc32c(r->blk, len);
  if (sum != crc) return readerFail(r, "%s:%zu: corrupt block (checksum mismatch)", r->path, r->off);
  r->blockOff = r->off;
  r->cur = (In){r->blk, r->blk + len, 0};
  r->off += 8 + (size_t)len;
  r->inBlock = 1;
  r->firstRec = 1;
  return 1;
}

/* Decodes one record of format 1 or 2 into *rec. */
static int readRecord12(Reader *r, tq_record *rec, int *skip) {
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
    if (r->firstSeen == TQ_BEGINNING) r->firstSeen = t;
    if (kind == CK_SYMBOL) {
      char *s = snsGetStr(&r->cur);
      if (r->cur.bad) {
        free(s);
        return readerFail(r, "%s:%zu: truncated symbol", r->path, AT);
      }
      defineSym(r, s);
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
    recStart(r, fr, t, rec);
    if ((kind == CK_EVENT || kind == CK_SAMPLE || kind == CK_WHOLE) &&
        takeSimple(r, &r->cur, fr, kind, t, (uint64_t)1 << 62 | (uint64_t)r->nread, AT, rec))
      return -1;
    switch (kind) {
      case CK_BEGIN: {
        if (getVals(r, &r->cur, fr, v)) return readerFail(r, "%s:%zu: corrupt values", r->path, AT);
        if (!r->ivs) r->ivs = tqCalloc(IV_WINDOW, sizeof(OpenRec *));
        OpenRec *o = newOpen(r, fr, (int)frel, t, v);
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
        freeOpen(r, o);
        if (back <= IV_WINDOW) r->ivs[id % IV_WINDOW] = NULL;
        break;
      }
      default: break; /* (taken above) */
    }
#undef AT
    r->nread++;
    if (!fr->rel) *skip = 1;
    return 1;
  }
}

/* ================================================================ format 3: what is needed */

/* Is entity e (an engine symbol) of fr needed? (asked once per entity) */
static int entNeeded(Reader *r, FileRel *fr, int64_t e) {
  if (e < 0 || e > (int64_t)1 << 40) return r->need(r->needCtx, fr->id, e);
  if (e >= fr->nneedEnt) {
    int64_t nc = fr->nneedEnt ? 2 * fr->nneedEnt : 256;
    while (nc <= e) nc *= 2;
    fr->needEnt = tqRealloc(fr->needEnt, (size_t)nc);
    memset(fr->needEnt + fr->nneedEnt, 0, (size_t)(nc - fr->nneedEnt));
    fr->nneedEnt = nc;
  }
  if (!fr->needEnt[e]) fr->needEnt[e] = r->need(r->needCtx, fr->id, e) ? 2 : 1;
  return fr->needEnt[e] == 2;
}

/* RT_NEED_* of a file relation for this read. */
static int relNeed(Reader *r, FileRel *fr) {
  if (!fr->rel) return RT_NEED_NONE;
  if (!r->need) return RT_NEED_ALL;
  if (fr->need < 0) fr->need = r->need(r->needCtx, fr->id, RT_NEED_ANY);
  return fr->need;
}

/* Must block b be read: its relation is needed, and (when it lists its
** entities by the attribute the operation asks about) one of them is? */
static int blockNeeded(Reader *r, RBlock *b, const unsigned char *dirEnd) {
  FileRel *fr = &r->rels[b->frel];
  if (r->scan && !b->nwhole) return 0;
  if (r->only && (!fr->rel || fr->id != r->only)) return 0;
  int n = relNeed(r, fr);
  if (n != RT_NEED_SOME) return n == RT_NEED_ALL;
  if (fr->sumAttr != fr->needAttr || b->nent > COL_SUMMARY_MAX) return 1;
  In e = {b->ents, dirEnd, 0};
  uint64_t s = 0;
  for (int k = 0; k < b->nent; k++) {
    s += getVar(&e);
    if (e.bad || s == 0 || s > (uint64_t)r->nsym) return 1; /* (checked when the directory was read) */
    if (entNeeded(r, fr, r->symMap[s])) return 1;
  }
  return 0;
}

/* ================================================================ format 3: groups */

/* The merge of a group's blocks: a loser tree (one comparison per level
** when the block just taken moves on; a binary heap takes two), its
** matches decided without branches (which block wins is the data's
** coin toss). */
__extension__ typedef unsigned __int128 RKey;
static inline RKey keyOf(TqTime t, int b) { return (RKey)((uint64_t)t ^ 0x8000000000000000ULL) << 64 | (uint64_t)b; }
static inline RKey keyDone(const Reader *r, int b) { return (RKey)UINT64_MAX << 64 | (uint64_t)(r->ngb + b); }
static inline int keyLess(const Reader *r, int a, int b) { return r->key[a] < r->key[b]; }
/* Block b's key changed: its matches up to the root are played again. */
static void treeReplay(Reader *r, int b) {
  int *tr = r->tree, w = b;
  RKey kw = r->key[b];
  for (int node = (r->ngb + b) / 2; node >= 1; node /= 2) {
    int l = tr[node];
    RKey kl = r->key[l];
    int sw = kl < kw;
    tr[node] = sw ? w : l;
    w = sw ? l : w;
    kw = sw ? kl : kw;
  }
  tr[0] = w;
}
/* Plays every match (node n + i is block i's leaf, node k's children are
** 2k and 2k + 1; tree[n..3n) holds each node's winner while it is built). */
static void treeBuild(Reader *r) {
  int n = r->ngb;
  if (n == 0) return; /* (a group of losses only: no tree yet, perhaps) */
  int *tr = r->tree, *win = r->tree + n;
  for (int i = 0; i < n; i++) win[n + i] = i;
  for (int node = n - 1; node >= 1; node--) {
    int a = win[2 * node], b = win[2 * node + 1];
    int aw = keyLess(r, a, b);
    tr[node] = aw ? b : a;
    win[node] = aw ? a : b;
  }
  tr[0] = n == 1 ? 0 : win[1];
}

/* Reads n bytes at the reader's position into buf, or skips them (buf
** NULL: a seek in a file, a read in a pipe).  0, or -1 at a short file. */
static int take(Reader *r, unsigned char *buf, size_t n) {
  if (buf) {
    if (fread(buf, 1, n, r->f) != n) return -1;
  } else if (r->len) {
    /* (a seek goes past the end quietly: a block cut off is found here) */
    if (n > r->len || r->off > r->len - n || fseek(r->f, (long)n, SEEK_CUR)) return -1;
  } else {
    unsigned char junk[4096];
    while (n) {
      size_t k = n < sizeof junk ? n : sizeof junk;
      if (fread(junk, 1, k, r->f) != k) return -1;
      n -= k;
    }
  }
  r->off += n;
  return 0;
}

/* Peeks at the next record of block b: its kind and time (0: none left;
** a damaged one is kind 0, reported when its turn comes). */
static int blockPeek(RBlock *b) {
  if (b->nkept >= 0) {
    if (b->ki >= b->nkept) return 0;
    const Kept *k = &b->kept[b->ki++];
    b->at = b->buf + k->at;
    b->kind = k->kind;
    b->t = k->t;
    b->nbAt = k->nb;
    b->cur.p = b->buf + k->off;
    return 1;
  }
  if (b->cur.p >= b->cur.e) return 0;
  b->at = b->cur.p;
  b->kind = *b->cur.p++;
  uint64_t d = getVar(&b->cur);
  if (b->cur.bad || d > (uint64_t)(b->last - b->t)) b->kind = 0; /* (t stays: it sorts where it was) */
  else b->t += (TqTime)d;
  return 1;
}

/* Skips the values of a record of fr (a varint: to its last byte). */
static void skipVals(In *in, const FileRel *fr) {
  const unsigned char *p = in->p, *e = in->e;
  for (int i = 0; i < fr->nattr; i++) {
    if (fr->kind[i] == TY_FLOAT) {
      p += 8;
      if (p > e) break;
      continue;
    }
    const unsigned char *q = p;
    while (p < e && (*p & 0x80)) p++;
    if (p >= e || p - q >= 10) {
      p = e + 1; /* (bad) */
      break;
    }
    p++;
  }
  if (p > e) in->bad = 1;
  else in->p = p;
}

/* A sampled relation whose queries sample it only at multiples of P: the
** intervals that begin and end in block b without holding one are seen by
** no sample, and neither of their records is read again.  A first look
** through the block lists the others (b->kept); damage is left for the
** reading to report (the block is then read record by record). */
static void blockKeep(Reader *r, RBlock *b, TqTime P) {
  if (b->nrec > b->ckept) {
    b->ckept = b->nrec;
    free(b->kept);
    b->kept = tqMalloc(sizeof(Kept) * (size_t)b->ckept);
  }
  if ((size_t)b->nbegin > r->cbegAt) {
    r->cbegAt = (size_t)b->nbegin;
    free(r->begAt);
    r->begAt = tqMalloc(sizeof(int64_t) * r->cbegAt);
  }
  const FileRel *fr = &r->rels[b->frel];
  In in = b->cur;
  TqTime t = b->first;
  int64_t nb = 0, n = 0;
  while (in.p < in.e && !in.bad && n < b->nrec) {
    Kept *k = &b->kept[n];
    k->at = (uint32_t)(in.p - b->buf);
    int kind = *in.p++;
    uint64_t d = getVar(&in);
    if (in.bad || d > (uint64_t)(b->last - t)) break;
    t += (TqTime)d;
    k->off = (uint32_t)(in.p - b->buf);
    k->kind = kind;
    k->nb = (int32_t)nb;
    k->t = t;
    switch (kind) {
      case CK_EVENT:
      case CK_SAMPLE: skipVals(&in, fr); break;
      case CK_BEGIN:
        skipVals(&in, fr);
        if (nb < b->nbegin) r->begAt[nb] = n;
        nb++;
        break;
      case CK_END: {
        int64_t back = (int64_t)getVar(&in), j = nb - back; /* its BEGIN, when in the block */
        getVar(&in);
        if (j >= 0 && j < nb && nb <= b->nbegin) {
          Kept *bk = &b->kept[r->begAt[j]];
          if (bk->kind == CK_BEGIN && tqTickAtOrAfter(bk->t, P) >= t) bk->kind = k->kind = -CK_BEGIN; /* neither */
        }
        break;
      }
      case CK_WHOLE:
        getVar(&in);
        skipVals(&in, fr);
        break;
      default: in.bad = 1;
    }
    n++;
  }
  if (in.bad || in.p != in.e || n != b->nrec || nb != b->nbegin || b->nbegin > INT32_MAX) {
    b->nkept = -1; /* read record by record */
    return;
  }
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (b->kept[i].kind > 0) b->kept[m++] = b->kept[i];
  b->nkept = m;
  b->ki = 0;
}

/* Format 4: the losses at the end of a group's directory (at d), checked,
** into r->loss.  0, or -1 with r->err. */
static int groupLosses(Reader *r, In *d, size_t goff) {
  uint64_t n = getVar(d);
  if (d->bad || n > (uint64_t)(d->e - d->p)) /* (each takes bytes) */
    return readerFail(r, "%s:%zu: corrupt group directory (its losses)", r->path, goff);
  if ((int64_t)n > r->closs) {
    r->closs = (int)n;
    free(r->loss);
    r->loss = tqMalloc(sizeof(ColLoss) * n);
  }
  for (uint64_t i = 0; i < n; i++) {
    ColLoss *l = &r->loss[i];
    uint64_t frel = getVar(d), ent = getVar(d);
    TqTime from = getZig(d);
    uint64_t span = getVar(d), count = getVar(d);
    unsigned spans = d->p < d->e ? *d->p++ : 2;
    if (d->bad || frel > (uint64_t)r->nrel || ent > (uint64_t)r->nsym || from <= TQ_BEGINNING ||
        span >= (uint64_t)TQ_FOREVER - (uint64_t)from || count > (uint64_t)TQ_PM_LOST_MAX || spans > 1)
      return readerFail(r, "%s:%zu: corrupt group directory (loss %llu)", r->path, goff, (unsigned long long)i + 1);
    l->rel = frel == 0 ? 0 : r->rels[frel].rel ? r->rels[frel].id : -1;
    l->entity = ent ? r->symMap[ent] : TQ_PM_ENTITY_UNKNOWN;
    l->from = from;
    l->to = from + (TqTime)span;
    l->count = count ? (int64_t)count : TQ_PM_LOST_UNKNOWN; /* (0: how many is not known) */
    l->spans = (int)spans;
  }
  if (d->p != d->e) return readerFail(r, "%s:%zu: corrupt group directory (bytes after its losses)", r->path, goff);
  r->nloss = (int)n;
  return 0;
}

/* Reads the next group: its directory and symbols, then the blocks it
** needs.  1 a group, 0 the end of the file, -1 damaged. */
static int groupLoad(Reader *r) {
  size_t goff = r->off;
  unsigned char gh[8];
  size_t n = fread(gh, 1, 8, r->f);
  if (n == 0) return 0;
  if (n < 8) return readerFail(r, "%s:%zu: truncated group header", r->path, goff);
  uint32_t dlen, dcrc;
  memcpy(&dlen, gh, 4);
  memcpy(&dcrc, gh + 4, 4);
  r->off += 8;
  if ((r->len && (size_t)dlen > r->len - r->off) || dlen > (64u << 20))
    return readerFail(r, "%s:%zu: truncated group (%u directory bytes announced)", r->path, goff, dlen);
  if ((size_t)dlen + 1 > r->cdir) {
    r->cdir = (size_t)dlen + 1 > 2 * r->cdir ? (size_t)dlen + 1 : 2 * r->cdir;
    free(r->dir);
    r->dir = tqMalloc(r->cdir);
  }
  if (take(r, r->dir, dlen)) return readerFail(r, "%s:%zu: truncated group (%u directory bytes announced)", r->path, goff, dlen);
  if (snsCrc32c(r->dir, dlen) != dcrc) return readerFail(r, "%s:%zu: corrupt group directory (checksum mismatch)", r->path, goff);
  r->dirOff = goff;
  In d = {r->dir, r->dir + dlen, 0};
  /* the symbols it defines come right after the directory */
  uint64_t nsym = getVar(&d), slen = getVar(&d);
  uint32_t scrc = getU32(&d);
  if (d.bad || slen > (64u << 20) || (r->len && slen > r->len - r->off) || nsym > slen)
    return readerFail(r, "%s:%zu: corrupt group directory", r->path, goff);
  size_t soff = r->off;
  if (!r->blk || slen + 1 > r->cblk) {
    r->cblk = slen + 1 > 2 * r->cblk ? slen + 1 : 2 * r->cblk;
    free(r->blk);
    r->blk = tqMalloc(r->cblk);
  }
  if (take(r, r->blk, slen)) return readerFail(r, "%s:%zu: truncated group (symbols)", r->path, soff);
  if (snsCrc32c(r->blk, slen) != scrc) return readerFail(r, "%s:%zu: corrupt symbols (checksum mismatch)", r->path, soff);
  In sy = {r->blk, r->blk + slen, 0};
  for (uint64_t i = 0; i < nsym; i++) {
    char *s = snsGetStr(&sy);
    if (sy.bad) {
      free(s);
      return readerFail(r, "%s:%zu: corrupt symbols", r->path, soff);
    }
    defineSym(r, s);
    free(s);
  }
  /* the blocks */
  uint64_t nb = getVar(&d);
  if (d.bad || nb > (uint64_t)r->nrel * COL_NPART) return readerFail(r, "%s:%zu: corrupt group directory", r->path, goff);
  if ((int)nb > r->cgb) {
    r->gb = tqRealloc(r->gb, sizeof(RBlock) * nb);
    memset(r->gb + r->cgb, 0, sizeof(RBlock) * (nb - (size_t)r->cgb));
    r->cgb = (int)nb;
    r->key = tqRealloc(r->key, sizeof(RKey) * nb);
    r->tree = tqRealloc(r->tree, sizeof(int) * 3 * nb);
  }
  r->ngb = (int)nb;
  r->nheap = 0;
  int64_t key = -1;
  TqTime last = r->groupLast;
  for (int i = 0; i < r->ngb; i++) {
    RBlock *b = &r->gb[i];
    uint64_t frel = getVar(&d), part = getVar(&d);
    b->nrec = (int64_t)getVar(&d);
    b->nbegin = (int64_t)getVar(&d);
    b->nwhole = (int64_t)getVar(&d);
    b->first = getZig(&d);
    uint64_t span = getVar(&d);
    uint64_t len = getVar(&d);
    b->crc = getU32(&d);
    uint64_t nent = getVar(&d);
    b->ents = d.p;
    for (uint64_t k = 0; k < nent && k <= COL_SUMMARY_MAX && !d.bad; k++) {
      uint64_t s = getVar(&d);
      if (s == 0 && k > 0) d.bad = 1; /* ascending: a zero step repeats one */
      (void)s;
    }
    /* one block per stream, in stream order; times inside the file's
    ** span, not before the groups before; counts that fit the payload */
    if (d.bad || frel == 0 || frel > (uint64_t)r->nrel || part >= COL_NPART ||
        (int64_t)((frel - 1) * COL_NPART + part) <= key || b->nrec <= 0 || b->nrec > (int64_t)len ||
        b->nbegin < 0 || b->nbegin > b->nrec || b->nwhole < 0 || b->nwhole > b->nrec || nent > COL_SUMMARY_MAX + 1 ||
        b->first <= TQ_BEGINNING || span >= (uint64_t)TQ_FOREVER - (uint64_t)b->first || b->first < r->groupLast ||
        len > (64u << 20))
      return readerFail(r, "%s:%zu: corrupt group directory", r->path, goff);
    key = (int64_t)((frel - 1) * COL_NPART + part);
    b->frel = (int)frel;
    b->part = (int)part;
    b->last = b->first + (TqTime)span;
    b->len = (uint32_t)len;
    b->nent = (int)nent;
    if (b->last > last) last = b->last;
  }
  /* format 4: the losses told while the group was formed */
  r->nloss = 0;
  if (r->version >= 4 && groupLosses(r, &d, goff)) return -1;
  /* the entities a block lists are symbols of the file */
  for (int i = 0; i < r->ngb; i++) {
    RBlock *b = &r->gb[i];
    In e = {b->ents, d.e, 0};
    uint64_t s = 0;
    for (int k = 0; k < b->nent && k < COL_SUMMARY_MAX + 1 && b->nent <= COL_SUMMARY_MAX; k++) {
      s += getVar(&e);
      if (e.bad || s == 0 || s > (uint64_t)r->nsym) return readerFail(r, "%s:%zu: corrupt group directory (entity %llu)", r->path, goff, (unsigned long long)s);
    }
  }
  RtReadStats *st = r->net ? &r->net->read : NULL;
  r->bytesTaken += 8 + (int64_t)dlen + (int64_t)slen;
  if (st) {
    st->bytesRead += 8 + (int64_t)dlen + (int64_t)slen;
    st->blocks += r->ngb;
  }
  for (int i = 0; i < r->ngb; i++) {
    RBlock *b = &r->gb[i];
    r->key[i] = keyDone(r, i);
    size_t boff = r->off;
    b->off = boff;
    int want = blockNeeded(r, b, d.e);
    RStream *sm = &r->streams[(b->frel - 1) * COL_NPART + b->part];
    b->read = 0;
    r->nread += b->nrec;
    if (st) st->records += b->nrec;
    if (!want) {
      if (take(r, NULL, b->len)) return readerFail(r, "%s:%zu: truncated block (%u bytes announced)", r->path, boff, b->len);
      sm->begins += b->nbegin; /* their ids are taken */
      if (r->net && r->rels[b->frel].rel) r->net->sensor[r->rels[b->frel].id - 1].skipped += b->nrec;
      continue;
    }
    if (b->len > b->cbuf || !b->buf) {
      b->cbuf = b->len > 2 * b->cbuf ? b->len : 2 * b->cbuf;
      if (b->cbuf < 4096) b->cbuf = 4096;
      free(b->buf);
      b->buf = tqMalloc(b->cbuf);
    }
    if (take(r, b->buf, b->len)) return readerFail(r, "%s:%zu: truncated block (%u bytes announced)", r->path, boff, b->len);
    if (snsCrc32c(b->buf, b->len) != b->crc) return readerFail(r, "%s:%zu: corrupt block (checksum mismatch)", r->path, boff);
    r->blocksTaken++;
    r->bytesTaken += b->len;
    if (st) {
      st->blocksRead++;
      st->bytesRead += b->len;
      st->recordsRead += b->nrec;
    }
    b->read = 1;
    b->cur = (In){b->buf, b->buf + b->len, 0};
    b->t = b->first;
    b->done = b->begun = 0;
    b->begin0 = sm->begins;
    FileRel *fr = &r->rels[b->frel];
    if (fr->period < 0) fr->period = r->period && r->need ? r->period(r->needCtx, fr->id) : 0;
    if (fr->alive < 0) fr->alive = r->aliveOnly && r->need && !r->scan && fr->rel->entity ? r->aliveOnly(r->needCtx, fr->id) : 0;
    b->nkept = -1;
    if (fr->period > 0 && b->nbegin > 0 && !r->scan) {
      blockKeep(r, b, fr->period);
      if (r->net && b->nkept >= 0) r->net->sensor[fr->id - 1].skipped += b->nrec - b->nkept;
    }
    if (blockPeek(b)) {
      r->key[i] = keyOf(b->t, i);
      r->nheap++;
    } else if (b->nkept == 0) {
      /* every record left out (intervals no sample sees): no record of
      ** the block is taken, yet its begins' ids are taken, as a block not
      ** read (the stream's later ENDs count back over them) */
      sm->begins += b->nbegin;
    }
  }
  /* (blocks begin at or after the groups before: the first group's
  ** earliest is the file's first time, needed or not) */
  if (r->firstSeen == TQ_BEGINNING && r->ngb) {
    TqTime f = r->gb[0].first;
    for (int i = 1; i < r->ngb; i++)
      if (r->gb[i].first < f) f = r->gb[i].first;
    r->firstSeen = f;
  }
  treeBuild(r);
  r->groupLast = last;
  /* the group is read: its losses are told (before its records) */
  for (int i = 0; r->lost && i < r->nloss; i++) {
    const ColLoss *l = &r->loss[i];
    if (l->rel >= 0) r->lost(r->lostCtx, l->rel, l->entity, l->from, l->to, l->count, l->spans);
  }
  return 1;
}

/* The id the engine knows an interval of a stream by (format 3). */
static uint64_t ivId(int part, int64_t id) { return (uint64_t)part << 56 | (uint64_t)id; }
static uint64_t oldKey(int64_t stream, int64_t id) { return tqHash64((uint64_t)stream * 0x9e3779b97f4a7c15ULL ^ (uint64_t)id) | 2; }

/* Keeps an open interval of stream s (index si) by its id. */
static void ringPut(Reader *r, RStream *s, int64_t si, OpenRec *o) {
  for (;;) {
    if (s->cring) {
      OpenRec **slot = &s->ring[o->id & (s->cring - 1)];
      if (!*slot) {
        *slot = o;
        return;
      }
      if (s->cring >= RING_MAX) { /* still open: aside */
        tqMapPut(&r->oldIvs, oldKey(si, (*slot)->id), *slot);
        *slot = o;
        return;
      }
    }
    /* grow: twice the slots, the open ones placed again */
    int64_t nc = s->cring ? 2 * s->cring : 64;
    OpenRec **nr = tqCalloc((size_t)nc, sizeof(OpenRec *));
    for (int64_t k = 0; k < s->cring; k++) {
      OpenRec *x = s->ring[k];
      if (!x) continue;
      if (nr[x->id & (nc - 1)]) tqMapPut(&r->oldIvs, oldKey(si, x->id), x);
      else nr[x->id & (nc - 1)] = x;
    }
    free(s->ring);
    s->ring = nr;
    s->cring = nc;
  }
}
static OpenRec *ringTake(Reader *r, RStream *s, int64_t si, int64_t id) {
  if (s->cring) {
    OpenRec **slot = &s->ring[id & (s->cring - 1)];
    if (*slot && (*slot)->id == id) {
      OpenRec *o = *slot;
      *slot = NULL;
      return o;
    }
  }
  return r->oldIvs.n ? tqMapDel(&r->oldIvs, oldKey(si, id)) : NULL;
}

/* fr->alive: may the record just taken from block b (an END at t when
** end, else a BEGIN; its entity x) be left out?  A begin while another
** interval of x is open, an end that leaves one open, and an end whose
** block goes on with a begin of x at t (a change of x's state: that begin
** is taken here, into the stream's open intervals, and left out too;
** r->nskip 2) change nothing the engine looks at: whether x exists, after
** each instant (enAliveOnly). */
static int aliveSkip(Reader *r, RBlock *b, FileRel *fr, RStream *sm, int64_t si, int end, TqTime t, int64_t x) {
  int32_t *n = snsCountSlot(&fr->aliveN, &fr->naliveN, x);
  if (!n) return 0;
  if (!end) return (*n)++ > 0;
  if (*n > 1) {
    (*n)--;
    return 1;
  }
  if (*n == 0) return 0; /* (an end with no begin counted: refused above, kept as a guard) */
  In c = b->cur;
  if (b->nkept < 0 && c.p < c.e && *c.p == CK_BEGIN) {
    c.p++;
    int64_t v[TQ_MAX_ATTRS];
    if (getVar(&c) == 0 && !c.bad && !getVals(r, &c, fr, v) && v[0] == x) {
      b->cur = c;
      b->begun++;
      b->done++;
      OpenRec *o = newOpen(r, fr, b->frel, t, v);
      o->id = sm->begins++;
      ringPut(r, sm, si, o);
      r->nskip = 2;
      return 1;
    }
  }
  *n = 0;
  return 0;
}

/* Decodes one record of format 3 into *rec. */
static int takeRecord3(Reader *r, tq_record *rec, int *skip) {
  *skip = 0;
  r->nskip = 1;
  int bi = r->tree[0];
  RBlock *b = &r->gb[bi];
  FileRel *fr = &r->rels[b->frel];
  int64_t si = (int64_t)(b->frel - 1) * COL_NPART + b->part;
  RStream *sm = &r->streams[si];
  In *in = &b->cur;
  TqTime t = b->t;
  int kind = b->kind;
  if (b->nkept >= 0) sm->begins = b->begin0 + b->nbAt; /* (the records between were not read) */
  size_t at = (size_t)(b->at - b->buf); /* within the block; the message gives the block's file offset */
#define AT r->path, b->off + at
  if (kind == 0) return readerFail(r, "%s:%zu: corrupt record (truncated, or a time outside its block's)", AT);
  if (kind < CK_EVENT || kind > CK_SAMPLE || kind == CK_SYMBOL) return readerFail(r, "%s:%zu: corrupt record (kind %d)", AT, kind);
  if (t < r->lastT) return readerFail(r, "%s:%zu: time goes backwards", AT);
  if (r->ranged && (t < r->first || t > r->last))
    return readerFail(r, "%s:%zu: time %lld outside the file's range (%lld to %lld): corrupt", AT, (long long)t,
                      (long long)r->first, (long long)r->last);
  if ((kind == CK_EVENT) != fr->isEvent && kind != CK_SAMPLE)
    return readerFail(r, "%s:%zu: corrupt record (%s record of %s relation %d)", AT,
                      kind == CK_EVENT ? "an event" : "an interval", fr->isEvent ? "event" : "interval", b->frel);
  r->lastT = t;
  int na = fr->nattr;
  int64_t *v = r->vals;
  int some = fr->need == RT_NEED_SOME && r->need;
  int byEnt = some && fr->sumAttr == fr->needAttr; /* the stream's entity decides */
  recStart(r, fr, t, rec);
  if ((kind == CK_EVENT || kind == CK_SAMPLE || kind == CK_WHOLE) &&
      takeSimple(r, in, fr, kind, t, (uint64_t)1 << 62 | (uint64_t)r->nwhole, b->off + at, rec))
    return -1;
  if (kind == CK_WHOLE) r->nwhole++; /* (its own identity) */
  switch (kind) {
    case CK_BEGIN: {
      int64_t id = sm->begins++;
      b->begun++;
      if (r->scan) { /* (only WHOLE records are asked for) */
        skipVals(in, fr);
        if (in->bad) return readerFail(r, "%s:%zu: corrupt values", AT);
        rec->kind = TQ_REC_BEGIN;
        *skip = 1;
        break;
      }
      if (getVals(r, in, fr, v)) return readerFail(r, "%s:%zu: corrupt values", AT);
      if (!byEnt || entNeeded(r, fr, v[fr->needAttr])) {
        OpenRec *o = newOpen(r, fr, b->frel, t, v);
        o->id = id;
        ringPut(r, sm, si, o);
      }
      rec->kind = TQ_REC_BEGIN;
      rec->id = ivId(b->part, id);
      rec->from = t;
      rec->to = 0;
      break;
    }
    case CK_END: {
      uint64_t back = getVar(in), ent = getVar(in);
      if (in->bad || back == 0 || back > (uint64_t)sm->begins || ent > (uint64_t)r->nsym)
        return readerFail(r, "%s:%zu: corrupt record (an END)", AT);
      int64_t id = sm->begins - (int64_t)back;
      if (r->scan || (byEnt && (ent == 0 || !entNeeded(r, fr, r->symMap[ent])))) {
        /* an entity this read does not need: its begin was not kept */
        OpenRec *o = ringTake(r, sm, si, id);
        if (o) freeOpen(r, o);
        rec->kind = TQ_REC_END;
        *skip = 1;
        break;
      }
      OpenRec *o = ringTake(r, sm, si, id);
      if (!o) return readerFail(r, "%s:%zu: END of an interval that is not open", AT);
      rec->kind = TQ_REC_END;
      rec->id = ivId(b->part, id);
      rec->from = o->from;
      rec->to = t;
      for (int k = 0; k < na; k++) v[k] = o->vals[k];
      freeOpen(r, o);
      break;
    }
    default: break; /* (taken above) */
  }
  if (r->scan && kind != CK_WHOLE) *skip = 1;
  if (some && !*skip && kind != CK_END && !entNeeded(r, fr, v[fr->needAttr])) *skip = 1;
  if (some && !*skip && kind == CK_END && !byEnt && !entNeeded(r, fr, v[fr->needAttr])) *skip = 1;
  if (fr->alive > 0 && !*skip && (kind == CK_BEGIN || kind == CK_END) &&
      aliveSkip(r, b, fr, sm, si, kind == CK_END, t, v[0]))
    *skip = 1;
  if (*skip && !r->scan && !r->callerCounts && r->net) r->net->sensor[fr->id - 1].skipped += r->nskip;
  /* the block's next record */
  b->done++;
  if (blockPeek(b)) {
    r->key[bi] = keyOf(b->t, bi);
    treeReplay(r, bi);
  } else {
    if (b->nkept >= 0) sm->begins = b->begin0 + b->nbegin; /* (counted when the block was looked through) */
    else if (b->done != b->nrec || b->begun != b->nbegin)
      return readerFail(r, "%s:%zu: corrupt block (%lld records, %lld begins; its directory says %lld, %lld)", r->path,
                        b->off, (long long)b->done, (long long)b->begun, (long long)b->nrec,
                        (long long)b->nbegin);
    r->key[bi] = keyDone(r, bi);
    if (--r->nheap) treeReplay(r, bi);
  }
#undef AT
  return 1;
}

/* The next record of format 3 the operation needs (skipped ones are
** counted, not returned). */
int snsReaderGroup(Reader *r) {
  while (!r->nheap) {
    int g = groupLoad(r);
    if (g == 0 && (r->flags & 1) && r->nread != r->records) /* cut at a group's end */
      return readerFail(r, "%s:%zu: truncated (%lld of the %lld records it was closed with)", r->path, r->off,
                        (long long)r->nread, (long long)r->records);
    if (g <= 0) return g;
  }
  return 1;
}

int snsReaderTake(Reader *r, tq_record *rec, int *skip) { return r->nheap ? takeRecord3(r, rec, skip) : 0; }

static int readRecord3(Reader *r, tq_record *rec, int *skip) {
  for (;;) {
    int g = snsReaderGroup(r);
    if (g <= 0) return g;
    int rc = takeRecord3(r, rec, skip);
    if (rc < 0 || !*skip) return rc;
  }
}

/* ================================================================ either */

int snsReaderNext(Reader *r, tq_record *rec, int *skip) {
  return r->version >= 3 ? readRecord3(r, rec, skip) : readRecord12(r, rec, skip);
}

int snsReaderValues(Reader *r, int rel, void (*f)(void *ctx, const int64_t *vals), void *ctx) {
  if (r->version < 3) return 0;
  tq_record rec;
  int skip;
  r->only = rel;
  r->wholeOk = 1; /* (whole intervals are values too) */
  for (;;) {
    while (r->nheap) {
      if (takeRecord3(r, &rec, &skip) < 0) return -1;
      if (!skip && rec.kind != TQ_REC_END) f(ctx, rec.vals);
    }
    int g = groupLoad(r);
    if (g <= 0) return g < 0 ? -1 : 1;
  }
}

int snsReaderScan(Reader *r, TqTime *first, TqTime *last, int64_t *records,
                  void (*f)(void *ctx, int rel, TqTime from), void *ctx) {
  tq_record rec;
  int skip, rc, any = 0;
  *first = *last = 0;
  if (r->version >= 3) {
    /* the directories give the range; only blocks with whole intervals
    ** are decoded */
    r->scan = 1;
    TqTime lo = TQ_FOREVER;
    for (;;) {
      while (r->nheap) {
        if ((rc = takeRecord3(r, &rec, &skip)) < 0) break;
        if (!skip && rec.kind == TQ_REC_WHOLE) f(ctx, rec.rel, rec.from);
      }
      int g = r->nheap ? -1 : groupLoad(r);
      if (g <= 0) break;
      for (int i = 0; i < r->ngb; i++)
        if (r->gb[i].first < lo) lo = r->gb[i].first;
      any = 1;
    }
    *first = lo;
    *last = r->groupLast;
    *records = r->nread;
    return any;
  }
  while (readRecord12(r, &rec, &skip) > 0) {
    if (rec.kind == TQ_REC_WHOLE && !skip) f(ctx, rec.rel, rec.from);
    TqTime t = rec.kind == TQ_REC_BEGIN ? rec.from : rec.kind == TQ_REC_END || rec.kind == TQ_REC_WHOLE ? rec.to : rec.t;
    if (!any) *first = t;
    *last = t;
    any = 1;
  }
  *records = r->nread;
  return any;
}
