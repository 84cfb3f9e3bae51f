# testpm.mk - processor modules used by the tests of the PM interface.
#
# build/testpm/testpm.so holds the test PMs (tests/testpm/testpm.c); the PM
# path finds a PM by its library's name, so each PM of it also has a link
# NAME.so -> testpm.so (loading any of them loads the library once).
# sources.so (tests/testpm/sources.c: a timer, an extractor, producers with
# and without a delta function) has links of its own the same way.
# group.so, badver.so and nolist.so are libraries of their own.  PMs see only
# include/tqmon_pm.h, through its old place sensors/pm.h (which must keep
# working for PMs written against it): they are built without libtqmon and
# without sanitizers.

TESTPM       := $(B)/testpm
TESTPM_NAMES := filter rows recs mon sup busy net disk load hosts
TESTPM_LINKS := $(patsubst %,$(TESTPM)/%.so,$(TESTPM_NAMES))
SOURCES_NAMES := ticks reader meter meterraw runs runssampled
SOURCES_LINKS := $(patsubst %,$(TESTPM)/%.so,$(SOURCES_NAMES))
TESTPM_LIBS  := $(TESTPM)/testpm.so $(TESTPM)/sources.so $(TESTPM)/group.so $(TESTPM)/badver.so $(TESTPM)/nolist.so

$(TESTPM)/%.so: tests/testpm/%.c sensors/pm.h include/tqmon_pm.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -Isensors -shared -fPIC $< -o $@

$(TESTPM_LINKS): $(TESTPM)/testpm.so
	ln -sf testpm.so $@
$(SOURCES_LINKS): $(TESTPM)/sources.so
	ln -sf sources.so $@

TEST_DEPS += $(TESTPM_LIBS) $(TESTPM_LINKS) $(SOURCES_LINKS)

# An engine client driving the test PMs (tests/testpm/client.c), under the
# sanitizers like the other test programs.
$(B)/asan/testpm-client: tests/testpm/client.c $(B)/asan/libtqmon.a include/tqmon.h include/tqmon_pm.h
	$(CC) $(CSTD) $(WARN) $(ASANF) -Iinclude tests/testpm/client.c $(B)/asan/libtqmon.a $(LIBS) -o $@

TEST_DEPS += $(B)/asan/testpm-client

# A misbehaving subject for the shared-memory sensors (tests/shm/).
$(B)/shm/garbage: tests/shm/garbage.c sensors/tqshm.h
	@mkdir -p $(B)/shm
	$(CC) $(CSTD) $(WARN) $(OPT) -Isensors tests/shm/garbage.c -o $@
TEST_DEPS += $(B)/shm/garbage
# A program that harms pmdatqmon through its own segment (pcp_hostile.sh).
$(B)/shm/hostile: tests/pcp/hostile.c sensors/tqshm.h
	@mkdir -p $(B)/shm
	$(CC) $(CSTD) $(WARN) $(OPT) -Isensors tests/pcp/hostile.c -o $@
TEST_DEPS += $(B)/shm/hostile

# A preload that says pages are 16 KiB (shm_bad.sh).
$(B)/shm/pagesize.so: tests/shm/pagesize.c
	@mkdir -p $(B)/shm
	$(CC) $(CSTD) $(WARN) $(OPT) -shared -fPIC tests/shm/pagesize.c -ldl -o $@
TEST_DEPS += $(B)/shm/pagesize.so

# The enable words of a sensor in a segment, read from the producer's side
# (daemon_exec.sh).
$(B)/shm/flags: tests/shm/flags.c sensors/tqshm.h
	@mkdir -p $(B)/shm
	$(CC) $(CSTD) $(WARN) $(OPT) -Isensors tests/shm/flags.c -o $@
TEST_DEPS += $(B)/shm/flags

# Subjects of the generated sensors' tests (tests/shm/subject.tq): early
# works from its first line (shm_start.sh).
$(B)/shm/sensors.h: tests/shm/subject.tq $(B)/tqmon
	@mkdir -p $(B)/shm
	$(B)/tqmon sensors gen tests/shm/subject.tq -o $@
$(B)/shm/early: tests/shm/early.c $(B)/shm/sensors.h $(B)/libtqsensor.a sensors/tqsensor.h sensors/tqshm.h
	$(CC) $(CSTD) $(WARN) $(OPT) -I$(B)/shm -Isensors tests/shm/early.c $(B)/libtqsensor.a -lpthread -o $@
TEST_DEPS += $(B)/shm/early
# flood sends as fast as two threads can (shm_flood.sh).
$(B)/shm/flood: tests/shm/flood.c $(B)/shm/sensors.h $(B)/libtqsensor.a sensors/tqsensor.h sensors/tqshm.h
	$(CC) $(CSTD) $(WARN) $(OPT) -I$(B)/shm -Isensors tests/shm/flood.c $(B)/libtqsensor.a -lpthread -o $@
TEST_DEPS += $(B)/shm/flood
