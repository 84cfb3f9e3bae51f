/*
** daemon.c - tqmon daemon, a running monitor whose queries come and go, and
** its clients tqmon query ... and tqmon phase start (include/tqmon.h, "a
** session"; docs/design.md section 5).
**
** The daemon collects from its live sources snapshot after snapshot until
** SIGINT, SIGTERM or SIGHUP (tq_halt: the snapshot being taken is
** completed, then the operation ends cleanly) and,
** between two snapshots, serves the requests waiting on its socket: a
** local Unix socket of mode 0600 in a directory only its owner may enter
** (the daemon refuses a directory others can reach), and it answers only
** peers of its own user id (SO_PEERCRED).  A request waits at most one
** base tick.
**
** The line protocol, one request per connection (every field checked):
**   add NAME FLAGS LENGTH FILE\n  then LENGTH bytes: the query file's text
**                                 (FLAGS: "-" or a comma list of
**                                 persistent-data, persistent-collection,
**                                 current-phase, histogram=ATTRIBUTE:BUCKETS;
**                                 FILE: the rest of the line)
**   rm NAME\n | list\n | stats\n | phase NAME\n | watch NAME\n
** The answer: "ok" or "error", then lines, then a line "." (a line that
** starts with "." is sent with one more).  A watch answers "ok" and then
** one JSON line per row change until the query is removed or the daemon
** ends ("."); a watcher that does not read while 4 MiB wait for it is
** dropped, and the daemon says so on standard error.
**
** With --serve [ADDR:]PORT (loopback unless ADDR) it also serves the live
** page (app/session.html): GET / the page; GET /api/queries the session
** (tq_session_json); POST /api/add?name=N&flags=F with the query's text as
** the body; POST /api/rm?name=N.  Every /api request must carry the
** random token the daemon prints with the page's address, in the header
** X-Tqmon-Token (a page of another origin cannot send that header).
*/
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "app.h"

#define MAXCLIENT 64
#define MAXLINE 8192
#define MAXTEXT (1 << 20)
#define MAXOUT (4 << 20)

typedef struct Client {
  int fd;
  TqBuf in;        /* what came so far */
  TqBuf out;       /* what waits to be sent */
  size_t sent;     /* of out */
  int watch;       /* watch id, 0 none */
  int http;        /* a client of the live page (--serve) */
  int closing;     /* close once out is sent */
  int dead;        /* dropped */
} Client;

typedef struct Daemon {
  tq_engine *e;
  int lfd;
  int hfd;          /* the live page's listening socket (-1: none) */
  char token[33];   /* what every /api request carries (X-Tqmon-Token) */
  const char *path;
  Client *cl[MAXCLIENT];
  int ncl;
  int64_t dropped;  /* watchers dropped for not reading */
} Daemon;

static volatile sig_atomic_t stopDaemon;
static tq_engine *volatile haltEngine;
/* SIGINT, SIGTERM, SIGHUP: the snapshot being taken is completed (the
** realtime clock stops waiting: tq_halt), then the daemon ends cleanly. */
static void onStop(int sig) {
  stopDaemon = sig;
  if (haltEngine) tq_halt(haltEngine, sig);
}

/* ================================================================ socket paths */

/* The default socket: $TQMON_SOCKET, else $XDG_RUNTIME_DIR/tqmon/daemon.sock,
** else /tmp/tqmon-UID/daemon.sock (malloc'd). */
char *appDaemonSocketPath(void) {
  const char *s = getenv("TQMON_SOCKET");
  if (s && *s) return tqStrdup(s);
  const char *x = getenv("XDG_RUNTIME_DIR");
  if (x && *x) return tqMprintf("%s/tqmon/daemon.sock", x);
  return tqMprintf("/tmp/tqmon-%ld/daemon.sock", (long)getuid());
}

