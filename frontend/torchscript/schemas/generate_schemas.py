#!/usr/bin/env python3
"""Writes schemas.txt: the TorchScript operator schemas Cuvil's importer
matches calls against (names, overloads, argument order, types, defaults).

Run with Debian's interpreter, which has torch:
    /usr/bin/python3 frontend/torchscript/schemas/generate_schemas.py

Format, one schema per line (the importer parses it; see Schema.cpp):
    ns::name|overload|arg;arg;...|return;return
    arg    = [*]name:type[=default]        (* marks keyword-only)
    type   = Tensor | Tensor? | Tensor[] | int | int? | int[] | int[N] | ...
    default: None True False 12 1.5e-05 'str' [1, 2]
Out-variants, backward ops and Dimname overloads are left out: TorchScript
inference code never calls them.
"""
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def type_code(arg):
    t = arg.type
    s = str(t)
    n = getattr(arg, "N", None)
    opt = False
    m = re.fullmatch(r"Optional\[(.*)\]", s)
    if m:
        opt, s = True, m.group(1)
    lst = False
    m = re.fullmatch(r"List\[(.*)\]", s)
    if m:
        lst, s = True, m.group(1)
    inner_opt = False
    m = re.fullmatch(r"Optional\[(.*)\]", s)
    if m:
        inner_opt, s = True, m.group(1)
    names = {"Tensor": "Tensor", "int": "int", "float": "float", "bool": "bool",
             "str": "str", "number": "Scalar", "Scalar": "Scalar", "t": "t",
             "t1": "t", "t2": "t", "Any": "Any", "Device": "Device",
             "ScalarType": "ScalarType", "Layout": "Layout", "MemoryFormat": "MemoryFormat",
             "Generator": "Generator", "complex": "complex", "Storage": "Storage",
             "Stream": "Stream", "QScheme": "QScheme", "SymInt": "int"}
    base = names.get(s)
    # Packed quantized weights (quantized::conv2d's, linear's): objects the
    # importer makes itself from their pickled state.
    if s.startswith("__torch__.torch.classes.quantized."):
        base = "Any"
    if base is None and s.startswith("Dict["):
        base = "Dict"
    if base is None and s.startswith("Tuple["):
        base = "Tuple"
    if base is None:
        base = "Other"
    code = base + ("?" if inner_opt else "")
    if lst:
        code += f"[{n}]" if n else "[]"
    if opt:
        code += "?"
    return code


def default_code(v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        # Escape everything the line format or the quotes could confuse.
        out = ""
        for ch in v:
            if ch.isalnum() or ch in " _-.,:/+*":
                out += ch
            else:
                out += "\\x%02x" % ord(ch)
        return "'" + out + "'"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(default_code(x) for x in v) + "]"
    if isinstance(v, torch.dtype):
        return "None"
    return "None"


# The quantized:: operators that models PyTorch quantized call (eager and
# FX-mode static quantization, dynamic quantization of linear and
# recurrent layers).
QUANTIZED = {
    "add", "add_relu", "add_scalar", "batch_norm2d", "cat", "cat_relu", "conv2d",
    "conv2d_prepack", "conv2d_relu", "conv2d_unpack", "conv_transpose2d",
    "conv_transpose2d_prepack", "conv_transpose2d_unpack", "embedding_bag_byte_rowwise_offsets",
    "hardswish", "leaky_relu", "linear", "linear_dynamic", "linear_prepack",
    "linear_relu", "linear_relu_dynamic", "linear_unpack", "make_quantized_cell_params_dynamic",
    "mul", "mul_relu", "mul_scalar", "quantized_gru_cell_dynamic", "quantized_lstm_cell_dynamic",
    "quantized_rnn_relu_cell_dynamic", "quantized_rnn_tanh_cell_dynamic", "relu6", "sigmoid",
}


def keep(schema):
    name = schema.name
    quantized = name.startswith("quantized::") and name.split("::")[1] in QUANTIZED
    if not (name.startswith("aten::") or name.startswith("prim::") or quantized):
        return False
    if "backward" in name or "out" in schema.overload_name.split("_") or "::_test" in name:
        return False
    if schema.overload_name.endswith("out") or "Dimname" in str(schema):
        return False
    if any(a.is_out for a in schema.arguments):
        return False
    return True


def main():
    lines = []
    for s in torch._C._jit_get_all_schemas():
        if not keep(s):
            continue
        args = []
        for a in s.arguments:
            text = ("*" if a.kwarg_only else "") + a.name + ":" + type_code(a)
            if a.has_default_value():
                text += "=" + default_code(a.default_value)
            args.append(text)
        # The bindings do not expose vararg flags; the printed schema does.
        printed = str(s)
        if re.search(r"(\(|, )\.\.\.\)", printed.split(" -> ")[0]):
            args.append("...")
        rets = [type_code(r) for r in s.returns]
        if printed.endswith("-> ...") or printed.endswith(", ...)"):
            rets.append("...")
        line = "|".join([s.name, s.overload_name, ";".join(args), ";".join(rets)])
        assert "\n" not in line
        lines.append(line)
    lines.sort()
    out = os.path.join(HERE, "schemas.txt")
    with open(out, "w") as f:
        f.write(f"# Generated by generate_schemas.py from PyTorch {torch.__version__}; do not edit.\n")
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} schemas to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
