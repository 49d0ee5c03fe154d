"""fftbloom: the fftbloom GPU engine (OpenGL ES 3.1 compute: a GPU, or Mesa's llvmpipe) on numpy
arrays, through libfftbloom's public C API (ctypes; lib/include/fftbloom.h).

fftconvolve follows scipy.signal.fftconvolve, fft2/ifft2 numpy.fft's, conv2d and
conv_transpose2d torch.nn.functional's, bloom and convolve the fftbloom CLI's parameters. The GPU
computes in float32: results are float32 (complex64 for the FFTs) whatever the input's dtype.

A Context holds one GL context with its compiled programs, FFT plans and kernel spectra, and
belongs to the thread that made it. Functions called without ctx= use one context per thread,
made on first use (fftbloom.default_context()).
"""
import ctypes
import ctypes.util
import os
import threading
import weakref

import numpy as np

__all__ = ["Context", "FftbloomError", "default_context", "fftconvolve", "fft", "ifft", "fft2",
           "ifft2",
           "conv2d", "conv_transpose2d", "bloom", "convolve", "preset", "imread", "imwrite"]

# ---- the library ----


def _load():
    names = []
    if os.environ.get("FFTBLOOM_LIBRARY"):
        names.append(os.environ["FFTBLOOM_LIBRARY"])
    try:
        from . import _libpath  # written by `make install`: where it put the library
        names.append(_libpath.LIBRARY)
    except ImportError:
        pass
    names += ["libfftbloom.so.0", ctypes.util.find_library("fftbloom")]
    errors = []
    for n in names:
        if not n:
            continue
        try:
            return ctypes.CDLL(n)
        except OSError as e:
            errors.append(str(e))
    raise OSError("libfftbloom not found (set FFTBLOOM_LIBRARY): " + "; ".join(errors))


_lib = _load()
_c_int, _c_double, _c_float_p = ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_float)
_int4 = ctypes.c_int * 4


class _ContextOpts(ctypes.Structure):
    _fields_ = [("platform", _c_int), ("gpu", _c_int), ("program_cache", ctypes.c_char_p),
                ("max_plans", _c_int), ("wisdom", _c_int), ("wisdom_file", ctypes.c_char_p),
                ("shader_dir", ctypes.c_char_p), ("gl_debug", _c_int),
                ("frame_bytes", ctypes.c_size_t), ("fft_technique", _c_int), ("engine", _c_int)]


class _Image(ctypes.Structure):
    _fields_ = [("width", _c_int), ("height", _c_int), ("channels", _c_int),
                ("data", _c_float_p)]


class _Preset(ctypes.Structure):
    _fields_ = [("kind", _c_int), ("size", _c_int), ("sigma", _c_double), ("core", _c_double),
                ("halo", _c_double), ("halo_gain", _c_double), ("streaks", _c_int),
                ("length", _c_double), ("rotation", _c_double), ("blades", _c_int),
                ("radius", _c_double)]


class _BloomParams(ctypes.Structure):
    _fields_ = [("threshold", _c_double), ("knee", _c_double), ("clamp_max", _c_double),
                ("intensity", _c_double), ("mix", _c_double), ("kernel_scale", _c_double),
                ("composite", _c_int), ("normalize", _c_int), ("precision", _c_int),
                ("method", _c_int), ("technique", _c_int), ("center_mode", _c_int),
                ("center_x", _c_double), ("center_y", _c_double),
                ("preset", ctypes.POINTER(_Preset)), ("time_stages", _c_int)]


class _BloomStats(ctypes.Structure):
    _fields_ = [(n, _c_int) for n in ("method", "padded_w", "padded_h", "tiles_x", "tiles_y",
                                      "gray_kernel", "kernel_cached", "timed")] + \
               [("stage_ms", _c_double * 24), ("gpu_ms", _c_double), ("wall_ms", _c_double)]


class _ConvParams(ctypes.Structure):
    _fields_ = [(n, _c_int) for n in ("stride_h", "stride_w", "pad_h", "pad_w", "dilation_h",
                                      "dilation_w", "groups", "output_pad_h", "output_pad_w",
                                      "precision", "algorithm", "method", "padding_mode",
                                      "out_h", "out_w", "time_stages")]


