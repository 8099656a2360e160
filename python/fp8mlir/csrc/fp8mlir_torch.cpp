// The C++ kernels of fp8mlir's PyTorch operators (fp8mlir/_torch_ops.py
// defines the schemas, the fake implementations and the Python side):
//
//   fp8mlir::scaled_mm      CUDA (and CPU, to say that it needs CUDA), and
//                           Autograd (its backward is the Python-defined
//                           composite fp8mlir::scaled_mm_backward)
//   fp8mlir::scaled_mm_out  CUDA, CPU
//   fp8mlir::_launch        CUDA: one kernel, its operands in metadata order
//
// The hot path is C++ from the dispatcher to cuLaunchKernel: argument checks,
// the scales in the kernel's layout (views wherever the kernel can read the
// caller's tensor as it is), the output from PyTorch's allocator, the
// kernel from a registry keyed by the GEMM's shape class, the current
// stream, and fp8rt_launch_ordered. Python runs only on a registry miss,
// through the resolver the package installs (it compiles or loads the
// kernel from the kernel cache).
//
// libfp8rt is not linked: the package passes the addresses of the runtime
// functions it loaded (fp8mlir_torch_init), so both sides use one copy.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "fp8rt/fp8rt.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#define FP8MLIR_EXPORT extern "C" __attribute__((visibility("default")))

namespace fp8mlir {
namespace {

//===----------------------------------------------------------------------===//
// The runtime and the kernel registry
//===----------------------------------------------------------------------===//

enum Recipe : int32_t { kTensorwise = 0, kRowwise = 1, kBlockwise = 2 };

// What the resolver is asked for; the same layout as GemmRequest in
// fp8mlir/_torch_ops.py. Dtypes are fp8rt_dtype values (-1: no bias);
// accumulation 0 is "fast", N > 0 "promoted(N)".
struct GemmRequest {
  int32_t device, recipe, aDtype, bDtype, outDtype, biasDtype;
  int64_t n, k, accumulation;

