TEST_NAMES += daemon/test_config
TEST_NAMES += daemon/test_multipart daemon/test_apiutil
