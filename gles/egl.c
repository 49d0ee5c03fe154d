/* Headless EGL context creation over the device and surfaceless platforms; see egl.h. */
#include "gles/egl.h"

#include "gles/fault.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif
#ifndef GL_SUBGROUP_SIZE_KHR
#define GL_SUBGROUP_SIZE_KHR 0x9532
#endif
#ifndef GL_SUBGROUP_SUPPORTED_STAGES_KHR
#define GL_SUBGROUP_SUPPORTED_STAGES_KHR 0x9533
#define GL_SUBGROUP_SUPPORTED_FEATURES_KHR 0x9534
#endif
#ifndef GL_SUBGROUP_FEATURE_SHUFFLE_BIT_KHR
#define GL_SUBGROUP_FEATURE_SHUFFLE_BIT_KHR 0x10
#endif

/* Whether subgroupShuffleXor(x, 1) reaches invocation 2t + 1 from 2t of a work group of local
 * size (2, 64), as the fused convolution's colour multiply assumes (gles/shaders/fft_shared.comp,
 * MULPAIR 1): no specification ties subgroup invocation IDs to local ones, so a dispatch checks
 * it once a context. */
static int shuffle_pairs_neighbours(void)
{
	static const char *src =
		"#version 310 es\n"
		"#extension GL_KHR_shader_subgroup_shuffle : require\n"
		"layout(local_size_x = 2, local_size_y = 64) in;\n"
		"layout(std430, binding = 0) buffer B { uint bad; };\n"
		"void main()\n"
		"{\n"
		"\tuint i = gl_LocalInvocationIndex;\n"
		"\tif (subgroupShuffleXor(i, 1u) != (i ^ 1u))\n"
		"\t\tatomicAdd(bad, 1u);\n"
		"}\n";
	GLuint sh = glCreateShader(GL_COMPUTE_SHADER), prog = glCreateProgram(), buf = 0;
	GLint ok = 0;
	glShaderSource(sh, 1, &src, NULL);
	glCompileShader(sh);
	glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
	if (ok) {
		glAttachShader(prog, sh);
		glLinkProgram(prog);
		glGetProgramiv(prog, GL_LINK_STATUS, &ok);
	}
	int pairs = 0;
	if (ok) {
		GLuint zero = 0;
		glGenBuffers(1, &buf);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
		glBufferData(GL_SHADER_STORAGE_BUFFER, sizeof zero, &zero, GL_DYNAMIC_READ);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
		glUseProgram(prog);
		glDispatchCompute(4, 1, 1);
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		const GLuint *bad = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, sizeof zero,
		                                     GL_MAP_READ_BIT);
		pairs = bad && *bad == 0;
		if (bad)
			glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
		glUseProgram(0);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
		glDeleteBuffers(1, &buf);
	}
	glDeleteProgram(prog);
	glDeleteShader(sh);
	return pairs && glGetError() == GL_NO_ERROR;
}

struct egl_ctx {
	EGLDisplay dpy;
	EGLContext ctx;
	EGLSurface surf; /* EGL_NO_SURFACE unless the display lacks surfaceless contexts */
	EGLConfig cfg;
	EGLint cattrs[9]; /* what the context was made with (egl_ctx_create_shared's too) */
	int shared;       /* made by egl_ctx_create_shared: the display is its first context's */
	int adopted;      /* EGLP_CURRENT: the caller's context, never made or destroyed here */
	int keep_display; /* egl_opts.keep_display */
	struct egl_info info;
	struct log_sink log;
	PFNGLGETGRAPHICSRESETSTATUSKHRPROC reset_status; /* NULL without GL_KHR/EXT_robustness */
};

const char *egl_error_name(int code)
{
	switch (code) {
	case EGL_SUCCESS: return "EGL_SUCCESS";
	case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
	case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
	case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
	case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
	case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
	case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
	case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
	case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
	case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
	case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
	case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
	case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
	case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
	case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
	}
	return "EGL_UNKNOWN_ERROR";
}

