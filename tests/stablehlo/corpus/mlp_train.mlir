module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<4xf32>, %arg2: tensor<12x8xf32>, %arg3: tensor<8x4xf32>, %arg4: tensor<16x12xf32>, %arg5: tensor<16x4xf32>) -> (tensor<8xf32> {jax.result_info = "result[0]['b1']"}, tensor<4xf32> {jax.result_info = "result[0]['b2']"}, tensor<12x8xf32> {jax.result_info = "result[0]['w1']"}, tensor<8x4xf32> {jax.result_info = "result[0]['w2']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x12xf32>, tensor<12x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<16x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<16x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<16x8xf32>
    %6 = stablehlo.compare EQ, %3, %5, FLOAT : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xi1>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %9 = stablehlo.select %6, %7, %8 : tensor<16x8xi1>, tensor<16x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %11 = stablehlo.compare EQ, %10, %5, FLOAT : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xi1>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %14 = stablehlo.select %11, %12, %13 : tensor<16x8xi1>, tensor<16x8xf32>
    %15 = stablehlo.divide %9, %14 : tensor<16x8xf32>
    %16 = stablehlo.dot_general %5, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %17 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<16x4xf32>
    %19 = stablehlo.add %16, %18 : tensor<16x4xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %20 = stablehlo.reduce(%19 init: %cst_5) applies stablehlo.maximum across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %21 = stablehlo.reshape %20 : (tensor<16xf32>) -> tensor<16x1xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x4xf32>
    %23 = stablehlo.compare EQ, %19, %22, FLOAT : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xi1>
    %24 = stablehlo.convert %23 : (tensor<16x4xi1>) -> tensor<16x4xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.reduce(%24 init: %cst_6) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %26 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x4xf32>
    %28 = stablehlo.subtract %19, %27 : tensor<16x4xf32>
    %29 = stablehlo.exponential %28 : tensor<16x4xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.reduce(%29 init: %cst_7) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %32 = stablehlo.log %31 : tensor<16x1xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x4xf32>
    %34 = stablehlo.subtract %28, %33 : tensor<16x4xf32>
    %35 = stablehlo.multiply %arg5, %34 : tensor<16x4xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_8) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.reduce(%36 init: %cst_9) applies stablehlo.add across dimensions = [0] : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
    %cst_10 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %38 = stablehlo.divide %37, %cst_10 : tensor<f32>
    %39 = stablehlo.negate %38 : tensor<f32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %40 = stablehlo.negate %cst_11 : tensor<f32>
    %cst_12 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %41 = stablehlo.divide %40, %cst_12 : tensor<f32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0] : (tensor<16xf32>) -> tensor<16x4xf32>
    %44 = stablehlo.multiply %arg5, %43 : tensor<16x4xf32>
    %45 = stablehlo.negate %44 : tensor<16x4xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_13) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %47 = stablehlo.reshape %46 : (tensor<16xf32>) -> tensor<16x1xf32>
    %48 = stablehlo.divide %47, %31 : tensor<16x1xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %49 = stablehlo.reduce(%48 init: %cst_14) applies stablehlo.add across dimensions = [1] : (tensor<16x1xf32>, tensor<f32>) -> tensor<16xf32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [0] : (tensor<16xf32>) -> tensor<16x4xf32>
    %51 = stablehlo.multiply %50, %29 : tensor<16x4xf32>
    %52 = stablehlo.add %44, %51 : tensor<16x4xf32>
    %53 = stablehlo.negate %52 : tensor<16x4xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.reduce(%53 init: %cst_15) applies stablehlo.add across dimensions = [1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>
    %55 = stablehlo.reshape %54 : (tensor<16xf32>) -> tensor<16x1xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %56 = stablehlo.reduce(%55 init: %cst_16) applies stablehlo.add across dimensions = [1] : (tensor<16x1xf32>, tensor<f32>) -> tensor<16xf32>
    %57 = stablehlo.divide %56, %25 : tensor<16xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0] : (tensor<16xf32>) -> tensor<16x4xf32>
    %59 = stablehlo.multiply %58, %24 : tensor<16x4xf32>
    %60 = stablehlo.add %52, %59 : tensor<16x4xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %61 = stablehlo.reduce(%60 init: %cst_17) applies stablehlo.add across dimensions = [0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<4xf32>
    %62 = stablehlo.reshape %61 : (tensor<4xf32>) -> tensor<1x4xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %63 = stablehlo.reduce(%62 init: %cst_18) applies stablehlo.add across dimensions = [0] : (tensor<1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %64 = stablehlo.dot_general %60, %5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %65 = stablehlo.transpose %64, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %66 = stablehlo.dot_general %60, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<16x8xf32>
    %67 = stablehlo.multiply %66, %15 : tensor<16x8xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %68 = stablehlo.reduce(%67 init: %cst_19) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
    %69 = stablehlo.reshape %68 : (tensor<8xf32>) -> tensor<1x8xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.reduce(%69 init: %cst_20) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %71 = stablehlo.dot_general %67, %arg4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
    %72 = stablehlo.transpose %71, dims = [1, 0] : (tensor<8x12xf32>) -> tensor<12x8xf32>
    %cst_21 = stablehlo.constant dense<2.000000e-01> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %74 = stablehlo.multiply %73, %70 : tensor<8xf32>
    %75 = stablehlo.subtract %arg0, %74 : tensor<8xf32>
    %cst_22 = stablehlo.constant dense<2.000000e-01> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %77 = stablehlo.multiply %76, %63 : tensor<4xf32>
    %78 = stablehlo.subtract %arg1, %77 : tensor<4xf32>
    %cst_23 = stablehlo.constant dense<2.000000e-01> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<12x8xf32>
    %80 = stablehlo.multiply %79, %72 : tensor<12x8xf32>
    %81 = stablehlo.subtract %arg2, %80 : tensor<12x8xf32>
    %cst_24 = stablehlo.constant dense<2.000000e-01> : tensor<f32>
    %82 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
    %83 = stablehlo.multiply %82, %65 : tensor<8x4xf32>
    %84 = stablehlo.subtract %arg3, %83 : tensor<8x4xf32>
    return %75, %78, %81, %84, %39 : tensor<8xf32>, tensor<4xf32>, tensor<12x8xf32>, tensor<8x4xf32>, tensor<f32>
  }
}
