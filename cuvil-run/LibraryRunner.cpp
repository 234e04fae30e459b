//===- LibraryRunner.cpp - Run a compiled libinference.so -----------------===//
#include "cuvil-run/LibraryRunner.h"

#include "cuvil/runtime.h"
#include "support/ElfCheck.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

namespace cuvil {

namespace {

std::optional<DType> fromC(cuvil_dtype d) {
  switch (d) {
  case CUVIL_DTYPE_F32: return DType::Float32;
  case CUVIL_DTYPE_F64: return DType::Float64;
  case CUVIL_DTYPE_F16: return DType::Float16;
  case CUVIL_DTYPE_BF16: return DType::BFloat16;
  case CUVIL_DTYPE_I8: return DType::Int8;
  case CUVIL_DTYPE_U8: return DType::UInt8;
  case CUVIL_DTYPE_I16: return DType::Int16;
  case CUVIL_DTYPE_I32: return DType::Int32;
  case CUVIL_DTYPE_I64: return DType::Int64;
  case CUVIL_DTYPE_BOOL: return DType::Bool;
  case CUVIL_DTYPE_C64: return DType::Complex64;
  case CUVIL_DTYPE_C128: return DType::Complex128;
  }
  return std::nullopt;
}

cuvil_dtype toC(DType d) {
  switch (d) {
  case DType::Float32: return CUVIL_DTYPE_F32;
  case DType::Float64: return CUVIL_DTYPE_F64;
  case DType::Float16: return CUVIL_DTYPE_F16;
  case DType::BFloat16: return CUVIL_DTYPE_BF16;
  case DType::Int8: return CUVIL_DTYPE_I8;
  case DType::UInt8: return CUVIL_DTYPE_U8;
  case DType::Int16: return CUVIL_DTYPE_I16;
  case DType::Int32: return CUVIL_DTYPE_I32;
  case DType::Int64: return CUVIL_DTYPE_I64;
  case DType::Bool: return CUVIL_DTYPE_BOOL;
  case DType::Complex64: return CUVIL_DTYPE_C64;
  case DType::Complex128: return CUVIL_DTYPE_C128;
  }
  return CUVIL_DTYPE_F32;
}

} // namespace

/// The library's entry points, looked up by name.
struct LibraryRunner::Impl {
  std::string path;
  void *handle = nullptr;
  cuvil_model *model = nullptr;
  uint32_t (*abiVersion)(void) = nullptr;
  const char *(*lastError)(void) = nullptr;
  void (*optionsInit)(cuvil_options *) = nullptr;
  cuvil_status (*create)(const cuvil_options *, cuvil_model **) = nullptr;
  void (*destroy)(cuvil_model *) = nullptr;
  int32_t (*numInputs)(const cuvil_model *) = nullptr;
  int32_t (*numOutputs)(const cuvil_model *) = nullptr;
  cuvil_status (*inputInfo)(const cuvil_model *, int32_t, cuvil_tensor_info *) = nullptr;
  cuvil_status (*outputInfo)(const cuvil_model *, int32_t, cuvil_tensor_info *) = nullptr;
  cuvil_status (*run)(cuvil_model *, const cuvil_tensor *, int32_t, cuvil_tensor *, int32_t) = nullptr;
  // Optional: libraries from before the profile API have none.
  int32_t (*profileCount)(const cuvil_model *) = nullptr;
  cuvil_status (*profileEntry)(const cuvil_model *, int32_t, const char **, int64_t *, double *) = nullptr;
  void (*profileReset)(cuvil_model *) = nullptr;
  // Optional: libraries from before the branch counters have none.
  int32_t (*branchCount)(const cuvil_model *) = nullptr;
  cuvil_status (*branchEntry)(const cuvil_model *, int32_t, const char **, int64_t *) = nullptr;
  cuvil_status (*setNpuRecording)(cuvil_model *, int32_t) = nullptr;
  cuvil_status (*npuReport)(const cuvil_model *, const char **) = nullptr;
  cuvil_status (*outputBounds)(const cuvil_model *, int32_t, int64_t *, int64_t *) = nullptr;
  const char *(*device)(const cuvil_model *) = nullptr;
  std::vector<cuvil_tensor_info> inputs, outputs;
  /// Dynamic outputs: the buffer at the largest shape each run fills the
  /// start of (empty for static outputs, which are written in place).
  std::vector<std::vector<int64_t>> capacityShapes;
  std::vector<Tensor> capacityBuffers;