def _fn(name, res, *args):
    f = getattr(_lib, name)
    f.restype, f.argtypes = res, list(args)
    return f


_P = ctypes.c_void_p
_strerror = _fn("fftbloom_strerror", ctypes.c_char_p, _c_int)
_version = _fn("fftbloom_version", ctypes.c_char_p)
_ctx_create = _fn("fftbloom_context_create", _c_int, ctypes.POINTER(_ContextOpts),
                  ctypes.POINTER(_P), ctypes.c_char_p, ctypes.c_size_t)
_ctx_destroy = _fn("fftbloom_context_destroy", None, _P)
_ctx_message = _fn("fftbloom_context_message", ctypes.c_char_p, _P)
_ctx_renderer = _fn("fftbloom_context_renderer", ctypes.c_char_p, _P)
_ctx_engine = _fn("fftbloom_context_engine", ctypes.c_char_p, _P)
_ctx_software = _fn("fftbloom_context_software", _c_int, _P)
_fft = _fn("fftbloom_fft", _c_int, _P, _c_float_p, _c_int, _c_int, _c_int, _c_int)
_image_free = _fn("fftbloom_image_free", None, ctypes.POINTER(_Image))
_preset_init = _fn("fftbloom_preset_init", None, ctypes.POINTER(_Preset), _c_int)
_preset_image = _fn("fftbloom_preset_image", _c_int, _P, ctypes.POINTER(_Preset),
                    ctypes.POINTER(_Image))
_params_init = _fn("fftbloom_bloom_params_init", None, ctypes.POINTER(_BloomParams), _c_int)
_bloom = _fn("fftbloom_bloom", _c_int, _P, ctypes.POINTER(_Image), ctypes.POINTER(_Image),
             ctypes.POINTER(_BloomParams), ctypes.POINTER(_Image), ctypes.POINTER(_BloomStats))
_convolve = _fn("fftbloom_convolve", _c_int, _P, ctypes.POINTER(_Image), ctypes.POINTER(_Image),
                ctypes.POINTER(_BloomParams), ctypes.POINTER(_Image), ctypes.POINTER(_BloomStats))
_stage_name = _fn("fftbloom_stage_name", ctypes.c_char_p, _c_int)
_conv_init = _fn("fftbloom_conv_params_init", None, ctypes.POINTER(_ConvParams))
_conv_output = _fn("fftbloom_conv_output", _c_int, _c_int, _int4, _int4,
                   ctypes.POINTER(_ConvParams), _int4, ctypes.c_char_p, ctypes.c_size_t)
_conv2d = _fn("fftbloom_conv2d", _c_int, _P, _c_float_p, _int4, _c_float_p, _int4, _c_float_p,
              ctypes.POINTER(_ConvParams), _c_float_p, _P)
_conv2d_t = _fn("fftbloom_conv2d_transpose", _c_int, _P, _c_float_p, _int4, _c_float_p, _int4,
                _c_float_p, ctypes.POINTER(_ConvParams), _c_float_p, _P)
_image_read = _fn("fftbloom_image_read", _c_int, ctypes.c_char_p, ctypes.POINTER(_Image),
                  ctypes.c_char_p, ctypes.c_size_t)
_image_encode = _fn("fftbloom_image_encode", _c_int, ctypes.POINTER(_Image), ctypes.c_char_p,
                    _c_int, _c_int, ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_size_t),
                    ctypes.c_char_p, ctypes.c_size_t)
_free = _fn("fftbloom_free", None, _P)

__version__ = _version().decode()


class FftbloomError(RuntimeError):
    """A libfftbloom failure: .status is the negative enum fftbloom_status, the text its
    message."""

    def __init__(self, status, message):
        super().__init__("%s (%s)" % (message or _strerror(status).decode(),
                                      _strerror(status).decode()))
        self.status = status


# ---- the context ----

_PLATFORMS = {"auto": 0, "device": 1, "surfaceless": 2, "current": 3}
_ENGINES = {"auto": 0, "gpu": 1, "cpu": 2}


