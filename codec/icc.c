/* Colour profiles through Little CMS 2: descriptions checked and named, conversions to and from
 * the working space (linear Rec. 709 primaries, D65, unclamped). Matrix-shaper profiles are
 * applied as their curves and one 3x3 matrix (exact, unbounded); other profiles through an
 * lcms2 transform to XYZ. lcms2's messages go to a per-call context, never to stderr. */
#include "codec/icc.h"

#include <lcms2.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/colour.h"
#include "codec/image_codec.h"
#include "core/parallel.h"

struct icc_log {
	char msg[96];
};

static void log_fn(cmsContext ctx, cmsUInt32Number code, const char *text)
{
	struct icc_log *l = cmsGetContextUserData(ctx);
	(void)code;
	if (l && !l->msg[0])
		snprintf(l->msg, sizeof l->msg, "%s", text ? text : "");
}

static cmsContext ctx_new(struct icc_log *l)
{
	memset(l, 0, sizeof *l);
	cmsContext c = cmsCreateContext(NULL, l);
	if (c)
		cmsSetLogErrorHandlerTHR(c, log_fn);
	return c;
}

/* H.273 colour primaries: red, green, blue, white (CIE xy); 0 rows for code points without. */
static const float cicp_prim[23][8] = {
	[1] = {0.64f, 0.33f, 0.30f, 0.60f, 0.15f, 0.06f, 0.3127f, 0.3290f},
	[4] = {0.67f, 0.33f, 0.21f, 0.71f, 0.14f, 0.08f, 0.310f, 0.316f},
	[5] = {0.64f, 0.33f, 0.29f, 0.60f, 0.15f, 0.06f, 0.3127f, 0.3290f},
	[6] = {0.630f, 0.340f, 0.310f, 0.595f, 0.155f, 0.070f, 0.3127f, 0.3290f},
	[7] = {0.630f, 0.340f, 0.310f, 0.595f, 0.155f, 0.070f, 0.3127f, 0.3290f},
	[9] = {0.708f, 0.292f, 0.170f, 0.797f, 0.131f, 0.046f, 0.3127f, 0.3290f},
	[11] = {0.680f, 0.320f, 0.265f, 0.690f, 0.150f, 0.060f, 0.314f, 0.351f},
	[12] = {0.680f, 0.320f, 0.265f, 0.690f, 0.150f, 0.060f, 0.3127f, 0.3290f},
};

