/* fftbloom's web page: a person picks an image, tunes a bloom with sliders and compares before
 * and after. Every render is a plain call to the daemon's HTTP API (POST v1/bloom, multipart:
 * image, optional kernel, params as JSON), so this file doubles as an example of using the API
 * from a browser. No framework and no build step. */
'use strict';

/* ================================================================================================
 * The API
 * ============================================================================================= */

const KEY_STORE = 'fftbloom.apiKey';

/* The daemon's error answer, {"error": {"status", "code", "message"}}, as an exception. */
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function authHeaders() {
  const key = localStorage.getItem(KEY_STORE);
  return key ? { Authorization: 'Bearer ' + key } : {};
}

/* Returns the answer when it is a success; throws ApiError with the daemon's own message
 * otherwise (or the start of the body, when something other than the daemon answered). */
async function checked(res) {
  if (res.ok) return res;
  let code = 'http_' + res.status;
  let message = res.statusText || 'HTTP ' + res.status;
  const text = await res.text();
  try {
    const e = JSON.parse(text).error;
    if (e && e.message) {
      code = e.code;
      message = e.message;
    }
  } catch (_) {
    if (text.trim()) message = text.trim().slice(0, 400);
  }
  throw new ApiError(res.status, code, message);
}

/* "decode;dur=1.9, queue;dur=0.5, gpu;dur=45.1" -> [{name: 'decode', ms: 1.9}, ...] */
function parseServerTiming(header) {
  if (!header) return [];
  return header.split(',').map((entry) => {
    const [name, ...attrs] = entry.trim().split(';');
    const dur = attrs.map((a) => a.trim()).find((a) => a.startsWith('dur='));
    return { name, ms: dur ? Number(dur.slice(4)) : NaN };
  });
}

/* POST v1/bloom as multipart/form-data. params: the request's parameters (the CLI's long options
 * with '_' for '-', plus format). Resolves to the answer's image and its facts. */
async function bloom({ image, kernel, params, signal }) {
  const form = new FormData();
  form.append('image', image, image.name || 'image');
  if (kernel) form.append('kernel', kernel, kernel.name || 'kernel');
  form.append('params', new Blob([JSON.stringify(params)], { type: 'application/json' }));
  const t0 = performance.now();
  const res = await checked(await fetch('v1/bloom', {
    method: 'POST', body: form, headers: authHeaders(), signal,
  }));
  const blob = await res.blob();
  return {
    blob,
    type: res.headers.get('Content-Type') || '',
    timing: parseServerTiming(res.headers.get('Server-Timing')),
    lost: res.headers.get('X-Image-Lost'),
    roundTripMs: performance.now() - t0,
  };
}

async function serverInfo() {
  const res = await checked(await fetch('v1/info', { headers: authHeaders() }));
  return res.json();
}

/* ================================================================================================
 * Image formats in the browser
 * ============================================================================================= */

/* The input's family from its first bytes, as the daemon sniffs it. Browsers decode JPEG, PNG,
 * WebP and AVIF themselves; EXR, HDR and PFM they cannot, so those come back from the daemon as
 * floats. */
async function sniff(file) {
  const b = new Uint8Array(await file.slice(0, 32).arrayBuffer());
  const ascii = String.fromCharCode(...b.subarray(0, 10));
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { family: 'jpeg', bits: 8 };
  if (b[0] === 0x89 && ascii.slice(1, 4) === 'PNG') return { family: 'png', bits: b[24] === 16 ? 16 : 8 };
  if (b[0] === 0x76 && b[1] === 0x2f && b[2] === 0x31 && b[3] === 0x01) return { family: 'exr', bits: 32 };
  if (ascii.startsWith('#?RADIANCE') || ascii.startsWith('#?RGBE')) return { family: 'hdr', bits: 32 };
  if (/^P[Ff]\s/.test(ascii)) return { family: 'pfm', bits: 32 };
  if (ascii.startsWith('RIFF') && String.fromCharCode(...b.subarray(8, 12)) === 'WEBP') return { family: 'webp', bits: 8 };
  if (String.fromCharCode(...b.subarray(4, 12)) === 'ftypavif') return { family: 'avif', bits: 8 };
  return { family: 'unknown', bits: 8 };
}

const FLOAT_FAMILIES = new Set(['exr', 'hdr', 'pfm']);

/* What the page asks the daemon for to show a result, and what Download offers first. Float inputs
 * are shown from PFM answers: PFM is a short text header and raw float32 rows, parsed in a few
 * lines here, whereas EXR would need a decoder (and Radiance HDR an RLE decoder) in JavaScript. */
