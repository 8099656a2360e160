//===- BufferizableOpInterfaceImpl.h - fp8 ops and bufferization -*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define FP8_DIALECT_FP8_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace fp8 {
/// Attaches the BufferizableOpInterface models of the fp8 ops, so that
/// upstream one-shot bufferization rewrites them to their memref forms.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace fp8
} // namespace mlir

#endif // FP8_DIALECT_FP8_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
