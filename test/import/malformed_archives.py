#!/usr/bin/env python3
"""cuvil-import on malformed archives (RELIABILITY.md §2 A: zip container,
B: pickle and TorchScript semantics).

Every case is made from a real TorchScript archive by one mutation. For each,
cuvil-import must exit with status 1 (2 for usage errors) — never a signal,
never a hang — print the expected error code, and leave no output file.

    /usr/bin/python3 malformed_archives.py --import BUILD/bin/cuvil-import --work DIR
"""
import argparse
import io
import os
import struct
import subprocess
import sys
import zipfile

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"SKIPPED: PyTorch not importable ({e})")
    sys.exit(77)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Wide(Tiny):
    """A weight of 3 MB: its record's CRC is checked in parts, on threads."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 250000)


def wide_cases():
    torch.manual_seed(0)
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(Wide().eval()), buf)
    wide = buf.getvalue()
    yield "A11 3 MB weight (control: its CRC checked in parts)", wide, None
    for fraction in (0.1, 0.6, 0.999):
        yield (f"A11 3 MB weight corrupted {int(fraction * 100)}% in (CRC in parts)",
               flip_in_entry(wide, "data/0", fraction), "CUVIL-E-ZIP-CRC")


def base_archive():
    torch.manual_seed(0)
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(Tiny().eval()), buf)
    return buf.getvalue()


def entries(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return [(i, z.read(i.filename)) for i in z.infolist()]


def rebuild(data, replace=None, drop=(), add=(), rename=None):
    """A new archive with entries replaced, dropped, renamed or added."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info, content in entries(data):
            name = info.filename
            if any(name.endswith(d) for d in drop):
                continue
            if replace:
                for suffix, new in replace.items():
                    if name.endswith(suffix):
                        content = new
            if rename and name.endswith(rename[0]):
                name = name[: -len(rename[0])] + rename[1]
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = info.compress_type
            z.writestr(zi, content)
        for name, content, ctype in add:
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = ctype
            z.writestr(zi, content)
    return out.getvalue()


def prefix(data):
    return zipfile.ZipFile(io.BytesIO(data)).namelist()[0].split("/")[0] + "/"


def patch_central(data, name_suffix, offset, fmt, value):
    """Overwrites a field of the central-directory record of one entry."""
    b = bytearray(data)
    pos = 0
    while True:
        pos = b.find(b"PK\x01\x02", pos)
        if pos < 0:
            raise RuntimeError("entry not found")
        nlen = struct.unpack_from("<H", b, pos + 28)[0]
        name = bytes(b[pos + 46: pos + 46 + nlen]).decode()
        if name.endswith(name_suffix):
            struct.pack_into(fmt, b, pos + offset, value)
            return bytes(b)
        pos += 4


def patch_local(data, name_suffix, offset, fmt, value):
    b = bytearray(data)
    pos = 0
    while True:
        pos = b.find(b"PK\x03\x04", pos)
        if pos < 0:
            raise RuntimeError("entry not found")
        nlen = struct.unpack_from("<H", b, pos + 26)[0]
        name = bytes(b[pos + 30: pos + 30 + nlen]).decode()
        if name.endswith(name_suffix):
            struct.pack_into(fmt, b, pos + offset, value)
            return bytes(b)
        pos += 4


def patch_eocd(data, offset, fmt, value):
    b = bytearray(data)
    pos = b.rfind(b"PK\x05\x06")
    struct.pack_into(fmt, b, pos + offset, value)
    return bytes(b)


def patch_eocd_locator(data):
    b = bytearray(data)
    pos = b.rfind(b"PK\x06\x07")
    struct.pack_into("<Q", b, pos + 8, len(data) * 4)
    return bytes(b)


def flip_in_entry(data, suffix, fraction=0.5):
    """Flips one byte of an entry's data, `fraction` of the way in."""
    z = zipfile.ZipFile(io.BytesIO(data))
    info = next(i for i in z.infolist() if i.filename.endswith(suffix))
    b = bytearray(data)
    nlen, xlen = struct.unpack_from("<HH", b, info.header_offset + 26)
    start = info.header_offset + 30 + nlen + xlen
    b[start + int(info.compress_size * fraction)] ^= 0x5A
    return bytes(b)


def pickle_bytes(body):
    return b"\x80\x02" + body + b"."


