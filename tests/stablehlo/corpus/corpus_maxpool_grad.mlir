module @jit__maxpool_and_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x2xf32> {jax.result_info = "result[0]"}, tensor<1x4x4x2xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %6 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x2x2x2xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.pad %arg0, %cst_1, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = "stablehlo.select_and_scatter"(%3, %2, %cst_2) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %6 = stablehlo.compare GE, %arg1, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    }, {
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %6 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }) : (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
    %5 = stablehlo.slice %4 [0:1, 0:4, 0:4, 0:2] : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
    return %1, %5 : tensor<1x2x2x2xf32>, tensor<1x4x4x2xf32>
  }
}
