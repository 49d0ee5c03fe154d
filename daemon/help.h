/* fftbloomd's help texts, all made from the option table and the daemon's mode list, so that
 * --help, the JSON that deployment files' tests read and the example environment file cannot
 * drift from what the daemon parses. Each prints to stdout. */
#ifndef FFTBLOOM_HELP_H
#define FFTBLOOM_HELP_H

/* --help: the modes, then every option with its bounds, default and variable. */
void help_usage(void);

/* --help=json: the option table and the modes, for deployment files' tests and tools. 0, or 1
 * when it could not be written. */
int help_json(void);

/* --help=env: every variable, commented out at its default, for /etc/default/fftbloomd. */
void help_env(void);

#endif