/* The directory of path, made owner-only when it is the default one and
** missing; it must be a directory of this user that no one else may
** enter.  0, or -1 with the reason in err. */
static int privateDir(const char *path, TqBuf *err) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? tqMprintf("%.*s", (int)(slash == path ? 1 : slash - path), path) : tqStrdup(".");
  struct stat st;
  if (lstat(dir, &st) && errno == ENOENT) mkdir(dir, 0700);
  int rc = 0;
  if (lstat(dir, &st)) {
    tqBufPrintf(err, "cannot use the directory %s: %s", dir, strerror(errno));
    rc = -1;
  } else if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
    tqBufPrintf(err, "the socket's directory %s must be a directory of yours that no one else may enter (mode 0700): it is %s%o",
                dir, S_ISDIR(st.st_mode) ? "mode " : "not a directory, mode ", (unsigned)(st.st_mode & 07777));
    rc = -1;
  }
  free(dir);
  return rc;
}

static int fillAddr(struct sockaddr_un *a, const char *path, TqBuf *err) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) {
    tqBufPrintf(err, "the socket path %s is too long (at most %zu bytes)", path, sizeof a->sun_path - 1);
    return -1;
  }
  memcpy(a->sun_path, path, strlen(path) + 1);
  return 0;
}

/* ================================================================ the daemon's side */

static void put(Client *c, const char *s) { tqBufPuts(&c->out, s); }

/* One line of an answer, dot-stuffed. */
static void putLine(Client *c, const char *s) {
  if (s[0] == '.') put(c, ".");
  put(c, s);
  put(c, "\n");
}

/* Lines of text (several), each dot-stuffed. */
static void putLines(Client *c, const char *text) {
  while (text && *text) {
    const char *nl = strchr(text, '\n');
    size_t n = nl ? (size_t)(nl - text) : strlen(text);
    char *line = tqMprintf("%.*s", (int)n, text);
    putLine(c, line);
    free(line);
    text += n + (nl ? 1 : 0);
  }
}

static void answerError(Client *c, const char *msg) {
  put(c, "error\n");
  putLines(c, *msg ? msg : "failed (no message)");
  put(c, ".\n");
  c->closing = 1;
}

static void onRow(void *ctx, const char *line) {
  Client *c = ctx;
  if (c->dead) return;
  if (!line) { /* the query was removed, or the daemon ends */
    put(c, ".\n");
    c->watch = 0;
    c->closing = 1;
    return;
  }
  if (c->out.n - c->sent > MAXOUT) return; /* dropped below, once it is seen */
  putLine(c, line);
}

/* FLAGS of an add: "-" or words; histogram=ATTR:N gives the histogram's
** attribute (into hattr, 64 bytes) and buckets. */
static int parseFlags(const char *s, unsigned *flags, char *hattr, int *hbuckets) {
  *flags = 0;
  hattr[0] = 0;
  *hbuckets = 0;
  if (!strcmp(s, "-")) return 0;
  char *copy = tqStrdup(s), *save = NULL;
  int rc = 0;
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    int k = 0;
    if (!strcmp(w, "persistent-data")) *flags |= TQ_QUERY_PERSIST_DATA;
    else if (!strcmp(w, "persistent-collection")) *flags |= TQ_QUERY_PERSIST_COLLECTION;
    else if (!strcmp(w, "current-phase")) *flags |= TQ_QUERY_CURRENT_PHASE;
    else if (sscanf(w, "histogram=%63[A-Za-z0-9_]:%d%n", hattr, hbuckets, &k) == 2 && !w[k] && *hbuckets > 0) continue;
    else rc = -1;
  }
  free(copy);
  return rc;
}

static void answerList(Daemon *d, Client *c) {
  const tq_query_info *q;
  int n = tq_query_list(d->e, &q);
  put(c, "ok\n");
  putLine(c, "name\tscope\tpersistent\tphase\trows\twatchers\tstate\tfile\tcovers_from");
  for (int i = 0; i < n; i++) {
    char *line = tqMprintf("%s\t%s\t%s%s%s\t%s\t%lld\t%d\t%s\t%s\t%lld", q[i].name,
                           q[i].flags & TQ_QUERY_CURRENT_PHASE ? "current-phase" : "global",
                           q[i].flags & TQ_QUERY_PERSIST_DATA ? "data" : "",
                           (q[i].flags & TQ_QUERY_PERSIST_DATA) && (q[i].flags & TQ_QUERY_PERSIST_COLLECTION) ? "," : "",
                           q[i].flags & TQ_QUERY_PERSIST_COLLECTION ? "collection" : (q[i].flags & TQ_QUERY_PERSIST_DATA) ? "" : "-",
                           q[i].phase, (long long)q[i].rows, q[i].watchers, q[i].paused ? "paused" : "collecting", q[i].file,
                           (long long)q[i].covers_from);
    putLine(c, line);
    free(line);
  }
  put(c, ".\n");
  c->closing = 1;
}

