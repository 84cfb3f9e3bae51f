/*
** engine_pm.c - the PM registry: registering processor modules (offered
** by name, from the client, or NAME.so from the PM path), checking their
** interface version, groupers' members, the call order of their
** dependencies, their privileges, and calling them: a status of ERROR
** disables a PM and tells its dependents, FATAL stops the operation.
*/
#include <dlfcn.h>
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engineInt.h"

static int registerName(tq_engine *e, const char *name, const char *args, int depth);

/* ================================================================ PM calls */

/* Acts on the status a PM returned from any of its functions: a warning is
** logged; an error disables the PM and tells the PMs that depend on it; a
** fatal status stops the operation.  Returns st. */
int enPmStatus(tq_engine *e, EnPm *m, int st) {
  m->priv.status = st;
  int reported = e->diag.nerr > 0; /* a built-in PM reported with file:line:col */
  if (st == TQ_PM_WARNING) {
    if (!reported) enLog(&e->g, &m->priv, TQ_LOG_WARNING, "%s", m->priv.message[0] ? m->priv.message : "a warning");
  } else if (st == TQ_PM_ERROR) {
    if (!reported)
      enLog(&e->g, &m->priv, TQ_LOG_WARNING, "disabled after an error%s%s", m->priv.message[0] ? ": " : "", m->priv.message);
    m->priv.disabled = 1;
    /* tell the PMs that depend on it; one that disables itself in turn
    ** tells its own dependents, one that is fatal stops the operation */
    for (int i = 0; i < e->npm; i++) {
      EnPm *d = e->pm[i];
      for (int k = 0; k < d->priv.ndepends; k++)
        if (!strcasecmp(d->priv.depends[k], m->pm->name)) {
          if (!d->priv.disabled) enCallPm(e, d, TQ_PM_DEP_DISABLED, NULL);
          break;
        }
    }
  } else if (st == TQ_PM_FATAL) {
    if (!reported)
      enLog(&e->g, &m->priv, TQ_LOG_ERROR, "fatal error%s%s: stopping", m->priv.message[0] ? ": " : "", m->priv.message);
    e->fatal = e->halted = 1;
  }
  return st;
}

int64_t enCallPm(tq_engine *e, EnPm *m, int what, const tq_record_set *rs) {
  if (!m->pm->call) return TQ_PM_OK;
  m->calls++;
  return enPmStatus(e, m, m->pm->call(&e->g, &m->priv, what, rs));
}

/* ================================================================ registry */

static EnPm *findPm(tq_engine *e, const char *name) {
  for (int i = 0; i < e->npm; i++)
    if (!strcasecmp(e->pm[i]->pm->name, name)) return e->pm[i];
  return NULL;
}

/* Loads pm: init with a fresh private context (data set to data first),
** a GROUPER's members after it.  Returns 0 or -1. */
static int addPm(tq_engine *e, const tq_pm *pm, const char *args, void *dl, void *data) {
  if (!pm || pm->version < TQ_PM_VERSION_MIN || pm->version > TQ_PM_VERSION)
    return enFail(e, "processor module %s: interface version %d, this engine speaks %d to %d",
                pm && pm->name ? pm->name : "?", pm ? pm->version : 0, TQ_PM_VERSION_MIN, TQ_PM_VERSION);
  if (!pm->name || !pm->init) return enFail(e, "processor module without a name or init function");
  EnPm *old = findPm(e, pm->name);
  if (old) {
    /* registered already (a grouper member, say): arguments given now win;
    ** the same PM with other arguments is a second instance */
    if (!args || (old->priv.args && !strcmp(old->priv.args, args))) return 0;
    if (!old->priv.args) {
      old->argsCopy = tqStrdup(args);
      old->priv.args = old->argsCopy;
      tq_pm_private fresh = {0};
      fresh.rel = -1;
      fresh.args = old->priv.args;
      old->priv = fresh;
      return pm->init(&e->g, &old->priv) == TQ_PM_OK ? 0 : enFail(e, "processor module %s failed to initialize", pm->name);
    }
  }
  EnPm *m = tqCalloc(1, sizeof *m);
  m->pm = pm;
  m->dl = dl;
  m->priv.rel = -1;
  m->priv.data = data;
  if (args) {
    m->argsCopy = tqStrdup(args);
    m->priv.args = m->argsCopy;
  }
  int st = pm->init(&e->g, &m->priv);
  if (st != TQ_PM_OK && st != TQ_PM_WARNING) {
    enFail(e, "processor module %s failed to initialize%s%s", pm->name, m->priv.message[0] ? ": " : "", m->priv.message);
    free(m->argsCopy);
    free(m);
    return -1;
  }
  if (e->npm == e->cpm) {
    e->cpm = e->cpm ? 2 * e->cpm : 16;
    e->pm = tqRealloc(e->pm, sizeof(EnPm *) * (size_t)e->cpm);
  }
  e->pm[e->npm++] = m;
  if (m->priv.caps & TQ_PM_GROUPER) {
    for (int i = 0; i < m->priv.nmembers; i++) {
      int before = e->npm;
      if (registerName(e, m->priv.members[i], NULL, 1)) return -1;
      for (int k = before; k < e->npm; k++) e->pm[k]->member = 1;
    }
  }
  return 0;
}

