//===- FP8AttrsTest.cpp - C++ API of the fp8 attributes -------------------===//
//
// The attribute verifiers reachable only through the C++ builders (the text
// syntax cannot express these cases), and the chip table.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Target/Chip.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp8;

namespace {

class FP8AttrsTest : public ::testing::Test {
protected:
  FP8AttrsTest() { context.loadDialect<FP8Dialect>(); }

  /// Runs `build` and returns the diagnostics it emitted.
  template <typename Fn> std::string diagnosticsOf(Fn build) {
    std::string messages;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      messages += diag.str();
      return success();
    });
    build();
    return messages;
  }

  MLIRContext context;
};

TEST_F(FP8AttrsTest, TensorGranularityRejectsTileShape) {
  Location loc = UnknownLoc::get(&context);
  std::string messages = diagnosticsOf([&] {
    EXPECT_FALSE(GranularityAttr::getChecked(loc, &context,
                                             GranularityKind::Tensor,
                                             TileShape{1, 128}));
  });
  EXPECT_EQ(messages, "granularity 'tensor' takes no tile shape");
}

TEST_F(FP8AttrsTest, RowGranularityRejectsTileShape) {
  Location loc = UnknownLoc::get(&context);
  std::string messages = diagnosticsOf([&] {
    EXPECT_FALSE(GranularityAttr::getChecked(
        loc, &context, GranularityKind::Row, TileShape{1, 1}));
  });
  EXPECT_EQ(messages, "granularity 'row' takes no tile shape");
}

TEST_F(FP8AttrsTest, ScaleShapesWithTails) {
  auto tile = GranularityAttr::getTile(&context, 128, 128);
  EXPECT_EQ(tile.getScaleShape(130, 300), (SmallVector<int64_t>{2, 3}));
  auto act = GranularityAttr::getTile(&context, 1, 128);
  EXPECT_EQ(act.getScaleShape(ShapedType::kDynamic, 7168),
            (SmallVector<int64_t>{ShapedType::kDynamic, 56}));
  auto mx = GranularityAttr::getMX(&context, 32);
  EXPECT_EQ(mx.getScaleShape(4, 33), (SmallVector<int64_t>{4, 2}));
  EXPECT_EQ(GranularityAttr::getRow(&context).getScaleShape(4, 33),
            (SmallVector<int64_t>{4, 1}));
  EXPECT_TRUE(GranularityAttr::getTensor(&context).getScaleShape(4, 33).empty());
}

TEST_F(FP8AttrsTest, RecipeInterface) {
  Builder b(&context);
  auto blockwise = BlockwiseScalingAttr::get(
      &context, TileShape{1, 128}, TileShape{128, 128},
      BlockScaleKind::PowerOfTwo, APFloat(1.0e-4f), Accumulation::promoted(128));
  auto recipe = cast<RecipeAttrInterface>(blockwise);
  EXPECT_TRUE(recipe.isAllowedElementType(b.getType<Float8E4M3FNType>()));
  EXPECT_FALSE(recipe.isAllowedElementType(b.getType<Float8E5M2Type>()));
  EXPECT_TRUE(recipe.isAllowedGranularity(GranularityAttr::getTile(&context, 128, 128)));
  EXPECT_FALSE(recipe.isAllowedGranularity(GranularityAttr::getTile(&context, 1, 64)));
  EXPECT_EQ(recipe.getAccumulate(), Accumulation::promoted(128));
}

TEST(ChipTest, Capabilities) {
  const ChipInfo *hopper = lookupChip("sm_90a");
  ASSERT_TRUE(hopper);
  EXPECT_TRUE(hopper->hasWgmma);
  EXPECT_FALSE(hopper->supportsMNMajorFP8);
  EXPECT_FALSE(hopper->supportsBlockScaledMma);
  EXPECT_EQ(hopper->ptxFeatures, "+ptx80");
  const ChipInfo *blackwell = lookupChip("sm_100a");
  ASSERT_TRUE(blackwell);
  EXPECT_TRUE(blackwell->hasTcgen05);
  EXPECT_TRUE(blackwell->supportsBlockScaledMma);
  EXPECT_EQ(blackwell->ptxFeatures, "+ptx88");
  EXPECT_EQ(lookupChip("sm_90"), nullptr);
  EXPECT_EQ(describeSupportedChips(), "sm_90a, sm_100a");
}

TEST(ChipTest, HardwareLimits) {
  // H100/H200 SXM and B200; 227 KiB of opt-in shared memory per block.
  EXPECT_EQ(lookupChip("sm_90a")->numMultiprocessors, 132);
  EXPECT_EQ(lookupChip("sm_100a")->numMultiprocessors, 148);
  for (const ChipInfo &chip : getSupportedChips())
    EXPECT_EQ(chip.maxSharedMemoryPerBlock, 232448);
  TargetInfo target = TargetInfo::getDefault(*lookupChip("sm_100a"));
  EXPECT_EQ(target.numMultiprocessors, 148);
  EXPECT_EQ(target.ptxFeatures, "+ptx88");
}

TEST(ChipTest, ParseChip) {
  llvm::Expected<const ChipInfo &> hopper = parseChip("sm_90a");
  ASSERT_TRUE(static_cast<bool>(hopper));
  EXPECT_EQ(&*hopper, lookupChip("sm_90a"));
  llvm::Expected<const ChipInfo &> unknown = parseChip("sm_80");
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()),
            "unknown chip 'sm_80': expected one of sm_90a, sm_100a");
}

} // namespace
