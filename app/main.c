/*
** main.c - the tqmon command line.
**
**   tqmon check FILE.tq...                 compile, report errors
**   tqmon explain [--no-opt] [--trace] [--kernel | --host | --pm NAME...] FILE.tq...
**   tqmon run FILE.tq... (--replay FILE | --host | --kernel | --exec CMD | --pm SENSOR...) [--db FILE]
**             [--format table|csv|jsonl] [--record FILE] [--stats FILE] ...
**   tqmon record SENSORS.tq... (--replay FILE | --pm SENSOR...) -o FILE
**   tqmon convert SENSORS.tq... IN OUT
**   tqmon serve FILE.tq... SOURCE [--serve PORT]   (SOURCE: any of run's)
**   tqmon display FILE.tq... (--replay FILE | --pm SENSOR...) -o PAGE.html
**   tqmon show [--db FILE] [RELATION]      print a stored relation as CSV
**
** run, record and convert are clients of the engine API (include/tqmon.h).
** Exit status: 0 success, 1 bad input (messages name file:line:col),
** 2 bad usage.  Every input is checked before anything is stored.
**
** Why one file of over 1,000 lines: one command line, one usage text and one
** option parser for every command; each command is a short function of it,
** and what is not the command line (the daemon, loading, the report) has
** its own file already.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../compiler/compiler.h"
#include "../runtime/engine.h"
#include "../sensors/sensors.h"
#include "app.h"

static const char *usageText =
    "usage: tqmon <command> [options] FILE.tq...\n"
    "       tqmon help COMMAND, tqmon COMMAND --help: that command's options\n"
    "       tqmon --version\n"
    "\n"
    "commands:\n"
    "  check FILE.tq...            compile the program and report errors\n"
    "  explain FILE.tq...          print each query's algebra (optimized)\n"
    "      --no-opt                the initial algebra (paper section 8.4)\n"
    "      --trace                 every optimizer rule as it fires\n"
    "      --no-rule RULE          optimize without RULE (as explain --trace names it)\n"
    "      --kernel, --host, --pm NAME\n"
    "                              also how each sensor a query uses is collected\n"
    "                              (the kernel tracepoints it attaches, say)\n"
    "  run FILE.tq... (--replay FILE | --exec CMD... | --attach PID | --host |\n"
    "                 --kernel | --pm SENSOR...)\n"
    "                              run the queries over a recording (text .trace\n"
    "                              or binary collection file; - reads standard\n"
    "                              input; --replay again merges several in time\n"
    "                              order), a program built\n"
    "                              with generated sensors (--exec starts it; it\n"
    "                              comes last on the line), or live sensors\n"
    "      --exec-output FILE      the --exec program's standard output goes to FILE\n"
    "                              (default: tqmon's standard error when the results\n"
    "                              go to a file or a pipe, so they stay apart)\n"
    "      --host                  this Linux host from /proc: give sensors/host.tq\n"
    "                              before your queries (sensors/host.md lists its\n"
    "                              relations)\n"
    "      --kernel                this Linux kernel through BPF (root, or CAP_BPF\n"
    "                              and CAP_PERFMON): give sensors/kernel.tq before\n"
    "                              your queries (sensors/kernel.md); with --host too\n"
    "      --pcp HOST[,HOST...]    PCP metrics from pmcd on each host (host, host:port,\n"
    "                              host@pmproxy, or a file listing them); give the\n"
    "                              configuration 'tqmon pcp describe' wrote\n"
    "                              (sensors/pcp.md)\n"
    "      --pcp-archive FILE[,FILE...]  the same from pmlogger archives\n"
    "      --pcp-offset HOST=MS[,HOST=MS...]  with --pcp-archive: the hosts' clocks\n"
    "                              ahead of the monitor's (a live run's\n"
    "                              clock_offset_ms), applied to their archives\n"
    "      --pcp-sensors HOST[:PORT][@PROXY][#COMMAND][,...]\n"
    "                              generated sensors of a program on each host,\n"
    "                              through pmcd and its tqmon agent pmdatqmon\n"
    "                              (sensors/pmdatqmon.md); entities are HOST:NAME;\n"
    "                              #kernel: the host's kernel (pmdatqmon -k) with\n"
    "                              sensors/kernel.tq\n"
    "      --pcp-lag MS            with --pcp-sensors: how late a host's records\n"
    "                              may come (default 250)\n"
    "      --pcp-export            the named results valid now as PCP metrics\n"
    "                              (tqmon.result.*, through pmdatqmon)\n"
    "      --pcp-record PREFIX     with --pcp: record the run as PCP archives\n"
    "                              PREFIX-HOST, one a host (pmdumplog, pmrep and\n"
    "                              --pcp-archive read them)\n"
    "      --db FILE               store named results in an SQLite file\n"
    "      --format table|csv|jsonl  results on standard output (default table)\n"
    "      --stream, --sorted      each result row as soon as it is decided, flushed\n"
    "                              at every snapshot (an interval when it begins and\n"
    "                              again when it ends: a live run's default on a\n"
    "                              terminal or a pipe), or all rows at the end,\n"
    "                              sorted by time (a replay's, or into a file)\n"
    "      --utc                   tables show wall-clock times in UTC (default: the\n"
    "                              local zone of TZ, with its offset; ISO 8601)\n"
    "      --relative              tables show times from the run's first (+h:mm:ss)\n"
    "      --quiet                 no results on standard output\n"
    "      --record FILE           record what the run collected (binary, or\n"
    "                              text when FILE ends in .trace; - is standard\n"
    "                              output, with --quiet)\n"
    "      --stats FILE            write statistics as JSON (per sensor: packets\n"
    "                              recorded, delivered, most entities enabled)\n"
    "      --no-opt                run the unoptimized algebra\n"
    "      --no-rule RULE          optimize without RULE (as explain --trace names it)\n"
    "      --time-limit SECONDS    stop after that long (benchmarks)\n"
    "      --threads N             threads in all (1-64): a collection file is\n"
    "                              decoded by a thread of its own beside the\n"
    "                              engine's while N allows (default 2 on a\n"
    "                              machine of 2 processors or more; 1: none)\n"
    "      --max-ticks N           a replay ticks its Clock at most N times over\n"
    "                              the recording (default 10000000; 0: no bound)\n"
    "      --snapshots N           live: stop after N snapshots (Clock ticks)\n"
    "      --html FILE             draw the program's displays into one page\n"
    "                              (animation and timeline; no network needed)\n"
    "      --display tty|list[=FILE]|html=FILE|pace=S\n"
    "                              tty: the displayed relations now, in place on\n"
    "                              a terminal (plain lines otherwise); list: the\n"
    "                              drawn objects of each step; pace: each step\n"
    "                              takes S seconds (watch a replay); repeatable\n"
    "      --serve [ADDR:]PORT     the live page over HTTP while the run goes on\n"
    "                              (127.0.0.1 unless ADDR; port 0: any free one;\n"
    "                              --display idle=S,stall=S: drop a connection\n"
    "                              that sends no request in S s (10), a client\n"
    "                              that takes nothing it is sent in S s (30))\n"
    "  serve FILE.tq... SOURCE [--serve [ADDR:]PORT]\n"
    "                              run with --serve (default port 8080), and go on\n"
    "                              serving the page after the run until interrupted;\n"
    "                              SOURCE as for run: --replay FILE, --exec CMD...,\n"
    "                              --attach PID, --host, --kernel, --pcp HOSTS,\n"
    "                              --pcp-archive FILES or --pm SENSOR (and run's options)\n"
    "  daemon SENSORS.tq... (--host | --kernel | --exec CMD... | --attach PID | --pcp HOSTS |\n"
    "                 --pm SENSOR...) [--socket PATH] [--db FILE] [--stats FILE]\n"
    "                 [--serve [ADDR:]PORT] [--kept SIZE]\n"
    "                              a running monitor whose queries come and go:\n"
    "                              collects until SIGINT/SIGTERM and takes requests\n"
    "                              on a Unix socket of mode 0600 in an owner-only\n"
    "                              directory (default $TQMON_SOCKET, else\n"
    "                              $XDG_RUNTIME_DIR/tqmon/daemon.sock, else\n"
    "                              /tmp/tqmon-UID/daemon.sock); --db: each query's\n"
    "                              rows in a table named after it, with its phase;\n"
    "                              --serve: the live page (the queries, add, remove,\n"
    "                              histograms; loopback unless ADDR; its address\n"
    "                              with a token is printed on standard error);\n"
    "                              --kept: the records kept while persistent-collection\n"
    "                              queries run, for queries added later (64M; K, M, G)\n"
    "  query add FILE.tq [--name N] [--persistent-data] [--persistent-collection]\n"
    "            [--phase current|global] [--histogram ATTRIBUTE[:BUCKETS]] [--socket PATH]\n"
    "                              add a query to the running daemon (its sensors\n"
    "                              are enabled from now; its answer covers from now,\n"
    "                              or from earlier where records kept for\n"
    "                              persistent collection hold what it reads: it\n"
    "                              says from when, and why not earlier); a file that does not\n"
    "                              compile is refused with the compiler's message;\n"
    "                              --histogram: its values in BUCKETS (1000) time\n"
    "                              buckets that fold (merge, width doubles) when\n"
    "                              full; its clocks slow down to 4 ticks a bucket\n"
    "  query list | rm NAME | watch NAME | stats [--socket PATH]\n"
    "                              the queries; remove one (its enables are given\n"
    "                              back); stream its rows as JSON lines; the\n"
    "                              daemon's statistics (enabled entities per sensor)\n"
    "  phase start NAME [--socket PATH]\n"
    "                              a new current phase: current-phase queries start\n"
    "                              again from nothing, global ones go on\n"
    "  display FILE.tq... SOURCE -o PAGE.html\n"
    "                              only draw the displays into PAGE.html (SOURCE as\n"
    "                              for run)\n"
    "  record SENSORS.tq... (--replay FILE | --pm SENSOR...) -o FILE [--stats FILE]\n"
    "                              record every packet of every sensor, all\n"
    "                              enabled, for later analysis by any query\n"
    "                              (-o -: to standard output)\n"
    "  convert SENSORS.tq... IN OUT  between text (.trace) and binary recordings\n"
    "  pcp describe [-h HOST] [-o FILE.tq] METRIC...\n"
    "                              write a sensor configuration for PCP metrics\n"
    "                              from pmcd's metadata (sensors/pcp.md)\n"
    "  sensors gen SENSORS.tq... [-o sensors.h]\n"
    "                              generate the C sensors of a configuration (link\n"
    "                              the program with build/libtqsensor.a)\n"
    "  load FILE.tq... --replay RECORDING (--db FILE | --csv DIR)\n"
    "                              store every packet of a recording as tables of the\n"
    "                              primitive relations (all sensors enabled), in SQLite\n"
    "                              or as one CSV file per relation (DIR/schema.csv: types)\n"
    "  sql FILE.tq... --db FILE [--print]\n"
    "                              answer the queries over a store written by load,\n"
    "                              translated into SQL (retrospective analysis);\n"
    "                              --print shows the SQL instead\n"
    "  show [--db FILE] [RELATION] print stored relations as CSV (default tqmon.db)\n"
    "  report FILE.tq... (SOURCE | --db STORE) [--transactions REL.ATTR] [--top N] [-o PAGE.html]\n"
    "                              a Strobe-like profile of the CPU samples (Executing,\n"
    "                              sensors/cpusample.tq): modules and functions by share,\n"
    "                              overall and per transaction; -o: a flame graph page.\n"
    "                              SOURCE as for run (a live run needs --pm cpusample;\n"
    "                              --replay FILE reads a recording the run stored);\n"
    "                              --db: a store tqmon load wrote (its SQL, read only)\n"
    "  pms                         list the processor modules that can be loaded\n"
    "\n"
    "processor modules (run, record, pms):\n"
    "  --pm NAME[=ARGS]            load a processor module (built in, or NAME.so\n"
    "                              from the PM path); repeatable\n"
    "  --pm-path DIRS              where PMs are loaded from (colon-separated;\n"
    "                              also TQMON_PM_PATH, absolute entries only;\n"
    "                              never . unless named; a library another user\n"
    "                              owns or anyone may write is refused)\n"
    "  --trace-level 0-3           messages of the PMs: errors .. debug (default 1)\n"
    "  --programs PATTERNS         live sources measure only the processes whose\n"
    "                              command matches (comma-separated shell wildcards,\n"
    "                              with the program's `monitor programs`)\n"
    "  --pm cpusample              CPU samples of the enabled processes: the relation\n"
    "                              Executing (give sensors/cpusample.tq)\n"
    "\n"
    "Several FILE.tq are read in order as one program.\n";

static int usage(FILE *f, int rc) {
  fputs(usageText, f);
  if (f == stdout) fputs("\nenvironment: TQMON_PM_PATH (PM path), TZ (times in tables), NO_COLOR (no colours)\n", f);
  return rc;
}

/* tqmon help CMD, tqmon CMD --help: the block of usageText that starts
** with "  CMD" (up to the next command), and for the commands that load
** processor modules their options.  0, or 2 for an unknown command. */
static int commandHelp(const char *cmd) {
  size_t n = strlen(cmd);
  const char *s = usageText, *start = NULL, *end = NULL;
  while (*s) {
    const char *eol = strchr(s, '\n');
    if (!eol) eol = s + strlen(s);
    int isCmd = s[0] == ' ' && s[1] == ' ' && s[2] >= 'a' && s[2] <= 'z';
    if (start && (isCmd || eol == s)) {
      end = s;
      break;
    }
    if (!start && isCmd && !strncmp(s + 2, cmd, n) && (s[2 + n] == ' ' || s[2 + n] == '\n')) start = s;
    s = *eol ? eol + 1 : eol;
  }
  if (!start) {
    fprintf(stderr, "tqmon help: no command '%s'\n", cmd);
    return usage(stderr, 2);
  }
  if (!end) end = s;
  fputs("usage: tqmon ", stdout);
  fwrite(start + 2, 1, (size_t)(end - start - 2), stdout);
  if (!strcmp(cmd, "run") || !strcmp(cmd, "serve") || !strcmp(cmd, "display") || !strcmp(cmd, "record") ||
      !strcmp(cmd, "report") || !strcmp(cmd, "pms") || !strcmp(cmd, "explain")) {
    const char *pm = strstr(usageText, "\nprocessor modules");
    const char *pmEnd = pm ? strstr(pm + 1, "\n\n") : NULL;
    if (pm && pmEnd) fwrite(pm, 1, (size_t)(pmEnd - pm + 1), stdout);
  }
  if (!strcmp(cmd, "serve") || !strcmp(cmd, "display")) fputs("\n(and the options of run: tqmon help run)\n", stdout);
  return 0;
}

