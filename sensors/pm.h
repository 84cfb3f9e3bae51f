/*
** pm.h - the processor module interface's old place, kept so that PMs
** written against it still build: the interface is include/tqmon_pm.h.
*/
#include "../include/tqmon_pm.h"