const DISPLAY_FORMAT = { jpeg: 'jpeg', png: 'png', exr: 'pfm', hdr: 'pfm', pfm: 'pfm', webp: 'webp',
  avif: 'avif', unknown: null };
function downloadFormat(info) {
  if (info.family === 'png' && info.bits === 16) return 'png16';
  return { jpeg: 'jpeg', png: 'png', exr: 'exr', hdr: 'hdr', pfm: 'pfm', webp: 'webp', avif: 'avif' }[info.family] || 'png';
}
const EXTENSION = { jpeg: 'jpg', png: 'png', png16: 'png', exr: 'exr', hdr: 'hdr', pfm: 'pfm',
  webp: 'webp', avif: 'avif', avif10: 'avif' };

/* PFM: "PF" (RGB) or "Pf" (grey), width, height, scale (negative: little-endian), one whitespace
 * byte, then float32 rows from the bottom up. Returns {width, height, rgb: Float32Array} top down. */
function parsePFM(buffer) {
  const bytes = new Uint8Array(buffer);
  const isSpace = (c) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
  const tokens = [];
  let i = 0;
  while (tokens.length < 4 && i < bytes.length) {
    while (i < bytes.length && isSpace(bytes[i])) i++;
    const start = i;
    while (i < bytes.length && !isSpace(bytes[i])) i++;
    tokens.push(String.fromCharCode(...bytes.subarray(start, i)));
  }
  i++;
  const [magic, w, h, scale] = tokens;
  const channels = magic === 'PF' ? 3 : magic === 'Pf' ? 1 : 0;
  const width = Number(w), height = Number(h), littleEndian = Number(scale) < 0;
  if (!channels || !(width > 0) || !(height > 0) || i + width * height * channels * 4 > bytes.length)
    throw new Error('the answer is not a PFM image');
  const view = new DataView(buffer, i);
  const rgb = new Float32Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const src = (height - 1 - y) * width * channels;
    for (let x = 0; x < width; x++)
      for (let c = 0; c < 3; c++)
        rgb[(y * width + x) * 3 + c] =
          view.getFloat32((src + x * channels + (channels === 3 ? c : 0)) * 4, littleEndian);
  }
  return { width, height, rgb };
}

/* Linear light -> 8-bit sRGB through a table of LUT_SIZE + 1 entries over [0, 1] (a step of
 * 6e-5 in linear light is well under half an sRGB code anywhere on the curve). */
const LUT_SIZE = 16384;
const SRGB8 = (() => {
  const t = new Uint8ClampedArray(LUT_SIZE + 1);
  for (let i = 0; i <= LUT_SIZE; i++) {
    const v = i / LUT_SIZE;
    t[i] = Math.round(255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * Math.pow(v, 1 / 2.4) - 0.055));
  }
  return t;
})();

/* The canvas's 2D context; its pixels are read back (the browser test reads them). */
function context2d(canvas) {
  return canvas.getContext('2d', { willReadFrequently: true });
}

/* Draws linear float RGB scaled by 2^ev, clipped to [0, 1], as sRGB. */
function drawFloat(canvas, img, ev) {
  canvas.width = img.width;
  canvas.height = img.height;
  const ctx = context2d(canvas);
  const out = ctx.createImageData(img.width, img.height);
  const mul = Math.pow(2, ev) * LUT_SIZE;
  const src = img.rgb, dst = out.data;
  for (let p = 0, q = 0; p < src.length; p += 3, q += 4) {
    for (let c = 0; c < 3; c++) {
      const v = src[p + c] * mul; // NaN and negatives fall to 0
      dst[q + c] = SRGB8[v >= LUT_SIZE ? LUT_SIZE : v > 0 ? (v + 0.5) | 0 : 0];
    }
    dst[q + 3] = 255;
  }
  ctx.putImageData(out, 0, 0);
}

/* Decodes a JPEG or PNG as the browser does, without colour management, so that drawn on a
 * canvas it holds the file's own pixel values. */