/* Handles the request in c->in when it is complete: 1 handled, 0 wait for
** more, -1 refused (answered). */
static int request(Daemon *d, Client *c) {
  char *nl = c->in.s ? memchr(c->in.s, '\n', c->in.n) : NULL;
  if (!nl) {
    if (c->in.n > MAXLINE) return answerError(c, "request line too long"), -1;
    return 0;
  }
  size_t ln = (size_t)(nl - c->in.s);
  if (ln > MAXLINE) return answerError(c, "request line too long"), -1;
  char *line = tqMprintf("%.*s", (int)ln, c->in.s);
  for (char *p = line; *p; p++)
    if ((unsigned char)*p < 32 || *p == 127) {
      free(line);
      return answerError(c, "a request line holds only printable characters"), -1;
    }
  char verb[16] = "", a1[128] = "", a2[128] = "";
  int rc = 1;
  sscanf(line, "%15s %127s %127s", verb, a1, a2);
  if (!strcmp(verb, "add")) {
    /* add NAME FLAGS LENGTH FILE */
    char name[128], flags[128], hattr[64];
    long long len = -1;
    int off = 0, hb;
    unsigned fl;
    if (sscanf(line, "add %127s %127s %lld %n", name, flags, &len, &off) != 3 || off <= 0 || !line[off] || len < 0 ||
        len > MAXTEXT || parseFlags(flags, &fl, hattr, &hb)) {
      answerError(c, "bad add request: add NAME FLAGS LENGTH FILE (FLAGS: - or persistent-data, persistent-collection, "
                     "current-phase, histogram=ATTRIBUTE:BUCKETS; LENGTH at most 1 MiB)");
      rc = -1;
    } else if (c->in.n - ln - 1 < (size_t)len) {
      rc = 0; /* the text is still coming */
    } else {
      char *text = tqMprintf("%.*s", (int)len, nl + 1);
      if (strlen(text) != (size_t)len) answerError(c, "a query file holds no NUL byte");
      else if (tq_query_add(d->e, name, line + off, text, fl)) answerError(c, tq_errors(d->e));
      else if (hb && tq_query_histogram(d->e, name, hattr, hb)) {
        char *why = tqStrdup(tq_errors(d->e));
        tq_query_remove(d->e, name); /* all or nothing */
        answerError(c, why);
        free(why);
      } else {
        put(c, "ok\n");
        char *msg = tqMprintf("query %s added", name);
        putLine(c, msg);
        free(msg);
        /* from when its answer covers: kept records of persistent
        ** collection, or its addition (and why) */
        const tq_query_info *qi;
        int nq = tq_query_list(d->e, &qi);
        for (int i = 0; i < nq; i++) {
          if (strcmp(qi[i].name, name)) continue;
          char tb[64];
          tqTimeFormat(tb, sizeof tb, qi[i].covers_from);
          msg = qi[i].covers_from < qi[i].added
                    ? tqMprintf("its answer covers from %s (%lld), before its addition: records kept by persistent collection", tb,
                                (long long)qi[i].covers_from)
                    : tqMprintf("its answer covers from its addition, %s (%lld)%s%s", tb, (long long)qi[i].covers_from,
                                qi[i].covers_note[0] ? ": " : "", qi[i].covers_note);
          putLine(c, msg);
          free(msg);
        }
        put(c, ".\n");
        c->closing = 1;
      }
      free(text);
    }
  } else if (!strcmp(verb, "rm") && a1[0] && !a2[0]) {
    if (tq_query_remove(d->e, a1)) answerError(c, tq_errors(d->e));
    else {
      put(c, "ok\n.\n");
      c->closing = 1;
    }
  } else if (!strcmp(verb, "watch") && a1[0] && !a2[0]) {
    int id = tq_query_watch(d->e, a1, onRow, c);
    if (id < 0) answerError(c, tq_errors(d->e));
    else {
      c->watch = id;
      put(c, "ok\n");
    }
  } else if (!strcmp(verb, "phase") && a1[0] && !a2[0]) {
    if (tq_phase_start(d->e, a1)) answerError(c, tq_errors(d->e));
    else {
      put(c, "ok\n.\n");
      c->closing = 1;
    }
  } else if (!strcmp(verb, "list") && !a1[0]) {
    answerList(d, c);
  } else if (!strcmp(verb, "stats") && !a1[0]) {
    put(c, "ok\n");
    putLines(c, tq_stats_json(d->e));
    put(c, ".\n");
    c->closing = 1;
  } else {
    answerError(c, "unknown request (add, rm, list, watch, stats, phase)");
    rc = -1;
  }
  free(line);
  if (rc != 0) c->in.n = 0; /* one request a connection */
  return rc;
}

