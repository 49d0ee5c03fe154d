/* Tests for codec/npy: round trips for every dtype and rank, files written by numpy (all header
 * versions, both byte orders) read to the same values, files we write read back by numpy, and
 * hostile input (every truncation, flipped bytes, absurd shapes, limits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/npy.h"
#include "tests/testutil.h"

#define PY "/usr/bin/python3"

static float frand(void)
{
	return (float)tu_sym();
}

static void fill_random(struct npy_array *a)
{
	size_t n = npy_count(a, NULL) * npy_dtype_size(a->dtype) / 4;
	float *f = a->data;
	for (size_t i = 0; i < n; i++)
		f[i] = frand();
}

static void make_array(struct npy_array *a, enum npy_dtype t, int ndim, const size_t *shape)
{
	memset(a, 0, sizeof *a);
	a->dtype = t;
	a->ndim = ndim;
	for (int i = 0; i < 4; i++)
		a->shape[i] = i < ndim ? shape[i] : 1;
	size_t bytes = npy_count(a, NULL) * npy_dtype_size(t);
	a->data = malloc(bytes ? bytes : 1);
	assert_non_null(a->data);
	fill_random(a);
}

static void test_roundtrip(void **state)
{
	(void)state;
	static const size_t shapes[][4] = { { 1, 1, 1, 1 }, { 7, 1, 1, 1 }, { 3, 5, 1, 1 },
					    { 2, 3, 4, 1 }, { 2, 1, 3, 5 } };
	for (int t = NPY_F32; t <= NPY_C128; t++)
		for (int nd = 0; nd <= 4; nd++) {
			struct npy_array a, b;
			char err[NPY_ERR_LEN];
			unsigned char *buf;
			size_t len;
			make_array(&a, (enum npy_dtype)t, nd, shapes[nd]);
			assert_int_equal(npy_encode(&a, &buf, &len, err), 0);
			assert_int_equal(len % 64, (npy_count(&a, NULL) * npy_dtype_size(a.dtype)) % 64);
			int rc = npy_decode(buf, len, 0, &b, err);
			if (rc)
				fail_msg("decode: %s", err);
			assert_int_equal(b.ndim, nd);
			assert_int_equal(b.dtype, t);
			for (int i = 0; i < 4; i++)
				assert_int_equal(b.shape[i], a.shape[i]);
			assert_memory_equal(a.data, b.data, npy_count(&a, NULL) * npy_dtype_size(a.dtype));
			free(buf);
			npy_free(&a);
			npy_free(&b);
		}
}

static void test_zero_extent(void **state)
{
	(void)state;
	struct npy_array a = { 2, { 0, 3, 1, 1 }, NPY_F32, NULL }, b;
	unsigned char *buf;
	size_t len;
	char err[NPY_ERR_LEN];
	assert_int_equal(npy_encode(&a, &buf, &len, err), 0);
	assert_int_equal(npy_decode(buf, len, 0, &b, err), 0);
	assert_int_equal(b.shape[0], 0);
	assert_int_equal(b.shape[1], 3);
	assert_non_null(b.data);
	free(buf);
	npy_free(&b);
	npy_free(NULL);
}

/* A header by hand: tests the parser on forms numpy writes (and some it does not). */
static int decode_header(const char *dict, int version, const void *data, size_t dlen,
			 struct npy_array *out, char *err)
{
	unsigned char buf[1024];
	size_t hl = strlen(dict), pre = version == 1 ? 10 : 12;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)version;
	buf[7] = 0;
	buf[8] = (unsigned char)hl;
	buf[9] = (unsigned char)(hl >> 8);
	if (version != 1)
		buf[10] = buf[11] = 0;
	memcpy(buf + pre, dict, hl);
	memcpy(buf + pre + hl, data, dlen);
	return npy_decode(buf, pre + hl + dlen, 0, out, err);
}