const char *egl_strerror(int code)
{
	switch (code) {
	case EGLC_OK: return "ok";
	case EGLC_E_NO_DISPLAY: return "no EGL display";
	case EGLC_E_INIT: return "EGL initialisation failed";
	case EGLC_E_CONTEXT: return "no OpenGL ES 3.1 context";
	case EGLC_E_DEVICE: return "EGL device index out of range";
	case EGLC_E_NOMEM: return "out of memory";
	case EGLC_E_CURRENT: return "eglMakeCurrent failed";
	}
	return "unknown error";
}

static int has_ext(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return 1;
	return 0;
}

static void append(char err[EGL_ERR_LEN], const char *fmt, ...)
{
	size_t used = strlen(err);
	if (used >= EGL_ERR_LEN - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + used, EGL_ERR_LEN - used, fmt, ap);
	va_end(ap);
}

#define MAX_DEVICES 16

static int query_devices(EGLDeviceEXT *devs, EGLint *n)
{
	*n = 0;
	const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (!cext || (!has_ext(cext, "EGL_EXT_device_enumeration") && !has_ext(cext, "EGL_EXT_device_base")))
		return 0;
	PFNEGLQUERYDEVICESEXTPROC query =
		(PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
	if (!query || !query(MAX_DEVICES, devs, n))
		return 0;
	return 1;
}

int egl_device_count(void)
{
	EGLDeviceEXT devs[MAX_DEVICES];
	EGLint n;
	query_devices(devs, &n);
	return n;
}

int egl_gpu_devices(int *list, int max)
{
	EGLDeviceEXT devs[MAX_DEVICES];
	EGLint n;
	if (!query_devices(devs, &n))
		return 0;
	PFNEGLQUERYDEVICESTRINGEXTPROC qs =
		(PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
	int k = 0;
	for (EGLint i = 0; i < n && k < max; i++) {
		const char *ext = qs ? qs(devs[i], EGL_EXTENSIONS) : NULL;
		if (!has_ext(ext, "EGL_MESA_device_software"))
			list[k++] = (int)i;
	}
	return k;
}

/* Gets a display for one platform; on failure appends "name: reason" to err. */
static EGLDisplay get_display(int platform, int index, int *ndev, char *devext, size_t devext_len,
                              char err[EGL_ERR_LEN])
{
	const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_pd =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (!cext || !get_pd) {
		append(err, "%s: EGL_EXT_platform_base missing (%s); ",
		       platform == EGLP_DEVICE ? "device" : "surfaceless", egl_error_name(eglGetError()));
		return EGL_NO_DISPLAY;
	}
	if (platform == EGLP_DEVICE) {
		EGLDeviceEXT devs[MAX_DEVICES];
		EGLint n = 0;
		if (!has_ext(cext, "EGL_EXT_platform_device") || !query_devices(devs, &n)) {
			append(err, "device: EGL_EXT_platform_device not available (%s); ",
			       egl_error_name(eglGetError()));
			return EGL_NO_DISPLAY;
		}
		*ndev = n;
		if (index < 0 || index >= n) {
			append(err, "device: index %d out of range (%d EGL devices); ", index, (int)n);
			return EGL_NO_DISPLAY;
		}
		PFNEGLQUERYDEVICESTRINGEXTPROC qds =
			(PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
		if (qds) {
			const char *de = qds(devs[index], EGL_EXTENSIONS);
			snprintf(devext, devext_len, "%s", de ? de : "");
		}
		EGLDisplay d = get_pd(EGL_PLATFORM_DEVICE_EXT, devs[index], NULL);
		if (d == EGL_NO_DISPLAY)
			append(err, "device %d: eglGetPlatformDisplayEXT failed: %s; ", index,
			       egl_error_name(eglGetError()));
		return d;
	}
	if (!has_ext(cext, "EGL_MESA_platform_surfaceless")) {
		append(err, "surfaceless: EGL_MESA_platform_surfaceless not available (%s); ",
		       egl_error_name(eglGetError()));
		return EGL_NO_DISPLAY;
	}
	EGLDisplay d = get_pd(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
	if (d == EGL_NO_DISPLAY)
		append(err, "surfaceless: eglGetPlatformDisplayEXT failed: %s; ",
		       egl_error_name(eglGetError()));
	return d;
}

static void GL_APIENTRY debug_cb(GLenum source, GLenum type, GLuint id, GLenum severity,
                                 GLsizei length, const GLchar *message, const void *user)
{
	(void)source, (void)id, (void)length;
	const struct egl_ctx *c = user;
	int level = severity == GL_DEBUG_SEVERITY_HIGH_KHR ? LOG_ERROR
	          : severity == GL_DEBUG_SEVERITY_MEDIUM_KHR ? LOG_WARN : LOG_DEBUG;
	if (type == GL_DEBUG_TYPE_ERROR_KHR)
		level = LOG_ERROR;
	log_sinkf(&c->log, level, "GL debug: %s", message);
}

/* Tries to make an ES 3.1 context on one display; 0 on success. */
static int make_context(struct egl_ctx *c, int debug, const char *pname, char err[EGL_ERR_LEN])
{
	EGLint major, minor;
	if (!eglInitialize(c->dpy, &major, &minor)) {
		append(err, "%s: eglInitialize failed: %s; ", pname, egl_error_name(eglGetError()));
		return EGLC_E_INIT;
	}
	if (!eglBindAPI(EGL_OPENGL_ES_API)) {
		append(err, "%s: eglBindAPI(EGL_OPENGL_ES_API) failed: %s; ", pname,
		       egl_error_name(eglGetError()));
		eglTerminate(c->dpy);
		return EGLC_E_CONTEXT;
	}
	const char *dext = eglQueryString(c->dpy, EGL_EXTENSIONS);
	EGLConfig cfg = EGL_NO_CONFIG_KHR;
	int need_pbuffer = !has_ext(dext, "EGL_KHR_surfaceless_context");
	if (!has_ext(dext, "EGL_KHR_no_config_context") || need_pbuffer) {
		const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE,
		                        EGL_PBUFFER_BIT, EGL_NONE};
		EGLint n = 0;
		if (!eglChooseConfig(c->dpy, attrs, &cfg, 1, &n) || n < 1) {
			append(err, "%s: no ES3 config: %s; ", pname, egl_error_name(eglGetError()));
			eglTerminate(c->dpy);
			return EGLC_E_CONTEXT;
		}
	}
	/* a context that is told of a GPU reset (and lost with it) where EGL offers that, so that
	 * a reset shows as egl_ctx_reset_status instead of as wrong pixels */
	int egl15 = major > 1 || minor >= 5;
	int robust = egl15 || has_ext(dext, "EGL_EXT_create_context_robustness");
	EGLint cattrs[9] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1};
	int na = 4;
	if (debug)
		cattrs[na++] = EGL_CONTEXT_OPENGL_DEBUG, cattrs[na++] = EGL_TRUE;
	int robust_at = na;
	if (robust)
		cattrs[na++] = egl15 ? EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY
		                     : EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY_EXT,
		cattrs[na++] = EGL_LOSE_CONTEXT_ON_RESET;
	cattrs[na] = EGL_NONE;
	c->ctx = eglCreateContext(c->dpy, cfg, EGL_NO_CONTEXT, cattrs);
	if (c->ctx == EGL_NO_CONTEXT && robust) { /* offered, yet refused: without it */
		cattrs[robust_at] = EGL_NONE;
		c->ctx = eglCreateContext(c->dpy, cfg, EGL_NO_CONTEXT, cattrs);
	}
	if (c->ctx == EGL_NO_CONTEXT) {
		append(err, "%s: eglCreateContext(ES 3.1) failed: %s; ", pname,
		       egl_error_name(eglGetError()));
		eglTerminate(c->dpy);
		return EGLC_E_CONTEXT;
	}
	c->cfg = cfg;
	memcpy(c->cattrs, cattrs, sizeof cattrs);
	c->surf = EGL_NO_SURFACE;
	if (need_pbuffer) {
		const EGLint pattrs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
		c->surf = eglCreatePbufferSurface(c->dpy, cfg, pattrs);
	}
	if (!eglMakeCurrent(c->dpy, c->surf, c->surf, c->ctx)) {
		append(err, "%s: eglMakeCurrent failed: %s; ", pname, egl_error_name(eglGetError()));
		eglDestroyContext(c->dpy, c->ctx);
		eglTerminate(c->dpy);
		c->ctx = EGL_NO_CONTEXT;
		return EGLC_E_CURRENT;
	}
	snprintf(c->info.egl_version, sizeof c->info.egl_version, "%d.%d", major, minor);
	const char *v = eglQueryString(c->dpy, EGL_VENDOR);
	snprintf(c->info.egl_vendor, sizeof c->info.egl_vendor, "%s", v ? v : "");
	return 0;
}

static void read_facts(struct egl_ctx *c)
{
	struct egl_info *i = &c->info;
	snprintf(i->gl_vendor, sizeof i->gl_vendor, "%s", (const char *)glGetString(GL_VENDOR));
	snprintf(i->renderer, sizeof i->renderer, "%s", (const char *)glGetString(GL_RENDERER));
	snprintf(i->version, sizeof i->version, "%s", (const char *)glGetString(GL_VERSION));
	snprintf(i->glsl_version, sizeof i->glsl_version, "%s",
	         (const char *)glGetString(GL_SHADING_LANGUAGE_VERSION));
	glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &i->max_shared_memory);
	glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &i->max_invocations);
	for (GLuint k = 0; k < 3; k++) {
		glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, k, &i->max_group_size[k]);
		glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, k, &i->max_group_count[k]);
	}
	GLint64 ssbo = 0;
	glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &ssbo);
	i->max_ssbo_size = (long long)ssbo;
	glGetIntegerv(GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS, &i->max_ssbo_bindings);
	GLint n = 0;
	glGetIntegerv(GL_NUM_EXTENSIONS, &n);
	for (GLint k = 0; k < n; k++) {
		const char *e = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)k);
		if (!e)
			continue;
		if (!strcmp(e, "GL_EXT_disjoint_timer_query"))
			i->timer_query = 1;
		else if (!strcmp(e, "GL_KHR_shader_subgroup"))
			i->subgroup = 1;
		else if (!strcmp(e, "GL_EXT_buffer_storage"))
			i->buffer_storage = 1;
		else if (!strcmp(e, "GL_KHR_robustness") || !strcmp(e, "GL_EXT_robustness"))
			i->robustness = 1;
		else if (!strcmp(e, "GL_EXT_shader_explicit_arithmetic_types_float16") ||
		         !strcmp(e, "GL_EXT_shader_16bit_storage"))
			i->fp16 = 1;
	}
	if (i->subgroup) {
		GLint s = 0;
		glGetIntegerv(GL_SUBGROUP_SIZE_KHR, &s);
		i->subgroup_size = glGetError() == GL_NO_ERROR ? s : 0;
		GLint stages = 0, features = 0;
		glGetIntegerv(GL_SUBGROUP_SUPPORTED_STAGES_KHR, &stages);
		glGetIntegerv(GL_SUBGROUP_SUPPORTED_FEATURES_KHR, &features);
		i->subgroup_shuffle = glGetError() == GL_NO_ERROR && (stages & GL_COMPUTE_SHADER_BIT) &&
		                      (features & GL_SUBGROUP_FEATURE_SHUFFLE_BIT_KHR);
		i->subgroup_pairs = i->subgroup_shuffle && i->subgroup_size >= 2 &&
		                    shuffle_pairs_neighbours();
		if (i->subgroup_shuffle && !i->subgroup_pairs)
			log_sinkf(&c->log, LOG_INFO, "subgroup shuffles do not pair invocations 2t and "
			          "2t + 1: colour kernels' fused columns take partners through shared "
			          "memory");
	}
	if (i->robustness) {
		c->reset_status = (PFNGLGETGRAPHICSRESETSTATUSKHRPROC)eglGetProcAddress(
			"glGetGraphicsResetStatusKHR");
		if (!c->reset_status)
			c->reset_status = (PFNGLGETGRAPHICSRESETSTATUSKHRPROC)eglGetProcAddress(
				"glGetGraphicsResetStatusEXT");
		GLint strategy = 0;
		glGetIntegerv(GL_RESET_NOTIFICATION_STRATEGY_KHR, &strategy);
		i->reset_notification = c->reset_status && strategy == GL_LOSE_CONTEXT_ON_RESET_KHR;
	}
	static const char *const software[] = {"llvmpipe", "softpipe", "SwiftShader",
	                                       "Software Rasterizer", "lavapipe"};
	for (size_t k = 0; k < sizeof software / sizeof software[0]; k++)
		if (strstr(i->renderer, software[k]))
			i->software = 1;
	while (glGetError() != GL_NO_ERROR) {
	}
}

