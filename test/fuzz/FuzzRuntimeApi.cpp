//===- FuzzRuntimeApi.cpp - Fuzz the C API of libinference.so -------------===//
//
// Random call sequences on the runtime's C API (RELIABILITY.md I1-I5, I7),
// linked with the runtime itself and a model with a dynamic dimension
// (test/runtime/models/fake_model_dyn.c: x f32 [-1, 3], k i64 [2] -> y f32
// [-1, 3], seen i64 [4]), all built with ASan and UBSan under
// CUVIL_ENABLE_FUZZING. The input is a program: options for one instance,
// then operations: runs with fuzzed tensors (NULL or misaligned data, byte
// sizes too small, wrong dtypes, ranks and shapes, outputs overlapping
// inputs, NaN data), info and index queries with any index or name,
// profile queries, a second instance created and destroyed. Every buffer
// holds exactly the byte size the call claims, so a read past it is ASan's
// to see; every failed call must leave a message in cuvil_last_error.
//
// Without libFuzzer, main() replays files or directories (ctest).
//
//===----------------------------------------------------------------------===//
#include "cuvil/runtime.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

/// The fuzz input, read as numbers (zeros once it is used up).
class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  int64_t small(int64_t lo, int64_t hi) { return lo + int64_t(byte()) % (hi - lo + 1); }
  /// A dimension: mostly small, sometimes negative or huge.
  int64_t dim() {
    switch (byte() % 8) {
    case 0: return -1;
    case 1: return int64_t(1) << (30 + byte() % 33);
    case 2: return -int64_t(byte());
    default: return byte() % 6;
    }
  }

private:
  const uint8_t *p_, *end_;
};

void checkError(cuvil_status s) {
  if (s == CUVIL_OK)
    return;
  const char *msg = cuvil_last_error();
  if (!msg || !*msg)
    std::abort(); // a failure without a message
}

/// One tensor argument: the data buffer is allocated to exactly byte_size.
struct Arg {
  std::vector<int64_t> shape;
  std::unique_ptr<uint8_t[]> storage;
  cuvil_tensor t{};
};

void makeArg(Bytes &in, Arg &a, const cuvil_tensor_info *info, Arg *overlap) {
  a.t.rank = int32_t(in.small(-1, 9));
  bool likeInfo = info && in.byte() % 4 != 0;
  if (likeInfo)
    a.t.rank = info->rank;
  a.shape.assign(size_t(a.t.rank > 0 ? a.t.rank : 0), 0);
  for (size_t i = 0; i < a.shape.size(); ++i)
    a.shape[i] = likeInfo && info->shape[i] >= 0 && in.byte() % 4 ? info->shape[i] : in.dim();
  a.t.shape = in.byte() % 16 == 0 ? nullptr : a.shape.data();
  // 12..15: no dtype, yet values the enum can hold (no UB in this C++).
  a.t.dtype = likeInfo && in.byte() % 4 ? info->dtype : cuvil_dtype(in.small(0, 15));
  size_t exact = a.t.shape ? cuvil_tensor_byte_size(a.t.dtype, a.t.rank, a.shape.data()) : 0;
  size_t size;
  switch (in.byte() % 6) {
  case 0: size = size_t(in.byte()); break;
  case 1: size = exact > 0 ? exact - 1 : 0; break; // one byte short
  default: size = exact;
  }
  if (size > (1 << 20))
    size = in.byte(); // the claim must be true: never more than we allocate
  a.storage.reset(new uint8_t[size + 8]);
  for (size_t i = 0; i < size + 8; ++i)
    a.storage[i] = in.byte();
  if (in.byte() % 8 == 0) { // NaN data
    for (size_t i = 0; i + 4 <= size; i += 4) {
      float nan = std::nanf("");
      std::memcpy(&a.storage[i], &nan, 4);
    }
  }
  uint8_t where = in.byte() % 10;
  a.t.data = where == 0 ? nullptr : where == 1 ? a.storage.get() + 1 : a.storage.get();
  if (where == 2 && overlap && overlap->t.data) { // aliasing another argument
    a.t.data = overlap->t.data;
    size = std::min(size, overlap->t.byte_size);
  }
  a.t.byte_size = size;
}