/* ================================================================ the live page (--serve) */

extern const char appSessionHtml[];

static void httpAnswer(Client *c, int code, const char *type, const char *body, size_t n) {
  const char *why = code == 200 ? "OK" : code == 400 ? "Bad Request" : code == 403 ? "Forbidden" : code == 404 ? "Not Found"
                  : code == 405 ? "Method Not Allowed" : "Error";
  tqBufPrintf(&c->out,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-cache\r\n"
              "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
              code, why, type, n);
  tqBufAdd(&c->out, body, n);
  c->closing = 1;
}

static void httpText(Client *c, int code, const char *text) { httpAnswer(c, code, "text/plain; charset=utf-8", text, strlen(text)); }

/* The value of query parameter key in path (URL-decoded into out, n
** bytes), or NULL. */
static const char *param(const char *path, const char *key, char *out, size_t n) {
  const char *q = strchr(path, '?');
  size_t kl = strlen(key);
  for (const char *p = q ? q + 1 : NULL; p && *p;) {
    const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
    if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
      size_t k = 0;
      for (const char *v = p + kl + 1; v < end && k + 1 < n; v++) {
        if (*v == '%' && end - v > 2) {
          char hex[3] = {v[1], v[2], 0};
          out[k++] = (char)strtol(hex, NULL, 16);
          v += 2;
        } else {
          out[k++] = *v == '+' ? ' ' : *v;
        }
      }
      out[k] = 0;
      return out;
    }
    p = amp ? amp + 1 : NULL;
  }
  return NULL;
}

