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
/// writes MN-major for the GEMM), is a gather along the columns of that
/// layout: NCCL's all-gather into a contiguous `[size, c, r]` buffer, then
/// one strided copy per piece into `[c, R]`. With the MN-major padding
/// (`[c, roundup(r, 4)]` and `[c, roundup(R, 4)]`) NCCL moves the padded
/// pieces and each copy takes a piece's `r` real rows.
/// Rewrites step `index` so and returns true; false (nothing changed) when
/// it is not such a gather.
bool ProgramBuilder::gatherTransposed(size_t index) {
  Step &step = steps_[index];
  if (step.kind != md::StepKind::AllGather)
    return false;
  if (gatherTransposedColumns(index) || gatherAtomRows(index) ||
      gatherAtomColumns(index))
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
  // one at least to each: `[c, extent]`, or with the rows padded to a
  // multiple of 4 (the MN-major 1x128 scales of a row count that is not),
  // `[c, roundup(extent, 4)]`, the padded extent returned (0: neither).
  auto transposed = [&](int tensor, int64_t extent) -> int64_t {
    int64_t padded = 0;
    for (const Binding &binding : bindings_) {
      if (binding.tensor != tensor)
        continue;
      std::vector<Expr> shape = final(binding.shape);
      if (!constant(shape) || shape[0].value() != c ||
          (shape[1].value() != extent &&
           shape[1].value() != (extent + 3) / 4 * 4) ||
          (padded && shape[1].value() != padded))
        return 0;
      padded = shape[1].value();
    }
    return padded;
  };
  int64_t rp = transposed(step.source, r),
          rowsp = transposed(step.target, rows);
  if (!rp || !rowsp)
    return false;
  // NCCL moves whole padded pieces; the copies take the `r` real rows of
  // each (the padding rows, which no GEMM result depends on, are skipped).
  int64_t bytes = dtypeBytes(tensors_[step.source].dtype);
  std::optional<int64_t> pieceBytes = llvm::checkedMul(r, bytes),
                         pitch = llvm::checkedMul(rp, bytes),
                         rowBytes = llvm::checkedMul(rowsp, bytes),
                         bufferPiece = llvm::checkedMul(c, pitch.value_or(0));
  if (!pieceBytes || !pitch || !rowBytes || !bufferPiece ||
      !llvm::checkedMul(*bufferPiece, size))
    return false;
  if (rp != r)
    step.count = Expr::constant(c * rp);
  Tensor staging;
  staging.dtype = tensors_[step.source].dtype;
  staging.alignment = dtypeBytes(staging.dtype);
  staging.shape = {Expr::constant(size), Expr::constant(c), Expr::constant(rp)};
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
    copy.sourcePitch = Expr::constant(*pitch);
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

/// The tensor that the `size` strided copies after gather `index` write
/// (fp8-lower-collectives' pieces of a gather along the columns, each
/// reading the gather's staging buffer), or -1 when the steps after it are
/// not those copies.
int ProgramBuilder::columnGatherTarget(size_t index) const {
  const Step &step = steps_[index];
  int64_t size = step.group.size;
  if (index + size >= steps_.size())
    return -1;
  int target = -1;
  for (int64_t p = 1; p <= size; ++p) {
    const Step &copy = steps_[index + p];
    if (copy.kind != md::StepKind::Copy2d || copy.kernelLayout ||
        copy.source != step.target || (target >= 0 && copy.target != target))
      return -1;
    target = copy.target;
  }
  return target;
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
  int staging = step.target, target = columnGatherTarget(index);
  if (target < 0)
    return false;
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

/// An all-gather along the rows of MX scales `[r, s]` that every kernel
/// writes and reads as 128x4 scale-factor atoms, `[ceil(r/128), a, 512]`
/// bytes (128 rows by 4 scale columns each, the K atoms of one 128-row
/// block contiguous), is contiguous in that layout when `r` is a multiple
/// of 128: each device holds whole atom rows, and the gathered atoms are
/// theirs in rank order. NCCL then moves `r/128 * a * 512` bytes per device
/// straight into the result's atoms. Other row counts are left to
/// checkCollectiveLayouts' diagnostic (an atom would mix rows of two
/// devices, interleaved byte by byte).
bool ProgramBuilder::gatherAtomRows(size_t index) {
  Step &step = steps_[index];
  std::vector<Expr> piece = final(tensors_[step.source].shape),
                    whole = final(tensors_[step.target].shape);
  int64_t size = step.group.size;
  auto constant = [](const std::vector<Expr> &shape, size_t rank) {
    return shape.size() == rank &&
           llvm::all_of(shape, [](const Expr &e) { return e.isConstant(); });
  };
  if (tensors_[step.source].dtype != DType::UE8M0 || !constant(piece, 2) ||
      !constant(whole, 2) || piece[1].value() != whole[1].value() ||
      whole[0].value() != piece[0].value() * size || piece[0].value() % 128)
    return false;
  int64_t atomsAlongK = -1;
  auto atoms = [&](int tensor, int64_t rows) {
    int found = 0;
    for (const Binding &binding : bindings_) {
      if (binding.tensor != tensor)
        continue;
      std::vector<Expr> shape = final(binding.shape);
      if (!constant(shape, 3) || shape[0].value() != rows / 128 ||
          shape[2].value() != 512 ||
          (atomsAlongK >= 0 && shape[1].value() != atomsAlongK))
        return false;
      atomsAlongK = shape[1].value();
      ++found;
    }
    return found > 0;
  };
  if (!atoms(step.source, piece[0].value()) ||
      !atoms(step.target, whole[0].value()))
    return false;
  std::optional<int64_t> count =
      llvm::checkedMul(piece[0].value() / 128 * 512, atomsAlongK);
  if (!count)
    return false;
  step.count = Expr::constant(*count);
  return true;
}

/// MX scales `[a, b]` gathered along their columns (the columnwise scales
/// of a token shard: fp8-lower-collectives' NCCL gather into a `[size, a,
/// b]` buffer, then one strided copy per piece into `[a, size * b]`) whose
/// kernels write and read them as atoms, `[a/128, b/4, 512]` and `[a/128,
/// size * b/4, 512]` bytes: with `a` and `b` multiples of 128 and 4, a
/// piece's atoms are `a/128` runs of `128 * b` bytes, each the atoms of one
/// 128-row block, which go to the same block's run of the result. The
/// copies are rewritten so (the NCCL gather stays). Returns true when it
/// rewrote them.
bool ProgramBuilder::gatherAtomColumns(size_t index) {
  Step &step = steps_[index];
  int64_t size = step.group.size;
  std::vector<Expr> piece = final(tensors_[step.source].shape),
                    buffer = final(tensors_[step.target].shape);
  if (tensors_[step.source].dtype != DType::UE8M0 ||
      index + size >= steps_.size() || piece.size() != 2 ||
      buffer.size() != 3 || !piece[0].isConstant() || !piece[1].isConstant())
    return false;
  int64_t a = piece[0].value(), b = piece[1].value();
  if (a % 128 || b % 4)
    return false;
  int target = columnGatherTarget(index);
  if (target < 0)
    return false;
  auto atoms = [&](int tensor, int64_t columns) {
    int found = 0;
    for (const Binding &binding : bindings_) {
      if (binding.tensor != tensor)
        continue;
      std::vector<Expr> shape = final(binding.shape);
      if (shape.size() != 3 || !shape[0].isConstant() ||
          shape[0].value() != a / 128 || !shape[1].isConstant() ||
          shape[1].value() != columns / 4 || !shape[2].isConstant() ||
          shape[2].value() != 512)
        return false;
      ++found;
    }
    return found > 0;
  };
  if (!atoms(step.source, b) || !atoms(target, size * b))
    return false;
  int64_t run = 128 * b; // one 128-row block's atoms of a piece, in bytes
  for (int64_t p = 0; p < size; ++p) {
    Step &copy = steps_[index + 1 + p];
    copy.kernelLayout = true;
    copy.rows = Expr::constant(a / 128);
    copy.rowBytes = Expr::constant(run);
    copy.sourceOffset = Expr::constant(p * a * b);
    copy.sourcePitch = Expr::constant(run);
    copy.targetOffset = Expr::constant(p * run);
    copy.targetPitch = Expr::constant(size * run);
  }
  return true;
}

void ProgramBuilder::hoistGathers() {
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].kind == md::StepKind::AllGather)
      while (hoistGather(i))
        ++i;
}

