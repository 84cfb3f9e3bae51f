/*
** pagesize.c - a preload (LD_PRELOAD) whose sysconf says pages are 16 KiB,
** as on some arm64 and ppc64le kernels: the generated sensors cannot have
** their sensor words mapped where they read them (tests/scripts/shm_bad.sh).
*/
#include <dlfcn.h>
#include <unistd.h>

long sysconf(int name) {
  static long (*real)(int);
  if (name == _SC_PAGESIZE) return 16384;
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "sysconf");
  return real ? real(name) : -1;
}
