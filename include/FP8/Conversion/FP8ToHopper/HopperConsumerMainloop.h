//===- HopperConsumerMainloop.h - sm_90a consumer K loop -------*- C++ -*-===//
//
// A consumer warpgroup's K loop over one tile of the sm_90a GEMM
// (HopperMainloop.cpp), which the consumer's tile loop (HopperConsumer.cpp)
// runs for each of its work segments.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERCONSUMERMAINLOOP_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERCONSUMERMAINLOOP_H

#include "FP8/Conversion/FP8ToHopper/HopperEpilogue.h"
#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"

#include <optional>

namespace mlir::fp8::hopper {

struct StageScales;

/// A consumer warpgroup's K loop over the blocks of one tile: the wgmma
/// issue over each stage, the release of the stages and, with promoted
/// accumulation, the promotion of each K block's partial sums.
class ConsumerMainloop {
public:
  ConsumerMainloop(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
                   const KernelValues &v, const EpilogueThread &thread,
                   Value aDescriptorLow, Value bDescriptorLow);

  /// One tile's K loop over blocks [kBegin, kEnd) from consumer iteration
  /// `firstIteration` on: the tile's sums (promoted, one accumulator per
  /// wave, or the single accumulator of fast accumulation) and the
  /// iteration after the blocks. With fast accumulation, `afterIssue` (if
  /// any) runs once the last block's MMAs are issued, before they are
  /// waited for. `nTile`, the tile's column of tiles, is read only where
  /// hasBBlockCases().
  std::pair<SmallVector<Value>, Value>
  emit(Value firstIteration, Value kBegin, Value kEnd, Value nTile,
       function_ref<void()> afterIssue = nullptr);

  /// Whether emit runs one K loop per offset of the tile in its 128-row
  /// block of B, in which each column class (BScaleClasses) is known to
  /// read the first or the second block: a K block's scale products are
  /// then one a row per block the tile meets, not one a row per class.
  bool hasBBlockCases() const;

private:
  /// The descriptor low words of `stage`'s A rows and B tile: stage 0's
  /// plus the stage's offset (emitKMajorSwizzle128BDescriptorLow).
  std::pair<Value, Value> stageDescriptorLows(Value stage);
  void releaseStage(Value stage);
  Value issueMmas(Value acc, Value aLow, Value bLow, int64_t bColumn, int64_t n,
                  bool zeroFirst);
  StageScales loadStageScales(Value stage, int64_t wave = 0);
  Value getScale(const StageScales &scales, int64_t i);
  /// The K loop over [kBegin, kEnd), `blocksPerTrip` blocks a trip,
  /// carrying `init`: its results.
  SmallVector<Value> emitLoop(Value kBegin, Value kEnd, ValueRange init,
                              int64_t blocksPerTrip);
  /// The tile columns whose 1x128 B scales loadStageScales reads: the
  /// first part's for the tiles that load the rest late.
  int64_t getEarlyScaleColumns() const;
  Value promotePart(Value final, Value partial, int64_t firstColumn,
                    int64_t columns, const StageScales &scales);
  /// The loop body of fast accumulation for K block `kBlock`: each wave's
  /// MMAs into its accumulator in `accs`, as one commit group.
  void emitFastBlock(Value kBlock, Value kBegin, Value iteration,
                     ValueRange accs, Value aLow, Value bLow,
                     SmallVector<Value> &next);
  /// The loop body of promoted accumulation for the block in `stage`.
  void emitPromotedBlock(Value stage, ValueRange carried, Value aLow,
                         Value bLow, SmallVector<Value> &next);
  /// The same as one chain of (wave, part) groups through the partial
  /// accumulators in turn: several waves per consumer, or more parts than
  /// partial accumulators.
  bool isChained() const {
    return waves > 1 || numPartials < static_cast<int64_t>(partColumns.size());
  }
  void emitWavePromotedBlock(Value stage, ValueRange carried, Value aLow,
                             Value bLow, SmallVector<Value> &next);
  /// Blocks in pairs (PromotionPlan::blockPairs): `stages` (one or two,
  /// waited for here) into partial accumulators 0 and 1, promoted in order.
  void emitPromotedBlocks(ArrayRef<std::pair<Value, Value>> stages,
                          ValueRange carried, SmallVector<Value> &next);

  KernelBuilder &kb;
  ImplicitLocOpBuilder &b;
  const GemmProblem &p;
  const GemmTiling &t;
  const KernelValues &v;
  const EpilogueThread &thread;
  Value aDescriptorLow, bDescriptorLow;
  BScaleClasses bClasses;
  /// Promoted accumulation splits the tile's columns into parts, each with
  /// a partial accumulator of its own and its own commit group: while the
  /// first part of a K block is promoted (wait_group 1), the second part's
  /// MMAs still run, so the tensor cores idle only for the last, narrower
  /// part's promotion (getPromotionParts). Each block's groups are complete
  /// by the end of its iteration: a partial accumulator still in flight
  /// across the loop's back edge would make ptxas serialize every wgmma
  /// (C7514). A 256-column tile has no room for two: its 128-column parts
  /// take one partial accumulator in turn (getPromotionPlan).
  SmallVector<int64_t> partColumns;
  int64_t numPartials;
  Type accType;
  /// 64-row waves per consumer (getNumWaves): each has its promoted sums;
  /// the partial accumulators are shared by the waves.
  int64_t waves;
  bool blockPairs = false;
  /// While a K loop of emit's switch is emitted: the tile's offset in its
  /// 128-row B block (a multiple of gcd(tile N, 128)).
  std::optional<int64_t> bBlockOffset;
};
} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERCONSUMERMAINLOOP_H
