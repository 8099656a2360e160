// RUN: fp8-opt %s -split-input-file -fp8-lower-collectives -verify-diagnostics

shard.grid @tp(shape = 2)
func.func @empty_inner(%x: tensor<0x128xbf16>) -> tensor<0x64xbf16> {
  // expected-error @+1 {{'shard.all_slice' op splits 'tensor<0x128xbf16>', which has no elements}}
  %r = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 1 : tensor<0x128xbf16> -> tensor<0x64xbf16>
  return %r : tensor<0x64xbf16>
}

// -----

shard.grid @tp(shape = 2)
func.func @reductions(%a: tensor<f32>, %q: tensor<16xf8E4M3FN>) -> (tensor<f32>, tensor<16xf8E4M3FN>) {
  // expected-error @+1 {{'shard.all_reduce' op reduces with 'min': the host program's collectives reduce with sum or max}}
  %m = shard.all_reduce %a on @tp grid_axes = [0] reduction = min : tensor<f32> -> tensor<f32>
  // expected-error @+1 {{'shard.all_reduce' op reduces 'f8E4M3FN' values: the host program reduces f32, bf16 or f16}}
  %s = shard.all_reduce %q on @tp grid_axes = [0] reduction = sum : tensor<16xf8E4M3FN> -> tensor<16xf8E4M3FN>
  return %m, %s : tensor<f32>, tensor<16xf8E4M3FN>
}

// -----

shard.grid @tp(shape = 2)
func.func @widening(%a: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.all_reduce' op changes the element type: the host program's all-reduce keeps it}}
  %m = shard.all_reduce %a on @tp grid_axes = [0] reduction = sum : tensor<4xbf16> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

shard.grid @tp(shape = ?)
func.func @dynamic_grid(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'shard.all_reduce' op names grid @tp, which is not a shard.grid of static shape}}
  %m = shard.all_reduce %a on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  return %m : tensor<f32>
}

// -----

shard.grid @tp(shape = 2)
func.func @dynamic_shape(%q: tensor<?x64xf8E4M3FN>) -> tensor<?x64xf8E4M3FN> {
  // expected-error @+1 {{'shard.all_gather' op has a dynamic or unranked shape: the host program's collectives take static shapes}}
  %w = shard.all_gather %q on @tp grid_axes = [0] gather_axis = 0 : tensor<?x64xf8E4M3FN> -> tensor<?x64xf8E4M3FN>
  return %w : tensor<?x64xf8E4M3FN>
}