/* A whole HTTP request is in c->in: answers it.  0 answered, 1 wait for more. */
static int httpRequest(Daemon *d, Client *c) {
  char *hend = c->in.s ? strstr(c->in.s, "\r\n\r\n") : NULL;
  if (!hend) {
    if (c->in.n > MAXLINE) return httpText(c, 400, "request head too long\n"), 0;
    return 1;
  }
  char method[8] = "", path[1024] = "";
  if (sscanf(c->in.s, "%7s %1023s", method, path) != 2) return httpText(c, 400, "bad request\n"), 0;
  size_t head = (size_t)(hend - c->in.s) + 4, len = 0;
  const char *cl = strcasestr(c->in.s, "\r\nContent-Length:");
  if (cl && cl < hend) len = strtoul(cl + 17, NULL, 10);
  if (len > MAXTEXT) return httpText(c, 400, "body too long\n"), 0;
  if (c->in.n < head + len) return 1;
  if (!strcmp(path, "/") || !strncmp(path, "/?", 2)) {
    if (strcmp(method, "GET")) return httpText(c, 405, "GET the page\n"), 0;
    return httpAnswer(c, 200, "text/html; charset=utf-8", appSessionHtml, strlen(appSessionHtml)), 0;
  }
  if (strncmp(path, "/api/", 5)) return httpText(c, 404, "no such page\n"), 0;
  /* the token: a header a page of another origin cannot send */
  const char *tk = strcasestr(c->in.s, "\r\nX-Tqmon-Token:");
  char got[64] = "";
  if (tk && tk < hend) sscanf(tk + 16, " %63[0-9a-f]", got);
  if (strcmp(got, d->token)) return httpText(c, 403, "the daemon's page token is needed (X-Tqmon-Token)\n"), 0;
  char name[128], flags[256];
  if (!strcmp(method, "GET") && !strncmp(path, "/api/queries", 12) && (!path[12] || path[12] == '?')) {
    const char *j = tq_session_json(d->e);
    return httpAnswer(c, 200, "application/json", j, strlen(j)), 0;
  }
  if (strcmp(method, "POST")) return httpText(c, 405, "POST to change the session\n"), 0;
  if (!strncmp(path, "/api/rm?", 8) && param(path, "name", name, sizeof name)) {
    if (tq_query_remove(d->e, name)) return httpText(c, 400, tq_errors(d->e)), 0;
    return httpText(c, 200, "removed\n"), 0;
  }
  if (!strncmp(path, "/api/add?", 9) && param(path, "name", name, sizeof name)) {
    unsigned fl;
    char hattr[64];
    int hb;
    if (!param(path, "flags", flags, sizeof flags)) strcpy(flags, "-");
    if (parseFlags(flags, &fl, hattr, &hb)) return httpText(c, 400, "bad flags\n"), 0;
    char *text = tqMprintf("%.*s", (int)len, c->in.s + head);
    int rc = strlen(text) != len ? -2 : tq_query_add(d->e, name, "(page)", text, fl);
    free(text);
    if (rc == -2) return httpText(c, 400, "a query holds no NUL byte\n"), 0;
    if (rc) return httpText(c, 400, tq_errors(d->e)), 0;
    if (hb && tq_query_histogram(d->e, name, hattr, hb)) {
      char *why = tqStrdup(tq_errors(d->e));
      tq_query_remove(d->e, name);
      httpText(c, 400, why);
      free(why);
      return 0;
    }
    return httpText(c, 200, "added\n"), 0;
  }
  return httpText(c, 404, "no such request\n"), 0;
}

/* --serve [ADDR:]PORT: a TCP socket (loopback unless ADDR).  0 or -1 (said). */
static int listenPage(Daemon *d, const char *spec) {
  char host[64] = "127.0.0.1";
  const char *colon = strrchr(spec, ':');
  const char *port = colon ? colon + 1 : spec;
  if (colon && (size_t)(colon - spec) < sizeof host) snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
  char *end;
  long pn = strtol(port, &end, 10);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)pn)};
  if (*end || pn < 0 || pn > 65535 || inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    fprintf(stderr, "tqmon daemon: --serve takes [ADDR:]PORT (an IPv4 address), not '%s'\n", spec);
    return -1;
  }
  unsigned char rnd[16];
  if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
    fprintf(stderr, "tqmon daemon: no random bytes for the page's token: %s\n", strerror(errno));
    return -1;
  }
  for (int i = 0; i < 16; i++) snprintf(d->token + 2 * i, 3, "%02x", rnd[i]);
  int one = 1;
  d->hfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  socklen_t al = sizeof a;
  if (d->hfd < 0 || setsockopt(d->hfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
      bind(d->hfd, (struct sockaddr *)&a, sizeof a) || listen(d->hfd, 16) || getsockname(d->hfd, (struct sockaddr *)&a, &al)) {
    fprintf(stderr, "tqmon daemon: cannot serve the page on %s: %s\n", spec, strerror(errno));
    return -1;
  }
  fprintf(stderr, "tqmon daemon: page on http://%s:%d/?token=%s\n", host, ntohs(a.sin_port), d->token);
  return 0;
}

static void dropClient(Daemon *d, int i) {
  Client *c = d->cl[i];
  if (c->watch) tq_query_unwatch(d->e, c->watch);
  close(c->fd);
  tqBufFree(&c->in);
  tqBufFree(&c->out);
  free(c);
  d->cl[i] = d->cl[--d->ncl];
}

