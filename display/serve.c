/*
** serve.c - the live page: a small HTTP server (one thread, poll) that
** serves the display page while the run goes on and streams each new step
** to the open pages as server-sent events.
**
**   GET /                 the page, with the steps so far (live: it then
**                         asks for the next ones)
**   GET /events?from=N    text/event-stream: "step" events from step N + 1,
**                         then one "end" event when the run is over; a
**                         "reset" event when step N + 1 is no longer kept
**                         (the page then loads itself again)
**   GET /model.json       the model so far
** Loopback (127.0.0.1) unless an address is given.  The run thread only
** appends steps to the history (history.c) under a mutex and wakes the
** server; the server thread never touches the model.
**
** Hostile or slow clients cannot stop the run (issue 15):
**   - every field of a request is checked: the request line (method, target,
**     version), the path, the query (from= a step number up to the last one),
**     the header lines; anything else is answered 400 (405, 404, 431) with
**     the reason, and the connection closed;
**   - sockets are non-blocking and the mutex is held only to copy steps into
**     a client's own buffer (at most FILL_MAX bytes at a time), never while
**     sending;
**   - a connection must send its request within the idle limit (IDLE_MS,
**     --display idle=S); a client that takes nothing of what it is sent for
**     the stall limit (STALL_MS, --display stall=S) is dropped, and so is a
**     stream that falls behind the steps kept (it is told to reset);
**   - at most MAXCLIENT connections: a new one evicts the oldest that has not
**     sent a request yet, else it is refused; at most MAXBIG pages or models
**     are being sent at once (503 beyond).
** Every connection dropped this way is counted and reported on standard
** error at the end.  With linger, the end of the run waits for SIGINT or
** SIGTERM and then stops the server; without it the server stops once the
** streams have the end (at most 2 s).
*/
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dspInt.h"

#define MAXCLIENT 256
#define REQ_MAX 8192              /* bytes of a request (line and headers) */
#define IDLE_MS 10000             /* to send a whole request (default) */
#define STALL_MS 30000            /* to take any of what it is sent (default) */
#define FILL_MAX ((size_t)256 << 10) /* event bytes queued for a client at once */
#define MAXBIG 4                  /* pages and models being sent at once */
#define BATCH_MS 20               /* new steps handed to the streams at most this often */

enum { C_REQ = 1, C_SSE, C_RESP, C_CLOSING };
#define LINGER_MS 2000            /* reading what a client still sends after its answer */

typedef struct Client {
  int fd;
  int state;            /* C_REQ reading its request, C_SSE a stream, C_RESP sending its answer,
                           C_CLOSING answered: what it still sends is read and dropped, then
                           it is closed (closing with unread bytes would reset the answer away) */
  int big;              /* sending a page or a model (counted in nbig) */
  int rdEof;            /* it closed its side while its answer is sent */
  int64_t next;         /* stream: the next step to send */
  int64_t since;        /* ms: accepted, or the last byte taken */
  size_t nreq;
  char *out;            /* bytes to send: out[off .. nout) */
  size_t nout, off, cout;
  char req[REQ_MAX + 1];
} Client;

typedef struct ServeOut {
  DspOut o;
  int lfd;              /* listening socket */
  int wake[2];          /* pipe: the run thread wakes the server */
  pthread_t thread;
  pthread_mutex_t mu;   /* hist, header, ended, quit, streams */
  DspHistory *hist;
  char *header;         /* JSON header (live) */
  int ended;            /* the run is over */
  int quit;             /* the server stops */
  int streams;          /* event streams still open (for the end) */
  int woken;            /* a wake-up is in the pipe (one is enough) */
  int linger;
  int64_t idleMs;       /* a connection sends its request within this */
  int64_t stallMs;      /* a client takes some of what it is sent within this */
  Client *cl[MAXCLIENT];
  int ncl, nbig;
  /* connections dropped, by why (reported at the end) */
  int64_t nIdle, nStall, nBehind, nEvicted, nRefused, nBad;
} ServeOut;

static volatile sig_atomic_t stopServing;
static void onSignal(int sig) { stopServing = sig; }

