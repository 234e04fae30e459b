//===- ModelInterface.cpp - The descriptor of a compiled model ------------===//
#include "targets/ModelInterface.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "runtime/include/cuvil/model_abi.h"
#include "runtime/include/cuvil/runtime.h"
#include "targets/Target.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"

#include <cstddef>

namespace mlir::cuvil {

namespace {

std::optional<int32_t> dtypeCode(Type t) { return lowering::runtimeDtype(t); }

std::string nameAttr(DictionaryAttr attrs, const std::string &fallback) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("cuvil.name"))
      return name.str();
  return fallback;
}

/// Whether `type`, laid out for an LP64 target (x86_64 and aarch64 Linux
/// agree on it), has the C struct's size and field offsets: the IR below
/// builds the descriptor field by field, and this catches a field added to
/// model_abi.h but not here. Only checked on an LP64 host, where the C
/// struct has that layout too.
bool matchesCLayout(llvm::StructType *type, size_t size, llvm::ArrayRef<size_t> offsets) {
  if constexpr (sizeof(void *) != 8)
    return true;
  llvm::DataLayout lp64("e-m:e-p:64:64-i64:64-n32:64-S128");
  const llvm::StructLayout *layout = lp64.getStructLayout(type);
  if (layout->getSizeInBytes() != size || type->getNumElements() != offsets.size())
    return false;
  for (unsigned i = 0; i < offsets.size(); ++i)
    if (layout->getElementOffset(i) != offsets[i])
      return false;
  return true;
}

} // namespace

FailureOr<ModelInterface> readModelInterface(func::FuncOp func, llvm::StringRef modelName) {
  ModelInterface m;
  m.modelName = modelName.str();
  FunctionType type = func.getFunctionType();
  auto read = [&](Type t, DictionaryAttr attrs, std::string fallback,
                  std::vector<TensorSignature> &into) -> LogicalResult {
    std::string name = nameAttr(attrs, fallback);
    auto tensor = llvm::dyn_cast<RankedTensorType>(t);
    std::optional<int32_t> code = tensor ? dtypeCode(tensor.getElementType()) : std::nullopt;
    if (!code)
      return func.emitError() << "'" << name << "' has type " << t
                              << ", which the C API cannot describe";
    TensorSignature s;
    s.name = std::move(name);
    s.dtype = *code;
    ArrayRef<int64_t> shape = tensor.getShape();
    if (attrs && attrs.get(kComplexAttrName)) {
      // (real, imaginary) pairs: the last dimension is the pair.
      if (shape.empty() || shape.back() != 2 || (*code != CUVIL_DTYPE_F32 && *code != CUVIL_DTYPE_F64))
        return func.emitError() << "'" << s.name << "' is marked complex but has type " << t
                                << " (expected f32 or f64 with a last dimension of 2)";
      s.dtype = *code == CUVIL_DTYPE_F32 ? CUVIL_DTYPE_C64 : CUVIL_DTYPE_C128;
      shape = shape.drop_back();
    }
    for (int64_t d : shape)
      s.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    // Bounds of an input's dynamic dimensions (the complex pair's dropped).
    auto bounds = attrs ? attrs.getAs<DenseI64ArrayAttr>(kDimBoundsAttrName) : DenseI64ArrayAttr();
    auto symbols = attrs ? attrs.getAs<ArrayAttr>(kDimSymbolsAttrName) : ArrayAttr();
    if (s.isDynamic() && bounds && symbols && bounds.size() >= int64_t(2 * shape.size()) &&
        symbols.size() >= shape.size())
      for (size_t d = 0; d < shape.size(); ++d) {
        s.minShape.push_back(s.shape[d] >= 0 ? s.shape[d] : bounds[2 * d]);
        s.maxShape.push_back(s.shape[d] >= 0 ? s.shape[d] : bounds[2 * d + 1]);
        auto symbol = llvm::dyn_cast<StringAttr>(symbols[d]);
        s.symbols.push_back(s.shape[d] >= 0 || !symbol ? "" : symbol.str());
      }
    into.push_back(std::move(s));
    return success();
  };
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (failed(read(type.getInput(i), func.getArgAttrDict(i), "input" + std::to_string(i),
                    m.inputs)))
      return failure();
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (failed(read(type.getResult(i), func.getResultAttrDict(i), "output" + std::to_string(i),
                    m.outputs)))
      return failure();
  return m;
}