static void acceptClients(Daemon *d, int lfd, int http) {
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (!http && (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) || cr.uid != getuid())) {
      close(fd); /* (the socket's mode keeps others out already) */
      continue;
    }
    if (d->ncl == MAXCLIENT) {
      const char *m = "error\nbusy: too many clients\n.\n";
      (void)!write(fd, m, strlen(m));
      close(fd);
      continue;
    }
    Client *c = tqCalloc(1, sizeof *c);
    c->fd = fd;
    c->http = http;
    d->cl[d->ncl++] = c;
  }
}

/* Serves what is waiting, without blocking; returns when nothing is. */
static void serve(Daemon *d) {
  for (int round = 0; round < 64; round++) {
    struct pollfd pf[MAXCLIENT + 2];
    pf[MAXCLIENT + 1] = (struct pollfd){d->lfd, POLLIN, 0};
    pf[0] = (struct pollfd){d->hfd, POLLIN, 0};
    for (int i = 0; i < d->ncl; i++) {
      Client *c = d->cl[i];
      pf[i + 1] = (struct pollfd){c->fd, (short)(POLLIN | (c->out.n > c->sent ? POLLOUT : 0)), 0};
    }
    int n = d->ncl;
    pf[n + 1] = pf[MAXCLIENT + 1];
    if (poll(pf, (nfds_t)n + 2, 0) <= 0) return;
    if (pf[n + 1].revents & POLLIN) acceptClients(d, d->lfd, 0);
    if (d->hfd >= 0 && (pf[0].revents & POLLIN)) acceptClients(d, d->hfd, 1);
    for (int i = n - 1; i >= 0; i--) {
      Client *c = d->cl[i];
      if (pf[i + 1].revents & POLLIN) {
        char buf[65536];
        ssize_t r = read(c->fd, buf, sizeof buf);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          c->dead = 1; /* gone (a watcher that disconnected) */
        } else if (r > 0 && !c->closing && !c->watch) {
          tqBufAdd(&c->in, buf, (size_t)r);
          if (c->in.n > MAXTEXT + MAXLINE + 1) c->http ? httpText(c, 400, "request too long\n") : answerError(c, "request too long");
          else if (c->http) httpRequest(d, c);
          else request(d, c);
        }
      } else if (pf[i + 1].revents & (POLLHUP | POLLERR)) {
        c->dead = 1;
      }
      if (!c->dead && c->out.n > c->sent) {
        ssize_t w = send(c->fd, c->out.s + c->sent, c->out.n - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) c->sent += (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR) c->dead = 1;
        if (c->sent == c->out.n) {
          c->out.n = c->sent = 0;
          if (c->closing) c->dead = 1;
        }
      }
      if (!c->dead && c->watch && c->out.n - c->sent > MAXOUT) {
        d->dropped++;
        fprintf(stderr, "tqmon daemon: a watcher of a query did not read its rows (4 MiB waiting): dropped (%lld so far)\n",
                (long long)d->dropped);
        c->dead = 1;
      }
      if (c->dead) dropClient(d, i);
    }
  }
}

/* Sends what waits to every client, blocking up to a few seconds (the end). */
static void flushAll(Daemon *d) {
  for (int i = 0; i < d->ncl; i++) {
    Client *c = d->cl[i];
    int fl = fcntl(c->fd, F_GETFL);
    if (fl >= 0) fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK);
    struct timeval tv = {5, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    while (c->out.n > c->sent) {
      ssize_t w = send(c->fd, c->out.s + c->sent, c->out.n - c->sent, MSG_NOSIGNAL);
      if (w <= 0) break;
      c->sent += (size_t)w;
    }
  }
}