static int64_t nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void dropClient(ServeOut *s, int i) {
  Client *c = s->cl[i];
  close(c->fd);
  if (c->big) s->nbig--;
  free(c->out);
  free(c);
  s->cl[i] = s->cl[--s->ncl];
}

static void queue(Client *c, const char *p, size_t n) {
  if (c->off == c->nout) c->off = c->nout = 0;
  if (c->nout + n > c->cout) {
    if (c->off) { /* slide down what is left */
      memmove(c->out, c->out + c->off, c->nout - c->off);
      c->nout -= c->off;
      c->off = 0;
    }
    if (c->nout + n > c->cout) {
      c->cout = c->nout + n > 2 * c->cout ? c->nout + n : 2 * c->cout;
      c->out = tqRealloc(c->out, c->cout);
    }
  }
  memcpy(c->out + c->nout, p, n);
  c->nout += n;
}

static void queueZ(Client *c, const char *p) { queue(c, p, strlen(p)); }

/* Sends what it can without blocking; -1 when the peer went away. */
static int flush(Client *c, int64_t now) {
  while (c->off < c->nout) {
    ssize_t w = send(c->fd, c->out + c->off, c->nout - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (w <= 0) return -1;
    c->off += (size_t)w;
    c->since = now;
  }
  return 0;
}

static const char *reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

/* Queues a whole response; the connection closes once it is sent. */
static void reply(Client *c, int status, const char *type, const char *body, size_t n) {
  char head[320];
  snprintf(head, sizeof head,
           "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-cache\r\n%s"
           "Connection: close\r\n\r\n",
           status, reason(status), type, n, status == 405 ? "Allow: GET\r\n" : "");
  queueZ(c, head);
  queue(c, body, n);
  c->state = C_RESP;
}

/* An error with its reason as text; what the client sent is echoed at most
** 60 characters long, printable ASCII only. */
static void refuse(ServeOut *s, Client *c, int status, const char *why, const char *what, size_t n) {
  TqBuf b = {0};
  tqBufPuts(&b, why);
  if (what) {
    tqBufPuts(&b, ": '");
    for (size_t i = 0; i < n && i < 60; i++) tqBufPrintf(&b, "%c", what[i] >= 0x20 && what[i] < 0x7f ? what[i] : '?');
    tqBufPuts(&b, n > 60 ? "...'" : "'");
  }
  tqBufPuts(&b, "\n");
  reply(c, status, "text/plain; charset=utf-8", b.s, b.n);
  tqBufFree(&b);
  s->nBad++;
}

static int isToken(const char *p, size_t n) {
  if (!n) return 0;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)p[i]) && !strchr("!#$%&'*+-.^_`|~", p[i])) return 0;
  return 1;
}

#define REFUSE(...) \
  do { \
    refuse(__VA_ARGS__); \
    return; \
  } while (0)

/* The model so far as JSON (mu held). */
static void modelJson(ServeOut *s, TqBuf *b) { dspHistoryModel(s->hist, s->header ? s->header : "{}", b); }