LogicalResult addModelDescriptor(llvm::Module &module, llvm::StringRef function,
                                 const ModelInterface &interface, const DescriptorInfo &info,
                                 std::string &error) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Function *model = module.getFunction(function);
  // The dynamic dimensions, in the order of the model's size array.
  struct Slot {
    bool output;
    size_t tensor, dim;
  };
  std::vector<Slot> slots;
  for (bool output : {false, true}) {
    const std::vector<TensorSignature> &list = output ? interface.outputs : interface.inputs;
    for (size_t t = 0; t < list.size(); ++t)
      for (size_t d = 0; d < list[t].shape.size(); ++d)
        if (list[t].shape[d] < 0)
          slots.push_back({output, t, d});
  }
  size_t expected = interface.inputs.size() + interface.outputs.size() + 1 + (slots.empty() ? 0 : 1);
  if (!model || model->arg_size() != expected) {
    error = "the lowered model function '" + function.str() + "' " +
            (model ? "takes " + std::to_string(model->arg_size()) + " arguments, expected " +
                         std::to_string(expected) +
                         (slots.empty() ? " (inputs, outputs, arena)"
                                        : " (inputs, outputs, arena, run-time sizes)")
                   : "is missing");
    return failure();
  }
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  int counter = 0;
  auto privateGlobal = [&](llvm::Constant *init, const char *prefix) {
    auto *g = new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage, init,
                                       std::string("cuvil.") + prefix + "." + std::to_string(counter++));
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  };
  auto string = [&](const std::string &s) -> llvm::Constant * {
    return privateGlobal(llvm::ConstantDataArray::getString(ctx, s), "str");
  };
  auto stringArray = [&](const std::vector<std::string> &items) -> llvm::Constant * {
    if (items.empty())
      return llvm::ConstantPointerNull::get(ptr);
    std::vector<llvm::Constant *> ptrs;
    for (const std::string &s : items)
      ptrs.push_back(string(s));
    return privateGlobal(llvm::ConstantArray::get(llvm::ArrayType::get(ptr, ptrs.size()), ptrs),
                         "strs");
  };
  // struct cuvil_rt_tensor_desc { const char *name; int32_t dtype; int32_t rank;
  //   const int64_t *shape, *min_shape, *max_shape; const char *const *symbols; }
  llvm::StructType *tensorDesc = llvm::StructType::get(ctx, {ptr, i32, i32, ptr, ptr, ptr, ptr});
  if (!matchesCLayout(tensorDesc, sizeof(cuvil_rt_tensor_desc),
                      {offsetof(cuvil_rt_tensor_desc, name), offsetof(cuvil_rt_tensor_desc, dtype),
                       offsetof(cuvil_rt_tensor_desc, rank), offsetof(cuvil_rt_tensor_desc, shape),
                       offsetof(cuvil_rt_tensor_desc, min_shape),
                       offsetof(cuvil_rt_tensor_desc, max_shape),
                       offsetof(cuvil_rt_tensor_desc, symbols)})) {
    error = "the tensor descriptor's LLVM type does not match cuvil_rt_tensor_desc (model_abi.h)";
    return failure();
  }
  auto tensorArray = [&](const std::vector<TensorSignature> &items) -> llvm::Constant * {
    if (items.empty())
      return llvm::ConstantPointerNull::get(ptr);
    std::vector<llvm::Constant *> descs;
    auto sizes = [&](const std::vector<int64_t> &v) -> llvm::Constant * {
      if (v.empty())
        return llvm::ConstantPointerNull::get(ptr);
      return privateGlobal(
          llvm::ConstantDataArray::get(
              ctx, llvm::ArrayRef<uint64_t>(reinterpret_cast<const uint64_t *>(v.data()), v.size())),
          "shape");
    };
    for (const TensorSignature &t : items) {
      bool bounded = t.minShape.size() == t.shape.size() && t.maxShape.size() == t.shape.size() &&
                     !t.shape.empty();
      descs.push_back(llvm::ConstantStruct::get(
          tensorDesc,
          {string(t.name), llvm::ConstantInt::get(i32, t.dtype),
           llvm::ConstantInt::get(i32, t.shape.size()), sizes(t.shape),
           bounded ? sizes(t.minShape) : llvm::ConstantPointerNull::get(ptr),
           bounded ? sizes(t.maxShape) : llvm::ConstantPointerNull::get(ptr),
           t.symbols.size() == t.shape.size() && !t.shape.empty() ? stringArray(t.symbols)
                                                                  : llvm::ConstantPointerNull::get(ptr)}));
    }
    return privateGlobal(llvm::ConstantArray::get(llvm::ArrayType::get(tensorDesc, descs.size()), descs),
                         "tensors");
  };

  // The entry (cuvil_rt_entry_fn: inputs, input shapes, outputs, output
  // shapes, arena, exec): unpack the pointer arrays, call the model, return
  // its status (the number of the first failed run-time check) or 0. The
  // model's shapes are static, so the run's shapes are not read.
  llvm::FunctionType *entryType =
      llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr}, false);
  auto makeEntry = [&](llvm::Function *model, const char *name) -> llvm::Function * {
  llvm::Function *entry = llvm::Function::Create(entryType, llvm::GlobalValue::InternalLinkage,
                                                 name, module);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    std::vector<llvm::Value *> args;
    auto unpack = [&](llvm::Value *array, size_t count) {
      for (size_t i = 0; i < count; ++i)
        args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, array, i)));
    };
    unpack(entry->getArg(0), interface.inputs.size());
    unpack(entry->getArg(2), interface.outputs.size());
    args.push_back(entry->getArg(4));
    // Run-time sizes: the inputs' (checked by the runtime against their
    // bounds and symbols) and the outputs' capacities, in one array.
    llvm::Value *sizes = nullptr;
    auto slotAddress = [&](const Slot &s) {
      llvm::Value *shapes = entry->getArg(s.output ? 3 : 1);
      llvm::Value *shape = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, shapes, s.tensor));
      return b.CreateConstInBoundsGEP1_64(i64, shape, s.dim);
    };
    if (!slots.empty()) {
      sizes = b.CreateAlloca(i64, llvm::ConstantInt::get(i64, slots.size()), "sizes");
      for (size_t k = 0; k < slots.size(); ++k)
        b.CreateStore(b.CreateLoad(i64, slotAddress(slots[k])),
                      b.CreateConstInBoundsGEP1_64(i64, sizes, k));
      args.push_back(sizes);
    }
    llvm::CallInst *call = b.CreateCall(model, args);
    // The outputs' sizes back into the runtime's shape entries (its own
    // array: writable whatever the parameter's const).
    for (size_t k = 0; k < slots.size(); ++k)
      if (slots[k].output)
        b.CreateStore(b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, sizes, k)),
                      slotAddress(slots[k]));
    bool hasStatus = model->getReturnType()->isIntegerTy(32);
    // (A function without checks beside one with them: a device target's
    // stub of the CPU function, which returns no status.)
    if (hasStatus && interface.failureMessages.empty()) {
      error = "the lowered model function's status result and its failure messages disagree";
      entry->eraseFromParent();
      return nullptr;
    }
    b.CreateRet(hasStatus ? static_cast<llvm::Value *>(call) : llvm::ConstantInt::get(i32, 0));
  }
  model->setLinkage(llvm::GlobalValue::InternalLinkage); // only reached through the entry
  return entry;
  };
  llvm::Function *entry = makeEntry(model, "cuvil_rt_entry");
  if (!entry)
    return failure();

  // struct cuvil_rt_model_desc (model_abi.h), field for field.
  llvm::StructType *descType = llvm::StructType::get(
      ctx, {i32, ptr, ptr, ptr, ptr, i32, i32, i32, ptr, ptr, i64, ptr, ptr, i32});
  using Desc = cuvil_rt_model_desc;
  if (!matchesCLayout(descType, sizeof(Desc),
                      {offsetof(Desc, abi_version), offsetof(Desc, model_name),
                       offsetof(Desc, target), offsetof(Desc, device),
                       offsetof(Desc, required_features), offsetof(Desc, num_required_features),
                       offsetof(Desc, num_inputs), offsetof(Desc, num_outputs),
                       offsetof(Desc, inputs), offsetof(Desc, outputs), offsetof(Desc, arena_bytes),
                       offsetof(Desc, entry), offsetof(Desc, failure_messages),
                       offsetof(Desc, num_failure_messages)})) {
    error = "the model descriptor's LLVM type does not match cuvil_rt_model_desc (model_abi.h)";
    return failure();
  }
  llvm::Constant *modelName = nullptr;
  if (info.modelNameSlot > 0) {
    auto *g = new llvm::GlobalVariable(module, llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), info.modelNameSlot),
                                       /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage, nullptr,
                                       kModelNameSymbol);
    g->setVisibility(llvm::GlobalValue::HiddenVisibility);
    g->setDSOLocal(true);
    modelName = g;
  } else {
    modelName = string(interface.modelName);
  }
  llvm::Constant *desc = llvm::ConstantStruct::get(
      descType, {llvm::ConstantInt::get(i32, CUVIL_RT_MODEL_ABI_VERSION),
                 modelName, string(info.target),
                 string(info.cpu), stringArray(info.requiredFeatures),
                 llvm::ConstantInt::get(i32, info.requiredFeatures.size()),
                 llvm::ConstantInt::get(i32, interface.inputs.size()),
                 llvm::ConstantInt::get(i32, interface.outputs.size()),
                 tensorArray(interface.inputs), tensorArray(interface.outputs),
                 llvm::ConstantInt::get(i64, info.arenaBytes), entry,
                 stringArray(interface.failureMessages),
                 llvm::ConstantInt::get(i32, interface.failureMessages.size())});
  auto *global = new llvm::GlobalVariable(module, descType, /*isConstant=*/true,
                                          llvm::GlobalValue::ExternalLinkage, desc, "cuvil_rt_model");
  global->setVisibility(llvm::GlobalValue::HiddenVisibility);
  if (info.cudaFunction.empty())
    return success();

  // struct cuvil_rt_cuda_desc (model_abi.h): the host code that launches
  // the kernels gets an entry of its own; the images as constants.
  llvm::Function *cudaModel = module.getFunction(info.cudaFunction);
  if (!cudaModel || cudaModel->arg_size() != expected) {
    error = "the lowered CUDA function '" + info.cudaFunction + "' is missing or takes other arguments";
    return failure();
  }
  llvm::Function *cudaEntry = makeEntry(cudaModel, "cuvil_rt_cuda_entry");
  if (!cudaEntry)
    return failure();
  llvm::StructType *imageType = llvm::StructType::get(ctx, {i32, i32, ptr, i64});
  llvm::StructType *cudaType = llvm::StructType::get(ctx, {i32, i32, ptr, i32, ptr, i32, ptr});
  using Image = cuvil_rt_cuda_image;
  using Cuda = cuvil_rt_cuda_desc;
  if (!matchesCLayout(imageType, sizeof(Image),
                      {offsetof(Image, kind), offsetof(Image, sm), offsetof(Image, data), offsetof(Image, size)}) ||
      !matchesCLayout(cudaType, sizeof(Cuda),
                      {offsetof(Cuda, version), offsetof(Cuda, cpu_fallback), offsetof(Cuda, entry),
                       offsetof(Cuda, num_images), offsetof(Cuda, images), offsetof(Cuda, num_kernels),
                       offsetof(Cuda, kernel_names)})) {
    error = "the CUDA descriptor's LLVM types do not match model_abi.h";
    return failure();
  }
  std::vector<llvm::Constant *> images;
  for (const DescriptorInfo::CudaImage &image : info.cudaImages) {
    // PTX is text the driver reads up to its NUL; a cubin is bytes.
    llvm::Constant *data = privateGlobal(
        llvm::ConstantDataArray::getString(ctx, image.bytes, /*AddNull=*/!image.cubin), "cuda_image");
    images.push_back(llvm::ConstantStruct::get(
        imageType, {llvm::ConstantInt::get(i32, image.cubin ? CUVIL_RT_CUDA_CUBIN : CUVIL_RT_CUDA_PTX),
                    llvm::ConstantInt::get(i32, image.sm), data, llvm::ConstantInt::get(i64, image.bytes.size())}));
  }
  llvm::Constant *imageArray =
      images.empty() ? static_cast<llvm::Constant *>(llvm::ConstantPointerNull::get(ptr))
                     : privateGlobal(llvm::ConstantArray::get(llvm::ArrayType::get(imageType, images.size()), images),
                                     "cuda_images");
  llvm::Constant *cuda = llvm::ConstantStruct::get(
      cudaType, {llvm::ConstantInt::get(i32, CUVIL_RT_CUDA_ABI_VERSION),
                 llvm::ConstantInt::get(i32, info.cudaCpuFallback ? 1 : 0), cudaEntry,
                 llvm::ConstantInt::get(i32, images.size()), imageArray,
                 llvm::ConstantInt::get(i32, info.cudaKernels.size()), stringArray(info.cudaKernels)});
  auto *cudaGlobal = new llvm::GlobalVariable(module, cudaType, /*isConstant=*/true,
                                              llvm::GlobalValue::ExternalLinkage, cuda, "cuvil_rt_cuda_model");
  cudaGlobal->setVisibility(llvm::GlobalValue::HiddenVisibility);
  return success();
}

} // namespace mlir::cuvil
