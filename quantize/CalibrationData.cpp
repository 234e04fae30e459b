//===- CalibrationData.cpp - Directories of calibration samples -----------===//
#include "quantize/CalibrationData.h"

#include "frontend/torchscript/Npz.h"
#include "support/AtomicFile.h"
#include "support/Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace cuvil::quant {
namespace fs = std::filesystem;

namespace {

Status checkFinite(const Tensor &t, const std::string &where) {
  if (!isFloat(t.dtype()))
    return Status();
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getDouble(i);
    if (!std::isfinite(v))
      return inputError(where + ": element " + std::to_string(i) + " is " +
                        (std::isnan(v) ? "NaN" : "infinite") +
                        "; calibration samples must be finite");
  }
  return Status();
}

Result<std::vector<Tensor>> loadNpz(const std::string &path) {
  Result<std::vector<std::pair<std::string, Tensor>>> arrays = readNpz(path);
  if (!arrays)
    return arrays.error();
  std::vector<Tensor> tensors;
  for (auto &[name, t] : *arrays) {
    if (Status s = checkFinite(t, "'" + path + "' array '" + name + "'"); !s)
      return s.error();
    tensors.push_back(std::move(t));
  }
  return tensors;
}

} // namespace

Result<std::vector<std::string>> listSamples(const std::string &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return ioError("'" + dir + "' is not a directory of samples (.npz files or sub-directories "
                   "with input0.npy, input1.npy, ...)");
  std::vector<std::string> samples;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
    std::string p = e.path().string();
    if (e.is_directory(ec) && fs::exists(e.path() / "input0.npy", ec))
      samples.push_back(p);
    else if (e.is_regular_file(ec) && e.path().extension() == ".npz")
      samples.push_back(p);
  }
  if (ec)
    return ioError("cannot read the directory '" + dir + "': " + ec.message());
  if (samples.empty())
    return inputError("'" + dir + "' holds no samples: expected .npz files or sub-directories "
                      "with input0.npy, input1.npy, ... (ARCHITECTURE.md §5)");
  std::sort(samples.begin(), samples.end());
  return samples;
}

Result<std::vector<Tensor>> loadSample(const std::string &path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    return loadNpz(path);
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    fs::path file = fs::path(path) / ("input" + std::to_string(i) + ".npy");
    if (!fs::exists(file, ec))
      break;
    Result<Tensor> t = readNpy(file.string());
    if (!t)
      return t.error();
    if (Status s = checkFinite(*t, "'" + file.string() + "'"); !s)
      return s.error();
    tensors.push_back(std::move(*t));
  }
  return tensors;
}

struct SampleDigest::Impl {
  llvm::SHA256 sha;
};
SampleDigest::SampleDigest() : impl_(new Impl) {}
SampleDigest::~SampleDigest() { delete impl_; }

void SampleDigest::add(const std::vector<Tensor> &sample) {
  for (const Tensor &t : sample) {
    std::string head = t.describe() + ";";
    impl_->sha.update(llvm::StringRef(head));
    impl_->sha.update(llvm::ArrayRef<uint8_t>(t.data(), t.byteSize()));
  }
  impl_->sha.update(llvm::StringRef("|"));
}

std::string SampleDigest::hex() {
  std::array<uint8_t, 32> d = impl_->sha.final();
  return llvm::toHex(d, /*LowerCase=*/true);
}

} // namespace cuvil::quant
