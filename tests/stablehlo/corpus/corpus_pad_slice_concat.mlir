module @jit__pads attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<5x12xf32> {jax.result_info = "result[0]"}, tensor<2x2xf32> {jax.result_info = "result[1]"}, tensor<6x4xf32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [1, 0], high = [-1, 2], interior = [1, 2] : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x12xf32>
    %1 = stablehlo.slice %arg0 [0:3:2, 1:4:2] : (tensor<3x4xf32>) -> tensor<2x2xf32>
    %2 = call @_flip(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %3 = stablehlo.concatenate %arg0, %2, dim = 0 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
    return %0, %1, %3 : tensor<5x12xf32>, tensor<2x2xf32>, tensor<6x4xf32>
  }
  func.func private @_flip(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.reverse %arg0, dims = [1] : tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
