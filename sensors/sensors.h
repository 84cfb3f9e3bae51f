/*
** sensors.h - the processor modules of sensors/ (the sources of data and
** the recordings), and recordings in the text .trace format, read by the
** trace PM (sensors/pms.c) and replayed through the engine with the same
** enabling semantics as live sensors (a packet is delivered only when its
** sensor is enabled on the flag entity at that time), and written by it
** (tqmon convert).
**
** Text recording format: one packet per line, "TIME NAME VALUE...", values
** in the declared attribute order, '#' starts a comment.  TIME is
** h:mm:ss[.frac], an integer with ns|us|ms|s|min|h, or a bare integer of ns;
** times never decrease.  NAME is an event relation, or NAME+ / NAME- to
** begin / end an interval (entity relations included); a keyed interval is
** also closed by the next NAME+ with the same key, and NAME- may give only
** the key.  NAME@ is a sample taken at TIME (sampled relations); NAME= FROM
** is an interval [FROM, TIME) delivered whole at its end (it began while its
** sensor was disabled).  Values are names (entities, enum values), numbers
** or double-quoted strings.  NAME! COUNT FROM TO ENTITY [spans] is a loss
** (docs/losses.md): COUNT records (? when how many is not known) of
** relation NAME (* when not known) were lost over [FROM, TO] on the flag entity ENTITY (* when not known); spans:
** begins or ends of intervals were among them.  The replay tells it to the
** engine (g->lost) when it reaches the line, as the recording run was told
** it; TIME is where the recorder was then (the last record's time), not
** the loss's.  "TIME ." is a range mark: the recording covers TIME, no
** record (tqmon writes the run's first and last times so, before its first
** line and after its last: what a run collected need not begin or end
** there, and a replay ticks its Clock and samples over the whole range, as
** over a collection file's); only a comment may follow the dot.
*/
#ifndef SENSORS_H
#define SENSORS_H

#include "../include/tqmon_pm.h"
#include "../runtime/runtime.h"

/* The built-in PMs of sensors/ (app/builtins.c offers them by name). */
extern const tq_pm snsTracePm, snsClockPm, snsProgressPm; /* pms.c */
extern const tq_pm snsReplayPm;                          /* replay.c */
extern const tq_pm snsColfilPm;                          /* colfil.c */
extern const tq_pm snsShmPm;                             /* shm.c */
extern const tq_pm snsHostPm, snsHostProcessPm, snsHostProcessorPm, snsHostStatePm, snsHostLastProcessorPm,
    snsHostCpuTimePm, snsHostMemoryPm, snsHostIoPm, snsHostRunningOnPm; /* host.c */
extern const tq_pm snsKernelPm, snsKernelProcessorPm, snsKernelThreadPm, snsKernelForkPm, snsKernelExecPm,
    snsKernelExitPm, snsKernelRunningOnPm, snsKernelReadyPm, snsKernelBlockedPm, snsKernelWokePm, snsKernelSyscallPm,
    snsKernelBlockIoPm, snsKernelSendPm, snsKernelReceivePm; /* kernel.c */
/* pcp.c (sensors/pcp.md): pcp, PRODUCER of "*", the relations mapped by the
** program's "-- pcp:" lines, fetched from pmcd on many hosts or read from
** pmlogger archives; args are KEY=VALUE lines: host=SPEC (a host,
** host:port, a comma-separated list of them or a file listing them),
** archive=FILE[,FILE...], file=PROGRAM.tq (the program's files),
** record=PREFIX (PCP archives of a live run), offset=HOST=MS[,...] (over
** archives: a host's clock ahead of the monitor's, applied). */
extern const tq_pm snsPcpPm;
extern const tq_pm snsPcpSensorsPm;                      /* pcpagent.c: pmdatqmon agents */
/* The time range of the comma-separated archives in the monitor's time:
** the first record's time of the earliest, the last record's of the
** latest, each less its host's clock offset in offsets ("HOST=MS,...",
** may be NULL) (a replay's clock ticks over it: clock from=FIRST,to=LAST).
** Returns 0, or -1 with the reason in err (an archive that cannot be read,
** a malformed offset). */
int snsPcpArchiveRange(const char *files, const char *offsets, int64_t *first, int64_t *last, TqBuf *err);

/* tqmon pcp describe (pcpconf.c): the sensor configuration of the PCP
** metrics metrics[0..n) (a non-leaf name stands for every metric below
** it) from the metadata of pmcd on host, into out.  Returns 0, or -1 with
** the reason in err (an unknown metric, an unreachable host, a type no
** attribute holds) and nothing in out. */
int snsPcpDescribe(const char *host, int n, const char *const *metrics, TqBuf *out, TqBuf *err);
extern const tq_pm snsCpuSamplePm;                       /* cpusample.c */