int appDaemonServe(tq_engine *e, const char *path, const char *page) {
  Daemon d = {.e = e, .lfd = -1, .hfd = -1, .path = path};
  TqBuf err = {0};
  struct sockaddr_un addr;
  if (privateDir(path, &err) || fillAddr(&addr, path, &err)) {
    fprintf(stderr, "tqmon daemon: %s\n", err.s);
    tqBufFree(&err);
    return 1;
  }
  /* a second daemon on the same socket is refused; a socket left by one
  ** that died is replaced */
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof addr) == 0) {
    fprintf(stderr, "tqmon daemon: another tqmon daemon serves %s: not started (stop it, or give --socket PATH)\n", path);
    close(probe);
    return 1;
  }
  if (probe >= 0) close(probe);
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      fprintf(stderr, "tqmon daemon: %s exists and is no socket: not started\n", path);
      return 1;
    }
    unlink(path); /* no one answers on it */
  }
  d.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  mode_t old = umask(0177);
  int b = d.lfd < 0 ? -1 : bind(d.lfd, (struct sockaddr *)&addr, sizeof addr);
  umask(old);
  if (b || chmod(path, 0600) || listen(d.lfd, 16)) {
    int en = errno;
    fprintf(stderr, "tqmon daemon: cannot listen on %s: %s%s\n", path, strerror(en),
            en == EADDRINUSE ? " (another tqmon daemon started there): not started" : "");
    if (d.lfd >= 0) close(d.lfd);
    return 1;
  }
  if (page && listenPage(&d, page)) {
    close(d.lfd);
    if (d.hfd >= 0) close(d.hfd);
    unlink(path);
    return 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onStop;
  sa.sa_flags = SA_RESTART;
  haltEngine = e;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  fprintf(stderr, "tqmon daemon: serving %s (pid %ld)\n", path, (long)getpid());
  int rc = 0;
  while (!stopDaemon) {
    int r = tq_collect_snapshot(e);
    if (r < 0) {
      fputs(tq_errors(e), stderr);
      rc = 1;
      break;
    }
    serve(&d);
    if (r == 0) break;
  }
  haltEngine = NULL;
  if (tq_end(e)) {
    fputs(tq_errors(e), stderr);
    rc = 1;
  }
  serve(&d);
  flushAll(&d);
  while (d.ncl) dropClient(&d, d.ncl - 1);
  close(d.lfd);
  if (d.hfd >= 0) close(d.hfd);
  unlink(path);
  if (stopDaemon) fprintf(stderr, "tqmon daemon: stopped by signal %d\n", (int)stopDaemon);
  return rc;
}

/* ================================================================ the clients */

