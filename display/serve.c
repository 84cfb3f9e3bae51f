/*
** serve.c - the live page: a small HTTP server (one thread, poll) that
** serves the display page while the run goes on and streams each new step
** to the open pages as server-sent events.
**
**   GET /                 the page, with the steps so far (live: it then
**                         asks for the next ones)
**   GET /events?from=N    text/event-stream: "step" events from step N + 1,
**                         then one "end" event when the run is over
**   GET /model.json       the model so far
** Loopback (127.0.0.1) unless an address is given.  The run thread only
** appends steps (a mutex and a wake-up pipe); the server thread never
** touches the model.  With linger, the end of the run waits for SIGINT or
** SIGTERM and then stops the server; without it the server stops at once.
*/
#include <arpa/inet.h>
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

#define MAXCLIENT 64

typedef struct Client {
  int fd;
  int sse;              /* an event stream: next step to send */
  int64_t next;
  char req[2048];
  size_t nreq;
} Client;

typedef struct ServeOut {
  DspOut o;
  int lfd;              /* listening socket */
  int wake[2];          /* pipe: the run thread wakes the server */
  pthread_t thread;
  pthread_mutex_t mu;
  TqVec steps;          /* char* JSON of each step (owned) */
  char *header;         /* JSON header (live) */
  int ended;            /* the run is over */
  int quit;             /* the server stops */
  int linger;
  Client cl[MAXCLIENT];
  int ncl;
} ServeOut;

static volatile sig_atomic_t stopServing;
static void onSignal(int sig) { stopServing = sig; }