/* A tone curve for H.273 transfer tc (2 unspecified: sRGB), NULL for one without. */
static cmsToneCurve *cicp_curve(cmsContext ctx, int tc)
{
	static const double srgb[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
	static const double bt709[5] = {1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081};
	double g;
	switch (tc) {
	case 2: case 13: return cmsBuildParametricToneCurve(ctx, 4, srgb);
	case 1: case 6: case 14: case 15: return cmsBuildParametricToneCurve(ctx, 4, bt709);
	case 4: g = 2.2; return cmsBuildParametricToneCurve(ctx, 1, &g);
	case 5: g = 2.8; return cmsBuildParametricToneCurve(ctx, 1, &g);
	case 8: g = 1.0; return cmsBuildParametricToneCurve(ctx, 1, &g);
	default: return NULL;
	}
}

/* An RGB profile of primaries/white xy[8] with curve c (or linear), or NULL. */
static cmsHPROFILE rgb_profile(cmsContext ctx, const float xy[8], cmsToneCurve *c)
{
	cmsCIExyY white = {xy[6], xy[7], 1.0};
	cmsCIExyYTRIPLE prim = {{xy[0], xy[1], 1.0}, {xy[2], xy[3], 1.0}, {xy[4], xy[5], 1.0}};
	double one = 1.0;
	cmsToneCurve *lin = c ? NULL : cmsBuildParametricToneCurve(ctx, 1, &one);
	cmsToneCurve *cs[3] = {c ? c : lin, c ? c : lin, c ? c : lin};
	cmsHPROFILE p = cs[0] ? cmsCreateRGBProfileTHR(ctx, &white, &prim, cs) : NULL;
	if (lin)
		cmsFreeToneCurve(lin);
	return p;
}

static int xy_valid(const float xy[8])
{
	for (int i = 0; i < 8; i += 2)
		if (!(xy[i] > 0 && xy[i] < 1 && xy[i + 1] > 0 && xy[i + 1] < 1 && xy[i] + xy[i + 1] <= 1))
			return 0;
	return 1;
}

static int png_srgb_gamma(float g)
{
	return fabs(g - 1 / 0.45455) < 0.02;
}

static int xy_near(const float *a, const float *b)
{
	for (int i = 0; i < 8; i++)
		if (!(fabs(a[i] - b[i]) < 0.002))
			return 0;
	return 1;
}

/* Opens the profile c describes, or NULL with note set. */
static cmsHPROFILE open_profile(cmsContext ctx, const struct image_colour *c, struct icc_log *l,
				char *note, size_t nlen)
{
	cmsHPROFILE p = NULL;
	if (c->icc) {
		if (c->icc_len < 132 || c->icc_len > ICC_MAX_BYTES) {
			snprintf(note, nlen, "an ICC profile of %zu bytes (%s) was ignored", c->icc_len,
				 c->icc_len < 132 ? "shorter than its header" : "more than 4 MiB");
			return NULL;
		}
		p = cmsOpenProfileFromMemTHR(ctx, c->icc, (cmsUInt32Number)c->icc_len);
		if (!p)
			snprintf(note, nlen, "an unreadable ICC profile was ignored%s%s",
				 l->msg[0] ? ": " : "", l->msg);
		return p;
	}
	if (c->cicp) {
		int pr = c->primaries == 2 ? 1 : c->primaries;
		cmsToneCurve *tc = cicp_curve(ctx, c->linear ? 8 : c->transfer);
		if (pr < 0 || pr > 22 || !cicp_prim[pr][0] || !tc) {
			snprintf(note, nlen, "nclx primaries %d / transfer %d have no conversion here "
				 "and were ignored", c->primaries, c->transfer);
			if (tc)
				cmsFreeToneCurve(tc);
			return NULL;
		}
		p = rgb_profile(ctx, cicp_prim[pr], tc);
		cmsFreeToneCurve(tc);
		return p;
	}
	if (c->chrm || c->gamma > 0) {
		static const float rec709[8] = {0.64f, 0.33f, 0.30f, 0.60f, 0.15f, 0.06f, 0.3127f,
						0.3290f};
		const float *xy = c->chrm ? c->xy : rec709;
		double g = c->linear || !(c->gamma > 0) ? 1.0 : c->gamma;
		if (!xy_valid(xy) || !(g >= 0.1 && g <= 10)) {
			snprintf(note, nlen, "chromaticities or gamma out of range were ignored");
			return NULL;
		}
		/* gAMA 0.45455 is how PNG writers say sRGB's curve: taken as sRGB's, as browsers
		 * do; no gAMA beside cHRM also means sRGB's curve */
		cmsToneCurve *tc = c->linear ? NULL
				   : !(c->gamma > 0) || png_srgb_gamma(c->gamma) ? cicp_curve(ctx, 13)
				   : cmsBuildParametricToneCurve(ctx, 1, &g);
		if (!c->linear && !tc)
			return NULL;
		p = rgb_profile(ctx, xy, tc);
		if (tc)
			cmsFreeToneCurve(tc);
		return p;
	}
	return NULL;
}

/* XYZ (D50, lcms2's PCS) from linear sRGB: the colorants of lcms2's sRGB profile; and back. */
static double srgb_to_xyz[3][3], xyz_to_srgb[3][3];
static pthread_once_t once_mat = PTHREAD_ONCE_INIT;

static int invert3(const double a[3][3], double r[3][3])
{
	double d = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
		   a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
		   a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
	if (!(fabs(d) > 1e-12))
		return -1;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			int i1 = (j + 1) % 3, i2 = (j + 2) % 3, j1 = (i + 1) % 3, j2 = (i + 2) % 3;
			r[i][j] = (a[i1][j1] * a[i2][j2] - a[i1][j2] * a[i2][j1]) / d;
		}
	return 0;
}

