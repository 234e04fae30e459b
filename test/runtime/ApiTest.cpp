//===- ApiTest.cpp - The runtime's C API through dlopen'ed fake models ----===//
//
// Each fake model (models/*.c) is linked with the runtime archive into its
// own shared library, as cuvil-export links a libinference.so, and used only
// through dlopen/dlsym. The cases follow RELIABILITY.md section I.
//
//===----------------------------------------------------------------------===//
#include "cuvil/runtime.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string modelPath(const std::string &name) {
  return std::string(CUVIL_TEST_MODEL_DIR) + "/lib" + name + ".so";
}

// The cuvil_* functions of one loaded library.
struct Library {
  void *handle = nullptr;
  decltype(&cuvil_abi_version) abiVersion = nullptr;
  decltype(&cuvil_model_abi_version) modelAbiVersion = nullptr;
  decltype(&cuvil_options_init) optionsInit = nullptr;
  decltype(&cuvil_last_error) lastError = nullptr;
  decltype(&cuvil_model_create) create = nullptr;
  decltype(&cuvil_model_destroy) destroy = nullptr;
  decltype(&cuvil_model_num_inputs) numInputs = nullptr;
  decltype(&cuvil_model_num_outputs) numOutputs = nullptr;
  decltype(&cuvil_model_input_info) inputInfo = nullptr;
  decltype(&cuvil_model_output_info) outputInfo = nullptr;
  decltype(&cuvil_model_run) run = nullptr;
  decltype(&cuvil_model_input_index) inputIndex = nullptr;
  decltype(&cuvil_model_output_index) outputIndex = nullptr;
  decltype(&cuvil_tensor_byte_size) byteSize = nullptr;
  decltype(&cuvil_model_input_bounds) inputBounds = nullptr;
  decltype(&cuvil_model_output_bounds) outputBounds = nullptr;

  explicit Library(const std::string &name, int flags = RTLD_NOW | RTLD_LOCAL) {
    handle = dlopen(modelPath(name).c_str(), flags);
    if (!handle)
      FAIL("dlopen " << name << ": " << dlerror());
    bind(abiVersion, "cuvil_abi_version");
    bind(modelAbiVersion, "cuvil_model_abi_version");
    bind(optionsInit, "cuvil_options_init");
    bind(lastError, "cuvil_last_error");
    bind(create, "cuvil_model_create");
    bind(destroy, "cuvil_model_destroy");
    bind(numInputs, "cuvil_model_num_inputs");
    bind(numOutputs, "cuvil_model_num_outputs");
    bind(inputInfo, "cuvil_model_input_info");
    bind(outputInfo, "cuvil_model_output_info");
    bind(run, "cuvil_model_run");
    bind(inputIndex, "cuvil_model_input_index");
    bind(outputIndex, "cuvil_model_output_index");
    bind(byteSize, "cuvil_tensor_byte_size");
    bind(inputBounds, "cuvil_model_input_bounds");
    bind(outputBounds, "cuvil_model_output_bounds");
  }
  ~Library() { close(); }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  void close() {
    if (handle)
      dlclose(handle);
    handle = nullptr;
  }

  // Creates an instance with `threads` threads; fails the test otherwise.
  cuvil_model *make(int32_t threads = 1) {
    cuvil_options options;
    optionsInit(&options);
    options.num_threads = threads;
    cuvil_model *model = nullptr;
    cuvil_status status = create(&options, &model);
    INFO(lastError());
    REQUIRE(status == CUVIL_OK);
    REQUIRE(model != nullptr);
    return model;
  }

  std::string error() const { return lastError(); }

private:
  template <typename Fn> void bind(Fn &fn, const char *symbol) {
    fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!fn)
      FAIL("dlsym " << symbol);
  }
};

// Buffers for one call of fake model A (y = x + k[0], x and y f32 [2, 3]).
struct CallA {
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t k[1] = {10};
  float y[6];
  int64_t xShape[2] = {2, 3};
  int64_t kShape[1] = {1};
  int64_t yShape[2] = {-7, -7};
  cuvil_tensor inputs[2];
  cuvil_tensor outputs[1];

  CallA() {
    std::fill(std::begin(y), std::end(y), -99.0f);
    inputs[0] = {x, sizeof(x), CUVIL_DTYPE_F32, 2, xShape};
    inputs[1] = {k, sizeof(k), CUVIL_DTYPE_I64, 1, kShape};
    outputs[0] = {y, sizeof(y), CUVIL_DTYPE_F32, 2, yShape};
  }
  cuvil_status run(Library &lib, cuvil_model *model) { return lib.run(model, inputs, 2, outputs, 1); }
  bool outputUntouched() const {
    for (float v : y)
      if (v != -99.0f)
        return false;
    return yShape[0] == -7 && yShape[1] == -7;
  }
  bool outputCorrect() const {
    for (int i = 0; i < 6; ++i)
      if (y[i] != x[i] + static_cast<float>(k[0]))
        return false;
    return yShape[0] == 2 && yShape[1] == 3;
  }
};

// Buffers for one call of fake model B (doubled = 2 * a, blocks = #blocks).
struct CallB {
  int32_t a[37];
  int32_t doubled[37] = {};
  int32_t blocks = -1;
  int64_t aShape[1] = {37};
  int64_t doubledShape[1] = {0};
  cuvil_tensor inputs[1];
  cuvil_tensor outputs[2];