/* The program list for a live PM (programs.c): may process pid become an
** entity, or be sampled?  Asks g->program_wanted with its command name
** (comm, read from /proc/PID/comm when comm is NULL) and, when the kernel
** may have cut comm at 15 characters, with the base name of its first
** argument.  Returns 1 when it may (also with no program list, and with an
** engine older than interface version 7), 0 when it may not or is gone. */
int snsProcessWanted(tq_pm_global *g, int64_t pid, const char *comm);

typedef struct SnsTrace SnsTrace;

/* A recording opened for reading (replay.c): a file, a pipe or "-"
** (standard input), opened once, its format told by its first bytes,
** which stay to be read, so that a stream loses nothing. */
typedef struct SnsInput SnsInput;
/* Opens path ("-": standard input).  NULL with the error in d. */
SnsInput *snsInputOpen(const char *path, TqDiag *d);
int snsInputIsCollection(const SnsInput *in); /* a collection file (its magic) */
const char *snsInputName(const SnsInput *in); /* in messages ("<stdin>" for "-") */
void snsInputClose(SnsInput *in);             /* accepts NULL */

/* Reads and checks a text recording against the catalog of prog.  Returns
** NULL after recording every error (file:line:col) in d; a NUL byte or a
** line longer than 1 MiB stops the reading there (an endless input costs
** no more); a recording that holds no record is an error too.  The Input
** form reads what is left of in (kept by the caller). */
SnsTrace *snsTraceRead(const char *path, const CpProgram *prog, TqDiag *d);
SnsTrace *snsTraceReadInput(SnsInput *in, const CpProgram *prog, TqDiag *d);
SnsTrace *snsTraceParse(TqSource *src, const CpProgram *prog, TqDiag *d); /* takes src */
void snsTraceFree(SnsTrace *t);
/* Replays tr (kept by the caller) through net, built on p (kept by the
** caller too), with the engine's delivery: for tests and tools that hold
** their own network.  Returns 0 or -1 (the messages on standard error). */
int snsReplay(CpProgram *p, RtNet *net, SnsTrace *tr);
int64_t snsTracePackets(const SnsTrace *t);
/* Packet i (0 <= i < snsTracePackets) as a record, as the trace PM produces
** it: an interval's id is its index, and its from and to are known at its
** BEGIN already (to is TQ_OPEN when the recording never ends it); vals
** point into t. */
void snsTraceRecord(const SnsTrace *t, int64_t i, tq_record *r);
TqTime snsTraceFirst(const SnsTrace *t);
/* Its losses (loss lines): their number; loss i as g->lost's arguments. */
int64_t snsTraceLosses(const SnsTrace *t);
void snsTraceLoss(const SnsTrace *t, int64_t i, int *rel, int64_t *entity, TqTime *from, TqTime *to, int64_t *count,
                  int *spans);
TqTime snsTraceLast(const SnsTrace *t);

/* Is path a binary collection file (its magic)?  0 for anything else,
** unreadable files included. */
int snsIsCollectionFile(const char *path);

/* Writes every record of a recording (text or collection file, checked
** against prog) as CSV files, one per primitive relation, into dir
** (created if missing; sensors/csv.c gives the layout): the rows `tqmon
** load --db` stores.  Returns 0, or -1 with the errors in d (a damaged
** collection file: FILE:OFFSET; the files then hold what came before). */
int snsRecordingToCsv(const char *path, const CpProgram *prog, const char *dir, TqDiag *d);

/* The CSV writer of snsRecordingToCsv, for other readers of recordings:
** rows of relation rel (its id) with the values vals and the span [from,
** to) (an event: its time in from; to TQ_OPEN: still open).  Open returns
** NULL with the error in d; Row and Close return 0 or -1 (Close reports
** a failed write in d, which may be NULL; it accepts NULL). */
typedef struct SnsCsv SnsCsv;
SnsCsv *snsCsvOpen(const char *dir, const CpProgram *prog, TqDiag *d);
int snsCsvRow(SnsCsv *c, int rel, const int64_t *vals, TqTime from, TqTime to);
int snsCsvClose(SnsCsv *c, TqDiag *d);
/* Every row of collection file in (kept by the caller) into c (colfil.c). */
int snsColfilRows(SnsInput *in, const CpProgram *prog, SnsCsv *c, TqDiag *d);

/* Writes the C header of generated sensors for the primitive relations of
** p into out (src names the configuration in its comment).  Returns 0, or
** -1 with the reason in err. */
int snsGenHeader(const CpProgram *p, const char *src, TqBuf *out, TqBuf *err);

#endif