  bool operator==(const GemmRequest &o) const {
    return std::memcmp(this, &o, sizeof(*this)) == 0;
  }
};
static_assert(sizeof(GemmRequest) == 48, "GemmRequest must have no padding");

struct GemmRequestHash {
  size_t operator()(const GemmRequest &r) const {
    const auto *words = reinterpret_cast<const uint64_t *>(&r);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(r) / 8; ++i)
      h = (h ^ words[i]) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

using LaunchFn = fp8rt_status (*)(fp8rt_kernel *, const fp8rt_tensor *, int,
                                  void *);
using LastErrorFn = const char *(*)();
using NumOperandsFn = int (*)(const fp8rt_kernel *);
using OperandNameFn = const char *(*)(const fp8rt_kernel *, int);
// Returns the kernel (owned by the package), or NULL with a message in
// `error`.
using ResolveFn = fp8rt_kernel *(*)(const GemmRequest *, char *error,
                                    int64_t errorSize);
using FunctionCallFn = fp8rt_status (*)(fp8rt_function *, const fp8rt_tensor *,
                                        int, const fp8rt_tensor *, int, void *,
                                        size_t, void *);

struct Runtime {
  LaunchFn launch = nullptr;
  LastErrorFn lastError = nullptr;
  NumOperandsFn numOperands = nullptr;
  OperandNameFn operandName = nullptr;
  ResolveFn resolve = nullptr;
  FunctionCallFn call = nullptr;
};

Runtime &runtime() {
  static Runtime instance;
  return instance;
}

// A GEMM kernel and where its operands sit in the metadata order.
enum GemmOperand { kA, kB, kAScale, kBScale, kBias, kD, kGemmOperands };
const char *const kGemmOperandNames[] = {"a",           "b",    "a_scale_inv",
                                         "b_scale_inv", "bias", "d"};

struct GemmKernel {
  fp8rt_kernel *kernel = nullptr;
  int numOperands = 0;
  int position[kGemmOperands] = {-1, -1, -1, -1, -1, -1};
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<GemmRequest, GemmKernel, GemmRequestHash> kernels;
};

Registry &registry() {
  static Registry *instance = new Registry(); // used until exit
  return *instance;
}

const Runtime &checkedRuntime() {
  const Runtime &rt = runtime();
  TORCH_CHECK(rt.launch && rt.resolve,
              "fp8mlir: the extension is not initialized (import "
              "fp8mlir._torch_ops, which does it)");
  return rt;
}

GemmKernel describeKernel(const Runtime &rt, fp8rt_kernel *kernel) {
  GemmKernel entry;
  entry.kernel = kernel;
  entry.numOperands = rt.numOperands(kernel);
  TORCH_CHECK(entry.numOperands <= 8, "fp8mlir: a GEMM kernel with ",
              entry.numOperands, " operands");
  for (int i = 0; i < entry.numOperands; ++i)
    for (int role = 0; role < kGemmOperands; ++role)
      if (std::strcmp(rt.operandName(kernel, i), kGemmOperandNames[role]) == 0)
        entry.position[role] = i;
  for (int role : {kA, kB, kAScale, kBScale, kD})
    TORCH_CHECK(entry.position[role] >= 0, "fp8mlir: the GEMM kernel has no "
                "operand \"", kGemmOperandNames[role], "\"");
  return entry;
}

GemmKernel gemmKernel(const GemmRequest &request) {
  Registry &reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    auto it = reg.kernels.find(request);
    if (it != reg.kernels.end())
      return it->second;
  }
  // A miss: Python compiles or loads the kernel (it takes the GIL).
  const Runtime &rt = checkedRuntime();
  char error[2048] = {};
  fp8rt_kernel *kernel = rt.resolve(&request, error, sizeof(error));
  error[sizeof(error) - 1] = '\0';
  TORCH_CHECK(kernel, error[0] ? error : "fp8mlir: no kernel");
  GemmKernel entry = describeKernel(rt, kernel);
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.kernels.emplace(request, entry).first->second;
}

//===----------------------------------------------------------------------===//
// Tensors as fp8rt operands
//===----------------------------------------------------------------------===//

bool fp8rtDtype(at::ScalarType type, int32_t &out) {
  switch (type) {
  case at::ScalarType::Float8_e4m3fn:
    out = FP8RT_E4M3;
    return true;
  case at::ScalarType::Float8_e5m2:
    out = FP8RT_E5M2;
    return true;
  case at::ScalarType::BFloat16:
    out = FP8RT_BF16;
    return true;
  case at::ScalarType::Half:
    out = FP8RT_F16;
    return true;
  case at::ScalarType::Float:
    out = FP8RT_F32;
    return true;
  case at::ScalarType::Int:
    out = FP8RT_I32;
    return true;
  default:
    return false;
  }
}

// `t` as an fp8rt operand: its sizes and strides, or with `asRank` >= 0
// only its address and dtype (the caller fills in that rank's extents).
fp8rt_tensor operandOf(const at::Tensor &t, const char *what,
                       int asRank = -1) {
  fp8rt_tensor out{};
  int32_t dtype = 0;
  TORCH_CHECK_TYPE(fp8rtDtype(t.scalar_type(), dtype), what,
                   ": unsupported dtype ", t.scalar_type());
  TORCH_CHECK_VALUE(t.dim() <= FP8RT_MAX_RANK, what, ": rank ", t.dim(),
                    " (at most ", FP8RT_MAX_RANK, ")");
  out.data = t.data_ptr();
  out.dtype = static_cast<fp8rt_dtype>(dtype);
  if (asRank >= 0) {
    out.rank = asRank;
    return out;
  }
  out.rank = static_cast<int>(t.dim());
  for (int d = 0; d < out.rank; ++d) {
    out.shape[d] = t.size(d);
    out.strides[d] = t.stride(d);
  }
  return out;
}

// A row-major [rows, cols] f32 view of `data` (which the caller keeps).
fp8rt_tensor denseF32(void *data, int64_t rows, int64_t cols) {
  fp8rt_tensor out{};
  out.data = data;
  out.dtype = FP8RT_F32;
  out.rank = 2;
  out.shape[0] = rows;
  out.shape[1] = cols;
  out.strides[0] = cols;
  out.strides[1] = 1;
  return out;
}

// `t`'s elements as a dense operand of `rank` (0 or 1) holding `extent`
// elements: in place when `t` has at most one extent above 1 and its
// elements are adjacent (no view is made: the operand points into `t`),
// else a contiguous copy kept in `keep`. Scales and bias have no more.
fp8rt_tensor vectorOperand(const at::Tensor &t, int64_t extent, int rank,
                           const char *what, at::Tensor &keep) {
  int64_t stride = 1, wide = 0;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) {
      stride = t.stride(d);
      ++wide;
    }
  const at::Tensor *source = &t;
  if (wide > 1 || (extent > 1 && stride != 1)) {
    keep = t.reshape({extent}).contiguous();
    source = &keep;
  }
  fp8rt_tensor out = operandOf(*source, what, /*asRank=*/rank);
  if (rank == 1) {
    out.shape[0] = extent;
    out.strides[0] = 1;
  }
  return out;
}

void checkDevice(const at::Tensor &t, const char *what,
                 const at::Device &device) {
  TORCH_CHECK_TYPE(t.defined(), what, ": expected a torch.Tensor, got None");
  TORCH_CHECK_VALUE(t.is_cuda(), what, ": expected a CUDA tensor, got one on ",
                    t.device());
  TORCH_CHECK_VALUE(t.device() == device, what, ": on ", t.device(),
                    ", but a is on ", device);
}

void *currentStream(const at::Device &device) {
  return c10::cuda::getCurrentCUDAStream(device.index()).stream();
}

void launch(const Runtime &rt, fp8rt_kernel *kernel,
            const fp8rt_tensor *operands, int count, const at::Device &device,
            const char *op) {
  c10::cuda::CUDAGuard guard(device);
  fp8rt_status status =
      rt.launch(kernel, operands, count, currentStream(device));
  TORCH_CHECK(status == FP8RT_SUCCESS, op, ": ", rt.lastError());
}

//===----------------------------------------------------------------------===//
// scaled_mm
//===----------------------------------------------------------------------===//

std::string shapeOf(const at::Tensor &t) {
  std::string out = "(";
  for (int64_t d = 0; d < t.dim(); ++d)
    out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + (t.dim() == 1 ? ",)" : ")");
}

bool hasShape(const at::Tensor &t, std::initializer_list<int64_t> shape) {
  if (t.dim() != static_cast<int64_t>(shape.size()))
    return false;
  int64_t d = 0;
  for (int64_t extent : shape)
    if (t.size(d++) != extent)
      return false;
  return true;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The recipe torch's scaled GEMMs would read from the scale shapes.
int32_t inferRecipe(const at::Tensor &sa, const at::Tensor &sb, int64_t m,
                    int64_t n, int64_t k) {
  if (sa.numel() == 1 && sb.numel() == 1)
    return kTensorwise;
  if ((hasShape(sa, {m, 1}) || hasShape(sa, {m})) &&
      (hasShape(sb, {1, n}) || hasShape(sb, {n, 1}) || hasShape(sb, {n})))
    return kRowwise;
  if (hasShape(sa, {m, ceilDiv(k, 128)}) &&
      hasShape(sb, {ceilDiv(k, 128), ceilDiv(n, 128)}))
    return kBlockwise;
  TORCH_CHECK_VALUE(false, "cannot tell the recipe from scale_a ", shapeOf(sa),
                    " and scale_b ", shapeOf(sb), " (M=", m, ", N=", n,
                    ", K=", k, "); pass recipe=");
  return -1;
}

int32_t parseRecipe(c10::string_view recipe, const at::Tensor &sa,
                    const at::Tensor &sb, int64_t m, int64_t n, int64_t k) {
  if (recipe == "auto")
    return inferRecipe(sa, sb, m, n, k);
  if (recipe == "tensorwise")
    return kTensorwise;
  if (recipe == "rowwise")
    return kRowwise;
  if (recipe == "blockwise")
    return kBlockwise;
  TORCH_CHECK_VALUE(recipe != "mxfp8",
                    "scaled_mm: the mxfp8 recipe runs on sm_100a only and is "
                    "not available through fp8mlir.scaled_mm");
  TORCH_CHECK_VALUE(false, "unknown recipe '", std::string(recipe),
                    "': expected auto, tensorwise, rowwise or blockwise");
  return -1;
}

// 0 for "fast", N for "promoted(N)".
int64_t parseAccumulation(c10::string_view text) {
  if (text == "fast")
    return 0;
  std::string s(text);
  long long interval = 0;
  bool ok = s.rfind("promoted(", 0) == 0 &&
            std::sscanf(s.c_str() + 9, "%lld", &interval) == 1 &&
            interval > 0 && s == "promoted(" + std::to_string(interval) + ")";
  TORCH_CHECK_VALUE(ok, "accumulation '", s,
                    "': expected 'fast' or 'promoted(N)'");
  return static_cast<int64_t>(interval);
}

// The scales as operands and the tensors they point into. Nothing here
// makes a view: the operands point into the caller's tensors wherever the
// kernel can read them as they are.
struct GemmScales {
  at::Tensor a, b; // what aOperand / bOperand point into
  fp8rt_tensor aOperand{}, bOperand{};
};

// A's 1x128 scales (M, Kb) as the kernel reads them: MN-major
// [Kb, roundup(M, 4)], 16-byte aligned. torch's layout, strides (1, M), is
// that when M % 4 == 0; so is (1, roundup(M, 4)) over a padded buffer (what
// fp8mlir.quantize returns). Anything else is copied into a padded buffer
// (its padding is never used by the GEMM's stored rows).
at::Tensor blockwiseScaleA(const at::Tensor &sa, int64_t m, int64_t kb,
                           fp8rt_tensor &operand) {
  int64_t padded = (m + 3) / 4 * 4;
  bool mnMajor = sa.stride(0) == 1 && (kb == 1 || sa.stride(1) == padded);
  auto address = reinterpret_cast<uintptr_t>(sa.data_ptr());
  int64_t needed = (sa.storage_offset() + kb * padded) * 4;
  if (mnMajor && address % 16 == 0 &&
      needed <= static_cast<int64_t>(sa.storage().nbytes())) {
    operand = denseF32(sa.data_ptr(), kb, padded);
    return sa;
  }
  at::Tensor buffer = at::empty({kb, padded}, sa.options());
  buffer.narrow(1, 0, m).copy_(sa.t());
  operand = denseF32(buffer.data_ptr(), kb, padded);
  return buffer;
}

// B's 128x128 scales, (Kb, Nb) in torch's API, as the kernel's dense
// [Nb, Kb]: a (Kb, Nb) tensor with strides (1, Kb) is that as it is;
// torch's padded strides (1, roundup(Kb, 4)) and others are copied.
fp8rt_tensor blockwiseScaleB(const at::Tensor &sb, int64_t kb, int64_t nb,
                             at::Tensor &keep) {
  if (sb.stride(0) == 1 && (nb == 1 || sb.stride(1) == kb))
    return denseF32(sb.data_ptr(), nb, kb);
  keep = sb.t().contiguous();
  return denseF32(keep.data_ptr(), nb, kb);
}

GemmScales gemmScales(int32_t recipe, const at::Tensor &scaleA,
                      const at::Tensor &scaleB, int64_t m, int64_t n,
                      int64_t k) {
  GemmScales s;
  at::Tensor sa = scaleA.scalar_type() == at::kFloat ? scaleA
                                                      : scaleA.to(at::kFloat);
  at::Tensor sb = scaleB.scalar_type() == at::kFloat ? scaleB
                                                      : scaleB.to(at::kFloat);
  // Held until the launch (an f32 conversion lives only here); replaced by
  // a copy where one is made.
  s.a = sa;
  s.b = sb;
  if (recipe == kTensorwise) {
    TORCH_CHECK_VALUE(sa.numel() == 1 && sb.numel() == 1,
                      "tensorwise: expected one scale each, got scale_a ",
                      shapeOf(scaleA), " and scale_b ", shapeOf(scaleB));
    s.aOperand = vectorOperand(sa, 1, 0, "scale_a", s.a);
    s.bOperand = vectorOperand(sb, 1, 0, "scale_b", s.b);
  } else if (recipe == kRowwise) {
    TORCH_CHECK_VALUE(sa.numel() == m && sb.numel() == n,
                      "rowwise: expected scale_a (M, 1) and scale_b (1, N), "
                      "got ", shapeOf(scaleA), " and ", shapeOf(scaleB),
                      " (M=", m, ", N=", n, ")");
    s.aOperand = vectorOperand(sa, m, 1, "scale_a", s.a);
    s.bOperand = vectorOperand(sb, n, 1, "scale_b", s.b);
  } else {
    int64_t kb = ceilDiv(k, 128), nb = ceilDiv(n, 128);
    TORCH_CHECK_VALUE(hasShape(sa, {m, kb}) && hasShape(sb, {kb, nb}),
                      "blockwise: expected scale_a (M, ceil(K/128)) = (", m,
                      ", ", kb, ") and scale_b (ceil(K/128), ceil(N/128)) = (",
                      kb, ", ", nb, "), got ", shapeOf(scaleA), " and ",
                      shapeOf(scaleB));
    s.a = blockwiseScaleA(sa, m, kb, s.aOperand);
    s.bOperand = blockwiseScaleB(sb, kb, nb, s.b);
  }
  return s;
}

// Everything a launch needs but the output: the operands, and the copies
// (if any) they point into.
struct GemmCall {
  GemmKernel kernel;
  fp8rt_tensor a{}, b{}, bias{}; // a [M, K]; b as the kernel's [N, K]
  at::Tensor aCopy, bCopy, biasCopy;
  GemmScales scales;
  bool hasBias = false;
  int64_t m = 0, n = 0;
};

// b [K, N] as the kernel's row-major [N, K]: in place when b is
// column-major (w.t() of a row-major weight; no view is made), else a copy.
fp8rt_tensor transposedOperand(const at::Tensor &b, at::Tensor &keep) {
  int64_t k = b.size(0), n = b.size(1);
  bool columnMajor =
      (k == 1 || b.stride(0) == 1) && (n == 1 || b.stride(1) == k);
  const at::Tensor *source = &b;
  if (!columnMajor) {
    keep = b.t().contiguous();
    source = &keep;
  }
  fp8rt_tensor out = operandOf(*source, "b", /*asRank=*/2);
  out.shape[0] = n;
  out.shape[1] = k;
  out.strides[0] = k;
  out.strides[1] = 1;
  return out;
}

void checkElementType(const at::Tensor &t, const char *what, int32_t &out) {
  bool fp8 = t.scalar_type() == at::ScalarType::Float8_e4m3fn ||
             t.scalar_type() == at::ScalarType::Float8_e5m2;
  TORCH_CHECK_TYPE(fp8 && fp8rtDtype(t.scalar_type(), out), what,
                   ": unsupported dtype ", t.scalar_type(),
                   " (expected float8_e4m3fn or float8_e5m2)");
}

GemmCall prepareGemm(const at::Tensor &a, const at::Tensor &b,
                     const at::Tensor &scaleA, const at::Tensor &scaleB,
                     const std::optional<at::Tensor> &bias,
                     at::ScalarType outType, c10::string_view recipeName,
                     c10::string_view accumulation) {
  TORCH_CHECK_TYPE(a.defined(), "a: expected a torch.Tensor, got None");
  const at::Device device = a.device();
  checkDevice(a, "a", device);
  checkDevice(b, "b", device);
  checkDevice(scaleA, "scale_a", device);
  checkDevice(scaleB, "scale_b", device);
  if (bias)
    checkDevice(*bias, "bias", device);
  TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
                    "expected a [M, K] and b [K, N], got ", shapeOf(a),
                    " and ", shapeOf(b));
  GemmRequest request{};
  request.device = static_cast<int32_t>(device.index());
  checkElementType(a, "a", request.aDtype);
  checkElementType(b, "b", request.bDtype);
  bool outOk = (outType == at::kBFloat16 || outType == at::kHalf ||
                outType == at::kFloat) &&
               fp8rtDtype(outType, request.outDtype);
  TORCH_CHECK_TYPE(outOk, "out_dtype: unsupported dtype ", outType,
                   " (expected bfloat16, float16 or float32)");
  request.biasDtype = -1;
  if (bias) {
    bool biasOk = (bias->scalar_type() == at::kBFloat16 ||
                   bias->scalar_type() == at::kFloat) &&
                  fp8rtDtype(bias->scalar_type(), request.biasDtype);
    TORCH_CHECK_TYPE(biasOk, "bias: unsupported dtype ", bias->scalar_type(),
                     " (expected bfloat16 or float32)");
  }
  GemmCall call;
  call.m = a.size(0);
  call.n = b.size(1);
  int64_t k = a.size(1);
  TORCH_CHECK_VALUE(k > 0 && call.n > 0, "scaled_mm: K and N must be >= 1, "
                    "got K=", k, ", N=", call.n);
  request.n = call.n;
  request.k = k;
  request.recipe = parseRecipe(recipeName, scaleA, scaleB, call.m, call.n, k);
  // Blockwise GEMMs always promote every 128 K.
  request.accumulation =
      request.recipe == kBlockwise ? 128 : parseAccumulation(accumulation);
  call.kernel = gemmKernel(request);
  if (!a.is_contiguous())
    call.aCopy = a.contiguous();
  call.a = operandOf(call.aCopy.defined() ? call.aCopy : a, "a");
  call.b = transposedOperand(b, call.bCopy);
  call.scales = gemmScales(request.recipe, scaleA, scaleB, call.m, call.n, k);
  if (bias) {
    TORCH_CHECK_VALUE(bias->numel() == call.n, "bias: expected (N,) = (",
                      call.n, ",), got ", shapeOf(*bias));
    call.bias = vectorOperand(*bias, call.n, 1, "bias", call.biasCopy);
    call.hasBias = true;
  }
  return call;
}

void launchGemm(const GemmCall &call, const at::Tensor &out) {
  const GemmKernel &k = call.kernel;
  fp8rt_tensor operands[8] = {};
  operands[k.position[kA]] = call.a;
  operands[k.position[kB]] = call.b;
  operands[k.position[kAScale]] = call.scales.aOperand;
  operands[k.position[kBScale]] = call.scales.bOperand;
  operands[k.position[kD]] = operandOf(out, "out");
  if (k.position[kBias] >= 0 && call.hasBias)
    operands[k.position[kBias]] = call.bias;
  launch(runtime(), k.kernel, operands, k.numOperands, out.device(),
         "fp8mlir::scaled_mm");
}

at::Tensor scaledMm(const at::Tensor &a, const at::Tensor &b,
                    const at::Tensor &scaleA, const at::Tensor &scaleB,
                    const std::optional<at::Tensor> &bias,
                    std::optional<at::ScalarType> outDtype,
                    c10::string_view recipe, c10::string_view accumulation) {
  at::ScalarType outType = outDtype.value_or(at::kBFloat16);
  GemmCall call = prepareGemm(a, b, scaleA, scaleB, bias, outType, recipe,
                              accumulation);
  at::Tensor out = at::empty({call.m, call.n}, a.options().dtype(outType));
  if (call.m > 0)
    launchGemm(call, out);
  return out;
}

void scaledMmOut(const at::Tensor &a, const at::Tensor &b,
                 const at::Tensor &scaleA, const at::Tensor &scaleB,
                 const std::optional<at::Tensor> &bias,
                 c10::string_view recipe, c10::string_view accumulation,
                 at::Tensor &out) {
  TORCH_CHECK_TYPE(out.defined(), "out: expected a torch.Tensor, got None");
  GemmCall call = prepareGemm(a, b, scaleA, scaleB, bias, out.scalar_type(),
                              recipe, accumulation);
  checkDevice(out, "out", a.device());
  TORCH_CHECK_VALUE(hasShape(out, {call.m, call.n}) && out.is_contiguous(),
                    "out: expected a contiguous (", call.m, ", ", call.n,
                    ") tensor, got ", shapeOf(out), " with strides ",
                    out.strides());
  if (call.m > 0)
    launchGemm(call, out);
}

//===----------------------------------------------------------------------===//
// Autograd. The backward is fp8mlir::scaled_mm_backward (a composite of
// PyTorch ops defined in Python, in f32, not an FP8 backward), so nothing
// here reads a size: the same code serves eager runs and traces with
// symbolic shapes.
//===----------------------------------------------------------------------===//

class ScaledMmFunction : public torch::autograd::Function<ScaledMmFunction> {
public:
  static at::Tensor forward(torch::autograd::AutogradContext *ctx,
                            const at::Tensor &a, const at::Tensor &b,
                            const at::Tensor &scaleA, const at::Tensor &scaleB,
                            const std::optional<at::Tensor> &bias,
                            std::optional<at::ScalarType> outDtype,
                            c10::string_view recipe,
                            c10::string_view accumulation) {
    ctx->saved_data["recipe"] = std::string(recipe);
    ctx->saved_data["has_bias"] = bias.has_value() && bias->defined();
    ctx->saved_data["bias_dtype"] =
        static_cast<int64_t>(bias ? bias->scalar_type() : at::kFloat);
    ctx->save_for_backward({a, b, scaleA, scaleB});
    at::AutoDispatchBelowADInplaceOrView guard;
    return callScaledMm(a, b, scaleA, scaleB, bias, outDtype, recipe,
                        accumulation);
  }