static void test_header_forms(void **state)
{
	(void)state;
	char err[NPY_ERR_LEN];
	struct npy_array a;
	float v[6] = { 1, 2, 3, 4, 5, 6 };
	unsigned char be[8] = { 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0 }; /* 1.0f, 2.0f big-endian */

	assert_int_equal(decode_header("{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}  \n",
				       1, v, sizeof v, &a, err), 0);
	assert_int_equal(a.ndim, 2);
	assert_int_equal(a.shape[1], 3);
	npy_free(&a);
	assert_int_equal(decode_header("{\"descr\": \"=f4\", \"fortran_order\": False, \"shape\": (6,)}",
				       2, v, sizeof v, &a, err), 0);
	assert_int_equal(a.shape[0], 6);
	npy_free(&a);
	assert_int_equal(decode_header("{'descr':'>f4','fortran_order':False,'shape':(2,),}", 3, be,
				       sizeof be, &a, err), 0);
	assert_true(((float *)a.data)[0] == 1.0f && ((float *)a.data)[1] == 2.0f);
	npy_free(&a);
	assert_int_equal(decode_header("{'descr':'>c8','fortran_order':False,'shape':(1,),}", 1, be,
				       sizeof be, &a, err), 0);
	assert_true(((float *)a.data)[0] == 1.0f && ((float *)a.data)[1] == 2.0f);
	npy_free(&a);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(),}", 1, v, 4,
				       &a, err), 0);
	assert_int_equal(a.ndim, 0);
	assert_true(npy_count(&a, NULL) == 1 && ((float *)a.data)[0] == 1.0f);
	npy_free(&a);

	/* refusals, each with a message naming the problem */
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':True,'shape':(2,3),}", 1, v,
				       sizeof v, &a, err), NPY_E_UNSUPPORTED);
	assert_non_null(strstr(err, "fortran"));
	assert_null(a.data);
	assert_int_equal(decode_header("{'descr':'<i4','fortran_order':False,'shape':(6,),}", 1, v,
				       sizeof v, &a, err), NPY_E_UNSUPPORTED);
	assert_non_null(strstr(err, "<i4"));
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(1,1,1,1,6),}", 1,
				       v, sizeof v, &a, err), NPY_E_UNSUPPORTED);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(7,),}", 1, v,
				       sizeof v, &a, err), NPY_E_TRUNCATED);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(100000, 100000, 100000, 100000),}",
				       1, v, sizeof v, &a, err), NPY_E_TOO_LARGE);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(99999999999999999999999,),}",
				       1, v, sizeof v, &a, err), NPY_E_TOO_LARGE);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False}", 1, v, sizeof v, &a,
				       err), NPY_E_CORRUPT);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(6,)", 1, v,
				       sizeof v, &a, err), NPY_E_CORRUPT);
	assert_int_equal(decode_header("{'descr':[('a','<f4')],'fortran_order':False,'shape':(6,)}", 1,
				       v, sizeof v, &a, err), NPY_E_UNSUPPORTED);
	assert_int_equal(decode_header("{'descr':'<f4','fortran_order':False,'shape':(-6,)}", 1, v,
				       sizeof v, &a, err), NPY_E_CORRUPT);
	assert_int_equal(npy_decode("PK\3\4zipfile", 11, 0, &a, err), NPY_E_CORRUPT);
	assert_non_null(strstr(err, "npy"));
}

static void test_max_bytes(void **state)
{
	(void)state;
	size_t shape[2] = { 10, 10 };
	struct npy_array a, b;
	unsigned char *buf;
	size_t len;
	char err[NPY_ERR_LEN];
	make_array(&a, NPY_F64, 2, shape);
	assert_int_equal(npy_encode(&a, &buf, &len, err), 0);
	assert_int_equal(npy_decode(buf, len, 799, &b, err), NPY_E_TOO_LARGE);
	assert_null(b.data);
	assert_int_equal(npy_decode(buf, len, 800, &b, err), 0);
	npy_free(&b);
	free(buf);
	npy_free(&a);
}

/* A shape whose element count passes 2^64 (2^33 x 2^33 wraps to 0, an empty array) is refused
 * as too large, by npy_count and by a decode of a header that declares it. */
static void test_count_overflow(void **state)
{
	(void)state;
	struct npy_array a;
	memset(&a, 0, sizeof a);
	a.ndim = 2;
	a.shape[0] = a.shape[1] = (size_t)1 << 33;
	a.shape[2] = a.shape[3] = 1;
	a.dtype = NPY_F32;
	int ok = 1;
	assert_int_equal(npy_count(&a, &ok), 0);
	assert_int_equal(ok, 0);
	char dict[128];
	int dl = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': "
	                  "(8589934592, 8589934592), }");
	unsigned char buf[256];
	size_t hl = ((size_t)(10 + dl + 1) + 63) / 64 * 64 - 10; /* header padded to 64 bytes */
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (unsigned char)(hl & 0xff);
	buf[9] = (unsigned char)(hl >> 8);
	memset(buf + 10, ' ', hl);
	memcpy(buf + 10, dict, (size_t)dl);
	buf[10 + hl - 1] = '\n';
	struct npy_array b;
	char err[NPY_ERR_LEN];
	int rc = npy_decode(buf, 10 + hl, 0, &b, err);
	printf("2^33 x 2^33: %d %s\n", rc, err);
	assert_int_equal(rc, NPY_E_TOO_LARGE);
	assert_null(b.data);
}

