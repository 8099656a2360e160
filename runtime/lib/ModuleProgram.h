// The host program of a compiled module (module.json, "fp8-mlir-module"
// version 1, defined in schema/module.schema.json): each function's
// arguments, results, workspace buffers and ordered steps, resolved against
// the kernels they launch.
//
// Loading reads the file with the generated reader (SchemaReader.h), then
// checks what relates fields and what relates the program to its kernels:
// unique names, symbols, tensor references, kernel operands and symbols,
// dtypes, alignments, written arguments. Everything here is checked once,
// when the module is loaded; a call (FunctionCall.cpp) only checks the
// caller's tensors and the values of the symbols.
#ifndef FP8RT_LIB_MODULEPROGRAM_H
#define FP8RT_LIB_MODULEPROGRAM_H

#include "KernelMetadata.h"
#include "Status.h"

#include "fp8schema/ModuleProgram.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct fp8rt_kernel;

namespace fp8rt {

// Where a step's tensor lives.
enum class TensorKind { None, Argument, Result, Buffer };

struct TensorRef {
  TensorKind kind = TensorKind::None;
  int index = -1;
};

const char *tensorKindName(TensorKind kind); // "argument", "result", "buffer"

// An argument, a result or a buffer of a function.
struct FunctionTensor {
  std::string name;
  DType dtype = DType::E4M3;
  std::vector<Expr> shape;
  int64_t alignment = 1;
  bool written = false; // arguments: written in place by some step
  int aliasOf = -1;     // results: the argument it is, or -1
  Expr bytes;           // buffers
  Expr offset;          // buffers
  int firstStep = -1;   // buffers: the live range, in steps
  int lastStep = -1;

  std::string describeShape() const; // "[x_0, 4096]"
};

// A symbol: bound from argument `argument`'s extent `dim`.
struct FunctionSymbol {
  std::string name;
  int argument = -1;
  int dim = 0;
};

// A kernel operand of a launch and the tensor bound to it (kind None for an
// optional operand left out).
struct StepOperand {
  TensorRef tensor;
  int64_t alignment = 1; // what the kernel needs of its address
};

struct FunctionStep {
  fp8schema::StepKind kind = fp8schema::StepKind::Launch;
  // Launch:
  fp8rt_kernel *kernel = nullptr;         // owned by the module
  std::vector<StepOperand> operands;      // per kernel operand, metadata order
  std::vector<std::string> kernelSymbols; // the kernel's symbols
  std::vector<Expr> symbolValues; // per kernel symbol, of the function's
  // Fill, copy and collectives:
  TensorRef target;
  int byte = 0;     // fill
  TensorRef source; // copy, collectives
  // Collectives:
  DType dtype = DType::E4M3;
  Expr count; // elements of one device's piece
  fp8schema::Reduction reduction = fp8schema::Reduction::Sum;
  fp8schema::DeviceGroup group;
  // copy2d, in bytes; `sliced`: the source offset advances by the rank in
  // `group` times `rowBytes`.
  Expr rows, rowBytes, sourceOffset, sourcePitch, targetOffset, targetPitch;
  bool sliced = false;
  // all_gather: on the first of consecutive all_gather steps of one device
  // group, how many there are (>= 2); a call plan keeps the independent
  // prefix (cutGatherBatches), which a backend with group calls issues as
  // one (the FP8 data of a quantization and its scales). 0 elsewhere.
  int batch = 0;
};

// The names (as in module.json) of a copy2d step's geometry fields, in the
// order of FunctionStep's rows, rowBytes, sourceOffset, sourcePitch,
// targetOffset, targetPitch.
inline constexpr const char *kCopy2DFieldNames[] = {
    "rows",         "row_bytes",     "source_offset",
    "source_pitch", "target_offset", "target_pitch"};

// A copy2d step's geometry in bytes, the symbols bound.
struct Copy2DPlan {
  size_t rows = 0, rowBytes = 0, sourceOffset = 0, sourcePitch = 0,
         targetOffset = 0, targetPitch = 0;
};

// Whether a step kind is a collective (all_reduce, all_gather,
// reduce_scatter, all_slice).
bool isCollective(fp8schema::StepKind kind);
// Whether a step runs through the collective backend: a collective, or a
// strided copy of this device's slice (the backend gives the rank).
bool needsCollectiveBackend(const FunctionStep &step);
// Sets FunctionStep::batch of the runs of consecutive all-gathers of one
// device group in `steps` (cutGatherBatches keeps, per call plan, the
// prefix of each run whose gathers are independent).
void markGatherBatches(std::vector<FunctionStep> &steps);

struct FunctionModel {
  std::string name;
  std::vector<FunctionSymbol> symbols;
  std::vector<FunctionTensor> arguments, results, buffers;
  Expr workspaceBytes;
  std::vector<FunctionStep> steps;

  const FunctionTensor &tensor(TensorRef ref) const;
  // "argument 'x'", "buffer 'buffer3'"
  std::string describe(TensorRef ref) const;
  int findSymbol(std::string_view name) const; // -1 if absent
};

// The workspace's base address must be aligned to this; every buffer offset
// the compiler assigns is a multiple of it.
constexpr int64_t kWorkspaceAlignment = 256;

// What a module.json holds, resolved: the chip, the kernels named, and the
// functions.
struct ModuleModel {
  std::string chip;
  std::vector<std::string> kernelNames;
  std::vector<FunctionModel> functions;

  int findFunction(std::string_view name) const; // -1 if absent
};

// The module's kernels by name (NAME.json in the module's directory),
// loaded on first use by the caller (the C API reads files; tests give
// kernels from memory). The kernels outlive the model.
class KernelProvider {
public:
  virtual ~KernelProvider() = default;
  virtual Status kernel(const std::string &name, fp8rt_kernel *&out) = 0;
};

// Reads module.json (`jsonText`, named `sourceName` in messages) into the
// structs of its definition, checking what the definition says.
Status readModuleProgram(std::string_view jsonText, std::string_view sourceName,
                         fp8schema::ModuleProgram &out);

// Reads module.json and resolves every function against its kernels: the
// checks across fields. Errors are FP8RT_ERROR_INVALID_METADATA with
// "SOURCE:LINE:COL: functions[0].steps[2].operands.a: problem" (or the
// error of loading a kernel).
Status parseModuleProgram(std::string_view jsonText,
                          std::string_view sourceName, KernelProvider &kernels,
                          ModuleModel &out);

} // namespace fp8rt

#endif // FP8RT_LIB_MODULEPROGRAM_H
