module @jit_apply attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<4xf32>, %arg2: tensor<5x5x1x4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<5x5x4x6xf32>, %arg5: tensor<6xf32>, %arg6: tensor<24x16xf32>, %arg7: tensor<16x4xf32>, %arg8: tensor<8x16x16x1xf32>) -> (tensor<8x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg8, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[2, 2], [2, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x16x16x1xf32>, tensor<5x5x1x4xf32>) -> tensor<8x16x16x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<8x16x16x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x16x16x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<8x16x16x4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %7 = "stablehlo.reduce_window"(%5, %6) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %27 = stablehlo.maximum %arg9, %arg10 : tensor<f32>
      stablehlo.return %27 : tensor<f32>
    }) : (tensor<8x16x16x4xf32>, tensor<f32>) -> tensor<8x8x8x4xf32>
    %8 = stablehlo.convolution(%7, %arg4) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x4xf32>, tensor<5x5x4x6xf32>) -> tensor<8x4x4x6xf32>
    %9 = stablehlo.broadcast_in_dim %arg5, dims = [3] : (tensor<6xf32>) -> tensor<1x1x1x6xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2, 3] : (tensor<1x1x1x6xf32>) -> tensor<8x4x4x6xf32>
    %11 = stablehlo.add %8, %10 : tensor<8x4x4x6xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %13 = stablehlo.maximum %11, %12 : tensor<8x4x4x6xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.reduce_window"(%13, %14) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %27 = stablehlo.maximum %arg9, %arg10 : tensor<f32>
      stablehlo.return %27 : tensor<f32>
    }) : (tensor<8x4x4x6xf32>, tensor<f32>) -> tensor<8x2x2x6xf32>
    %16 = stablehlo.reshape %15 : (tensor<8x2x2x6xf32>) -> tensor<8x24xf32>
    %17 = stablehlo.dot_general %16, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x24xf32>, tensor<24x16xf32>) -> tensor<8x16xf32>
    %18 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<8x16xf32>
    %20 = stablehlo.add %17, %19 : tensor<8x16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %22 = stablehlo.maximum %20, %21 : tensor<8x16xf32>
    %23 = stablehlo.dot_general %22, %arg7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %24 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<8x4xf32>
    %26 = stablehlo.add %23, %25 : tensor<8x4xf32>
    return %26 : tensor<8x4xf32>
  }
}
