TEST_NAMES += cpu/test_cpu_conv