void fuzzRun(Bytes &in, cuvil_model *model) {
  int32_t numInputs = int32_t(in.small(-1, 3)), numOutputs = int32_t(in.small(-1, 3));
  int32_t modelInputs = cuvil_model_num_inputs(model), modelOutputs = cuvil_model_num_outputs(model);
  std::vector<Arg> inputs(size_t(std::max(numInputs, 0))), outputs(size_t(std::max(numOutputs, 0)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    cuvil_tensor_info info;
    bool have = int32_t(i) < modelInputs && cuvil_model_input_info(model, int32_t(i), &info) == CUVIL_OK;
    makeArg(in, inputs[i], have ? &info : nullptr, i ? &inputs[i - 1] : nullptr);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    cuvil_tensor_info info;
    bool have = int32_t(i) < modelOutputs && cuvil_model_output_info(model, int32_t(i), &info) == CUVIL_OK;
    makeArg(in, outputs[i], have ? &info : nullptr, inputs.empty() ? nullptr : &inputs[0]);
  }
  std::vector<cuvil_tensor> in_(inputs.size()), out_(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    in_[i] = inputs[i].t;
  for (size_t i = 0; i < outputs.size(); ++i)
    out_[i] = outputs[i].t;
  const cuvil_tensor *inPtr = in.byte() % 16 == 0 ? nullptr : in_.data();
  cuvil_tensor *outPtr = in.byte() % 16 == 0 ? nullptr : out_.data();
  checkError(cuvil_model_run(model, inPtr, numInputs, outPtr, numOutputs));
}

void fuzzQueries(Bytes &in, cuvil_model *model) {
  int32_t index = int32_t(in.small(-3, 4));
  cuvil_tensor_info info;
  checkError(cuvil_model_input_info(model, index, in.byte() % 8 ? &info : nullptr));
  checkError(cuvil_model_output_info(model, index, in.byte() % 8 ? &info : nullptr));
  static const char *const kNames[] = {"x", "k", "y", "seen", "", "output0", "xx", nullptr};
  (void)cuvil_model_input_index(model, kNames[in.byte() % 8]);
  (void)cuvil_model_output_index(model, kNames[in.byte() % 8]);
  int64_t shape[10];
  int32_t rank = int32_t(in.small(-2, 9));
  for (int64_t &d : shape)
    d = in.dim();
  (void)cuvil_tensor_byte_size(cuvil_dtype(in.small(0, 15)), rank, in.byte() % 8 ? shape : nullptr);
  (void)cuvil_model_profile_count(model);
  const char *name;
  int64_t calls;
  double ms;
  checkError(cuvil_model_profile_entry(model, index, in.byte() % 4 ? &name : nullptr,
                                       in.byte() % 4 ? &calls : nullptr, in.byte() % 4 ? &ms : nullptr));
  cuvil_model_profile_reset(model);
}

cuvil_model *create(Bytes &in) {
  // The options as a newer or older caller lays them out: struct_size bytes
  // (the claim is true: the buffer holds them), the fields past this
  // header's zero or not.
  alignas(8) unsigned char buffer[64] = {};
  cuvil_options options;
  cuvil_options_init(&options);
  switch (in.byte() % 8) {
  case 0: {
    options.struct_size = uint32_t(in.small(0, sizeof buffer));
    if (in.byte() % 2 && options.struct_size > sizeof options)
      buffer[sizeof options + in.byte() % (options.struct_size - sizeof options)] = in.byte();
    break;
  }
  case 1: options.num_threads = int32_t(in.small(-3, 3)) * (in.byte() % 2 ? 1000 : 1); break;
  default: options.num_threads = int32_t(in.small(1, 2));
  }
  std::memcpy(buffer, &options, sizeof options);
  cuvil_model *model = nullptr;
  cuvil_status s = cuvil_model_create(in.byte() % 16 ? reinterpret_cast<cuvil_options *>(buffer) : nullptr, &model);
  checkError(s);
  if (s != CUVIL_OK && model)
    std::abort(); // a failed create hands out no instance
  return model;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes in(data, size);
  // Calls without an instance first.
  checkError(cuvil_model_create(nullptr, nullptr));
  (void)cuvil_model_num_inputs(nullptr);
  checkError(cuvil_model_run(nullptr, nullptr, 0, nullptr, 0));
  cuvil_model_destroy(nullptr);
  cuvil_model *model = create(in);
  if (!model)
    return 0;
  for (int step = 0; step < 32 && !in.empty(); ++step) {
    switch (in.byte() % 4) {
    case 0:
    case 1: fuzzRun(in, model); break;
    case 2: fuzzQueries(in, model); break;
    case 3:
      if (cuvil_model *other = create(in))
        cuvil_model_destroy(other);
      break;
    }
  }
  cuvil_model_destroy(model);
  return 0;
}

#ifndef CUVIL_LIBFUZZER
#include "FuzzSupport.h"

int main(int argc, char **argv) { return cuvil::fuzz::replayMain(argc, argv, LLVMFuzzerTestOneInput); }
#endif
