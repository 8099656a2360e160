//===- BufferizableOpInterfaceImpl.h - fp8 ops and bufferization -*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define FP8_DIALECT_FP8_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
class DialectRegistry;
namespace fp8 {
/// On an output argument of a kernel launcher: the index of the input
/// argument whose buffer the kernel may also be given as this output (it
/// then updates that memory in place, each element read before it is
/// written), so that one-shot bufferization may write an fp8.launch's
/// output into that input's buffer.
inline constexpr llvm::StringLiteral kInPlaceOfAttrName = "fp8.in_place_of";

/// Attaches the BufferizableOpInterface models of the fp8 ops, so that
/// upstream one-shot bufferization rewrites them to their memref forms.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace fp8
} // namespace mlir

#endif // FP8_DIALECT_FP8_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
