# api tests
TEST_NAMES += api/test_request
TEST_NAMES += api/test_errors
TEST_NAMES += api/test_format
TEST_NAMES += api/test_operation
