"""Cuvil for PyTorch users: compile a model into a native library and call it.

    import cuvil, torch
    m = cuvil.compile(torch.jit.load("model.pt"), example_inputs=[torch.randn(2, 8)])
    y = m(torch.randn(2, 8))            # a torch.Tensor, computed by libinference.so

    lib = cuvil.load("libinference.so")  # a library cuvil-export made
    with cuvil.disable_optimization("dead-code-elimination"):
        m = cuvil.compile("model.pt", example_inputs=[torch.randn(2, 8)])
    q = cuvil.quantize(model, calibration_samples, backend="qnnpack")

The package drives the command-line tools (cuvil-export, cuvil-quantize),
found in CUVIL_BIN_DIR, else next to this package in a build tree or an
installed prefix, else on PATH, and runs the libraries through their C API
(ctypes): torch tensors and NumPy arrays in, the same kind out.
"""
import contextlib
import ctypes
import json
import os
import platform
import shutil
import subprocess
import tempfile

import numpy as np

__all__ = ["CuvilError", "CompiledModel", "compile", "load", "quantize", "autotune",
           "disable_optimization", "enable_optimization", "disabled_optimizations"]

__version__ = "0.1.0"


class CuvilError(RuntimeError):
    """A tool or a library call failed; the message is the tool's or the library's."""


# --- The tools ---------------------------------------------------------------

def _bin_dir():
    env = os.environ.get("CUVIL_BIN_DIR")
    if env:
        return env
    try:
        from . import _config  # written by the build: where its tools are
        if os.path.isdir(_config.BIN_DIR):
            return _config.BIN_DIR
    except ImportError:
        pass
    found = shutil.which("cuvil-export")
    return os.path.dirname(found) if found else None


def _tool(name):
    d = _bin_dir()
    path = os.path.join(d, name) if d else None
    if not path or not os.access(path, os.X_OK):
        raise CuvilError(f"{name} not found: set CUVIL_BIN_DIR to the directory of Cuvil's tools "
                         "(build/bin of a build, or bin/ of an installed prefix)")
    return path


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CuvilError(f"{os.path.basename(cmd[0])} failed (exit {r.returncode}): "
                         f"{(r.stderr or r.stdout).strip()}")
    return r


# --- Optimizations switched off ----------------------------------------------

_disabled = []


class disable_optimization:
    """Switches a graph optimization off (its name as cuvil-opt
    --cuvil-print-pipeline lists it) for the compiles that follow; as a
    context manager, only inside the `with` block."""

    def __init__(self, name):
        self.name = name.replace("_", "-")
        _disabled.append(self.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        enable_optimization(self.name)
        return False


def enable_optimization(name):
    """Undoes one disable_optimization(name)."""
    name = name.replace("_", "-")
    if name in _disabled:
        _disabled.remove(name)


def disabled_optimizations():
    return list(dict.fromkeys(_disabled))


# --- Tensors and the C API ---------------------------------------------------

# cuvil_dtype (cuvil/runtime.h) <-> NumPy.
_DTYPES = {0: np.float32, 1: np.float64, 2: np.float16, 4: np.int8, 5: np.uint8, 6: np.int16,
           7: np.int32, 8: np.int64, 9: np.bool_, 10: np.complex64, 11: np.complex128}
_CODES = {np.dtype(v): k for k, v in _DTYPES.items()}
_SHORT = {np.float32: "f32", np.float64: "f64", np.float16: "f16", np.int8: "i8", np.uint8: "ui8",
          np.int16: "i16", np.int32: "i32", np.int64: "i64", np.bool_: "i1"}


class _Options(ctypes.Structure):  # cuvil_options of C API 3
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_threads", ctypes.c_int32),
                ("device", ctypes.c_int32)]


