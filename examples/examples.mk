# examples.mk - the example client (examples/client/) and the example
# third-party processor module (examples/pm/), built by make test.
#
#   build/client, build/asan/client       the client: include/tqmon.h only,
#                                         linked with libtqmon.a
# The sanitizer builds are for the tests.

.PHONY: examples
examples: $(B)/client

$(B)/client: examples/client/client.c $(B)/libtqmon.a include/tqmon.h sensors/pm.h
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) -Iinclude examples/client/client.c $(B)/libtqmon.a $(LIBS) -o $@
$(B)/asan/client: examples/client/client.c $(B)/asan/libtqmon.a include/tqmon.h sensors/pm.h
	@mkdir -p $(B)/asan
	$(CC) $(CSTD) $(WARN) $(ASANF) -Iinclude examples/client/client.c $(B)/asan/libtqmon.a $(LIBS) -o $@

TEST_DEPS += $(B)/client $(B)/asan/client