  static torch::autograd::variable_list
  backward(torch::autograd::AutogradContext *ctx,
           torch::autograd::variable_list gradOutputs) {
    static auto op =
        c10::Dispatcher::singleton()
            .findSchemaOrThrow("fp8mlir::scaled_mm_backward", "")
            .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
                const at::Tensor &, const at::Tensor &, const at::Tensor &,
                const at::Tensor &, const at::Tensor &, c10::string_view,
                std::array<bool, 4>)>();
    auto saved = ctx->get_saved_variables();
    std::array<bool, 4> mask = {
        ctx->needs_input_grad(0), ctx->needs_input_grad(1),
        ctx->needs_input_grad(2), ctx->needs_input_grad(3)};
    std::string recipe = ctx->saved_data["recipe"].toStringRef();
    auto grads = op.call(gradOutputs[0], saved[0], saved[1], saved[2],
                         saved[3], recipe, mask);
    // One gradient per forward argument; undefined for the non-tensors.
    torch::autograd::variable_list result(8);
    if (mask[0])
      result[0] = std::get<0>(grads);
    if (mask[1])
      result[1] = std::get<1>(grads);
    if (mask[2])
      result[2] = std::get<2>(grads);
    if (mask[3])
      result[3] = std::get<3>(grads);
    // bias is the fifth tensor input, when present.
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(4)) {
      int64_t rows[1] = {0};
      result[4] = gradOutputs[0].sum(at::IntArrayRef(rows, 1)).to(
          static_cast<at::ScalarType>(ctx->saved_data["bias_dtype"].toInt()));
    }
    return result;
  }

  static at::Tensor callScaledMm(const at::Tensor &a, const at::Tensor &b,
                                 const at::Tensor &scaleA,
                                 const at::Tensor &scaleB,
                                 const std::optional<at::Tensor> &bias,
                                 std::optional<at::ScalarType> outDtype,
                                 c10::string_view recipe,
                                 c10::string_view accumulation) {
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("fp8mlir::scaled_mm", "")
                         .typed<decltype(scaledMm)>();
    return op.call(a, b, scaleA, scaleB, bias, outDtype, recipe,
                   accumulation);
  }
};

