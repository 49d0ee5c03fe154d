# Sourced at the start of every command on the GPU machine: unpacks the glvnd loaders carried in
# .gl/, points EGL at NVIDIA's vendor library and the loader at the carried shared libraries.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$PWD/.carry/bin:$PATH"
# el MESSAGE: the message after the seconds since this file was sourced
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0)) s] $*"; }
