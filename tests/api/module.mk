# api tests
TEST_NAMES += api/test_request
