/*===- fp8-capi-test.c - Exercise the FP8-MLIR C API -----------------------===*\
|*                                                                            *|
|* Compiled as C (the headers must be valid C). Prints what fp8-capi.test     *|
|* FileChecks.                                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FP8-c/Compiler.h"
#include "FP8-c/Dialect.h"
#include "FP8-c/Numerics.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <stdio.h>
#include <string.h>

// main() prints the dialect's namespace first.
// CHECK: namespace fp8

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static void printAttr(const char *label, MlirAttribute attr) {
  printf("%s: ", label);
  if (mlirAttributeIsNull(attr))
    printf("null");
  else
    mlirAttributePrint(attr, printToStdout, NULL);
  printf("\n");
}

/// Invalid attribute parameters are diagnostics; count them.
static MlirLogicalResult countDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)diagnostic;
  ++*(int *)userData;
  return mlirLogicalResultSuccess();
}

static void testAttributes(MlirContext ctx) {
  // CHECK-LABEL: attributes
  printf("attributes\n");
  MlirAttribute tile = fp8GranularityAttrGetTile(ctx, 1, 128);
  // CHECK: tile: #fp8.granularity<tile 1x128>
  printAttr("tile", tile);
  // CHECK: kind 2 rows 1 cols 128
  printf("kind %d rows %lld cols %lld\n", (int)fp8GranularityAttrGetKind(tile),
         (long long)fp8GranularityAttrGetTileRows(tile),
         (long long)fp8GranularityAttrGetTileCols(tile));
  // CHECK: mx: #fp8.granularity<mx 1x32>
  printAttr("mx", fp8GranularityAttrGetMX(ctx, 32));
  // CHECK: fast: #fp8.accumulation<fast>
  printAttr("fast", fp8AccumulationAttrGet(ctx, 0));

  MlirAttribute config = fp8GemmConfigAttrGet(ctx, 128, 256, 128, 3, 2, 1, 8);
  // CHECK: config: #fp8.gemm_config<tile = 128x256x128, stages = 3, cluster = 2x1>
  printAttr("config", config);
  // CHECK: is config 1, tile 128x256x128 stages 3 cluster 2x1 raster 8
  printf("is config %d, tile %lldx%lldx%lld stages %lld cluster %lldx%lld raster %lld\n",
         fp8AttributeIsAGemmConfig(config),
         (long long)fp8GemmConfigAttrGetTileM(config),
         (long long)fp8GemmConfigAttrGetTileN(config),
         (long long)fp8GemmConfigAttrGetTileK(config),
         (long long)fp8GemmConfigAttrGetStages(config),
         (long long)fp8GemmConfigAttrGetClusterM(config),
         (long long)fp8GemmConfigAttrGetClusterN(config),
         (long long)fp8GemmConfigAttrGetRasterGroup(config));

  MlirAttribute blockwise = fp8BlockwiseScalingAttrGet(
      ctx, 1, 128, 128, 128, Fp8BlockScaleKindFloat32, 1.0e-4f, 128);
  // CHECK: blockwise: #fp8.blockwise<{{.*}}scales = f32{{.*}}>
  printAttr("blockwise", blockwise);
  // CHECK: recipe 1 blockwise 1 mx 0 accumulate 128
  printf("recipe %d blockwise %d mx %d accumulate %lld\n",
         fp8AttributeIsARecipe(blockwise),
         fp8AttributeIsABlockwiseScaling(blockwise),
         fp8AttributeIsAMXScaling(blockwise),
         (long long)fp8RecipeAttrGetAccumulate(blockwise));
  // CHECK: mxfp8: #fp8.mxfp8<{{.*}}rounding = ocp{{.*}}>
  printAttr("mxfp8", fp8MXScalingAttrGet(ctx, 32, Fp8UE8M0RoundingOCP,
                                         Fp8ElementFormatE4M3, 128));
  // CHECK: current: #fp8.current<{{.*}}pow2 = true{{.*}}>
  printAttr("current", fp8CurrentScalingAttrGet(ctx, 0.0f, true,
                                                Fp8RecipeFormatE4M3, 0));
  // CHECK: delayed: #fp8.delayed<history = 16{{.*}}>
  printAttr("delayed", fp8DelayedScalingAttrGet(ctx, 16, Fp8AmaxComputeAlgoMax,
                                                0, Fp8RecipeFormatHybrid, 128));

  // Invalid parameters: a null attribute and a diagnostic, no abort.
  int diagnostics = 0;
  MlirDiagnosticHandlerID handler =
      mlirContextAttachDiagnosticHandler(ctx, countDiagnostic, &diagnostics, NULL);
  // CHECK: bad config: null
  printAttr("bad config", fp8GemmConfigAttrGet(ctx, 100, 7, 64, 0, 3, 3, 0));
  // CHECK: bad tile: null
  printAttr("bad tile", fp8GranularityAttrGetTile(ctx, 0, 128));
  mlirContextDetachDiagnosticHandler(ctx, handler);
  // CHECK: diagnostics emitted: 2
  printf("diagnostics emitted: %d\n", diagnostics);
}

static const char *kGemm =
    "func.func @g(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,\n"
    "             %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<?x128xbf16> {\n"
    "  %d = fp8.scaled_matmul %a, %b, %sa, %sb {\n"
    "      a_granularity = #fp8.granularity<tensor>,\n"
    "      b_granularity = #fp8.granularity<tensor>,\n"
    "      accumulation = #fp8.accumulation<fast>}\n"
    "      : (tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<f32>,\n"
    "         tensor<f32>) -> tensor<?x128xbf16>\n"
    "  return %d : tensor<?x128xbf16>\n"
    "}\n";

static void printResult(Fp8CompileResult result) {
  printf("succeeded %d kernels %ld\n", fp8CompileResultSucceeded(result),
         (long)fp8CompileResultGetNumKernels(result));
  for (intptr_t i = 0; i < fp8CompileResultGetNumKernels(result); ++i) {
    MlirStringRef name = fp8CompileResultGetKernelName(result, i);
    MlirStringRef ptx = fp8CompileResultGetKernelPTX(result, i);
    MlirStringRef json = fp8CompileResultGetKernelMetadata(result, i);
    printf("kernel %.*s ptx %d json %d\n", (int)name.length, name.data,
           ptx.length > 0 && strstr(ptx.data, ".entry") != NULL,
           json.length > 0 && json.data[0] == '{');
  }
  // The host program names the function and its first kernel.
  MlirStringRef program = fp8CompileResultGetModuleJSON(result);
  MlirStringRef first = fp8CompileResultGetNumKernels(result) > 0
                            ? fp8CompileResultGetKernelName(result, 0)
                            : mlirStringRefCreateFromCString("");
  printf("module.json %d\n",
         program.length > 0 &&
             strstr(program.data, "\"format\": \"fp8-mlir-module\"") &&
             strstr(program.data, "\"name\": \"g\"") &&
             strstr(program.data, first.data));
  for (intptr_t i = 0; i < fp8CompileResultGetNumDiagnostics(result); ++i) {
    MlirStringRef loc = fp8CompileResultGetDiagnosticLocation(result, i);
    MlirStringRef message = fp8CompileResultGetDiagnosticMessage(result, i);
    printf("diagnostic %d at %.*s: %.*s\n",
           (int)fp8CompileResultGetDiagnosticSeverity(result, i),
           (int)loc.length, loc.data, (int)message.length, message.data);
  }
}

static void testChips(void) {
  // The chips come from the compiler's table.
  // CHECK-LABEL: chips
  // CHECK-NEXT: chip sm_90a
  // CHECK-NEXT: chip sm_100a
  // CHECK-NOT: chip
  printf("chips\n");
  for (intptr_t i = 0; i < fp8GetNumSupportedChips(); ++i) {
    MlirStringRef chip = fp8GetSupportedChipName(i);
    printf("chip %.*s\n", (int)chip.length, chip.data);
  }
}

static void testCompile(MlirContext ctx) {
  // CHECK-LABEL: compile
  printf("compile\n");
  Fp8CompileOptions options = fp8CompileOptionsGetDefault();
  MlirStringRef name = mlirStringRefCreateFromCString("gemm.mlir");

  // The default options name no chip: the module must carry its target.
  // CHECK: succeeded 0 kernels 0
  // CHECK-NEXT: module.json 0
  // CHECK-NEXT: diagnostic 0 at {{.*}}: no target chip: the module has no fp8.target and no chip was given (expected one of sm_90a, sm_100a)
  Fp8CompileResult result = fp8CompileSource(
      ctx, mlirStringRefCreateFromCString(kGemm), name, &options);
  printResult(result);
  fp8CompileResultDestroy(result);

  options.chip = mlirStringRefCreateFromCString("sm_90a");
  // The kernel and its launch variants (smaller tiles for small M, the
  // swap-AB tiles of 16 and 32 tokens for decode).
  // CHECK: succeeded 1 kernels 6
  // CHECK-NEXT: kernel fp8_gemm_tensorwise_{{.*}}_t128x128x128_s5_pp_fast ptx 1 json 1
  // CHECK-NEXT: kernel fp8_gemm_tensorwise_{{.*}}_t128x64x128_s8_fast ptx 1 json 1
  // CHECK-NEXT: kernel fp8_gemm_tensorwise_{{.*}}_t64x128x128_s8_fast ptx 1 json 1
  // CHECK-NEXT: kernel fp8_gemm_tensorwise_{{.*}}_t64x64x128_s13_fast ptx 1 json 1
  // CHECK-NEXT: kernel fp8_gemm_tensorwise_{{.*}}_t16x64x128_s16_sk_swapab_fast ptx 1 json 1
  // CHECK-NEXT: kernel fp8_gemm_tensorwise_{{.*}}_t32x64x128_s16_sk_swapab_fast ptx 1 json 1
  // CHECK-NEXT: module.json 1
  result = fp8CompileSource(ctx, mlirStringRefCreateFromCString(kGemm), name,
                            &options);
  printResult(result);
  fp8CompileResultDestroy(result);

  // The module form, with a chip the compiler does not know: diagnostics
  // in the result, nothing printed, no abort.
  // CHECK: succeeded 0 kernels 0
  // CHECK-NEXT: module.json 0
  // CHECK-NEXT: diagnostic 0 at {{.*}}: unknown chip 'sm_80': expected one of sm_90a, sm_100a
  options.chip = mlirStringRefCreateFromCString("sm_80");
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kGemm));
  result = fp8CompileModule(module, &options);
  printResult(result);
  fp8CompileResultDestroy(result);
  mlirModuleDestroy(module);

  // A parse error is a diagnostic of the result too.
  // CHECK: succeeded 0 kernels 0
  // CHECK-NEXT: module.json 0
  // CHECK-NEXT: diagnostic 0 at gemm.mlir:1:1: custom op 'fp8.nonsense' is unknown
  options = fp8CompileOptionsGetDefault();
  result = fp8CompileSource(ctx, mlirStringRefCreateFromCString("fp8.nonsense"),
                            name, &options);
  printResult(result);
  fp8CompileResultDestroy(result);
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  fp8RegisterCompilerDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  // The dialect handle loads the dialect (checked at the top).
  MlirDialect dialect =
      mlirDialectHandleLoadDialect(mlirGetDialectHandle__fp8__(), ctx);
  MlirStringRef ns = mlirDialectGetNamespace(dialect);
  printf("namespace %.*s\n", (int)ns.length, ns.data);
  testAttributes(ctx);
  testChips();
  testCompile(ctx);
  mlirContextDestroy(ctx);
  return 0;
}