/* Every cut point must give TRUNCATED (or CORRUPT inside the header), never success or a crash;
 * every single flipped byte must give either success or a clean error. */
static void test_truncate_and_flip(void **state)
{
	(void)state;
	size_t shape[3] = { 3, 4, 5 };
	struct npy_array a, b;
	unsigned char *buf;
	size_t len;
	char err[NPY_ERR_LEN];
	make_array(&a, NPY_C64, 3, shape);
	assert_int_equal(npy_encode(&a, &buf, &len, err), 0);
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *c = malloc(cut ? cut : 1);
		memcpy(c, buf, cut);
		int rc = npy_decode(c, cut, 0, &b, err);
		if (rc != NPY_E_TRUNCATED && rc != NPY_E_CORRUPT)
			fail_msg("cut at %zu: rc %d", cut, rc);
		assert_null(b.data);
		free(c);
	}
	for (size_t i = 0; i < 128 && i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			buf[i] ^= (unsigned char)(1u << bit);
			int rc = npy_decode(buf, len, 0, &b, err);
			assert_true(rc <= 0 && rc >= NPY_E_TOO_LARGE);
			if (rc == 0)
				npy_free(&b);
			else
				assert_null(b.data);
			buf[i] ^= (unsigned char)(1u << bit);
		}
	free(buf);
	npy_free(&a);
}

static char tmpdir[256];

static int setup_dir(void **state)
{
	(void)state;
	tu_seed_from_clock();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_npy.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
	*len = fread(p, 1, (size_t)n, f);
	fclose(f);
	return p;
}

/* numpy writes arrays in every dtype, both byte orders, all three header versions, plus the
 * same values as raw little-endian bytes; we must read the same values. */
static void test_numpy_writes(void **state)
{
	(void)state;
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 PY " -c \"\n"
		 "import numpy as np, numpy.lib.format as F\n"
		 "rng = np.random.default_rng(%u)\n"
		 "shapes = {0: (), 1: (13,), 2: (5, 7), 3: (2, 3, 4), 4: (2, 1, 3, 2)}\n"
		 "for dt in ['<f4', '>f4', '<f8', '>f8', '<c8', '>c8', '<c16', '>c16']:\n"
		 "  for nd, sh in shapes.items():\n"
		 "    x = rng.standard_normal(sh) * 100\n"
		 "    if dt[1] == 'c': x = x + 1j * rng.standard_normal(sh)\n"
		 "    x = np.asarray(x).astype(dt)\n"
		 "    for v in [(1, 0), (2, 0), (3, 0)]:\n"
		 "      name = '%s/%%s_%%d_v%%d' %% (dt[0] == '<' and 'le' or 'be', nd, v[0]) + dt[1:]\n"
		 "      with open(name + '.npy', 'wb') as f:\n"
		 "        F.write_array(f, x, version=v)\n"
		 "      x.astype(dt.replace('>', '<')).tofile(name + '.raw')\n"
		 "np.save('%s/fortran.npy', np.asfortranarray(np.ones((3, 4), np.float32)))\n"
		 "np.save('%s/int.npy', np.ones(3, np.int32))\n"
		 "\"",
		 (unsigned)(tu_uniform() * 1e9), tmpdir, tmpdir, tmpdir);
	assert_int_equal(system(cmd), 0);
	static const char *dts[] = { "f4", "f8", "c8", "c16" };
	int checked = 0;
	for (int bo = 0; bo < 2; bo++)
		for (int d = 0; d < 4; d++)
			for (int nd = 0; nd <= 4; nd++)
				for (int v = 1; v <= 3; v++) {
					char path[512], raw[512], err[NPY_ERR_LEN];
					snprintf(path, sizeof path, "%s/%s_%d_v%d%s.npy", tmpdir,
						 bo ? "be" : "le", nd, v, dts[d]);
					snprintf(raw, sizeof raw, "%s/%s_%d_v%d%s.raw", tmpdir,
						 bo ? "be" : "le", nd, v, dts[d]);
					struct npy_array a;
					int rc = npy_read_file(path, 0, &a, err);
					if (rc)
						fail_msg("%s: %s", path, err);
					assert_int_equal(a.ndim, nd);
					assert_int_equal(a.dtype, NPY_F32 + d);
					size_t rl;
					unsigned char *r = slurp(raw, &rl);
					assert_non_null(r);
					assert_int_equal(rl, npy_count(&a, NULL) * npy_dtype_size(a.dtype));
					assert_memory_equal(r, a.data, rl);
					/* the memory decoder agrees with the file reader */
					size_t fl = 0;
					unsigned char *fb = slurp(path, &fl);
					struct npy_array m;
					assert_int_equal(npy_decode(fb, fl, 0, &m, err), 0);
					assert_memory_equal(m.data, a.data, rl);
					npy_free(&m);
					free(fb);
					free(r);
					npy_free(&a);
					checked++;
				}
	assert_int_equal(checked, 2 * 4 * 5 * 3);
	char path[512], err[NPY_ERR_LEN];
	struct npy_array a;
	snprintf(path, sizeof path, "%s/fortran.npy", tmpdir);
	assert_int_equal(npy_read_file(path, 0, &a, err), NPY_E_UNSUPPORTED);
	snprintf(path, sizeof path, "%s/int.npy", tmpdir);
	assert_int_equal(npy_read_file(path, 0, &a, err), NPY_E_UNSUPPORTED);
	snprintf(path, sizeof path, "%s/missing.npy", tmpdir);
	assert_int_equal(npy_read_file(path, 0, &a, err), NPY_E_IO);
}