/* Connects to the daemon at path.  The fd, or -1 (said). */
static int dial(const char *path) {
  struct sockaddr_un addr;
  TqBuf err = {0};
  if (fillAddr(&addr, path, &err)) {
    fprintf(stderr, "tqmon: %s\n", err.s);
    tqBufFree(&err);
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
    fprintf(stderr, "tqmon: no tqmon daemon answers on %s: %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

static int sendAll(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Sends req and copies the answer's lines to stdout (ok) or stderr
** (error), line by line as they come.  0 ok, 1 error or a broken answer. */
static int converse(const char *path, const char *req, size_t n) {
  int fd = dial(path);
  if (fd < 0) return 1;
  signal(SIGPIPE, SIG_IGN);
  if (sendAll(fd, req, n)) {
    fprintf(stderr, "tqmon: the daemon on %s went away\n", path);
    close(fd);
    return 1;
  }
  FILE *f = fdopen(fd, "r");
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int state = 0, rc = 1; /* 0 before the status, 1 ok, 2 error */
  while ((len = getline(&line, &cap, f)) > 0) {
    if (line[len - 1] == '\n') line[--len] = 0;
    if (state == 0) {
      state = !strcmp(line, "ok") ? 1 : 2;
      continue;
    }
    if (!strcmp(line, ".")) {
      rc = state == 1 ? 0 : 1;
      break;
    }
    const char *s = line[0] == '.' ? line + 1 : line;
    FILE *o = state == 1 ? stdout : stderr;
    fputs(s, o);
    fputc('\n', o);
    fflush(o);
  }
  if (state == 0 || (len <= 0 && rc)) {
    if (state != 2) fprintf(stderr, "tqmon: the daemon on %s ended the answer early\n", path);
  }
  free(line);
  fclose(f);
  return rc;
}

static int clientUsage(void) {
  fputs("usage: tqmon query add FILE.tq [--name N] [--persistent-data] [--persistent-collection] [--phase current|global]\n"
        "                 [--histogram ATTRIBUTE[:BUCKETS]]\n"
        "       tqmon query list | rm NAME | watch NAME | stats\n"
        "       tqmon phase start NAME\n"
        "  each with [--socket PATH] (default $TQMON_SOCKET, $XDG_RUNTIME_DIR/tqmon/daemon.sock, /tmp/tqmon-UID/daemon.sock)\n",
        stderr);
  return 2;
}

int appClient(int argc, char **argv) {
  /* argv[0] is "query" or "phase" */
  char *path = NULL;
  const char *words[4] = {NULL, NULL, NULL, NULL}, *name = NULL, *scope = NULL, *hist = NULL;
  int nw = 0, pdata = 0, pcoll = 0;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--socket") && i + 1 < argc) {
      free(path);
      path = tqStrdup(argv[++i]);
    } else if (!strcmp(s, "--name") && i + 1 < argc) name = argv[++i];
    else if (!strcmp(s, "--phase") && i + 1 < argc) scope = argv[++i];
    else if (!strcmp(s, "--histogram") && i + 1 < argc) hist = argv[++i];
    else if (!strcmp(s, "--persistent-data")) pdata = 1;
    else if (!strcmp(s, "--persistent-collection")) pcoll = 1;
    else if (s[0] == '-' && s[1] == '-') {
      fprintf(stderr, "tqmon %s: unknown option %s\n", argv[0], s);
      free(path);
      return clientUsage();
    } else if (nw < 4) words[nw++] = s;
  }
  if (!path) path = appDaemonSocketPath();
  int rc = 2;
  TqBuf req = {0};
  const char *verb = words[0] ? words[0] : "";
  if (!strcmp(argv[0], "phase")) {
    if (!strcmp(verb, "start") && nw == 2) tqBufPrintf(&req, "phase %s\n", words[1]);
  } else if (!strcmp(verb, "add") && nw == 2) {
    const char *file = words[1];
    TqDiag dg = {0};
    TqSource *src = tqSourceRead(file, &dg);
    if (!src) {
      fputs(dg.out.s ? dg.out.s : "tqmon: cannot read the query file\n", stderr);
      tqDiagFree(&dg);
      free(path);
      return 1;
    }
    tqDiagFree(&dg);
    if (!name) { /* the file's name without its folder and .tq */
      const char *b = strrchr(file, '/');
      b = b ? b + 1 : file;
      size_t k = strlen(b);
      if (k > 3 && !strcmp(b + k - 3, ".tq")) k -= 3;
      static char nb[64];
      snprintf(nb, sizeof nb, "%.*s", (int)(k < 63 ? k : 63), b);
      for (char *p = nb; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
      name = nb;
    }
    if (scope && strcmp(scope, "current") && strcmp(scope, "global")) {
      fprintf(stderr, "tqmon query add: --phase is current or global, not '%s'\n", scope);
    } else {
      TqBuf fl = {0};
      if (pdata) tqBufPuts(&fl, "persistent-data");
      if (pcoll) tqBufPrintf(&fl, "%spersistent-collection", fl.n ? "," : "");
      if (scope && !strcmp(scope, "current")) tqBufPrintf(&fl, "%scurrent-phase", fl.n ? "," : "");
      if (hist) tqBufPrintf(&fl, "%shistogram=%s%s", fl.n ? "," : "", hist, strchr(hist, ':') ? "" : ":1000");
      tqBufPrintf(&req, "add %s %s %zu %s\n", name, fl.n ? fl.s : "-", src->len, file);
      tqBufAdd(&req, src->text, src->len);
      tqBufFree(&fl);
    }
    tqSourceFree(src);
  } else if ((!strcmp(verb, "rm") || !strcmp(verb, "watch")) && nw == 2) {
    tqBufPrintf(&req, "%s %s\n", verb, words[1]);
  } else if ((!strcmp(verb, "list") || !strcmp(verb, "stats")) && nw == 1) {
    tqBufPrintf(&req, "%s\n", verb);
  }
  if (req.n) rc = converse(path, req.s, req.n);
  else if (!(words[0] && !strcmp(words[0], "add") && nw == 2)) clientUsage();
  tqBufFree(&req);
  free(path);
  return rc;
}
