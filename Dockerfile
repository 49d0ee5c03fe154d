# fftbloomd in a container (Debian 12). Build: docker build -t fftbloomd .
# Run on an NVIDIA GPU (the NVIDIA container toolkit; no other flags needed, the image asks for
# the graphics capability that mounts NVIDIA's EGL library):
#   docker run -d --gpus all -p 8080:8080 -v fftbloom-cache:/var/cache/fftbloom \
#     --stop-timeout 40 fftbloomd
# Run on Mesa llvmpipe (any machine): the same without --gpus.
# --stop-timeout 40 (compose: stop_grace_period): on SIGTERM the daemon finishes accepted
# requests for up to FFTBLOOM_DRAIN_TIMEOUT (30 s), longer than Docker's default 10 s.
# Configure it through FFTBLOOM_* variables (-e), not flags: the health check reads the same
# variables to find the port and whether it speaks TLS. The named volume keeps the compiled
# programs and FFT wisdom across containers: a first request in 0.5 s instead of 16 s on the H200.

# Build stage: the README's path (make deps, make, make install), in a layer order that keeps
# the package layer when only sources change.
FROM debian:12-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY core/module.mk core/
COPY gles/module.mk gles/
COPY codec/module.mk codec/
COPY api/module.mk api/
COPY daemon/module.mk daemon/
COPY cli/module.mk cli/
COPY lib/module.mk lib/
COPY cpu/module.mk cpu/
COPY tests/module.mk tests/
COPY tests/core/module.mk tests/core/
COPY tests/cli/module.mk tests/cli/
COPY tests/daemon/module.mk tests/daemon/
COPY tests/gles/module.mk tests/gles/
COPY tests/codec/module.mk tests/codec/
COPY tests/api/module.mk tests/api/
COPY tests/lib/module.mk tests/lib/
COPY tests/cpu/module.mk tests/cpu/
COPY tests/fuzz/fuzz.mk tests/fuzz/
COPY bench/module.mk bench/
RUN make deps && rm -rf /var/lib/apt/lists/*
COPY . .
RUN make -j"$(nproc)" CI=1 && make install DESTDIR="$PWD/stage" PREFIX=/usr/local

# Runtime stage: the libraries fftbloomd and fftbloom link and load (libcurl4: fftbloom --server),
# a user of its own, nothing else.
FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libegl1 libgles2 libegl-mesa0 libgl1-mesa-dri libmicrohttpd12 libgnutls30 libturbojpeg0 libjpeg62-turbo \
      libjansson4 libspng0 libopenexr-3-1-30 libdeflate0 zlib1g libwebp7 libwebpmux3 libavif15 libcurl4 libfftw3-single3 libopenblas0-serial \
      liblcms2-2 libtiff6 libheif1 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/cache/fftbloom --no-create-home \
      --shell /usr/sbin/nologin fftbloom \
 && install -d -o fftbloom -g fftbloom -m 0750 /var/cache/fftbloom
COPY --from=build /src/stage/ /
# NVIDIA's EGL vendor library, found through glvnd once the toolkit mounts it (as NVIDIA's cudagl
# images ship it); without it glvnd falls back to Mesa.
COPY deploy/docker/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,graphics,utility \
    FFTBLOOM_LISTEN=0.0.0.0 \
    FFTBLOOM_PORT=8080 \
    FFTBLOOM_LOG_FORMAT=json \
    FFTBLOOM_PROGRAM_CACHE=/var/cache/fftbloom/programs \
    FFTBLOOM_FFT_WISDOM=/var/cache/fftbloom/fft-wisdom \
    FFTBLOOM_DRIVER_CACHE=/var/cache/fftbloom/driver \
    RUNTIME_DIRECTORY=/tmp
# RUNTIME_DIRECTORY: where the worker processes (on a GPU even one: --compile-mode auto is
# process there) share named kernels and stored images; without it /dev/shm, 64 MiB in a
# container unless --shm-size says more
VOLUME /var/cache/fftbloom
USER 10001:10001
EXPOSE 8080
# Liveness, not load: GET /healthz on FFTBLOOM_LISTEN:FFTBLOOM_PORT, over HTTPS when
# FFTBLOOM_TLS_CERT is set (a busy or warming daemon is healthy; /readyz is for load balancers).
HEALTHCHECK --interval=15s --timeout=6s --start-period=120s --retries=3 \
    CMD ["fftbloomd", "--health-check"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["fftbloomd"]