int egl_ctx_reset_status(struct egl_ctx *c)
{
	if (gles_fault_fire(GLES_FAULT_LOST, NULL))
		return EGL_RESET_UNKNOWN;
	if (!c || !c->reset_status)
		return EGL_RESET_NONE;
	switch (c->reset_status()) {
	case GL_NO_ERROR: return EGL_RESET_NONE;
	case GL_GUILTY_CONTEXT_RESET_KHR: return EGL_RESET_GUILTY;
	case GL_INNOCENT_CONTEXT_RESET_KHR: return EGL_RESET_INNOCENT;
	default: return EGL_RESET_UNKNOWN;
	}
}

const char *egl_reset_name(int status)
{
	switch (status) {
	case EGL_RESET_NONE: return "none";
	case EGL_RESET_GUILTY: return "a reset this context caused";
	case EGL_RESET_INNOCENT: return "a reset another context caused";
	case EGL_RESET_UNKNOWN: return "a reset of unknown cause";
	}
	return "?";
}

int egl_ctx_create(const struct egl_opts *o, const struct log_sink *log, struct egl_ctx **out,
                   char err[EGL_ERR_LEN])
{
	*out = NULL;
	err[0] = 0;
	struct egl_ctx *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, EGL_ERR_LEN, "out of memory");
		return EGLC_E_NOMEM;
	}
	if (log)
		c->log = *log;
	if (o->platform == EGLP_CURRENT) {
		c->dpy = eglGetCurrentDisplay();
		c->ctx = eglGetCurrentContext();
		c->surf = eglGetCurrentSurface(EGL_DRAW);
		if (c->dpy == EGL_NO_DISPLAY || c->ctx == EGL_NO_CONTEXT) {
			snprintf(err, EGL_ERR_LEN, "current: no EGL context is current on this thread");
			free(c);
			return EGLC_E_CONTEXT;
		}
		c->adopted = 1;
		snprintf(c->info.platform, sizeof c->info.platform, "current");
		c->info.device_index = -1;
		read_facts(c);
		*out = c;
		return 0;
	}
	int order[2], count = 0;
	if (o->platform == EGLP_AUTO || o->platform == EGLP_DEVICE)
		order[count++] = EGLP_DEVICE;
	if (o->platform == EGLP_AUTO || o->platform == EGLP_SURFACELESS)
		order[count++] = EGLP_SURFACELESS;
	int rc = EGLC_E_NO_DISPLAY;
	for (int k = 0; k < count; k++) {
		int ndev = 0;
		char devext[256] = "";
		c->dpy = get_display(order[k], o->device_index, &ndev, devext, sizeof devext, err);
		if (c->dpy == EGL_NO_DISPLAY) {
			rc = o->platform == EGLP_DEVICE && ndev > 0 ? EGLC_E_DEVICE : EGLC_E_NO_DISPLAY;
			continue;
		}
		const char *pname = order[k] == EGLP_DEVICE ? "device" : "surfaceless";
		rc = make_context(c, o->debug, pname, err);
		if (rc == 0) {
			snprintf(c->info.platform, sizeof c->info.platform, "%s", pname);
			c->info.device_index = order[k] == EGLP_DEVICE ? o->device_index : -1;
			c->info.device_count = ndev ? ndev : egl_device_count();
			snprintf(c->info.device_ext, sizeof c->info.device_ext, "%s", devext);
			break;
		}
	}
	if (rc) {
		size_t l = strlen(err);
		if (l >= 2 && err[l - 2] == ';')
			err[l - 2] = 0;
		free(c);
		return rc;
	}
	read_facts(c);
	c->keep_display = o->keep_display;
	if (o->debug) {
		PFNGLDEBUGMESSAGECALLBACKKHRPROC cb =
			(PFNGLDEBUGMESSAGECALLBACKKHRPROC)eglGetProcAddress("glDebugMessageCallbackKHR");
		if (cb) {
			glEnable(GL_DEBUG_OUTPUT_KHR);
			glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS_KHR);
			cb(debug_cb, c);
			c->info.debug_output = 1;
		}
		while (glGetError() != GL_NO_ERROR) {
		}
	}
	log_sinkf(&c->log, LOG_INFO, "EGL %s platform: %s, %s", c->info.platform,
	          c->info.renderer, c->info.version);
	*out = c;
	return 0;
}

