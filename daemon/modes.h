/* fftbloomd's configuration as it starts (loaded from the environment and argv, checked beyond
 * the option table's bounds) and its modes other than serving: --help, --help=json, --help=env,
 * --version, --print-openapi, --print-errors, --print-operations, --print-formats,
 * --check-config and --health-check; and the start's own questions (the EGL devices, the
 * engine). */
#ifndef FFTBLOOM_DAEMON_MODES_H
#define FFTBLOOM_DAEMON_MODES_H

#include <stddef.h>

#include "core/config.h"

/* The checks of a configuration beyond the table's bounds: GPU list, warm sizes, the TLS pair.
 * device_count is the number of EGL devices "all" stands for. Returns 0, or -1 with err. */
int daemon_check_config(const struct config *cfg, int device_count, int *devices, int *ndev,
                        int (*warm)[2], int *nwarm, char *err, size_t len);
/* Loads the configuration from the environment and argv[first..]; no positional argument is
 * allowed. Returns 0, or 2 (the exit status) after printing why. */
int daemon_load_config(struct config *cfg, int argc, char **argv, int first);
/* --gpus all, asked of the EGL devices in a child process so that the caller never loads the
 * GL driver before it forks its workers: the devices that are GPUs when some are and some are
 * software rasterizers (Mesa's, beside NVIDIA's: cfg->gpus becomes their list, logged), else
 * every device. Returns the EGL device count for daemon_check_config (1 when it cannot tell),
 * 0 when --gpus is not all. */
int daemon_gpus_all(struct config *cfg);
/* --compile-mode auto as the daemon resolves it: process with --compile-thread auto (0) on the
 * GPU engine where no device is a software renderer (software: 0), else compile_mode unchanged
 * (the engine's auto: parallel where the context has the extension). */
int daemon_compile_mode_resolve(int compile_mode, int compile_thread, int engine, int software);
/* Resolves --engine (auto: the CPU engine where the GL renderer of the first of the ndev
 * devices is a software one or no context can be made; --require-gpu: the GPU engine) and
 * --compile-mode auto (daemon_compile_mode_resolve, with every device a GPU; past the
 * supervisor's slots, two a device, it stays), the devices asked in one child process, and
 * says which at start; the CPU engine sets one device and its one worker thread's settings. */
void daemon_engine_resolve(struct config *cfg, const int *devices, int *ndev);
/* Runs a mode named in argv (the first argument that is one decides), returning its exit
 * status, or -1 when there is none: serve. */
int daemon_run_mode(int argc, char **argv);

#endif
