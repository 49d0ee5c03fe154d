# Sourced on a GPU host that runs a folder made by bench/pack.sh (bench/README.md, "On another
# host"):   . PACK/bench/remote_env.sh [PACK]
# PACK: the packed folder (default: the folder this file came with, when the shell says which,
# else ./.carry or the current folder, whichever holds bin/fftbloom). It
#  - unpacks the carried glvnd loaders (PACK/gl/*.deb) when the host has no libEGL.so.1: into /
#    as root with dpkg (then ldconfig), else into PACK/gl/root, added to LD_LIBRARY_PATH;
#  - points Vulkan at the NVIDIA driver file (VK_DRIVER_FILES) likewise, for the VkFFT Vulkan peer;
#  - points EGL at the NVIDIA vendor file where there is one and none is chosen yet
#    (__EGL_VENDOR_LIBRARY_FILENAMES: /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json,
#    the container toolkit's, or /usr/share/glvnd/egl_vendor.d/10_nvidia.json);
#  - puts PACK/lib first in LD_LIBRARY_PATH and PACK/bin on PATH, and sets BENCH_BIN and
#    BENCH_FRAMES for bench/run.sh;
# and says what it did on stderr. POSIX sh; sets no shell options.
_re_pack=${1:-}
if [ -z "$_re_pack" ]; then
	_re_src=${BASH_SOURCE:-}
	if [ -n "$_re_src" ] && [ -x "$(dirname "$_re_src")/../bin/fftbloom" ]; then
		_re_pack=$(cd "$(dirname "$_re_src")/.." && pwd)
	elif [ -x ./.carry/bin/fftbloom ]; then
		_re_pack=$PWD/.carry
	elif [ -x ./bin/fftbloom ]; then
		_re_pack=$PWD
	fi
fi
if [ -z "$_re_pack" ] || [ ! -x "$_re_pack/bin/fftbloom" ]; then
	echo "remote_env.sh: no packed folder (. bench/remote_env.sh PACK; bench/pack.sh makes one)" >&2
else
	_re_pack=$(cd "$_re_pack" && pwd)
	_re_msg=""
	# the GL loaders: the host's when it has them
	_re_egl=""
	for _re_d in /usr/lib/*-linux-gnu /usr/lib64 /usr/lib; do [ -e "$_re_d/libEGL.so.1" ] && _re_egl=1; done
	{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libEGL\.so\.1 ' && _re_egl=1
	if [ -z "$_re_egl" ] && ls "$_re_pack"/gl/*.deb >/dev/null 2>&1; then
		if [ "$(id -u)" = 0 ] && command -v dpkg >/dev/null; then
			for _re_f in "$_re_pack"/gl/*.deb; do dpkg -x "$_re_f" /; done
			ldconfig
			_re_msg="$_re_msg glvnd loaders unpacked into /;"
		elif command -v dpkg >/dev/null; then
			mkdir -p "$_re_pack/gl/root"
			for _re_f in "$_re_pack"/gl/*.deb; do dpkg -x "$_re_f" "$_re_pack/gl/root"; done
			for _re_d in "$_re_pack"/gl/root/usr/lib/*-linux-gnu "$_re_pack"/gl/root/usr/lib; do
				[ -e "$_re_d/libEGL.so.1" ] && LD_LIBRARY_PATH="$_re_d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
			done
			_re_msg="$_re_msg glvnd loaders unpacked into $_re_pack/gl/root;"
		else
			_re_msg="$_re_msg no libEGL.so.1 and no dpkg to unpack gl/*.deb;"
		fi
	fi
	# the NVIDIA EGL vendor, unless one is chosen already
	if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ]; then
		for _re_f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
			/usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json; do
			if [ -r "$_re_f" ]; then
				export __EGL_VENDOR_LIBRARY_FILENAMES="$_re_f"
				_re_msg="$_re_msg EGL vendor $_re_f;"
				break
			fi
		done
	fi
	# the NVIDIA Vulkan driver, for the VkFFT Vulkan peer, unless one is chosen already
	if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
		for _re_f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
			/usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
			if [ -r "$_re_f" ]; then
				export VK_DRIVER_FILES="$_re_f"
				_re_msg="$_re_msg Vulkan driver $_re_f;"
				break
			fi
		done
	fi
	export LD_LIBRARY_PATH="$_re_pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export PATH="$_re_pack/bin:$PATH"
	export BENCH_BIN="$_re_pack/bin"
	[ -d "$_re_pack/bench/frames" ] && export BENCH_FRAMES="$_re_pack/bench/frames"
	echo "remote_env.sh: $_re_pack (commit $(cat "$_re_pack/COMMIT" 2>/dev/null)):$_re_msg binaries on PATH" >&2
fi
unset _re_pack _re_src _re_msg _re_f _re_d _re_egl