/* We write; numpy reads and compares with raw bytes we write alongside. */
static void test_numpy_reads(void **state)
{
	(void)state;
	static const size_t shapes[][4] = { { 1 }, { 11 }, { 4, 9 }, { 3, 2, 5 }, { 2, 2, 3, 3 } };
	static const char *dts[] = { "f4", "f8", "c8", "c16" };
	char err[NPY_ERR_LEN];
	for (int d = 0; d < 4; d++)
		for (int nd = 0; nd <= 4; nd++) {
			struct npy_array a;
			char path[512];
			make_array(&a, (enum npy_dtype)(NPY_F32 + d), nd, shapes[nd]);
			snprintf(path, sizeof path, "%s/ours_%s_%d.npy", tmpdir, dts[d], nd);
			assert_int_equal(npy_write_file(path, &a, err), 0);
			snprintf(path, sizeof path, "%s/ours_%s_%d.raw", tmpdir, dts[d], nd);
			FILE *f = fopen(path, "wb");
			fwrite(a.data, 1, npy_count(&a, NULL) * npy_dtype_size(a.dtype), f);
			fclose(f);
			npy_free(&a);
		}
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 PY " -c \"\n"
		 "import numpy as np\n"
		 "shapes = [(), (11,), (4, 9), (3, 2, 5), (2, 2, 3, 3)]\n"
		 "for dt in ['f4', 'f8', 'c8', 'c16']:\n"
		 "  for nd in range(5):\n"
		 "    x = np.load('%s/ours_%%s_%%d.npy' %% (dt, nd))\n"
		 "    r = np.fromfile('%s/ours_%%s_%%d.raw' %% (dt, nd), dtype='<' + dt)\n"
		 "    assert x.dtype == np.dtype('<' + dt), x.dtype\n"
		 "    assert x.shape == shapes[nd], (x.shape, shapes[nd])\n"
		 "    assert np.array_equal(x.ravel(), r), dt\n"
		 "\"",
		 tmpdir, tmpdir);
	assert_int_equal(system(cmd), 0);
}

static void test_bad_args(void **state)
{
	(void)state;
	char err[NPY_ERR_LEN];
	unsigned char *buf;
	size_t len;
	struct npy_array a = { 5, { 1, 1, 1, 1 }, NPY_F32, &len };
	assert_int_equal(npy_encode(&a, &buf, &len, err), NPY_E_ARG);
	a.ndim = 1;
	a.dtype = (enum npy_dtype)9;
	assert_int_equal(npy_encode(&a, &buf, &len, err), NPY_E_ARG);
	assert_int_equal(npy_encode(NULL, &buf, &len, err), NPY_E_ARG);
	assert_int_equal(npy_decode(NULL, 0, 0, &a, err), NPY_E_CORRUPT);
	assert_string_equal(npy_strerror(NPY_E_TRUNCATED), "truncated npy data");
	assert_int_equal(npy_dtype_size(NPY_C128), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_zero_extent),
		cmocka_unit_test(test_header_forms),
		cmocka_unit_test(test_max_bytes),
		cmocka_unit_test(test_count_overflow),
		cmocka_unit_test(test_truncate_and_flip),
		cmocka_unit_test(test_numpy_writes),
		cmocka_unit_test(test_numpy_reads),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