class Context:
    """One GL context (headless EGL: platform "auto", "device" with GPU gpu, "surfaceless"; or
    "current": the caller's EGL context current on this thread) with the programs, FFT plans
    and kernel spectra it keeps between calls. Use it on the thread that made it; close() (or
    `with`) frees it."""

    def __init__(self, platform="auto", gpu=0, program_cache=None, max_plans=0, engine="auto"):
        if platform not in _PLATFORMS:
            raise ValueError("platform: one of %s" % ", ".join(_PLATFORMS))
        if engine not in _ENGINES:
            raise ValueError("engine: one of %s" % ", ".join(_ENGINES))
        o = _ContextOpts(_PLATFORMS[platform], int(gpu),
                         os.fsencode(program_cache) if program_cache else None, int(max_plans))
        o.engine = _ENGINES[engine]
        h = _P()
        err = ctypes.create_string_buffer(4096)
        rc = _ctx_create(ctypes.byref(o), ctypes.byref(h), err, len(err))
        if rc:
            raise FftbloomError(rc, err.value.decode(errors="replace"))
        self._h = h
        self._thread = threading.get_ident()

    def close(self):
        if getattr(self, "_h", None):
            _ctx_destroy(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):  # only on its own thread: a GL context is current on one
        if getattr(self, "_h", None) and threading.get_ident() == self._thread:
            self.close()

    @property
    def renderer(self):
        """"RENDERER / VERSION" of the GL context."""
        return _ctx_renderer(self._handle()).decode()

    @property
    def engine(self):
        """"gpu" or "cpu": where the operations run (engine="auto": the CPU engine on a software
        renderer or without a GL context)."""
        return _ctx_engine(self._handle()).decode()

    @property
    def software(self):
        """True on a CPU rasterizer (llvmpipe)."""
        return bool(_ctx_software(self._handle()))

    def _handle(self):
        if not getattr(self, "_h", None):
            raise ValueError("the context is closed")
        if threading.get_ident() != self._thread:
            raise RuntimeError("a Context is used on the thread that made it")
        return self._h

    def _check(self, rc):
        if rc:
            raise FftbloomError(rc, _ctx_message(self._h).decode(errors="replace"))


_local = threading.local()


def default_context():
    """This thread's context, made on first use (platform auto)."""
    c = getattr(_local, "ctx", None)
    if c is None:
        c = _local.ctx = Context()
    return c


def _ctx(ctx):
    return ctx if ctx is not None else default_context()


def _fptr(a):
    return a.ctypes.data_as(_c_float_p)


def _take_image(img, shape):
    """A library-made image as a numpy array of shape, without a copy: the array's memory is
    the library's, given back (fftbloom_free) when the last view of it goes."""
    n = img.width * img.height * img.channels
    addr = ctypes.cast(img.data, ctypes.c_void_p).value
    if not n or not addr:
        _image_free(ctypes.byref(img))
        return np.zeros(shape, np.float32)
    buf = (ctypes.c_float * n).from_address(addr)
    weakref.finalize(buf, _free, addr)
    return np.frombuffer(buf, dtype=np.float32).reshape(shape)


def _image_arg(a, what):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if a.ndim == 2:
        h, w, c = a.shape[0], a.shape[1], 1
    elif a.ndim == 3 and 1 <= a.shape[2] <= 4:
        h, w, c = a.shape
    else:
        raise ValueError("%s: an HxW or HxWxC array (C 1-4) expected, not shape %s"
                         % (what, a.shape))
    return a, _Image(w, h, c, _fptr(a))


# ---- FFT ----

_NORMS = (None, "backward", "ortho", "forward")