typedef struct Args {
  const char *cmd;
  const char *files[256];
  int nfiles;
  const char *replay, *db, *csv, *stats, *format, *timeLimit, *record, *out, *pmPath, *snapshots, *traceLevel, *maxTicks, *programs, *transactions, *top, *threads;
  const char *pcp, *pcpArchive, *pcpRecord, *pcpOffset; /* --pcp hosts, --pcp-archive files, --pcp-record prefix, --pcp-offset */
  const char *replays[64];      /* every --replay, merged in time order (replay is the first) */
  int nreplay;
  const char *pcpSensors, *pcpLag;          /* --pcp-sensors hosts (pmdatqmon), --pcp-lag ms */
  int pcpExport;                            /* --pcp-export: results for pmdatqmon */
  const char *pm[64];
  int npm;
  char *exec;       /* --exec: the command words joined by \x1f */
  const char *attach;
  char *display;      /* arguments of the display PM (--html, --display, --serve) */
  int noOpt, trace, quiet, print, host, kernel;
  int stream;         /* --stream 1, --sorted 0, else -1 (by the source) */
  int utc, relative;  /* --utc, --relative: times in tables */
  const char *execOutput; /* --exec-output FILE: the subject's standard output */
  int help;           /* CMD --help */
  const char *rel;
  const char *socket; /* daemon: its socket */
  const char *kept;   /* daemon: --kept SIZE, the bound of the records kept for queries added later */
} Args;

