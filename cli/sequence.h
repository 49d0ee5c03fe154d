/* Frame sequences for the CLI's batch mode: a file name pattern whose frame number is a run of
 * '#' (one digit each, zero-padded: shot.####.exr) or a printf conversion (%04d, %d), and frame
 * lists such as "1001-1100", "1-10,20-30" or "1-100x2". Pure text functions: no file system. */
#ifndef FFTBLOOM_CLI_SEQUENCE_H
#define FFTBLOOM_CLI_SEQUENCE_H

#include <stddef.h>

#define SEQ_ERR_LEN 256
#define SEQ_MAX_FRAMES 1000000 /* frames one list may name */
#define SEQ_MAX_FRAME 999999999L /* the largest frame number */

enum seq_error {
	SEQ_OK = 0,
	SEQ_E_NONE = -1,     /* the name has no frame field: not a pattern */
	SEQ_E_SYNTAX = -2,   /* a malformed pattern or frame list (message says where) */
	SEQ_E_TOO_MANY = -3, /* more than SEQ_MAX_FRAMES frames, or a frame above SEQ_MAX_FRAME */
	SEQ_E_NOMEM = -4,
	SEQ_E_SPACE = -5,    /* the formatted name does not fit the caller's buffer */
};

const char *seq_strerror(int code);

/* A parsed pattern: prefix, the frame field, suffix (pointers into the pattern text). */
struct seq_pattern {
	const char *text;  /* the whole pattern (not owned) */
	size_t prefix_len; /* bytes before the field */
	size_t field_len;  /* bytes of the field ("####", "%04d") */
	int width;         /* digits the number is zero-padded to (1: no padding) */
};

/* Finds the frame field of name: its last run of '#' (everything else, '%' included, is
 * literal); in a name without '#', its one '%d' or '%0Nd' (N 1-9), and then no other '%'.
 * Returns 0, SEQ_E_NONE when there is no field, or SEQ_E_SYNTAX for a '%' that is not such a
 * conversion or a second one (message in err). */
int seq_pattern_parse(const char *name, struct seq_pattern *p, char err[SEQ_ERR_LEN]);

/* The name of frame (0 - SEQ_MAX_FRAME) into out: prefix, the number zero-padded to the width
 * (wider numbers keep all their digits), suffix. Returns 0, SEQ_E_SYNTAX for a frame out of
 * range, or SEQ_E_SPACE. */
int seq_format(const struct seq_pattern *p, long frame, char *out, size_t len);

/* Whether name is a frame of the pattern: the prefix, then digits, then the suffix. The digits
 * are exactly the width, or more without a leading zero (frame 10000 of "####"); with width 1
 * any number without leading zeros. On a match stores the frame and returns 1; otherwise 0. */
int seq_match(const struct seq_pattern *p, const char *name, long *frame);

/* Parses a frame list: comma-separated items, each a frame "N", a range "A-B" (A <= B), or a
 * range with a step "A-BxS" (S >= 1: A, A+S, ... up to B); spaces are not allowed. Frames are
 * 0 - SEQ_MAX_FRAME, kept in the list's order (repeats kept). *frames is malloc'd (the caller
 * frees it), *n its length. Returns 0, SEQ_E_SYNTAX, SEQ_E_TOO_MANY or SEQ_E_NOMEM with a
 * message; on failure *frames is NULL and *n 0. */
int seq_frames_parse(const char *s, long **frames, size_t *n, char err[SEQ_ERR_LEN]);

#endif
