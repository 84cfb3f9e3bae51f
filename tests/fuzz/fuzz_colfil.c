/*
** fuzz_colfil.c - libFuzzer target for the collection-file reader (the
** colfil EXTRACTOR) and the engine behind it.
**
** Input: one mode byte, then the file.  Mode bit 0: the harness computes the
** file's checksums again before the replay (format 2: the range fields,
** the header, every whole block), so that mutations get past the CRCs to
** the decoder; without it they test the checks themselves.  Bit 1: the
** replaying program does not declare the interval relation (the reader
** decodes its records by the file's catalog and skips them).
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

static char dir[64], pathAll[96], pathSome[96], pathCol[96];

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
  snprintf(pathCol, sizeof pathCol, "%s.col", dir);
  writeFile(pathAll, progAll, sizeof progAll - 1);
  writeFile(pathSome, progSome, sizeof progSome - 1);
}

static uint32_t u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* Recomputes the CRC-32C checksums of a format-2 file, as far as its
** lengths allow. */
static void fixSums(unsigned char *b, size_t n) {
  if (n < 48 || u32(b + 8) != 2) return;
  put32(b + 40, snsCrc32c(b + 8, 32));
  size_t hlen = u32(b + 44);
  if (hlen > n - 48 || n - 48 - hlen < 4) return;
  put32(b + 48 + hlen, snsCrc32c(b + 48, hlen));
  size_t off = 52 + hlen;
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
  const char *prog = mode & 2 ? pathSome : pathAll;
  if (!tq_register(e, "colfil", pathCol) && !tq_prepare(e, 1, &prog)) {
    tq_start(e);
    tq_end(e);
  }
  tq_finish(e);
  return 0;
}