bool anyRequiresGrad(std::initializer_list<const at::Tensor *> tensors) {
  for (const at::Tensor *t : tensors)
    if (t->defined() && t->requires_grad())
      return true;
  return false;
}

at::Tensor scaledMmAutograd(const at::Tensor &a, const at::Tensor &b,
                            const at::Tensor &scaleA, const at::Tensor &scaleB,
                            const std::optional<at::Tensor> &bias,
                            std::optional<at::ScalarType> outDtype,
                            c10::string_view recipe,
                            c10::string_view accumulation) {
  static const at::Tensor none;
  bool grad = at::GradMode::is_enabled() &&
              anyRequiresGrad({&a, &b, &scaleA, &scaleB, bias ? &*bias : &none});
  if (!grad) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return ScaledMmFunction::callScaledMm(a, b, scaleA, scaleB, bias, outDtype,
                                          recipe, accumulation);
  }
  return ScaledMmFunction::apply(a, b, scaleA, scaleB, bias, outDtype, recipe,
                                 accumulation);
}

//===----------------------------------------------------------------------===//
// _launch: one kernel with its operands in metadata order (None for an
// absent optional operand). Used by the Python implementations of
// quantize/dequantize; not part of the public API.
//===----------------------------------------------------------------------===//

void launchKernelOp(int64_t kernel,
                    const c10::List<std::optional<at::Tensor>> &operands) {
  const Runtime &rt = checkedRuntime();
  TORCH_CHECK_VALUE(operands.size() <= 16, "_launch: at most 16 operands");
  fp8rt_tensor ops[16] = {};
  std::optional<at::Device> device;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::optional<at::Tensor> t = operands.get(i);
    if (!t || !t->defined())
      continue;
    if (!device)
      device = t->device();
    checkDevice(*t, "operand", *device);
    ops[i] = operandOf(*t, "operand");
  }
  TORCH_CHECK_VALUE(device.has_value(), "_launch: no operand is a tensor");
  launch(rt, reinterpret_cast<fp8rt_kernel *>(kernel), ops,
         static_cast<int>(operands.size()), *device, "fp8mlir::_launch");
}