static int parseArgs(int argc, char **argv, Args *a) {
  memset(a, 0, sizeof *a);
  a->stream = -1;
  if (argc < 2) return usage(stderr, 2);
  a->cmd = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *s = argv[i];
#define NEEDARG(field)                                                    \
  do {                                                                    \
    if (i + 1 >= argc) {                                                  \
      fprintf(stderr, "tqmon: %s needs an argument\n", s);                \
      return 2;                                                           \
    }                                                                     \
    a->field = argv[++i];                                                 \
  } while (0)
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      a->help = 1;
      return 0;
    }
    else if (!strcmp(s, "--replay")) {
      if (a->nreplay == 64) {
        fprintf(stderr, "tqmon: at most 64 --replay recordings\n");
        return 2;
      }
      NEEDARG(replay);
      a->replays[a->nreplay++] = a->replay;
      a->replay = a->replays[0];
    }
    else if (!strcmp(s, "--db")) NEEDARG(db);
    else if (!strcmp(s, "--csv")) NEEDARG(csv);
    else if (!strcmp(s, "--stats")) NEEDARG(stats);
    else if (!strcmp(s, "--format")) NEEDARG(format);
    else if (!strcmp(s, "--time-limit")) NEEDARG(timeLimit);
    else if (!strcmp(s, "--max-ticks")) NEEDARG(maxTicks);
    else if (!strcmp(s, "--threads")) NEEDARG(threads);
    else if (!strcmp(s, "--record")) NEEDARG(record);
    else if (!strcmp(s, "-o") || !strcmp(s, "--output")) NEEDARG(out);
    else if (!strcmp(s, "--pm-path")) NEEDARG(pmPath);
    else if (!strcmp(s, "--pcp")) NEEDARG(pcp);
    else if (!strcmp(s, "--pcp-sensors")) NEEDARG(pcpSensors);
    else if (!strcmp(s, "--pcp-lag")) NEEDARG(pcpLag);
    else if (!strcmp(s, "--pcp-export")) a->pcpExport = 1;
    else if (!strcmp(s, "--pcp-archive")) NEEDARG(pcpArchive);
    else if (!strcmp(s, "--pcp-record")) NEEDARG(pcpRecord);
    else if (!strcmp(s, "--pcp-offset")) NEEDARG(pcpOffset);
    else if (!strcmp(s, "--programs")) NEEDARG(programs);
    else if (!strcmp(s, "--transactions")) NEEDARG(transactions);
    else if (!strcmp(s, "--top")) NEEDARG(top);
    else if (!strcmp(s, "--socket")) NEEDARG(socket);
    else if (!strcmp(s, "--kept")) NEEDARG(kept);
    else if (!strcmp(s, "--snapshots")) {
      static char clockArgs[64];
      if (i + 1 >= argc || atoll(argv[i + 1]) <= 0) {
        fprintf(stderr, "tqmon: --snapshots needs a positive number\n");
        return 2;
      }
      snprintf(clockArgs, sizeof clockArgs, "count=%lld", atoll(argv[++i]));
      a->snapshots = clockArgs;
    }
    else if (!strcmp(s, "--trace-level")) NEEDARG(traceLevel);
    else if (!strcmp(s, "--attach")) NEEDARG(attach);
    else if (!strcmp(s, "--exec")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "tqmon: --exec needs a command\n");
        return 2;
      }
      TqBuf b = {0};
      for (int k = i + 1; k < argc; k++) tqBufPrintf(&b, "%s%s", k > i + 1 ? "\x1f" : "", argv[k]);
      a->exec = b.s;
      break; /* the rest is the subject's command line */
    }
    else if (!strcmp(s, "--html") || !strcmp(s, "--display") || !strcmp(s, "--serve")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "tqmon: %s needs an argument\n", s);
        return 2;
      }
      const char *v = argv[++i], *pre = !strcmp(s, "--html") ? "html=" : !strcmp(s, "--serve") ? "serve=" : "";
      char *nd = tqMprintf("%s%s%s%s", a->display ? a->display : "", a->display ? "," : "", pre, v);
      free(a->display);
      a->display = nd;
    }
    else if (!strcmp(s, "--pm")) {
      if (i + 1 >= argc || a->npm == 64) {
        fprintf(stderr, "tqmon: --pm needs an argument (NAME or NAME=ARGS)\n");
        return 2;
      }
      a->pm[a->npm++] = argv[++i];
    }
    else if (!strcmp(s, "--exec-output")) NEEDARG(execOutput);
    else if (!strcmp(s, "--stream")) a->stream = 1;
    else if (!strcmp(s, "--sorted")) a->stream = 0;
    else if (!strcmp(s, "--utc")) a->utc = 1;
    else if (!strcmp(s, "--relative")) a->relative = 1;
    else if (!strcmp(s, "--no-opt")) a->noOpt = 1;
    else if (!strcmp(s, "--no-rule")) {
      /* the previous optimizer: one rule left out (make bench compares) */
      if (i + 1 >= argc || algOptRule(argv[i + 1], 0)) {
        fprintf(stderr, "tqmon: --no-rule needs the name of an optimizer rule (algebra/optimize.c), as SF\n");
        return 2;
      }
      i++;
    }
    else if (!strcmp(s, "--host")) a->host = 1;
    else if (!strcmp(s, "--kernel")) a->kernel = 1;
    else if (!strcmp(s, "--trace")) a->trace = 1;
    else if (!strcmp(s, "--quiet")) a->quiet = 1;
    else if (!strcmp(s, "--print")) a->print = 1;
    else if (s[0] == '-' && s[1] == '-') {
      fprintf(stderr, "tqmon: unknown option %s\n", s);
      return 2;
    } else if (a->nfiles < 256) {
      a->files[a->nfiles++] = s;
    }
  }
  return 0;
}

static int reportDiag(TqDiag *d) {
  if (d->out.s) fputs(d->out.s, stderr);
  if (d->nerr > (d->maxerr ? d->maxerr : 50)) fprintf(stderr, "(%d more errors not shown)\n", d->nerr - 50);
  return d->nerr ? 1 : 0;
}

static CpProgram *compile(Args *a, TqDiag *d) {
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon %s: no program file given (FILE.tq)\n", a->cmd);
    return NULL;
  }
  CpProgram *p = cpCompileFiles(a->nfiles, a->files, d);
  if (p) cpOptimize(p, NULL);
  return p;
}