/* A whole request is in c->req[0 .. end): check every field, then answer. */
static void handle(ServeOut *s, Client *c, size_t end) {
  const char *r = c->req;
  if (memchr(r, 0, end)) REFUSE(s, c, 400, "a NUL byte in the request", NULL, 0);
  const char *eol = strstr(r, "\r\n");
  size_t nline = (size_t)(eol - r);
  /* request line: METHOD SP TARGET SP HTTP/1.x, printable, single spaces */
  const char *sp1 = memchr(r, ' ', nline), *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
  if (!sp1 || !sp2 || memchr(sp2 + 1, ' ', (size_t)(eol - sp2 - 1)))
    REFUSE(s, c, 400, "not a request line (METHOD /path HTTP/1.1)", r, nline);
  for (const char *p = r; p < eol; p++)
    if (*p < 0x20 || *p >= 0x7f) REFUSE(s, c, 400, "a request line of printable ASCII only", r, nline);
  size_t nmeth = (size_t)(sp1 - r), ntarget = (size_t)(sp2 - sp1 - 1), nver = (size_t)(eol - sp2 - 1);
  const char *target = sp1 + 1, *ver = sp2 + 1;
  if (!isToken(r, nmeth)) REFUSE(s, c, 400, "not a method", r, nmeth);
  if (!(nver == 8 && (!memcmp(ver, "HTTP/1.1", 8) || !memcmp(ver, "HTTP/1.0", 8))))
    REFUSE(s, c, 400, "not HTTP/1.0 or HTTP/1.1", ver, nver);
  /* header lines: NAME: value; no body (a GET has none) */
  for (const char *h = eol + 2; h < r + end - 2;) {
    const char *e = strstr(h, "\r\n");
    const char *colon = memchr(h, ':', (size_t)(e - h));
    if (!colon || !isToken(h, (size_t)(colon - h))) REFUSE(s, c, 400, "not a header line (Name: value)", h, (size_t)(e - h));
    for (const char *p = colon + 1; p < e; p++)
      if ((*p < 0x20 && *p != '\t') || *p == 0x7f) REFUSE(s, c, 400, "a control character in a header", h, (size_t)(e - h));
    size_t nn = (size_t)(colon - h);
    const char *v = colon + 1;
    while (v < e && (*v == ' ' || *v == '\t')) v++;
    if ((nn == 14 && !strncasecmp(h, "Content-Length", 14) && !(e - v == 1 && *v == '0')) ||
        (nn == 17 && !strncasecmp(h, "Transfer-Encoding", 17)))
      REFUSE(s, c, 400, "a request with a body (only GET without one)", h, (size_t)(e - h));
    h = e + 2;
  }
  if (nmeth != 3 || memcmp(r, "GET", 3)) REFUSE(s, c, 405, "only GET", r, nmeth);
  if (!ntarget || target[0] != '/') REFUSE(s, c, 400, "the target must be a path", target, ntarget);
  const char *q = memchr(target, '?', ntarget);
  size_t npath = q ? (size_t)(q - target) : ntarget;
  const char *query = q ? q + 1 : NULL;
  size_t nquery = q ? ntarget - npath - 1 : 0;
  int isEvents = npath == 7 && !memcmp(target, "/events", 7);
  int isPage = (npath == 1) || (npath == 11 && !memcmp(target, "/index.html", 11));
  int isModel = npath == 11 && !memcmp(target, "/model.json", 11);
  if (!isEvents && !isPage && !isModel) {
    reply(c, 404, "text/plain; charset=utf-8", "not found\n", 10);
    return;
  }
  if (!isEvents && q) REFUSE(s, c, 400, "this path takes no query", target, ntarget);
  int64_t from = 0;
  if (isEvents && q) {
    /* exactly from=N: N a step number, digits only, at most the last step */
    if (nquery < 6 || memcmp(query, "from=", 5)) REFUSE(s, c, 400, "the only query is from=STEP", query, nquery);
    const char *d = query + 5;
    size_t nd = nquery - 5;
    if (nd > 18) REFUSE(s, c, 400, "from must be a step number", d, nd);
    for (size_t i = 0; i < nd; i++) {
      if (!isdigit((unsigned char)d[i])) REFUSE(s, c, 400, "from must be a step number (digits)", d, nd);
      from = from * 10 + (d[i] - '0');
    }
  }
  pthread_mutex_lock(&s->mu);
  int64_t last = dspHistoryLast(s->hist);
  if (isEvents) {
    pthread_mutex_unlock(&s->mu);
    if (from > last) {
      char why[96];
      snprintf(why, sizeof why, "from must be a step number from 0 to %lld (the last step so far)", (long long)last);
      REFUSE(s, c, 400, why, query + 5, nquery - 5);
    }
    c->state = C_SSE;
    c->next = from + 1;
    queueZ(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
              "Connection: keep-alive\r\n\r\nretry: 1000\n\n");
    pthread_mutex_lock(&s->mu);
    s->streams++;
    pthread_mutex_unlock(&s->mu);
    return;
  }
  if (s->nbig >= MAXBIG) {
    pthread_mutex_unlock(&s->mu);
    reply(c, 503, "text/plain; charset=utf-8", "busy: try again\n", 16);
    return;
  }
  TqBuf body = {0};
  if (isPage) {
    const char *mark = "/*TQMON_MODEL*/", *at = strstr(dspPageHtml, mark);
    tqBufAdd(&body, dspPageHtml, (size_t)(at - dspPageHtml));
    modelJson(s, &body);
    tqBufPuts(&body, at + strlen(mark));
  } else {
    modelJson(s, &body);
  }
  pthread_mutex_unlock(&s->mu);
  reply(c, 200, isPage ? "text/html; charset=utf-8" : "application/json", body.s, body.n);
  tqBufFree(&body);
  c->big = 1;
  s->nbig++;
}

