"""Ahead-of-time objects, linked by gcc into C programs and run, against the
interpreter: the seeds' MNIST model (inference with baked-in weights, and its
training step from XLA's own HLO text), an MLP, a set of ops, the C++ class,
and AArch64 objects run under qemu."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy.aot import compile_aot, trace, write_test
from xlapy.aot.trace import bind_constants, parse_shape
from xlapy.cli import main
from xlapy.errors import CompileError
from xlapy.hlo import parse

REPO = Path(__file__).resolve().parents[2]
MNIST_TRAIN_STEP = REPO / "benchmarks" / "data" / "mnist_train_step.hlo"
CC = shutil.which("gcc") or shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler to link the object")
CROSS_CC = shutil.which("aarch64-linux-gnu-gcc")
QEMU = shutil.which("qemu-aarch64")


def mnist_weights(seed=0):
    rng = np.random.default_rng(seed)
    return {"w": (rng.standard_normal((784, 10)) * 0.05).astype(np.float32),
            "b": (rng.standard_normal(10) * 0.1).astype(np.float32)}


def predict(w, b, x):
    return xlapy.nn.softmax(x @ w + b, axis=-1)


def mlp_predict(w1, b1, w2, b2, x):
    return xlapy.nn.softmax(xnp.maximum(x @ w1 + b1, 0.0) @ w2 + b2, axis=-1)


def build_and_check(result, module, tmp_path, cc=CC, run=(), extra=()):
    """Write the object and its test program, link, run; returns stdout."""
    result.write(tmp_path)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(a.dims).astype(a.numpy_dtype) if a.numpy_dtype.kind == "f"
              else rng.integers(0, 5, a.dims).astype(a.numpy_dtype)
              for a in result.signature.arguments]
    expected = xlapy.execute(module, inputs, backend="interpreter")
    write_test(result.signature, inputs, expected, tmp_path)
    name = result.signature.name
    exe = tmp_path / f"{name}_test"
    subprocess.run([cc, "-O2", "-o", str(exe), f"{name}_test.c", f"{name}.o", "-lm", *extra],
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    done = subprocess.run([*run, str(exe), f"{name}_test.bin", "3"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@needs_cc
def test_mnist_inference_with_baked_weights(tmp_path):
    module = trace(predict, ["f32[8,784]"], mnist_weights())
    result = compile_aot(module, "mnist")
    assert [a.describe() for a in result.signature.arguments] == ["f32[8,784]"]
    out = build_and_check(result, module, tmp_path)
    assert "0 outside tolerance" in out and "us per run" in out


@needs_cc
def test_mnist_training_step_from_xla_text(tmp_path):
    module = parse(MNIST_TRAIN_STEP.read_text())
    result = compile_aot(module, "mnist_train")
    assert len(result.signature.results) >= 2
    out = build_and_check(result, module, tmp_path)
    assert out.count("0 outside tolerance") == len(result.signature.results)


@needs_cc
def test_mlp_inference(tmp_path):
    rng = np.random.default_rng(2)
    weights = {"w1": (rng.standard_normal((784, 128)) * 0.05).astype(np.float32),
               "b1": np.zeros(128, np.float32),
               "w2": (rng.standard_normal((128, 10)) * 0.1).astype(np.float32),
               "b2": np.zeros(10, np.float32)}
    module = trace(mlp_predict, ["f32[4,784]"], weights)
    result = compile_aot(module, "mlp")
    assert len(result.object_code) > sum(w.nbytes for w in weights.values())   # baked in
    build_and_check(result, module, tmp_path)


OPS = {
    "elementwise": (lambda x: xnp.tanh(x) * xnp.exp(-x * x) + 1.0, ["f32[33,17]"]),
    "reductions": (lambda x: (xnp.sum(x, axis=0), xnp.max(x, axis=1)), ["f32[40,70]"]),
    "f64_dot": (lambda a, b: a @ b, ["f64[20,30]", "f64[30,9]"]),
    "int_ops": (lambda a, b: (a * b + 3) // 2 - (a > b), ["s32[50]", "s32[50]"]),
    "loop": (lambda x: xlapy.lax.fori_loop(0, 7, lambda i, v: v * 0.5 + xnp.sin(v), x),
             ["f32[64]"]),
    "sort_gather": (lambda x, i: (xnp.sort(x), x[i]), ["f32[100]", "s32[12]"]),
    "conv": (lambda x, k: xlapy.lax.conv_general_dilated(
        x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        ["f32[2,9,9,3]", "f32[3,3,3,4]"]),
}


@needs_cc
@pytest.mark.parametrize("op", sorted(OPS))
def test_ops_match_the_interpreter(op, tmp_path):
    fn, shapes = OPS[op]
    module = trace(fn, shapes)
    build_and_check(compile_aot(module, f"op_{op}"), module, tmp_path)


@needs_cc
def test_object_needs_only_libc_and_libm(tmp_path):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm to list the object's symbols")
    module = parse(MNIST_TRAIN_STEP.read_text())
    obj, _ = compile_aot(module, "step").write(tmp_path)
    symbols = subprocess.run([nm, "-g", str(obj)], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    defined = [s.split()[-1] for s in symbols if s.strip() and s.split()[-2] in "TDRB"]
    undefined = {s.split()[-1] for s in symbols if s.strip() and s.split()[0] == "U"}
    assert defined == ["step_run"]
    libc_libm = {"malloc", "free", "memcpy", "memset", "memmove", "expf", "exp", "logf", "log",
                 "rintf", "rint", "tanhf", "tanh", "powf", "pow", "fmodf", "fmod"}
    assert undefined <= libc_libm, undefined - libc_libm


@needs_cc
def test_cpp_class_wrapper(tmp_path):
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    module = trace(predict, ["f32[1,784]"], mnist_weights())
    compile_aot(module, "digits").write(tmp_path)
    (tmp_path / "main.cc").write_text("""