def _fft2(a, s, axes, norm, inverse, ctx):
    if norm not in _NORMS:
        raise ValueError("norm: None, 'backward', 'ortho' or 'forward'")
    c = _ctx(ctx)
    a = np.asarray(a)
    axes = tuple(ax % a.ndim if -a.ndim <= ax < a.ndim else None for ax in axes)
    if len(axes) != 2 or None in axes or axes[0] == axes[1]:
        raise ValueError("axes: two distinct axes of the array expected")
    _fits_int(*(a.shape[ax] for ax in axes), *(int(v) for v in (s or ())))
    x = np.moveaxis(a, axes, (-2, -1)).astype(np.complex64)
    if s is not None:
        s = tuple(int(n) for n in s)
        if len(s) != 2 or min(s) < 1:
            raise ValueError("s: two sizes >= 1 expected")
        x = x[..., :s[0], :s[1]]
        pad = [(0, 0)] * (x.ndim - 2) + [(0, s[0] - x.shape[-2]), (0, s[1] - x.shape[-1])]
        x = np.pad(x, pad)
    x = np.ascontiguousarray(x)
    h, w = x.shape[-2], x.shape[-1]
    if h < 1 or w < 1:
        raise ValueError("invalid number of data points (%d, %d)" % (h, w))
    flat = x.reshape(-1, h, w)
    hd = c._handle()
    for i in range(flat.shape[0]):
        c._check(_fft(hd, flat[i].view(np.float32).ctypes.data_as(_c_float_p), w, h, 3,
                      1 if inverse else 0))
    _normalise(x, float(h * w), norm, inverse)
    return np.moveaxis(x, (-2, -1), axes)


def _normalise(x, n, norm, inverse):
    """Scales x in place as numpy.fft's norm asks for a transform of n points, from the GPU's
    transforms, which are numpy's default ("backward": the inverse divided by n)."""
    scale = 1.0
    if norm == "ortho":
        scale = np.sqrt(n) if inverse else 1 / np.sqrt(n)
    elif norm == "forward":
        scale = n if inverse else 1.0 / n
    if scale != 1.0:
        x *= np.float32(scale)


_INT_MAX = 2**31 - 1


def _fits_int(*sizes):
    """The library takes sizes and counts as C ints: a larger one is refused before any copy."""
    for v in sizes:
        if v > _INT_MAX:
            raise ValueError("size %d too large: at most %d points a side and signals a batch"
                             % (v, _INT_MAX))


def _fft1(a, n, axis, norm, inverse, ctx):
    if norm not in _NORMS:
        raise ValueError("norm: None, 'backward', 'ortho' or 'forward'")
    c = _ctx(ctx)
    a = np.asarray(a)
    if a.ndim == 0 or not -a.ndim <= axis < a.ndim:
        raise ValueError("axis %s is out of bounds for an array of dimension %d" % (axis, a.ndim))
    _fits_int(a.shape[axis] if n is None else int(n), int(np.prod(a.shape, dtype=np.int64))
              // max(a.shape[axis], 1))
    x = np.moveaxis(a, axis, -1).astype(np.complex64)
    if n is not None:
        if int(n) < 1:
            raise ValueError("invalid number of data points (%d) specified" % n)
        x = x[..., :int(n)]
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, int(n) - x.shape[-1])])
    x = np.ascontiguousarray(x)
    m = x.shape[-1]
    if m < 1:
        raise ValueError("invalid number of data points (%d) specified" % m)
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    if rows:  # every signal of the array in one call: a batch of rows
        c._check(_fft(c._handle(), x.view(np.float32).ctypes.data_as(_c_float_p), m, rows, 1,
                      1 if inverse else 0))
    _normalise(x, float(m), norm, inverse)
    return np.moveaxis(x, -1, axis)


def fft(a, n=None, axis=-1, norm=None, ctx=None):
    """numpy.fft.fft on the GPU, all the array's signals in one batch: complex64 result."""
    return _fft1(a, n, axis, norm, False, ctx)


def ifft(a, n=None, axis=-1, norm=None, ctx=None):
    """numpy.fft.ifft on the GPU: complex64 result."""
    return _fft1(a, n, axis, norm, True, ctx)


def fft2(a, s=None, axes=(-2, -1), norm=None, ctx=None):
    """numpy.fft.fft2 on the GPU: complex64 result (float32 arithmetic) for any input dtype."""
    return _fft2(a, s, axes, norm, False, ctx)