//===----------------------------------------------------------------------===//
// _call: one function of a loaded module (an fp8rt_function) on the current
// stream, its arguments and results in the function's order (None for an
// absent argument or for a result that is an argument); the workspace comes
// from the caching allocator. The fast path of fp8mlir.module.Function
// calls (the layers' forward and backward); not part of the public API.
//===----------------------------------------------------------------------===//

constexpr size_t kMaxFunctionTensors = 64;

size_t describeTensors(const c10::List<std::optional<at::Tensor>> &tensors,
                       fp8rt_tensor *out, std::optional<at::Device> &device,
                       const char *what) {
  TORCH_CHECK_VALUE(tensors.size() <= kMaxFunctionTensors, "_call: at most ",
                    kMaxFunctionTensors, " ", what);
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::optional<at::Tensor> t = tensors.get(i);
    out[i] = fp8rt_tensor{};
    if (!t || !t->defined())
      continue;
    if (!device)
      device = t->device();
    checkDevice(*t, what, *device);
    out[i] = operandOf(*t, what);
  }
  return tensors.size();
}

void runFunction(int64_t function, const fp8rt_tensor *args, size_t numArgs,
                 const fp8rt_tensor *res, size_t numResults,
                 int64_t workspaceBytes, const at::Device &device) {
  const Runtime &rt = checkedRuntime();
  TORCH_CHECK(rt.call, "fp8mlir::_call: the extension has no fp8rt_function_call");
  TORCH_CHECK_VALUE(workspaceBytes >= 0, "_call: negative workspace size");
  c10::cuda::CUDAGuard guard(device);
  at::Tensor workspace;
  if (workspaceBytes > 0)
    workspace = at::empty({workspaceBytes},
                          at::TensorOptions().dtype(at::kByte).device(device));
  fp8rt_status status = rt.call(
      reinterpret_cast<fp8rt_function *>(function), args,
      static_cast<int>(numArgs), res, static_cast<int>(numResults),
      workspace.defined() ? workspace.data_ptr() : nullptr,
      static_cast<size_t>(workspaceBytes), currentStream(device));
  TORCH_CHECK(status == FP8RT_SUCCESS, rt.lastError());
}

