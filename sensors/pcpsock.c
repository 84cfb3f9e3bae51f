/*
** pcpsock.c - the bytes a PCP context receives, as the kernel counts them
** on its socket (the pcp PM's "bytes_received" in --stats).  libpcp reads
** with recv, which /proc/self/io does not count, and does not give a
** context's descriptor: the socket is found among the process's
** descriptors by its peer.  Apart from pcp.c because <linux/tcp.h> (a
** struct tcp_info with tcpi_bytes_received) cannot be included beside
** the libc headers libpcp's pull in.
*/
#include <dirent.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int pcpSocketBytes(int fd, int64_t *bytes);
int pcpSocketOf(const char *spec, const int *taken, int n);

int pcpSocketBytes(int fd, int64_t *bytes) {
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) || len < sizeof ti) return -1;
  *bytes = (int64_t)ti.tcpi_bytes_received;
  return 0;
}

/* Is peer the address a? */
static int samePeer(const struct sockaddr_storage *peer, const struct addrinfo *a) {
  if (peer->ss_family == AF_INET && a->ai_family == AF_INET) {
    const struct sockaddr_in *x = (const void *)peer, *y = (const void *)a->ai_addr;
    return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
  }
  if (peer->ss_family == AF_INET6 && a->ai_family == AF_INET6) {
    const struct sockaddr_in6 *x = (const void *)peer, *y = (const void *)a->ai_addr;
    return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr);
  }
  return 0;
}

/* (through pmproxy, HOST@PROXY[:PORT] or PMPROXY_HOST, the socket is the
** proxy's: pmproxy's port is 44322 by default) */
int pcpSocketOf(const char *spec, const int *taken, int n) {
  char host[512], *port = NULL;
  const char *at = strchr(spec, '@'), *env = getenv("PMPROXY_HOST");
  const char *dflt = at || (env && *env) ? "44322" : "44321";
  if (at) snprintf(host, sizeof host, "%s", at + 1);
  else if (env && *env) snprintf(host, sizeof host, "%s", env);
  else snprintf(host, sizeof host, "%s", spec);
  if (strchr(host, '/') || !strncmp(host, "local:", 6) || !strncmp(host, "unix:", 5)) return -1;
  char *colon = strrchr(host, ':');
  if (colon && !strchr(colon, ']')) {
    *colon = 0;
    port = colon + 1;
  } else if (!at && env && *env && getenv("PMPROXY_PORT")) {
    port = getenv("PMPROXY_PORT");
  }
  char *name = host;
  if (name[0] == '[') {
    name++;
    name[strcspn(name, "]")] = 0;
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
  if (getaddrinfo(name, port ? port : dflt, &hints, &ai)) return -1;
  int found = -1;
  DIR *d = opendir("/proc/self/fd");
  struct dirent *de;
  while (d && found < 0 && (de = readdir(d))) {
    if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
    int fd = atoi(de->d_name), other = 0;
    for (int i = 0; i < n; i++) other |= taken[i] == fd;
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    if (other || getpeername(fd, (struct sockaddr *)&peer, &len)) continue;
    for (const struct addrinfo *a = ai; a && found < 0; a = a->ai_next)
      if (samePeer(&peer, a)) found = fd;
  }
  if (d) closedir(d);
  freeaddrinfo(ai);
  return found;
}
