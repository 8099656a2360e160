//===- HostProgramGathers.cpp - Gathers of tensors in a kernel layout -----===//
//
// Part of fp8-build-host-program (see HostProgramBuilder.h), run on the read
// steps before they are checked and written: an all-gather whose tensors
// every kernel reads and writes transposed (the MN-major 1x128 scales of a
// quantization) moves its pieces in that layout, not in the order of the
// tensors' types. The gather is rewritten so, and marked `kernelLayout`.
//
//===----------------------------------------------------------------------===//

#include "HostProgramBuilder.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::host;

void ProgramBuilder::rewriteTransposedGathers() {
  for (size_t i = 0; i < steps_.size(); ++i)
    if (gatherTransposed(i))
      steps_[i].kernelLayout = true;
}

/// An all-gather of a 2-D tensor `[r, c]` along its rows that every kernel
/// writes and reads transposed, `[c, r]` (the 1x128 scales a quantization
/// writes MN-major for the GEMM, when no padding applies), is a gather
/// along the columns of that layout: NCCL's all-gather into a contiguous
/// `[size, c, r]` buffer, then one strided copy per piece into `[c, R]`.
/// Rewrites step `index` so and returns true; false (nothing changed) when
/// it is not such a gather.
bool ProgramBuilder::gatherTransposed(size_t index) {
  Step &step = steps_[index];
  if (step.kind != md::StepKind::AllGather)
    return false;
  if (gatherTransposedColumns(index))
    return true;
  std::vector<Expr> piece = final(tensors_[step.source].shape),
                    whole = final(tensors_[step.target].shape);
  int64_t size = step.group.size;
  auto constant = [](const std::vector<Expr> &shape) {
    return shape.size() == 2 && shape[0].isConstant() && shape[1].isConstant();
  };
  if (!constant(piece) || !constant(whole) ||
      piece[1].value() != whole[1].value() ||
      whole[0].value() != piece[0].value() * size)
    return false;
  int64_t r = piece[0].value(), c = piece[1].value(), rows = whole[0].value();
  // Every kernel operand bound to either tensor takes it transposed, and
  // one at least to each.
  auto transposed = [&](int tensor, int64_t extent) {
    int found = 0;
    for (const Binding &binding : bindings_) {
      if (binding.tensor != tensor)
        continue;
      std::vector<Expr> shape = final(binding.shape);
      if (!constant(shape) || shape[0].value() != c ||
          shape[1].value() != extent)
        return false;
      ++found;
    }
    return found > 0;
  };
  if (!transposed(step.source, r) || !transposed(step.target, rows))
    return false;
  int64_t bytes = dtypeBytes(tensors_[step.source].dtype);
  std::optional<int64_t> pieceBytes = llvm::checkedMul(r, bytes),
                         rowBytes = llvm::checkedMul(rows, bytes),
                         bufferPiece = llvm::checkedMul(c, pieceBytes.value_or(0));
  if (!pieceBytes || !rowBytes || !bufferPiece ||
      !llvm::checkedMul(*bufferPiece, size))
    return false;
  Tensor staging;
  staging.dtype = tensors_[step.source].dtype;
  staging.alignment = dtypeBytes(staging.dtype);
  staging.shape = {Expr::constant(size), Expr::constant(c), Expr::constant(r)};
  staging.alloc = step.op;
  staging.firstStep = static_cast<int>(index);
  staging.lastStep = static_cast<int>(index + size);
  int target = step.target, stagingIndex = static_cast<int>(tensors_.size());
  std::vector<Step> copies;
  for (int64_t p = 0; p < size; ++p) {
    Step copy;
    copy.kind = md::StepKind::Copy2d;
    copy.kernelLayout = true;
    copy.source = stagingIndex;
    copy.target = target;
    copy.rows = Expr::constant(c);
    copy.rowBytes = Expr::constant(*pieceBytes);
    copy.sourceOffset = Expr::constant(p * *bufferPiece);
    copy.sourcePitch = Expr::constant(*pieceBytes);
    copy.targetOffset = Expr::constant(p * *pieceBytes);
    copy.targetPitch = Expr::constant(*rowBytes);
    copies.push_back(std::move(copy));
  }
  step.target = stagingIndex;
  // Later steps move by `size`; the target is written by the copies now.
  auto shift = [&](int &s) {
    if (s > static_cast<int>(index))
      s += static_cast<int>(size);
  };
  for (Tensor &t : tensors_) {
    shift(t.firstStep);
    shift(t.lastStep);
  }
  Tensor &out = tensors_[target];
  if (out.firstStep == static_cast<int>(index))
    out.firstStep = static_cast<int>(index + 1);
  out.lastStep = std::max(out.lastStep, static_cast<int>(index + size));
  tensors_.push_back(std::move(staging));
  steps_.insert(steps_.begin() + index + 1, copies.begin(), copies.end());
  return true;
}

/// The other way round: a gather of `[a, b]` pieces along the columns into
/// `[a, size * b]` (fp8-lower-collectives: NCCL into a `[size, a, b]`
/// buffer, then one strided copy per piece) whose kernels write and read
/// both transposed (`[b, a]`, `[size * b, a]`: the columnwise 1x128 scales)
/// is contiguous in that layout: NCCL gathers into the result directly and
/// the copies go.
bool ProgramBuilder::gatherTransposedColumns(size_t index) {
  Step &step = steps_[index];
  int64_t size = step.group.size;
  std::vector<Expr> piece = final(tensors_[step.source].shape),
                    buffer = final(tensors_[step.target].shape);
  if (index + size >= steps_.size() || piece.size() != 2 ||
      buffer.size() != 3)
    return false;
  int staging = step.target, target = -1;
  for (int64_t p = 1; p <= size; ++p) {
    const Step &copy = steps_[index + p];
    if (copy.kind != md::StepKind::Copy2d || copy.kernelLayout ||
        copy.source != staging || (target >= 0 && copy.target != target))
      return false;
    target = copy.target;
  }
  std::vector<Expr> whole = final(tensors_[target].shape);
  auto layouts = [&](int tensor, const std::vector<Expr> &shape) {
    int found = 0;
    for (const Binding &binding : bindings_) {
      if (binding.tensor != tensor)
        continue;
      if (final(binding.shape) != shape)
        return false;
      ++found;
    }
    return found > 0;
  };
  if (whole.size() != 2 || !piece[0].isConstant() || !piece[1].isConstant() ||
      !whole[1].isConstant() ||
      whole[1].value() != piece[1].value() * size ||
      !layouts(step.source, {piece[1], piece[0]}) ||
      !layouts(target, {whole[1], whole[0]}) ||
      llvm::any_of(bindings_,
                   [&](const Binding &b) { return b.tensor == staging; }))
    return false;
  step.target = target;
  steps_.erase(steps_.begin() + index + 1, steps_.begin() + index + 1 + size);
  tensors_[staging].firstStep = tensors_[staging].lastStep = -1;
  auto shift = [&](int &s) {
    if (s > static_cast<int>(index + size))
      s -= static_cast<int>(size);
    else if (s > static_cast<int>(index))
      s = static_cast<int>(index);
  };
  for (Tensor &t : tensors_) {
    shift(t.firstStep);
    shift(t.lastStep);
  }
  return true;
}