_DEVICES = {"auto": 0, "cpu": 1, "cuda": 2}


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("byte_size", ctypes.c_size_t), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64))]


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _as_array(x):
    """(a C-contiguous ndarray sharing x's memory where it can, is-torch)."""
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        t = x.detach()
        if t.device.type != "cpu":
            raise CuvilError(f"a tensor on {t.device}: the library runs on the CPU")
        return np.ascontiguousarray(t.contiguous().numpy()), True  # zero-copy when contiguous
    return np.ascontiguousarray(np.asarray(x)), False


class CompiledModel:
    """A compiled library, loaded: call it with the model's inputs."""

    def __init__(self, path, threads=0, symbol_prefix="cuvil", device="auto"):
        self.path = os.path.abspath(path)
        self._lib = ctypes.CDLL(self.path, mode=ctypes.RTLD_LOCAL)
        p = symbol_prefix

        def fn(name, restype, *argtypes):
            f = getattr(self._lib, p + "_" + name)
            f.restype, f.argtypes = restype, list(argtypes)
            return f

        try:
            self._abi = fn("abi_version", ctypes.c_uint32)
            self._last_error = fn("last_error", ctypes.c_char_p)
            init = fn("options_init", None, ctypes.POINTER(_Options))
            self._create = fn("model_create", ctypes.c_int, ctypes.POINTER(_Options),
                              ctypes.POINTER(ctypes.c_void_p))
            self._destroy = fn("model_destroy", None, ctypes.c_void_p)
            num_in = fn("model_num_inputs", ctypes.c_int32, ctypes.c_void_p)
            num_out = fn("model_num_outputs", ctypes.c_int32, ctypes.c_void_p)
            in_info = fn("model_input_info", ctypes.c_int, ctypes.c_void_p, ctypes.c_int32,
                         ctypes.POINTER(_TensorInfo))
            out_info = fn("model_output_info", ctypes.c_int, ctypes.c_void_p, ctypes.c_int32,
                          ctypes.POINTER(_TensorInfo))
            self._run = fn("model_run", ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_Tensor),
                           ctypes.c_int32, ctypes.POINTER(_Tensor), ctypes.c_int32)
        except AttributeError as e:
            raise CuvilError(f"'{path}' is not a Cuvil library with the {p}_* C API ({e})") from None
        if self._abi() != 3:
            raise CuvilError(f"'{path}' has C API version {self._abi()}; this package speaks 3")
        if device not in _DEVICES:
            raise CuvilError(f"device {device!r}: use 'auto', 'cpu' or 'cuda'")
        options = _Options()
        init(ctypes.byref(options))
        options.num_threads = threads
        options.device = _DEVICES[device]
        self._model = ctypes.c_void_p()
        if self._create(ctypes.byref(options), ctypes.byref(self._model)) != 0:
            raise CuvilError(f"'{path}': {self._last_error().decode()}")

        def infos(count, get):
            out = []
            for i in range(count(self._model)):
                info = _TensorInfo()
                if get(self._model, i, ctypes.byref(info)) != 0:
                    raise CuvilError(self._last_error().decode())
                out.append((info.name.decode(), _DTYPES.get(info.dtype),
                            tuple(info.shape[d] for d in range(info.rank))))
            return out

        self.inputs = infos(num_in, in_info)    # [(name, numpy dtype, shape)]
        self.outputs = infos(num_out, out_info)

    def __del__(self):
        model = getattr(self, "_model", None)
        if model:
            self._destroy(model)
            self._model = None
        for work in (getattr(self, "_work", None), getattr(self, "_quantize_work", None)):
            if work:  # the library stays mapped while the process uses it
                shutil.rmtree(work, ignore_errors=True)

    def __repr__(self):
        sig = lambda ts: ", ".join(f"{n}: {'x'.join(map(str, s))}x{np.dtype(d).name}" for n, d, s in ts)
        return f"<cuvil.CompiledModel {self.path} ({sig(self.inputs)}) -> ({sig(self.outputs)})>"

    def __call__(self, *inputs):
        if len(inputs) != len(self.inputs):
            raise CuvilError(f"the model takes {len(self.inputs)} input(s), got {len(inputs)}")
        arrays, any_torch = [], False
        for (name, dtype, shape), x in zip(self.inputs, inputs):
            a, is_torch = _as_array(x)
            any_torch |= is_torch
            if dtype is not None and a.dtype != dtype:
                raise CuvilError(f"input '{name}': dtype {a.dtype}, the model takes {np.dtype(dtype).name}")
            if len(shape) != a.ndim or any(s >= 0 and s != d for s, d in zip(shape, a.shape)):
                raise CuvilError(f"input '{name}': shape {tuple(a.shape)}, the model takes {shape}")
            arrays.append(a)
        keep = []

        def tensor(a, shape):
            dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
            keep.append(dims)
            return _Tensor(a.ctypes.data, a.nbytes, _CODES[a.dtype], len(shape), dims)

        ins = (_Tensor * max(1, len(arrays)))(*[tensor(a, a.shape) for a in arrays])
        outs_arrays = []
        for name, dtype, shape in self.outputs:
            if any(s < 0 for s in shape):
                raise CuvilError(f"output '{name}' has a dynamic shape {shape}: not supported here yet")
            outs_arrays.append(np.empty(shape, dtype=dtype))
        outs = (_Tensor * max(1, len(outs_arrays)))(*[tensor(a, a.shape) for a in outs_arrays])
        status = self._run(self._model, ins, len(arrays), outs, len(outs_arrays))
        if status != 0:
            raise CuvilError(self._last_error().decode())
        torch = _torch() if any_torch else None
        results = [torch.from_numpy(a) if torch is not None else a for a in outs_arrays]
        return results[0] if len(results) == 1 else tuple(results)