static int cmdCheck(Args *a) {
  TqDiag d = {0};
  d.notes = 1; /* check and run say where a query may have fallen into a TQuel trap */
  CpProgram *p = compile(a, &d);
  int rc = p ? 0 : 1;
  for (int i = 0; p && i < p->queries.n; i++) {
    const CpQuery *q = p->queries.v[i];
    if (q->emptyNote && !q->display) tqNote(&d, q->emptyNoteLoc, "%s", q->emptyNote);
  }
  if (p) printf("ok: %d sensor%s, %d quer%s\n", cpSensorCount(p), cpSensorCount(p) == 1 ? "" : "s", p->queries.n,
                p->queries.n == 1 ? "y" : "ies");
  else if (!d.nerr) rc = 2;
  reportDiag(&d);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

/* The relations whose sensors query tree t uses (its alphas, their flag
** entities, its entity sources), each once, in tree order. */
static void usedRels(const AlgNode *t, const AlgRel **out, int *n, int max) {
  const AlgRel *r[2] = {NULL, NULL};
  if (t->kind == ALG_ALPHA || t->kind == ALG_SOURCE) r[0] = t->rel;
  if (t->kind == ALG_ALPHA && t->rel->flagAttr >= 0 && t->rel->attr[t->rel->flagAttr].type.ent)
    r[1] = t->rel->attr[t->rel->flagAttr].type.ent->rel;
  for (int k = 0; k < 2; k++) {
    int seen = !r[k];
    for (int i = 0; i < *n && !seen; i++) seen = out[i] == r[k];
    if (!seen && *n < max) out[(*n)++] = r[k];
  }
  for (int i = 0; i < t->nkid; i++) usedRels(t->kid[i], out, n, max);
}

static int registerLive(tq_engine *e, Args *a, int all);
static int live(const Args *a);
static int registerPcp(tq_engine *e, const Args *a);
static tq_engine *newEngine(Args *a);
static int registerPms(tq_engine *e, Args *a);

static int cmdExplain(Args *a) {
  TqDiag d = {0};
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon explain: no program file given (FILE.tq)\n");
    return 2;
  }
  CpProgram *p = cpCompileFiles(a->nfiles, a->files, &d);
  if (!p) {
    reportDiag(&d);
    tqDiagFree(&d);
    return 1;
  }
  /* with a source (--kernel, --host, --pm): how each sensor is collected */
  tq_engine *e = NULL;
  if (a->kernel || a->host || a->npm || a->pcp || a->pcpArchive) {
    e = newEngine(a);
    if (!e || registerLive(e, a, 0) || registerPcp(e, a) || registerPms(e, a) ||
        (!live(a) && !a->pcpArchive && tq_register(e, "clock", NULL)) || tq_prepare(e, a->nfiles, a->files)) {
      if (e) fputs(tq_errors(e), stderr);
      tq_finish(e);
      cpProgramFree(p);
      tqDiagFree(&d);
      return 1;
    }
  }
  TqBuf trace = {0};
  if (e) enSensorsAsked(e, p); /* with a source: the sensors it can ask (rule SENSOR) */
  if (!a->noOpt) cpOptimize(p, a->trace ? &trace : NULL);
  for (int i = 0; i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    TqBuf b = {0};
    const AlgNode *t = (!a->noOpt && q->opt) ? q->opt : q->tree;
    algPrint(t, &b);
    printf("%s: %s\n", q->name ? q->name : tqArenaPrintf(p->arena, "query%d", i + 1), b.s);
    tqBufFree(&b);
    algPrintNotes(t, &b); /* the optimizer's choices (O3's arming form) */
    if (b.s) fputs(b.s, stdout);
    tqBufFree(&b);
    const AlgRel *rels[64];
    int nrel = 0;
    usedRels(t, rels, &nrel, 64);
    for (int k = 0; e && k < nrel; k++) {
      char how[1200];
      if (tq_describe(e, rels[k]->name, how, (int)sizeof how) == 0) printf("  sensor: %s\n", how);
    }
  }
  if (a->trace && trace.s) fputs(trace.s, stdout);
  tqBufFree(&trace);
  tq_finish(e);
  cpProgramFree(p);
  tqDiagFree(&d);
  return 0;
}

/* ---------------------------------------------------------------- engine clients */

static int engineFail(tq_engine *e, int rc) {
  fputs(tq_errors(e), stderr);
  return rc;
}

/* Registers --pm NAME[=ARGS] options. */
static int registerPms(tq_engine *e, Args *a) {
  for (int i = 0; i < a->npm; i++) {
    const char *spec = a->pm[i];
    const char *eq = strchr(spec, '=');
    char name[128];
    size_t n = eq ? (size_t)(eq - spec) : strlen(spec);
    if (n == 0 || n >= sizeof name) {
      fprintf(stderr, "tqmon: bad --pm '%s' (NAME or NAME=ARGS)\n", spec);
      return -1;
    }
    memcpy(name, spec, n);
    name[n] = 0;
    if (tq_register(e, name, eq ? eq + 1 : NULL)) return -1;
  }
  return 0;
}

/* An engine with the options every client command shares. */
static tq_engine *newEngine(Args *a) {
  tq_engine *e = tq_init();
  if (!e) return NULL;
  if ((a->pmPath && tq_set_option(e, "pm-path", a->pmPath)) || (a->noOpt && tq_set_option(e, "no-opt", "1")) ||
      (a->timeLimit && tq_set_option(e, "time-limit", a->timeLimit)) ||
      (a->maxTicks && tq_set_option(e, "max-ticks", a->maxTicks)) ||
      (a->threads && tq_set_option(e, "threads", a->threads)) ||
      (a->traceLevel && tq_set_option(e, "trace-level", a->traceLevel)) ||
      (a->programs && tq_set_option(e, "programs", a->programs))) {
    engineFail(e, 0);
    tq_finish(e);
    return NULL;
  }
  return e;
}

/* The extractor of the --replay recordings (the replay PM: text or
** collection files, a file, a pipe or "-", several merged in time order;
** sensors/README.md). */
static int registerExtractor(tq_engine *e, const Args *a) {
  TqBuf b = {0};
  for (int i = 0; i < a->nreplay; i++) tqBufPrintf(&b, "%s%s", i ? "\n" : "", a->replays[i]);
  int rc = tq_register(e, "replay", b.s);
  tqBufFree(&b);
  return rc;
}

static int live(const Args *a) { return a->exec || a->attach || a->host || a->kernel || a->pcp || a->pcpSensors; }

/* The user named a clock (or another timer) with --pm: no second one. */
static int userClock(const Args *a) {
  for (int i = 0; i < a->npm; i++)
    if (!strncmp(a->pm[i], "clock", 5) && (a->pm[i][5] == 0 || a->pm[i][5] == '=')) return 1;
  return 0;
}

/* --pcp HOSTS or --pcp-archive FILES: the pcp PM (sensors/pcp.md), given
** the program's files for its '-- pcp:' lines.  A replay of archives is
** timed by the clock over their time range (from=, to=), a live run by
** the realtime clock of registerLive. */
static int registerPcp(tq_engine *e, const Args *a) {
  if (!a->pcp && !a->pcpArchive) return 0;
  TqBuf b = {0};
  tqBufPrintf(&b, "%s=%s", a->pcp ? "host" : "archive", a->pcp ? a->pcp : a->pcpArchive);
  for (int i = 0; i < a->nfiles; i++) tqBufPrintf(&b, "\nfile=%s", a->files[i]);
  if (a->pcpRecord) tqBufPrintf(&b, "\nrecord=%s", a->pcpRecord);
  if (a->pcpOffset) tqBufPrintf(&b, "\noffset=%s", a->pcpOffset);
  int rc = tq_register(e, "pcp", b.s);
  int64_t first, last;
  if (!rc && a->pcpArchive && !userClock(a)) {
    TqBuf err = {0}, clock = {0};
    if (snsPcpArchiveRange(a->pcpArchive, a->pcpOffset, &first, &last, &err)) {
      fprintf(stderr, "tqmon: %s\n", err.s);
      rc = -1;
    } else {
      tqBufPrintf(&clock, "from=%lld,to=%lld", (long long)first, (long long)last);
      rc = tq_register(e, "clock", clock.s);
    }
    tqBufFree(&err);
    tqBufFree(&clock);
  }
  tqBufFree(&b);
  return rc;
}

