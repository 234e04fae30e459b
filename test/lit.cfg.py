# Cuvil lit configuration. Configure-time facts come from lit.site.cfg.py.
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "CUVIL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "verify", "unit", "plugins", "reference", "import", "fuzz", "coverage", "quantize-tool", "sdk", "python", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cuvil_obj_root, "test")

# As upstream MLIR: captures die at each CHECK-LABEL; unused prefixes are errors.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.cuvil_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["cuvil-opt", "cuvil-run", "cuvil-import", "cuvil-export", "cuvil-cache", "cuvil-autotune", "cuvil-verify"]
# CIRCT's trick: CUVIL_OPT_VERIFY_ROUNDTRIP=1 turns every test into a
# printer/parser test.
if os.environ.get("CUVIL_OPT_VERIFY_ROUNDTRIP"):
    tools[0] = ToolSubst("cuvil-opt", "cuvil-opt --verify-roundtrip", unresolved="fatal")
llvm_config.add_tool_substitutions(tools, [config.cuvil_tools_dir, config.llvm_tools_dir])

# Python with numpy (and torch) for tests that make .npy inputs.
config.substitutions.append(("%torch_python", config.torch_python))
config.substitutions.append(("%cuvil_src_root", config.cuvil_src_root))
# The pass plugins test/plugins builds (the example and the broken ones).
config.substitutions.append(("%plugins", os.path.join(config.cuvil_obj_root, "lib", "test-plugins")))
def _has_module(module):
    try:
        return subprocess.run([config.torch_python, "-c", "import " + module],
                              capture_output=True).returncode == 0
    except OSError:
        return False
if _has_module("numpy"):
    config.available_features.add("numpy")
if _has_module("torch"):
    config.available_features.add("torch")

# The CUDA toolkit's ptxas checks and assembles the CUDA target's kernels.
import shutil as _shutil
if _shutil.which("ptxas") or os.access(os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "ptxas"), os.X_OK) \
        or os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
    config.available_features.add("ptxas")

# aarch64 libraries run under qemu with the aarch64 build of cuvil-run.
import shutil
_aarch64_run = os.path.join(config.cuvil_tools_dir, "aarch64", "cuvil-run")
if shutil.which("qemu-aarch64") and os.path.exists(_aarch64_run):
    config.available_features.add("qemu-aarch64")
    config.substitutions.append(
        ("%cuvil_run_aarch64", "qemu-aarch64 -L /usr/aarch64-linux-gnu " + _aarch64_run))