  explicit CallB(int32_t base = 0) {
    for (int i = 0; i < 37; ++i)
      a[i] = base + i;
    inputs[0] = {a, sizeof(a), CUVIL_DTYPE_I32, 1, aShape};
    outputs[0] = {doubled, sizeof(doubled), CUVIL_DTYPE_I32, 1, doubledShape};
    outputs[1] = {&blocks, sizeof(blocks), CUVIL_DTYPE_I32, 0, nullptr};
  }
  cuvil_status run(Library &lib, cuvil_model *model) { return lib.run(model, inputs, 1, outputs, 2); }
  bool outputCorrect() const {
    for (int i = 0; i < 37; ++i)
      if (doubled[i] != 2 * a[i])
        return false;
    return doubledShape[0] == 37;
  }
};

// Scoped CUVIL_TEST_HIDE_CPU_FEATURES.
struct HiddenFeatures {
  explicit HiddenFeatures(const char *list) { setenv("CUVIL_TEST_HIDE_CPU_FEATURES", list, 1); }
  ~HiddenFeatures() { unsetenv("CUVIL_TEST_HIDE_CPU_FEATURES"); }
};

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> commandLines(const std::string &command) {
  std::vector<std::string> lines;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return lines;
  char line[4096];
  while (fgets(line, sizeof(line), pipe)) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
      text.pop_back();
    lines.push_back(text);
  }
  int status = pclose(pipe);
  if (status != 0)
    lines.insert(lines.begin(), "<command failed: " + command + ">");
  return lines;
}

} // namespace

TEST_CASE("version_and_tensor_info", "[api]") {
  Library lib("fake_model_a");
  STATIC_REQUIRE(CUVIL_ABI_VERSION == 3);
  STATIC_REQUIRE(CUVIL_MODEL_ABI_VERSION == 3);
  CHECK(lib.abiVersion() == CUVIL_ABI_VERSION);
  CHECK(lib.modelAbiVersion() == CUVIL_MODEL_ABI_VERSION);
  cuvil_model *model = lib.make();
  CHECK(lib.numInputs(model) == 2);
  CHECK(lib.numOutputs(model) == 1);

  cuvil_tensor_info info{};
  REQUIRE(lib.inputInfo(model, 0, &info) == CUVIL_OK);
  CHECK(std::string(info.name) == "x");
  CHECK(info.dtype == CUVIL_DTYPE_F32);
  REQUIRE(info.rank == 2);
  CHECK(info.shape[0] == 2);
  CHECK(info.shape[1] == 3);
  REQUIRE(lib.inputInfo(model, 1, &info) == CUVIL_OK);
  CHECK(std::string(info.name) == "k");
  CHECK(info.dtype == CUVIL_DTYPE_I64);
  REQUIRE(info.rank == 1);
  CHECK(info.shape[0] == 1);
  REQUIRE(lib.outputInfo(model, 0, &info) == CUVIL_OK);
  CHECK(std::string(info.name) == "y");
  CHECK(info.dtype == CUVIL_DTYPE_F32);
  REQUIRE(info.rank == 2);
  CHECK(info.shape[0] == 2);
  CHECK(info.shape[1] == 3);
  CHECK(lib.error().empty());

  CHECK(lib.inputInfo(model, 2, &info) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "input index 2 is out of range: the model has 2 inputs");

  // Look-up by name, and the byte size of a shape.
  CHECK(lib.inputIndex(model, "k") == 1);
  CHECK(lib.inputIndex(model, "x") == 0);
  CHECK(lib.outputIndex(model, "y") == 0);
  CHECK(lib.error().empty());
  CHECK(lib.inputIndex(model, "y") == -1);
  CHECK(lib.error().find("has no input named 'y'") != std::string::npos);
  CHECK(lib.outputIndex(model, nullptr) == -1);
  CHECK(lib.inputIndex(nullptr, "x") == -1);
  const int64_t dims[] = {2, 3};
  CHECK(lib.byteSize(CUVIL_DTYPE_F32, 2, dims) == 24);
  CHECK(lib.byteSize(CUVIL_DTYPE_I64, 0, nullptr) == 8);
  CHECK(lib.byteSize(CUVIL_DTYPE_C128, 1, dims) == 32);
  const int64_t negative[] = {2, -1}, huge[] = {int64_t(1) << 62, int64_t(1) << 62};
  CHECK(lib.byteSize(CUVIL_DTYPE_F32, 2, negative) == 0);
  CHECK(lib.byteSize(static_cast<cuvil_dtype>(99), 2, dims) == 0);
  CHECK(lib.byteSize(CUVIL_DTYPE_U8, 2, huge) == SIZE_MAX);

  // An input from an info's shape, no cast (C++: shape is const int64_t *).
  REQUIRE(lib.inputInfo(model, 0, &info) == CUVIL_OK);
  float xData[6] = {};
  cuvil_tensor fromInfo{xData, lib.byteSize(info.dtype, info.rank, info.shape), info.dtype, info.rank,
                        info.shape};
  CHECK(fromInfo.byte_size == sizeof xData);
  CHECK(lib.outputInfo(model, -1, &info) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "output index -1 is out of range: the model has 1 output");
  CHECK(lib.inputInfo(model, 0, nullptr) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "info is NULL");
  CHECK(lib.outputInfo(nullptr, 0, &info) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "model is NULL");
  CHECK(lib.numInputs(nullptr) == -1);
  CHECK(lib.numOutputs(nullptr) == -1);
  CHECK(lib.error() == "model is NULL");
  lib.destroy(model);
  lib.destroy(nullptr); // ignored
}