def cases(base):
    p = prefix(base)
    yield "A1 empty file", b"", "CUVIL-E-ZIP-NOT-ZIP"
    yield "A1 one byte", b"P", "CUVIL-E-ZIP-NOT-ZIP"
    yield "A1 21 bytes", b"PK\x05\x06" + b"\0" * 17, "CUVIL-E-ZIP-TRUNCATED"
    yield "A2 ELF binary", b"\x7fELF" + b"\0" * 200, "looks like an ELF binary"
    yield "A2 PNG image", b"\x89PNG\r\n\x1a\n" + b"\0" * 200, "looks like a PNG image"
    yield "A2 raw pickle", b"\x80\x02}q\x00." + b"\0" * 40, "raw pickle"
    yield "A2 preview archive", b"PYTORCH1" + b"\0" * 100, "preview-release"
    tar = bytearray(600)
    tar[257:262] = b"ustar"
    yield "A2 tar archive", bytes(tar), "tar archive"
    for k in range(1, 12):
        cut = len(base) * k // 12
        yield f"A3 truncated to {cut} bytes", base[:cut], "CUVIL-E-ZIP-"
    yield "A3 truncated by 10 bytes", base[:-10], "CUVIL-E-ZIP-TRUNCATED"
    cd_offset = struct.unpack_from("<I", base, base.rfind(b"PK\x05\x06") + 16)[0]
    yield "A4 central directory beyond EOF", patch_eocd(base, 16, "<I", len(base) + 1000), "CUVIL-E-ZIP-"
    yield "A4 local header name differs", patch_local(base, "data.pkl", 30 + len(p) + 2, "<B", ord("X")), "disagrees with the central directory"
    yield "A4 local header method differs", patch_local(base, "data.pkl", 8, "<H", 8), "disagrees with the central directory"
    yield "A4 local header outside the data area", patch_central(base, "data.pkl", 42, "<I", cd_offset + 5), "CUVIL-E-ZIP-CORRUPT"
    yield "A5 declared size 2.2 GB", patch_central(base, ".py", 24, "<I", 2_200_000_000), "CUVIL-E-ZIP-TOO-LARGE"
    yield "A5 stored entry size mismatch", patch_central(base, "data.pkl", 24, "<I", 10**9), "CUVIL-E-ZIP-"
    bomb = rebuild(base, add=[(p + "extra/bomb", b"\0" * (60 << 20), zipfile.ZIP_DEFLATED)])
    yield "A5 zip bomb (60 MB of zeros)", bomb, "zip bomb"
    yield "A6 entry count lies", patch_eocd(patch_eocd(base, 10, "<H", 99), 8, "<H", 99), "CUVIL-E-ZIP-CORRUPT"
    z64 = base.find(b"PK\x06\x06")
    if z64 >= 0:  # PyTorch writes zip64 end records: make them disagree
        b64 = bytearray(base)
        struct.pack_into("<Q", b64, z64 + 32, 7)
        yield "A6 zip64 record disagrees with the end record", bytes(b64), "disagree"
        yield "A6 zip64 locator points outside", patch_eocd_locator(base), "CUVIL-E-ZIP-CORRUPT"
    else:
        yield "A6 zip64 marker without zip64 record", patch_eocd(base, 16, "<I", 0xFFFFFFFF), "zip64"
    for label, name in [("parent component", p + "../evil"), ("absolute path", "/abs/evil"),
                        ("backslash", p + "a\\b"), ("drive letter", "C:" + p + "x")]:
        yield f"A7 name with {label}", rebuild(base, add=[(name, b"x", zipfile.ZIP_STORED)]), "CUVIL-E-ZIP-BAD-NAME"
    yield "A7 invalid UTF-8 name", patch_central(patch_local(base, "version", 30 + len(p), "<B", 0xFF), "version", 46 + len(p), "<B", 0xFF), "CUVIL-E-ZIP-BAD-NAME"
    yield "A7 NUL in name", patch_central(patch_local(base, "version", 30 + len(p), "<B", 0), "version", 46 + len(p), "<B", 0), "CUVIL-E-ZIP-BAD-NAME"
    dup = rebuild(base, add=[(p + "data.pkl", pickle_bytes(b")"), zipfile.ZIP_STORED)])
    yield "A8 duplicate data.pkl", dup, "CUVIL-E-ZIP-DUPLICATE"
    yield "A9 entry outside the folder", rebuild(base, add=[("other/x", b"x", zipfile.ZIP_STORED)]), "mixed prefixes"
    yield "A9 entry at top level", rebuild(base, add=[("toplevel", b"x", zipfile.ZIP_STORED)]), "CUVIL-E-ARCHIVE-LAYOUT"
    yield "A10 encrypted entry", patch_local(patch_central(base, "data.pkl", 8, "<H", 1), "data.pkl", 6, "<H", 1), "is encrypted"
    yield "A10 bzip2 entry", rebuild(base, add=[(p + "extra/b", b"x" * 100, zipfile.ZIP_BZIP2)]), "compression method 12"
    sym = patch_central(base, "version", 38, "<I", 0o120777 << 16)
    yield "A10 symbolic link", sym, "symbolic link"
    yield "A11 weight data corrupted (CRC)", flip_in_entry(base, "data/0"), "CUVIL-E-ZIP-CRC"
    yield "A11 code corrupted (deflate/CRC)", flip_in_entry(base, "__torch__.py"), "CUVIL-E-ZIP-"
    yield "A12 no data.pkl", rebuild(base, drop=["data.pkl"]), "'data.pkl' is missing"
    yield "A12 no version", rebuild(base, drop=["version"]), "'.data/version' is missing"
    yield "A12 version 99", rebuild(base, replace={"version": b"99\n"}), "file format version 99 is unsupported"
    yield "A12 version not a number", rebuild(base, replace={"version": b"three"}), "CUVIL-E-ARCHIVE-VERSION"
    yield "A12 no code", rebuild(base, drop=[".py", ".debug_pkl"]), "no code/ folder"
    yield "A13 two records, one local header", patch_central(base, "constants.pkl", 42, "<I", struct.unpack_from("<I", base, base.find(b"PK\x01\x02") + 42)[0]), "CUVIL-E-ZIP-"
    yield "A14 prepended data", b"#!/bin/sh\nexit 0\n" + base, "CUVIL-E-ZIP-PREPENDED"
    yield "A14 trailing data", base + b"GARBAGE" * 10, "does not end the file"

    # B: pickles. Malicious data.pkl contents.
    def with_data(pkl):
        return rebuild(base, replace={"data.pkl": pkl})
    yield "B1 GLOBAL os.system + REDUCE", with_data(pickle_bytes(b"cos\nsystem\nX\x02\x00\x00\x00ls\x85R")), "global 'os.system' is not allowed"
    yield "B1 STACK_GLOBAL builtins.eval", with_data(pickle_bytes(b"X\x08\x00\x00\x00builtinsX\x04\x00\x00\x00eval\x93X\x01\x00\x00\x001\x85R")), "global 'builtins.eval' is not allowed"
    yield "B1 subprocess.Popen", with_data(pickle_bytes(b"csubprocess\nPopen\n)R")), "global 'subprocess.Popen' is not allowed"
    yield "B1 torch.load", with_data(pickle_bytes(b"ctorch\nload\n)R")), "global 'torch.load' is not allowed"
    yield "B1 NEWOBJ of a non-TorchScript class", with_data(pickle_bytes(b"ccollections\nOrderedDict\n)\x81")), "only TorchScript (__torch__) classes"
    yield "B1 REDUCE on a __torch__ class", with_data(pickle_bytes(b"c__torch__\nTiny\n)R")), "not an allowed callable"
    yield "B1 BUILD on a list", with_data(pickle_bytes(b"]}b")), "BUILD on a list"
    yield "B1 quantized tensor without arguments", with_data(pickle_bytes(b"ctorch._utils\n_rebuild_qtensor\n)R")), "_rebuild_qtensor takes 7 arguments"
    yield "B2 stack underflow (SETITEM)", with_data(pickle_bytes(b"}s")), "CUVIL-E-PICKLE-CORRUPT"
    yield "B2 MARK imbalance", with_data(pickle_bytes(b"(]")), "unbalanced MARK"
    yield "B2 GET of unset memo", with_data(pickle_bytes(b"h\x07")), "never set"
    yield "B2 unknown opcode", with_data(b"\x80\x02\xff."), "unsupported pickle opcode 0xff"
    yield "B2 protocol 6", with_data(b"\x80\x06N."), "pickle protocol 6"
    yield "B2 no STOP", with_data(b"\x80\x02N"), "without a STOP"
    yield "B2 data after STOP", with_data(b"\x80\x02N.N"), "data follows the STOP opcode"
    yield "B2 list contains itself", with_data(pickle_bytes(b"]q\x00h\x00a")), "contains itself"
    yield "B2 deep nesting", with_data(pickle_bytes(b"(" * 1500 + b"t" * 1500)), "CUVIL-E-PICKLE-DEPTH"
    yield "B2 deep nesting of lists", with_data(pickle_bytes(b"]" + b"]q\x00h\x00" * 0 + b"".join([b"]" for _ in range(1200)]) + b"a" * 1200)), "CUVIL-E-PICKLE-DEPTH"
    yield "B2 huge memo index", with_data(pickle_bytes(b"Nr\xff\xff\xff\xff0j\xfe\xff\xff\xff")), "never set"
    yield "B2 truncated string", with_data(b"\x80\x02X\xff\xff\xff\x00ab"), "runs past the end"

    # B3/B4: tensor rebuilds inside an otherwise valid module, written with
    # a small pickle assembler (the root class is the archive's own).
    z = zipfile.ZipFile(io.BytesIO(base))
    good = z.read(p + "data.pkl")
    root_module = good[3:good.index(b"\n", 3)].decode()
    def GLOBAL(m, n):
        return b"c" + m.encode() + b"\n" + n.encode() + b"\n"
    def STR(text):
        raw = text.encode()
        return b"X" + struct.pack("<I", len(raw)) + raw
    def INT(i):
        return b"\x8a\x08" + struct.pack("<q", i)
    def obj(module, name, attrs):
        return (GLOBAL(module, name) + b")\x81}(" + b"".join(STR(k) + v for k, v in attrs) + b"ub")
    def storage(key="0", stype=("torch", "FloatStorage"), device="cpu", numel=6):
        return b"(" + STR("storage") + GLOBAL(*stype) + STR(key) + STR(device) + INT(numel) + b"tQ"
    def tensor(st, offset=0, size=(2, 3), stride=(3, 1), arity=6):
        args = [st, INT(offset), b"(" + b"".join(INT(x) for x in size) + b"t",
                b"(" + b"".join(INT(x) for x in stride) + b"t", b"\x89",
                GLOBAL("collections", "OrderedDict") + b")R"]
        return GLOBAL("torch._utils", "_rebuild_tensor_v2") + b"(" + b"".join(args[:arity]) + b"tR"
    def module_with(weight):
        fc = obj("__torch__.torch.nn.modules.linear", "Linear",
                 [("weight", weight), ("bias", b"N"), ("training", b"\x89"),
                  ("_is_full_backward_hook", b"N")])
        return b"\x80\x02" + obj(root_module, "Tiny", [("training", b"\x89"),
                                                    ("_is_full_backward_hook", b"N"),
                                                    ("fc", fc)]) + b"."
    yield "B3 _rebuild_tensor_v2 with 3 arguments", with_data(module_with(tensor(storage(), arity=3))), "takes 6 or 7 arguments"
    yield "B3 missing storage record", with_data(module_with(tensor(storage(key="77")))), "storage record 'data/77' is missing"
    yield "B3 unknown storage type", with_data(module_with(tensor(storage(stype=("torch", "ComplexFloatStorage"))))), "ComplexFloatStorage"
    yield "B3 device meta", with_data(module_with(tensor(storage(device="meta")))), "device 'meta'"
    yield "B3 persistent id not a storage tuple", with_data(pickle_bytes(b"(X\x03\x00\x00\x00abctQ")), "CUVIL-E-PICKLE-PERSID"
    yield "B4 extent beyond storage", with_data(module_with(tensor(storage(), size=(4, 3)))), "which holds 6"
    yield "B4 storage offset beyond storage", with_data(module_with(tensor(storage(), offset=5))), "CUVIL-E-PICKLE-TENSOR"
    yield "B4 extent overflows int64", with_data(module_with(tensor(storage(), size=(2**62, 3), stride=(2**62, 1)))), "overflows int64"
    yield "B4 negative size", with_data(module_with(tensor(storage(), size=(-1, 3)))), "non-negative"
    yield "B4 negative storage size", with_data(module_with(tensor(storage(numel=-6)))), "negative size"
    yield "B4 storage record shorter than declared", with_data(module_with(tensor(storage(numel=4096), size=(2, 3)))), "its record holds"
    yield "B4 numel x itemsize overflows", with_data(module_with(tensor(storage(numel=2**62)))), "its record holds"
    yield "B4 valid rebuild (control)", with_data(module_with(tensor(storage()))), None
    # B5: code files.
    code = next(n for n in z.namelist() if n.endswith("code/__torch__.py"))
    src = z.read(code)
    yield "B5 syntax error in code", rebuild(base, replace={"code/__torch__.py": src + b"\n  def broken(:\n"}), "CUVIL-E-CODE-SYNTAX"
    yield "B5 deeply nested expression", rebuild(base, replace={"code/__torch__.py": src + b"\nX = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n"}), "nest too deeply"
    yield "B5 tab indentation", rebuild(base, replace={"code/__torch__.py": src.replace(b"  ", b"\t", 1)}), "tabs are not allowed"
    yield "B5 class missing from code", rebuild(base, replace={"code/__torch__.py": b"X = 1\n"}), "has no code in the archive"
    yield "B5 malformed debug records are ignored", rebuild(base, replace={"__torch__.py.debug_pkl": b"\x80\x02garbage"}), None
    yield "B5 recursion in model code", rebuild(base, replace={"code/__torch__.py": src.replace(b"return", b"return (self).forward(x, )\n    return", 1)}), "CUVIL-E-IMPORT-RECURSION"
    # B8: type confusion: an int where the code expects a tensor.
    yield "B8 int where a tensor is expected", with_data(module_with(INT(5))), "CUVIL-E-IMPORT-"
    yield "B8 string where a module is expected", with_data(b"\x80\x02" + obj(root_module, "Tiny", [("training", b"\x89"), ("fc", STR("oops"))]) + b"."), "CUVIL-E-IMPORT-"


