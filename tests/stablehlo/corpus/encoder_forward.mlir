module @jit_apply attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>, %arg1: tensor<8xf32>, %arg2: tensor<2x4xf32>, %arg3: tensor<8xf32>, %arg4: tensor<2x4xf32>, %arg5: tensor<2x4xf32>, %arg6: tensor<8xf32>, %arg7: tensor<8xf32>, %arg8: tensor<8xf32>, %arg9: tensor<8xf32>, %arg10: tensor<8x12xf32>, %arg11: tensor<12x8xf32>, %arg12: tensor<8x2x4xf32>, %arg13: tensor<2x4x8xf32>, %arg14: tensor<8x2x4xf32>, %arg15: tensor<8x2x4xf32>, %arg16: tensor<2x5x8xf32>) -> (tensor<2x5x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg14 : (tensor<8x2x4xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.dot_general %arg16, %0, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
    %2 = stablehlo.reshape %arg4 : (tensor<2x4xf32>) -> tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %5 = stablehlo.add %1, %4 : tensor<2x5x8xf32>
    %6 = stablehlo.reshape %5 : (tensor<2x5x8xf32>) -> tensor<2x5x2x4xf32>
    %7 = stablehlo.transpose %6, dims = [0, 2, 1, 3] : (tensor<2x5x2x4xf32>) -> tensor<2x2x5x4xf32>
    %8 = stablehlo.reshape %arg12 : (tensor<8x2x4xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.dot_general %arg16, %8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
    %10 = stablehlo.reshape %arg2 : (tensor<2x4xf32>) -> tensor<8xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %13 = stablehlo.add %9, %12 : tensor<2x5x8xf32>
    %14 = stablehlo.reshape %13 : (tensor<2x5x8xf32>) -> tensor<2x5x2x4xf32>
    %15 = stablehlo.transpose %14, dims = [0, 2, 1, 3] : (tensor<2x5x2x4xf32>) -> tensor<2x2x5x4xf32>
    %16 = stablehlo.reshape %arg15 : (tensor<8x2x4xf32>) -> tensor<8x8xf32>
    %17 = stablehlo.dot_general %arg16, %16, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
    %18 = stablehlo.reshape %arg5 : (tensor<2x4xf32>) -> tensor<8xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %21 = stablehlo.add %17, %20 : tensor<2x5x8xf32>
    %22 = stablehlo.reshape %21 : (tensor<2x5x8xf32>) -> tensor<2x5x2x4xf32>
    %23 = stablehlo.transpose %22, dims = [0, 2, 1, 3] : (tensor<2x5x2x4xf32>) -> tensor<2x2x5x4xf32>
    %24 = stablehlo.transpose %15, dims = [0, 1, 3, 2] : (tensor<2x2x5x4xf32>) -> tensor<2x2x4x5xf32>
    %25 = stablehlo.dot_general %7, %24, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x4xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x5x5xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x5x5xf32>
    %27 = stablehlo.multiply %25, %26 : tensor<2x2x5x5xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %28 = stablehlo.reduce(%27 init: %cst_0) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %31 = stablehlo.subtract %27, %30 : tensor<2x2x5x5xf32>
    %32 = stablehlo.exponential %31 : tensor<2x2x5x5xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.reduce(%32 init: %cst_1) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %36 = stablehlo.divide %32, %35 : tensor<2x2x5x5xf32>
    %37 = stablehlo.dot_general %36, %23, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
    %38 = stablehlo.transpose %37, dims = [0, 2, 1, 3] : (tensor<2x2x5x4xf32>) -> tensor<2x5x2x4xf32>
    %39 = stablehlo.reshape %38 : (tensor<2x5x2x4xf32>) -> tensor<2x5x8xf32>
    %40 = stablehlo.reshape %arg13 : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
    %41 = stablehlo.dot_general %39, %40, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
    %42 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %44 = stablehlo.add %41, %43 : tensor<2x5x8xf32>
    %45 = stablehlo.add %arg16, %44 : tensor<2x5x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_2) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_3 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %49 = stablehlo.divide %47, %48 : tensor<2x5x1xf32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %51 = stablehlo.subtract %45, %50 : tensor<2x5x8xf32>
    %52 = stablehlo.multiply %51, %51 : tensor<2x5x8xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst_4) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_5 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %56 = stablehlo.divide %54, %55 : tensor<2x5x1xf32>
    %cst_6 = stablehlo.constant dense<9.99999996E-13> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %58 = stablehlo.add %56, %57 : tensor<2x5x1xf32>
    %59 = stablehlo.sqrt %58 : tensor<2x5x1xf32>
    %60 = stablehlo.broadcast_in_dim %59, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %61 = stablehlo.divide %51, %60 : tensor<2x5x8xf32>
    %62 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %64 = stablehlo.multiply %61, %63 : tensor<2x5x8xf32>
    %65 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %66 = stablehlo.broadcast_in_dim %65, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %67 = stablehlo.add %64, %66 : tensor<2x5x8xf32>
    %68 = stablehlo.dot_general %67, %arg10, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x12xf32>) -> tensor<2x5x12xf32>
    %69 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<12xf32>) -> tensor<1x1x12xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2] : (tensor<1x1x12xf32>) -> tensor<2x5x12xf32>
    %71 = stablehlo.add %68, %70 : tensor<2x5x12xf32>
    %cst_7 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %73 = stablehlo.multiply %72, %71 : tensor<2x5x12xf32>
    %cst_8 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %75 = stablehlo.multiply %71, %74 : tensor<2x5x12xf32>
    %76 = chlo.erf %75 : tensor<2x5x12xf32> -> tensor<2x5x12xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %78 = stablehlo.add %77, %76 : tensor<2x5x12xf32>
    %79 = stablehlo.multiply %73, %78 : tensor<2x5x12xf32>
    %80 = stablehlo.dot_general %79, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x12xf32>, tensor<12x8xf32>) -> tensor<2x5x8xf32>
    %81 = stablehlo.add %67, %80 : tensor<2x5x8xf32>
    %82 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %84 = stablehlo.add %81, %83 : tensor<2x5x8xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %85 = stablehlo.reduce(%84 init: %cst_10) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %86 = stablehlo.broadcast_in_dim %85, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_11 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %88 = stablehlo.divide %86, %87 : tensor<2x5x1xf32>
    %89 = stablehlo.broadcast_in_dim %88, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %90 = stablehlo.subtract %84, %89 : tensor<2x5x8xf32>
    %91 = stablehlo.multiply %90, %90 : tensor<2x5x8xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %92 = stablehlo.reduce(%91 init: %cst_12) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %93 = stablehlo.broadcast_in_dim %92, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_13 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %94 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %95 = stablehlo.divide %93, %94 : tensor<2x5x1xf32>
    %cst_14 = stablehlo.constant dense<9.99999996E-13> : tensor<f32>
    %96 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %97 = stablehlo.add %95, %96 : tensor<2x5x1xf32>
    %98 = stablehlo.sqrt %97 : tensor<2x5x1xf32>
    %99 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %100 = stablehlo.divide %90, %99 : tensor<2x5x8xf32>
    %101 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %102 = stablehlo.broadcast_in_dim %101, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %103 = stablehlo.multiply %100, %102 : tensor<2x5x8xf32>
    %104 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %105 = stablehlo.broadcast_in_dim %104, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %106 = stablehlo.add %103, %105 : tensor<2x5x8xf32>
    return %106 : tensor<2x5x8xf32>
  }
}
