# protocol tests (issue 4)
TEST_NAMES += protocol/test_npy
TEST_NAMES += protocol/test_colour
TEST_NAMES += protocol/test_image
TEST_NAMES += protocol/test_image_hostile
TEST_NAMES += protocol/test_request
TEST_NAMES += protocol/test_errors
TEST_NAMES += protocol/test_operation
