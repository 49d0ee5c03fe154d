/* NPY tensors: the NumPy .npy format (v1/v2/v3 headers) <-> a plain C array of float32, float64,
 * complex64 or complex128 samples in C order. The FFT CLI and tests exchange tensors with numpy
 * through it. No printing; errors come back as a negative code plus a message. */
#ifndef FFTBLOOM_NPY_H
#define FFTBLOOM_NPY_H

#include <stddef.h>

enum npy_dtype { NPY_F32 = 1, NPY_F64, NPY_C64, NPY_C128 };

/* C order, native little-endian values. shape[i] for i >= ndim is 1, so the element count is
 * always shape[0]*shape[1]*shape[2]*shape[3] (rank 0 holds one element). */
struct npy_array {
	int ndim;          /* 0..4 */
	size_t shape[4];   /* extent per axis; unused axes are 1 */
	enum npy_dtype dtype;
	void *data;        /* malloc'd; never NULL after a successful decode, even for 0 elements */
};

#define NPY_ERR_LEN 256

enum npy_error {
	NPY_OK = 0,
	NPY_E_ARG = -1,         /* bad argument (NULL, bad dtype or rank in an array to encode) */
	NPY_E_NOMEM = -2,       /* out of memory */
	NPY_E_IO = -3,          /* file could not be opened, read or written */
	NPY_E_CORRUPT = -4,     /* not an .npy file, or a malformed header */
	NPY_E_TRUNCATED = -5,   /* the data ends before the header says it should */
	NPY_E_UNSUPPORTED = -6, /* valid .npy, but a dtype, rank or fortran_order this code refuses */
	NPY_E_TOO_LARGE = -7,   /* data larger than max_bytes or than memory can address */
};

/* Decodes an .npy byte string. max_bytes bounds the data size (0: no bound beyond len); it is
 * checked from the header before anything is allocated. Accepts descr '<f4' '<f8' '<c8' '<c16'
 * (also '=' and '|' forms, and '>' big-endian, converted), fortran_order False, rank 0..4.
 * Bytes after the data are ignored (numpy does the same). Returns 0, or a negative npy_error with
 * a message in err; on failure *out is zeroed. */
int npy_decode(const void *buf, size_t len, size_t max_bytes, struct npy_array *out,
	       char err[NPY_ERR_LEN]);

/* Encodes a as a v1 .npy (v2 if the header would not fit) with descr '<f4'/'<f8'/'<c8'/'<c16',
 * header padded to 64 bytes. *out is malloc'd; the caller frees it. Returns 0 or a negative
 * npy_error. */
int npy_encode(const struct npy_array *a, unsigned char **out, size_t *out_len,
	       char err[NPY_ERR_LEN]);

/* As npy_decode, from a file; reads the header first, so the data is read straight into the
 * array and a short file is caught before allocating. */
int npy_read_file(const char *path, size_t max_bytes, struct npy_array *out, char err[NPY_ERR_LEN]);

/* Writes a to path (replacing it). Returns 0 or a negative npy_error. */
int npy_write_file(const char *path, const struct npy_array *a, char err[NPY_ERR_LEN]);

/* Frees a->data and zeroes *a. NULL-safe. */
void npy_free(struct npy_array *a);

/* Bytes per element: 4, 8, 8, 16; 0 for an invalid dtype. */
size_t npy_dtype_size(enum npy_dtype t);

/* Element count of a (product of shape over ndim; 1 for rank 0), or 0 on overflow or if any
 * extent is 0. ok (may be NULL) is set to 0 on overflow, 1 otherwise. */
size_t npy_count(const struct npy_array *a, int *ok);

/* Static description of an npy_error code. */
const char *npy_strerror(int code);

#endif
