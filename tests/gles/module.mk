TEST_NAMES += gles/test_gpu_basic
