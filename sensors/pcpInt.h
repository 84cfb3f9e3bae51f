/*
** pcpInt.h - private to the PCP processor modules (sensors/pcp*.c): the
** sensor configuration's mapping of relations to PCP metrics.
**
** A configuration written by `tqmon pcp describe` (sensors/pcp.md) declares
** the relations in the tqmon language and says which metric fills which
** attribute in lines the compiler takes as comments:
**
**   -- pcp: entity Proc 3.9                          (an instance domain)
**   -- pcp: metric ProcSample.Utime proc.psinfo.utime 3.9 u64 counter
**   -- pcp: metric HostSample.Ncpu hinv.ncpu null u32 discrete
**
** The PCP PMs read these lines from the program's files (args file=...).
** Every metric line gives what pmcd said when the file was written: the
** instance domain (or null), the type and the semantics; a host whose
** metadata differs is left out of the run with a message naming the line.
** The PCP PMs reach the engine through the PM interface alone
** (include/tqmon_pm.h); they use libpcp and base/ (buffers, memory).
*/
#ifndef PCPINT_H
#define PCPINT_H

#include <pcp/pmapi.h>
#include <stdint.h>

#include "../include/tqmon_pm.h"

#define PCP_MAX_METRICS 64 /* metrics of one relation (attributes: TQ_MAX_ATTRS is 64) */
#define PCP_NAME_MAX 128   /* relation, attribute and metric names */

/* One "-- pcp: metric" line. */
typedef struct PcpMetricConf {
  char rel[PCP_NAME_MAX];    /* relation */
  char attr[PCP_NAME_MAX];   /* attribute */
  char metric[PCP_NAME_MAX]; /* PCP metric name */
  pmInDom indom;             /* PM_INDOM_NULL: one value per host */
  int type;                  /* PM_TYPE_* */
  int sem;                   /* PM_SEM_* */
  const char *file;          /* where the line is (owned by the PcpConf) */
  int line;
} PcpMetricConf;

/* One "-- pcp: entity" line: an instance domain's entity relation. */
typedef struct PcpIndomConf {
  char rel[PCP_NAME_MAX];    /* the entity relation (and entity type) */
  pmInDom indom;
  const char *file;
  int line;
} PcpIndomConf;

/* The mapping of a program. */
typedef struct PcpConf {
  PcpMetricConf *metric;
  int nmetric;
  PcpIndomConf *indom;
  int nindom;
  char **files; /* the files read (the lines point into this list) */
  int nfiles;
} PcpConf;

/* Reads the "-- pcp:" lines of file into c.  Returns 0, or -1 with the
** reason (FILE:LINE: ...) in err.  The PcpConf owns what it holds. */
int pcpConfRead(PcpConf *c, const char *file, char *err, size_t nerr);
void pcpConfFree(PcpConf *c);

/* The short names of the PCP types and semantics the lines use ("u64",
** "counter"), and back (-1 when unknown). */
const char *pcpTypeName(int type);
int pcpTypeOf(const char *name);
const char *pcpSemName(int sem);
int pcpSemOf(const char *name);
/* snprintf for messages: a message is cut at n on purpose (a PM's message
** holds 256 bytes; a long host or file name is cut there). */
void pcpSay(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* pcpsock.c: the TCP socket (a descriptor of this process) connected to
** pmcd as spec names it (host, host:port; the port 44321 when not given),
** or to the pmproxy it goes through (host@proxy[:port], or PMPROXY_HOST
** and PMPROXY_PORT; the port 44322 when not given),
** other than the descriptors taken[0..n); -1 when none (a unix socket).
** libpcp does not give a context's descriptor. */
int pcpSocketOf(const char *spec, const int *taken, int n);
/* The bytes received on socket fd, as the kernel counts them (TCP_INFO
** tcpi_bytes_received).  Returns 0, or -1 (and leaves *bytes). */
int pcpSocketBytes(int fd, int64_t *bytes);
/* "3.9" or "null". */
void pcpIndomText(pmInDom indom, char *buf, size_t n);
/* Parses "3.9" or "null" into *indom.  Returns 0 or -1. */
int pcpIndomParse(const char *s, pmInDom *indom);

#endif