def ifft2(a, s=None, axes=(-2, -1), norm=None, ctx=None):
    """numpy.fft.ifft2 on the GPU: complex64 result (float32 arithmetic) for any input dtype."""
    return _fft2(a, s, axes, norm, True, ctx)


# ---- fftconvolve ----


def _full_conv_2d(c, imgs, kern, kshared):
    """Full linear convolutions of the (N, H1, W1) float32 slices imgs with kern ((H2, W2)
    shared by all with kshared, else (N, H2, W2)): (N, H1+H2-1, W1+W2-1). The image is padded
    with zeros to the full size and convolved with the kernel's centre at (0, 0), so the
    library's same-size convolve is the full one; a shared kernel convolves four slices a call
    (the RGBA channels)."""
    n, h1, w1 = imgs.shape
    h2, w2 = kern.shape[-2:]
    fh, fw = h1 + h2 - 1, w1 + w2 - 1
    out = np.empty((n, fh, fw), np.float32)
    p = _BloomParams()
    _params_init(ctypes.byref(p), 1)
    p.method = 1  # the FFT path
    p.center_mode, p.center_x, p.center_y = 1, 0.0, 0.0
    hd = c._handle()
    step = 4 if kshared else 1
    for i in range(0, n, step):
        k = min(step, n - i)
        buf = np.zeros((fh, fw, k), np.float32)
        buf[:h1, :w1, :] = np.moveaxis(imgs[i:i + k], 0, -1)
        kk = np.ascontiguousarray(kern if kshared else kern[i], dtype=np.float32)
        im = _Image(fw, fh, k, _fptr(buf))
        km = _Image(w2, h2, 1, _fptr(kk))
        res = _Image()
        c._check(_convolve(hd, ctypes.byref(im), ctypes.byref(km), ctypes.byref(p),
                           ctypes.byref(res), None))
        out[i:i + k] = np.moveaxis(_take_image(res, (fh, fw, k)), -1, 0)
    return out


def _centered(arr, newshape, axes):
    sl = [slice(None)] * arr.ndim
    for ax, n in zip(axes, newshape):
        start = (arr.shape[ax] - n) // 2
        sl[ax] = slice(start, start + n)
    return arr[tuple(sl)]


