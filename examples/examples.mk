# examples.mk - the example client (examples/client/) and the example
# third-party processor module (examples/pm/), built by make test.
#
#   build/client, build/asan/client       the client: include/tqmon.h only,
#                                         linked with libtqmon.a
#   build/pm/logpm.so, build/asan/pm/...  the PM library: include/tqmon_pm.h only,
#                                         never linked with libtqmon (-z defs
#                                         proves it for the release build)
# The sanitizer builds are for the tests (the ASan tqmon loads the ASan PM).

.PHONY: examples
examples: $(B)/client $(B)/pm/logpm.so

PMCFLAGS := -fPIC -shared -fvisibility=hidden

$(B)/client: examples/client/client.c $(B)/libtqmon.a include/tqmon.h include/tqmon_pm.h
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) -Iinclude examples/client/client.c $(B)/libtqmon.a $(LIBS) -o $@
$(B)/asan/client: examples/client/client.c $(B)/asan/libtqmon.a include/tqmon.h include/tqmon_pm.h
	@mkdir -p $(B)/asan
	$(CC) $(CSTD) $(WARN) $(ASANF) -Iinclude examples/client/client.c $(B)/asan/libtqmon.a $(LIBS) -o $@

$(B)/pm/logpm.so: examples/pm/logpm.c include/tqmon_pm.h
	@mkdir -p $(B)/pm
	$(CC) $(CSTD) $(WARN) $(OPT) $(PMCFLAGS) -Wl,-z,defs examples/pm/logpm.c -o $@
$(B)/asan/pm/logpm.so: examples/pm/logpm.c include/tqmon_pm.h
	@mkdir -p $(B)/asan/pm
	$(CC) $(CSTD) $(WARN) $(ASANF) $(PMCFLAGS) examples/pm/logpm.c -o $@

TEST_DEPS += $(B)/client $(B)/asan/client $(B)/pm/logpm.so $(B)/asan/pm/logpm.so

# The paper's operating system as a real program (examples/mailbox/),
# instrumented through the header generated from its configuration.
$(B)/mailbox/sensors.h: examples/mailbox/monitor.tq $(B)/tqmon
	@mkdir -p $(B)/mailbox
	$(B)/tqmon sensors gen examples/mailbox/monitor.tq -o $@
$(B)/mailbox/mailbox: examples/mailbox/mailbox.c $(B)/mailbox/sensors.h $(B)/libtqsensor.a sensors/tqsensor.h sensors/tqshm.h
	$(CC) $(CSTD) $(WARN) $(OPT) -I$(B)/mailbox -Isensors examples/mailbox/mailbox.c $(B)/libtqsensor.a -lpthread -o $@

TEST_DEPS += $(B)/mailbox/mailbox
examples: $(B)/mailbox/mailbox