/* Reads what a client sent (POLLIN); -1 to drop it. */
static int readClient(ServeOut *s, Client *c) {
  if (c->state != C_REQ) { /* a stream or a response: a close, or bytes to ignore */
    char buf[512];
    ssize_t r = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r == 0 && c->state == C_RESP) { /* half closed: it still gets its answer */
      c->rdEof = 1;
      return 0;
    }
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return -1;
    return 0;
  }
  ssize_t r = recv(c->fd, c->req + c->nreq, REQ_MAX - c->nreq, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
  if (r <= 0) return -1;
  size_t was = c->nreq;
  c->nreq += (size_t)r;
  c->req[c->nreq] = 0;
  /* the end of the headers, looked for from just before the new bytes */
  size_t from = was > 3 ? was - 3 : 0;
  for (size_t i = from; i + 4 <= c->nreq; i++)
    if (!memcmp(c->req + i, "\r\n\r\n", 4)) {
      handle(s, c, i + 4);
      return 0;
    }
  if (c->nreq == REQ_MAX) refuse(s, c, 431, "a request longer than 8192 bytes", NULL, 0);
  return 0;
}

/* Queues for each stream the steps it has not seen (mu held, no sending). */
static void fillStreams(ServeOut *s) {
  int64_t first = dspHistoryFirst(s->hist), last = dspHistoryLast(s->hist);
  for (int i = 0; i < s->ncl; i++) {
    Client *c = s->cl[i];
    if (c->state != C_SSE) continue;
    if (c->next < first && c->next <= last) {
      /* fallen behind what is kept: the page loads itself again */
      queueZ(c, "event: reset\ndata: {}\n\n");
      c->state = C_RESP;
      s->streams--;
      s->nBehind++;
      continue;
    }
    while (c->next <= last && c->nout - c->off < FILL_MAX) {
      const char *js = dspHistoryAt(s->hist, c->next++);
      queueZ(c, "event: step\ndata: ");
      queueZ(c, js);
      queueZ(c, "\n\n");
    }
    if (s->ended && c->next > last) {
      queueZ(c, "event: end\ndata: {}\n\n");
      c->state = C_RESP; /* the stream is complete */
      s->streams--;
    }
  }
}

static void acceptClients(ServeOut *s, int64_t now) {
  for (;;) {
    int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (s->ncl == MAXCLIENT) {
      /* evict the oldest connection that has not sent its request */
      int old = -1;
      for (int i = 0; i < s->ncl; i++)
        if (s->cl[i]->state == C_REQ && (old < 0 || s->cl[i]->since < s->cl[old]->since)) old = i;
      if (old < 0) {
        close(fd);
        s->nRefused++;
        continue;
      }
      dropClient(s, old);
      s->nEvicted++;
    }
    Client *c = tqCalloc(1, sizeof *c);
    c->fd = fd;
    c->state = C_REQ;
    c->since = now;
    s->cl[s->ncl++] = c;
  }
}