/* The live sources of --exec / --attach (the shm PM; all: every sensor
** enabled, for record), --host (the host PMs) and --kernel (the kernel
** PMs) and their realtime clock; nothing when none is given. */
static int registerLive(tq_engine *e, Args *a, int all) {
  if (!live(a)) return 0;
  /* the clock first: it fixes the collection's start before the subject runs */
  char clock[128];
  snprintf(clock, sizeof clock, "realtime%s%s", a->snapshots ? "," : "", a->snapshots ? a->snapshots : "");
  /* remote sensors: a snapshot waits the lag for every host's records */
  if (a->pcpSensors) snprintf(clock + strlen(clock), sizeof clock - strlen(clock), ",lag=%g", a->pcpLag ? atof(a->pcpLag) : 250.0);
  if (!userClock(a) && tq_register(e, "clock", clock)) return -1;
  if (a->kernel && tq_register(e, "kernel", NULL)) return -1;
  if (a->host && tq_register(e, "host", NULL)) return -1;
  if (a->pcpSensors) {
    char *h = tqMprintf("host=%s;lag=%g", a->pcpSensors, a->pcpLag ? atof(a->pcpLag) : 250.0);
    int rc = tq_register(e, "pcpsensors", h);
    free(h);
    if (rc) return -1;
  }
  if (!a->exec && !a->attach) return 0;
  const char *pre = all ? "all+" : "";
  char *args = a->exec ? tqMprintf("%sexec:%s", pre, a->exec) : tqMprintf("%sattach:%s", pre, a->attach);
  int rc = tq_register(e, "shm", args);
  free(args);
  return rc;
}