/* The colorant matrix of a matrix-shaper RGB profile (columns: rXYZ, gXYZ, bXYZ). */
static int colorants(cmsHPROFILE p, double m[3][3])
{
	static const cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag,
						cmsSigBlueColorantTag};
	for (int k = 0; k < 3; k++) {
		const cmsCIEXYZ *x = cmsReadTag(p, tags[k]);
		if (!x)
			return -1;
		m[0][k] = x->X;
		m[1][k] = x->Y;
		m[2][k] = x->Z;
	}
	return 0;
}

static void build_mat(void)
{
	cmsHPROFILE s = cmsCreate_sRGBProfile();
	if (!s || colorants(s, srgb_to_xyz) || invert3(srgb_to_xyz, xyz_to_srgb))
		memset(xyz_to_srgb, 0, sizeof xyz_to_srgb);
	if (s)
		cmsCloseProfile(s);
}

static struct image_colour srgb_desc;
static pthread_once_t once_srgb = PTHREAD_ONCE_INIT;

static void build_srgb(void)
{
	srgb_desc.srgb = 1;
	srgb_desc.cicp = 1;
	srgb_desc.primaries = 1;
	srgb_desc.transfer = 13;
	srgb_desc.matrix = 6;
	srgb_desc.full_range = 1;
	snprintf(srgb_desc.name, sizeof srgb_desc.name, "sRGB");
	cmsHPROFILE s = cmsCreate_sRGBProfile();
	cmsUInt32Number n = 0;
	if (s && cmsSaveProfileToMem(s, NULL, &n) && n >= 128 && (srgb_desc.icc = malloc(n)) &&
	    cmsSaveProfileToMem(s, srgb_desc.icc, &n)) {
		/* lcms2 stamps the header's creation date (bytes 24-35, big-endian year, month, day,
		 * hour, minute, second) with the time the process made it: a fixed date instead, so
		 * that every process tags its answers with the same bytes (answers are compared and
		 * cached byte for byte, ETags included); the profile ID (bytes 84-99) stays 0 */
		static const unsigned char date[12] = {0x07, 0xe8, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};
		memcpy(srgb_desc.icc + 24, date, sizeof date); /* 2024-01-01 00:00:00 */
		srgb_desc.icc_len = n;
	} else {
		free(srgb_desc.icc);
		srgb_desc.icc = NULL;
	}
	if (s)
		cmsCloseProfile(s);
}

const struct image_colour *icc_srgb(void)
{
	pthread_once(&once_srgb, build_srgb);
	return &srgb_desc;
}

/* 1 when the curves and colorants of matrix-shaper p are sRGB's within a quarter of an 8-bit
 * code (many files embed one of the several sRGB profiles in circulation). */
static int is_srgb(cmsHPROFILE p, int gray)
{
	if (!cmsIsMatrixShaper(p))
		return 0;
	double m[3][3];
	pthread_once(&once_mat, build_mat);
	if (!gray) {
		if (colorants(p, m))
			return 0;
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				if (!(fabs(m[i][j] - srgb_to_xyz[i][j]) < 2e-3))
					return 0;
	}
	static const cmsTagSignature trc[4] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag,
					       cmsSigGrayTRCTag};
	for (int k = gray ? 3 : 0; k < (gray ? 4 : 3); k++) {
		const cmsToneCurve *t = cmsReadTag(p, trc[k]);
		if (!t)
			return 0;
		for (int i = 0; i <= 32; i++) {
			float u = (float)i / 32;
			if (!(fabs(cmsEvalToneCurveFloat(t, u) - srgb_to_linear_d(u)) < 1e-3))
				return 0;
		}
	}
	return 1;
}

/* c reset to the default colour (sRGB, or linear Rec. 709 for linear samples) with note. */
static void reset_default(struct image_colour *c, const char *note)
{
	int linear = c->linear;
	image_colour_free(c);
	c->linear = linear;
	c->srgb = 1;
	snprintf(c->name, sizeof c->name, "%s", linear ? "linear Rec. 709" : "sRGB");
	snprintf(c->note, sizeof c->note, "%s", note);
}