static void *serverMain(void *arg) {
  ServeOut *s = arg;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  struct pollfd p[MAXCLIENT + 2];
  int64_t lastFill = 0;
  for (;;) {
    /* new steps are taken at most every BATCH_MS: a run drawing thousands
    ** of steps a second is not slowed by a wake-up for each */
    int64_t wait = BATCH_MS - (nowMs() - lastFill);
    p[0] = (struct pollfd){s->lfd, POLLIN, 0};
    p[1] = (struct pollfd){wait > 0 ? -1 : s->wake[0], POLLIN, 0};
    int ncl = s->ncl;
    for (int i = 0; i < ncl; i++) {
      Client *c = s->cl[i];
      short ev = c->rdEof ? 0 : POLLIN;
      if (c->off < c->nout) ev |= POLLOUT;
      p[2 + i] = (struct pollfd){c->fd, ev, 0};
    }
    if (poll(p, (nfds_t)(2 + ncl), wait > 0 ? (int)wait : 500) < 0 && errno != EINTR) break;
    int64_t now = nowMs();
    if (p[1].revents) {
      char buf[256];
      while (read(s->wake[0], buf, sizeof buf) > 0) {
      }
    }
    pthread_mutex_lock(&s->mu);
    int quit = s->quit;
    if (p[1].revents) s->woken = 0;
    pthread_mutex_unlock(&s->mu);
    if (quit) break;
    /* what clients sent, from the last (dropping moves the last client into i) */
    for (int i = ncl - 1; i >= 0; i--) {
      if (!p[2 + i].revents) continue;
      Client *c = s->cl[i];
      int gone = (p[2 + i].revents & (POLLERR | POLLNVAL)) != 0;
      if (!gone && (p[2 + i].revents & (POLLIN | POLLHUP))) gone = readClient(s, c) < 0;
      if (gone) {
        if (c->state == C_SSE) {
          pthread_mutex_lock(&s->mu);
          s->streams--;
          pthread_mutex_unlock(&s->mu);
        }
        dropClient(s, i);
      }
    }
    if (p[0].revents & POLLIN) acceptClients(s, now);
    /* steps for the streams: copied under the mutex, sent without it */
    pthread_mutex_lock(&s->mu);
    fillStreams(s);
    pthread_mutex_unlock(&s->mu);
    lastFill = now;
    for (int i = s->ncl - 1; i >= 0; i--) {
      Client *c = s->cl[i];
      int drop = flush(c, now) < 0;
      if (!drop && c->state == C_RESP && c->off == c->nout && c->rdEof) drop = 1;
      if (!drop && c->state == C_RESP && c->off == c->nout) { /* all sent */
        shutdown(c->fd, SHUT_WR);
        c->state = C_CLOSING;
        c->since = now;
      }
      if (!drop && c->state == C_CLOSING && now - c->since > LINGER_MS) drop = 1;
      if (!drop && c->state == C_REQ && now - c->since > s->idleMs) {
        s->nIdle++;
        drop = 1;
      }
      if (!drop && c->off < c->nout && now - c->since > s->stallMs) {
        s->nStall++;
        drop = 1;
      }
      if (drop) {
        if (c->state == C_SSE) {
          pthread_mutex_lock(&s->mu);
          s->streams--;
          pthread_mutex_unlock(&s->mu);
        }
        dropClient(s, i);
      }
    }
  }
  return NULL;
}

static void wakeServer(ServeOut *s) {
  char c = 1;
  if (write(s->wake[1], &c, 1) < 0) {
    /* the pipe is full: the server is awake anyway */
  }
}

static void serveStep(void *self, DspModel *m, const DspStep *st) {
  ServeOut *s = self;
  TqBuf hd = {0};
  dspHeaderJson(m, &hd, 1);
  pthread_mutex_lock(&s->mu);
  dspHistoryStep(s->hist, m, st);
  free(s->header);
  s->header = hd.s;
  int wake = !s->woken;
  s->woken = 1;
  pthread_mutex_unlock(&s->mu);
  if (wake) wakeServer(s);
}

