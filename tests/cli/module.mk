# cli tests: the CLI's pure functions (they link the cli/ object they test besides the library)
TEST_NAMES += cli/test_sequence
$(BUILD)/tests/cli/test_sequence: $(BUILD)/cli/sequence.o
