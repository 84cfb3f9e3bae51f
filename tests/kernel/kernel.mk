# kernel.mk - the workloads of the kernel sensor tests and examples
# (tests/kernel/kwork.c): plain programs, no tqmon in them.
$(B)/kwork: tests/kernel/kwork.c
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) tests/kernel/kwork.c -lpthread -o $@
TEST_DEPS += $(B)/kwork

# A program with generated sensors (tests/kernel/jobs.tq) for the test that
# joins kernel, /proc and generated-sensor relations.
$(B)/kernel/sensors.h: tests/kernel/jobs.tq $(B)/tqmon
	@mkdir -p $(B)/kernel
	$(B)/tqmon sensors gen tests/kernel/jobs.tq -o $@
$(B)/kernel/jobs: tests/kernel/jobs.c $(B)/kernel/sensors.h $(B)/libtqsensor.a sensors/tqsensor.h sensors/tqshm.h
	$(CC) $(CSTD) $(WARN) $(OPT) -I$(B)/kernel -Isensors tests/kernel/jobs.c $(B)/libtqsensor.a -lpthread -o $@
TEST_DEPS += $(B)/kernel/jobs
