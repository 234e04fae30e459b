//===- CudaRuntimeTest.cpp - The CUDA backend against a stand-in driver ---===//
//
// Fake models with CUDA code (models/fake_model_cuda.c, four variants) are
// loaded with dlopen like ApiTest's; the runtime loads the stand-in driver
// (fake_cuda/fake_cuda.c) through CUVIL_CUDA_DRIVER, which the tests steer
// with its environment (devices, architecture, injected failures) and whose
// call log they read. No GPU is needed.
//
//===----------------------------------------------------------------------===//
#include "cuvil/runtime.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

// The driver's opaque handles, named as the driver (and the stand-in) name them.
struct CUctx_st;
struct CUstream_st;

namespace {

using CUdeviceptr = unsigned long long;

std::string modelPath(const std::string &name) {
  return std::string(CUVIL_TEST_MODEL_DIR) + "/lib" + name + ".so";
}

std::string logPath() {
  return std::string(CUVIL_TEST_WORK_DIR) + "/fake_cuda_" + std::to_string(getpid()) + ".log";
}

// The stand-in driver, loaded by the test too (the runtime's dlopen then
// finds the same copy, so its state is shared and outlives instances).
struct FakeDriver {
  void *handle = nullptr;
  long (*liveAllocations)() = nullptr;
  void (*resetCounts)() = nullptr;
  int (*init)(unsigned) = nullptr;
  int (*retain)(CUctx_st **, int) = nullptr;
  int (*release)(int) = nullptr;
  int (*push)(CUctx_st *) = nullptr;
  int (*pop)(CUctx_st **) = nullptr;
  int (*alloc)(CUdeviceptr *, size_t) = nullptr;
  int (*free)(CUdeviceptr) = nullptr;
  int (*toDevice)(CUdeviceptr, const void *, size_t) = nullptr;
  int (*toHost)(void *, CUdeviceptr, size_t) = nullptr;
  int (*streamCreate)(CUstream_st **, unsigned) = nullptr;
  int (*streamDestroy)(CUstream_st *) = nullptr;

  FakeDriver() {
    handle = dlopen(CUVIL_TEST_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return;
    bind(liveAllocations, "fake_cuda_live_allocations");
    bind(resetCounts, "fake_cuda_reset_counts");
    bind(init, "cuInit");
    bind(retain, "cuDevicePrimaryCtxRetain");
    bind(release, "cuDevicePrimaryCtxRelease_v2");
    bind(push, "cuCtxPushCurrent_v2");
    bind(pop, "cuCtxPopCurrent_v2");
    bind(alloc, "cuMemAlloc_v2");
    bind(free, "cuMemFree_v2");
    bind(toDevice, "cuMemcpyHtoD_v2");
    bind(toHost, "cuMemcpyDtoH_v2");
    bind(streamCreate, "cuStreamCreate");
    bind(streamDestroy, "cuStreamDestroy_v2");
  }
  template <typename Fn> void bind(Fn &fn, const char *name) {
    fn = reinterpret_cast<Fn>(dlsym(handle, name));
  }
};

FakeDriver &fake() {
  static FakeDriver driver;
  REQUIRE(driver.handle != nullptr);
  return driver;
}

// The environment of one case: the stand-in driver, a fresh log, and
// whatever the case sets; everything restored at the end.
struct Environment {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  long live = 0; // the stand-in's allocations when the case began

  Environment() {
    set("CUVIL_CUDA_DRIVER", CUVIL_TEST_FAKE_CUDA);
    set("CUVIL_FAKE_CUDA_LOG", logPath());
    unset("CUVIL_FAKE_CUDA_DEVICES");
    unset("CUVIL_FAKE_CUDA_SM");
    unset("CUVIL_FAKE_CUDA_FAIL");
    unset("CUVIL_CUDA_DEVICE");
    std::remove(logPath().c_str());
    fake().resetCounts();
    live = fake().liveAllocations();
  }
  // Device memory allocated since the case began and not freed.
  long leaked() const { return fake().liveAllocations() - live; }
  ~Environment() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second)
        setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        unsetenv(it->first.c_str());
    }
    std::remove(logPath().c_str());
  }
  void remember(const std::string &name) {
    const char *old = getenv(name.c_str());
    saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
  }
  void set(const std::string &name, const std::string &value) {
    remember(name);
    setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string &name) {
    remember(name);
    unsetenv(name.c_str());
  }
  // The injected failure; counting calls anew.
  void fail(const std::string &spec) {
    set("CUVIL_FAKE_CUDA_FAIL", spec);
    fake().resetCounts();
  }
};

