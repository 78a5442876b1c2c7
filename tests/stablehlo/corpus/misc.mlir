module @jit__misc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>) -> (tensor<4x5xf32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}, tensor<4x5xf32> {jax.result_info = "result[2]"}, tensor<4x5xi32> {jax.result_info = "result[3]"}, tensor<f32> {jax.result_info = "result[4]"}, tensor<4x5xf32> {jax.result_info = "result[5]"}, tensor<4x5xf32> {jax.result_info = "result[6]"}, tensor<4x5xf32> {jax.result_info = "result[7]"}, tensor<4x5xf32> {jax.result_info = "result[8]"}, tensor<f32> {jax.result_info = "result[9]"}) {
    %0 = call @cumsum(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %1 = call @cummax(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %2 = call @sort(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %3 = call @argsort(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xi32>
    %4 = call @norm(%arg0) : (tensor<4x5xf32>) -> tensor<f32>
    %5 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4x5xf32>
    %6 = call @tril(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %7 = call @_flip(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %8 = stablehlo.optimization_barrier %arg0 : tensor<4x5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %10 = stablehlo.add %8, %9 : tensor<4x5xf32>
    %11 = call @median(%arg0) : (tensor<4x5xf32>) -> tensor<f32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %10, %11 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xi32>, tensor<f32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<f32>
  }
  func.func private @cumsum(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [4, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 5>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    return %1 : tensor<4x5xf32>
  }
  func.func private @cummax(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 4, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    return %1 : tensor<4x5xf32>
  }
  func.func private @sort(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
  func.func private @argsort(%arg0: tensor<4x5xf32>) -> tensor<4x5xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<4x5xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %3 = stablehlo.select %2, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %4 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %7 = stablehlo.select %6, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %8 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %9 = stablehlo.select %8, %cst_4, %7 : tensor<i1>, tensor<f32>
      %10 = stablehlo.compare LT, %5, %9, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    }) : (tensor<4x5xf32>, tensor<4x5xi32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
    return %1#1 : tensor<4x5xi32>
  }
  func.func private @norm(%arg0: tensor<4x5xf32>) -> tensor<f32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.sqrt %1 : tensor<f32>
    return %2 : tensor<f32>
  }
  func.func private @tril(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.iota dim = 0 : tensor<4x5xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x5xi32>
    %2 = stablehlo.add %0, %1 : tensor<4x5xi32>
    %3 = stablehlo.iota dim = 1 : tensor<4x5xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<4x5xi32>, tensor<4x5xi32>) -> tensor<4x5xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<4x5xi1>, tensor<4x5xf32>
    return %6 : tensor<4x5xf32>
  }
  func.func private @_flip(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0, 1] : tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
  func.func private @median(%arg0: tensor<4x5xf32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = call @quantile(%arg0, %cst) : (tensor<4x5xf32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @quantile(%arg0: tensor<4x5xf32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.reshape %arg0 : (tensor<4x5xf32>) -> tensor<20xf32>
    %1 = stablehlo.compare NE, %0, %0, FLOAT : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xi1>
    %c = stablehlo.constant dense<false> : tensor<i1>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.or across dimensions = [0] : (tensor<20xi1>, tensor<i1>) -> tensor<i1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %4 = call @_where(%3, %cst, %0) : (tensor<1xi1>, tensor<f32>, tensor<20xf32>) -> tensor<20xf32>
    %5 = "stablehlo.sort"(%4) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %22 = stablehlo.compare EQ, %arg2, %cst_9, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %23 = stablehlo.select %22, %cst_10, %arg2 : tensor<i1>, tensor<f32>
      %24 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_11 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %25 = stablehlo.select %24, %cst_11, %23 : tensor<i1>, tensor<f32>
      %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %26 = stablehlo.compare EQ, %arg3, %cst_12, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %27 = stablehlo.select %26, %cst_13, %arg3 : tensor<i1>, tensor<f32>
      %28 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_14 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %29 = stablehlo.select %28, %cst_14, %27 : tensor<i1>, tensor<f32>
      %30 = stablehlo.compare LT, %25, %29, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %30 : tensor<i1>
    }) : (tensor<20xf32>) -> tensor<20xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.subtract %cst_0, %cst_1 : tensor<f32>
    %7 = stablehlo.multiply %arg1, %6 : tensor<f32>
    %8 = stablehlo.floor %7 : tensor<f32>
    %9 = stablehlo.ceil %7 : tensor<f32>
    %cst_2 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.subtract %cst_2, %cst_3 : tensor<f32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.clamp %cst_4, %8, %10 : tensor<f32>
    %cst_5 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.subtract %cst_5, %cst_6 : tensor<f32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.clamp %cst_7, %9, %12 : tensor<f32>
    %14 = stablehlo.convert %11 : (tensor<f32>) -> tensor<i32>
    %15 = stablehlo.convert %13 : (tensor<f32>) -> tensor<i32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %17 = "stablehlo.gather"(%5, %16) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<20xf32>, tensor<1xi32>) -> tensor<f32>
    %18 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %19 = "stablehlo.gather"(%5, %18) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<20xf32>, tensor<1xi32>) -> tensor<f32>
    %20 = stablehlo.add %17, %19 : tensor<f32>
    %cst_8 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %21 = stablehlo.multiply %20, %cst_8 : tensor<f32>
    return %21 : tensor<f32>
  }
  func.func private @_where(%arg0: tensor<1xi1>, %arg1: tensor<f32>, %arg2: tensor<20xf32>) -> tensor<20xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<1xi1>) -> tensor<20xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<20xf32>
    %3 = stablehlo.select %1, %2, %arg2 : tensor<20xi1>, tensor<20xf32>
    return %3 : tensor<20xf32>
  }
}
