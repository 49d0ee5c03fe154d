# tests/: one cmocka binary per test file; each folder lists its own in its module.mk.
TEST_NAMES :=
include tests/core/module.mk
include tests/cli/module.mk
include tests/daemon/module.mk
include tests/gles/module.mk
include tests/cpu/module.mk
include tests/codec/module.mk
include tests/api/module.mk
TEST_COMMON := $(BUILD)/tests/testutil.o $(BUILD)/tests/yuv_ref.o
TEST_BINS := $(patsubst %,$(BUILD)/tests/%,$(TEST_NAMES))
$(TEST_BINS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_COMMON) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL) -lcmocka
# after the rule above, which links the engine's objects: tests/lib links the library alone
include tests/lib/module.mk
