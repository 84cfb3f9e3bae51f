# kernel.mk - the workloads of the kernel sensor tests and examples
# (tests/kernel/kwork.c): plain programs, no tqmon in them.
$(B)/kwork: tests/kernel/kwork.c
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) tests/kernel/kwork.c -lpthread -o $@
TEST_DEPS += $(B)/kwork
