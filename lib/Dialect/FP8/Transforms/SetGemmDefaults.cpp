//===- SetGemmDefaults.cpp - Default recipe and config of scaled GEMMs ----===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SETGEMMDEFAULTS
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct SetGemmDefaultsPass
    : public fp8::impl::FP8SetGemmDefaultsBase<SetGemmDefaultsPass> {
  using FP8SetGemmDefaultsBase::FP8SetGemmDefaultsBase;

  /// Parses option `name`'s text as an attribute of type AttrT; null when
  /// the option is empty, failure (after an error) when it is not an AttrT.
  template <typename AttrT>
  FailureOr<AttrT> parseOption(StringRef name, StringRef text,
                               StringRef expected) {
    if (text.empty())
      return AttrT();
    Operation *root = getOperation();
    Attribute attr = parseAttribute(text, root->getContext());
    if (auto typed = dyn_cast_if_present<AttrT>(attr))
      return typed;
    root->emitError() << "fp8-set-gemm-defaults: option " << name << "='"
                      << text << "' is not " << expected;
    return failure();
  }

  void runOnOperation() override {
    FailureOr<RecipeAttrInterface> defaultRecipe =
        parseOption<RecipeAttrInterface>("recipe", recipe,
                                         "an fp8 recipe attribute");
    FailureOr<GemmConfigAttr> defaultConfig = parseOption<GemmConfigAttr>(
        "config", config, "a #fp8.gemm_config attribute");
    if (failed(defaultRecipe) || failed(defaultConfig))
      return signalPassFailure();
    getOperation()->walk([&](ScaledMatmulOp op) {
      if (*defaultRecipe && !op.getRecipeAttr())
        op.setRecipeAttr(*defaultRecipe);
      if (*defaultConfig && !op.getConfigAttr())
        op.setConfigAttr(*defaultConfig);
    });
  }
};
} // namespace
