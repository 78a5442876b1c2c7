module @jit_apply attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<4xf32>, %arg2: tensor<12x8xf32>, %arg3: tensor<8x4xf32>, %arg4: tensor<16x12xf32>) -> (tensor<16x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x12xf32>, tensor<12x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<16x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<16x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<16x8xf32>
    %6 = stablehlo.dot_general %5, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %7 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<16x4xf32>
    %9 = stablehlo.add %6, %8 : tensor<16x4xf32>
    return %9 : tensor<16x4xf32>
  }
}