def fftconvolve(in1, in2, mode="full", axes=None, ctx=None):
    """scipy.signal.fftconvolve on the GPU, over one or two axes (axes None: all of them, so 1-D
    and 2-D arrays); the other axes broadcast (an HxWx3 image and an HxWx1 kernel with
    axes=(0, 1) convolve per channel). Real or complex input; float32 (complex64) result."""
    in1, in2 = np.asarray(in1), np.asarray(in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if in1.ndim == in2.ndim == 0:
        return (in1 * in2).astype(np.result_type(in1, in2, np.float32))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if in1.size == 0 or in2.size == 0:
        return np.array([], dtype=np.float32)
    nd = in1.ndim
    if axes is None:
        axes = list(range(nd))
    else:
        axes = [axes] if np.isscalar(axes) else list(axes)
        axes = [a % nd if -nd <= a < nd else None for a in axes]
        if None in axes or len(set(axes)) != len(axes):
            raise ValueError("axes exceeds dimensionality of input, or repeats an axis")
    axes = [a for a in axes if in1.shape[a] != 1 or in2.shape[a] != 1] or axes[:1]
    if len(axes) > 2:
        raise ValueError("fftbloom.fftconvolve convolves along at most two axes")
    for a in range(nd):
        if a not in axes and in1.shape[a] != in2.shape[a] and 1 not in (in1.shape[a],
                                                                          in2.shape[a]):
            raise ValueError("incompatible shapes for in1 and in2: %s and %s"
                             % (in1.shape, in2.shape))
    s1 = [in1.shape[a] for a in axes]
    s2 = [in2.shape[a] for a in axes]
    if mode == "valid":
        ok1 = all(x >= y for x, y in zip(s1, s2))
        ok2 = all(y >= x for x, y in zip(s1, s2))
        if not (ok1 or ok2):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
        if not ok1:
            in1, in2, s1, s2 = in2, in1, s2, s1
    if np.iscomplexobj(in1) or np.iscomplexobj(in2):
        a, b = np.asarray(in1), np.asarray(in2)
        rr = fftconvolve(a.real, b.real, "full", axes, ctx)
        ii = fftconvolve(a.imag, b.imag, "full", axes, ctx) if np.iscomplexobj(a) and \
            np.iscomplexobj(b) else 0
        ri = fftconvolve(a.real, b.imag, "full", axes, ctx) if np.iscomplexobj(b) else 0
        ir = fftconvolve(a.imag, b.real, "full", axes, ctx) if np.iscomplexobj(a) else 0
        full = (rr - ii + 1j * (ri + ir)).astype(np.complex64)
    else:
        c = _ctx(ctx)
        # the convolved axes last (two of them: a 1-axis convolution is one of a single row)
        k = len(axes)
        x = np.moveaxis(in1, axes, range(nd - k, nd)).astype(np.float32)
        y = np.moveaxis(in2, axes, range(nd - k, nd)).astype(np.float32)
        if k == 1:
            x, y = x[..., None, :], y[..., None, :]
        lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        nlead = int(np.prod(lead, dtype=np.int64))
        kshared = int(np.prod(y.shape[:-2], dtype=np.int64)) == 1
        if not kshared and int(np.prod(x.shape[:-2], dtype=np.int64)) == 1:
            x, y, kshared = y, x, True  # the full convolution commutes: share the single one
        xs = np.broadcast_to(x, lead + x.shape[-2:]).reshape((nlead,) + x.shape[-2:])
        ys = y.reshape(y.shape[-2:]) if kshared else \
            np.broadcast_to(y, lead + y.shape[-2:]).reshape((nlead,) + y.shape[-2:])
        full = _full_conv_2d(c, np.ascontiguousarray(xs), ys, kshared)
        full = full.reshape(lead + full.shape[-2:])
        if k == 1:
            full = full[..., 0, :]
        full = np.moveaxis(full, range(nd - k, nd), axes)
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, s1, axes).copy()
    return _centered(full, [x - y + 1 for x, y in zip(s1, s2)], axes).copy()


# ---- conv2d and conv_transpose2d ----


def _pair(v, name):
    if np.isscalar(v):
        return int(v), int(v)
    v = tuple(int(x) for x in v)
    if len(v) != 2:
        raise ValueError("%s: an int or a pair expected" % name)
    return v


def _tensor_args(input, weight, bias):
    x = np.ascontiguousarray(input, dtype=np.float32)
    w = np.ascontiguousarray(weight, dtype=np.float32)
    if x.ndim not in (3, 4) or w.ndim != 4:
        raise ValueError("input (B, C, H, W) or (C, H, W) and a 4-D weight expected")
    b = None if bias is None else np.ascontiguousarray(bias, dtype=np.float32).reshape(-1)
    return x, w, b, x.ndim == 3