def load(path, threads=0, symbol_prefix="cuvil", device="auto"):
    """A library made by cuvil-export, ready to call (threads 0: all cores; device: where a
    library with GPU code runs, 'auto', 'cpu' or 'cuda')."""
    if not os.path.exists(path):
        raise CuvilError(f"cannot open '{path}': no such file")
    return CompiledModel(path, threads=threads, symbol_prefix=symbol_prefix, device=device)


# --- Compiling ---------------------------------------------------------------

def _shape_spec(i, x):
    a, _ = _as_array(x)
    short = _SHORT.get(a.dtype.type)
    if short is None:
        raise CuvilError(f"example input {i}: dtype {a.dtype} has no Cuvil input type")
    return f"{i}={'x'.join(str(d) for d in a.shape)}{'x' if a.ndim else ''}{short}"


def _model_file(model, example_inputs, work):
    """A path cuvil-export reads: the model's own, or a TorchScript archive
    saved from a module (scripted, else traced with the example inputs)."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    torch = _torch()
    if torch is None:
        raise CuvilError("compiling a module needs PyTorch; pass a .pt path otherwise")
    if not isinstance(model, torch.jit.ScriptModule):
        if not isinstance(model, torch.nn.Module):
            raise CuvilError(f"cannot compile a {type(model).__name__}: pass a torch.nn.Module, "
                             "a torch.jit.ScriptModule or a path")
        try:
            model = torch.jit.script(model.eval())
        except Exception:
            if not example_inputs:
                raise CuvilError("the module does not script; give example_inputs to trace it")
            model = torch.jit.trace(model.eval(), tuple(example_inputs))
    path = os.path.join(work, "model.pt")
    torch.jit.save(model, path)
    return path


def compile(model, example_inputs=None, strategy="graph_fusion", target=None, cpu=None,
            disable=(), output=None, threads=0, options=(), plugins=()):
    """Compiles `model` (a torch.nn.Module, a ScriptModule, or a .pt/.mlir/.mlirbc
    path) with cuvil-export and loads the library. `example_inputs` give the
    input shapes and dtypes; `disable` names graph optimizations to switch
    off (with those of disable_optimization); `plugins` are pass plugins
    (shared libraries built with cuvil/Plugin.h) whose passes join the graph
    pipeline; `output` keeps the library there (else a temporary directory
    that lives with the model)."""
    host = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine())
    target = target or host or "x86_64"
    work = tempfile.mkdtemp(prefix="cuvil-")
    try:
        return _compile_in(work, model, example_inputs, strategy, target, host, cpu, disable, output,
                           threads, list(options) + [a for p in plugins
                                                     for a in ("--load-pass-plugin", os.path.abspath(p))])
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)  # nothing left behind by a failed compile
        raise


def _compile_in(work, model, example_inputs, strategy, target, host, cpu, disable, output, threads,
                options):
    path = _model_file(model, example_inputs, work)
    lib = os.path.abspath(output) if output else os.path.join(work, "libinference.so")
    cmd = [_tool("cuvil-export"), "--model", path, "--target", target, "-o", lib, "--strategy", strategy]
    for i, x in enumerate(example_inputs or []):
        cmd += ["--input-shape", _shape_spec(i, x)]
    if cpu:
        cmd += ["--cpu", cpu]
    names = list(dict.fromkeys(list(disable) + disabled_optimizations()))
    if names:
        cmd += ["--disable-optimization"] + [n.replace("_", "-") for n in names]
    cmd += list(options)
    _run(cmd)
    if target != host:
        kept = f" into '{lib}'" if output else " (pass output= to keep the library)"
        raise CuvilError(f"compiled for {target}{kept}; this {host} machine cannot load it")
    m = load(lib, threads=threads)
    m.command = cmd
    m._work = work  # removed with the model
    return m


def quantize(model, calibration_data, example_inputs=None, backend="x86", method="percentile",
             max_l2=0.01, validation_data=None, fallback="fp16", report=None, threads=0, options=()):
    """Post-training INT8 with cuvil-quantize: calibrates on `calibration_data`
    (an iterable of samples: a tensor/array, or a tuple of them, per sample),
    gates the accuracy (relative L2 <= max_l2 on `validation_data`, default
    the calibration samples) with per-layer fallback, and compiles the
    quantized model. The result is a CompiledModel with `.report` (the
    tool's JSON report) and `.quantized_ir` (the .mlirbc)."""
    work = tempfile.mkdtemp(prefix="cuvil-quantize-")
    try:
        return _quantize_in(work, model, calibration_data, example_inputs, backend, method, max_l2,
                            validation_data, fallback, report, threads, options)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _quantize_in(work, model, calibration_data, example_inputs, backend, method, max_l2,
                 validation_data, fallback, report, threads, options):
    path = _model_file(model, example_inputs, work)

    def write_samples(samples, name):
        d = os.path.join(work, name)
        os.makedirs(d)
        count = 0
        for i, s in enumerate(samples):
            arrays = s if isinstance(s, (tuple, list)) else (s,)
            np.savez(os.path.join(d, f"{i:05d}.npz"),
                     **{f"input{k}": _as_array(a)[0] for k, a in enumerate(arrays)})
            count += 1
        if not count:
            raise CuvilError(f"no {name} samples")
        return d

    cal = write_samples(calibration_data, "calibration")
    out = os.path.join(work, "quantized.mlirbc")
    rep = report or os.path.join(work, "report.json")
    cmd = [_tool("cuvil-quantize"), "--no-progress", "--model", path, "--calibration-data", cal,
           "--output", out, "--report", rep, "--backend", backend, "--method", method,
           "--max-l2", str(max_l2), "--fallback", fallback, "--threads", str(threads)]
    if validation_data is not None:
        cmd += ["--validation-data", write_samples(validation_data, "validation")]
    cmd += list(options)
    _run(cmd)
    m = compile(out, threads=threads)
    with open(rep) as f:
        m.report = json.load(f)
    m.quantized_ir = out
    m._quantize_work = work
    return m


def autotune(model, device=None, **kwargs):
    """cuvil-autotune: not available yet (its issue is open); this says so."""
    raise CuvilError("cuvil.autotune needs the cuvil-autotune tool, which this Cuvil does not have "
                     "yet; compile with cuvil.compile (the built-in kernel heuristics) meanwhile")
