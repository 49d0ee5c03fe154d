# protocol tests (issue 4)
TEST_NAMES += protocol/test_npy
