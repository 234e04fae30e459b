#!/bin/sh
# The SDK as a user gets it: `cmake --install` of this build into a fresh
# prefix, then the example application (examples/app) built against it with
# find_package(Cuvil) and cuvil_add_model, and a C program built with
# pkg-config against a library the installed cuvil-export makes; both print
# what the installed cuvil-run computes for the same input. Then the example
# pass plugin built out of tree against the prefix and loaded into its tools.
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR PYTHON
set -eu
build=$1 src=$2 work=$3 python=$4
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/cuvil-export libexec/cuvil-export-compiler bin/cuvil-run bin/cuvil-import bin/cuvil-opt bin/cuvil-quantize \
         include/cuvil/runtime.h lib/libcuvil_runtime.a lib/cmake/Cuvil/CuvilConfig.cmake; do
  test -e "$prefix/$f" || { echo "FAIL: $f not installed"; exit 1; }
done
pc=$(find "$prefix" -name cuvil.pc | head -1)
test -n "$pc" || { echo "FAIL: cuvil.pc not installed"; exit 1; }
echo "ok   installed: tools, runtime archive, header, CuvilConfig.cmake, $(basename "$pc")"

# The reference: the installed cuvil-export and cuvil-run on a 2x8 input of ones.
"$python" -c "import numpy as np; np.save('$work/ones.npy', np.ones((2, 8), np.float32))"
"$prefix/bin/cuvil-export" --model "$src/examples/mlp/model.pt" --input-shape 0=2x8xf32 --target x86_64 \
  -o "$work/libref.so"
"$prefix/bin/cuvil-run" "$work/libref.so" -i "$work/ones.npy" -o "$work/ref" --quiet

compare() { # compare OUTPUT_TEXT LABEL: the printed values against ref/output0.npy
  "$python" - "$1" "$work/ref/output0.npy" "$2" <<'PY'
import sys, numpy as np
lines = open(sys.argv[1]).read().split()
want = np.load(sys.argv[2]).ravel()
got = np.array([float(v) for v in lines[2:]], np.float32)
ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-7)
print(("ok   " if ok else "FAIL ") + sys.argv[3] + f": {lines[0]} {lines[1]}, {got.tolist()}")
sys.exit(0 if ok else 1)
PY
}

# find_package(Cuvil): the example application.
# clang++-19: what setup.sh installs (a fresh machine may have no g++).
cmake -S "$src/examples/app" -B "$work/app" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER=clang++-19 > "$work/app-configure.log"
cmake --build "$work/app" > "$work/app-build.log"
"$work/app/mlp-app" > "$work/app.out"
compare "$work/app.out" "find_package(Cuvil) + cuvil_add_model: examples/app runs the model"
# Rebuilt only when the model changes: a second build does nothing.
cmake --build "$work/app" | grep -q "no work to do" && echo "ok   a second build has no work to do"

# pkg-config: a C program against a library the installed cuvil-export makes.
export PKG_CONFIG_PATH=$(dirname "$pc")
exporter=$(pkg-config --variable=cuvil_export cuvil)
mkdir -p "$work/pc"
"$exporter" --model "$src/examples/mlp/model.pt" --input-shape 0=2x8xf32 --target x86_64 \
  -o "$work/pc/libmlp.so" --symbol-prefix mlp --emit-header "$work/pc/mlp.h"
clang++-19 -o "$work/pc/app" "$src/examples/app/main.cpp" $(pkg-config --cflags cuvil) -I"$work/pc" \
  -L"$work/pc" -lmlp
LD_LIBRARY_PATH="$work/pc" "$work/pc/app" > "$work/pc.out"
compare "$work/pc.out" "pkg-config: the same application against the installed header"
# The Python package, installed next to the tools: it finds them there.
pydir=$prefix/lib/python3/dist-packages
got=$(PYTHONPATH=$pydir "$python" -c "import cuvil; print(cuvil._bin_dir())")
test "$got" = "$prefix/bin" && echo "ok   import cuvil from the prefix finds its tools ($got)" \
  || { echo "FAIL: the installed cuvil package looks for its tools in '$got'"; exit 1; }
# ... and pip installs it from the source tree without the network.
cp -r "$src/python" "$work/pysrc" # setuptools writes its build files next to the sources
"$python" -m pip install --quiet --no-index --no-deps --no-build-isolation --target "$work/pip" "$work/pysrc" \
  > "$work/pip.log" 2>&1 || { cat "$work/pip.log"; echo "FAIL: pip install of python/"; exit 1; }