def _run_conv(c, fn, transpose, x, w, b, p, squeeze):
    x4 = x[None] if squeeze else x
    xs, ws, os_ = _int4(*x4.shape), _int4(*w.shape), _int4()
    hd = c._handle()
    err = ctypes.create_string_buffer(1024)
    rc = _conv_output(transpose, xs, ws, ctypes.byref(p), os_, err, len(err))
    if rc:
        raise ValueError(err.value.decode(errors="replace"))
    if b is not None and b.size != os_[1]:
        raise ValueError("bias: %d values for %d output planes" % (b.size, os_[1]))
    y = np.empty(tuple(os_), np.float32)
    c._check(fn(hd, _fptr(x4), xs, _fptr(w), ws, None if b is None else _fptr(b),
                ctypes.byref(p), _fptr(y), None))
    return y[0] if squeeze else y


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, ctx=None):
    """torch.nn.functional.conv2d on the GPU (float32): input (B, Cin, H, W) or (Cin, H, W),
    weight (Cout, Cin / groups, kH, kW), bias (Cout) or None; padding an int, a pair, 'valid'
    or 'same' (stride 1)."""
    c = _ctx(ctx)
    x, w, b, squeeze = _tensor_args(input, weight, bias)
    p = _ConvParams()
    _conv_init(ctypes.byref(p))
    p.stride_h, p.stride_w = _pair(stride, "stride")
    p.dilation_h, p.dilation_w = _pair(dilation, "dilation")
    p.groups = int(groups)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if (p.stride_h, p.stride_w) != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            tot = [p.dilation_h * (w.shape[2] - 1), p.dilation_w * (w.shape[3] - 1)]
            lo = [t // 2 for t in tot]
            # torch pads the odd pixel after: the symmetric part here, the rest on the host
            x = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(0, tot[0] - 2 * lo[0]),
                                                     (0, tot[1] - 2 * lo[1])])
            padding = tuple(lo)
        else:
            raise ValueError("padding: an int, a pair, 'valid' or 'same'")
    p.pad_h, p.pad_w = _pair(padding, "padding")
    return _run_conv(c, _conv2d, 0, np.ascontiguousarray(x), w, b, p, squeeze)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, ctx=None):
    """torch.nn.functional.conv_transpose2d on the GPU (float32): input (B, Cin, H, W) or
    (Cin, H, W), weight (Cin, Cout / groups, kH, kW), bias (Cout) or None."""
    c = _ctx(ctx)
    x, w, b, squeeze = _tensor_args(input, weight, bias)
    p = _ConvParams()
    _conv_init(ctypes.byref(p))
    p.stride_h, p.stride_w = _pair(stride, "stride")
    p.pad_h, p.pad_w = _pair(padding, "padding")
    p.output_pad_h, p.output_pad_w = _pair(output_padding, "output_padding")
    p.dilation_h, p.dilation_w = _pair(dilation, "dilation")
    p.groups = int(groups)
    return _run_conv(c, _conv2d_t, 1, x, w, b, p, squeeze)


# ---- bloom and convolve ----

_KINDS = {"gaussian": 1, "glare": 2, "aperture": 3}
_INT_KEYS = ("size", "streaks", "blades")


def _preset_struct(spec):
    """A preset from "NAME[:key=value,...]" (the CLI's --kernel-preset) or a dict with "kind"."""
    if isinstance(spec, dict):
        d = dict(spec)
        name = d.pop("kind", "aperture")
    else:
        name, _, rest = str(spec).partition(":")
        d = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
    if name not in _KINDS:
        raise ValueError("preset: one of %s" % ", ".join(_KINDS))
    s = _Preset()
    _preset_init(ctypes.byref(s), _KINDS[name])
    for k, v in d.items():
        if k not in dict(_Preset._fields_) or k == "kind":
            raise ValueError("preset %s: unknown key %r" % (name, k))
        setattr(s, k, int(v) if k in _INT_KEYS else float(v))
    return s


def preset(spec="aperture", ctx=None):
    """The built-in kernel spec names ("aperture", "glare:streaks=6", "gaussian:sigma=4") as an
    HxWx3 float32 array."""
    c = _ctx(ctx)
    s = _preset_struct(spec)
    res = _Image()
    c._check(_preset_image(c._handle(), ctypes.byref(s), ctypes.byref(res)))
    return _take_image(res, (res.height, res.width, res.channels))


_COMPOSITES, _NORMALIZES, _PRECISIONS = ("add", "mix"), ("luminance", "none"), ("fp32", "fp16")
_METHODS = ("auto", "fft", "spatial")


def _choice(v, names, what):
    if v not in names:
        raise ValueError("%s: one of %s" % (what, ", ".join(names)))
    return names.index(v)