/* Writes all of buf (blocking); -1 when the peer went away. */
static int sendAll(int fd, const char *buf, size_t n) {
  while (n) {
    ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

static void dropClient(ServeOut *s, int i) {
  close(s->cl[i].fd);
  s->cl[i] = s->cl[--s->ncl];
}

/* The whole model so far as JSON: {"header":...,"steps":[...]} (mu held). */
static void modelJson(ServeOut *s, TqBuf *b) {
  tqBufPrintf(b, "{\"header\":%s,\"steps\":[", s->header ? s->header : "{}");
  for (int i = 0; i < s->steps.n; i++) {
    if (i) tqBufPuts(b, ",\n");
    tqBufPuts(b, s->steps.v[i]);
  }
  tqBufPuts(b, "]}");
}

static void respond(ServeOut *s, int i) {
  Client *c = &s->cl[i];
  char path[512] = "";
  sscanf(c->req, "GET %511s", path);
  TqBuf body = {0};
  const char *type = "text/html; charset=utf-8";
  int status = 200;
  if (!strncmp(c->req, "GET ", 4) && !strncmp(path, "/events", 7)) {
    const char *f = strstr(path, "from=");
    c->sse = 1;
    c->next = f ? atoll(f + 5) : 0;
    const char *h = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                    "Connection: keep-alive\r\n\r\nretry: 1000\n\n";
    if (sendAll(c->fd, h, strlen(h))) dropClient(s, i);
    return;
  }
  pthread_mutex_lock(&s->mu);
  if (strncmp(c->req, "GET ", 4)) {
    status = 405;
    tqBufPuts(&body, "only GET\n");
    type = "text/plain";
  } else if (!strcmp(path, "/") || !strcmp(path, "/index.html")) {
    const char *mark = "/*TQMON_MODEL*/", *at = strstr(dspPageHtml, mark);
    tqBufAdd(&body, dspPageHtml, (size_t)(at - dspPageHtml));
    modelJson(s, &body);
    tqBufPuts(&body, at + strlen(mark));
  } else if (!strcmp(path, "/model.json")) {
    modelJson(s, &body);
    type = "application/json";
  } else {
    status = 404;
    tqBufPuts(&body, "not found\n");
    type = "text/plain";
  }
  pthread_mutex_unlock(&s->mu);
  char head[256];
  snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
           status, status == 200 ? "OK" : status == 404 ? "Not Found" : "Method Not Allowed", type, body.n);
  sendAll(c->fd, head, strlen(head));
  if (body.n) sendAll(c->fd, body.s, body.n);
  tqBufFree(&body);
  dropClient(s, i);
}

/* Sends the event streams what they have not seen (mu not held). */
static void pushEvents(ServeOut *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->steps.n, ended = s->ended;
  for (int i = 0; i < s->ncl; i++) {
    Client *c = &s->cl[i];
    if (!c->sse) continue;
    int bad = 0;
    while (!bad && c->next < n) {
      const char *js = s->steps.v[c->next++];
      bad = sendAll(c->fd, "event: step\ndata: ", 18) || sendAll(c->fd, js, strlen(js)) || sendAll(c->fd, "\n\n", 2);
    }
    if (!bad && ended) {
      sendAll(c->fd, "event: end\ndata: {}\n\n", 21);
      bad = 1; /* the stream is complete */
    }
    if (bad) dropClient(s, i--);
  }
  pthread_mutex_unlock(&s->mu);
}

static void *serverMain(void *arg) {
  ServeOut *s = arg;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  for (;;) {
    struct pollfd p[MAXCLIENT + 2];
    p[0] = (struct pollfd){s->lfd, POLLIN, 0};
    p[1] = (struct pollfd){s->wake[0], POLLIN, 0};
    for (int i = 0; i < s->ncl; i++) p[2 + i] = (struct pollfd){s->cl[i].fd, POLLIN, 0};
    int ncl = s->ncl;
    if (poll(p, (nfds_t)(2 + ncl), 1000) < 0 && errno != EINTR) break;
    if (p[1].revents) {
      char buf[256];
      while (read(s->wake[0], buf, sizeof buf) > 0) {
      }
    }
    pthread_mutex_lock(&s->mu);
    int quit = s->quit;
    pthread_mutex_unlock(&s->mu);
    if (quit) break;
    /* requests (from the last: dropping moves the last client into i) */
    for (int i = ncl - 1; i >= 0; i--) {
      if (!p[2 + i].revents) continue;
      Client *c = &s->cl[i];
      if (c->sse) { /* a browser closing its stream */
        char buf[256];
        if (recv(c->fd, buf, sizeof buf, MSG_DONTWAIT) <= 0) dropClient(s, i);
        continue;
      }
      ssize_t r = recv(c->fd, c->req + c->nreq, sizeof c->req - 1 - c->nreq, MSG_DONTWAIT);
      if (r <= 0) {
        dropClient(s, i);
        continue;
      }
      c->nreq += (size_t)r;
      c->req[c->nreq] = 0;
      if (strstr(c->req, "\r\n\r\n") || c->nreq == sizeof c->req - 1) respond(s, i);
    }
    if (p[0].revents & POLLIN) {
      int fd = accept(s->lfd, NULL, NULL);
      if (fd >= 0) {
        if (s->ncl == MAXCLIENT) {
          close(fd);
        } else {
          s->cl[s->ncl] = (Client){0};
          s->cl[s->ncl++].fd = fd;
        }
      }
    }
    pushEvents(s);
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
  TqBuf js = {0}, hd = {0};
  dspStepJson(m, st, &js);
  dspHeaderJson(m, &hd, 1);
  pthread_mutex_lock(&s->mu);
  tqVecPush(&s->steps, js.s);
  free(s->header);
  s->header = hd.s;
  pthread_mutex_unlock(&s->mu);
  wakeServer(s);
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
    /* let the open streams read the end */
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  pthread_mutex_lock(&s->mu);
  s->quit = 1;
  pthread_mutex_unlock(&s->mu);
  wakeServer(s);
  pthread_join(s->thread, NULL);
  for (int i = 0; i < s->ncl; i++) close(s->cl[i].fd);
  close(s->lfd);
  close(s->wake[0]);
  close(s->wake[1]);
  for (int i = 0; i < s->steps.n; i++) free(s->steps.v[i]);
  tqVecFree(&s->steps);
  free(s->header);
  pthread_mutex_destroy(&s->mu);
  free(s);
  return 0;
}

DspOut *dspServeOut(DspModel *m, const char *addr, int port, int linger, TqBuf *err) {
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    tqBufPrintf(err, "serve: '%s' is not an IPv4 address", addr);
    return NULL;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0) {
    tqBufPrintf(err, "serve: socket: %s", strerror(errno));
    return NULL;
  }
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof sa;
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 16) || getsockname(fd, (struct sockaddr *)&sa, &len)) {
    tqBufPrintf(err, "serve: cannot listen on %s:%d: %s", addr, port, strerror(errno));
    close(fd);
    return NULL;
  }
  ServeOut *s = tqCalloc(1, sizeof *s);
  s->lfd = fd;
  s->linger = linger;
  if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK)) {
    tqBufPrintf(err, "serve: pipe: %s", strerror(errno));
    close(fd);
    free(s);
    return NULL;
  }
  pthread_mutex_init(&s->mu, NULL);
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
    free(s->header);
    free(s);
    return NULL;
  }
  fprintf(stderr, "tqmon: serving the display on http://%s:%d/\n", addr, ntohs(sa.sin_port));
  return &s->o;
}
