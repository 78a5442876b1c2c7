module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<12x4xf32>, %arg2: tensor<16x12xf32>, %arg3: tensor<16x4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]['b']"}, tensor<12x4xf32> {jax.result_info = "result[0]['w']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x12xf32>, tensor<12x4xf32>) -> tensor<16x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<16x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<16x4xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %5 = stablehlo.reshape %4 : (tensor<16xf32>) -> tensor<16x1xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x4xf32>
    %7 = stablehlo.compare EQ, %3, %6, FLOAT : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xi1>
    %8 = stablehlo.convert %7 : (tensor<16x4xi1>) -> tensor<16x4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %10 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x4xf32>
    %12 = stablehlo.subtract %3, %11 : tensor<16x4xf32>
    %13 = stablehlo.exponential %12 : tensor<16x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.reduce(%13 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %16 = stablehlo.log %15 : tensor<16x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x4xf32>
    %18 = stablehlo.subtract %12, %17 : tensor<16x4xf32>
    %19 = stablehlo.multiply %arg3, %18 : tensor<16x4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.reduce(%19 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.reduce(%20 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
    %cst_4 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %22 = stablehlo.divide %21, %cst_4 : tensor<f32>
    %23 = stablehlo.negate %22 : tensor<f32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %24 = stablehlo.negate %cst_5 : tensor<f32>
    %cst_6 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %25 = stablehlo.divide %24, %cst_6 : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0] : (tensor<16xf32>) -> tensor<16x4xf32>
    %28 = stablehlo.multiply %arg3, %27 : tensor<16x4xf32>
    %29 = stablehlo.negate %28 : tensor<16x4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.reduce(%29 init: %cst_7) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %31 = stablehlo.reshape %30 : (tensor<16xf32>) -> tensor<16x1xf32>
    %32 = stablehlo.divide %31, %15 : tensor<16x1xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.reduce(%32 init: %cst_8) applies stablehlo.add across dimensions = [1] : (tensor<16x1xf32>, tensor<f32>) -> tensor<16xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0] : (tensor<16xf32>) -> tensor<16x4xf32>
    %35 = stablehlo.multiply %34, %13 : tensor<16x4xf32>
    %36 = stablehlo.add %28, %35 : tensor<16x4xf32>
    %37 = stablehlo.negate %36 : tensor<16x4xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%37 init: %cst_9) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %39 = stablehlo.reshape %38 : (tensor<16xf32>) -> tensor<16x1xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.reduce(%39 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<16x1xf32>, tensor<f32>) -> tensor<16xf32>
    %41 = stablehlo.divide %40, %9 : tensor<16xf32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0] : (tensor<16xf32>) -> tensor<16x4xf32>
    %43 = stablehlo.multiply %42, %8 : tensor<16x4xf32>
    %44 = stablehlo.add %36, %43 : tensor<16x4xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %45 = stablehlo.reduce(%44 init: %cst_11) applies stablehlo.add across dimensions = [0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<4xf32>
    %46 = stablehlo.reshape %45 : (tensor<4xf32>) -> tensor<1x4xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.reduce(%46 init: %cst_12) applies stablehlo.add across dimensions = [0] : (tensor<1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %48 = stablehlo.dot_general %44, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x4xf32>, tensor<16x12xf32>) -> tensor<4x12xf32>
    %49 = stablehlo.transpose %48, dims = [1, 0] : (tensor<4x12xf32>) -> tensor<12x4xf32>
    %cst_13 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %51 = stablehlo.multiply %50, %47 : tensor<4xf32>
    %52 = stablehlo.subtract %arg0, %51 : tensor<4xf32>
    %cst_14 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %53 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<12x4xf32>
    %54 = stablehlo.multiply %53, %49 : tensor<12x4xf32>
    %55 = stablehlo.subtract %arg1, %54 : tensor<12x4xf32>
    return %52, %55, %23 : tensor<4xf32>, tensor<12x4xf32>, tensor<f32>
  }
}
