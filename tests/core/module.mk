# core tests: the option tables at their bounds, signed URLs (HMAC-SHA256, RFC 4231 vectors), the
# thread pool, checked sizes
TEST_NAMES += core/test_config core/test_urlsign core/test_parallel core/test_checked
