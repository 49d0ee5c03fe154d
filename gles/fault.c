/* Fault injection: see fault.h. */
#include "gles/fault.h"

#include <pthread.h>
#include <string.h>

static const char *const names[GLES_FAULT_COUNT] = {"oom", "lost", "hang"};

const char *gles_fault_name(int kind)
{
	return kind >= 0 && kind < GLES_FAULT_COUNT ? names[kind] : NULL;
}

int gles_fault_parse(const char *name)
{
	for (int k = 0; k < GLES_FAULT_COUNT; k++)
		if (name && !strcmp(name, names[k]))
			return k;
	return -1;
}

#ifdef FFTBLOOM_FAULTS
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int armed[GLES_FAULT_COUNT];
static double hang_s;

int gles_fault_arm(int kind, int count, double seconds)
{
	if (kind < 0 || kind >= GLES_FAULT_COUNT || count < 0)
		return -1;
	pthread_mutex_lock(&lock);
	armed[kind] = count;
	if (kind == GLES_FAULT_HANG)
		hang_s = seconds;
	pthread_mutex_unlock(&lock);
	return 0;
}

int gles_fault_fire(int kind, double *seconds)
{
	if (kind < 0 || kind >= GLES_FAULT_COUNT)
		return 0;
	pthread_mutex_lock(&lock);
	int fire = armed[kind] > 0;
	if (fire)
		armed[kind]--;
	if (seconds)
		*seconds = hang_s;
	pthread_mutex_unlock(&lock);
	return fire;
}
#endif
