/*
** nolist.c - a shared object that is not a PM library
** (build/testpm/nolist.so): it does not export tqmon_pm_list, and the
** engine must say so.
*/
int nolistAnswer(void);
int nolistAnswer(void) { return 42; }
