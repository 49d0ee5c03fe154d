/* Fault injection for tests: GPU faults that a real GPU gives rarely and llvmpipe never (a lost
 * context, a hung frame, GPU memory exhausted), made to happen at the point where the real
 * fault shows, so that the code that survives them runs in tests. Only builds compiled with
 * -DFFTBLOOM_FAULTS (make's build/faults/) have them; elsewhere arming fails and nothing fires,
 * at no cost.
 *
 * Thread-safe: a test's HTTP thread arms, a GPU thread fires. */
#ifndef FFTBLOOM_FAULT_H
#define FFTBLOOM_FAULT_H

enum gles_fault {
	GLES_FAULT_OOM = 0, /* the next GPU buffer allocation fails as GL_OUT_OF_MEMORY */
	GLES_FAULT_LOST,    /* the context reports a reset after the next frame (as
	                       glGetGraphicsResetStatus would) */
	GLES_FAULT_HANG,    /* the next frame's wait for the GPU blocks for the armed seconds */
	GLES_FAULT_COUNT
};

#ifdef FFTBLOOM_FAULTS
/* Arms `count` firings of a fault (hang: each blocking `seconds`). 0, or -1 for a bad kind. */
int gles_fault_arm(int kind, int count, double seconds);
/* 1 when an armed fault of this kind fires now (one count used; *seconds set for a hang, when
 * not NULL), else 0. */
int gles_fault_fire(int kind, double *seconds);
#define GLES_FAULTS_BUILT 1
#else
static inline int gles_fault_arm(int kind, int count, double seconds)
{
	(void)kind, (void)count, (void)seconds;
	return -1;
}
static inline int gles_fault_fire(int kind, double *seconds)
{
	(void)kind, (void)seconds;
	return 0;
}
#define GLES_FAULTS_BUILT 0
#endif

/* "oom", "lost", "hang"; NULL otherwise. And back: the kind, or -1. */
const char *gles_fault_name(int kind);
int gles_fault_parse(const char *name);

#endif
