/* fftbloom info: makes the context the daemon would make (through the public library) and
 * prints its facts as JSON: the GPU, its driver and limits, the build (version, commit,
 * compiler, flags) and the libraries' versions. */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/buildinfo.h"
#include "core/config.h"
#include "core/log.h"
#include "cli/common.h"
#include "lib/include/fftbloom.h"

/* The NVIDIA driver's version from GL_VERSION ("OpenGL ES 3.2 NVIDIA 550.54.15"), or NULL. */
static json_t *nvidia_driver(const char *gl_version)
{
	const char *p = strstr(gl_version, "NVIDIA ");
	if (!p)
		return json_null();
	p += 7;
	size_t n = strspn(p, "0123456789.");
	return n ? json_stringn(p, n) : json_null();
}

static json_t *build_facts(void)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "version", buildinfo_version(), "commit",
	                 buildinfo_commit(), "compiler", buildinfo_compiler(), "cflags",
	                 buildinfo_cflags());
}

/* Every library's version as it reports itself (null where it cannot). */
static json_t *libraries(void)
{
	struct buildinfo_lib l[BUILDINFO_LIB_MAX];
	size_t n = buildinfo_libraries(l, BUILDINFO_LIB_MAX);
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, l[i].name, l[i].version[0] ? json_string(l[i].version)
		                                                  : json_null());
	json_object_set_new(o, "libcurl", json_string(curl_version_info(CURLVERSION_NOW)->version));
	return o;
}

int cli_info(int argc, char **argv)
{
	struct gpu_config gc;
	char err[OPT_ERR_LEN];
	int npos = 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help")) {
			printf("usage: fftbloom info [options]\n");
			opts_print_help(stdout, gpu_config_table, gpu_config_table_len);
			return 0;
		}
	if (gpu_config_load(&gc, argc, argv, 1, &npos, err) ||
	    config_engine_check(&gc, err, sizeof err)) {
		fprintf(stderr, "fftbloom info: %s\n", err);
		return 2;
	}
	if (npos) {
		fprintf(stderr, "fftbloom info: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	log_setup(LOG_WARN, 0);
	gc.require_gpu = 0; /* the facts of whatever renderer there is, software ones included */
	/* auto: the GL context's facts where there is one, and the engine auto would take on it */
	int asked = gc.engine;
	if (asked == ENGINE_CHOICE_AUTO)
		gc.engine = ENGINE_CHOICE_GPU;
	fftbloom_context *fc;
	if (cli_lib_open(&gc, 0, &fc)) {
		if (asked != ENGINE_CHOICE_AUTO)
			return 1;
		gc.engine = ENGINE_CHOICE_CPU;
		if (cli_lib_open(&gc, 0, &fc))
			return 1;
	}
	const char *engine = !strcmp(fftbloom_context_engine(fc), "cpu") ||
	                     (asked == ENGINE_CHOICE_AUTO && fftbloom_context_software(fc)) ? "cpu" : "gpu";
	struct fftbloom_device_info info;
	fftbloom_context_info(fc, &info);
	const struct fftbloom_device_info *i = &info;
	json_t *o = json_object();
	json_object_set_new(o, "engine", json_string(engine));
	json_object_set_new(o, "platform", json_string(i->platform));
	json_object_set_new(o, "device_index", json_integer(i->device_index));
	json_object_set_new(o, "device_count", json_integer(i->device_count));
	json_object_set_new(o, "egl_vendor", json_string(i->egl_vendor));
	json_object_set_new(o, "egl_version", json_string(i->egl_version));
	json_object_set_new(o, "gl_vendor", json_string(i->gl_vendor));
	json_object_set_new(o, "renderer", json_string(i->renderer));
	json_object_set_new(o, "version", json_string(i->version));
	json_object_set_new(o, "glsl_version", json_string(i->glsl_version));
	json_object_set_new(o, "nvidia_driver", nvidia_driver(i->version));
	json_object_set_new(o, "software", json_boolean(i->software));
	json_object_set_new(o, "device_extensions", json_string(i->device_ext));
	json_object_set_new(o, "max_compute_shared_memory", json_integer(i->max_shared_memory));
	json_object_set_new(o, "max_work_group_invocations", json_integer(i->max_invocations));
	json_object_set_new(o, "max_work_group_size",
	                    json_pack("[iii]", i->max_group_size[0], i->max_group_size[1],
	                              i->max_group_size[2]));
	json_object_set_new(o, "max_work_group_count",
	                    json_pack("[iii]", i->max_group_count[0], i->max_group_count[1],
	                              i->max_group_count[2]));
	json_object_set_new(o, "max_storage_buffer_size", json_integer(i->max_ssbo_size));
	json_object_set_new(o, "max_storage_buffer_bindings", json_integer(i->max_ssbo_bindings));
	json_object_set_new(o, "timer_query", json_boolean(i->timer_query));
	json_object_set_new(o, "buffer_storage", json_boolean(i->buffer_storage));
	json_object_set_new(o, "subgroup", json_boolean(i->subgroup));
	json_object_set_new(o, "subgroup_size", json_integer(i->subgroup_size));
	json_object_set_new(o, "subgroup_shuffle", json_boolean(i->subgroup_shuffle));
	json_object_set_new(o, "fp16", json_boolean(i->fp16));
	json_object_set_new(o, "robustness", json_boolean(i->robustness));
	json_object_set_new(o, "reset_notification", json_boolean(i->reset_notification));
	json_object_set_new(o, "build", build_facts());
	json_object_set_new(o, "libraries", libraries());
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", s);
	free(s);
	json_decref(o);
	fftbloom_context_destroy(fc);
	return 0;
}
