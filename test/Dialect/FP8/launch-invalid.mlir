// RUN: fp8-opt %s -split-input-file -verify-diagnostics

func.func private @l(memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"})

func.func @result_count(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{expected one result per output, got 1 outputs and 2 results}}
  %r:2 = fp8.launch @l(%a, %b) outputs [1] : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func private @l(memref<f32> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"})

func.func @not_increasing(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{expected outputs to be increasing operand indices below 2, got 0 at position 1}}
  %r:2 = fp8.launch @l(%a, %b) outputs [1, 0] : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func private @l(memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"})

func.func @out_of_range(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{expected outputs to be increasing operand indices below 2, got 2 at position 0}}
  %r = fp8.launch @l(%a, %b) outputs [2] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func private @l(memref<4xf32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"})

func.func @result_type(%a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{expected result 0 to have the type of operand 1 ('tensor<f32>'), got 'tensor<4xf32>'}}
  %r = fp8.launch @l(%a, %b) outputs [1] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @missing_launcher(%a: tensor<f32>) {
  // expected-error @+1 {{expected 'nowhere' to be a launcher function}}
  %r = fp8.launch @nowhere(%a) outputs [0] : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func private @l(memref<f32> {bufferization.access = "write"}) -> i32

func.func @launcher_with_results(%a: tensor<f32>) {
  // expected-error @+1 {{expected launcher 'l' to be a declaration with no results}}
  %r = fp8.launch @l(%a) outputs [0] : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func private @l(memref<f32> {bufferization.access = "write"})

func.func @operand_count(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{expected 1 operands for launcher 'l', got 2}}
  %r = fp8.launch @l(%a, %b) outputs [1] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func private @l(memref<4xf32, strided<[?], offset: ?>> {bufferization.access = "read"}, memref<f32> {bufferization.access = "write"})

func.func @launcher_type(%a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{expected launcher argument 0 to be 'memref<4xf32>' (the buffer of 'tensor<4xf32>'), got 'memref<4xf32, strided<[?], offset: ?>>'}}
  %r = fp8.launch @l(%a, %b) outputs [1] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func private @l(memref<f32> {bufferization.access = "read"}, memref<f32> {bufferization.access = "read"})

func.func @access(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{operand 1 is an output but launcher argument 1 has bufferization.access = read}}
  %r = fp8.launch @l(%a, %b) outputs [1] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func private @l(memref<f32> {bufferization.access = "write"}, memref<f32> {bufferization.access = "write"})

func.func @undeclared_write(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{operand 0 is not an output but launcher argument 0 has bufferization.access = write}}
  %r = fp8.launch @l(%a, %b) outputs [1] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @scales_to_mx_granularity(%s: tensor<4x8xf32>) {
  // expected-error @+1 {{expected blockwise tiles whose K extent is a multiple of 32 (the MX block), got tile 1x48}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 1x48>} : tensor<4x8xf32> -> tensor<4x12xf8E8M0FNU>
  return
}

// -----

func.func @scales_to_mx_tensor(%s: tensor<4x8xf32>) {
  // expected-error @+1 {{expected blockwise tiles whose K extent is a multiple of 32 (the MX block), got tensor}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tensor>} : tensor<4x8xf32> -> tensor<4x32xf8E8M0FNU>
  return
}

// -----

func.func @scales_to_mx_shape(%s: tensor<4x8xf32>) {
  // expected-error @+1 {{expected the tile 1x128 scales of an [R, C] = [4, ?] operand with ceil(C/32) = 40 to have shape [4, 10], got [4, 8]}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 1x128>} : tensor<4x8xf32> -> tensor<4x40xf8E8M0FNU>
  return
}

// -----

func.func @scales_to_mx_tile_rows(%s: tensor<2x8xf32>) {
  // expected-error @+1 {{expected the tile 128x128 scales of an [R, C] = [300, ?] operand with ceil(C/32) = 32 to have shape [3, 8], got [2, 8]}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 128x128>} : tensor<2x8xf32> -> tensor<300x32xf8E8M0FNU>
  return
}

// -----

func.func @scales_to_mx_dynamic_tile_rows(%s: tensor<?x8xf32>) {
  // expected-error @+1 {{expected a static row count R for tile 128x128 (only 1-row tiles give R from the scales)}}
  %0 = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 128x128>} : tensor<?x8xf32> -> tensor<?x32xf8E8M0FNU>
  return
}
