# lib tests: the public API as a program uses it, linked with libfftbloom.a alone (its own rule:
# not the engine's objects every other test links) and including <fftbloom.h>.
LIB_TEST := $(BUILD)/tests/lib/test_api
TEST_BINS += $(LIB_TEST)
$(BUILD)/tests/lib/test_api.o: CPPFLAGS_ALL += -Ilib/include
$(LIB_TEST): $(BUILD)/tests/lib/test_api.o $(LIBFB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_LIB) -lcmocka