  ~Impl() {
    if (model && destroy)
      destroy(model);
    if (handle)
      dlclose(handle);
  }
  std::string error() const { return lastError ? lastError() : "unknown error"; }
};

LibraryRunner::LibraryRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LibraryRunner::LibraryRunner(LibraryRunner &&) noexcept = default;
LibraryRunner &LibraryRunner::operator=(LibraryRunner &&) noexcept = default;
LibraryRunner::~LibraryRunner() = default;

Result<LibraryRunner> LibraryRunner::load(const std::string &path, int threads,
                                          const std::string &prefix, const std::string &device) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  // A path without '/' would be searched for in the system directories.
  std::string open = path.find('/') == std::string::npos ? "./" + path : path;
  if (access(open.c_str(), R_OK) != 0)
    return ioError("cannot open '" + path + "': " + std::strerror(errno));
  // dlopen trusts the headers: a truncated file would fault inside it.
  if (Status s = checkSharedLibrary(path, hostElfMachine(), prefix + "_abi_version"); !s)
    return s.error();
  impl->handle = dlopen(open.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle)
    return inputError("cannot load '" + path + "': " + dlerror());
  bool missing = false;
  // cuvil_abi_version -> PREFIX_abi_version.
  auto sym = [&](auto &fn, const char *cuvilName) {
    std::string name = prefix + (cuvilName + 5);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(impl->handle, name.c_str()));
    missing |= fn == nullptr;
  };
  // The versions first: the other functions of a library of another ABI
  // may not be what this cuvil-run would call.
  sym(impl->abiVersion, "cuvil_abi_version");
  if (missing)
    return inputError("'" + path + "' is not a Cuvil library (it has no " + prefix + "_abi_version" +
                      (prefix == "cuvil" ? "; one exported with cuvil-export --symbol-prefix NAME is "
                                           "run with --symbol-prefix NAME)"
                                         : ")"));
  uint32_t (*modelAbiVersion)(void) = nullptr;
  sym(modelAbiVersion, "cuvil_model_abi_version");
  missing = false;
  uint32_t api = impl->abiVersion();
  if (api != CUVIL_ABI_VERSION || !modelAbiVersion ||
      modelAbiVersion() != CUVIL_MODEL_ABI_VERSION) {
    // Libraries of C API 1 (model ABI 1) have no cuvil_model_abi_version.
    std::string model = modelAbiVersion ? std::to_string(modelAbiVersion())
                        : api == 1      ? "1 (it has no cuvil_model_abi_version)"
                                        : "unknown (it has no cuvil_model_abi_version)";
    return inputError("'" + path + "' is a Cuvil library of C API version " +
                      std::to_string(api) + " and model ABI version " + model +
                      "; this cuvil-run runs C API version " + std::to_string(CUVIL_ABI_VERSION) +
                      " and model ABI version " + std::to_string(CUVIL_MODEL_ABI_VERSION) +
                      " only: re-export the model with the cuvil-export of this cuvil-run");
  }
  sym(impl->lastError, "cuvil_last_error");
  sym(impl->optionsInit, "cuvil_options_init");
  sym(impl->create, "cuvil_model_create");
  sym(impl->destroy, "cuvil_model_destroy");
  sym(impl->numInputs, "cuvil_model_num_inputs");
  sym(impl->numOutputs, "cuvil_model_num_outputs");
  sym(impl->inputInfo, "cuvil_model_input_info");
  sym(impl->outputInfo, "cuvil_model_output_info");
  sym(impl->run, "cuvil_model_run");
  if (missing)
    return inputError("'" + path + "' is not a Cuvil library (" + prefix + "_* functions missing)");
  sym(impl->profileCount, "cuvil_model_profile_count");
  sym(impl->profileEntry, "cuvil_model_profile_entry");
  sym(impl->profileReset, "cuvil_model_profile_reset");
  sym(impl->branchCount, "cuvil_model_branch_count");
  sym(impl->branchEntry, "cuvil_model_branch_entry");
  sym(impl->setNpuRecording, "cuvil_model_set_npu_recording");
  sym(impl->npuReport, "cuvil_model_npu_report");
  sym(impl->outputBounds, "cuvil_model_output_bounds");
  sym(impl->device, "cuvil_model_device");
  cuvil_options options;
  impl->optionsInit(&options);
  options.num_threads = threads;
  options.device = device == "cpu" ? CUVIL_DEVICE_CPU : device == "cuda" ? CUVIL_DEVICE_CUDA
                                                                          : CUVIL_DEVICE_AUTO;
  if (impl->create(&options, &impl->model) != CUVIL_OK)
    return inputError("'" + path + "': " + impl->error());
  for (int32_t i = 0; i < impl->numInputs(impl->model); ++i) {
    cuvil_tensor_info info;
    if (impl->inputInfo(impl->model, i, &info) != CUVIL_OK)
      return inputError("'" + path + "': " + impl->error());
    impl->inputs.push_back(info);
  }
  for (int32_t i = 0; i < impl->numOutputs(impl->model); ++i) {
    cuvil_tensor_info info;
    if (impl->outputInfo(impl->model, i, &info) != CUVIL_OK)
      return inputError("'" + path + "': " + impl->error());
    impl->outputs.push_back(info);
    std::vector<int64_t> capacity;
    if (std::find(info.shape, info.shape + info.rank, -1) != info.shape + info.rank) {
      capacity.assign(info.rank, -1);
      if (impl->outputBounds)
        (void)impl->outputBounds(impl->model, i, nullptr, capacity.data());
      if (std::find(capacity.begin(), capacity.end(), -1) != capacity.end())
        return inputError("'" + path + "': output '" + info.name +
                          "' has a dynamic shape without bounds, which cuvil-run cannot allocate");
    }
    impl->capacityShapes.push_back(std::move(capacity));
  }
  impl->capacityBuffers.resize(impl->outputs.size());
  return LibraryRunner(std::move(impl));
}