void callFunctionOp(int64_t function,
                    const c10::List<std::optional<at::Tensor>> &arguments,
                    const c10::List<std::optional<at::Tensor>> &results,
                    int64_t workspaceBytes) {
  fp8rt_tensor args[kMaxFunctionTensors], res[kMaxFunctionTensors];
  std::optional<at::Device> device;
  size_t numArgs = describeTensors(arguments, args, device, "arguments");
  size_t numResults = describeTensors(results, res, device, "results");
  TORCH_CHECK_VALUE(device.has_value(), "_call: no argument is a tensor");
  runFunction(function, args, numArgs, res, numResults, workspaceBytes,
              *device);
}

// The results of one call configuration of a function (registered by the
// package once per plan): each result's dtype and shape, or that it is an
// argument updated in place.
struct ResultPlan {
  std::vector<at::ScalarType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<bool> aliased;
};

struct ResultPlans {
  std::mutex mutex;
  std::vector<std::unique_ptr<ResultPlan>> plans;
};

ResultPlans &resultPlans() {
  static ResultPlans *instance = new ResultPlans(); // used until exit
  return *instance;
}

bool scalarTypeOf(int32_t dtype, at::ScalarType &out) {
  switch (dtype) {
  case FP8RT_E4M3:
    out = at::ScalarType::Float8_e4m3fn;
    return true;
  case FP8RT_E5M2:
    out = at::ScalarType::Float8_e5m2;
    return true;
  case FP8RT_BF16:
    out = at::ScalarType::BFloat16;
    return true;
  case FP8RT_F16:
    out = at::ScalarType::Half;
    return true;
  case FP8RT_F32:
    out = at::ScalarType::Float;
    return true;
  default:
    return false;
  }
}

