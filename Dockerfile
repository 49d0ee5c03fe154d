# fftbloomd in a container (Debian 12). Build: docker build -t fftbloomd .
# Run on Mesa llvmpipe (any machine):  docker run --rm -p 8080:8080 fftbloomd
# Run on an NVIDIA GPU:  docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=graphics,compute \
#                          -p 8080:8080 fftbloomd   (the NVIDIA container toolkit mounts libEGL_nvidia)
FROM debian:12-slim AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc make pkg-config libegl-dev libgles-dev libmicrohttpd-dev libturbojpeg0-dev \
        libjansson-dev libspng-dev libopenexr-dev zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make CI=1 -j"$(nproc)" build/fftbloomd build/fftbloom

FROM debian:12-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libegl1 libgles2 libegl-mesa0 libgl1-mesa-dri libmicrohttpd12 libturbojpeg0 libjansson4 \
        libspng0 libopenexr-3-1-30 zlib1g \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --no-create-home --shell /usr/sbin/nologin fftbloom
COPY --from=build /src/build/fftbloomd /src/build/fftbloom /usr/local/bin/
# NVIDIA's EGL vendor library is found through glvnd once the toolkit mounts it
ENV FFTBLOOM_LISTEN=0.0.0.0 FFTBLOOM_PORT=8080 FFTBLOOM_LOG_FORMAT=json
USER fftbloom
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=6s --start-period=60s \
    CMD ["fftbloomd", "--health-check", "http://127.0.0.1:8080/readyz"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["fftbloomd"]