int tq_register_pm(tq_engine *e, const tq_pm *pm, const char *args) {
  tqBufFree(&e->errs);
  if (e->state) {
    enFail(e, "processor modules are registered before tq_prepare");
    enCollectErrors(e);
    return -1;
  }
  int rc = addPm(e, pm, args, NULL, NULL);
  enCollectErrors(e);
  return rc;
}

int enRegisterData(tq_engine *e, const tq_pm *pm, const char *args, void *data) {
  tqBufFree(&e->errs);
  int rc = e->state ? enFail(e, "processor modules are registered before tq_prepare") : addPm(e, pm, args, NULL, data);
  enCollectErrors(e);
  return rc;
}

void enOffer(tq_engine *e, const tq_pm *const *pms, int n) {
  e->offered = pms;
  e->noffered = n;
}

/* "user 65534 (nobody)" into buf. */
static const char *userName(uid_t uid, char *buf, size_t n) {
  struct passwd *pw = getpwuid(uid);
  if (pw && pw->pw_name) snprintf(buf, n, "user %u (%s)", (unsigned)uid, pw->pw_name);
  else snprintf(buf, n, "user %u", (unsigned)uid);
  return buf;
}

/* May a library at path p (the file, or one of the directories above it)
** be trusted?  It must belong to this user or to root, and no one else may
** write it: not writable by everyone (a directory with the sticky bit, such
** as /tmp, aside: there only an entry's owner may replace it).  Returns 0,
** or -1 after enFail naming lib, the library loaded. */
static int trusted(tq_engine *e, const char *lib, const char *p, int isDir) {
  struct stat st;
  char who[96];
  if (stat(p, &st)) return enFail(e, "refusing processor module library %s: cannot check %s: %s", lib, p, strerror(errno));
  if (!isDir && !S_ISREG(st.st_mode)) return enFail(e, "refusing processor module library %s: not a regular file", lib);
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return enFail(e, "refusing processor module library %s: %s belongs to %s, not to you or root", lib, p,
                  userName(st.st_uid, who, sizeof who));
  if ((st.st_mode & S_IWOTH) && !(isDir && (st.st_mode & S_ISVTX)))
    return enFail(e, "refusing processor module library %s: anyone may write %s (mode %04o)", lib, p,
                  (unsigned)(st.st_mode & 07777));
  return 0;
}

/* Checks the library at file, and every directory above it, as a shell
** checks a PATH entry before it trusts it (symbolic links resolved first).
** Returns the resolved path (the caller frees it), or NULL after enFail. */
static char *trustedLib(tq_engine *e, const char *file) {
  char *real = realpath(file, NULL);
  if (!real) {
    enFail(e, "cannot load %s: %s", file, strerror(errno));
    return NULL;
  }
  int rc = trusted(e, file, real, 0);
  char *dir = tqStrdup(real);
  for (char *slash = strrchr(dir, '/'); !rc && slash; slash = strrchr(dir, '/')) {
    if (slash == dir) { /* the root */
      rc = trusted(e, file, "/", 1);
      break;
    }
    *slash = 0;
    rc = trusted(e, file, dir, 1);
  }
  free(dir);
  if (rc) {
    free(real);
    return NULL;
  }
  return real;
}