// _call_planned: _call with the results allocated here (from the caching
// allocator, as `plan` describes them); a result that is an argument comes
// back as an empty placeholder (the package returns the argument).
std::vector<at::Tensor>
callPlannedOp(int64_t function, int64_t planId,
              const c10::List<std::optional<at::Tensor>> &arguments,
              int64_t workspaceBytes) {
  const ResultPlan *plan = nullptr;
  {
    ResultPlans &registry = resultPlans();
    std::lock_guard<std::mutex> lock(registry.mutex);
    TORCH_CHECK_VALUE(planId >= 0 && static_cast<size_t>(planId) <
                                         registry.plans.size(),
                      "_call_planned: unknown plan ", planId);
    plan = registry.plans[planId].get();
  }
  fp8rt_tensor args[kMaxFunctionTensors], res[kMaxFunctionTensors];
  std::optional<at::Device> device;
  size_t numArgs = describeTensors(arguments, args, device, "arguments");
  TORCH_CHECK_VALUE(device.has_value(), "_call: no argument is a tensor");
  at::TensorOptions options = at::TensorOptions().device(*device);
  std::vector<at::Tensor> results;
  results.reserve(plan->dtypes.size());
  for (size_t i = 0; i < plan->dtypes.size(); ++i) {
    if (plan->aliased[i]) {
      results.push_back(at::empty({0}, options.dtype(at::kFloat)));
      res[i] = fp8rt_tensor{};
      continue;
    }
    results.push_back(at::empty(plan->shapes[i], options.dtype(plan->dtypes[i])));
    res[i] = operandOf(results.back(), "result");
  }
  runFunction(function, args, numArgs, res, results.size(), workspaceBytes,
              *device);
  return results;
}

