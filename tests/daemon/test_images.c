/* The stored source images (daemon/images): SHA-256 digests (FIPS 180-2's "abc"), the count and
 * byte bounds (a replacement counts its old bytes out), references that outlive a DELETE, and
 * --image-dir loading and reloading: all or nothing, files gone removed, uploads kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/images.h"
#include "tests/testutil.h"

static unsigned char *dup_bytes(const char *s, size_t n)
{
	unsigned char *b = malloc(n);
	memcpy(b, s, n);
	return b;
}

static const struct image_facts FACTS = {3, 2, {.format = IMAGE_FORMAT_PNG, .bits = 8, .channels = 3, .orientation = 1, .width = 3, .height = 2}};

static void test_put_get_limits(void **state)
{
	(void)state;
	struct images *s;
	assert_int_equal(images_create(2, 10, &s), 0);
	int rep;
	assert_int_equal(images_put(s, "a", dup_bytes("abc", 3), 3, &FACTS, &rep, NULL), 0);
	assert_false(rep);
	struct image_entry *e = images_get(s, "a");
	assert_non_null(e);
	printf("sha256(abc) = %s\n", e->digest_hex);
	assert_string_equal(e->digest_hex,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(e->facts.width, 3);
	images_release(s, e);
	assert_int_equal(images_put(s, "b", dup_bytes("0123456", 7), 7, &FACTS, &rep, NULL), 0);
	/* 3 + 7 = 10 held: one more byte is IMAGES_E_BYTES; 11 alone IMAGES_E_TOO_LARGE */
	assert_int_equal(images_put(s, "c", dup_bytes("x", 1), 1, &FACTS, &rep, NULL), IMAGES_E_BYTES);
	assert_int_equal(images_put(s, "c", dup_bytes("0123456789a", 11), 11, &FACTS, &rep, NULL),
	                 IMAGES_E_TOO_LARGE);
	/* replacing b counts its 7 old bytes out */
	assert_int_equal(images_put(s, "b", dup_bytes("01234567", 7), 7, &FACTS, &rep, NULL), 0);
	assert_true(rep);
	assert_int_equal(images_delete(s, "b"), 0);
	assert_int_equal(images_delete(s, "b"), IMAGES_E_NOTFOUND);
	assert_int_equal(images_put(s, "c", dup_bytes("x", 1), 1, &FACTS, &rep, NULL), 0);
	assert_int_equal(images_put(s, "d", dup_bytes("y", 1), 1, &FACTS, &rep, NULL), IMAGES_E_FULL);
	assert_int_equal(images_put(s, ".hidden", dup_bytes("y", 1), 1, &FACTS, &rep, NULL), IMAGES_E_NAME);
	assert_int_equal(images_put(s, "a/b", dup_bytes("y", 1), 1, &FACTS, &rep, NULL), IMAGES_E_NAME);
	size_t n;
	unsigned long long bytes, maxb;
	int maxn;
	images_totals(s, &n, &bytes, &maxn, &maxb);
	assert_true(n == 2 && bytes == 4 && maxn == 2 && maxb == 10);
	/* the entry a PUT holds is its own, whatever a DELETE or PUT of the name does next */
	struct image_entry *held = NULL;
	assert_int_equal(images_put(s, "c", dup_bytes("pq", 2), 2, &FACTS, &rep, &held), 0);
	assert_non_null(held);
	assert_int_equal(images_delete(s, "c"), 0);
	assert_int_equal(images_put(s, "c", dup_bytes("rst", 3), 3, &FACTS, &rep, NULL), 0);
	assert_true(held->len == 2 && !memcmp(held->data, "pq", 2) && !strcmp(held->reg.name, "c"));
	images_release(s, held);
	assert_int_equal(images_put(s, "e", dup_bytes("z", 1), 1, &FACTS, &rep, &held),
	                 IMAGES_E_FULL);
	assert_null(held);
	/* a reference outlives DELETE and replacement */
	e = images_get(s, "a");
	assert_int_equal(images_delete(s, "a"), 0);
	assert_null(images_get(s, "a"));
	assert_memory_equal(e->data, "abc", 3);
	images_release(s, e);
	images_destroy(s);
	images_destroy(NULL);
}

static void write_png(const char *dir, const char *file, int w, int h)
{
	struct image img;
	assert_int_equal(image_alloc(&img, w, h, 3), 0);
	tu_fill_f32(img.pixels, (size_t)w * h * 3, 0.01f, 1.0f);
	char path[512], err[IMAGE_ERR_LEN];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	struct image_encode_opts o = {0};
	assert_int_equal(image_write_file(path, &img, &o, NULL, err), 0);
	image_free(&img);
}


struct list {
	char text[256];
};

static void add(const struct image_entry *e, void *ctx)
{
	struct list *l = ctx;
	snprintf(l->text + strlen(l->text), sizeof l->text - strlen(l->text), "%s%s%s",
	         l->text[0] ? "," : "", e->reg.name, e->reg.from_dir ? "*" : "");
}

static const char *listing(struct images *s, struct list *l)
{
	l->text[0] = 0;
	images_each(s, add, l);
	return l->text;
}