TEST_CASE("run_computes_the_model", "[api]") {
  Library lib("fake_model_a");
  for (int32_t threads : {0, 1, 2, 4}) {
    INFO("threads " << threads);
    cuvil_model *model = lib.make(threads);
    CallA call;
    call.x[4] = -2.5f;
    call.k[0] = -3;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    CHECK(lib.error().empty());
    CHECK(call.outputCorrect());
    CHECK(call.y[4] == -5.5f);
    // The instance is reusable.
    call.k[0] = 7;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    CHECK(call.outputCorrect());
    lib.destroy(model);
  }
  // NULL options means the defaults.
  cuvil_model *model = nullptr;
  REQUIRE(lib.create(nullptr, &model) == CUVIL_OK);
  CallA call;
  REQUIRE(call.run(lib, model) == CUVIL_OK);
  CHECK(call.outputCorrect());
  lib.destroy(model);
}

TEST_CASE("I1_null_pointers_name_the_parameter", "[I1]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make();

  CHECK(lib.create(nullptr, nullptr) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "model (the out-parameter) is NULL");
  lib.optionsInit(nullptr);
  CHECK(lib.error() == "options is NULL");

  struct Case {
    const char *what;
    void (*spoil)(CallA &);
    const char *message;
  };
  const Case cases[] = {
      {"x data", [](CallA &c) { c.inputs[0].data = nullptr; }, "input 'x': data is NULL"},
      {"k data", [](CallA &c) { c.inputs[1].data = nullptr; }, "input 'k': data is NULL"},
      {"x shape", [](CallA &c) { c.inputs[0].shape = nullptr; }, "input 'x': shape is NULL (rank 2)"},
      {"y data", [](CallA &c) { c.outputs[0].data = nullptr; }, "output 'y': data is NULL"},
      {"y shape", [](CallA &c) { c.outputs[0].shape = nullptr; }, "output 'y': shape is NULL (rank 2)"},
  };
  for (const Case &c : cases) {
    INFO(c.what);
    CallA call;
    c.spoil(call);
    CHECK(call.run(lib, model) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(lib.error() == c.message);
    CHECK(call.outputUntouched());
  }

  CallA call;
  CHECK(lib.run(nullptr, call.inputs, 2, call.outputs, 1) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "model is NULL");
  CHECK(lib.run(model, nullptr, 2, call.outputs, 1) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "inputs is NULL (the model takes 2 inputs)");
  CHECK(lib.run(model, call.inputs, 2, nullptr, 1) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "outputs is NULL (the model gives 1 output)");
  CHECK(call.outputUntouched());

  // The failures left the instance usable.
  REQUIRE(call.run(lib, model) == CUVIL_OK);
  CHECK(call.outputCorrect());
  lib.destroy(model);
}

TEST_CASE("I2_counts_expected_vs_got", "[I2]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make();
  CallA call;
  CHECK(lib.run(model, call.inputs, 1, call.outputs, 1) == CUVIL_ERR_COUNT);
  CHECK(lib.error() == "model 'fake_a': expected 2 inputs, got 1");
  CHECK(lib.run(model, call.inputs, 3, call.outputs, 1) == CUVIL_ERR_COUNT);
  CHECK(lib.error() == "model 'fake_a': expected 2 inputs, got 3");
  CHECK(lib.run(model, call.inputs, 2, call.outputs, 0) == CUVIL_ERR_COUNT);
  CHECK(lib.error() == "model 'fake_a': expected 1 output, got 0");
  CHECK(lib.run(model, call.inputs, 2, call.outputs, -1) == CUVIL_ERR_COUNT);
  CHECK(lib.error() == "model 'fake_a': expected 1 output, got -1");
  CHECK(call.outputUntouched());
  lib.destroy(model);
}

TEST_CASE("I3_dtype_rank_and_dims", "[I3]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make();
  struct Case {
    void (*spoil)(CallA &);
    cuvil_status status;
    const char *message;
  };
  const Case cases[] = {
      {[](CallA &c) { c.inputs[0].dtype = CUVIL_DTYPE_F64; }, CUVIL_ERR_DTYPE,
       "input 'x': expected dtype f32, got f64"},
      {[](CallA &c) { c.inputs[1].dtype = CUVIL_DTYPE_I32; }, CUVIL_ERR_DTYPE,
       "input 'k': expected dtype i64, got i32"},
      {[](CallA &c) { c.inputs[0].dtype = static_cast<cuvil_dtype>(42); }, CUVIL_ERR_DTYPE,
       "input 'x': expected dtype f32, got dtype(42)"},
      {[](CallA &c) { c.outputs[0].dtype = CUVIL_DTYPE_BF16; }, CUVIL_ERR_DTYPE,
       "output 'y': expected dtype f32, got bf16"},
      {[](CallA &c) { c.inputs[1].rank = 2; }, CUVIL_ERR_SHAPE, "input 'k': expected rank 1, got 2"},
      {[](CallA &c) { c.inputs[0].rank = 1; }, CUVIL_ERR_SHAPE, "input 'x': expected rank 2, got 1"},
      {[](CallA &c) { c.outputs[0].rank = 3; }, CUVIL_ERR_SHAPE, "output 'y': expected rank 2, got 3"},
      {[](CallA &c) { c.xShape[0] = 409; }, CUVIL_ERR_SHAPE, "input 'x' dim 0: expected 2, got 409"},
      {[](CallA &c) { c.xShape[1] = 4; }, CUVIL_ERR_SHAPE, "input 'x' dim 1: expected 3, got 4"},
      {[](CallA &c) { c.xShape[1] = -1; }, CUVIL_ERR_SHAPE, "input 'x' dim 1: expected 3, got -1"},
      {[](CallA &c) { c.kShape[0] = 0; }, CUVIL_ERR_SHAPE, "input 'k' dim 0: expected 1, got 0"},
  };
  for (const Case &c : cases) {
    INFO(c.message);
    CallA call;
    c.spoil(call);
    CHECK(call.run(lib, model) == c.status);
    CHECK(lib.error() == c.message);
    CHECK(call.outputUntouched());
  }
  lib.destroy(model);
}

// Buffers for one call of fake model dyn (y = k[0] * x, x and y f32 [-1, 3];
// seen: the shapes its entry was given).
struct CallDyn {
  std::vector<float> x, y;
  int64_t k[2] = {3, 0};
  int64_t seen[4] = {-9, -9, -9, -9};
  int64_t xShape[2], kShape[1] = {2}, yShape[2], seenShape[1] = {-7};
  cuvil_tensor inputs[2];
  cuvil_tensor outputs[2];

  CallDyn(int64_t rows, int64_t capacity) : x(static_cast<size_t>(rows * 3)), y(static_cast<size_t>(capacity * 3), -99.0f) {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i) - 2.5f;
    xShape[0] = rows;
    xShape[1] = 3;
    yShape[0] = capacity; // the buffer's capacity: read, since the dim is dynamic
    yShape[1] = -7;       // static: not read, written
    inputs[0] = {x.data(), x.size() * sizeof(float), CUVIL_DTYPE_F32, 2, xShape};
    inputs[1] = {k, sizeof(k), CUVIL_DTYPE_I64, 1, kShape};
    outputs[0] = {y.data(), y.size() * sizeof(float), CUVIL_DTYPE_F32, 2, yShape};
    outputs[1] = {seen, sizeof(seen), CUVIL_DTYPE_I64, 1, seenShape};
  }
  cuvil_status run(Library &lib, cuvil_model *model) { return lib.run(model, inputs, 2, outputs, 2); }
  bool outputCorrect() const {
    for (size_t i = 0; i < y.size(); ++i)
      if (y[i] != (i < x.size() ? 3.0f * x[i] : 0.0f))
        return false;
    return true;
  }
};

