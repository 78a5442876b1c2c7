module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>, %arg1: tensor<8xf32>, %arg2: tensor<2x4xf32>, %arg3: tensor<8xf32>, %arg4: tensor<2x4xf32>, %arg5: tensor<2x4xf32>, %arg6: tensor<8xf32>, %arg7: tensor<8xf32>, %arg8: tensor<8xf32>, %arg9: tensor<8xf32>, %arg10: tensor<8x12xf32>, %arg11: tensor<12x8xf32>, %arg12: tensor<8x2x4xf32>, %arg13: tensor<2x4x8xf32>, %arg14: tensor<8x2x4xf32>, %arg15: tensor<8x2x4xf32>, %arg16: tensor<2x5x8xf32>, %arg17: tensor<2x5x8xf32>) -> (tensor<12xf32> {jax.result_info = "result[0]['b1']"}, tensor<8xf32> {jax.result_info = "result[0]['b2']"}, tensor<2x4xf32> {jax.result_info = "result[0]['bk']"}, tensor<8xf32> {jax.result_info = "result[0]['bo']"}, tensor<2x4xf32> {jax.result_info = "result[0]['bq']"}, tensor<2x4xf32> {jax.result_info = "result[0]['bv']"}, tensor<8xf32> {jax.result_info = "result[0]['ln1_beta']"}, tensor<8xf32> {jax.result_info = "result[0]['ln1_gamma']"}, tensor<8xf32> {jax.result_info = "result[0]['ln2_beta']"}, tensor<8xf32> {jax.result_info = "result[0]['ln2_gamma']"}, tensor<8x12xf32> {jax.result_info = "result[0]['w1']"}, tensor<12x8xf32> {jax.result_info = "result[0]['w2']"}, tensor<8x2x4xf32> {jax.result_info = "result[0]['wk']"}, tensor<2x4x8xf32> {jax.result_info = "result[0]['wo']"}, tensor<8x2x4xf32> {jax.result_info = "result[0]['wq']"}, tensor<8x2x4xf32> {jax.result_info = "result[0]['wv']"}, tensor<f32> {jax.result_info = "result[1]"}) {
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
    %29 = stablehlo.reshape %28 : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %31 = stablehlo.compare EQ, %27, %30, FLOAT : (tensor<2x2x5x5xf32>, tensor<2x2x5x5xf32>) -> tensor<2x2x5x5xi1>
    %32 = stablehlo.convert %31 : (tensor<2x2x5x5xi1>) -> tensor<2x2x5x5xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.reduce(%32 init: %cst_1) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %34 = stablehlo.broadcast_in_dim %28, dims = [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %36 = stablehlo.subtract %27, %35 : tensor<2x2x5x5xf32>
    %37 = stablehlo.exponential %36 : tensor<2x2x5x5xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%37 init: %cst_2) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %40 = stablehlo.broadcast_in_dim %39, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %41 = stablehlo.divide %37, %40 : tensor<2x2x5x5xf32>
    %42 = stablehlo.multiply %39, %39 : tensor<2x2x5x1xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x2x5x1xf32>
    %44 = stablehlo.divide %43, %42 : tensor<2x2x5x1xf32>
    %45 = stablehlo.dot_general %41, %23, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
    %46 = stablehlo.transpose %45, dims = [0, 2, 1, 3] : (tensor<2x2x5x4xf32>) -> tensor<2x5x2x4xf32>
    %47 = stablehlo.reshape %46 : (tensor<2x5x2x4xf32>) -> tensor<2x5x8xf32>
    %48 = stablehlo.reshape %arg13 : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
    %49 = stablehlo.dot_general %47, %48, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
    %50 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %52 = stablehlo.add %49, %51 : tensor<2x5x8xf32>
    %53 = stablehlo.add %arg16, %52 : tensor<2x5x8xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.reduce(%53 init: %cst_4) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_5 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %57 = stablehlo.divide %55, %56 : tensor<2x5x1xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %59 = stablehlo.subtract %53, %58 : tensor<2x5x8xf32>
    %60 = stablehlo.multiply %59, %59 : tensor<2x5x8xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %61 = stablehlo.reduce(%60 init: %cst_6) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_7 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %63 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %64 = stablehlo.divide %62, %63 : tensor<2x5x1xf32>
    %cst_8 = stablehlo.constant dense<9.99999996E-13> : tensor<f32>
    %65 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %66 = stablehlo.add %64, %65 : tensor<2x5x1xf32>
    %67 = stablehlo.sqrt %66 : tensor<2x5x1xf32>
    %cst_9 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %68 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %69 = stablehlo.divide %68, %67 : tensor<2x5x1xf32>
    %70 = stablehlo.broadcast_in_dim %67, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %71 = stablehlo.divide %59, %70 : tensor<2x5x8xf32>
    %72 = stablehlo.multiply %67, %67 : tensor<2x5x1xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %74 = stablehlo.divide %73, %72 : tensor<2x5x1xf32>
    %75 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %77 = stablehlo.multiply %71, %76 : tensor<2x5x8xf32>
    %78 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %79 = stablehlo.broadcast_in_dim %78, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %80 = stablehlo.add %77, %79 : tensor<2x5x8xf32>
    %81 = stablehlo.dot_general %80, %arg10, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x12xf32>) -> tensor<2x5x12xf32>
    %82 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<12xf32>) -> tensor<1x1x12xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<1x1x12xf32>) -> tensor<2x5x12xf32>
    %84 = stablehlo.add %81, %83 : tensor<2x5x12xf32>
    %cst_11 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %86 = stablehlo.multiply %85, %84 : tensor<2x5x12xf32>
    %cst_12 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %88 = stablehlo.multiply %84, %87 : tensor<2x5x12xf32>
    %89 = chlo.erf %88 : tensor<2x5x12xf32> -> tensor<2x5x12xf32>
    %90 = chlo.square %88 : tensor<2x5x12xf32> -> tensor<2x5x12xf32>
    %91 = stablehlo.negate %90 : tensor<2x5x12xf32>
    %92 = stablehlo.exponential %91 : tensor<2x5x12xf32>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %93 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %94 = stablehlo.add %93, %89 : tensor<2x5x12xf32>
    %95 = stablehlo.multiply %86, %94 : tensor<2x5x12xf32>
    %96 = stablehlo.dot_general %95, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x5x12xf32>, tensor<12x8xf32>) -> tensor<2x5x8xf32>
    %97 = stablehlo.add %80, %96 : tensor<2x5x8xf32>
    %98 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %99 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %100 = stablehlo.add %97, %99 : tensor<2x5x8xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %101 = stablehlo.reduce(%100 init: %cst_14) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %102 = stablehlo.broadcast_in_dim %101, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_15 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %103 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %104 = stablehlo.divide %102, %103 : tensor<2x5x1xf32>
    %105 = stablehlo.broadcast_in_dim %104, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %106 = stablehlo.subtract %100, %105 : tensor<2x5x8xf32>
    %107 = stablehlo.multiply %106, %106 : tensor<2x5x8xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %108 = stablehlo.reduce(%107 init: %cst_16) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %109 = stablehlo.broadcast_in_dim %108, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_17 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %110 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %111 = stablehlo.divide %109, %110 : tensor<2x5x1xf32>
    %cst_18 = stablehlo.constant dense<9.99999996E-13> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %113 = stablehlo.add %111, %112 : tensor<2x5x1xf32>
    %114 = stablehlo.sqrt %113 : tensor<2x5x1xf32>
    %cst_19 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %115 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %116 = stablehlo.divide %115, %114 : tensor<2x5x1xf32>
    %117 = stablehlo.broadcast_in_dim %114, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %118 = stablehlo.divide %106, %117 : tensor<2x5x8xf32>
    %119 = stablehlo.multiply %114, %114 : tensor<2x5x1xf32>
    %cst_20 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %120 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %121 = stablehlo.divide %120, %119 : tensor<2x5x1xf32>
    %122 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %123 = stablehlo.broadcast_in_dim %122, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %124 = stablehlo.multiply %118, %123 : tensor<2x5x8xf32>
    %125 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %126 = stablehlo.broadcast_in_dim %125, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %127 = stablehlo.add %124, %126 : tensor<2x5x8xf32>
    %128 = stablehlo.subtract %127, %arg17 : tensor<2x5x8xf32>
    %129 = stablehlo.multiply %128, %128 : tensor<2x5x8xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %130 = stablehlo.reduce(%129 init: %cst_21) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<f32>
    %cst_22 = stablehlo.constant dense<8.000000e+01> : tensor<f32>
    %131 = stablehlo.divide %130, %cst_22 : tensor<f32>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_24 = stablehlo.constant dense<8.000000e+01> : tensor<f32>
    %132 = stablehlo.divide %cst_23, %cst_24 : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %132, dims = [] : (tensor<f32>) -> tensor<2x5x8xf32>
    %134 = stablehlo.multiply %128, %133 : tensor<2x5x8xf32>
    %135 = stablehlo.multiply %133, %128 : tensor<2x5x8xf32>
    %136 = stablehlo.add %134, %135 : tensor<2x5x8xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %137 = stablehlo.reduce(%136 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %138 = stablehlo.reshape %137 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %139 = stablehlo.reduce(%138 init: %cst_26) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %140 = stablehlo.multiply %118, %136 : tensor<2x5x8xf32>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %141 = stablehlo.reduce(%140 init: %cst_27) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %142 = stablehlo.reshape %141 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %143 = stablehlo.broadcast_in_dim %122, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %144 = stablehlo.multiply %136, %143 : tensor<2x5x8xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %145 = stablehlo.reduce(%142 init: %cst_28) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %146 = stablehlo.broadcast_in_dim %121, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %147 = stablehlo.multiply %144, %146 : tensor<2x5x8xf32>
    %148 = stablehlo.multiply %147, %106 : tensor<2x5x8xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %149 = stablehlo.reduce(%148 init: %cst_29) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %150 = stablehlo.reshape %149 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %151 = stablehlo.negate %150 : tensor<2x5x1xf32>
    %152 = stablehlo.broadcast_in_dim %114, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %153 = stablehlo.divide %144, %152 : tensor<2x5x8xf32>
    %154 = stablehlo.multiply %151, %116 : tensor<2x5x1xf32>
    %cst_30 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %155 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %156 = stablehlo.divide %154, %155 : tensor<2x5x1xf32>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %157 = stablehlo.reduce(%156 init: %cst_31) applies stablehlo.add across dimensions = [2] : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5xf32>
    %158 = stablehlo.broadcast_in_dim %157, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x8xf32>
    %159 = stablehlo.multiply %106, %158 : tensor<2x5x8xf32>
    %160 = stablehlo.add %153, %159 : tensor<2x5x8xf32>
    %161 = stablehlo.multiply %158, %106 : tensor<2x5x8xf32>
    %162 = stablehlo.add %160, %161 : tensor<2x5x8xf32>
    %163 = stablehlo.negate %162 : tensor<2x5x8xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %164 = stablehlo.reduce(%163 init: %cst_32) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %165 = stablehlo.reshape %164 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_33 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %166 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %167 = stablehlo.divide %165, %166 : tensor<2x5x1xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %168 = stablehlo.reduce(%167 init: %cst_34) applies stablehlo.add across dimensions = [2] : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5xf32>
    %169 = stablehlo.broadcast_in_dim %168, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x8xf32>
    %170 = stablehlo.add %162, %169 : tensor<2x5x8xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %171 = stablehlo.reduce(%170 init: %cst_35) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %172 = stablehlo.reshape %171 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %173 = stablehlo.reduce(%172 init: %cst_36) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %174 = stablehlo.dot_general %170, %95, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<2x5x12xf32>) -> tensor<8x12xf32>
    %175 = stablehlo.transpose %174, dims = [1, 0] : (tensor<8x12xf32>) -> tensor<12x8xf32>
    %176 = stablehlo.dot_general %170, %arg11, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<12x8xf32>) -> tensor<2x5x12xf32>
    %177 = stablehlo.multiply %86, %176 : tensor<2x5x12xf32>
    %178 = stablehlo.multiply %176, %94 : tensor<2x5x12xf32>
    %cst_37 = stablehlo.constant dense<1.12837923> : tensor<f32>
    %179 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %180 = stablehlo.multiply %179, %177 : tensor<2x5x12xf32>
    %181 = stablehlo.multiply %180, %92 : tensor<2x5x12xf32>
    %cst_38 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %183 = stablehlo.multiply %181, %182 : tensor<2x5x12xf32>
    %cst_39 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %184 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<2x5x12xf32>
    %185 = stablehlo.multiply %184, %178 : tensor<2x5x12xf32>
    %186 = stablehlo.add %183, %185 : tensor<2x5x12xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %187 = stablehlo.reduce(%186 init: %cst_40) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x12xf32>, tensor<f32>) -> tensor<12xf32>
    %188 = stablehlo.reshape %187 : (tensor<12xf32>) -> tensor<1x1x12xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %189 = stablehlo.reduce(%188 init: %cst_41) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x12xf32>, tensor<f32>) -> tensor<12xf32>
    %190 = stablehlo.dot_general %186, %80, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x12xf32>, tensor<2x5x8xf32>) -> tensor<12x8xf32>
    %191 = stablehlo.transpose %190, dims = [1, 0] : (tensor<12x8xf32>) -> tensor<8x12xf32>
    %192 = stablehlo.dot_general %186, %arg10, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x12xf32>, tensor<8x12xf32>) -> tensor<2x5x8xf32>
    %193 = stablehlo.add %170, %192 : tensor<2x5x8xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %194 = stablehlo.reduce(%193 init: %cst_42) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %195 = stablehlo.reshape %194 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %196 = stablehlo.reduce(%195 init: %cst_43) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %197 = stablehlo.multiply %71, %193 : tensor<2x5x8xf32>
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %198 = stablehlo.reduce(%197 init: %cst_44) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %199 = stablehlo.reshape %198 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %200 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
    %201 = stablehlo.multiply %193, %200 : tensor<2x5x8xf32>
    %cst_45 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %202 = stablehlo.reduce(%199 init: %cst_45) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %203 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %204 = stablehlo.multiply %201, %203 : tensor<2x5x8xf32>
    %205 = stablehlo.multiply %204, %59 : tensor<2x5x8xf32>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %206 = stablehlo.reduce(%205 init: %cst_46) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %207 = stablehlo.reshape %206 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %208 = stablehlo.negate %207 : tensor<2x5x1xf32>
    %209 = stablehlo.broadcast_in_dim %67, dims = [0, 1, 2] : (tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
    %210 = stablehlo.divide %201, %209 : tensor<2x5x8xf32>
    %211 = stablehlo.multiply %208, %69 : tensor<2x5x1xf32>
    %cst_47 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %212 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %213 = stablehlo.divide %211, %212 : tensor<2x5x1xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %214 = stablehlo.reduce(%213 init: %cst_48) applies stablehlo.add across dimensions = [2] : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5xf32>
    %215 = stablehlo.broadcast_in_dim %214, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x8xf32>
    %216 = stablehlo.multiply %59, %215 : tensor<2x5x8xf32>
    %217 = stablehlo.add %210, %216 : tensor<2x5x8xf32>
    %218 = stablehlo.multiply %215, %59 : tensor<2x5x8xf32>
    %219 = stablehlo.add %217, %218 : tensor<2x5x8xf32>
    %220 = stablehlo.negate %219 : tensor<2x5x8xf32>
    %cst_49 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %221 = stablehlo.reduce(%220 init: %cst_49) applies stablehlo.add across dimensions = [2] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5xf32>
    %222 = stablehlo.reshape %221 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
    %cst_50 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %223 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<2x5x1xf32>
    %224 = stablehlo.divide %222, %223 : tensor<2x5x1xf32>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %225 = stablehlo.reduce(%224 init: %cst_51) applies stablehlo.add across dimensions = [2] : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5xf32>
    %226 = stablehlo.broadcast_in_dim %225, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x8xf32>
    %227 = stablehlo.add %219, %226 : tensor<2x5x8xf32>
    %cst_52 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %228 = stablehlo.reduce(%227 init: %cst_52) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %229 = stablehlo.reshape %228 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_53 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %230 = stablehlo.reduce(%229 init: %cst_53) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %231 = stablehlo.dot_general %227, %47, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<8x8xf32>
    %232 = stablehlo.transpose %231, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %233 = stablehlo.dot_general %227, %48, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
    %234 = stablehlo.reshape %232 : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
    %235 = stablehlo.reshape %233 : (tensor<2x5x8xf32>) -> tensor<2x5x2x4xf32>
    %236 = stablehlo.transpose %235, dims = [0, 2, 1, 3] : (tensor<2x5x2x4xf32>) -> tensor<2x2x5x4xf32>
    %237 = stablehlo.dot_general %236, %41, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>) -> tensor<2x2x4x5xf32>
    %238 = stablehlo.transpose %237, dims = [0, 1, 3, 2] : (tensor<2x2x4x5xf32>) -> tensor<2x2x5x4xf32>
    %239 = stablehlo.dot_general %236, %23, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
    %240 = stablehlo.broadcast_in_dim %44, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %241 = stablehlo.multiply %239, %240 : tensor<2x2x5x5xf32>
    %242 = stablehlo.multiply %241, %37 : tensor<2x2x5x5xf32>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %243 = stablehlo.reduce(%242 init: %cst_54) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %244 = stablehlo.reshape %243 : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %245 = stablehlo.negate %244 : tensor<2x2x5x1xf32>
    %246 = stablehlo.broadcast_in_dim %39, dims = [0, 1, 2, 3] : (tensor<2x2x5x1xf32>) -> tensor<2x2x5x5xf32>
    %247 = stablehlo.divide %239, %246 : tensor<2x2x5x5xf32>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %248 = stablehlo.reduce(%245 init: %cst_55) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x1xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %249 = stablehlo.broadcast_in_dim %248, dims = [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x5xf32>
    %250 = stablehlo.add %247, %249 : tensor<2x2x5x5xf32>
    %251 = stablehlo.multiply %250, %37 : tensor<2x2x5x5xf32>
    %252 = stablehlo.negate %251 : tensor<2x2x5x5xf32>
    %cst_56 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %253 = stablehlo.reduce(%252 init: %cst_56) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %254 = stablehlo.reshape %253 : (tensor<2x2x5xf32>) -> tensor<2x2x5x1xf32>
    %cst_57 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %255 = stablehlo.reduce(%254 init: %cst_57) applies stablehlo.add across dimensions = [3] : (tensor<2x2x5x1xf32>, tensor<f32>) -> tensor<2x2x5xf32>
    %256 = stablehlo.divide %255, %33 : tensor<2x2x5xf32>
    %257 = stablehlo.broadcast_in_dim %256, dims = [0, 1, 2] : (tensor<2x2x5xf32>) -> tensor<2x2x5x5xf32>
    %258 = stablehlo.multiply %257, %32 : tensor<2x2x5x5xf32>
    %259 = stablehlo.add %251, %258 : tensor<2x2x5x5xf32>
    %cst_58 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %260 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<2x2x5x5xf32>
    %261 = stablehlo.multiply %259, %260 : tensor<2x2x5x5xf32>
    %262 = stablehlo.dot_general %261, %7, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
    %263 = stablehlo.transpose %262, dims = [0, 1, 3, 2] : (tensor<2x2x5x4xf32>) -> tensor<2x2x4x5xf32>
    %264 = stablehlo.dot_general %261, %24, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x2x5x5xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x5x4xf32>
    %265 = stablehlo.transpose %263, dims = [0, 1, 3, 2] : (tensor<2x2x4x5xf32>) -> tensor<2x2x5x4xf32>
    %266 = stablehlo.transpose %238, dims = [0, 2, 1, 3] : (tensor<2x2x5x4xf32>) -> tensor<2x5x2x4xf32>
    %267 = stablehlo.reshape %266 : (tensor<2x5x2x4xf32>) -> tensor<2x5x8xf32>
    %cst_59 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %268 = stablehlo.reduce(%267 init: %cst_59) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %269 = stablehlo.reshape %268 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_60 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %270 = stablehlo.reduce(%269 init: %cst_60) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %271 = stablehlo.reshape %270 : (tensor<8xf32>) -> tensor<2x4xf32>
    %272 = stablehlo.dot_general %267, %arg16, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<8x8xf32>
    %273 = stablehlo.transpose %272, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %274 = stablehlo.reshape %273 : (tensor<8x8xf32>) -> tensor<8x2x4xf32>
    %275 = stablehlo.transpose %265, dims = [0, 2, 1, 3] : (tensor<2x2x5x4xf32>) -> tensor<2x5x2x4xf32>
    %276 = stablehlo.reshape %275 : (tensor<2x5x2x4xf32>) -> tensor<2x5x8xf32>
    %cst_61 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %277 = stablehlo.reduce(%276 init: %cst_61) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %278 = stablehlo.reshape %277 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_62 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %279 = stablehlo.reduce(%278 init: %cst_62) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %280 = stablehlo.reshape %279 : (tensor<8xf32>) -> tensor<2x4xf32>
    %281 = stablehlo.dot_general %276, %arg16, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<8x8xf32>
    %282 = stablehlo.transpose %281, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %283 = stablehlo.reshape %282 : (tensor<8x8xf32>) -> tensor<8x2x4xf32>
    %284 = stablehlo.transpose %264, dims = [0, 2, 1, 3] : (tensor<2x2x5x4xf32>) -> tensor<2x5x2x4xf32>
    %285 = stablehlo.reshape %284 : (tensor<2x5x2x4xf32>) -> tensor<2x5x8xf32>
    %cst_63 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %286 = stablehlo.reduce(%285 init: %cst_63) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<8xf32>
    %287 = stablehlo.reshape %286 : (tensor<8xf32>) -> tensor<1x1x8xf32>
    %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %288 = stablehlo.reduce(%287 init: %cst_64) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %289 = stablehlo.reshape %288 : (tensor<8xf32>) -> tensor<2x4xf32>
    %290 = stablehlo.dot_general %285, %arg16, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<8x8xf32>
    %291 = stablehlo.transpose %290, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %292 = stablehlo.reshape %291 : (tensor<8x8xf32>) -> tensor<8x2x4xf32>
    %cst_65 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %293 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %294 = stablehlo.multiply %293, %189 : tensor<12xf32>
    %295 = stablehlo.subtract %arg0, %294 : tensor<12xf32>
    %cst_66 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %296 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %297 = stablehlo.multiply %296, %173 : tensor<8xf32>
    %298 = stablehlo.subtract %arg1, %297 : tensor<8xf32>
    %cst_67 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %299 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %300 = stablehlo.multiply %299, %280 : tensor<2x4xf32>
    %301 = stablehlo.subtract %arg2, %300 : tensor<2x4xf32>
    %cst_68 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %302 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %303 = stablehlo.multiply %302, %230 : tensor<8xf32>
    %304 = stablehlo.subtract %arg3, %303 : tensor<8xf32>
    %cst_69 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %305 = stablehlo.broadcast_in_dim %cst_69, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %306 = stablehlo.multiply %305, %289 : tensor<2x4xf32>
    %307 = stablehlo.subtract %arg4, %306 : tensor<2x4xf32>
    %cst_70 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %308 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %309 = stablehlo.multiply %308, %271 : tensor<2x4xf32>
    %310 = stablehlo.subtract %arg5, %309 : tensor<2x4xf32>
    %cst_71 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %311 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %312 = stablehlo.multiply %311, %196 : tensor<8xf32>
    %313 = stablehlo.subtract %arg6, %312 : tensor<8xf32>
    %cst_72 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %314 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %315 = stablehlo.multiply %314, %202 : tensor<8xf32>
    %316 = stablehlo.subtract %arg7, %315 : tensor<8xf32>
    %cst_73 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %317 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %318 = stablehlo.multiply %317, %139 : tensor<8xf32>
    %319 = stablehlo.subtract %arg8, %318 : tensor<8xf32>
    %cst_74 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %320 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %321 = stablehlo.multiply %320, %145 : tensor<8xf32>
    %322 = stablehlo.subtract %arg9, %321 : tensor<8xf32>
    %cst_75 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %323 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<8x12xf32>
    %324 = stablehlo.multiply %323, %191 : tensor<8x12xf32>
    %325 = stablehlo.subtract %arg10, %324 : tensor<8x12xf32>
    %cst_76 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %326 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<12x8xf32>
    %327 = stablehlo.multiply %326, %175 : tensor<12x8xf32>
    %328 = stablehlo.subtract %arg11, %327 : tensor<12x8xf32>
    %cst_77 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %329 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<8x2x4xf32>
    %330 = stablehlo.multiply %329, %283 : tensor<8x2x4xf32>
    %331 = stablehlo.subtract %arg12, %330 : tensor<8x2x4xf32>
    %cst_78 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %332 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<2x4x8xf32>
    %333 = stablehlo.multiply %332, %234 : tensor<2x4x8xf32>
    %334 = stablehlo.subtract %arg13, %333 : tensor<2x4x8xf32>
    %cst_79 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %335 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<f32>) -> tensor<8x2x4xf32>
    %336 = stablehlo.multiply %335, %292 : tensor<8x2x4xf32>
    %337 = stablehlo.subtract %arg14, %336 : tensor<8x2x4xf32>
    %cst_80 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %338 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<8x2x4xf32>
    %339 = stablehlo.multiply %338, %274 : tensor<8x2x4xf32>
    %340 = stablehlo.subtract %arg15, %339 : tensor<8x2x4xf32>
    return %295, %298, %301, %304, %307, %310, %313, %316, %319, %322, %325, %328, %331, %334, %337, %340, %131 : tensor<12xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x12xf32>, tensor<12x8xf32>, tensor<8x2x4xf32>, tensor<2x4x8xf32>, tensor<8x2x4xf32>, tensor<8x2x4xf32>, tensor<f32>
  }
}