std::vector<std::string> logLines() {
  std::vector<std::string> lines;
  std::ifstream in(logPath());
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// Lines of the log that start with `prefix`.
int countLog(const std::string &prefix) {
  int count = 0;
  for (const std::string &line : logLines())
    count += line.compare(0, prefix.size(), prefix) == 0;
  return count;
}

void clearLog() { std::remove(logPath().c_str()); }

struct Library {
  void *handle = nullptr;
  decltype(&cuvil_abi_version) abiVersion = nullptr;
  decltype(&cuvil_options_init) optionsInit = nullptr;
  decltype(&cuvil_last_error) lastError = nullptr;
  decltype(&cuvil_model_create) create = nullptr;
  decltype(&cuvil_model_destroy) destroy = nullptr;
  decltype(&cuvil_model_run) run = nullptr;
  decltype(&cuvil_model_device) device = nullptr;
  decltype(&cuvil_model_run_device) runDevice = nullptr;

  explicit Library(const std::string &name) {
    handle = dlopen(modelPath(name).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      FAIL("dlopen " << name << ": " << dlerror());
    bind(abiVersion, "cuvil_abi_version");
    bind(optionsInit, "cuvil_options_init");
    bind(lastError, "cuvil_last_error");
    bind(create, "cuvil_model_create");
    bind(destroy, "cuvil_model_destroy");
    bind(run, "cuvil_model_run");
    bind(device, "cuvil_model_device");
    bind(runDevice, "cuvil_model_run_device");
  }
  ~Library() {
    if (handle)
      dlclose(handle);
  }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  // create with `device`: the status, *model (NULL on failure).
  cuvil_status make(cuvil_model **model, int32_t device = CUVIL_DEVICE_AUTO) {
    cuvil_options options;
    optionsInit(&options);
    options.num_threads = 1;
    options.device = device;
    return create(&options, model);
  }
  cuvil_model *mustMake(int32_t device = CUVIL_DEVICE_AUTO) {
    cuvil_model *model = nullptr;
    cuvil_status status = make(&model, device);
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

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// One call of fake_cuda: y = x + 1, w = z (n elements).
struct Call {
  float x[6] = {1, 2, 3, 4, 5, 6};
  float y[6];
  std::vector<float> z, w;
  int64_t xShape[2] = {2, 3};
  int64_t yShape[2] = {-1, -1};
  int64_t zShape[1];
  int64_t wShape[1];
  cuvil_tensor inputs[2];
  cuvil_tensor outputs[2];

  explicit Call(int64_t n = 5) : z(n), w(n, -99.0f) {
    std::fill(std::begin(y), std::end(y), -99.0f);
    for (int64_t i = 0; i < n; ++i)
      z[i] = 0.5f * (float)i - 3;
    zShape[0] = wShape[0] = n;
    inputs[0] = {x, sizeof x, CUVIL_DTYPE_F32, 2, xShape};
    inputs[1] = {z.data(), z.size() * sizeof(float), CUVIL_DTYPE_F32, 1, zShape};
    outputs[0] = {y, sizeof y, CUVIL_DTYPE_F32, 2, yShape};
    outputs[1] = {w.data(), w.size() * sizeof(float), CUVIL_DTYPE_F32, 1, wShape};
  }
  cuvil_status run(Library &lib, cuvil_model *model) {
    return lib.run(model, inputs, 2, outputs, 2);
  }
  void checkResults() const {
    for (int i = 0; i < 6; ++i)
      CHECK(y[i] == x[i] + 1);
    CHECK(yShape[0] == 2);
    CHECK(yShape[1] == 3);
    CHECK(wShape[0] == (int64_t)z.size());
    for (size_t i = 0; i < z.size(); ++i)
      CHECK(w[i] == z[i]);
  }
};

} // namespace

TEST_CASE("cuda: the C API version is 3 and the device functions are exported", "[cuda]") {
  Environment env;
  STATIC_REQUIRE(CUVIL_ABI_VERSION == 3);
  STATIC_REQUIRE(CUVIL_ERR_DEVICE == 10);
  Library lib("fake_model_cuda");
  CHECK(lib.abiVersion() == 3);
  // A library without CUDA code: the CPU, and a clear refusal of CUDA.
  Library plain("fake_model_a");
  auto *device = reinterpret_cast<decltype(&cuvil_model_device)>(dlsym(plain.handle, "cuvil_model_device"));
  REQUIRE(device != nullptr);
  auto *optionsInit = reinterpret_cast<decltype(&cuvil_options_init)>(dlsym(plain.handle, "cuvil_options_init"));
  auto *create = reinterpret_cast<decltype(&cuvil_model_create)>(dlsym(plain.handle, "cuvil_model_create"));
  auto *destroy = reinterpret_cast<decltype(&cuvil_model_destroy)>(dlsym(plain.handle, "cuvil_model_destroy"));
  auto *lastError = reinterpret_cast<decltype(&cuvil_last_error)>(dlsym(plain.handle, "cuvil_last_error"));
  cuvil_options options;
  optionsInit(&options);
  CHECK(options.device == CUVIL_DEVICE_AUTO);
  cuvil_model *model = nullptr;
  REQUIRE(create(&options, &model) == CUVIL_OK);
  CHECK(std::string(device(model)) == "cpu");
  destroy(model);
  options.device = CUVIL_DEVICE_CUDA;
  CHECK(create(&options, &model) == CUVIL_ERR_DEVICE);
  CHECK(model == nullptr);
  CHECK(std::string(lastError()).find("has no CUDA code") != std::string::npos);
  CHECK(countLog("cuInit") == 0); // a library without CUDA code never loads the driver
  CHECK(device(nullptr) == nullptr);
}

TEST_CASE("cuda: without a driver, auto falls back to the CPU code or fails", "[cuda]") {
  Environment env;
  env.set("CUVIL_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  {
    Library lib("fake_model_cuda");
    cuvil_model *model = lib.mustMake();
    std::string device = lib.device(model);
    CHECK(startsWith(device, "cpu (fallback: no CUDA driver (/nonexistent/libcuda.so.1"));
    Call call;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    call.checkResults();
    // cuvil_model_run_device needs a GPU instance.
    CHECK(lib.runDevice(model, call.inputs, 2, call.outputs, 2, nullptr) == CUVIL_ERR_DEVICE);
    CHECK(lib.error().find("runs on the CPU") != std::string::npos);
    lib.destroy(model);
    // Asked for CUDA: no fallback.
    cuvil_model *none = nullptr;
    CHECK(lib.make(&none, CUVIL_DEVICE_CUDA) == CUVIL_ERR_DEVICE);
    CHECK(none == nullptr);
    CHECK(lib.error().find("no CUDA driver (/nonexistent/libcuda.so.1") != std::string::npos);
  }
  {
    Library lib("fake_model_cuda_only");
    cuvil_model *model = nullptr;
    CHECK(lib.make(&model) == CUVIL_ERR_DEVICE);
    CHECK(model == nullptr);
    CHECK(startsWith(lib.error(), "model 'fake_cuda': no CUDA driver (/nonexistent/libcuda.so.1: "));
  }
  // The default name, which this machine lacks (no GPU here; skipped where
  // a real driver exists).
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    env.unset("CUVIL_CUDA_DRIVER");
    void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!real) {
      Library lib("fake_model_cuda_only");
      cuvil_model *model = nullptr;
      CHECK(lib.make(&model) == CUVIL_ERR_DEVICE);
      CHECK(startsWith(lib.error(), "model 'fake_cuda': no CUDA driver (libcuda.so.1: "));
    } else {
      dlclose(real);
    }
  }
}

TEST_CASE("cuda: no device, a failing cuInit, a device too old", "[cuda]") {
  Environment env;
  Library fallback("fake_model_cuda");
  Library only("fake_model_cuda_only");
  cuvil_model *model = nullptr;

  env.set("CUVIL_FAKE_CUDA_DEVICES", "0");
  CHECK(only.make(&model) == CUVIL_ERR_DEVICE);
  CHECK(only.error() ==
        "model 'fake_cuda': cuInit failed: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected");
  model = fallback.mustMake();
  CHECK(std::string(fallback.device(model)) ==
        "cpu (fallback: cuInit failed: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected)");
  Call call;
  REQUIRE(call.run(fallback, model) == CUVIL_OK);
  call.checkResults();
  fallback.destroy(model);

  env.set("CUVIL_FAKE_CUDA_DEVICES", "1");
  env.fail("cuDeviceGetCount:3");
  CHECK(only.make(&model) == CUVIL_ERR_DEVICE);
  CHECK(only.error() == "model 'fake_cuda': cuDeviceGetCount failed: CUDA_ERROR_NOT_INITIALIZED: "
                        "initialization error");
  env.fail("");

  env.set("CUVIL_FAKE_CUDA_SM", "75");
  CHECK(only.make(&model) == CUVIL_ERR_DEVICE);
  CHECK(only.error() == "model 'fake_cuda': device 0 'Cuvil Fake GPU 0' is sm_75, older than every "
                        "architecture this library was compiled for (sm_80, sm_90)");
  model = fallback.mustMake();
  CHECK(startsWith(fallback.device(model), "cpu (fallback: device 0 'Cuvil Fake GPU 0' is sm_75"));
  fallback.destroy(model);
  CHECK(fallback.make(&model, CUVIL_DEVICE_CUDA) == CUVIL_ERR_DEVICE);
  CHECK(env.leaked() == 0);
}

TEST_CASE("cuda: the image for the device's architecture", "[cuda]") {
  Environment env;
  Library lib("fake_model_cuda_only");
  struct Case {
    const char *sm, *kind, *device;
  } cases[] = {
      {"80", "ptx", "cuda:Cuvil Fake GPU 0 (sm_80, device 0, PTX compiled by the driver from sm_80)"},
      {"86", "ptx", "cuda:Cuvil Fake GPU 0 (sm_86, device 0, PTX compiled by the driver from sm_80)"},
      {"90", "cubin", "cuda:Cuvil Fake GPU 0 (sm_90, device 0, cubin sm_90)"},
      {"100", "ptx", "cuda:Cuvil Fake GPU 0 (sm_100, device 0, PTX compiled by the driver from sm_80)"},
  };
  for (const Case &c : cases) {
    INFO("sm_" << c.sm);
    env.set("CUVIL_FAKE_CUDA_SM", c.sm);
    clearLog();
    cuvil_model *model = lib.mustMake();
    CHECK(std::string(lib.device(model)) == c.device);
    CHECK(countLog(std::string("cuModuleLoadDataEx kind=") + c.kind) == 1);
    CHECK(countLog("cuModuleLoadDataEx") == 1);
    Call call;
    REQUIRE(call.run(lib, model) == CUVIL_OK);
    call.checkResults();
    lib.destroy(model);
  }
  // Another device by ordinal; an ordinal that does not exist is an error
  // even where the CPU code could run.
  env.set("CUVIL_FAKE_CUDA_SM", "90");
  env.set("CUVIL_FAKE_CUDA_DEVICES", "2");
  env.set("CUVIL_CUDA_DEVICE", "1");
  cuvil_model *model = lib.mustMake();
  CHECK(std::string(lib.device(model)) == "cuda:Cuvil Fake GPU 1 (sm_90, device 1, cubin sm_90)");
  lib.destroy(model);
  env.set("CUVIL_CUDA_DEVICE", "2");
  Library fallback("fake_model_cuda");
  CHECK(fallback.make(&model) == CUVIL_ERR_DEVICE);
  CHECK(fallback.error() == "model 'fake_cuda': CUVIL_CUDA_DEVICE is '2', but the devices are 0..1");
  CHECK(env.leaked() == 0);
}

TEST_CASE("cuda: the device option, and older options structs", "[cuda]") {
  Environment env;
  Library fallback("fake_model_cuda");
  Library only("fake_model_cuda_only");
  cuvil_model *model = fallback.mustMake(CUVIL_DEVICE_CPU);
  CHECK(std::string(fallback.device(model)) == "cpu");
  CHECK(countLog("cuInit") == 0); // the driver is not even loaded
  Call call;
  REQUIRE(call.run(fallback, model) == CUVIL_OK);
  call.checkResults();
  fallback.destroy(model);

  CHECK(only.make(&model, CUVIL_DEVICE_CPU) == CUVIL_ERR_DEVICE);
  CHECK(only.error() == "model 'fake_cuda': this library has no CPU code: re-export with --target "
                        "x86_64,cuda");
  model = fallback.mustMake(CUVIL_DEVICE_CUDA);
  CHECK(startsWith(fallback.device(model), "cuda:"));
  fallback.destroy(model);

  CHECK(fallback.make(&model, 7) == CUVIL_ERR_INVALID_ARGUMENT);
  CHECK(fallback.error().find("options.device is 7") != std::string::npos);
  CHECK(fallback.make(&model, -1) == CUVIL_ERR_INVALID_ARGUMENT);

  // A caller of C API 2: the struct ends after num_threads; device: auto.
  struct OptionsV2 {
    uint32_t struct_size;
    int32_t num_threads;
  } old = {sizeof(OptionsV2), 1};
  model = nullptr;
  REQUIRE(fallback.create(reinterpret_cast<const cuvil_options *>(&old), &model) == CUVIL_OK);
  CHECK(startsWith(fallback.device(model), "cuda:"));
  fallback.destroy(model);
  // No options at all: auto too.
  REQUIRE(fallback.create(nullptr, &model) == CUVIL_OK);
  CHECK(startsWith(fallback.device(model), "cuda:"));
  fallback.destroy(model);
}

TEST_CASE("cuda: a run uploads the inputs, launches, downloads the outputs", "[cuda]") {
  Environment env;
  Library lib("fake_model_cuda");
  cuvil_model *model = lib.mustMake();
  REQUIRE(startsWith(lib.device(model), "cuda:Cuvil Fake GPU 0 (sm_80"));
  // Created: the arena (24 bytes) and x, y; z and w have no bound yet.
  CHECK(countLog("cuMemAlloc_v2 bytes=24") == 3);
  CHECK(countLog("cuMemAlloc_v2") == 3);
  CHECK(countLog("cuStreamCreate") == 1);

  clearLog();
  Call first(5);
  REQUIRE(first.run(lib, model) == CUVIL_OK);
  INFO(lib.error());
  first.checkResults();
  CHECK(countLog("cuMemcpyHtoDAsync_v2 bytes=24") == 2); // x and the weights
  CHECK(countLog("cuMemcpyHtoDAsync_v2 bytes=20") == 1);
  CHECK(countLog("cuMemAlloc_v2 bytes=20") == 2); // z and w, on first use
  CHECK(countLog("cuLaunchKernel name=fake_copy grid=1,1,1 block=6,1,1 shared=0 params=3") == 1);
  CHECK(countLog("cuLaunchKernel name=fake_add grid=1,1,1 block=6,1,1 shared=0 params=4") == 1);
  CHECK(countLog("cuLaunchKernel name=fake_copy grid=1,1,1 block=256,1,1 shared=0 params=3") == 1);
  CHECK(countLog("cuMemcpyDtoHAsync_v2 bytes=24") == 1);
  CHECK(countLog("cuMemcpyDtoHAsync_v2 bytes=20") == 1);
  CHECK(countLog("cuStreamSynchronize") == 1);

  // The weights stay on the device; z and w grow for a larger run.
  clearLog();
  Call second(300);
  second.x[0] = 41;
  REQUIRE(second.run(lib, model) == CUVIL_OK);
  second.checkResults();
  CHECK(countLog("cuMemcpyHtoDAsync_v2 bytes=24") == 1); // x only
  CHECK(countLog("cuMemAlloc_v2 bytes=1200") == 2);
  CHECK(countLog("cuLaunchKernel name=fake_copy grid=2,1,1 block=256,1,1") == 1);
  clearLog();
  Call third(0); // an empty tensor: nothing to copy
  REQUIRE(third.run(lib, model) == CUVIL_OK);
  third.checkResults();
  CHECK(countLog("cuMemAlloc_v2") == 0);
  CHECK(countLog("cuMemcpyHtoDAsync_v2") == 1); // x only

  // Argument checks are the CPU path's, before anything reaches the device.
  clearLog();
  Call bad;
  bad.xShape[1] = 4;
  CHECK(bad.run(lib, model) == CUVIL_ERR_SHAPE);
  CHECK(lib.error() == "input 'x' dim 1: expected 3, got 4");
  CHECK(logLines().empty());

  lib.destroy(model);
  CHECK(env.leaked() == 0);
  CHECK(countLog("cuModuleUnload") == 1);
  CHECK(countLog("cuStreamDestroy_v2") == 1);
  CHECK(countLog("cuDevicePrimaryCtxRelease_v2 device=0 references=0") == 1);

  // Two instances: weights uploaded once each.
  clearLog();
  cuvil_model *a = lib.mustMake();
  cuvil_model *b = lib.mustMake();
  for (int i = 0; i < 2; ++i) {
    Call ca, cb;
    REQUIRE(ca.run(lib, a) == CUVIL_OK);
    REQUIRE(cb.run(lib, b) == CUVIL_OK);
    ca.checkResults();
    cb.checkResults();
  }
  CHECK(countLog("cuMemcpyHtoDAsync_v2 bytes=24") == 2 * 2 + 2); // x per run, weights per instance
  lib.destroy(a);
  lib.destroy(b);
  CHECK(env.leaked() == 0);
}

TEST_CASE("cuda: out of device memory at create", "[cuda]") {
  Environment env;
  Library lib("fake_model_cuda");
  cuvil_model *model = nullptr;
  env.fail("cuMemAlloc_v2:2");
  CHECK(lib.make(&model) == CUVIL_ERR_OUT_OF_MEMORY);
  CHECK(model == nullptr);
  CHECK(lib.error() == "model 'fake_cuda': cannot allocate 24 bytes of GPU memory for the arena "
                       "(working memory): cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY: out of "
                       "memory");
  env.fail("cuMemAlloc_v2:2@3"); // the arena and x succeed, y fails
  CHECK(lib.make(&model) == CUVIL_ERR_OUT_OF_MEMORY);
  CHECK(lib.error() == "model 'fake_cuda': cannot allocate 24 bytes of GPU memory for output 'y': "
                       "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  CHECK(env.leaked() == 0);
  CHECK(countLog("cuDevicePrimaryCtxRelease_v2 device=0 references=0") == 2);
  // At run time: the weights, then a dynamic tensor.
  env.fail("");
  model = lib.mustMake();
  env.fail("cuMemAlloc_v2:2");
  Call call;
  CHECK(call.run(lib, model) == CUVIL_ERR_OUT_OF_MEMORY);
  CHECK(lib.error() == "model 'fake_cuda': cannot allocate 20 bytes of GPU memory for input 'z': "
                       "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  env.fail("cuMemAlloc_v2:2@3");
  CHECK(call.run(lib, model) == CUVIL_ERR_OUT_OF_MEMORY);
  CHECK(lib.error() == "model 'fake_cuda': cannot allocate 24 bytes of GPU memory for 24 bytes of "
                       "constant data (weights): cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY: "
                       "out of memory");
  env.fail("");
  REQUIRE(call.run(lib, model) == CUVIL_OK);
  call.checkResults();
  lib.destroy(model);
  CHECK(env.leaked() == 0);
}

TEST_CASE("cuda: a failed launch, a failure found at synchronization", "[cuda]") {
  Environment env;
  Library lib("fake_model_cuda");
  cuvil_model *model = lib.mustMake();
  clearLog();
  env.fail("cuLaunchKernel:719@2");
  Call call;
  CHECK(call.run(lib, model) == CUVIL_ERR_DEVICE);
  CHECK(lib.error() == "model 'fake_cuda': cuLaunchKernel of kernel 'fake_add' failed: "
                       "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure");
  CHECK(countLog("cuLaunchKernel name=") == 2); // nothing launched after the failure
  CHECK(countLog("cuMemcpyDtoHAsync_v2") == 0);
  CHECK(countLog("cuStreamSynchronize") == 1);
  CHECK(call.y[0] == -99.0f); // the outputs untouched
  CHECK(call.yShape[0] == -1);

  env.fail("cuStreamSynchronize:700");
  CHECK(call.run(lib, model) == CUVIL_ERR_DEVICE);
  CHECK(lib.error() == "model 'fake_cuda': cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS: "
                       "an illegal memory access was encountered (the last kernel launched was "
                       "'fake_copy')");
  // A code the driver has no name for.
  env.fail("cuLaunchKernel:12345");
  CHECK(call.run(lib, model) == CUVIL_ERR_DEVICE);
  CHECK(lib.error() == "model 'fake_cuda': cuLaunchKernel of kernel 'fake_copy' failed: CUresult 12345");

  // The instance still works once the device does.
  env.fail("");
  REQUIRE(call.run(lib, model) == CUVIL_OK);
  call.checkResults();
  lib.destroy(model);
  CHECK(env.leaked() == 0);
}

TEST_CASE("cuda: invalid PTX and a missing kernel fail create", "[cuda]") {
  Environment env;
  cuvil_model *model = nullptr;
  {
    Library lib("fake_model_cuda_badptx");
    env.set("CUVIL_FAKE_CUDA_SM", "86");
    // Not a missing device: no fallback to the CPU, the library is broken.
    CHECK(lib.make(&model) == CUVIL_ERR_DEVICE);
    CHECK(lib.error() == "model 'fake_cuda': loading its PTX (compiled by the driver) for sm_80 "
                         "failed: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed: ptxas "
                         "application ptx input, line 1; fatal   : Parsing error near 'this is not "
                         "PTX\n': syntax error");
    env.set("CUVIL_FAKE_CUDA_SM", "90"); // the cubin is fine
    model = lib.mustMake();
    lib.destroy(model);
  }
  {
    Library lib("fake_model_cuda_missing");
    env.set("CUVIL_FAKE_CUDA_SM", "80");
    CHECK(lib.make(&model) == CUVIL_ERR_DEVICE);
    CHECK(lib.error() == "model 'fake_cuda': kernel 'fake_missing' is not in its PTX for sm_80: "
                         "CUDA_ERROR_NOT_FOUND: named symbol not found");
  }
  CHECK(env.leaked() == 0);
}

TEST_CASE("cuda: every failing driver call gives a status and a message", "[cuda]") {
  Environment env;
  Library lib("fake_model_cuda");
  const char *functions[] = {
      "cuInit",           "cuDeviceGetCount",     "cuDeviceGet",          "cuDeviceGetAttribute",
      "cuDeviceGetName",  "cuDevicePrimaryCtxRetain", "cuModuleLoadDataEx", "cuModuleGetFunction",
      "cuStreamCreate",   "cuMemAlloc_v2",        "cuMemcpyHtoDAsync_v2",
      "cuMemcpyDtoHAsync_v2", "cuLaunchKernel",   "cuStreamSynchronize",  "cuCtxPushCurrent_v2",
  };
  for (const char *function : functions)
    for (int from = 1; from <= 4; ++from) {
      std::string spec = std::string(function) + ":999@" + std::to_string(from);
      INFO(spec);
      env.fail(spec);
      cuvil_model *model = nullptr;
      cuvil_status status = lib.make(&model, CUVIL_DEVICE_CUDA);
      if (status != CUVIL_OK) {
        CHECK(model == nullptr);
        CHECK(lib.error().find("CUDA_ERROR_UNKNOWN") != std::string::npos);
        CHECK(env.leaked() == 0);
        continue;
      }
      Call call;
      status = call.run(lib, model);
      if (status != CUVIL_OK) {
        CHECK(status == CUVIL_ERR_DEVICE);
        CHECK(startsWith(lib.error(), "model 'fake_cuda': "));
        CHECK(lib.error().find("CUDA_ERROR_UNKNOWN") != std::string::npos);
      } else {
        call.checkResults();
      }
      status = call.run(lib, model); // again, after the failure
      if (status != CUVIL_OK)
        CHECK(!lib.error().empty());
      lib.destroy(model);
      // Freeing needs the context: with every push failing, nothing can be.
      if (std::string(function) != "cuCtxPushCurrent_v2")
        CHECK(env.leaked() == 0);
    }
}

TEST_CASE("cuda: cuvil_model_run_device on device pointers and a caller's stream", "[cuda]") {
  Environment env;
  Library lib("fake_model_cuda");
  cuvil_model *model = lib.mustMake(CUVIL_DEVICE_CUDA);
  FakeDriver &d = fake();
  CUctx_st *context = nullptr;
  REQUIRE(d.retain(&context, 0) == 0);
  REQUIRE(d.push(context) == 0);
  CUdeviceptr x = 0, y = 0, z = 0, w = 0;
  REQUIRE(d.alloc(&x, 24) == 0);
  REQUIRE(d.alloc(&y, 24) == 0);
  REQUIRE(d.alloc(&z, 16) == 0);
  REQUIRE(d.alloc(&w, 16) == 0);
  float hx[6] = {1, 2, 3, 4, 5, 6}, hz[4] = {9, 8, 7, 6};
  REQUIRE(d.toDevice(x, hx, sizeof hx) == 0);
  REQUIRE(d.toDevice(z, hz, sizeof hz) == 0);
  int64_t xShape[2] = {2, 3}, yShape[2] = {0, 0}, zShape[1] = {4}, wShape[1] = {4};
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); };
  cuvil_tensor inputs[2] = {{ptr(x), 24, CUVIL_DTYPE_F32, 2, xShape},
                            {ptr(z), 16, CUVIL_DTYPE_F32, 1, zShape}};
  cuvil_tensor outputs[2] = {{ptr(y), 24, CUVIL_DTYPE_F32, 2, yShape},
                             {ptr(w), 16, CUVIL_DTYPE_F32, 1, wShape}};

  clearLog();
  REQUIRE(lib.runDevice(model, inputs, 2, outputs, 2, nullptr) == CUVIL_OK);
  CHECK(countLog("cuMemcpyHtoDAsync_v2") == 1); // the weights only, no tensors
  CHECK(countLog("cuMemcpyDtoHAsync_v2") == 0);
  CHECK(countLog("cuStreamSynchronize") == 1); // its own stream: waited for
  float hy[6], hw[4];
  REQUIRE(d.toHost(hy, y, sizeof hy) == 0);
  REQUIRE(d.toHost(hw, w, sizeof hw) == 0);
  for (int i = 0; i < 6; ++i)
    CHECK(hy[i] == hx[i] + 1);
  for (int i = 0; i < 4; ++i)
    CHECK(hw[i] == hz[i]);
  CHECK(yShape[0] == 2);

  // The caller's stream: launched, not waited for.
  CUstream_st *stream = nullptr;
  REQUIRE(d.streamCreate(&stream, 0) == 0);
  clearLog();
  REQUIRE(lib.runDevice(model, inputs, 2, outputs, 2, stream) == CUVIL_OK);
  CHECK(countLog("cuLaunchKernel name=") == 3);
  CHECK(countLog("cuStreamSynchronize") == 0);

  // Host pointers where device ones belong: the "device" refuses them.
  float host[6] = {0};
  cuvil_tensor wrong[2] = {{host, 24, CUVIL_DTYPE_F32, 2, xShape}, inputs[1]};
  CHECK(lib.runDevice(model, wrong, 2, outputs, 2, nullptr) == CUVIL_ERR_DEVICE);
  CHECK(lib.error() == "model 'fake_cuda': cuLaunchKernel of kernel 'fake_copy' failed: "
                       "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered");
  // The usual checks first.
  CHECK(lib.runDevice(model, inputs, 1, outputs, 2, nullptr) == CUVIL_ERR_COUNT);

  REQUIRE(d.streamDestroy(stream) == 0);
  for (CUdeviceptr p : {x, y, z, w})
    REQUIRE(d.free(p) == 0);
  CUctx_st *popped = nullptr;
  REQUIRE(d.pop(&popped) == 0);
  REQUIRE(d.release(0) == 0);
  lib.destroy(model);
  CHECK(env.leaked() == 0);
}
