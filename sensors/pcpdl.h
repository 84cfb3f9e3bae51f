/*
** pcpdl.h - PCP's libraries loaded when a PCP part of tqmon is first used,
** not when tqmon starts: libpcp brings libssl, libcrypto, libsasl2 and
** libsystemd with it, and loading them took 4 of the 6 ms that every tqmon
** command took to start (a replay of a recording is a few tens of ms).
**
** Included after <pcp/pmapi.h> (and <pcp/import.h>) by the files that call
** PCP (pcp.c, pcpagent.c, pcpconf.c): each function they call is a pointer
** filled by tqPcpLoad, under the function's own name, so the calls read as
** PCP's documentation writes them.  Every way in (a PM's init, `tqmon pcp
** describe`, an archive's range) calls tqPcpLoad first.
*/
#ifndef TQ_PCPDL_H
#define TQ_PCPDL_H

#include <stddef.h>

#include <pcp/pmapi.h>
#include <pcp/import.h> /* (after pmapi.h: it needs its types) */

/* the functions of libpcp.so.3 and of libpcp_import.so.1 tqmon calls */
#define TQ_PCP_FNS(X) \
  X(pmAddProfile) X(pmDelProfile) X(pmDestroyContext) X(pmErrStr) \
  X(pmExtractValue) X(pmFetch) X(pmFetchHighRes) X(pmFetchHighResArchive) \
  X(pmFreeHighResEventResult) X(pmFreeHighResResult) X(pmFreeResult) X(pmGetContextHostName_r) \
  X(pmGetHighResArchiveEnd) X(pmGetHighResArchiveLabel) X(pmGetInDom) X(pmInDom_build) \
  X(pmInDom_domain) X(pmInDom_serial) X(pmLookupDesc) X(pmLookupInDom) \
  X(pmLookupName) X(pmLookupText) X(pmNameInDom) X(pmNewContext) \
  X(pmReconnectContext) X(pmSetModeHighRes) X(pmStore) X(pmTraversePMNS) \
  X(pmTypeStr) X(pmUnitsStr) X(pmUnpackHighResEventRecords) X(pmUseContext)
#define TQ_PCPI_FNS(X) \
  X(pmiAddInstance) X(pmiAddMetric) X(pmiEnd) X(pmiErrStr) \
  X(pmiID) X(pmiPutMark) X(pmiPutValue) X(pmiSetHostname) \
  X(pmiSetTimezone) X(pmiStart) X(pmiUnits) X(pmiUseContext) \
  X(pmiWrite)

typedef struct TqPcpFns {
#define TQ_PCP_PTR(f) __typeof__(f) *f;
  TQ_PCP_FNS(TQ_PCP_PTR)
  TQ_PCPI_FNS(TQ_PCP_PTR)
#undef TQ_PCP_PTR
} TqPcpFns;
extern TqPcpFns tqPcp;

/* Loads PCP's libraries once (any thread): 0, or -1 with why (the library
** or the function that could not be loaded, and what to install). */
int tqPcpLoad(char *why, size_t n);

#ifndef TQ_PCPDL_SELF
#define pmAddProfile (*tqPcp.pmAddProfile)
#define pmDelProfile (*tqPcp.pmDelProfile)
#define pmDestroyContext (*tqPcp.pmDestroyContext)
#define pmErrStr (*tqPcp.pmErrStr)
#define pmExtractValue (*tqPcp.pmExtractValue)
#define pmFetch (*tqPcp.pmFetch)
#define pmFetchHighRes (*tqPcp.pmFetchHighRes)
#define pmFetchHighResArchive (*tqPcp.pmFetchHighResArchive)
#define pmFreeHighResEventResult (*tqPcp.pmFreeHighResEventResult)
#define pmFreeHighResResult (*tqPcp.pmFreeHighResResult)
#define pmFreeResult (*tqPcp.pmFreeResult)
#define pmGetContextHostName_r (*tqPcp.pmGetContextHostName_r)
#define pmGetHighResArchiveEnd (*tqPcp.pmGetHighResArchiveEnd)
#define pmGetHighResArchiveLabel (*tqPcp.pmGetHighResArchiveLabel)
#define pmGetInDom (*tqPcp.pmGetInDom)
#define pmInDom_build (*tqPcp.pmInDom_build)
#define pmInDom_domain (*tqPcp.pmInDom_domain)
#define pmInDom_serial (*tqPcp.pmInDom_serial)
#define pmLookupDesc (*tqPcp.pmLookupDesc)
#define pmLookupInDom (*tqPcp.pmLookupInDom)
#define pmLookupName (*tqPcp.pmLookupName)
#define pmLookupText (*tqPcp.pmLookupText)
#define pmNameInDom (*tqPcp.pmNameInDom)
#define pmNewContext (*tqPcp.pmNewContext)
#define pmReconnectContext (*tqPcp.pmReconnectContext)
#define pmSetModeHighRes (*tqPcp.pmSetModeHighRes)
#define pmStore (*tqPcp.pmStore)
#define pmTraversePMNS (*tqPcp.pmTraversePMNS)
#define pmTypeStr (*tqPcp.pmTypeStr)
#define pmUnitsStr (*tqPcp.pmUnitsStr)
#define pmUnpackHighResEventRecords (*tqPcp.pmUnpackHighResEventRecords)
#define pmUseContext (*tqPcp.pmUseContext)
#define pmiAddInstance (*tqPcp.pmiAddInstance)
#define pmiAddMetric (*tqPcp.pmiAddMetric)
#define pmiEnd (*tqPcp.pmiEnd)
#define pmiErrStr (*tqPcp.pmiErrStr)
#define pmiID (*tqPcp.pmiID)
#define pmiPutMark (*tqPcp.pmiPutMark)
#define pmiPutValue (*tqPcp.pmiPutValue)
#define pmiSetHostname (*tqPcp.pmiSetHostname)
#define pmiSetTimezone (*tqPcp.pmiSetTimezone)
#define pmiStart (*tqPcp.pmiStart)
#define pmiUnits (*tqPcp.pmiUnits)
#define pmiUseContext (*tqPcp.pmiUseContext)
#define pmiWrite (*tqPcp.pmiWrite)
#endif

#endif
