module @jit__fori attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:4 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0, %iterArg_1 = %arg1, %iterArg_2 = %arg1) : tensor<i32>, tensor<i32>, tensor<3xf32>, tensor<3xf32>
    cond {
      %1 = stablehlo.compare LT, %iterArg, %iterArg_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg, %c_3 : tensor<i32>
      %2 = stablehlo.multiply %iterArg_1, %iterArg_2 : tensor<3xf32>
      %3 = stablehlo.convert %iterArg : (tensor<i32>) -> tensor<f32>
      %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %5 = stablehlo.add %2, %4 : tensor<3xf32>
      %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %7 = stablehlo.multiply %iterArg_2, %6 : tensor<3xf32>
      stablehlo.return %1, %iterArg_0, %5, %7 : tensor<i32>, tensor<i32>, tensor<3xf32>, tensor<3xf32>
    }
    return %0#2, %0#3 : tensor<3xf32>, tensor<3xf32>
  }
}