int icc_describe(struct image_colour *c, int channels)
{
	struct icc_log l;
	char note[sizeof c->note] = "";
	int gray = channels <= 2;
	if (!c->icc && !c->cicp && !c->chrm && !(c->gamma > 0)) {
		c->srgb = 1;
		snprintf(c->name, sizeof c->name, "%s", c->linear ? "linear Rec. 709" : "sRGB");
		return 0;
	}
	if (!c->icc && !c->cicp && !c->linear && (!(c->gamma > 0) || png_srgb_gamma(c->gamma)) &&
	    (!c->chrm || xy_near(c->xy, cicp_prim[1]))) {
		c->srgb = 1;
		snprintf(c->name, sizeof c->name, "sRGB (gAMA/cHRM)");
		return 0;
	}
	if (c->linear && c->chrm && !c->icc && xy_near(c->xy, cicp_prim[1])) {
		c->srgb = 1;
		snprintf(c->name, sizeof c->name, "linear Rec. 709 (chromaticities)");
		return 0;
	}
	if (c->cicp && !c->icc && (c->primaries == 1 || c->primaries == 2) &&
	    (c->transfer == 13 || c->transfer == 2) && !c->linear) {
		c->srgb = 1;
		snprintf(c->name, sizeof c->name, "sRGB (nclx %d/%d/%d)", c->primaries, c->transfer,
			 c->matrix);
		return 0;
	}
	cmsContext ctx = ctx_new(&l);
	if (!ctx)
		return IMAGE_E_NOMEM;
	cmsHPROFILE p = open_profile(ctx, c, &l, note, sizeof note);
	if (p) {
		cmsColorSpaceSignature cs = cmsGetColorSpace(p);
		cmsProfileClassSignature cl = cmsGetDeviceClass(p);
		if (cl == cmsSigLinkClass || cl == cmsSigAbstractClass || cl == cmsSigNamedColorClass)
			snprintf(note, sizeof note, "an ICC profile of class %08x (not an image's) was "
				 "ignored", (unsigned)cl);
		else if (cs != (gray ? cmsSigGrayData : cmsSigRgbData))
			snprintf(note, sizeof note, "an ICC profile of colour space %08x on a%s image "
				 "was ignored", (unsigned)cs, gray ? " grey" : "n RGB");
		else if (!c->icc && c->cicp)
			snprintf(c->name, sizeof c->name, "nclx %d/%d/%d", c->primaries, c->transfer,
				 c->matrix);
		else if (!c->icc)
			snprintf(c->name, sizeof c->name, "%s%s", c->chrm ? "chromaticities" : "",
				 c->gamma > 0 && !c->linear ? (c->chrm ? " and gamma" : "gamma") : "");
		else {
			char d[48] = "";
			cmsGetProfileInfoASCII(p, cmsInfoDescription, "en", "US", d, sizeof d);
			for (char *q = d; *q; q++)
				if ((unsigned char)*q < 32 || *q == '"' || *q == '\\')
					*q = '?';
			snprintf(c->name, sizeof c->name, "ICC: %s", d[0] ? d : "(no description)");
		}
		if (!note[0] && !c->linear && is_srgb(p, gray))
			c->srgb = 1;
		cmsCloseProfile(p);
	} else if (!note[0]) {
		snprintf(note, sizeof note, "a colour description lcms2 could not build was "
			 "ignored%s%s", l.msg[0] ? ": " : "", l.msg);
	}
	cmsDeleteContext(ctx);
	if (note[0])
		reset_default(c, note);
	return 0;
}

/* What a conversion of one image needs: either a matrix-shaper's curves and matrix (mat maps
 * the profile's linear RGB to linear sRGB; gray: trc[0] alone), or an lcms2 transform. */
struct conv {
	int gray, shaper;
	const cmsToneCurve *trc[3];
	double mat[3][3];
	cmsHTRANSFORM xf8, xff; /* 8-bit and float input to XYZ (not shaper) */
};