/* --stats FILE: the run's statistics as JSON.  0, or -1 (said). */
static int writeStats(tq_engine *e, const Args *a, const char *cmd) {
  if (!a->stats) return 0;
  FILE *f = fopen(a->stats, "w");
  if (!f || fputs(tq_stats_json(e), f) < 0 || fclose(f)) {
    fprintf(stderr, "tqmon %s: cannot write %s: %s\n", cmd, a->stats, strerror(errno));
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- signals
** SIGINT, SIGTERM and SIGHUP during an operation finish it cleanly, as
** bpftrace does on ^C: the engine is asked to halt (tq_halt), completes
** the snapshot being taken, and tq_end emits and stores what the queries
** decided (intervals still open stay open); the exit status is that of a
** run that ended.  A second signal ends the process at once (the default
** action: what the store committed stays, docs/design.md). */
static tq_engine *volatile sigEngine;
static volatile sig_atomic_t sigSeen;
static const int stopSignals[] = {SIGINT, SIGTERM, SIGHUP};

static void onStopSignal(int sig) {
  if (sigSeen || !sigEngine) { /* the second: abort at once */
    signal(sig, SIG_DFL);
    raise(sig); /* (pending until this handler returns) */
    return;
  }
  sigSeen = sig;
  tq_halt(sigEngine, sig);
}

/* Installs (e) or removes (NULL) the handlers of the stop signals. */
static void stopSignalsTo(tq_engine *e) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* reads and writes go on; the clock's wait does not */
  sa.sa_handler = e ? onStopSignal : SIG_DFL;
  sigSeen = 0;
  sigEngine = e;
  for (size_t i = 0; i < sizeof stopSignals / sizeof *stopSignals; i++) {
    struct sigaction old;
    /* a signal ignored when tqmon started (nohup) stays ignored */
    if (sigaction(stopSignals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(stopSignals[i], &sa, NULL);
  }
}

/* Runs the prepared operation to its end; 0, or 1 when it failed.  A stop
** signal ends it early and cleanly (said on standard error). */
static int runToEnd(tq_engine *e) {
  stopSignalsTo(e);
  int rc = tq_start(e) ? 1 : 0;
  if (rc) fputs(tq_errors(e), stderr);
  if (tq_end(e)) {
    fputs(tq_errors(e), stderr);
    rc = 1;
  }
  int sig = sigSeen;
  stopSignalsTo(NULL);
  if (sig) {
    const char *name = sigabbrev_np(sig);
    fprintf(stderr, "tqmon: SIG%s: the run ended there; what it decided is kept (intervals still open are left open)\n",
            name ? name : "?");
  }
  return rc;
}

/* The sources of a run: the extractor of --replay first (a bad recording
** stops the run before a store is opened), the live sources, the --pm
** PMs, and a clock when nothing else times the collection.  0 or -1. */
static int registerSources(tq_engine *e, Args *a) {
  if (a->replay && registerExtractor(e, a)) return -1;
  if (registerLive(e, a, 0) || registerPcp(e, a) || registerPms(e, a)) return -1;
  if (!a->replay && !live(a) && !a->pcpArchive && !userClock(a) &&
      tq_register(e, "clock", a->snapshots ? a->snapshots : NULL))
    return -1;
  return 0;
}

/* --record FILE: what the run collected, as text (.trace) or a collection
** file; *args holds the PM's arguments (the caller frees them after
** tq_finish).  0 or -1. */
static int registerRecord(tq_engine *e, Args *a, char **args) {
  if (!a->record) return 0;
  size_t n = strlen(a->record);
  *args = tqMprintf("write:%s", a->record);
  return tq_register(e, n > 6 && !strcmp(a->record + n - 6, ".trace") ? "trace" : "colfil", *args);
}

/* -o - and --record -: standard output, as --replay - reads standard input. */
static const char *dashStdout(const char *path) { return path && !strcmp(path, "-") ? "/dev/stdout" : path; }

/* Is path this process's standard output (-o /dev/stdout, a pipe on)? */
static int isStdout(const char *path) {
  struct stat p, o;
  return path && !stat(path, &p) && !fstat(STDOUT_FILENO, &o) && p.st_dev == o.st_dev && p.st_ino == o.st_ino;
}

static int cmdRun(Args *a) {
  const char *fmt = "table";
  if (a->format) {
    if (strcmp(a->format, "table") && strcmp(a->format, "csv") && strcmp(a->format, "jsonl")) {
      fprintf(stderr, "tqmon run: unknown format '%s' (table, csv or jsonl)\n", a->format);
      return 2;
    }
    fmt = a->format;
  }
  if (!a->replay && !a->npm && !live(a) && !a->pcpArchive) {
    fprintf(stderr, "tqmon run: give a recording with --replay FILE, a program with --exec CMD or --attach PID, or sensors with --host, --kernel, --pcp HOSTS, --pcp-sensors HOSTS, --pcp-archive FILES or --pm NAME\n");
    return 2;
  }
  if ((a->host || a->kernel) && a->replay) {
    fprintf(stderr, "tqmon run: --%s collects live; it cannot be used with --replay\n", a->host ? "host" : "kernel");
    return 2;
  }
  if (a->pcpOffset && !a->pcpArchive) {
    fprintf(stderr, "tqmon run: --pcp-offset applies to --pcp-archive (a live run estimates the offsets itself)\n");
    return 2;
  }
  if (a->pcpRecord && !a->pcp) {
    fprintf(stderr, "tqmon run: --pcp-record records a live run of --pcp HOSTS\n");
    return 2;
  }
  if ((a->pcp || a->pcpArchive) && (a->replay || a->host || a->kernel || a->exec || a->attach || (a->pcp && a->pcpArchive))) {
    fprintf(stderr, "tqmon run: --pcp or --pcp-archive is the run's only source\n");
    return 2;
  }
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon run: no program file given (FILE.tq)\n");
    return 2;
  }
  if (a->execOutput && !a->exec) {
    fprintf(stderr, "tqmon run: --exec-output is the output of the program --exec starts\n");
    return 2;
  }
  /* (a recording mixed with other bytes cannot be read back) */
  const char *given = a->record;
  a->record = dashStdout(a->record);
  if (isStdout(a->record) && (!a->quiet || a->exec)) {
    fprintf(stderr, "tqmon run: --record %s is standard output, where the %s go as well: give --quiet%s, or write "
                    "the recording to a file or a named pipe\n",
            given, a->exec ? "results and the --exec program's output" : "results", a->exec ? " and no --exec" : "");
    return 2;
  }
  if (a->utc && a->relative) {
    fprintf(stderr, "tqmon run: give --utc or --relative, not both\n");
    return 2;
  }
  /* --exec: the subject inherits standard output; it goes to --exec-output,
  ** or to standard error when the results go to a file or a pipe, so that
  ** the result stream holds results only.  The results keep the original
  ** standard output through a duplicate (not inherited). */
  int savedOut = -1, resFd = -1;
  if (a->exec && (a->execOutput || (!a->quiet && !isatty(STDOUT_FILENO)))) {
    fflush(stdout);
    int to = a->execOutput ? open(a->execOutput, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (to < 0) {
      fprintf(stderr, "tqmon run: cannot write %s: %s\n", a->execOutput, strerror(errno));
      return 1;
    }
    savedOut = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (!a->quiet) resFd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    dup2(to, STDOUT_FILENO);
    close(to);
  }
  tq_engine *e = newEngine(a);
  int rc = 1;
  char *textArgs = NULL, *recArgs = NULL;
  if (!e) {
    rc = 2;
    goto restore;
  }
  if (registerSources(e, a)) goto out;
  if (a->db && tq_register(e, "sqlite", a->db)) goto out;
  if (a->pcpExport && tq_register(e, "pcpexport", NULL)) goto out;
  if (registerRecord(e, a, &recArgs)) goto out;
  if (!a->quiet) {
    char dest[32] = "";
    if (resFd >= 0) snprintf(dest, sizeof dest, ":&%d", resFd);
    textArgs = tqMprintf("%s%s%s%s%s", fmt, a->stream > 0 ? ",stream" : a->stream == 0 ? ",sorted" : "",
                         a->utc ? ",utc" : "", a->relative ? ",relative" : "", dest);
    if (tq_register(e, "text", textArgs)) goto out;
  }
  if (a->display && tq_register(e, "display", a->display)) goto out;
  if (!a->host && !a->kernel && !a->pcp && tq_register(e, "progress", NULL)) goto out; /* a live run shows its results as they come */
  if (tq_set_option(e, "notes", "1") || tq_prepare(e, a->nfiles, a->files)) goto out;
  fputs(tq_errors(e), stderr); /* the compiler's notes */
  rc = runToEnd(e);
  if (!rc) fputs(tq_errors(e), stderr); /* notes on empty answers */
  if (writeStats(e, a, "run")) rc = 1;
  tq_finish(e);
  goto restore;
out:
  engineFail(e, 1);
  tq_finish(e);
  rc = 1;
restore:
  free(textArgs);
  free(recArgs);
  if (savedOut >= 0) {
    fflush(stdout);
    dup2(savedOut, STDOUT_FILENO);
    close(savedOut);
  }
  if (resFd >= 0) close(resFd); /* (the text PM wrote to a duplicate of its own) */
  return rc;
}

/* tqmon record: every record of every sensor, all enabled, into a file. */
static int cmdRecord(Args *a, const char *given) {
  if (!a->out || (!a->replay && !a->npm && !live(a))) {
    fprintf(stderr, "tqmon record: give the source (--replay FILE, or --pm NAME) and the output with -o FILE\n");
    return 2;
  }
  /* (the program inherits standard output: its bytes would be in the
  ** recording, which could not be read back) */
  if (a->exec && isStdout(a->out)) {
    fprintf(stderr, "tqmon record: -o %s is standard output, where the --exec program writes as well: write the "
                    "recording to a file or a named pipe\n",
            given);
    return 2;
  }
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon record: no sensor configuration given (SENSORS.tq)\n");
    return 2;
  }

  tq_engine *e = newEngine(a);
  if (!e) return 2;
  char *args = tqMprintf("all:%s", a->out);
  size_t n = strlen(a->out);
  int rc = 1;
  if ((a->replay && registerExtractor(e, a)) || registerLive(e, a, 1) || registerPms(e, a) ||
      (!a->replay && !live(a) && !userClock(a) && tq_register(e, "clock", a->snapshots ? a->snapshots : NULL)) ||
      tq_register(e, n > 6 && !strcmp(a->out + n - 6, ".trace") ? "trace" : "colfil", args) ||
      tq_register(e, "progress", NULL) || tq_prepare(e, a->nfiles, a->files))
    engineFail(e, 1);
  else
    rc = runToEnd(e);
  if (rc == 0 && writeStats(e, a, "record")) rc = 1;
  tq_finish(e);
  free(args);
  return rc;
}

/* tqmon convert SENSORS.tq... IN OUT: between the text and binary forms. */
static int cmdConvert(Args *a) {
  if (a->nfiles < 3) {
    fprintf(stderr, "tqmon convert: give SENSORS.tq... IN OUT\n");
    return 2;
  }
  const char *in = a->files[a->nfiles - 2], *out = a->files[a->nfiles - 1];
  a->replay = in;
  a->replays[0] = in;
  a->nreplay = 1;
  a->out = out;
  a->nfiles -= 2;
  return cmdRecord(a, out);
}

/* tqmon pms: the processor modules this tqmon can load. */
/* tqmon sensors gen FILE.tq... -o sensors.h */
static int cmdSensors(Args *a) {
  if (a->nfiles < 2 || strcmp(a->files[0], "gen")) {
    fprintf(stderr, "tqmon sensors: usage: tqmon sensors gen FILE.tq... [-o sensors.h]\n");
    return 2;
  }
  TqDiag d = {0};
  CpProgram *p = cpCompileFiles(a->nfiles - 1, a->files + 1, &d);
  if (!p) {
    reportDiag(&d);
    tqDiagFree(&d);
    return 1;
  }
  TqBuf out = {0}, err = {0};
  int rc = 0;
  if (snsGenHeader(p, a->files[1], &out, &err)) {
    fprintf(stderr, "tqmon sensors gen: %s\n", err.s);
    rc = 1;
  } else if (a->out) {
    FILE *f = fopen(a->out, "w");
    if (!f || fputs(out.s, f) < 0 || fclose(f)) {
      fprintf(stderr, "tqmon sensors gen: cannot write %s: %s\n", a->out, strerror(errno));
      rc = 1;
    }
  } else {
    fputs(out.s, stdout);
  }
  tqBufFree(&out);
  tqBufFree(&err);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

static int cmdPms(Args *a) {
  tq_engine *e = newEngine(a);
  if (!e) return 2;
  int n = 0;
  const tq_pm *const *b = appBuiltinPms(&n);
  printf("built in:\n");
  for (int i = 0; i < n; i++) printf("  %-10s %s\n", b[i]->name, b[i]->description);
  const char *path = a->pmPath ? a->pmPath : getenv("TQMON_PM_PATH");
  if (path && *path) {
    char *copy = tqStrdup(path);
    for (char *dir = strtok(copy, ":"); dir; dir = strtok(NULL, ":")) {
      DIR *d = opendir(dir);
      if (!d) continue;
      printf("in %s:\n", dir);
      struct dirent *de;
      while ((de = readdir(d))) {
        size_t k = strlen(de->d_name);
        if (k > 3 && !strcmp(de->d_name + k - 3, ".so")) printf("  %.*s\n", (int)(k - 3), de->d_name);
      }
      closedir(d);
    }
    free(copy);
  }
  tq_finish(e);
  return 0;
}

/* tqmon load: every record of a recording into tables of the primitive
** relations (a text one by load.c, a binary one by the store PM), or into
** CSV files. */
static int cmdLoad(Args *a) {
  if (!a->replay || !a->db == !a->csv) {
    fprintf(stderr, "tqmon load: give --replay RECORDING and either --db FILE or --csv DIR\n");
    return 2;
  }
  if (a->csv) {
    /* CSV files for a column store (DuckDB's read_csv): read here, not
    ** through the engine */
    TqDiag d = {0};
    CpProgram *p = compile(a, &d);
    int rc = p ? (snsRecordingToCsv(a->replay, p, a->csv, &d) ? 1 : 0) : 1;
    reportDiag(&d);
    cpProgramFree(p);
    tqDiagFree(&d);
    return rc;
  }
  if (a->csv && a->nreplay > 1) {
    fprintf(stderr, "tqmon load: --csv reads one recording (merge several with tqmon record first)\n");
    return 2;
  }
  /* the recording opened once (a pipe loses nothing): a text one is read
  ** whole, then stored (load.c); a binary one, or several merged, go
  ** through the engine to the store PM, every record stored */
  TqDiag d = {0};
  SnsInput *in = a->nreplay == 1 ? snsInputOpen(a->replay, &d) : NULL;
  if (a->nreplay == 1 && !in) {
    reportDiag(&d);
    tqDiagFree(&d);
    return 1;
  }
  if (!in || snsInputIsCollection(in)) {
    tqDiagFree(&d);
    if (a->nfiles == 0) {
      fprintf(stderr, "tqmon load: no sensor configuration given (FILE.tq)\n");
      snsInputClose(in);
      return 2;
    }
    tq_engine *e = newEngine(a);
    int rc = 1;
    if (!e)
      rc = 2;
    else if ((in ? enRegisterData(e, &snsReplayPm, a->replay, in) : registerExtractor(e, a)) ||
             tq_register(e, "store", a->db) || tq_prepare(e, a->nfiles, a->files))
      engineFail(e, 1);
    else
      rc = runToEnd(e);
    tq_finish(e);
    snsInputClose(in);
    return rc;
  }
  CpProgram *p = compile(a, &d);
  SnsTrace *tr = p ? snsTraceReadInput(in, p, &d) : NULL;
  int rc = tr ? (appLoadTrace(tr, p, a->db, &d) ? 1 : 0) : 1;
  reportDiag(&d);
  snsTraceFree(tr);
  snsInputClose(in);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

static int cmdSql(Args *a) {
  TqDiag d = {0};
  if (!a->db) {
    fprintf(stderr, "tqmon sql: give the store with --db FILE\n");
    return 2;
  }
  CpProgram *p = compile(a, &d);
  if (!p) {
    int rc = reportDiag(&d) ? 1 : 2;
    tqDiagFree(&d);
    return rc;
  }
  int rc = 0;
  RtStore *st = rtStoreOpen(a->db, &d);
  CpSqlParams par = {0, 0};
  int64_t tick = 0;
  if (!st || rtStoreGetMeta(st, "first", &par.first) || rtStoreGetMeta(st, "last", &par.last) ||
      rtStoreGetMeta(st, "tick", &tick))
    rc = 1;
  else if (tick != p->cat.tick)
    tqErrorAt(&d, a->db, "the store was loaded with a clock tick of %lld ns, the program says %lld", (long long)tick,
              (long long)p->cat.tick), rc = 1;
  for (int i = 0; !rc && i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    TqBuf sql = {0}, err = {0};
    const char *name = q->name ? q->name : tqArenaPrintf(p->arena, "query%d", i + 1);
    if (cpQuerySql(p, q, &par, &sql, &err)) {
      tqError(&d, q->loc, "cannot translate into SQL: %s", err.s ? err.s : "?");
      rc = 1;
    } else if (a->print) {
      printf("-- %s\n%s;\n", name, sql.s);
    } else {
      printf("# %s\n", name);
      TqBuf ord = {0};
      tqBufPrintf(&ord, "SELECT * FROM (%s) ORDER BY %s", sql.s, q->isEvent ? "valid_at" : "valid_from, valid_to IS NULL, valid_to");
      for (int k = 0; k < q->nattr; k++) tqBufPrintf(&ord, ", %d", k + 1);
      if (rtStoreQueryCsv(st, ord.s, stdout)) rc = 1;
      tqBufFree(&ord);
    }
    tqBufFree(&sql);
    tqBufFree(&err);
  }
  reportDiag(&d);
  rtStoreFree(st);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

/* tqmon report: the profile's queries (app/report.c) run with the
** program over the source into a temporary store, then written out. */
static int cmdReport(Args *a) {
  /* (the profile is written to standard output) */
  const char *given = a->record;
  a->record = dashStdout(a->record);
  if (isStdout(a->record)) {
    fprintf(stderr, "tqmon report: --record %s is standard output, where the report goes as well: write the "
                    "recording to a file or a named pipe\n",
            given);
    return 2;
  }
  if (a->db && (a->replay || a->npm || live(a))) {
    fprintf(stderr, "tqmon report: a store (--db) or a source (--replay, --exec ...), not both\n");
    return 2;
  }
  if (!a->db && !a->replay && !a->npm && !live(a)) {
    fprintf(stderr, "tqmon report: give the source as for run (--replay FILE, or --exec CMD ... with --pm cpusample), "
                    "or a store of tqmon load (--db FILE)\n");
    return 2;
  }
  int top = a->top ? atoi(a->top) : 20;
  if (top <= 0) {
    fprintf(stderr, "tqmon report: --top takes a positive number\n");
    return 2;
  }
  if (a->db) {
    /* a store of primitive relations: the queries' SQL translations */
    if (a->nfiles == 0) {
      fprintf(stderr, "tqmon report: no program file given (FILE.tq)\n");
      return 2;
    }
    TqDiag d = {0};
    TqBuf err = {0};
    int rc = appReportStore(a->db, a->nfiles, a->files, a->transactions, top, stdout, a->out, &d, &err);
    reportDiag(&d);
    if (rc && err.n) fprintf(stderr, "tqmon report: %s\n", err.s);
    tqDiagFree(&d);
    tqBufFree(&err);
    return rc ? 1 : 0;
  }
  TqDiag d = {0};
  CpProgram *p = compile(a, &d);
  if (!p) {
    int rc = reportDiag(&d) ? 1 : 2;
    tqDiagFree(&d);
    return rc;
  }
  TqBuf err = {0};
  char *q = appReportQueries(p, a->transactions, &err);
  cpProgramFree(p);
  tqDiagFree(&d);
  if (!q) {
    fprintf(stderr, "tqmon report: %s\n", err.s);
    tqBufFree(&err);
    return 1;
  }
  /* the queries and the store in a private temporary folder */
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char *dir = tqMprintf("%s/tqmon-report.XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    fprintf(stderr, "tqmon report: cannot make a folder in %s: %s\n", tmp, strerror(errno));
    free(dir);
    free(q);
    return 1;
  }
  char *qf = tqMprintf("%s/report.tq", dir), *db = tqMprintf("%s/report.db", dir);
  FILE *f = fopen(qf, "w");
  int rc = 1;
  if (!f || fputs(q, f) < 0 || fclose(f)) {
    fprintf(stderr, "tqmon report: cannot write %s: %s\n", qf, strerror(errno));
    goto done;
  }
  const char *files[257];
  if (a->nfiles > 255) goto done;
  for (int i = 0; i < a->nfiles; i++) files[i] = a->files[i];
  files[a->nfiles] = qf;
  tq_engine *e = newEngine(a);
  if (!e) goto done;
  char *recArgs = NULL;
  if (registerSources(e, a) || tq_register(e, "sqlite", db) || registerRecord(e, a, &recArgs) ||
      tq_prepare(e, a->nfiles + 1, files)) {
    engineFail(e, 1);
    tq_finish(e);
    free(recArgs);
    goto done;
  }
  rc = runToEnd(e);
  if (writeStats(e, a, "report")) rc = 1;
  tq_finish(e);
  free(recArgs);
  if (!rc && appReportWrite(db, a->transactions, top, stdout, a->out, &err) == 0) fflush(stdout);
  else if (!rc) {
    fprintf(stderr, "tqmon report: %s\n", err.s);
    rc = 1;
  }
done:
  unlink(qf);
  unlink(db);
  char *wal = tqMprintf("%s-wal", db), *shm = tqMprintf("%s-shm", db);
  unlink(wal);
  unlink(shm);
  rmdir(dir);
  free(wal);
  free(shm);
  free(qf);
  free(db);
  free(dir);
  free(q);
  tqBufFree(&err);
  return rc;
}

static int cmdShow(Args *a) {
  TqDiag d = {0};
  const char *db = a->db ? a->db : "tqmon.db";
  FILE *f = fopen(db, "rb");
  if (!f) {
    fprintf(stderr, "tqmon show: cannot open %s: %s\n", db, strerror(errno));
    return 1;
  }
  fclose(f);
  RtStore *st = rtStoreOpenReadOnly(db, &d); /* (a store is only read: no switch to WAL) */
  int rc = 1;
  if (st) {
    if (a->nfiles == 0) {
      rc = rtStoreQueryCsv(st, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", stdout) ? 1 : 0;
    } else {
      rc = 0;
      for (int i = 0; i < a->nfiles; i++) {
        TqBuf q = {0};
        tqBufPuts(&q, "SELECT * FROM \"");
        for (const char *s = a->files[i]; *s; s++) tqBufAdd(&q, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
        tqBufPuts(&q, "\"");
        printf("# %s\n", a->files[i]);
        if (rtStoreQueryCsv(st, q.s, stdout)) rc = 1;
        tqBufFree(&q);
      }
    }
  }
  reportDiag(&d);
  rtStoreFree(st);
  tqDiagFree(&d);
  return rc;
}

/* tqmon pcp describe [-h HOST] [-o FILE.tq] METRIC...: the configuration
** of PCP metrics from pmcd's metadata (sensors/pcp.md), written whole or
** not at all (a temporary file renamed over FILE). */
static int cmdPcp(int argc, char **argv) {
  const char *host = "local:", *out = NULL;
  int i = 1;
  if (argc < 1 || strcmp(argv[0], "describe")) i = argc + 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "-h") && i + 1 < argc) host = argv[++i];
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else i = argc + 1;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: tqmon pcp describe [-h HOST[:PORT]] [-o FILE.tq] METRIC...\n"
                    "  writes a sensor configuration for the metrics (a non-leaf name: every metric below it)\n"
                    "  from pmcd's metadata on HOST (default local:); see sensors/pcp.md\n");
    return 2;
  }
  TqBuf text = {0}, err = {0};
  int rc = 0;
  if (snsPcpDescribe(host, argc - i, (const char *const *)argv + i, &text, &err)) {
    fprintf(stderr, "tqmon pcp describe: %s\n", err.s);
    rc = 1;
  } else if (out) {
    char *tmp = tqMprintf("%s.tmp%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f || fwrite(text.s, 1, text.n, f) != text.n || fclose(f) || rename(tmp, out)) {
      fprintf(stderr, "tqmon pcp describe: cannot write %s: %s\n", out, strerror(errno));
      remove(tmp);
      rc = 1;
    }
    free(tmp);
  } else if (fwrite(text.s, 1, text.n, stdout) != text.n || fflush(stdout)) {
    rc = 1;
  }
  tqBufFree(&text);
  tqBufFree(&err);
  return rc;
}

/* tqmon daemon: the sensor files and the live sources, prepared as a
** session; queries come through the socket (app/daemon.c). */
static int cmdDaemon(Args *a) {
  if (a->display && strncmp(a->display, "serve=", 6)) {
    fprintf(stderr, "tqmon daemon: its page is --serve [ADDR:]PORT (no --html or --display)\n");
    return 2;
  }
  if (a->display) memmove(a->display, a->display + 6, strlen(a->display + 6) + 1); /* [ADDR:]PORT */
  if (a->display && strchr(a->display, ',')) {
    fprintf(stderr, "tqmon daemon: one --serve [ADDR:]PORT\n");
    return 2;
  }
  if (a->replay || a->pcpArchive) {
    fprintf(stderr, "tqmon daemon: a running monitor collects live (--host, --kernel, --exec, --attach, --pcp, --pm); "
                    "replay a recording with tqmon run\n");
    return 2;
  }
  if (!a->npm && !live(a)) {
    fprintf(stderr, "tqmon daemon: give live sources: --host, --kernel, --exec CMD, --attach PID, --pcp HOSTS or --pm NAME\n");
    return 2;
  }
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon daemon: no sensor configuration given (SENSORS.tq)\n");
    return 2;
  }
  tq_engine *e = newEngine(a);
  if (!e) return 2;
  char *path = a->socket ? tqStrdup(a->socket) : appDaemonSocketPath();
  int rc = 1;
  if (registerSources(e, a) || tq_set_option(e, "session", "1") || (a->db && tq_set_option(e, "session-db", a->db)) ||
      (a->kept && tq_set_option(e, "session-history", a->kept)) || tq_prepare(e, a->nfiles, a->files)) {
    engineFail(e, 1);
  } else {
    rc = appDaemonServe(e, path, a->display);
    if (writeStats(e, a, "daemon")) rc = 1;
  }
  tq_finish(e);
  free(path);
  return rc;
}

static int dispatch(int argc, char **argv, Args *ap);

int main(int argc, char **argv) {
  Args a;
  int rc = dispatch(argc, argv, &a);
  free(a.display);
  return rc;
}

static int dispatch(int argc, char **argv, Args *ap) {
  Args a;
  memset(ap, 0, sizeof *ap);
  if (argc >= 2 && !strcmp(argv[1], "pcp")) return cmdPcp(argc - 2, argv + 2); /* -h is its HOST */
  if (argc >= 2 && (!strcmp(argv[1], "query") || !strcmp(argv[1], "phase"))) return appClient(argc - 1, argv + 1);
  int rc = parseArgs(argc, argv, &a);
  *ap = a;
  if (rc == -1) return 0;
  if (rc) return rc;
  if (!strcmp(a.cmd, "--version") || !strcmp(a.cmd, "-V")) {
    printf("tqmon %s (processor module interface %d)\n", TQ_VERSION, TQ_PM_VERSION);
    return 0;
  }
  if (!strcmp(a.cmd, "--help") || !strcmp(a.cmd, "-h") || (!strcmp(a.cmd, "help") && !a.nfiles))
    return usage(stdout, 0);
  if (!strcmp(a.cmd, "help")) return commandHelp(a.files[0]);
  if (a.help) return commandHelp(a.cmd);
  if (!strcmp(a.cmd, "check")) return cmdCheck(&a);
  if (!strcmp(a.cmd, "explain")) return cmdExplain(&a);
  if (!strcmp(a.cmd, "run") || !strcmp(a.cmd, "serve")) {
    if (!strcmp(a.cmd, "serve")) { /* run, serving the live page until interrupted */
      char *nd = tqMprintf("%s%s%s,linger", a.display ? a.display : "", a.display ? "," : "",
                           a.display && strstr(a.display, "serve=") ? "" : "serve=8080");
      free(a.display);
      a.display = nd;
    }
    ap->display = a.display;
    rc = cmdRun(&a);
    free(a.exec);
    return rc;
  }
  if (!strcmp(a.cmd, "display")) { /* the page only: run --quiet --html FILE */
    if (!a.out) {
      fprintf(stderr, "tqmon display: give the page to write with -o FILE.html\n");
      return 2;
    }
    char *nd = tqMprintf("%s%shtml=%s", a.display ? a.display : "", a.display ? "," : "", a.out);
    free(a.display);
    a.display = ap->display = nd;
    a.quiet = 1;
    return cmdRun(&a);
  }
  if (!strcmp(a.cmd, "show")) return cmdShow(&a);
  if (!strcmp(a.cmd, "report")) {
    rc = cmdReport(&a);
    free(a.exec);
    return rc;
  }
  if (!strcmp(a.cmd, "load")) return cmdLoad(&a);
  if (!strcmp(a.cmd, "sql")) return cmdSql(&a);
  if (!strcmp(a.cmd, "record")) {
    const char *given = a.out;
    a.out = dashStdout(a.out);
    rc = cmdRecord(&a, given);
    free(a.exec);
    return rc;
  }
  if (!strcmp(a.cmd, "convert")) return cmdConvert(&a);
  if (!strcmp(a.cmd, "daemon")) {
    rc = cmdDaemon(&a);
    free(a.exec);
    return rc;
  }
  if (!strcmp(a.cmd, "pms")) return cmdPms(&a);
  if (!strcmp(a.cmd, "sensors")) return cmdSensors(&a);
  fprintf(stderr, "tqmon: unknown command '%s'\n", a.cmd);
  return usage(stderr, 2);
}
