/*
** app.h - the top layer: what embeds the engine.  The engine (runtime/)
** names no processor module; this layer gives it tqmon's built-in ones
** (builtins.c: libtqmon's tq_init, and the list the tqmon command shows)
** and holds the tqmon command (main.c).  See docs/design.md.
*/
#ifndef APP_H
#define APP_H

#include "../include/tqmon.h"

/* Every built-in PM, in the order `tqmon pms` lists them: the PMs of
** sensors/, display/ and runtime/store.c, and the groupers default and
** all.  Sets *n; the list is static. */
const tq_pm *const *appBuiltinPms(int *n);

#endif
