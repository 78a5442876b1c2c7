module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<4xf32>, %arg2: tensor<5x5x1x4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<5x5x4x6xf32>, %arg5: tensor<6xf32>, %arg6: tensor<24x16xf32>, %arg7: tensor<16x4xf32>, %arg8: tensor<8x16x16x1xf32>, %arg9: tensor<8x4xf32>) -> (tensor<16xf32> {jax.result_info = "result[0]['b1']"}, tensor<4xf32> {jax.result_info = "result[0]['b2']"}, tensor<5x5x1x4xf32> {jax.result_info = "result[0]['conv1']"}, tensor<4xf32> {jax.result_info = "result[0]['conv1_b']"}, tensor<5x5x4x6xf32> {jax.result_info = "result[0]['conv2']"}, tensor<6xf32> {jax.result_info = "result[0]['conv2_b']"}, tensor<24x16xf32> {jax.result_info = "result[0]['w1']"}, tensor<16x4xf32> {jax.result_info = "result[0]['w2']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convolution(%arg8, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[2, 2], [2, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x16x16x1xf32>, tensor<5x5x1x4xf32>) -> tensor<8x16x16x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<8x16x16x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x16x16x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<8x16x16x4xf32>
    %6 = stablehlo.compare EQ, %3, %5, FLOAT : (tensor<8x16x16x4xf32>, tensor<8x16x16x4xf32>) -> tensor<8x16x16x4xi1>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %9 = stablehlo.select %6, %7, %8 : tensor<8x16x16x4xi1>, tensor<8x16x16x4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %11 = stablehlo.compare EQ, %10, %5, FLOAT : (tensor<8x16x16x4xf32>, tensor<8x16x16x4xf32>) -> tensor<8x16x16x4xi1>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x16x16x4xf32>
    %14 = stablehlo.select %11, %12, %13 : tensor<8x16x16x4xi1>, tensor<8x16x16x4xf32>
    %15 = stablehlo.divide %9, %14 : tensor<8x16x16x4xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<f32>
    %17 = "stablehlo.reduce_window"(%5, %16) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %154 = stablehlo.maximum %arg10, %arg11 : tensor<f32>
      stablehlo.return %154 : tensor<f32>
    }) : (tensor<8x16x16x4xf32>, tensor<f32>) -> tensor<8x8x8x4xf32>
    %18 = stablehlo.convolution(%17, %arg4) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x4xf32>, tensor<5x5x4x6xf32>) -> tensor<8x4x4x6xf32>
    %19 = stablehlo.broadcast_in_dim %arg5, dims = [3] : (tensor<6xf32>) -> tensor<1x1x1x6xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2, 3] : (tensor<1x1x1x6xf32>) -> tensor<8x4x4x6xf32>
    %21 = stablehlo.add %18, %20 : tensor<8x4x4x6xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %23 = stablehlo.maximum %21, %22 : tensor<8x4x4x6xf32>
    %24 = stablehlo.compare EQ, %21, %23, FLOAT : (tensor<8x4x4x6xf32>, tensor<8x4x4x6xf32>) -> tensor<8x4x4x6xi1>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %27 = stablehlo.select %24, %25, %26 : tensor<8x4x4x6xi1>, tensor<8x4x4x6xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %29 = stablehlo.compare EQ, %28, %23, FLOAT : (tensor<8x4x4x6xf32>, tensor<8x4x4x6xf32>) -> tensor<8x4x4x6xi1>
    %cst_10 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x4x4x6xf32>
    %32 = stablehlo.select %29, %30, %31 : tensor<8x4x4x6xi1>, tensor<8x4x4x6xf32>
    %33 = stablehlo.divide %27, %32 : tensor<8x4x4x6xf32>
    %cst_12 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<f32>
    %35 = "stablehlo.reduce_window"(%23, %34) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %154 = stablehlo.maximum %arg10, %arg11 : tensor<f32>
      stablehlo.return %154 : tensor<f32>
    }) : (tensor<8x4x4x6xf32>, tensor<f32>) -> tensor<8x2x2x6xf32>
    %36 = stablehlo.reshape %35 : (tensor<8x2x2x6xf32>) -> tensor<8x24xf32>
    %37 = stablehlo.dot_general %36, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x24xf32>, tensor<24x16xf32>) -> tensor<8x16xf32>
    %38 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<8x16xf32>
    %40 = stablehlo.add %37, %39 : tensor<8x16xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %42 = stablehlo.maximum %40, %41 : tensor<8x16xf32>
    %43 = stablehlo.compare EQ, %40, %42, FLOAT : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %46 = stablehlo.select %43, %44, %45 : tensor<8x16xi1>, tensor<8x16xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %48 = stablehlo.compare EQ, %47, %42, FLOAT : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %cst_17 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %cst_18 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %51 = stablehlo.select %48, %49, %50 : tensor<8x16xi1>, tensor<8x16xf32>
    %52 = stablehlo.divide %46, %51 : tensor<8x16xf32>
    %53 = stablehlo.dot_general %42, %arg7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %54 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<8x4xf32>
    %56 = stablehlo.add %53, %55 : tensor<8x4xf32>
    %cst_19 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %57 = stablehlo.reduce(%56 init: %cst_19) applies stablehlo.maximum across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %58 = stablehlo.reshape %57 : (tensor<8xf32>) -> tensor<8x1xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
    %60 = stablehlo.compare EQ, %56, %59, FLOAT : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>
    %61 = stablehlo.convert %60 : (tensor<8x4xi1>) -> tensor<8x4xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %62 = stablehlo.reduce(%61 init: %cst_20) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %63 = stablehlo.broadcast_in_dim %57, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
    %65 = stablehlo.subtract %56, %64 : tensor<8x4xf32>
    %66 = stablehlo.exponential %65 : tensor<8x4xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %67 = stablehlo.reduce(%66 init: %cst_21) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %68 = stablehlo.broadcast_in_dim %67, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %69 = stablehlo.log %68 : tensor<8x1xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
    %71 = stablehlo.subtract %65, %70 : tensor<8x4xf32>
    %72 = stablehlo.multiply %arg9, %71 : tensor<8x4xf32>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %73 = stablehlo.reduce(%72 init: %cst_22) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.reduce(%73 init: %cst_23) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %cst_24 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %75 = stablehlo.divide %74, %cst_24 : tensor<f32>
    %76 = stablehlo.negate %75 : tensor<f32>
    %cst_25 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %77 = stablehlo.negate %cst_25 : tensor<f32>
    %cst_26 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %78 = stablehlo.divide %77, %cst_26 : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %78, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
    %81 = stablehlo.multiply %arg9, %80 : tensor<8x4xf32>
    %82 = stablehlo.negate %81 : tensor<8x4xf32>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %83 = stablehlo.reduce(%82 init: %cst_27) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %84 = stablehlo.reshape %83 : (tensor<8xf32>) -> tensor<8x1xf32>
    %85 = stablehlo.divide %84, %68 : tensor<8x1xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %86 = stablehlo.reduce(%85 init: %cst_28) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %87 = stablehlo.broadcast_in_dim %86, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
    %88 = stablehlo.multiply %87, %66 : tensor<8x4xf32>
    %89 = stablehlo.add %81, %88 : tensor<8x4xf32>
    %90 = stablehlo.negate %89 : tensor<8x4xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %91 = stablehlo.reduce(%90 init: %cst_29) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %92 = stablehlo.reshape %91 : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_30 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %93 = stablehlo.reduce(%92 init: %cst_30) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %94 = stablehlo.divide %93, %62 : tensor<8xf32>
    %95 = stablehlo.broadcast_in_dim %94, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
    %96 = stablehlo.multiply %95, %61 : tensor<8x4xf32>
    %97 = stablehlo.add %89, %96 : tensor<8x4xf32>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %98 = stablehlo.reduce(%97 init: %cst_31) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    %99 = stablehlo.reshape %98 : (tensor<4xf32>) -> tensor<1x4xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %100 = stablehlo.reduce(%99 init: %cst_32) applies stablehlo.add across dimensions = [0] : (tensor<1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %101 = stablehlo.dot_general %97, %42, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %102 = stablehlo.transpose %101, dims = [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>
    %103 = stablehlo.dot_general %97, %arg7, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<8x16xf32>
    %104 = stablehlo.multiply %103, %52 : tensor<8x16xf32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %105 = stablehlo.reduce(%104 init: %cst_33) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %106 = stablehlo.reshape %105 : (tensor<16xf32>) -> tensor<1x16xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %107 = stablehlo.reduce(%106 init: %cst_34) applies stablehlo.add across dimensions = [0] : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %108 = stablehlo.dot_general %104, %36, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<8x24xf32>) -> tensor<16x24xf32>
    %109 = stablehlo.transpose %108, dims = [1, 0] : (tensor<16x24xf32>) -> tensor<24x16xf32>
    %110 = stablehlo.dot_general %104, %arg6, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<24x16xf32>) -> tensor<8x24xf32>
    %111 = stablehlo.reshape %110 : (tensor<8x24xf32>) -> tensor<8x2x2x6xf32>
    %cst_35 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %112 = stablehlo.pad %23, %cst_35, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<8x4x4x6xf32>, tensor<f32>) -> tensor<8x4x4x6xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %113 = "stablehlo.select_and_scatter"(%112, %111, %cst_36) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %154 = stablehlo.compare GE, %arg10, %arg11, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %154 : tensor<i1>
    }, {
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %154 = stablehlo.add %arg10, %arg11 : tensor<f32>
      stablehlo.return %154 : tensor<f32>
    }) : (tensor<8x4x4x6xf32>, tensor<8x2x2x6xf32>, tensor<f32>) -> tensor<8x4x4x6xf32>
    %114 = stablehlo.slice %113 [0:8, 0:4, 0:4, 0:6] : (tensor<8x4x4x6xf32>) -> tensor<8x4x4x6xf32>
    %115 = stablehlo.multiply %114, %33 : tensor<8x4x4x6xf32>
    %cst_37 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %116 = stablehlo.reduce(%115 init: %cst_37) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x4x4x6xf32>, tensor<f32>) -> tensor<6xf32>
    %117 = stablehlo.reshape %116 : (tensor<6xf32>) -> tensor<1x1x1x6xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %118 = stablehlo.reduce(%117 init: %cst_38) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x6xf32>, tensor<f32>) -> tensor<6xf32>
    %119 = stablehlo.convolution(%17, %115) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x4xf32>, tensor<8x4x4x6xf32>) -> tensor<5x5x4x6xf32>
    %120 = stablehlo.reverse %arg4, dims = [0, 1] : tensor<5x5x4x6xf32>
    %121 = stablehlo.convolution(%115, %120) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[4, 4], [4, 4]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x4x4x6xf32>, tensor<5x5x4x6xf32>) -> tensor<8x8x8x4xf32>
    %cst_39 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %122 = stablehlo.pad %5, %cst_39, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<8x16x16x4xf32>, tensor<f32>) -> tensor<8x16x16x4xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %123 = "stablehlo.select_and_scatter"(%122, %121, %cst_40) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %154 = stablehlo.compare GE, %arg10, %arg11, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %154 : tensor<i1>
    }, {
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %154 = stablehlo.add %arg10, %arg11 : tensor<f32>
      stablehlo.return %154 : tensor<f32>
    }) : (tensor<8x16x16x4xf32>, tensor<8x8x8x4xf32>, tensor<f32>) -> tensor<8x16x16x4xf32>
    %124 = stablehlo.slice %123 [0:8, 0:16, 0:16, 0:4] : (tensor<8x16x16x4xf32>) -> tensor<8x16x16x4xf32>
    %125 = stablehlo.multiply %124, %15 : tensor<8x16x16x4xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %126 = stablehlo.reduce(%125 init: %cst_41) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x16x16x4xf32>, tensor<f32>) -> tensor<4xf32>
    %127 = stablehlo.reshape %126 : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %128 = stablehlo.reduce(%127 init: %cst_42) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %129 = stablehlo.convolution(%arg8, %125) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[2, 2], [2, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x16x16x1xf32>, tensor<8x16x16x4xf32>) -> tensor<5x5x1x4xf32>
    %cst_43 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %131 = stablehlo.multiply %130, %107 : tensor<16xf32>
    %132 = stablehlo.subtract %arg0, %131 : tensor<16xf32>
    %cst_44 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %134 = stablehlo.multiply %133, %100 : tensor<4xf32>
    %135 = stablehlo.subtract %arg1, %134 : tensor<4xf32>
    %cst_45 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %136 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<5x5x1x4xf32>
    %137 = stablehlo.multiply %136, %129 : tensor<5x5x1x4xf32>
    %138 = stablehlo.subtract %arg2, %137 : tensor<5x5x1x4xf32>
    %cst_46 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %140 = stablehlo.multiply %139, %128 : tensor<4xf32>
    %141 = stablehlo.subtract %arg3, %140 : tensor<4xf32>
    %cst_47 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %142 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<5x5x4x6xf32>
    %143 = stablehlo.multiply %142, %119 : tensor<5x5x4x6xf32>
    %144 = stablehlo.subtract %arg4, %143 : tensor<5x5x4x6xf32>
    %cst_48 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %145 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %146 = stablehlo.multiply %145, %118 : tensor<6xf32>
    %147 = stablehlo.subtract %arg5, %146 : tensor<6xf32>
    %cst_49 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %148 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<24x16xf32>
    %149 = stablehlo.multiply %148, %109 : tensor<24x16xf32>
    %150 = stablehlo.subtract %arg6, %149 : tensor<24x16xf32>
    %cst_50 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<16x4xf32>
    %152 = stablehlo.multiply %151, %102 : tensor<16x4xf32>
    %153 = stablehlo.subtract %arg7, %152 : tensor<16x4xf32>
    return %132, %135, %138, %141, %144, %147, %150, %153, %76 : tensor<16xf32>, tensor<4xf32>, tensor<5x5x1x4xf32>, tensor<4xf32>, tensor<5x5x4x6xf32>, tensor<6xf32>, tensor<24x16xf32>, tensor<16x4xf32>, tensor<f32>
  }
}
