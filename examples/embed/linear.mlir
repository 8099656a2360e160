// A linear layer as a framework exports it: dequantize -> linalg.matmul ->
// bias add -> bf16 cast, around upstream func, arith, tensor and linalg ops.
// fp8-to-ptx folds the graph into one fp8.scaled_matmul kernel.
#map_a = affine_map<(m, n, k) -> (m, k)>
#map_bt = affine_map<(m, n, k) -> (n, k)>
#map_c = affine_map<(m, n, k) -> (m, n)>

func.func @linear(%a: tensor<?x256xf8E4M3FN>, %sa: tensor<?x1xf32>,
                  %b: tensor<64x256xf8E4M3FN>, %sb: tensor<64x1xf32>,
                  %bias: tensor<64xf32>) -> tensor<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x256xf8E4M3FN>
  %da = fp8.dequantize %a, %sa {granularity = #fp8.granularity<row>}
      : tensor<?x256xf8E4M3FN>, tensor<?x1xf32> -> tensor<?x256xf32>
  %db = fp8.dequantize %b, %sb {granularity = #fp8.granularity<row>}
      : tensor<64x256xf8E4M3FN>, tensor<64x1xf32> -> tensor<64x256xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul indexing_maps = [#map_a, #map_bt, #map_c]
      ins(%da, %db : tensor<?x256xf32>, tensor<64x256xf32>)
      outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  %bempty = tensor.empty(%m) : tensor<?x64xf32>
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%bempty : tensor<?x64xf32>) dimensions = [0]
  %y = arith.addf %mm, %bb : tensor<?x64xf32>
  %yb = arith.truncf %y : tensor<?x64xf32> to tensor<?x64xbf16>
  return %yb : tensor<?x64xbf16>
}

// Host code that is not fp8 stays as it is: a private function is not one
// of the module's programs (module.json describes the public ones, whose
// every op must run on a kernel).
func.func private @scale_product(%x: f32, %y: f32) -> f32 {
  %p = arith.mulf %x, %y : f32
  return %p : f32
}
