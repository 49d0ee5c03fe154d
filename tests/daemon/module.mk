TEST_NAMES += daemon/test_config