static void test_load_dir(void **state)
{
	(void)state;
	tu_seed_from_clock();
	char dir[] = "/tmp/fftbloom-images-XXXXXX";
	assert_non_null(mkdtemp(dir));
	write_png(dir, "one.png", 17, 5);
	write_png(dir, "two.png", 3, 7);
	char path[512];
	snprintf(path, sizeof path, "%s/notes.txt", dir); /* not an image: skipped */
	FILE *f = fopen(path, "w");
	fputs("hello", f);
	fclose(f);
	struct images *s;
	assert_int_equal(images_create(3, 1 << 20, &s), 0);
	int rep, loaded, removed;
	assert_int_equal(images_put(s, "upload", dup_bytes("abc", 3), 3, &FACTS, &rep, NULL), 0);
	struct image_limits lim = {0};
	char err[IMAGES_ERR_LEN];
	struct list l;
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), 0);
	assert_true(loaded == 2 && removed == 0);
	assert_string_equal(listing(s, &l), "one*,two*,upload");
	struct image_entry *e = images_get(s, "one");
	assert_true(e->facts.width == 17 && e->facts.height == 5 &&
	            e->facts.info.format == IMAGE_FORMAT_PNG);
	images_release(s, e);
	/* a corrupt file: the store as it was, the message names the file */
	snprintf(path, sizeof path, "%s/bad.png", dir);
	f = fopen(path, "wb");
	fwrite("\x89PNG\r\n\x1a\nbroken", 1, 14, f);
	fclose(f);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), IMAGES_E_DIR);
	printf("%s\n", err);
	assert_non_null(strstr(err, "bad.png"));
	assert_string_equal(listing(s, &l), "one*,two*,upload");
	unlink(path);
	/* a file gone is removed; a new one added; over --max-images: nothing changes */
	snprintf(path, sizeof path, "%s/two.png", dir);
	unlink(path);
	write_png(dir, "three.png", 4, 4);
	write_png(dir, "four.png", 4, 4);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), IMAGES_E_FULL);
	printf("%s\n", err);
	assert_string_equal(listing(s, &l), "one*,two*,upload");
	snprintf(path, sizeof path, "%s/four.png", dir);
	unlink(path);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), 0);
	assert_true(loaded == 2 && removed == 1);
	assert_string_equal(listing(s, &l), "one*,three*,upload");
	/* a file named like an upload replaces it */
	write_png(dir, "upload.png", 2, 2);
	snprintf(path, sizeof path, "%s/three.png", dir);
	unlink(path);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), 0);
	assert_string_equal(listing(s, &l), "one*,upload*");
	/* an upload newer than its file is kept over a reload (SIGHUP); a file written since
	 * replaces it */
	struct stat st;
	snprintf(path, sizeof path, "%s/one.png", dir);
	assert_int_equal(stat(path, &st), 0);
	struct timespec past[2] = {{st.st_mtim.tv_sec - 60, 0}, {st.st_mtim.tv_sec - 60, 0}};
	assert_int_equal(utimensat(AT_FDCWD, path, past, 0), 0);
	assert_int_equal(images_put(s, "one", dup_bytes("new", 3), 3, &FACTS, &rep, NULL), 0);
	assert_true(rep);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), 0);
	assert_string_equal(listing(s, &l), "one,upload*");
	e = images_get(s, "one");
	assert_true(e->len == 3 && !memcmp(e->data, "new", 3));
	images_release(s, e);
	struct timespec future[2] = {{0, UTIME_NOW}, {time(NULL) + 60, 0}};
	assert_int_equal(utimensat(AT_FDCWD, path, future, 0), 0);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), 0);
	assert_string_equal(listing(s, &l), "one*,upload*");
	/* the bytes bound */
	images_destroy(s);
	assert_int_equal(images_create(8, 100, &s), 0);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), IMAGES_E_TOO_LARGE);
	printf("%s\n", err);
	assert_string_equal(listing(s, &l), "");
	images_destroy(s);
	struct stat st1, st2;
	snprintf(path, sizeof path, "%s/one.png", dir);
	assert_int_equal(stat(path, &st1), 0);
	snprintf(path, sizeof path, "%s/upload.png", dir);
	assert_int_equal(stat(path, &st2), 0);
	unsigned long long both = (unsigned long long)(st1.st_size + st2.st_size);
	assert_int_equal(images_create(8, both - 1, &s), 0); /* each fits; both do not */
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), IMAGES_E_BYTES);
	printf("%s\n", err);
	assert_string_equal(listing(s, &l), "");
	images_destroy(s);
	assert_int_equal(images_create(8, both, &s), 0);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), 0);
	assert_string_equal(listing(s, &l), "one*,upload*");
	/* a bad name */
	snprintf(path, sizeof path, "%s/a b.png", dir);
	write_png(dir, "a b.png", 2, 2);
	assert_int_equal(images_load_dir(s, dir, &lim, &loaded, &removed, err), IMAGES_E_NAME);
	printf("%s\n", err);
	assert_string_equal(listing(s, &l), "one*,upload*");
	images_destroy(s);
	unlink(path);
	snprintf(path, sizeof path, "%s/one.png", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/upload.png", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_limits),
		cmocka_unit_test(test_load_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
