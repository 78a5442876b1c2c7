module @jit__integers attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xi32>, %arg1: tensor<3x4xi32>) -> (tensor<3x4xi32> {jax.result_info = "result[0]"}, tensor<3x4xi32> {jax.result_info = "result[1]"}, tensor<3x4xi32> {jax.result_info = "result[2]"}, tensor<3x4xi32> {jax.result_info = "result[3]"}, tensor<3x4xi32> {jax.result_info = "result[4]"}, tensor<3x4xi32> {jax.result_info = "result[5]"}, tensor<3x4xi32> {jax.result_info = "result[6]"}, tensor<3x4xi32> {jax.result_info = "result[7]"}, tensor<3x4xi32> {jax.result_info = "result[8]"}, tensor<3x4xi32> {jax.result_info = "result[9]"}, tensor<3x4xi32> {jax.result_info = "result[10]"}, tensor<i32> {jax.result_info = "result[11]"}, tensor<4xi32> {jax.result_info = "result[12]"}, tensor<i32> {jax.result_info = "result[13]"}, tensor<3x4xui32> {jax.result_info = "result[14]"}, tensor<12xi32> {jax.result_info = "result[15]"}) {
    %0 = stablehlo.and %arg0, %arg1 : tensor<3x4xi32>
    %1 = stablehlo.or %arg0, %arg1 : tensor<3x4xi32>
    %2 = stablehlo.xor %arg0, %arg1 : tensor<3x4xi32>
    %3 = stablehlo.not %arg0 : tensor<3x4xi32>
    %c = stablehlo.constant dense<7> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %5 = stablehlo.and %arg1, %4 : tensor<3x4xi32>
    %6 = stablehlo.shift_left %arg0, %5 : tensor<3x4xi32>
    %c_0 = stablehlo.constant dense<7> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %8 = stablehlo.and %arg1, %7 : tensor<3x4xi32>
    %9 = stablehlo.shift_right_arithmetic %arg0, %8 : tensor<3x4xi32>
    %c_1 = stablehlo.constant dense<7> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %11 = stablehlo.and %arg1, %10 : tensor<3x4xi32>
    %12 = stablehlo.shift_right_logical %arg0, %11 : tensor<3x4xi32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %14 = stablehlo.maximum %arg1, %13 : tensor<3x4xi32>
    %15 = call @floor_divide(%arg0, %14) : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
    %c_3 = stablehlo.constant dense<1> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %17 = stablehlo.maximum %arg1, %16 : tensor<3x4xi32>
    %18 = call @remainder(%arg0, %17) : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
    %19 = stablehlo.popcnt %arg0 : tensor<3x4xi32>
    %20 = stablehlo.count_leading_zeros %arg0 : tensor<3x4xi32>
    %c_4 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %21 = stablehlo.reduce(%arg0 init: %c_4) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<3x4xi32>, tensor<i32>) -> tensor<i32>
    %c_5 = stablehlo.constant dense<2147483647> : tensor<i32>
    %22 = stablehlo.reduce(%arg1 init: %c_5) applies stablehlo.minimum across dimensions = [0] : (tensor<3x4xi32>, tensor<i32>) -> tensor<4xi32>
    %c_6 = stablehlo.constant dense<1> : tensor<i32>
    %23 = stablehlo.reduce(%arg0 init: %c_6) applies stablehlo.multiply across dimensions = [0, 1] : (tensor<3x4xi32>, tensor<i32>) -> tensor<i32>
    %24 = stablehlo.convert %arg0 : (tensor<3x4xi32>) -> tensor<3x4xui32>
    %c_7 = stablehlo.constant dense<3> : tensor<ui32>
    %25 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<ui32>) -> tensor<3x4xui32>
    %26 = stablehlo.shift_right_logical %24, %25 : tensor<3x4xui32>
    %27 = call @cumsum(%arg0) : (tensor<3x4xi32>) -> tensor<12xi32>
    return %0, %1, %2, %3, %6, %9, %12, %15, %18, %19, %20, %21, %22, %23, %26, %27 : tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<i32>, tensor<4xi32>, tensor<i32>, tensor<3x4xui32>, tensor<12xi32>
  }
  func.func private @floor_divide(%arg0: tensor<3x4xi32>, %arg1: tensor<3x4xi32>) -> tensor<3x4xi32> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<3x4xi32>
    %1 = stablehlo.sign %arg0 : tensor<3x4xi32>
    %2 = stablehlo.sign %arg1 : tensor<3x4xi32>
    %3 = stablehlo.compare NE, %1, %2, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<3x4xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %7 = stablehlo.and %3, %6 : tensor<3x4xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %9 = stablehlo.subtract %0, %8 : tensor<3x4xi32>
    %10 = call @_where(%7, %9, %0) : (tensor<3x4xi1>, tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
    return %10 : tensor<3x4xi32>
  }
  func.func private @_where(%arg0: tensor<3x4xi1>, %arg1: tensor<3x4xi32>, %arg2: tensor<3x4xi32>) -> tensor<3x4xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3x4xi1>, tensor<3x4xi32>
    return %0 : tensor<3x4xi32>
  }
  func.func private @remainder(%arg0: tensor<3x4xi32>, %arg1: tensor<3x4xi32>) -> tensor<3x4xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %1 = stablehlo.compare EQ, %arg1, %0, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %3 = call @_where(%1, %2, %arg1) : (tensor<3x4xi1>, tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<3x4xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %10 = stablehlo.compare LT, %3, %9, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
    %12 = stablehlo.and %11, %6 : tensor<3x4xi1>
    %13 = stablehlo.add %4, %3 : tensor<3x4xi32>
    %14 = stablehlo.select %12, %13, %4 : tensor<3x4xi1>, tensor<3x4xi32>
    return %14 : tensor<3x4xi32>
  }
  func.func private @cumsum(%arg0: tensor<3x4xi32>) -> tensor<12xi32> {
    %0 = stablehlo.reshape %arg0 : (tensor<3x4xi32>) -> tensor<12xi32>
    %1 = call @cumsum_0(%0) : (tensor<12xi32>) -> tensor<12xi32>
    return %1 : tensor<12xi32>
  }
  func.func private @cumsum_0(%arg0: tensor<12xi32>) -> tensor<12xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1>, padding = dense<[[11, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 12>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<i32>
      stablehlo.return %2 : tensor<i32>
    }) : (tensor<12xi32>, tensor<i32>) -> tensor<12xi32>
    return %1 : tensor<12xi32>
  }
}
