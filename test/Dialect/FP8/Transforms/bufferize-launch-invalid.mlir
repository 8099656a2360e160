// RUN: fp8-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -verify-diagnostics

func.func private @amax_launch_into(memref<64x128xbf16> {bufferization.access = "read"}, memref<f32> {bufferization.access = "read-write"})

// The kernels take dense row-major buffers: a slice of a larger tensor is a
// strided view.
func.func @slice(%x: tensor<64x256xbf16>, %z: tensor<f32>) -> tensor<f32> {
  %s = tensor.extract_slice %x[0, 0] [64, 128] [1, 1] : tensor<64x256xbf16> to tensor<64x128xbf16>
  // expected-error @+2 {{operand 0 bufferizes to 'memref<64x128xbf16, strided<[256, 1]>>', but the kernel takes a dense 'memref<64x128xbf16>'}}
  // expected-error @+1 {{failed to bufferize op}}
  %a = fp8.launch @amax_launch_into(%s, %z) outputs [1] : (tensor<64x128xbf16>, tensor<f32>) -> tensor<f32>
  return %a : tensor<f32>
}