static int conv_open(cmsContext ctx, cmsHPROFILE p, int gray, struct conv *cv)
{
	memset(cv, 0, sizeof *cv);
	cv->gray = gray;
	pthread_once(&once_mat, build_mat);
	if (cmsIsMatrixShaper(p)) {
		if (gray) {
			cv->trc[0] = cmsReadTag(p, cmsSigGrayTRCTag);
			cv->shaper = cv->trc[0] != NULL;
		} else {
			double m[3][3];
			cv->trc[0] = cmsReadTag(p, cmsSigRedTRCTag);
			cv->trc[1] = cmsReadTag(p, cmsSigGreenTRCTag);
			cv->trc[2] = cmsReadTag(p, cmsSigBlueTRCTag);
			if (cv->trc[0] && cv->trc[1] && cv->trc[2] && !colorants(p, m)) {
				cv->shaper = 1;
				for (int i = 0; i < 3; i++)
					for (int j = 0; j < 3; j++)
						cv->mat[i][j] = xyz_to_srgb[i][0] * m[0][j] +
								xyz_to_srgb[i][1] * m[1][j] +
								xyz_to_srgb[i][2] * m[2][j];
			}
		}
		if (cv->shaper)
			return 0;
	}
	cmsHPROFILE xyz = cmsCreateXYZProfileTHR(ctx);
	if (!xyz)
		return -1;
	cv->xf8 = cmsCreateTransformTHR(ctx, p, gray ? TYPE_GRAY_8 : TYPE_RGB_8, xyz, TYPE_XYZ_FLT,
					INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
	cv->xff = cmsCreateTransformTHR(ctx, p, gray ? TYPE_GRAY_FLT : TYPE_RGB_FLT, xyz,
					TYPE_XYZ_FLT, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
	cmsCloseProfile(xyz);
	return cv->xf8 && cv->xff ? 0 : -1;
}

static void conv_close(struct conv *cv)
{
	if (cv->xf8)
		cmsDeleteTransform(cv->xf8);
	if (cv->xff)
		cmsDeleteTransform(cv->xff);
}

/* One row of n pixels (stride ch floats) into the working space. lin: samples are linear
 * (no curve). row8/rowf/xyz: scratch of 3n each. */
static void conv_row(const struct conv *cv, float *px, size_t n, int ch, int lin,
		     const float tab[3][256], unsigned char *row8, float *rowf, float *xyz)
{
	int nc = cv->gray ? 1 : 3;
	const float *t8 = colour_srgb8_table();
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	int exact8 = !lin;
	for (size_t i = 0; i < n && exact8; i++)
		for (int c = 0; c < nc; c++) {
			float v = px[i * (size_t)ch + (size_t)c];
			unsigned char k = colour_srgb8_fast(lut, v);
			if (t8[k] != v) {
				exact8 = 0;
				break;
			}
			row8[i * (size_t)nc + (size_t)c] = k;
		}
	for (size_t i = 0; i < n; i++) {
		float *p = px + i * (size_t)ch;
		double u[3];
		if (cv->shaper) {
			for (int c = 0; c < nc; c++)
				u[c] = exact8 ? tab[c][row8[i * (size_t)nc + (size_t)c]]
				       : lin  ? p[c]
					      : cmsEvalToneCurveFloat(cv->trc[c], linear_to_srgb(p[c]));
			if (cv->gray) {
				p[0] = (float)u[0];
			} else {
				for (int r = 0; r < 3; r++)
					p[r] = (float)(cv->mat[r][0] * u[0] + cv->mat[r][1] * u[1] +
						       cv->mat[r][2] * u[2]);
			}
		} else if (!exact8) {
			for (int c = 0; c < nc; c++)
				rowf[i * (size_t)nc + (size_t)c] = lin ? p[c] : linear_to_srgb(p[c]);
		}
	}
	if (cv->shaper)
		return;
	cmsDoTransform(exact8 ? cv->xf8 : cv->xff, exact8 ? (void *)row8 : (void *)rowf, xyz,
		       (cmsUInt32Number)n);
	for (size_t i = 0; i < n; i++) {
		float *p = px + i * (size_t)ch;
		const float *x = xyz + 3 * i;
		if (cv->gray)
			p[0] = x[1];
		else
			for (int r = 0; r < 3; r++)
				p[r] = (float)(xyz_to_srgb[r][0] * x[0] + xyz_to_srgb[r][1] * x[1] +
					       xyz_to_srgb[r][2] * x[2]);
	}
}

/* -1 when the conversion makes a sample that is not finite or beyond 1e6 of anything an
 * image decodes to: every 8-bit code on each channel, and values between the codes. A hostile
 * profile (a curve of negative gamma, colorants that overflow) is caught before a pixel
 * changes. */
static int probe(const struct conv *cv, int lin, const float tab[3][256])
{
	float px[2][256 * 3], rowf[256 * 3], xyz[256 * 3];
	unsigned char row8[256 * 3];
	const float *t8 = colour_srgb8_table();
	for (int i = 0; i < 256; i++)
		for (int c = 0; c < 3; c++) {
			px[0][i * 3 + c] = t8[(i * (1 + 6 * c)) & 255];
			px[1][i * 3 + c] = (float)((i * (1 + 6 * c)) % 256 + 0.5) / 256;
		}
	for (int k = 0; k < 2; k++) {
		conv_row(cv, px[k], 256, 3, lin, tab, row8, rowf, xyz);
		for (int i = 0; i < 256 * 3; i++)
			if (!(fabsf(px[k][i]) < 1e6f))
				return -1;
	}
	return 0;
}

/* A frame's conversion split in bands of rows over core/parallel.h's threads, each worker
 * with its own scratch rows (lcms2 transforms are shared: made with cmsFLAGS_NOCACHE). */
#define BAND_ROWS 32
struct band_job {
	const struct conv *cv;
	struct image *img;
	int lin;
	const float (*tab)[256];
	struct {
		unsigned char *row8;
		float *rowf, *xyz;
	} w[PAR_MAX_THREADS];
};

static int band_item(void *ctx, int worker, size_t band)
{
	struct band_job *J = ctx;
	size_t w = (size_t)J->img->width;
	if (!J->w[worker].row8 && (!(J->w[worker].row8 = malloc(w * 3)) ||
	                           !(J->w[worker].rowf = malloc(w * 3 * sizeof(float))) ||
	                           !(J->w[worker].xyz = malloc(w * 3 * sizeof(float)))))
		return IMAGE_E_NOMEM;
	for (size_t y = band * BAND_ROWS; y < (band + 1) * BAND_ROWS && y < (size_t)J->img->height;
	     y++)
		conv_row(J->cv, J->img->pixels + y * w * (size_t)J->img->channels, w,
			 J->img->channels, J->lin, J->tab, J->w[worker].row8, J->w[worker].rowf,
			 J->w[worker].xyz);
	return 0;
}

int icc_to_working(struct image *img, struct image_colour *c)
{
	if (c->srgb || !img || !img->pixels)
		return 0;
	struct icc_log l;
	char note[sizeof c->note] = "";
	int gray = img->channels <= 2, rc = 0;
	cmsContext ctx = ctx_new(&l);
	if (!ctx)
		return IMAGE_E_NOMEM;
	cmsHPROFILE p = open_profile(ctx, c, &l, note, sizeof note);
	struct conv cv;
	memset(&cv, 0, sizeof cv);
	float (*tab)[256] = malloc(3 * sizeof *tab);
	if (!tab) {
		rc = IMAGE_E_NOMEM;
	} else if (!p || conv_open(ctx, p, gray, &cv)) {
		if (!note[0])
			snprintf(note, sizeof note, "a colour conversion lcms2 could not build was "
				 "ignored%s%s", l.msg[0] ? ": " : "", l.msg);
	} else {
		for (int k = 0; cv.shaper && k < (gray ? 1 : 3); k++)
			for (int i = 0; i < 256; i++)
				tab[k][i] = cmsEvalToneCurveFloat(cv.trc[k], (float)i / 255.0f);
		if (probe(&cv, c->linear, (const float(*)[256])tab))
			snprintf(note, sizeof note, "an ICC profile whose conversion gives non-finite "
				 "or huge values was ignored");
		struct band_job job;
		memset(&job, 0, sizeof job);
		job.cv = &cv;
		job.img = img;
		job.lin = c->linear;
		job.tab = (const float(*)[256])tab;
		size_t bands = ((size_t)img->height + BAND_ROWS - 1) / BAND_ROWS;
		if (!note[0])
			rc = par_each(bands, PAR_MAX_THREADS, band_item, &job, NULL);
		for (int i = 0; i < PAR_MAX_THREADS; i++) {
			free(job.w[i].row8);
			free(job.w[i].rowf);
			free(job.w[i].xyz);
		}
	}
	conv_close(&cv);
	if (p)
		cmsCloseProfile(p);
	cmsDeleteContext(ctx);
	free(tab);
	if (note[0])
		reset_default(c, note);
	return rc;
}

int icc_from_working(const struct image *img, const struct image_colour *c, int bits8,
		     struct image *out, char err[IMAGE_ERR_LEN])
{
	struct icc_log l;
	char note[160] = "";
	int gray = img->channels <= 2, ch = img->channels, nc = gray ? 1 : 3;
	int rc = image_alloc(out, img->width, img->height, ch);
	if (rc)
		return image_fail(err, rc, "colour: cannot allocate %dx%d pixels", img->width,
				  img->height);
	memcpy(out->pixels, img->pixels,
	       (size_t)img->width * (size_t)img->height * (size_t)ch * sizeof(float));
	if (c->srgb)
		return 0;
	pthread_once(&once_mat, build_mat);
	cmsContext ctx = ctx_new(&l);
	if (!ctx) {
		image_free(out);
		return image_fail(err, IMAGE_E_NOMEM, "colour: out of memory");
	}
	cmsHPROFILE p = open_profile(ctx, c, &l, note, sizeof note);
	cmsHPROFILE xyz = cmsCreateXYZProfileTHR(ctx);
	int lin = c->linear, b8 = bits8 && !lin;
	/* float out, quantised here: lcms2's 8-bit outputs pass through its 16-bit PCS, whose
	 * 2^-15 steps are 2 codes near black through a pure power curve */
	cmsHTRANSFORM xf = p && xyz ? cmsCreateTransformTHR(ctx, xyz, TYPE_XYZ_FLT, p,
		gray ? TYPE_GRAY_FLT : TYPE_RGB_FLT, INTENT_RELATIVE_COLORIMETRIC, 0) : NULL;
	size_t w = (size_t)img->width;
	float *xin = malloc(w * 3 * sizeof(float)), *of = malloc(w * 3 * sizeof(float));
	const float *t8 = colour_srgb8_table();
	if (!xf || !xin || !of) {
		rc = !xin || !of ? image_fail(err, IMAGE_E_NOMEM, "colour: out of memory")
					: image_fail(err, IMAGE_E_ARG, "colour: cannot convert to %s%s%s",
						     c->name, note[0] ? ": " : "", note);
	} else {
		double d50y = 1.0;
		for (int y = 0; y < img->height; y++) {
			float *px = out->pixels + (size_t)y * w * (size_t)ch;
			for (size_t i = 0; i < w; i++) {
				const float *s = px + i * (size_t)ch;
				float *x = xin + 3 * i;
				if (gray) { /* a grey: its luminance at D50's chromaticity */
					x[0] = (float)(0.9642 * s[0]);
					x[1] = (float)(d50y * s[0]);
					x[2] = (float)(0.8249 * s[0]);
				} else {
					for (int r = 0; r < 3; r++)
						x[r] = (float)(srgb_to_xyz[r][0] * s[0] +
							       srgb_to_xyz[r][1] * s[1] +
							       srgb_to_xyz[r][2] * s[2]);
				}
			}
			cmsDoTransform(xf, xin, of, (cmsUInt32Number)w);
			for (size_t i = 0; i < w; i++)
				for (int k = 0; k < nc; k++) {
					size_t at = i * (size_t)nc + (size_t)k;
					float v = of[at];
					if (lin) {
					} else if (b8) { /* the code, as its table value */
						v = t8[!(v > 0) ? 0 : v >= 1 ? 255 : (int)(v * 255 + 0.5f)];
					} else { /* encoded value -> what the encoders take */
						v = srgb_to_linear(!(v > 0) ? 0 : v > 1 ? 1 : v);
					}
					px[i * (size_t)ch + (size_t)k] = v;
				}
		}
	}
	if (xf)
		cmsDeleteTransform(xf);
	if (xyz)
		cmsCloseProfile(xyz);
	if (p)
		cmsCloseProfile(p);
	cmsDeleteContext(ctx);
	free(xin);
	free(of);
	if (rc)
		image_free(out);
	return rc;
}
