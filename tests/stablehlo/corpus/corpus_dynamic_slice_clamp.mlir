module @jit__dyn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.add %arg1, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg1 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.compare LT, %arg2, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<5> : tensor<i32>
    %4 = stablehlo.add %arg2, %c_2 : tensor<i32>
    %5 = stablehlo.select %3, %4, %arg2 : tensor<i1>, tensor<i32>
    %6 = stablehlo.dynamic_slice %arg0, %2, %5, sizes = [2, 3] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.compare LT, %arg1, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_4 = stablehlo.constant dense<4> : tensor<i32>
    %8 = stablehlo.add %arg1, %c_4 : tensor<i32>
    %9 = stablehlo.select %7, %8, %arg1 : tensor<i1>, tensor<i32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %10 = stablehlo.compare LT, %arg2, %c_5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_6 = stablehlo.constant dense<5> : tensor<i32>
    %11 = stablehlo.add %arg2, %c_6 : tensor<i32>
    %12 = stablehlo.select %10, %11, %arg2 : tensor<i1>, tensor<i32>
    %13 = stablehlo.dynamic_update_slice %arg0, %arg3, %9, %12 : (tensor<4x5xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
    return %6, %13 : tensor<2x3xf32>, tensor<4x5xf32>
  }
}