const std::string &LibraryRunner::path() const { return impl_->path; }

std::string LibraryRunner::device() const {
  const char *text = impl_->device ? impl_->device(impl_->model) : nullptr;
  return text ? text : "cpu";
}

size_t LibraryRunner::numInputs() const { return impl_->inputs.size(); }

NpyExpectation LibraryRunner::inputExpectation(size_t i) const {
  const cuvil_tensor_info &info = impl_->inputs[i];
  NpyExpectation e;
  e.what = "input " + std::to_string(i) + " (" + info.name + ") of '" + impl_->path + "'";
  std::optional<DType> d = fromC(info.dtype);
  e.dtype = d ? *d : DType::Float32;
  e.shape.assign(info.shape, info.shape + info.rank);
  return e;
}

std::string LibraryRunner::signature() const {
  auto describe = [](const std::vector<cuvil_tensor_info> &infos) {
    std::string s;
    for (const cuvil_tensor_info &info : infos) {
      std::vector<int64_t> shape(info.shape, info.shape + info.rank);
      std::optional<DType> d = fromC(info.dtype);
      s += (s.empty() ? "" : ", ") + std::string(info.name) + ": " +
           formatShape(shape, d ? *d : DType::Float32);
    }
    return s;
  };
  return describe(impl_->inputs) + " -> " + describe(impl_->outputs);
}

