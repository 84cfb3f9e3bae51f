/*
 * pmdatqmon's Performance Metrics Domain (sensors/pmdatqmon.md): 212, which
 * PCP's stdpmid leaves free.  Install passes it to the agent (-d) and puts
 * it into the namespace (pmns) for the symbol TQMON.
 */
#define TQMON 212