PYTHONPATH=$work/pip CUVIL_BIN_DIR=$prefix/bin "$python" -c "import cuvil, numpy as np; \
m = cuvil.load('$work/libref.so'); y = m(np.ones((2, 8), np.float32)); \
assert np.allclose(y, np.load('$work/ref/output0.npy')), y" && echo "ok   pip install ./python, then import cuvil runs a library"

# A pass plugin built out of tree against the installed SDK
# (examples/pass-plugin: cuvil/Plugin.h, the cuvil dialect's headers,
# cuvil_add_pass_plugin), loaded into the installed cuvil-opt and cuvil-export.
cmake -S "$src/examples/pass-plugin" -B "$work/plugin" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER=clang++-19 > "$work/plugin-configure.log"
cmake --build "$work/plugin" > "$work/plugin-build.log" || { cat "$work/plugin-build.log"; echo "FAIL: the example plugin does not build"; exit 1; }
lib=$work/plugin/libCuvilExamplePlugin.so
inputs=$src/test/PassPlugins/Inputs
"$prefix/bin/cuvil-opt" --load-pass-plugin "$lib" --cuvil-print-pipeline "$inputs/divide.mlir" -o /dev/null \
  2> "$work/pipeline.txt"
# Its place: after recognize-composites (20), before dead-code-elimination (90) of graph-optimization.
grep -A1 "recognize-composites" "$work/pipeline.txt" | grep -q "reciprocal-division *priority 85 .*\[plugin libCuvilExamplePlugin.so\]" \
  && grep -A1 "reciprocal-division" "$work/pipeline.txt" | grep -q "dead-code-elimination *priority 90" \
  && echo "ok   the out-of-tree plugin's pass in the printed pipeline at priority 85 of graph-optimization" \
  || { cat "$work/pipeline.txt"; echo "FAIL: the plugin's pass is not where its priority puts it"; exit 1; }
"$prefix/bin/cuvil-opt" --load-pass-plugin "$lib" "$inputs/divide.mlir" --cuvil-graph-optimize \
  > "$work/static.mlir" 2> "$work/static.err"
grep -q "cuvil.math.mul" "$work/static.mlir" && ! grep -q "cuvil.math.div" "$work/static.mlir" \
  && grep -q "plugin pass 'mark-dynamic-shapes' (libCuvilExamplePlugin.so) skipped on @forward: its constraint 'has dynamic shapes' does not hold" "$work/static.err" \
  && echo "ok   cuvil-opt: the division rewritten; the dynamic-shape pass skipped on a static model, with the remark" \
  || { cat "$work/static.mlir" "$work/static.err"; echo "FAIL: the plugin on a static model"; exit 1; }
"$prefix/bin/cuvil-opt" --load-pass-plugin "$lib" "$inputs/dynamic.mlir" --cuvil-graph-optimize \
  > "$work/dynamic.mlir" 2> "$work/dynamic.err"
grep -q "example.dynamic" "$work/dynamic.mlir" && ! grep -q "mark-dynamic-shapes" "$work/dynamic.err" \
  && echo "ok   cuvil-opt: the dynamic-shape pass applied to a model with run-time sizes" \
  || { cat "$work/dynamic.mlir" "$work/dynamic.err"; echo "FAIL: the plugin on a dynamic model"; exit 1; }
"$prefix/bin/cuvil-export" --load-pass-plugin "$lib" --model "$inputs/divide.mlir" --target x86_64 \
  -o - --emit mlir 2>/dev/null | grep -q "cuvil.math.mul" || { echo "FAIL: cuvil-export without the plugin's pass"; exit 1; }
"$prefix/bin/cuvil-export" --load-pass-plugin "$lib" --model "$inputs/divide.mlir" --target x86_64 \
  -o "$work/libplugin.so" 2>/dev/null
"$prefix/bin/cuvil-run" "$inputs/divide.mlir" --input 0=2x8xf32:random --seed 5 -o "$work/plugin-want" --quiet
"$prefix/bin/cuvil-run" "$work/libplugin.so" --input 0=2x8xf32:random --seed 5 \
  --expected-output "$work/plugin-want/output0.npy" --rtol 1e-6 --atol 0 --quiet \
  && echo "ok   cuvil-export with the plugin: the library computes what the model does"
echo "all passed"