/// Moves the next all-gather after step `index` (an all-gather) to
/// `index + 1` when only copy2d steps lie between them, it is of the same
/// device group, and it touches no tensor that those copies touch and no
/// tensor that the gather at `index` writes, nor writes one it reads.
/// Returns true when it moved one.
bool ProgramBuilder::hoistGather(size_t index) {
  const Step &first = steps_[index];
  size_t next = index + 1;
  while (next < steps_.size() && steps_[next].kind == md::StepKind::Copy2d)
    ++next;
  if (next == index + 1 || next == steps_.size())
    return false;
  const Step &gather = steps_[next];
  if (gather.kind != md::StepKind::AllGather ||
      gather.group.grid != first.group.grid ||
      gather.group.axes != first.group.axes ||
      gather.group.size != first.group.size)
    return false;
  for (size_t k = index; k < next; ++k) {
    const Step &s = steps_[k];
    if (gather.source == s.target || gather.target == s.target ||
        gather.target == s.source || (k > index && gather.source == s.source))
      return false;
  }
  // Step `next` becomes `index + 1`; the copies move down by one. Every
  // use of the gather's tensors lies outside (index, next), so the live
  // ranges map end to end.
  auto moved = [&](int &s) {
    if (s == static_cast<int>(next))
      s = static_cast<int>(index + 1);
    else if (s > static_cast<int>(index) && s < static_cast<int>(next))
      ++s;
  };
  for (Tensor &t : tensors_) {
    moved(t.firstStep);
    moved(t.lastStep);
  }
  Step hoisted = std::move(steps_[next]);
  steps_.erase(steps_.begin() + next);
  steps_.insert(steps_.begin() + index + 1, std::move(hoisted));
  return true;
}