function decodeEncoded(blob) {
  return createImageBitmap(blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
}

function drawBitmap(canvas, bitmap) {
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const ctx = context2d(canvas);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(bitmap, 0, 0);
  bitmap.close();
}

/* ================================================================================================
 * Controls: the kernels' own parameters and the bloom's, as sliders with a number field
 * ============================================================================================= */

/* Each kernel's parameters as the daemon names them in kernel_preset=NAME:key=value,...; ranges
 * are the useful part of the daemon's bounds (gles/kernels.c). */
const KERNELS = {
  aperture: [
    { key: 'blades', label: 'Blades', min: 0, max: 12, step: 1, value: 6, hint: 'Sides of the lens aperture; spikes come in pairs (0–2: round).' },
    { key: 'rotation', label: 'Rotation', min: 0, max: 180, step: 1, value: 15, unit: '°' },
    { key: 'radius', label: 'Aperture radius', min: 0.05, max: 0.45, step: 0.01, value: 0.2, hint: 'Smaller apertures spread the light further.' },
    { key: 'size', label: 'Kernel size', min: 31, max: 1023, step: 2, value: 255, unit: 'px' },
  ],
  glare: [
    { key: 'streaks', label: 'Streaks', min: 0, max: 16, step: 1, value: 4, hint: 'Lines through the centre, so each makes two spikes.' },
    { key: 'length', label: 'Streak length', min: 0, max: 1, step: 0.01, value: 1 },
    { key: 'rotation', label: 'Rotation', min: 0, max: 180, step: 1, value: 0, unit: '°' },
    { key: 'core', label: 'Core radius', min: 0.5, max: 20, step: 0.1, value: 1.5, unit: 'px', curve: 2 },
    { key: 'halo', label: 'Halo radius', min: 1, max: 200, step: 0.5, value: 24, unit: 'px', curve: 2 },
    { key: 'halo_gain', label: 'Halo strength', min: 0, max: 1, step: 0.001, value: 0.02, curve: 3 },
    { key: 'size', label: 'Kernel size', min: 31, max: 1023, step: 2, value: 255, unit: 'px' },
  ],
  gaussian: [
    { key: 'sigma', label: 'Radius (sigma)', min: 0.5, max: 100, step: 0.1, value: 8, unit: 'px', curve: 2, hint: 'The glow\'s standard deviation in pixels.' },
  ],
};

const BLOOM = [
  { key: 'threshold', label: 'Threshold', min: 0, max: 4, step: 0.01, value: 0.8, hint: 'Only light brighter than this glows (1 is white in a JPEG or PNG).' },
  { key: 'knee', label: 'Knee', min: 0, max: 2, step: 0.01, value: 0.2, hint: 'Softens the threshold\'s edge.' },
  { key: 'intensity', label: 'Intensity', min: 0, max: 200, step: 0.01, value: 20, curve: 3, hint: 'How strong the glow is.' },
  { key: 'kernel_scale', label: 'Kernel scale', min: 0, max: 2, step: 0.01, value: 0.5, hint: 'The glare\'s size: × the image\'s shorter side (0: the kernel\'s own size).' },
];

const VIEW = [
  { key: 'exposure', label: 'Exposure', min: -10, max: 10, step: 0.1, value: 0, unit: 'EV', hint: 'Display only: the float image is shown × 2^EV, then clipped.' },
];

let sliderCount = 0;

/* A slider for def, appended to parent; onInput(value) runs on every change. With def.curve > 1
 * the range input moves along value = min + (max - min) * t^curve, for fine control near min;
 * the number field always holds the value sent. */
function makeSlider(parent, def, onInput) {
  const id = 'p' + ++sliderCount + '-' + def.key;
  const row = document.createElement('div');
  row.className = 'slider';
  row.innerHTML =
    '<div class="slider-head"><label></label><span class="value"><input type="number">' +
    '<span class="unit"></span></span></div><input type="range"><p class="hint"></p>';
  const [label, number, range, hint] = row.querySelectorAll('label, input[type=number], input[type=range], .hint');
  label.htmlFor = id;
  label.textContent = def.label;
  range.id = id;
  range.dataset.key = def.key;
  number.dataset.key = def.key;
  number.setAttribute('aria-label', def.label + ' value');
  number.min = def.min;
  number.max = def.max;
  number.step = def.step;
  row.querySelector('.unit').textContent = def.unit || '';
  if (def.hint) hint.textContent = def.hint; else hint.remove();

  const curve = def.curve || 1;
  const positions = 1000;
  if (curve > 1) {
    range.min = 0; range.max = positions; range.step = 1;
  } else {
    range.min = def.min; range.max = def.max; range.step = def.step;
  }
  const decimals = Math.max(0, -Math.floor(Math.log10(def.step) + 1e-9));
  const tidy = (v) => Number(Math.min(def.max, Math.max(def.min, v)).toFixed(decimals));
  const toValue = (pos) => tidy(def.min + (def.max - def.min) * Math.pow(pos / positions, curve));
  const toPos = (v) => Math.round(positions * Math.pow((v - def.min) / (def.max - def.min), 1 / curve));

  let value = def.value;
  const show = () => {
    number.value = value;
    if (curve > 1) range.value = toPos(value); else range.value = value;
    range.setAttribute('aria-valuetext', value + (def.unit ? ' ' + def.unit : ''));
  };
  range.addEventListener('input', () => {
    value = curve > 1 ? toValue(range.valueAsNumber) : tidy(range.valueAsNumber);
    show();
    onInput(value);
  });
  number.addEventListener('change', () => {
    if (Number.isNaN(number.valueAsNumber)) { show(); return; }
    value = tidy(number.valueAsNumber);
    show();
    onInput(value);
  });
  show();
  parent.appendChild(row);
  return {
    key: def.key,
    get value() { return value; },
    reset() { value = def.value; show(); },
  };
}

/* ================================================================================================
 * The page
 * ============================================================================================= */

const $ = (sel) => document.querySelector(sel);
const el = {
  stage: $('#stage'), before: $('#before'), after: $('#after'), divider: $('#divider'),
  drop: $('#drop'), dropFormats: $('#drop-formats'), nopreview: $('#nopreview'),
  error: $('#error'), errorMessage: $('#error-message'), errorCode: $('#error-code'),
  status: $('#status'), timing: $('#timing'), server: $('#server'),
  file: $('#file'), filename: $('#filename'), kernel: $('#kernel'), kernelFile: $('#kernel-file'),
  kfile: $('#kfile'), kname: $('#kname'), kernelParams: $('#kernel-params'),
  bloomParams: $('#bloom-params'), viewGroup: $('#view-group'), viewParams: $('#view-params'),
  dlformat: $('#dlformat'), dlwidth: $('#dlwidth'), download: $('#download'), curl: $('#curl'),
  keepProfile: $('#keepprofile'),
  keybox: $('#keybox'), keyform: $('#keyform'), apikey: $('#apikey'),
};

const state = {
  file: null,          // the image being worked on (a File or Blob)
  info: null,          // its family and bit depth (sniff)
  kernelFile: null,    // an uploaded kernel image
  beforeFloat: null,   // float inputs: the input's pixels as the daemon decoded them
  beforeReady: false,  // the "before" side shows the input
  result: null,        // {blob, format, float}
  load: null,          // AbortController of the image's load (the float "before" request)
  render: null,        // AbortController of the render in flight
  renders: 0,          // results shown, and requests cancelled (body data-*, for the test)
  cancelled: 0,
};

/* ---- errors and status ---- */

function showError(err) {
  if (err instanceof ApiError) {
    el.errorMessage.textContent = err.message;
    el.errorCode.textContent = err.status + ' ' + err.code;
  } else if (err instanceof TypeError) { // fetch's network failure
    el.errorMessage.textContent = 'Cannot reach the server: ' + err.message;
    el.errorCode.textContent = '';
  } else {
    el.errorMessage.textContent = String(err && err.message || err);
    el.errorCode.textContent = '';
  }
  el.error.hidden = false;
  if (err instanceof ApiError && err.status === 401) {
    el.keybox.open = true;
    el.apikey.focus();
  }
}

function clearError() {
  el.error.hidden = true;
}

function setBusy(busy) {
  document.body.dataset.busy = busy ? '1' : '0';
  el.stage.setAttribute('aria-busy', busy ? 'true' : 'false');
  if (busy) el.status.textContent = 'Rendering…';
}

function kb(bytes) {
  return bytes < 1024 ? bytes + ' B' : bytes < 1048576 ? (bytes / 1024).toFixed(1) + ' kB' : (bytes / 1048576).toFixed(1) + ' MB';
}

function showTiming(answer) {
  el.timing.replaceChildren();
  const rows = answer.timing.filter((t) => ['decode', 'queue', 'gpu', 'encode', 'total'].includes(t.name));
  rows.push({ name: 'round trip', ms: answer.roundTripMs });
  for (const t of rows) {
    const div = document.createElement('div');
    div.className = 'timing-' + t.name.replace(' ', '-');
    const dt = document.createElement('dt');
    const dd = document.createElement('dd');
    dt.textContent = t.name;
    dd.textContent = Number.isFinite(t.ms) ? (t.ms < 10 ? t.ms.toFixed(2) : t.ms.toFixed(1)) + ' ms' : '–';
    div.append(dt, dd);
    el.timing.append(div);
  }
}

/* ---- the split view ---- */

let split = 50;

function setSplit(percent) {
  split = Math.min(100, Math.max(0, percent));
  el.stage.style.setProperty('--split', split + '%');
  el.divider.setAttribute('aria-valuenow', String(Math.round(split)));
  el.divider.setAttribute('aria-valuetext', Math.round(split) + '% before, ' + Math.round(100 - split) + '% after');
}

function splitFromPointer(event) {
  const r = el.stage.getBoundingClientRect();
  setSplit(((event.clientX - r.left) / r.width) * 100);
}

el.stage.addEventListener('pointerdown', (event) => {
  if (el.stage.classList.contains('empty') || event.button !== 0) return;
  el.stage.setPointerCapture(event.pointerId);
  el.stage.classList.add('dragging');
  splitFromPointer(event);
  el.divider.focus({ preventScroll: true });
});
el.stage.addEventListener('pointermove', (event) => {
  if (el.stage.hasPointerCapture(event.pointerId)) splitFromPointer(event);
});
el.stage.addEventListener('pointerup', (event) => {
  if (el.stage.hasPointerCapture(event.pointerId)) el.stage.releasePointerCapture(event.pointerId);
  el.stage.classList.remove('dragging');
});
el.divider.addEventListener('keydown', (event) => {
  const step = event.shiftKey ? 10 : 2;
  const moves = {
    ArrowLeft: split - step, ArrowDown: split - step, ArrowRight: split + step, ArrowUp: split + step,
    PageDown: split - 10, PageUp: split + 10, Home: 0, End: 100,
  };
  if (!(event.key in moves)) return;
  event.preventDefault();
  setSplit(moves[event.key]);
});

function fitStage(width, height) {
  el.stage.style.setProperty('--ar', width + ' / ' + height);
  el.stage.style.setProperty('--ar-num', String(width / height));
  // small images are enlarged with visible pixels rather than blurred
  el.stage.classList.toggle('pixelated', width < 400 && height < 400);
}

/* ---- settings ---- */

const kernelSliders = {};   // per kernel, its sliders (kept, so switching back keeps the values)
for (const [name, defs] of Object.entries(KERNELS)) {
  const box = document.createElement('div');
  box.dataset.kernel = name;
  box.hidden = true;
  el.kernelParams.append(box);
  kernelSliders[name] = defs.map((d) => makeSlider(box, d, scheduleRender));
}
const bloomSliders = BLOOM.map((d) => makeSlider(el.bloomParams, d, scheduleRender));
const viewSliders = VIEW.map((d) => makeSlider(el.viewParams, d, redrawFloat));

function showKernelParams() {
  const k = el.kernel.value;
  for (const box of el.kernelParams.children) box.hidden = box.dataset.kernel !== k;
  el.kernelFile.hidden = k !== 'file';
}

/* The request's parameters from the controls, as the API names them. */
function currentParams() {
  const params = {};
  const k = el.kernel.value;
  if (k !== 'file')
    params.kernel_preset = k + ':' + kernelSliders[k].map((s) => s.key + '=' + s.value).join(',');
  for (const s of bloomSliders) params[s.key] = s.value;
  return params;
}

function exposure() {
  return viewSliders[0].value;
}

/* ---- rendering ---- */

let renderTimer = 0;

/* Renders shortly after the last change, so a dragged slider sends one request, not fifty. */
function scheduleRender() {
  clearTimeout(renderTimer);
  renderTimer = setTimeout(render, 200);
  updateCurl();
}

async function render() {
  clearTimeout(renderTimer);
  if (!state.file) return;
  if (el.kernel.value === 'file' && !state.kernelFile) {
    el.status.textContent = 'Choose a kernel image to render with.';
    return;
  }
  if (state.render) { // the answer to older settings is no longer wanted
    state.render.abort();
    document.body.dataset.cancelled = String(++state.cancelled);
  }
  const controller = new AbortController();
  state.render = controller;
  const format = DISPLAY_FORMAT[state.info.family];
  const params = currentParams();
  if (format) params.format = format;
  setBusy(true);
  try {
    const answer = await bloom({
      image: state.file,
      kernel: el.kernel.value === 'file' ? state.kernelFile : null,
      params,
      signal: controller.signal,
    });
    const float = format === 'pfm' ? parsePFM(await answer.blob.arrayBuffer()) : null;
    const bitmap = float ? null : await decodeEncoded(answer.blob);
    if (controller !== state.render) return; // newer settings are being rendered
    if (float) drawFloat(el.after, float, exposure());
    else drawBitmap(el.after, bitmap);
    if (!state.beforeReady) fitStage(el.after.width, el.after.height);
    el.nopreview.hidden = true;
    state.result = { blob: answer.blob, format: format || formatOf(answer.type), float };
    el.stage.classList.remove('stale');
    clearError();
    showTiming(answer);
    el.status.textContent = 'Result: ' + el.after.width + ' × ' + el.after.height + ', ' +
      (format || formatOf(answer.type)).toUpperCase() + ', ' + kb(answer.blob.size) + lostNote(answer.lost);
    el.download.disabled = false;
    state.renders++;
    document.body.dataset.renders = String(state.renders);
  } catch (err) {
    if (err.name === 'AbortError') return;
    if (controller !== state.render) return;
    el.stage.classList.add('stale');
    el.status.textContent = state.result ? 'The result shown is from earlier settings.' : 'No result.';
    showError(err);
  } finally {
    if (controller === state.render) {
      state.render = null;
      setBusy(false);
    }
  }
}

/* X-Image-Lost: what the answer's format could not hold, in words (precision is always lost
 * to 8 bits and goes without saying). */
function lostNote(lost) {
  const words = { range: 'light above white clipped', negative: 'negative values clipped', alpha: 'alpha dropped' };
  const said = (lost || '').split(',').map((w) => words[w.trim()]).filter(Boolean);
  return said.length ? ' · ' + said.join(', ') + ' (EXR keeps everything)' : '';
}

function formatOf(contentType) {
  const map = { 'image/jpeg': 'jpeg', 'image/png': 'png', 'image/x-exr': 'exr',
    'image/vnd.radiance': 'hdr', 'image/x-portable-floatmap': 'pfm', 'image/webp': 'webp',
    'image/avif': 'avif' };
  return map[contentType.split(';')[0].trim()] || 'png';
}

function redrawFloat() {
  if (state.beforeFloat) drawFloat(el.before, state.beforeFloat, exposure());
  if (state.result && state.result.float) drawFloat(el.after, state.result.float, exposure());
}

/* ---- loading an image ---- */

/* A float input's own pixels, for the "before" side: the daemon decodes it (browsers cannot read
 * EXR), and a bloom with intensity 0 is O = I + 0 * B = I exactly. The tiny kernel
 * (gaussian:sigma=0.1 is 3 x 3) and the highest threshold keep that request cheap. */
async function decodeOnServer(file, signal) {
  const answer = await bloom({
    image: file,
    params: { intensity: 0, threshold: 65504, kernel_preset: 'gaussian:sigma=0.1', format: 'pfm' },
    signal,
  });
  return parsePFM(await answer.blob.arrayBuffer());
}

async function loadImage(file) {
  if (state.load) state.load.abort();
  if (state.render) state.render.abort();
  state.render = null;
  setBusy(false);
  const controller = new AbortController();
  state.load = controller;
  state.info = await sniff(file); // before state.file: render() reads both
  state.file = file;
  state.beforeFloat = null;
  state.beforeReady = false;
  state.result = null;
  clearError();
  el.filename.textContent = (file.name || 'pasted image') + ' · ' + kb(file.size);
  el.stage.classList.remove('empty', 'stale');
  el.nopreview.hidden = true;
  for (const c of [el.before, el.after]) context2d(c).clearRect(0, 0, c.width, c.height);
  el.timing.replaceChildren();
  el.download.disabled = true;
  el.dlformat.value = downloadFormat(state.info);
  const float = FLOAT_FAMILIES.has(state.info.family);
  el.viewGroup.hidden = !float;
  updateCurl();

  try {
    if (float) {
      setBusy(true);
      state.beforeFloat = await decodeOnServer(file, controller.signal);
      if (controller !== state.load) return;
      setBusy(false);
      drawFloat(el.before, state.beforeFloat, exposure());
    } else {
      const bitmap = await decodeEncoded(file);
      if (controller !== state.load) return;
      drawBitmap(el.before, bitmap);
    }
    fitStage(el.before.width, el.before.height);
    state.beforeReady = true;
  } catch (err) {
    if (err.name === 'AbortError' || controller !== state.load) return;
    if (float) {
      setBusy(false);
      showError(err);
      el.stage.classList.add('stale');
      el.status.textContent = 'No result.';
      return;
    }
    // The browser cannot show it; the daemon says what is wrong (or shows it) in the render.
    el.nopreview.hidden = false;
    fitStage(3, 2);
  }
  render();
}

function stem(name) {
  return (name || 'image').replace(/\.[^.]*$/, '') || 'image';
}

/* A night scene drawn here, so the page can be tried without an image at hand. */
function sampleImage() {
  const w = 800, h = 450;
  const c = document.createElement('canvas');
  c.width = w;
  c.height = h;
  const g = c.getContext('2d');
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const sky = g.createLinearGradient(0, 0, 0, h);
  sky.addColorStop(0, '#060a1c');
  sky.addColorStop(0.7, '#1b1f3c');
  sky.addColorStop(1, '#2a2238');
  g.fillStyle = sky;
  g.fillRect(0, 0, w, h);
  for (let i = 0; i < 140; i++) { // stars
    const b = 120 + rnd() * 135;
    g.fillStyle = `rgb(${b},${b},${Math.min(255, b + 20)})`;
    g.fillRect(rnd() * w, rnd() * h * 0.55, 1 + (rnd() < 0.08), 1 + (rnd() < 0.08));
  }
  g.fillStyle = '#fffdf4'; // the moon
  g.beginPath();
  g.arc(640, 90, 26, 0, 2 * Math.PI);
  g.fill();
  let x = 0;
  while (x < w) { // buildings with lit windows
    const bw = 40 + rnd() * 70, bh = 90 + rnd() * 170;
    g.fillStyle = `rgb(${14 + rnd() * 12},${14 + rnd() * 10},${22 + rnd() * 14})`;
    g.fillRect(x, h - bh, bw, bh);
    for (let wy = h - bh + 10; wy < h - 40; wy += 16)
      for (let wx = x + 6; wx < x + bw - 8; wx += 12)
        if (rnd() < 0.35) {
          g.fillStyle = rnd() < 0.8 ? '#ffe6b0' : '#dcefff';
          g.fillRect(wx, wy, 5, 7);
        }
    x += bw + 4;
  }
  g.fillStyle = '#101018'; // the street
  g.fillRect(0, h - 34, w, 34);
  for (let lx = 60; lx < w; lx += 170) { // street lamps
    g.fillStyle = '#2a2a30';
    g.fillRect(lx - 2, h - 110, 4, 80);
    g.fillStyle = '#ffffff';
    g.beginPath();
    g.arc(lx, h - 112, 5, 0, 2 * Math.PI);
    g.fill();
  }
  g.fillStyle = '#ff3030'; // tail lights
  g.fillRect(300, h - 20, 6, 4);
  g.fillRect(330, h - 20, 6, 4);
  return new Promise((resolve) => c.toBlob((b) => resolve(new File([b], 'sample-night.png', { type: 'image/png' })), 'image/png'));
}

/* ---- download and the curl line ---- */

/* The download's size: width=N (the daemon's sized output) when the Width field holds one. */
function sizeParams() {
  const w = el.dlwidth.valueAsNumber;
  return w >= 1 && w <= 16384 ? { width: Math.round(w) } : {};
}

async function download() {
  if (!state.file) return;
  const format = el.dlformat.value;
  const sized = sizeParams();
  const keep = el.keepProfile.checked; // the shown answer is sRGB: keep_profile asks again
  let blob = state.result && state.result.format === format && !sized.width && !keep ? state.result.blob : null;
  if (!blob) { // another format than the one shown: ask for it with the same settings
    const status = el.status.textContent;
    setBusy(true);
    try {
      const answer = await bloom({
        image: state.file,
        kernel: el.kernel.value === 'file' ? state.kernelFile : null,
        params: { ...currentParams(), ...sized, format, ...(keep ? { keep_profile: 1 } : {}) },
      });
      blob = answer.blob;
      clearError();
    } catch (err) {
      showError(err);
      return;
    } finally {
      setBusy(false);
      el.status.textContent = status;
    }
  }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = stem(state.file.name) + '-bloom.' + EXTENSION[format];
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

function shellQuote(s) {
  return "'" + String(s).replace(/'/g, "'\\''") + "'";
}

function updateCurl() {
  if (!state.file) return;
  const params = { ...currentParams(), ...sizeParams(), format: el.dlformat.value };
  if (el.keepProfile.checked) params.keep_profile = 1;
  const url = new URL('v1/bloom', document.baseURI).href;
  const lines = ['curl -o ' + shellQuote(stem(state.file.name) + '-bloom.' + EXTENSION[params.format])];
  if (localStorage.getItem(KEY_STORE)) lines.push('-H "Authorization: Bearer $FFTBLOOM_KEY"');
  lines.push('-F ' + shellQuote('image=@' + (state.file.name || 'image')));
  if (el.kernel.value === 'file' && state.kernelFile)
    lines.push('-F ' + shellQuote('kernel=@' + state.kernelFile.name));
  lines.push('-F ' + shellQuote('params=' + JSON.stringify(params) + ';type=application/json'));
  lines.push(shellQuote(url));
  el.curl.textContent = lines.join(' \\\n  ');
}

/* ---- the server and its API key ---- */

/* The file pickers' accept lists and the drop text, from the daemon's format table (v1/info's
 * formats): every format it reads, by media type and extension. */
function showFormats(formats) {
  const read = (formats || []).filter((f) => f.read);
  if (!read.length) return;
  const accept = read.flatMap((f) => f.media_types).concat(
    read.flatMap((f) => f.extensions.map((e) => '.' + e))).join(',');
  el.file.accept = accept;
  el.kfile.accept = accept;
  const titles = read.map((f) => f.title);
  el.dropFormats.textContent = titles.length > 1
    ? titles.slice(0, -1).join(', ') + ' or ' + titles[titles.length - 1] : titles[0];
}

/* Shows who serves the page (GET v1/info) and the formats it reads; resolves to whether the API
 * key, if any, was taken. */
async function refreshServer() {
  try {
    const info = await serverInfo();
    showFormats(info.formats);
    const gpus = (info.gpus || []).map((g) => g.renderer).filter(Boolean);
    el.server.textContent = 'fftbloomd ' + info.version + (gpus.length ? ' · ' + [...new Set(gpus)].join(', ') : '');
    el.server.classList.remove('warn');
    return true;
  } catch (err) {
    el.server.classList.add('warn');
    if (err instanceof ApiError && err.status === 401) {
      el.server.textContent = localStorage.getItem(KEY_STORE) ? 'The API key was refused' : 'This server needs an API key';
      el.keybox.open = true;
    } else {
      el.server.textContent = 'Server: ' + err.message;
    }
    return false;
  }
}

el.apikey.value = localStorage.getItem(KEY_STORE) || '';
el.keyform.addEventListener('submit', async (event) => {
  event.preventDefault();
  const key = el.apikey.value.trim();
  if (key) localStorage.setItem(KEY_STORE, key); else localStorage.removeItem(KEY_STORE);
  if (await refreshServer()) el.keybox.open = false;
  if (state.file) {
    if (FLOAT_FAMILIES.has(state.info.family) && !state.beforeFloat) loadImage(state.file);
    else render();
  }
});

/* ---- wiring ---- */

function openFile(file) {
  if (file) loadImage(file);
}

document.addEventListener('click', async (event) => {
  const action = event.target.closest('[data-action]');
  if (!action) return;
  const what = action.dataset.action;
  if (what === 'open') el.file.click();
  else if (what === 'open-kernel') el.kfile.click();
  else if (what === 'sample') openFile(await sampleImage());
});
el.file.addEventListener('change', () => {
  openFile(el.file.files[0]);
  el.file.value = ''; // choosing the same file again reloads it
});
el.kfile.addEventListener('change', () => {
  state.kernelFile = el.kfile.files[0] || null;
  el.kname.textContent = state.kernelFile ? state.kernelFile.name : 'none yet';
  el.kfile.value = '';
  scheduleRender();
});
el.kernel.addEventListener('change', () => {
  showKernelParams();
  scheduleRender();
});
el.keybox.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') {
    el.keybox.open = false;
    el.keybox.querySelector('summary').focus();
  }
});
el.dlformat.addEventListener('change', updateCurl);
el.keepProfile.addEventListener('change', updateCurl);
el.download.addEventListener('click', download);
el.dlwidth.addEventListener('input', updateCurl);
el.error.querySelector('#error-close').addEventListener('click', clearError);
$('#reset').addEventListener('click', () => {
  for (const s of [...bloomSliders, ...Object.values(kernelSliders).flat(), ...viewSliders]) s.reset();
  redrawFloat();
  scheduleRender();
});

// Drop anywhere on the page; paste from the clipboard.
let dragDepth = 0;
window.addEventListener('dragenter', (e) => { e.preventDefault(); dragDepth++; el.stage.classList.add('over'); });
window.addEventListener('dragleave', () => { if (--dragDepth <= 0) { dragDepth = 0; el.stage.classList.remove('over'); } });
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => {
  e.preventDefault();
  dragDepth = 0;
  el.stage.classList.remove('over');
  openFile(e.dataTransfer.files[0]);
});
window.addEventListener('paste', (e) => {
  const file = [...(e.clipboardData ? e.clipboardData.files : [])][0];
  if (file) openFile(file);
});

showKernelParams();
setSplit(50);
refreshServer();
