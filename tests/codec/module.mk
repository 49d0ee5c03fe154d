# codec tests
TEST_NAMES += codec/test_npy
TEST_NAMES += codec/test_colour
TEST_NAMES += codec/test_image
TEST_NAMES += codec/test_image_hostile
TEST_NAMES += codec/test_tiff
TEST_NAMES += codec/test_icc