const struct egl_info *egl_ctx_info(const struct egl_ctx *c)
{
	return &c->info;
}

int egl_ctx_make_current(struct egl_ctx *c)
{
	return eglMakeCurrent(c->dpy, c->surf, c->surf, c->ctx) ? 0 : EGLC_E_CURRENT;
}

void egl_ctx_release(struct egl_ctx *c)
{
	eglMakeCurrent(c->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

int egl_ctx_create_shared(struct egl_ctx *main, struct egl_ctx **out, char err[EGL_ERR_LEN])
{
	*out = NULL;
	if (main->adopted) {
		snprintf(err, EGL_ERR_LEN, "the caller's context (platform current) is not shared");
		return EGLC_E_CONTEXT;
	}
	struct egl_ctx *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, EGL_ERR_LEN, "out of memory");
		return EGLC_E_NOMEM;
	}
	c->dpy = main->dpy, c->cfg = main->cfg, c->info = main->info, c->log = main->log;
	memcpy(c->cattrs, main->cattrs, sizeof c->cattrs);
	c->shared = 1;
	c->ctx = eglCreateContext(c->dpy, c->cfg, main->ctx, c->cattrs);
	if (c->ctx == EGL_NO_CONTEXT) {
		snprintf(err, EGL_ERR_LEN, "eglCreateContext(shared) failed: %s",
		         egl_error_name(eglGetError()));
		free(c);
		return EGLC_E_CONTEXT;
	}
	c->surf = EGL_NO_SURFACE;
	if (main->surf != EGL_NO_SURFACE) { /* a surface is current on one thread at a time */
		const EGLint pattrs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
		c->surf = eglCreatePbufferSurface(c->dpy, c->cfg, pattrs);
		if (c->surf == EGL_NO_SURFACE) {
			snprintf(err, EGL_ERR_LEN, "eglCreatePbufferSurface(shared) failed: %s",
			         egl_error_name(eglGetError()));
			eglDestroyContext(c->dpy, c->ctx);
			free(c);
			return EGLC_E_CONTEXT;
		}
	}
	*out = c;
	return 0;
}

void egl_ctx_destroy(struct egl_ctx *c)
{
	if (!c)
		return;
	if (c->adopted) { /* the caller's: left as it is */
		free(c);
		return;
	}
	if (c->shared) { /* released by its thread; the display stays its first context's */
		if (c->surf != EGL_NO_SURFACE)
			eglDestroySurface(c->dpy, c->surf);
		eglDestroyContext(c->dpy, c->ctx);
		free(c);
		return;
	}
	eglMakeCurrent(c->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	if (c->surf != EGL_NO_SURFACE)
		eglDestroySurface(c->dpy, c->surf);
	eglDestroyContext(c->dpy, c->ctx);
	if (!c->keep_display)
		eglTerminate(c->dpy);
	free(c);
}
