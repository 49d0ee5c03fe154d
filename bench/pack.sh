#!/bin/sh
# Packs what a GPU host without this build's libraries needs to run the benchmark harness (and
# the GPU tests): one folder to copy there, then `. PACK/bench/remote_env.sh` and
# `sh PACK/bench/run.sh SUITE` (bench/README.md, "On another host").
#
# usage: sh bench/pack.sh [OUT]      (OUT default .carry, ignored by git)
#   OUT/bin/         fftbloom, fftbloomd, fftbloom-bench; bin/bench/: loadgen, codec_ceiling, fftw_peer, encode_formats,
#                    conv_tiles, cpu_bloom, cpu_conv_bench, fft_copy_probe, fma_probe
#                    (those built: make all $(BENCH_BINS))
#   OUT/lib/         every shared library they load except libc's and the GL loader's
#   OUT/gl/          the glvnd loaders as Debian packages (libegl1, libgles2, libglvnd0, libgl1,
#                    libglx0, libopengl0), from ./.gl/ when it holds them, else apt-get download;
#                    remote_env.sh unpacks them on a host that has none
#   OUT/tests/       the test binaries (those built: make tests)
#   OUT/bench/       the harness: run.sh, remote_env.sh, e2e.sh, fast_default.sh, rows_probe.sh,
#                    fft_shapes.sh, conv_bench.sh, the peers and their sources (peer_vkfft.cu with
#                    bench_json.[ch]), README.md, the e2e frames (bench/frames: make
#                    bench-frames) and the FFT wisdom files of bench/results/*/
#   OUT/vkfft/       VkFFT's headers, when VKFFT_DIR names a checkout (not part of this
#                    repository; the peers suite builds bench/peer_vkfft.cu against them there)
#   OUT/COMMIT       the binaries' commit
#   OUT/baseline/    fftbloom of an older build, when BASELINE names its build folder, with its
#                    COMMIT (git describe there, or BASELINE_COMMIT): bench/run.sh --baseline
# BUILD (default build) is the build folder.
set -eu
BUILD=${BUILD:-build}
OUT=${1:-.carry}
[ -x "$BUILD/fftbloom" ] && [ -x "$BUILD/fftbloomd" ] && [ -x "$BUILD/fftbloom-bench" ] || { echo "pack.sh: build first (make all)" >&2; exit 1; }
# an earlier pack is replaced; anything else is left alone
if [ -e "$OUT" ]; then
	[ -f "$OUT/COMMIT" ] && [ -d "$OUT/bin" ] || { echo "pack.sh: $OUT exists and is not a pack" >&2; exit 1; }
	rm -rf "$OUT"
fi
mkdir -p "$OUT/bin/bench" "$OUT/lib" "$OUT/gl" "$OUT/bench"
cp "$BUILD/fftbloom" "$BUILD/fftbloomd" "$BUILD/fftbloom-bench" "$OUT/bin/"
for b in loadgen codec_ceiling fftw_peer encode_formats peer_vkfft_vk conv_tiles compile_probe cpu_bloom \
	cpu_conv_bench fft_copy_probe fma_probe; do
	if [ -x "$BUILD/bench/$b" ]; then cp "$BUILD/bench/$b" "$OUT/bin/bench/"; else echo "pack.sh: no $BUILD/bench/$b (not packed)" >&2; fi
done
if [ -d "$BUILD/tests" ]; then
	mkdir -p "$OUT/tests"
	(o=$(cd "$OUT/tests" && pwd) && cd "$BUILD/tests" && find . -type f -name 'test_*' ! -name '*.[od]' -exec cp --parents {} "$o/" \;)
fi
"$BUILD/fftbloom" --version | sed -n 's/^fftbloom .*(commit \(.*\))$/\1/p' >"$OUT/COMMIT"
if [ -n "${BASELINE:-}" ]; then
	[ -x "$BASELINE/fftbloom" ] || { echo "pack.sh: no $BASELINE/fftbloom" >&2; exit 1; }
	mkdir -p "$OUT/baseline"
	cp "$BASELINE/fftbloom" "$OUT/baseline/"
	# a build after the harness left the CLI runs `fftbloom bench` through fftbloom-bench beside it
	[ ! -x "$BASELINE/fftbloom-bench" ] || cp "$BASELINE/fftbloom-bench" "$OUT/baseline/"
	echo "${BASELINE_COMMIT:-$(git -C "$BASELINE" describe --always --dirty 2>/dev/null || echo unknown)}" \
		>"$OUT/baseline/COMMIT"
fi

# the shared libraries, but not libc's nor the GL loader's (the host's driver goes with its own)
for b in $(find "$OUT/bin" "$OUT/tests" "$OUT/baseline" -type f ! -name COMMIT 2>/dev/null); do
	ldd "$b" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libEGL* | libGLES* | \
		libGLdispatch* | libGLX* | libGL.so* | libOpenGL*) ;;
	*) cp -L "$lib" "$OUT/lib/" ;;
	esac
done

# the glvnd loaders, for a host with the NVIDIA driver but no libEGL.so.1 / libGLESv2.so.2
debs="libegl1 libgles2 libglvnd0 libgl1 libglx0 libopengl0"
if ls .gl/*.deb >/dev/null 2>&1; then
	cp .gl/*.deb "$OUT/gl/"
elif command -v apt-get >/dev/null; then
	(cd "$OUT/gl" && apt-get download $debs >/dev/null 2>&1) || echo "pack.sh: apt-get download $debs failed (gl/ empty)" >&2
else
	echo "pack.sh: no .gl/*.deb and no apt-get: gl/ empty (the host must have the glvnd loaders)" >&2
fi

# the harness
for f in run.sh remote_env.sh e2e.sh fast_default.sh conv_bench.sh peer_torch.py conv_peer_torch.py \
	benchline.py check_lines.py old_lines.py peer_vkfft.cu bench_json.c bench_json.h README.md \
	big_frames.py gpus.sh device_formats.sh mixed_sizes.sh rows_probe.sh fft_shapes.sh; do
	cp "bench/$f" "$OUT/bench/"
done
[ -d bench/frames ] && cp -r bench/frames "$OUT/bench/" || echo "pack.sh: no bench/frames (make bench-frames): e2e cannot run there" >&2
for w in bench/results/*/wisdom*.txt; do
	[ -r "$w" ] || continue
	mkdir -p "$OUT/$(dirname "$w")"
	cp "$w" "$OUT/$w"
done
if [ -n "${VKFFT_DIR:-}" ]; then
	for d in "$VKFFT_DIR/vkFFT" "$VKFFT_DIR"; do
		if [ -r "$d/vkFFT.h" ]; then
			mkdir -p "$OUT/vkfft"
			cp -r "$d" "$OUT/vkfft/vkFFT"
			break
		fi
	done
	[ -d "$OUT/vkfft" ] || echo "pack.sh: no vkFFT.h under VKFFT_DIR=$VKFFT_DIR" >&2
fi
du -sh "$OUT"
