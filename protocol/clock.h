/* The one clock: monotonic time in seconds or milliseconds, for durations, deadlines and
 * timings (never for dates). */
#ifndef FFTBLOOM_CLOCK_H
#define FFTBLOOM_CLOCK_H

double clock_s(void);  /* CLOCK_MONOTONIC, seconds */
double clock_ms(void); /* the same, milliseconds */

#endif