def quantized_archive(engine):
    """A frozen linear layer quantized by PyTorch (weights per tensor with
    qnnpack, per channel with onednn), and its weight's quantizer."""
    from torch.ao.quantization import DeQuantStub, QuantStub, convert, get_default_qconfig, prepare
    torch.backends.quantized.engine = engine

    class QLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.fc, self.dq = QuantStub(), nn.Linear(3, 4), DeQuantStub()

        def forward(self, x):
            return self.dq(self.fc(self.q(x)))

    torch.manual_seed(0)
    m = QLinear().eval()
    m.qconfig = get_default_qconfig(engine)
    prepare(m, inplace=True)
    m(torch.randn(16, 3))
    convert(m, inplace=True)
    buf = io.BytesIO()
    torch.jit.save(torch.jit.freeze(torch.jit.trace(m, torch.randn(2, 3))), buf)
    return buf.getvalue(), m.fc.weight()


def quantized_cases():
    """Corrupt packed-parameter states and quantizers (one mutation of a
    real archive's constants.pkl each)."""
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        return
    per_tensor, w = quantized_archive("qnnpack")
    z = zipfile.ZipFile(io.BytesIO(per_tensor))
    consts = z.read(next(n for n in z.namelist() if n.endswith("constants.pkl")))
    scale = b"G" + struct.pack(">d", w.q_scale())
    assert consts.count(scale) == 1, "the weight's scale is not where the test expects it"

    def with_consts(archive, new):
        return rebuild(archive, replace={"constants.pkl": new})
    yield "Q0 quantized linear (control)", per_tensor, None
    yield "Q1 weight scale NaN", with_consts(per_tensor, consts.replace(scale, b"G" + struct.pack(">d", float("nan")))), "is not a positive finite number"
    yield "Q1 weight scale negative", with_consts(per_tensor, consts.replace(scale, b"G" + struct.pack(">d", -w.q_scale()))), "is not a positive finite number"
    yield "Q1 weight scale zero", with_consts(per_tensor, consts.replace(scale, b"G" + struct.pack(">d", 0.0))), "is not a positive finite number"
    zp = scale + b"K" + bytes([w.q_zero_point() & 0xFF])
    yield "Q2 zero point out of range", with_consts(per_tensor, consts.replace(zp, scale + b"M\x00\x04")), "zero point 1024 is outside"
    yield "Q3 packed state of the wrong arity", with_consts(per_tensor, consts.replace(b"LinearPackedParamsBase", b"Conv2dPackedParamsBase")), "CUVIL-E-IMPORT-PACKED"
    yield "Q4 weights of the wrong dtype", with_consts(per_tensor, consts.replace(b"torch\nQInt8Storage\n", b"torch\nQUInt8Storage\n", 1)), "weights must be 2-D qint8"
    yield "Q4 quantized float storage", with_consts(per_tensor, consts.replace(b"torch\nQInt8Storage\n", b"torch\nFloatStorage\n", 1)), "CUVIL-E-PICKLE-QTENSOR"
    yield "Q5 unknown packed class", with_consts(per_tensor, consts.replace(b"LinearPackedParamsBase", b"LinearPackedParamsBasX")), "does not read"
    # Dynamic quantization of a recurrent layer: its weights are
    # torch.classes.rnn.CellParamsBase objects, read when they hold int8
    # dynamic quantization; another kind is reported as unsupported.
    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 4)

        def forward(self, x):
            return self.lstm(x.unsqueeze(0))[0]

    torch.backends.quantized.engine = "qnnpack"
    dynamic = torch.ao.quantization.quantize_dynamic(Recurrent().eval(), {nn.LSTM}, dtype=torch.qint8)
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(dynamic), buf)
    recurrent = buf.getvalue()
    yield "Q7 dynamically quantized LSTM (control)", recurrent, None
    z = zipfile.ZipFile(io.BytesIO(recurrent))
    data_name = next(n for n in z.namelist() if n.endswith("/data.pkl"))
    data = z.read(data_name)
    assert data.count(b"quantized_dynamic") == 1, "the cell weights' kind is not where the test expects it"
    yield "Q8 cell weights of another kind", rebuild(recurrent, replace={"data.pkl": data.replace(b"quantized_dynamic", b"quantized_dynamiX")}), "'quantized_dynamiX' cell weights"
    yield "Q8 cell weights of another class", rebuild(recurrent, replace={"data.pkl": data.replace(b"rnn\nCellParamsBase", b"rnn\nCellParamsBasX")}), "CellParamsBasX"
    if "onednn" in torch.backends.quantized.supported_engines:
        per_channel, _ = quantized_archive("onednn")
        z = zipfile.ZipFile(io.BytesIO(per_channel))
        consts = z.read(next(n for n in z.namelist() if n.endswith("constants.pkl")))
        at = consts.find(b"RK\x00t", consts.find(b"per_channel_affine"))
        assert at > 0, "the per-channel axis is not where the test expects it"
        yield "Q0 per-channel quantized linear (control)", per_channel, None
        yield "Q6 per-channel axis out of range", with_consts(per_channel, consts[:at] + b"RK\x05t" + consts[at + 4:]), "per-channel axis 5 is out of range"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--import", dest="importer", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    base = base_archive()
    failures = 0
    total = 0
    import itertools
    for label, data, expect in itertools.chain(cases(base), wide_cases(), quantized_cases()):
        total += 1
        model = os.path.join(args.work, "case.pt")
        out = os.path.join(args.work, "case.mlir")
        for f in (model, out):
            if os.path.exists(f):
                os.remove(f)
        with open(model, "wb") as f:
            f.write(data)
        try:
            proc = subprocess.run([args.importer, model, "--input-shape", "0=2x3xf32", "-o", out],
                                  capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            print(f"FAIL {label}: timed out (a hang)")
            failures += 1
            continue
        err = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        problems = []
        if expect is None:
            if proc.returncode != 0:
                problems.append(f"expected success, got exit {proc.returncode}: {err}")
        else:
            if proc.returncode < 0:
                problems.append(f"killed by signal {-proc.returncode}")
            elif proc.returncode != 1:
                problems.append(f"exit status {proc.returncode}, expected 1")
            if expect not in proc.stderr:
                problems.append(f"message lacks '{expect}': {err}")
            if os.path.exists(out):
                problems.append("an output file was written")
        status = "ok  " if not problems else "FAIL"
        print(f"{status} {label}" + ("" if not problems else ": " + "; ".join(problems)))
        if not problems and expect is not None:
            print(f"       {err[:160]}")
        failures += bool(problems)
    print(f"{total - failures}/{total} malformed-input cases handled")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