#include "digits.h"
#include <cstdio>
int main() {
  xlapy::digits model;
  for (size_t i = 0; i < model.arg0_count(); ++i) model.arg0_data()[i] = (i % 7) * 0.1f;
  if (!model.Run()) { std::puts(model.error_msg()); return 1; }
  for (size_t i = 0; i < model.result0_count(); ++i) std::printf("%.9g\\n", model.result0_data()[i]);
  return 0;
}
""")
    subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-o", "main", "main.cc", "digits.o"],
                   cwd=tmp_path, check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, check=True)
    got = np.array([float(v) for v in out.stdout.split()], np.float32)
    x = ((np.arange(784) % 7) * 0.1).astype(np.float32)[None]
    want = xlapy.execute(module, [x], backend="interpreter")[0][0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_header_is_plain_c(tmp_path):
    if CC is None:
        pytest.skip("no C compiler")
    module = trace(predict, ["f32[1,784]"], mnist_weights())
    _, header = compile_aot(module, "plain").write(tmp_path)
    text = header.read_text()
    for needle in ("PLAIN_NUM_ARGS 1", "PLAIN_TEMP_SIZE", "PLAIN_ARG0_DIMS {1, 784}",
                   "int plain_run(const void* const* args, void* const* results, void* temp);",
                   "#ifdef __cplusplus", "result0_data()", "Run()"):
        assert needle in text
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
                    "-x", "c", str(header)], check=True, capture_output=True)


# -- AArch64 ------------------------------------------------------------------------------
@pytest.mark.skipif(CROSS_CC is None or QEMU is None,
                    reason="the AArch64 test needs Debian's gcc-aarch64-linux-gnu and qemu-user "
                           "(.ci/run installs them where apt-get may run)")
@pytest.mark.parametrize("which", ["inference", "training"])
def test_aarch64_object_runs_under_qemu(which, tmp_path):
    if which == "inference":
        module = trace(predict, ["f32[2,784]"], mnist_weights())
    else:
        module = parse(MNIST_TRAIN_STEP.read_text())
    result = compile_aot(module, f"arm_{which}", target="aarch64-linux-gnu")
    assert result.object_code[:4] == b"\x7fELF" and result.object_code[18] == 183  # EM_AARCH64
    out = build_and_check(result, module, tmp_path, cc=CROSS_CC, run=(QEMU,),
                          extra=("-static",))
    assert "outside tolerance" in out


# -- the command line and errors ------------------------------------------------------------
@needs_cc
def test_command_line_with_constants_and_emit_test(tmp_path, capsys, monkeypatch):
    (tmp_path / "model.py").write_text(
        "import xlapy\n\ndef predict(w, b, x):\n"
        "    return xlapy.nn.softmax(x @ w + b, axis=-1)\n")
    np.savez(tmp_path / "params.npz", **mnist_weights())
    monkeypatch.chdir(tmp_path)
    assert main(["aot", "model:predict", "--arg", "f32[1,784]", "--name", "digits",
                 "--constants-from", "params.npz", "--out", "build", "--emit-test"]) == 0
    assert "digits_run(f32[1,784]) -> f32[1,10]" in capsys.readouterr().out
    make = shutil.which("make")
    if make:
        done = subprocess.run([make, "-s", "-f", "digits_test.mk", "check"], cwd=tmp_path / "build",
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_command_line_hlo_with_bound_parameter(tmp_path, capsys):
    np.savez(tmp_path / "w.npz", arg0=np.ones((784, 10), np.float32))
    assert main(["aot", str(MNIST_TRAIN_STEP), "--name", "bound", "--out", str(tmp_path),
                 "--constants-from", str(tmp_path / "w.npz")]) == 0
    out = capsys.readouterr().out
    assert "bound_run(" in out and (tmp_path / "bound.o").exists()


@pytest.mark.parametrize("argv, message", [
    (["--name", "1bad"], "not a C identifier"),
    (["--name", "ok", "--arg", "f32[3]"], "--arg is for Python functions"),
])
def test_command_line_errors(argv, message, capsys):
    assert main(["aot", str(MNIST_TRAIN_STEP), *argv]) == 2
    assert message in capsys.readouterr().err


def test_refusals():
    fft = parse("HloModule m\nENTRY e {\n  x = c64[8] parameter(0)\n"
                "  ROOT f = c64[8] fft(x), fft_type=FFT, fft_length={8}\n}\n")
    with pytest.raises(CompileError, match="c64"):
        compile_aot(fft, "f")
    with pytest.raises(CompileError, match="unknown target"):
        compile_aot(trace(lambda x: x + 1, ["f32[2]"]), "t", target="riscv64")
    with pytest.raises(CompileError, match="has no parameter"):
        trace(predict, ["f32[1,784]"], {"nope": np.zeros(3)})
    with pytest.raises(CompileError, match="takes 1 argument"):
        trace(predict, ["f32[1,784]", "f32[2]"], mnist_weights())
    module = parse(MNIST_TRAIN_STEP.read_text())
    with pytest.raises(CompileError, match="but parameter"):
        bind_constants(module, {"arg0": np.zeros((3, 3), np.float32)})
    with pytest.raises(ValueError, match="not a shape"):
        parse_shape("f32(3)")
    assert parse_shape("s32[]") == (np.dtype(np.int32), ())
    assert parse_shape("bf16[2, 3]")[1] == (2, 3)