def _image_op(fn, is_convolve, image, kernel, ctx, kernel_preset, kw):
    c = _ctx(ctx)
    stats = kw.pop("stats", None)
    p = _BloomParams()
    _params_init(ctypes.byref(p), 1 if is_convolve else 0)
    for k in ("threshold", "knee", "clamp_max", "intensity", "mix", "kernel_scale"):
        if k in kw:
            setattr(p, k, float(kw.pop(k)))
    for k, names in (("composite", _COMPOSITES), ("normalize", _NORMALIZES),
                     ("precision", _PRECISIONS), ("method", _METHODS)):
        if k in kw:
            setattr(p, k, _choice(kw.pop(k), names, k))
    center = kw.pop("kernel_center", None)
    if kw:
        raise TypeError("unexpected keyword arguments: %s" % ", ".join(kw))
    if center is not None:
        p.center_mode, p.center_x, p.center_y = 1, float(center[0]), float(center[1])
    st = None
    if stats is not None:
        p.time_stages, st = 1, _BloomStats()
    ps = None
    if kernel_preset is not None:
        ps = _preset_struct(kernel_preset)
        p.preset = ctypes.pointer(ps)
    img, im = _image_arg(image, "image")
    km = None
    if kernel is not None:
        if isinstance(kernel, str):
            raise TypeError("kernel: an array (a preset goes in kernel_preset=)")
        kern, km = _image_arg(kernel, "kernel")
    res = _Image()
    c._check(fn(c._handle(), ctypes.byref(im), ctypes.byref(km) if km is not None else None,
                ctypes.byref(p), ctypes.byref(res), ctypes.byref(st) if st is not None else None))
    if st is not None:
        stats.update({k: getattr(st, k) for k, _ in _BloomStats._fields_[:8]})
        stats["method"] = _METHODS[st.method] if 0 <= st.method < len(_METHODS) else st.method
        stats.update(gpu_ms=st.gpu_ms, wall_ms=st.wall_ms, stage_ms={})
        i = 0
        while _stage_name(i):
            if st.stage_ms[i] > 0:
                stats["stage_ms"][_stage_name(i).decode()] = st.stage_ms[i]
            i += 1
    return _take_image(res, image.shape if np.ndim(image) == 2 else
                       (res.height, res.width, res.channels))


def bloom(image, kernel=None, *, kernel_preset=None, ctx=None, **params):
    """The CLI's bloom of a float image (HxW or HxWxC, C 1-4, linear light): the kernel an
    array (HxW or HxWxC) or None for kernel_preset ("aperture", the default; "glare:...",
    "gaussian:..."); params as the CLI's flags with '_' for '-': threshold, knee, clamp_max,
    intensity, mix, composite ("add"|"mix"), kernel_scale, kernel_center=(x, y), normalize
    ("luminance"|"none"), precision ("fp32"|"fp16"); stats=a dict times the GPU stages (a
    wait after each) and gets what ran: padded size, tiles, kernel_cached, stage_ms by name,
    gpu_ms, wall_ms. Returns float32 of the image's shape."""
    return _image_op(_bloom, False, image, kernel, ctx, kernel_preset, params)


def convolve(image, kernel=None, *, kernel_preset=None, ctx=None, **params):
    """The CLI's convolve: the image convolved with the kernel at the image's size (zero
    outside, the kernel's centre at (w // 2, h // 2) or kernel_center); params kernel_scale,
    kernel_center, normalize ("none" default), precision, method ("auto"|"fft"|"spatial")."""
    return _image_op(_convolve, True, image, kernel, ctx, kernel_preset, params)


# ---- codecs ----


def imread(path):
    """An image file (JPEG, PNG, EXR, HDR, PFM, WebP, AVIF, TIFF, HEIC) as float32 HxWxC, linear light."""
    res = _Image()
    err = ctypes.create_string_buffer(1024)
    rc = _image_read(os.fsencode(path), ctypes.byref(res), err, len(err))
    if rc:
        raise FftbloomError(rc, err.value.decode(errors="replace"))
    return _take_image(res, (res.height, res.width, res.channels))


def imwrite(path, image, format=None, quality=0, bits=0):
    """Writes a float image (HxW or HxWxC, linear light) as format (default: path's
    extension)."""
    img, im = _image_arg(image, "image")
    fmt = format or os.path.splitext(str(path))[1].lstrip(".")
    data, n = _P(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(1024)
    rc = _image_encode(ctypes.byref(im), fmt.encode(), int(quality), int(bits),
                       ctypes.byref(data), ctypes.byref(n), err, len(err))
    if rc:
        raise FftbloomError(rc, err.value.decode(errors="replace"))
    try:
        with open(path, "wb") as f:
            f.write(ctypes.string_at(data, n.value))
    finally:
        _free(data)
