/*
** fuzz_colfil.c - libFuzzer target for the collection-file reader (the
** colfil EXTRACTOR) and the engine behind it.
**
** Input: one mode byte, then the file.  Mode bit 0: the harness computes the
** file's checksums again before the replay (formats 2 and 3: the range
** fields, the header, every whole block, format 3's group directories and
** symbols), so that mutations get past the CRCs to the decoder; without it
** they test the checks themselves.  Bit 1: the replaying program does not
** declare the interval relation (the reader decodes its records by the
** file's catalog and skips them).  Bit 2: its queries take constants, so
** that a format-3 reader skips blocks and entities.
**
** Each input is written to a scratch file and replayed through the public
** API (tq_init, tq_register "colfil", tq_prepare, tq_start, tq_end,
** tq_finish) with a program of every value type and record kind, whose
** queries use no Clock (a damaged version-1 range cannot make it tick for
** long).  Errors are expected; crashes, hangs, leaks and sanitizer reports
** are bugs.  Seeds: tests/fuzz/colfil-corpus (tests/fuzz/README.md).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sensorsInt.h"
#include "tqmon.h"

static const char progAll[] =
    "clock 1s;\n"
    "entity E;\n"
    "event Ping (X: E initiator, N: int, W: float, S: string) traced on initiator;\n"
    "interval Iv (X: E performer, K: enum(A, B, C), N: int) traced on performer;\n"
    "interval Smp (X: E performer, N: int) sampled on performer;\n"
    "range of P is Ping\n"
    "range of I is Iv\n"
    "retrieve into R1 (P.X, P.N, P.W, P.S)\n"
    "retrieve into R2 (I.X, I.K, I.N)\n"
    "retrieve into R3 (P.X, I.N) when P overlap I\n";
static const char progSome[] =
    "clock 1s;\n"
    "entity E;\n"
    "event Ping (X: E initiator, N: int, W: float, S: string) traced on initiator;\n"
    "interval Smp (X: E performer, N: int) sampled on performer;\n"
    "range of P is Ping\n"
    "retrieve into R1 (P.X, P.N, P.W, P.S)\n";

/* queries that take constants: a replay of format 3 reads only the
** blocks and entities they need */
static const char progConst[] =
    "clock 1s;\n"
    "entity E;\n"
    "event Ping (X: E initiator, N: int, W: float, S: string) traced on initiator;\n"
    "interval Iv (X: E performer, K: enum(A, B, C), N: int) traced on performer;\n"
    "interval Smp (X: E performer, N: int) sampled on performer;\n"
    "range of P is Ping\n"
    "range of I is Iv\n"
    "retrieve into R1 (P.X, P.N) where P.X = A\n"
    "retrieve into R2 (I.X, I.K, I.N) where I.X = B\n";

static char dir[64], pathAll[96], pathSome[96], pathConst[96], pathCol[96];

static void writeFile(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (n && fwrite(p, 1, n, f) != n) abort();
  if (fclose(f)) abort();
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/tqfuzz-colfil-%ld", (long)getpid());
  snprintf(pathAll, sizeof pathAll, "%s.all.tq", dir);
  snprintf(pathSome, sizeof pathSome, "%s.some.tq", dir);
  snprintf(pathConst, sizeof pathConst, "%s.const.tq", dir);
  snprintf(pathCol, sizeof pathCol, "%s.col", dir);
  writeFile(pathAll, progAll, sizeof progAll - 1);
  writeFile(pathSome, progSome, sizeof progSome - 1);
  writeFile(pathConst, progConst, sizeof progConst - 1);
}

static uint32_t u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* A varint at *p (below e), or 0 past it. */
static uint64_t var(const unsigned char **p, const unsigned char *e) {
  uint64_t v = 0;
  for (int s = 0; s < 64 && *p < e; s += 7) {
    unsigned c = *(*p)++;
    v |= (uint64_t)(c & 0x7f) << s;
    if (!(c & 0x80)) return v;
  }
  return 0;
}

/* Formats 3 and 4: the checksums of each group (its symbols' and payloads' in
** the directory, then the directory's), as far as the lengths allow. */
static void fixGroups(unsigned char *b, size_t n, size_t off) {
  while (n - off >= 8) {
    size_t dlen = u32(b + off);
    if (dlen > n - off - 8) return;
    unsigned char *d = b + off + 8;
    const unsigned char *p = d, *e = d + dlen;
    size_t at = off + 8 + dlen; /* the symbols, then the payloads */
    var(&p, e);
    uint64_t slen = var(&p, e);
    if (e - p < 4 || slen > n - at) return;
    put32((unsigned char *)p, snsCrc32c(b + at, slen));
    p += 4;
    at += slen;
    uint64_t nb = var(&p, e);
    for (uint64_t i = 0; i < nb && p < e; i++) {
      for (int k = 0; k < 7; k++) var(&p, e);
      uint64_t len = var(&p, e);
      if (e - p < 4 || len > n - at) return;
      put32((unsigned char *)p, snsCrc32c(b + at, len));
      p += 4;
      at += len;
      uint64_t ne = var(&p, e);
      for (uint64_t k = 0; k < ne && ne <= 64; k++) var(&p, e);
    }
    put32(b + off + 4, snsCrc32c(d, dlen));
    off = at;
  }
}

/* Recomputes the CRC-32C checksums of a format-2, -3 or -4 file, as far as
** its lengths allow. */
static void fixSums(unsigned char *b, size_t n) {
  if (n < 48 || u32(b + 8) < 2 || u32(b + 8) > 4) return;
  put32(b + 40, snsCrc32c(b + 8, 32));
  size_t hlen = u32(b + 44);
  if (hlen > n - 48 || n - 48 - hlen < 4) return;
  put32(b + 48 + hlen, snsCrc32c(b + 48, hlen));
  size_t off = 52 + hlen;
  if (u32(b + 8) >= 3) { /* (format 4's losses end the directory) */
    fixGroups(b, n, off);
    return;
  }
  while (n - off >= 8) {
    size_t len = u32(b + off);
    if (len > n - off - 8) break;
    put32(b + off + 4, snsCrc32c(b + off + 8, len));
    off += 8 + len;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) setup();
  if (size < 1) return 0;
  unsigned mode = data[0];
  size_t n = size - 1;
  unsigned char *b = malloc(n ? n : 1);
  if (!b) return 0;
  if (n) memcpy(b, data + 1, n);
  if (mode & 1) fixSums(b, n);
  writeFile(pathCol, b, n);
  free(b);

  tq_engine *e = tq_init();
  if (!e) return 0;
  tq_set_option(e, "trace-level", "0");
  const char *prog = mode & 4 ? pathConst : mode & 2 ? pathSome : pathAll;
  if (!tq_register(e, "colfil", pathCol) && !tq_prepare(e, 1, &prog)) {
    tq_start(e);
    tq_end(e);
  }
  tq_finish(e);
  return 0;
}
