# strobe.mk - the programs of the CPU sampler's tests (tests/strobe/), built
# by make test:
#   build/strobe/tqtest_profile           a known split of CPU time between two
#                                         functions inside two kinds of traced
#                                         transactions (generated sensors of
#                                         tests/strobe/tqtest.tq), frame pointers kept
#   build/strobe/tqtest_profile_stripped  the same, stripped: addresses only
#   build/strobe/tqtest_spin              spins for some CPU time and exits
$(B)/strobe/sensors.h: tests/strobe/tqtest.tq $(B)/tqmon
	@mkdir -p $(B)/strobe
	$(B)/tqmon sensors gen tests/strobe/tqtest.tq -o $@
$(B)/strobe/tqtest_profile: tests/strobe/tqtest_profile.c $(B)/strobe/sensors.h $(B)/libtqsensor.a sensors/tqsensor.h sensors/tqshm.h
	$(CC) $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer -fno-inline -I$(B)/strobe -Isensors tests/strobe/tqtest_profile.c \
	    $(B)/libtqsensor.a -lpthread -o $@
$(B)/strobe/tqtest_profile_stripped: $(B)/strobe/tqtest_profile
	strip -o $@ $<
$(B)/strobe/tqtest_spin: tests/strobe/tqtest_spin.c
	@mkdir -p $(B)/strobe
	$(CC) $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer tests/strobe/tqtest_spin.c -o $@

TEST_DEPS += $(B)/strobe/tqtest_profile $(B)/strobe/tqtest_profile_stripped $(B)/strobe/tqtest_spin