TEST_CASE("dynamic_dimensions_are_minus_one_and_take_any_size", "[abi2]") {
  Library lib("fake_model_dyn");
  cuvil_model *model = lib.make(2);
  cuvil_tensor_info info{};
  REQUIRE(lib.inputInfo(model, 0, &info) == CUVIL_OK);
  CHECK(std::string(info.name) == "x");
  REQUIRE(info.rank == 2);
  CHECK(info.shape[0] == -1);
  CHECK(info.shape[1] == 3);
  REQUIRE(lib.inputInfo(model, 1, &info) == CUVIL_OK);
  REQUIRE(info.rank == 1);
  CHECK(info.shape[0] == 2);
  REQUIRE(lib.outputInfo(model, 0, &info) == CUVIL_OK);
  CHECK(std::string(info.name) == "y");
  REQUIRE(info.rank == 2);
  CHECK(info.shape[0] == -1);
  CHECK(info.shape[1] == 3);

  SECTION("bounds: a static dimension's are its size, an undeclared dynamic one's 0 and -1") {
    int64_t lo[2] = {-9, -9}, hi[2] = {-9, -9};
    REQUIRE(lib.inputBounds(model, 0, lo, hi) == CUVIL_OK);
    CHECK(lo[0] == 0);
    CHECK(hi[0] == -1);
    CHECK(lo[1] == 3);
    CHECK(hi[1] == 3);
    REQUIRE(lib.outputBounds(model, 0, nullptr, hi) == CUVIL_OK); // either array may be NULL
    CHECK(hi[0] == -1);
    CHECK(lib.inputBounds(model, 2, lo, hi) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(lib.error() == "input index 2 is out of range: the model has 2 inputs");
    CHECK(lib.outputBounds(nullptr, 0, lo, hi) != CUVIL_OK);
  }

  SECTION("any size of the dynamic dimension runs, and the entry gets it") {
    for (int64_t rows : {4, 1, 17, 0}) {
      INFO("rows " << rows);
      CallDyn call(rows, rows);
      REQUIRE(call.run(lib, model) == CUVIL_OK);
      CHECK(lib.error().empty());
      CHECK(call.outputCorrect());
      CHECK(call.seen[0] == rows);
      CHECK(call.seen[1] == 3);
      CHECK(call.seen[2] == rows);
      CHECK(call.seen[3] == 3);
      CHECK(call.yShape[0] == rows);
      CHECK(call.yShape[1] == 3);
      CHECK(call.seenShape[0] == 4);
    }
    // No elements: NULL data is fine.
    CallDyn empty(0, 0);
    empty.inputs[0].data = nullptr;
    empty.outputs[0].data = nullptr;
    REQUIRE(empty.run(lib, model) == CUVIL_OK);
  }

  SECTION("an output's dynamic dimension is the buffer's capacity") {
    CallDyn call(2, 5);
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    CHECK(call.outputCorrect());
    CHECK(call.seen[2] == 5);
    CHECK(call.yShape[0] == 5); // the shape the buffer was filled in
    CallDyn tooSmall(4, 3);
    CHECK(tooSmall.run(lib, model) == CUVIL_ERR_MODEL);
    CHECK(lib.error() ==
          "model 'fake_dyn' failed: output 'y' has room for fewer rows than input 'x'");
    CHECK(tooSmall.yShape[0] == 3); // not written on failure
    CHECK(tooSmall.yShape[1] == -7);
  }

  SECTION("static dimensions must match, dynamic ones be sizes") {
    struct Case {
      void (*spoil)(CallDyn &);
      const char *message;
    };
    const Case cases[] = {
        {[](CallDyn &c) { c.xShape[1] = 4; }, "input 'x' dim 1: expected 3, got 4"},
        {[](CallDyn &c) { c.kShape[0] = 3; }, "input 'k' dim 0: expected 2, got 3"},
        {[](CallDyn &c) { c.xShape[0] = -1; },
         "input 'x' dim 0 is dynamic: expected a size >= 0, got -1"},
        {[](CallDyn &c) { c.yShape[0] = -2; },
         "output 'y' dim 0 is dynamic: its shape entry must be the buffer's capacity along it "
         "(>= 0), got -2"},
        {[](CallDyn &c) { c.xShape[0] = 5; }, "input 'x': buffer holds 48 bytes, needs 60 (f32 [5, 3])"},
        {[](CallDyn &c) { c.yShape[0] = 6; }, "output 'y': buffer holds 48 bytes, needs 72 (f32 [6, 3])"},
        {[](CallDyn &c) { c.xShape[0] = INT64_MAX / 2; },
         "input 'x': f32 [4611686018427387903, 3] is larger than the address space"},
    };
    for (const Case &c : cases) {
      INFO(c.message);
      CallDyn call(4, 4);
      c.spoil(call);
      CHECK(call.run(lib, model) == CUVIL_ERR_SHAPE);
      CHECK(lib.error() == c.message);
      CHECK(call.seen[0] == -9); // nothing ran
      CHECK(call.yShape[1] == -7);
    }
    CallDyn call(4, 4);
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    CHECK(call.outputCorrect());
  }
  lib.destroy(model);
}

TEST_CASE("I5_buffer_sizes_alignment_and_overlap", "[I5]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make(2);

  SECTION("too small, and larger than needed") {
    CallA call;
    call.inputs[0].byte_size = 20;
    CHECK(call.run(lib, model) == CUVIL_ERR_SHAPE);
    CHECK(lib.error() == "input 'x': buffer holds 20 bytes, needs 24 (f32 [2, 3])");
    call.inputs[0].byte_size = 24;
    call.inputs[1].byte_size = 7;
    CHECK(call.run(lib, model) == CUVIL_ERR_SHAPE);
    CHECK(lib.error() == "input 'k': buffer holds 7 bytes, needs 8 (i64 [1])");
    call.inputs[1].byte_size = 8;
    call.outputs[0].byte_size = 23;
    CHECK(call.run(lib, model) == CUVIL_ERR_SHAPE);
    CHECK(lib.error() == "output 'y': buffer holds 23 bytes, needs 24 (f32 [2, 3])");
    call.outputs[0].byte_size = 0;
    CHECK(call.run(lib, model) == CUVIL_ERR_SHAPE);
    CHECK(call.outputUntouched());
    call.inputs[0].byte_size = 1000;
    call.outputs[0].byte_size = 1000;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    CHECK(call.outputCorrect());
  }

  SECTION("misaligned data") {
    CallA call;
    alignas(16) unsigned char raw[64] = {};
    std::memcpy(raw + 1, call.x, sizeof(call.x));
    call.inputs[0].data = raw + 1;
    CHECK(call.run(lib, model) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(contains(lib.error(), "input 'x': data "));
    CHECK(contains(lib.error(), " is not aligned to its 4-byte elements"));
    CHECK(call.outputUntouched());
  }

  SECTION("outputs overlapping inputs") {
    CallA call;
    call.outputs[0].data = call.x; // in place
    CHECK(call.run(lib, model) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(lib.error() == "output 'y' overlaps input 'x'; in-place runs are not supported");

    alignas(8) float shared[12] = {1, 2, 3, 4, 5, 6};
    call.inputs[0].data = shared;
    call.outputs[0].data = shared + 5; // one element in common
    CHECK(call.run(lib, model) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(lib.error() == "output 'y' overlaps input 'x'; in-place runs are not supported");

    call.outputs[0].data = shared + 2;
    call.inputs[0].data = call.x;
    call.inputs[1].data = shared + 4; // k inside y
    CHECK(call.run(lib, model) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(lib.error() == "output 'y' overlaps input 'k'; in-place runs are not supported");

    // Adjacent but disjoint: x in shared[0..6), y in shared[6..12).
    call.inputs[0].data = shared;
    call.inputs[1].data = call.k;
    call.outputs[0].data = shared + 6;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    for (int i = 0; i < 6; ++i)
      CHECK(shared[6 + i] == shared[i] + 10.0f);
  }

  SECTION("outputs overlapping each other") {
    Library libB("fake_model_b");
    cuvil_model *modelB = libB.make(2);
    CallB call;
    call.outputs[1].data = &call.doubled[36];
    CHECK(call.run(libB, modelB) == CUVIL_ERR_INVALID_ARGUMENT);
    CHECK(libB.error() == "output 'blocks' overlaps output 'doubled'");
    libB.destroy(modelB);
  }
  lib.destroy(model);
}

TEST_CASE("I7_nan_and_inf_pass_through", "[I7]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make(2);
  CallA call;
  const float inf = std::numeric_limits<float>::infinity();
  const float values[6] = {std::nanf(""), inf, -inf, -0.0f, 3.0e38f, 1.0f};
  std::copy(std::begin(values), std::end(values), call.x);
  call.k[0] = 1;
  REQUIRE(call.run(lib, model) == CUVIL_OK);
  CHECK(std::isnan(call.y[0]));
  CHECK(call.y[1] == inf);
  CHECK(call.y[2] == -inf);
  CHECK(call.y[3] == 1.0f);
  CHECK(call.y[4] == 3.0e38f + 1.0f);
  CHECK(call.y[5] == 2.0f);
  lib.destroy(model);
}

TEST_CASE("model_failures_map_to_messages", "[api]") {
  Library lib("fake_model_b");
  cuvil_model *model = lib.make(3);
  CallB call;
  call.a[20] = -1;
  CHECK(call.run(lib, model) == CUVIL_ERR_MODEL);
  CHECK(lib.error() == "model 'fake_b' failed: input 'a' must not be negative");
  call.a[20] = 20;
  call.a[0] = 12345; // failure code 7: beyond the model's 3 messages
  CHECK(call.run(lib, model) == CUVIL_ERR_MODEL);
  CHECK(lib.error() == "model 'fake_b' failed with code 7 (no message for it)");
  // A failed call releases the instance.
  call.a[0] = 0;
  REQUIRE(call.run(lib, model) == CUVIL_OK);
  CHECK(call.outputCorrect());
  CHECK(lib.error().empty());
  lib.destroy(model);
}

TEST_CASE("parallel_for_splits_across_the_threads", "[threads]") {
  Library lib("fake_model_b");
  for (int32_t threads : {1, 2, 3, 4, 8, 36, 37, 64}) {
    INFO("threads " << threads);
    cuvil_model *model = lib.make(threads);
    for (int repeat = 0; repeat < 20; ++repeat) {
      CallB call(repeat);
      REQUIRE(call.run(lib, model) == CUVIL_OK);
      CHECK(call.outputCorrect());
      CHECK(call.blocks == std::min(threads, 37));
    }
    lib.destroy(model);
  }
}

TEST_CASE("I9_second_call_on_a_busy_instance", "[I9]") {
  Library lib("fake_model_b");
  cuvil_model *model = lib.make(2);
  cuvil_model *other = lib.make(2);

  // The first call holds the instance until released (see fake_model_b.c).
  CallB held;
  held.a[1] = 777;
  held.a[2] = 0; // the release flag
  std::atomic<int> heldStatus{-1};
  std::thread holder([&] { heldStatus = held.run(lib, model); });
  while (__atomic_load_n(&held.doubled[0], __ATOMIC_ACQUIRE) != 1)
    std::this_thread::yield();

  CallB second;
  CHECK(second.run(lib, model) == CUVIL_ERR_BUSY);
  CHECK(contains(lib.error(), "is running a call on another thread"));
  CHECK(second.doubled[5] == 0); // nothing ran
  // Another instance of the same model is not affected.
  REQUIRE(second.run(lib, other) == CUVIL_OK);
  CHECK(second.outputCorrect());

  __atomic_store_n(&held.a[2], 1, __ATOMIC_RELEASE);
  holder.join();
  CHECK(heldStatus == CUVIL_OK);
  // Free again.
  CallB third(5);
  REQUIRE(third.run(lib, model) == CUVIL_OK);
  CHECK(third.outputCorrect());
  lib.destroy(other);
  lib.destroy(model);
}

TEST_CASE("I9_many_threads_on_one_instance", "[I9]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make(2);
  constexpr int kThreads = 12, kCalls = 3000;
  std::atomic<int> ok{0}, busy{0}, wrong{0}, otherStatus{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        CallA call;
        for (int e = 0; e < 6; ++e)
          call.x[e] = static_cast<float>(t * 100 + e);
        call.k[0] = i % 50;
        cuvil_status status = call.run(lib, model);
        if (status == CUVIL_OK)
          (call.outputCorrect() ? ok : wrong)++;
        else if (status == CUVIL_ERR_BUSY)
          (call.outputUntouched() ? busy : wrong)++;
        else
          otherStatus++;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  INFO("ok " << ok << ", busy " << busy);
  CHECK(wrong == 0);
  CHECK(otherStatus == 0);
  CHECK(ok + busy == kThreads * kCalls);
  CHECK(ok > 0);
  lib.destroy(model);
}

TEST_CASE("I9_separate_instances_run_concurrently", "[I9]") {
  Library lib("fake_model_b");
  constexpr int kThreads = 16, kCalls = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      cuvil_options options;
      lib.optionsInit(&options);
      options.num_threads = 1 + t % 3;
      cuvil_model *model = nullptr;
      if (lib.create(&options, &model) != CUVIL_OK) {
        failures++;
        return;
      }
      for (int i = 0; i < kCalls; ++i) {
        CallB call(t * 1000 + i);
        if (call.run(lib, model) != CUVIL_OK || !call.outputCorrect() ||
            call.blocks != options.num_threads)
          failures++;
      }
      lib.destroy(model);
    });
  for (std::thread &thread : threads)
    thread.join();
  CHECK(failures == 0);
}

TEST_CASE("I10_two_models_in_one_process_and_reload", "[I10]") {
  for (int flags : {RTLD_NOW | RTLD_LOCAL, RTLD_NOW | RTLD_GLOBAL}) {
    INFO((flags & RTLD_GLOBAL ? "RTLD_GLOBAL" : "RTLD_LOCAL"));
    for (int round = 0; round < 3; ++round) {
      INFO("round " << round);
      Library libA("fake_model_a", flags);
      Library libB("fake_model_b", flags);
      REQUIRE(libA.create != libB.create); // each library has its own runtime
      cuvil_model *modelA = libA.make(2);
      cuvil_model *modelB = libB.make(2);
      CHECK(libA.numInputs(modelA) == 2);
      CHECK(libB.numInputs(modelB) == 1);
      CHECK(libB.numOutputs(modelB) == 2);

      CallA callA;
      CallB callB(3);
      REQUIRE(callA.run(libA, modelA) == CUVIL_OK);
      REQUIRE(callB.run(libB, modelB) == CUVIL_OK);
      CHECK(callA.outputCorrect());
      CHECK(callB.outputCorrect());

      // An instance handed to the other library is refused, not misused.
      CHECK(libB.numInputs(modelA) == -1);
      CHECK(contains(libB.error(), "was created by another model library"));
      CHECK(libA.error().empty()); // separate libraries, separate messages

      libA.destroy(modelA);
      libB.destroy(modelB);
      libA.close();
      libB.close();
      // Nothing keeps the libraries mapped after dlclose.
      CHECK(dlopen(modelPath("fake_model_a").c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
      CHECK(dlopen(modelPath("fake_model_b").c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
    }
  }
}

TEST_CASE("I11_options_struct_size_and_model_abi", "[I11]") {
  Library lib("fake_model_a");
  cuvil_options options;
  lib.optionsInit(&options);
  CHECK(options.struct_size == sizeof(cuvil_options));
  CHECK(options.num_threads == 0);
  cuvil_model *model = reinterpret_cast<cuvil_model *>(0x1);

  options.struct_size = 4;
  CHECK(lib.create(&options, &model) == CUVIL_ERR_ABI);
  CHECK(model == nullptr);
  CHECK(lib.error() == "options.struct_size is 4, smaller than the 8 bytes of the first "
                       "cuvil_options; initialise options with cuvil_options_init");
  options.struct_size = 0;
  CHECK(lib.create(&options, &model) == CUVIL_ERR_ABI);

  // A newer caller's larger struct: fine while the unknown fields are zero.
  struct NewerOptions {
    cuvil_options base;
    int32_t future_field;
    int32_t another_field;
  } newer{};
  lib.optionsInit(&newer.base);
  newer.base.struct_size = sizeof(NewerOptions);
  newer.base.num_threads = 2;
  REQUIRE(lib.create(&newer.base, &model) == CUVIL_OK);
  lib.destroy(model);
  newer.another_field = 1;
  CHECK(lib.create(&newer.base, &model) == CUVIL_ERR_ABI);
  CHECK(lib.error() == "options set a field at byte 16, beyond the 12 bytes this library (ABI 3) "
                       "knows; use a library built with the same cuvil/runtime.h");
  newer.base.struct_size = 1u << 20;
  CHECK(lib.create(&newer.base, &model) == CUVIL_ERR_ABI);
  CHECK(lib.error() == "options.struct_size is 1048576: not a cuvil_options");

  // A caller of ABI 2: the struct ends after num_threads (device: auto).
  struct OptionsV2 {
    uint32_t struct_size;
    int32_t num_threads;
  } v2 = {sizeof(OptionsV2), 1};
  REQUIRE(lib.create(reinterpret_cast<const cuvil_options *>(&v2), &model) == CUVIL_OK);
  lib.destroy(model);

  lib.optionsInit(&options);
  CHECK(options.device == CUVIL_DEVICE_AUTO);
  options.num_threads = -1;
  CHECK(lib.create(&options, &model) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(lib.error() == "options.num_threads is -1; use 0 (all online cores) or 1..1024");
  options.num_threads = 5000;
  CHECK(lib.create(&options, &model) == CUVIL_ERR_INVALID_ARGUMENT);

  // A model of an ABI this runtime does not know: the version says so
  // before create, and create refuses it.
  Library bad("fake_model_bad_abi");
  CHECK(bad.abiVersion() == CUVIL_ABI_VERSION);
  CHECK(bad.modelAbiVersion() == 99);
  CHECK(bad.create(nullptr, &model) == CUVIL_ERR_ABI);
  CHECK(model == nullptr);
  CHECK(bad.error() == "model 'fake_bad_abi' was generated for runtime model ABI 99 but this "
                       "runtime implements 3; re-export it with a matching cuvil-export");
  cuvil_options defaults;
  bad.optionsInit(&defaults);
  CHECK(bad.create(&defaults, &model) == CUVIL_ERR_ABI);
  CHECK(model == nullptr);
}

TEST_CASE("I13_error_messages_are_per_thread", "[I13]") {
  Library lib("fake_model_a");
  cuvil_model *model = lib.make(1);
  cuvil_model *model2 = lib.make(1);
  std::atomic<int> mixed{0};
  std::atomic<bool> go{false};
  auto countErrors = [&](cuvil_model *m) {
    while (!go)
      std::this_thread::yield();
    for (int i = 0; i < 5000; ++i) {
      CallA call;
      if (lib.run(m, call.inputs, 1, call.outputs, 1) != CUVIL_ERR_COUNT ||
          lib.error() != "model 'fake_a': expected 2 inputs, got 1")
        mixed++;
    }
  };
  auto shapeErrors = [&](cuvil_model *m) {
    while (!go)
      std::this_thread::yield();
    for (int i = 0; i < 5000; ++i) {
      CallA call;
      call.xShape[0] = 409;
      if (call.run(lib, m) != CUVIL_ERR_SHAPE ||
          lib.error() != "input 'x' dim 0: expected 2, got 409")
        mixed++;
      // Success clears this thread's message only.
      CallA good;
      if (good.run(lib, m) != CUVIL_OK || !lib.error().empty())
        mixed++;
    }
  };
  std::thread first(countErrors, model);
  std::thread second(shapeErrors, model2);
  go = true;
  first.join();
  second.join();
  CHECK(mixed == 0);
  lib.destroy(model);
  lib.destroy(model2);
}

TEST_CASE("cpu_features_refuse_instead_of_sigill", "[cpu]") {
  cuvil_model *model = nullptr;
  {
    Library lib("fake_model_c");
    CHECK(lib.create(nullptr, &model) == CUVIL_ERR_UNSUPPORTED_CPU);
    CHECK(model == nullptr);
    std::string message = lib.error();
    INFO(message);
    CHECK(contains(message, "model 'fake_c' was compiled for x86_64 CPU 'sapphirerapids'"));
    CHECK(contains(message, "cuvil-test-feature (unknown to this runtime)"));
    CHECK(contains(message, "avx512f") == !__builtin_cpu_supports("avx512f"));

    HiddenFeatures hide("avx512f");
    CHECK(lib.create(nullptr, &model) == CUVIL_ERR_UNSUPPORTED_CPU);
    CHECK(contains(lib.error(), "lacks: avx512f (hidden by CUVIL_TEST_HIDE_CPU_FEATURES), "
                                "cuvil-test-feature (unknown to this runtime)"));
  }
  Library lib("fake_model_a");
  {
    // Hiding features model A does not need changes nothing.
    HiddenFeatures hide("avx512f,amx-tile,sse4.1");
    REQUIRE(lib.create(nullptr, &model) == CUVIL_OK);
    CallA call;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    CHECK(call.outputCorrect());
    lib.destroy(model);
  }
  {
    HiddenFeatures hide(" avx2 , sse4.2 ");
    CHECK(lib.create(nullptr, &model) == CUVIL_ERR_UNSUPPORTED_CPU);
    CHECK(model == nullptr);
    CHECK(contains(lib.error(), "model 'fake_a' was compiled for x86_64 CPU 'x86-64-v2' and "
                                "needs CPU features this machine lacks: sse4.2 (hidden by "
                                "CUVIL_TEST_HIDE_CPU_FEATURES)"));
  }
  REQUIRE(lib.create(nullptr, &model) == CUVIL_OK);
  lib.destroy(model);
}

TEST_CASE("libraries_export_only_the_c_api", "[symbols]") {
  const std::set<std::string> api = {
      "cuvil_abi_version",      "cuvil_model_abi_version", "cuvil_options_init",
      "cuvil_last_error",
      "cuvil_model_create",     "cuvil_model_destroy",     "cuvil_model_num_inputs",
      "cuvil_model_num_outputs", "cuvil_model_input_info", "cuvil_model_output_info",
      "cuvil_model_run",        "cuvil_model_input_index", "cuvil_model_output_index",
      "cuvil_tensor_byte_size", "cuvil_model_profile_count", "cuvil_model_profile_entry",
      "cuvil_model_profile_reset", "cuvil_model_input_bounds", "cuvil_model_output_bounds",
      "cuvil_model_set_npu_recording", "cuvil_model_npu_report", "cuvil_model_branch_count",
      "cuvil_model_branch_entry", "cuvil_model_branch_reset", "cuvil_model_device",
      "cuvil_model_run_device"};
  const std::set<std::string> allowedNeeded = {"libc.so.6", "libm.so.6", "libpthread.so.0",
                                               "ld-linux-x86-64.so.2"};
  for (const char *name :
       {"fake_model_a", "fake_model_b", "fake_model_c", "fake_model_bad_abi", "fake_model_dyn",
        "fake_model_cuda", "fake_model_cuda_only"}) {
    INFO(name);
    std::set<std::string> exported;
    for (const std::string &line :
         commandLines(std::string(CUVIL_TEST_NM) + " -D --defined-only " + modelPath(name))) {
      INFO(line);
      // "0000000000001234 T cuvil_model_run"
      size_t last = line.rfind(' ');
      REQUIRE(last != std::string::npos);
      exported.insert(line.substr(last + 1));
    }
    CHECK(exported == api);

    int needed = 0;
    for (const std::string &line :
         commandLines(std::string(CUVIL_TEST_READELF) + " -d " + modelPath(name))) {
      if (!contains(line, "(NEEDED)"))
        continue;
      // " 0x0000000000000001 (NEEDED)  Shared library: [libc.so.6]"
      size_t open = line.find('['), close = line.find(']');
      REQUIRE(open != std::string::npos);
      std::string library = line.substr(open + 1, close - open - 1);
      INFO(library);
      CHECK(allowedNeeded.count(library) == 1);
      ++needed;
    }
    CHECK(needed >= 1);
  }
}

TEST_CASE("I8_destroy_during_a_call_waits_and_a_dead_handle_is_refused", "[I8]") {
  Library lib("fake_model_b");
  cuvil_model *model = lib.make(2);
  // A call holds the instance (fake_model_b.c) while another thread destroys
  // it: destroy waits for the call, which finishes on intact memory.
  CallB held;
  held.a[1] = 777;
  held.a[2] = 0; // the release flag
  std::atomic<int> heldStatus{-1};
  std::thread holder([&] { heldStatus = held.run(lib, model); });
  while (__atomic_load_n(&held.doubled[0], __ATOMIC_ACQUIRE) != 1)
    std::this_thread::yield();
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    lib.destroy(model);
    destroyed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(destroyed); // still waiting for the call
  __atomic_store_n(&held.a[2], 1, __ATOMIC_RELEASE);
  holder.join();
  destroyer.join();
  CHECK(heldStatus == CUVIL_OK);
  CHECK(destroyed);

  // Something that is no instance (a zeroed block, as a freed and cleared
  // one would read): refused by every call, nothing touched.
  alignas(64) unsigned char fake[512] = {};
  cuvil_model *bogus = reinterpret_cast<cuvil_model *>(fake);
  CHECK(lib.numInputs(bogus) == -1);
  CHECK(contains(lib.error(), "is not a live instance"));
  CallB call;
  CHECK(call.run(lib, bogus) == CUVIL_ERR_INVALID_ARGUMENT);
  lib.destroy(bogus); // ignored, with the message
  CHECK(contains(lib.error(), "is not a live instance"));
  for (unsigned char c : fake)
    CHECK(c == 0);
}
