TEST_NAMES += daemon/test_config
TEST_NAMES += daemon/test_multipart daemon/test_apiutil
# the job pipeline (codec and GPU threads) without HTTP: links the daemon's job objects too
TEST_NAMES += daemon/test_jobs
$(BUILD)/tests/daemon/test_jobs: $(BUILD)/daemon/jobs.o $(BUILD)/daemon/kernels.o $(BUILD)/daemon/metrics.o
# the embedded web page against the files in web/
TEST_NAMES += daemon/test_web
$(BUILD)/tests/daemon/test_web: $(BUILD)/daemon/web.o
# the systemd protocol (sdnotify) and the readiness/watchdog decisions (lifecycle)
TEST_NAMES += daemon/test_sdnotify
$(BUILD)/tests/daemon/test_sdnotify: $(BUILD)/daemon/sdnotify.o $(BUILD)/daemon/lifecycle.o $(BUILD)/daemon/jobs.o $(BUILD)/daemon/kernels.o $(BUILD)/daemon/metrics.o