/* Loads NAME.so from the PM path (only directories the user named).  An
** entry of TQMON_PM_PATH must be absolute (a relative one would resolve
** against whatever the current directory is); --pm-path, typed for the
** run, may name a relative one, "." included.  The library must be one
** only its user or root can have written (trustedLib). */
static int loadShared(tq_engine *e, const char *name, const char *args) {
  if (!e->pmPath || !*e->pmPath)
    return enFail(e, "no processor module '%s': not built in, and no PM path is set (--pm-path or TQMON_PM_PATH)", name);
  if (strchr(name, '/')) return enFail(e, "processor module name '%s' may not contain '/'", name);
  char *path = tqStrdup(e->pmPath);
  if (e->pmPathEnv)
    for (char *dir = strtok(path, ":"); dir; dir = strtok(NULL, ":"))
      if (*dir && *dir != '/') {
        enFail(e, "TQMON_PM_PATH entry '%s' is not an absolute directory: refused (it would be looked up in the current "
                  "directory; give an absolute one, or --pm-path)", dir);
        free(path);
        return -1;
      }
  free(path);
  path = tqStrdup(e->pmPath);
  int rc = -1;
  int found = 0;
  for (char *dir = strtok(path, ":"); dir; dir = strtok(NULL, ":")) {
    if (!*dir) continue;
    char *file = tqMprintf("%s/%s.so", dir, name);
    if (access(file, F_OK) != 0) {
      free(file);
      continue;
    }
    found = 1;
    char *real = trustedLib(e, file);
    if (!real) {
      free(file);
      break;
    }
    void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    free(real);
    if (!dl) {
      enFail(e, "cannot load %s: %s", file, dlerror());
      free(file);
      break;
    }
    tq_pm_list_fn list = (tq_pm_list_fn)(uintptr_t)dlsym(dl, TQ_PM_LIST_SYMBOL);
    if (!list) {
      enFail(e, "%s does not export %s: not a tqmon processor module library", file, TQ_PM_LIST_SYMBOL);
      dlclose(dl);
      free(file);
      break;
    }
    int n = 0;
    const tq_pm *const *pms = list(&n);
    int ok = 1, named = 0, before = e->npm;
    for (int i = 0; i < n; i++)
      if (pms[i] && pms[i]->name && !strcasecmp(pms[i]->name, name)) named = 1;
    for (int i = 0; i < n && ok; i++) {
      const char *a = (!named || (pms[i] && pms[i]->name && !strcasecmp(pms[i]->name, name))) ? args : NULL;
      if (addPm(e, pms[i], a, NULL, NULL)) ok = 0;
    }
    /* the first PM it added holds the handle; a library loaded before
    ** (through another of its names) adds none: this handle is released */
    if (e->npm > before) e->pm[before]->dl = dl;
    else dlclose(dl);
    free(file);
    rc = ok ? 0 : -1;
    break;
  }
  free(path);
  if (!found) return enFail(e, "no processor module '%s' in the PM path %s", name, e->pmPath);
  return rc;
}

static int registerName(tq_engine *e, const char *name, const char *args, int depth) {
  if (depth > 8) return enFail(e, "groupers nested too deeply at %s", name);
  for (int i = 0; i < e->noffered; i++)
    if (!strcasecmp(e->offered[i]->name, name)) return addPm(e, e->offered[i], args, NULL, NULL);
  return loadShared(e, name, args);
}

int tq_register(tq_engine *e, const char *name, const char *args) {
  tqBufFree(&e->errs);
  if (e->state) {
    enFail(e, "processor modules are registered before tq_prepare");
    enCollectErrors(e);
    return -1;
  }
  int rc = registerName(e, name, args, 0);
  enCollectErrors(e);
  return rc;
}

/* ================================================================ call order */

/* Puts m after the PMs it depends on into e->order (depth first); a cycle
** or a missing dependency is an error.  Returns 0 or -1. */
int enTopo(tq_engine *e, EnPm *m, int *k) {
  if (m->visit == 2) return 0;
  if (m->visit == 1) return enFail(e, "processor modules depend on each other in a cycle through %s", m->pm->name);
  m->visit = 1;
  for (int i = 0; i < m->priv.ndepends; i++) {
    EnPm *d = findPm(e, m->priv.depends[i]);
    if (!d) return enFail(e, "processor module %s depends on %s, which is not loaded", m->pm->name, m->priv.depends[i]);
    if (enTopo(e, d, k)) return -1;
  }
  m->visit = 2;
  e->order[(*k)++] = m;
  return 0;
}

/* ================================================================ privileges */

/* Does this process have privilege p ("root", "read:PATH", "write:PATH",
** "cap:NAME")?  1 or 0. */
int enHasPrivilege(const char *p) {
  if (!strcmp(p, "root")) return geteuid() == 0;
  if (!strncmp(p, "read:", 5)) return access(p + 5, R_OK) == 0;
  if (!strncmp(p, "write:", 6)) return access(p + 6, W_OK) == 0;
  if (!strncmp(p, "cap:", 4)) {
    static const char *caps[] = {"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
                                 "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
                                 "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
                                 "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
                                 "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
                                 "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
                                 "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
                                 "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
                                 "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"};
    int bit = -1;
    for (int i = 0; i < (int)TQ_ARRAY_SIZE(caps); i++)
      if (!strcasecmp(caps[i], p + 4)) bit = i;
    if (bit < 0) return 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long eff = 0;
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "CapEff:", 7)) eff = strtoull(line + 7, NULL, 16);
    fclose(f);
    return (eff >> bit) & 1;
  }
  return 0;
}