static int serveEnd(void *self, DspModel *m) {
  ServeOut *s = self;
  TqBuf hd = {0};
  dspHeaderJson(m, &hd, 1);
  pthread_mutex_lock(&s->mu);
  free(s->header);
  s->header = hd.s;
  s->ended = 1;
  pthread_mutex_unlock(&s->mu);
  wakeServer(s);
  if (s->linger) {
    struct sigaction sa = {0}, oldInt, oldTerm;
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    stopServing = 0;
    sigaction(SIGINT, &sa, &oldInt);
    sigaction(SIGTERM, &sa, &oldTerm);
    fprintf(stderr, "tqmon: the run is over; still serving the page (interrupt to stop)\n");
    while (!stopServing) {
      struct timespec ts = {0, 100 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    sigaction(SIGINT, &oldInt, NULL);
    sigaction(SIGTERM, &oldTerm, NULL);
  } else {
    /* let the open streams take the end (at most 2 s: a stream that does
    ** not read is not waited for) */
    for (int i = 0; i < 40; i++) {
      pthread_mutex_lock(&s->mu);
      int open = s->streams;
      pthread_mutex_unlock(&s->mu);
      if (!open) break;
      struct timespec ts = {0, 50 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  pthread_mutex_lock(&s->mu);
  s->quit = 1;
  pthread_mutex_unlock(&s->mu);
  wakeServer(s);
  pthread_join(s->thread, NULL);
  for (int i = 0; i < s->ncl; i++) {
    close(s->cl[i]->fd);
    free(s->cl[i]->out);
    free(s->cl[i]);
  }
  if (s->nIdle || s->nStall || s->nBehind || s->nEvicted || s->nRefused || s->nBad)
    fprintf(stderr,
            "tqmon: serve: connections dropped: %lld idle (no request in %g s), %lld not reading (%g s), %lld behind the "
            "steps kept, %lld evicted and %lld refused (%d open at most); %lld bad requests answered\n",
            (long long)s->nIdle, (double)s->idleMs / 1000, (long long)s->nStall, (double)s->stallMs / 1000, (long long)s->nBehind,
            (long long)s->nEvicted, (long long)s->nRefused, MAXCLIENT, (long long)s->nBad);
  dspHistoryNote(s->hist, "the served page", dspHistoryBudget(s->hist));
  close(s->lfd);
  close(s->wake[0]);
  close(s->wake[1]);
  dspHistoryFree(s->hist);
  free(s->header);
  pthread_mutex_destroy(&s->mu);
  free(s);
  return 0;
}

DspOut *dspServeOut(DspModel *m, const char *addr, int port, int linger, size_t history, const DspServeLimits *lim,
                    TqBuf *err) {
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    tqBufPrintf(err, "serve: '%s' is not an IPv4 address", addr);
    return NULL;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (fd < 0) {
    tqBufPrintf(err, "serve: socket: %s", strerror(errno));
    return NULL;
  }
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof sa;
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 64) || getsockname(fd, (struct sockaddr *)&sa, &len)) {
    tqBufPrintf(err, "serve: cannot listen on %s:%d: %s", addr, port, strerror(errno));
    close(fd);
    return NULL;
  }
  ServeOut *s = tqCalloc(1, sizeof *s);
  s->lfd = fd;
  s->linger = linger;
  s->idleMs = lim && lim->idleMs > 0 ? lim->idleMs : IDLE_MS;
  s->stallMs = lim && lim->stallMs > 0 ? lim->stallMs : STALL_MS;
  if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK)) {
    tqBufPrintf(err, "serve: pipe: %s", strerror(errno));
    close(fd);
    free(s);
    return NULL;
  }
  pthread_mutex_init(&s->mu, NULL);
  s->hist = dspHistoryNew(history);
  TqBuf hd = {0};
  dspHeaderJson(m, &hd, 1);
  s->header = hd.s;
  s->o.self = s;
  s->o.step = serveStep;
  s->o.end = serveEnd;
  if (pthread_create(&s->thread, NULL, serverMain, s)) {
    tqBufPrintf(err, "serve: cannot start the server thread");
    close(fd);
    close(s->wake[0]);
    close(s->wake[1]);
    pthread_mutex_destroy(&s->mu);
    dspHistoryFree(s->hist);
    free(s->header);
    free(s);
    return NULL;
  }
  fprintf(stderr, "tqmon: serving the display on http://%s:%d/\n", addr, ntohs(sa.sin_port));
  return &s->o;
}