Status LibraryRunner::run(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) {
  std::vector<cuvil_tensor> in(inputs.size());
  std::vector<std::vector<int64_t>> inShapes(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    inShapes[i] = inputs[i].shape();
    in[i].data = const_cast<uint8_t *>(inputs[i].data());
    in[i].byte_size = inputs[i].byteSize();
    in[i].dtype = toC(inputs[i].dtype());
    in[i].rank = static_cast<int32_t>(inputs[i].rank());
    in[i].shape = inShapes[i].data();
  }
  if (outputs.size() != impl_->outputs.size())
    outputs.assign(impl_->outputs.size(), Tensor());
  std::vector<cuvil_tensor> out(impl_->outputs.size());
  std::vector<std::vector<int64_t>> outShapes(impl_->outputs.size());
  for (size_t i = 0; i < impl_->outputs.size(); ++i) {
    const cuvil_tensor_info &info = impl_->outputs[i];
    const std::vector<int64_t> &capacity = impl_->capacityShapes[i];
    bool dynamic = !capacity.empty();
    std::vector<int64_t> shape = dynamic ? capacity : std::vector<int64_t>(info.shape, info.shape + info.rank);
    std::optional<DType> dtype = fromC(info.dtype);
    if (!dtype)
      return inputError("output '" + std::string(info.name) + "' has an unknown dtype");
    Tensor &buffer = dynamic ? impl_->capacityBuffers[i] : outputs[i];
    if (buffer.dtype() != *dtype || buffer.shape() != shape || buffer.byteSize() == 0) {
      Result<Tensor> t = Tensor::create(*dtype, shape);
      if (!t)
        return t.error();
      buffer = std::move(*t);
    }
    // A dynamic dimension's entry is the buffer's capacity along it.
    outShapes[i] = dynamic ? capacity : std::vector<int64_t>(shape.size(), 0);
    out[i].data = buffer.data();
    out[i].byte_size = buffer.byteSize();
    out[i].dtype = info.dtype;
    out[i].rank = info.rank;
    out[i].shape = outShapes[i].data();
  }
  if (impl_->run(impl_->model, in.data(), static_cast<int32_t>(in.size()), out.data(),
                 static_cast<int32_t>(out.size())) != CUVIL_OK)
    return inputError("'" + impl_->path + "': " + impl_->error());
  // Dynamic outputs: the run's shape, densely at the buffer's start.
  for (size_t i = 0; i < impl_->outputs.size(); ++i) {
    if (impl_->capacityShapes[i].empty())
      continue;
    const Tensor &buffer = impl_->capacityBuffers[i];
    if (outputs[i].dtype() != buffer.dtype() || outputs[i].shape() != outShapes[i]) {
      Result<Tensor> t = Tensor::create(buffer.dtype(), outShapes[i]);
      if (!t)
        return t.error();
      outputs[i] = std::move(*t);
    }
    if (outputs[i].byteSize() > buffer.byteSize())
      return inputError("'" + impl_->path + "': output '" + impl_->outputs[i].name +
                        "' reports a shape larger than its buffer");
    std::memcpy(outputs[i].data(), buffer.data(), outputs[i].byteSize());
  }
  return Status::ok();
}

std::vector<ProfileRow> LibraryRunner::profile() const {
  std::vector<ProfileRow> out;
  if (!impl_->profileCount || !impl_->profileEntry)
    return out;
  int32_t n = impl_->profileCount(impl_->model);
  for (int32_t i = 0; i < n; ++i) {
    ProfileRow e;
    const char *name = nullptr;
    if (impl_->profileEntry(impl_->model, i, &name, &e.calls, &e.totalMs) != CUVIL_OK)
      break;
    e.name = name ? name : "?";
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::map<std::string, int64_t>> LibraryRunner::branchCounts() const {
  if (!impl_->branchCount || !impl_->branchEntry)
    return std::nullopt;
  std::map<std::string, int64_t> out;
  int32_t n = impl_->branchCount(impl_->model);
  for (int32_t i = 0; i < n; ++i) {
    const char *name = nullptr;
    int64_t taken = 0;
    if (impl_->branchEntry(impl_->model, i, &name, &taken) != CUVIL_OK || !name)
      break;
    out[name] += taken; // one line may hold an arm in several copies (shape specialisation)
  }
  return out;
}

bool LibraryRunner::recordNpu() {
  return impl_->setNpuRecording && impl_->npuReport && impl_->setNpuRecording(impl_->model, 1) == CUVIL_OK;
}

std::string LibraryRunner::npuReport() const {
  const char *json = nullptr;
  if (!impl_->npuReport || impl_->npuReport(impl_->model, &json) != CUVIL_OK || !json)
    return "";
  return json;
}

void LibraryRunner::resetProfile() {
  if (impl_->profileReset)
    impl_->profileReset(impl_->model);
}

} // namespace cuvil
