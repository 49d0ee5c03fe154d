TEST_NAMES += gles/test_gpu_basic gles/test_tile gles/test_tune_rounds
TEST_NAMES += gles/test_fft_plan gles/test_fft gles/test_bloom
TEST_NAMES += gles/test_spatial_plan gles/test_spatial gles/test_deconv gles/test_engine
TEST_NAMES += gles/test_upload gles/test_huffdec
TEST_NAMES += gles/test_resample