// The CPU kernels only say what is wrong (torch picks them when every
// tensor argument is on the CPU).
at::Tensor scaledMmCpu(const at::Tensor &a, const at::Tensor &,
                       const at::Tensor &, const at::Tensor &,
                       const std::optional<at::Tensor> &,
                       std::optional<at::ScalarType>, c10::string_view,
                       c10::string_view) {
  TORCH_CHECK_VALUE(false, "a: expected a CUDA tensor, got one on ",
                    a.device());
  return a;
}

void scaledMmOutCpu(const at::Tensor &a, const at::Tensor &,
                    const at::Tensor &, const at::Tensor &,
                    const std::optional<at::Tensor> &, c10::string_view,
                    c10::string_view, at::Tensor &) {
  TORCH_CHECK_VALUE(false, "a: expected a CUDA tensor, got one on ",
                    a.device());
}

} // namespace
} // namespace fp8mlir

TORCH_LIBRARY_IMPL(fp8mlir, CUDA, m) {
  m.impl("scaled_mm", &fp8mlir::scaledMm);
  m.impl("scaled_mm_out", &fp8mlir::scaledMmOut);
  m.impl("_launch", &fp8mlir::launchKernelOp);
  m.impl("_call", &fp8mlir::callFunctionOp);
  m.impl("_call_planned", &fp8mlir::callPlannedOp);
}

TORCH_LIBRARY_IMPL(fp8mlir, CPU, m) {
  m.impl("scaled_mm", &fp8mlir::scaledMmCpu);
  m.impl("scaled_mm_out", &fp8mlir::scaledMmOutCpu);
}

TORCH_LIBRARY_IMPL(fp8mlir, Autograd, m) {
  m.impl("scaled_mm", &fp8mlir::scaledMmAutograd);
}

// The package's side (fp8mlir/_torch_ops.py, through ctypes).

FP8MLIR_EXPORT int fp8mlir_torch_abi_version() { return 2; }

FP8MLIR_EXPORT void fp8mlir_torch_init(void *launch, void *lastError,
                                       void *numOperands, void *operandName,
                                       void *resolve) {
  fp8mlir::Runtime &rt = fp8mlir::runtime();
  rt.launch = reinterpret_cast<fp8mlir::LaunchFn>(launch);
  rt.lastError = reinterpret_cast<fp8mlir::LastErrorFn>(lastError);
  rt.numOperands = reinterpret_cast<fp8mlir::NumOperandsFn>(numOperands);
  rt.operandName = reinterpret_cast<fp8mlir::OperandNameFn>(operandName);
  rt.resolve = reinterpret_cast<fp8mlir::ResolveFn>(resolve);
}

// Hands the extension the runtime's fp8rt_function_call (for _call).
FP8MLIR_EXPORT void fp8mlir_torch_init_functions(void *call) {
  fp8mlir::runtime().call = reinterpret_cast<fp8mlir::FunctionCallFn>(call);
}

// Registers the results of one call plan (see ResultPlan): `shapes` holds
// FP8RT_MAX_RANK extents per result. Returns its id, or -1 for a dtype
// without a torch type or more than kMaxFunctionTensors results.
FP8MLIR_EXPORT int64_t fp8mlir_torch_register_result_plan(
    int32_t count, const int32_t *dtypes, const int32_t *ranks,
    const int64_t *shapes, const int32_t *aliased) {
  if (count < 0 || static_cast<size_t>(count) > fp8mlir::kMaxFunctionTensors)
    return -1;
  auto plan = std::make_unique<fp8mlir::ResultPlan>();
  for (int32_t i = 0; i < count; ++i) {
    at::ScalarType type = at::kFloat;
    if (!aliased[i] && !fp8mlir::scalarTypeOf(dtypes[i], type))
      return -1;
    if (ranks[i] < 0 || ranks[i] > FP8RT_MAX_RANK)
      return -1;
    plan->dtypes.push_back(type);
    plan->shapes.emplace_back(shapes + i * FP8RT_MAX_RANK,
                              shapes + i * FP8RT_MAX_RANK + ranks[i]);
    plan->aliased.push_back(aliased[i] != 0);
  }
  fp8mlir::ResultPlans &registry = fp8mlir::resultPlans();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.plans.push_back(std::move(plan));
  return static_cast<int64_t>(registry.plans.size()) - 1;
}

// Forgets the resolved kernels (the package then resolves them anew).
FP8MLIR_EXPORT void fp8mlir_torch_forget_kernels() {
  fp8mlir::Registry &reg = fp8mlir::registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.kernels.clear();
}
