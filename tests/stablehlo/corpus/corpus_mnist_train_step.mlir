module @jit__mnist_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<784x10xf32>, %arg1: tensor<10xf32>, %arg2: tensor<8x784xf32>, %arg3: tensor<8x10xf32>) -> (tensor<784x10xf32> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg2, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x784xf32>, tensor<784x10xf32>) -> tensor<8x10xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<8x10xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x10xf32>
    %4:3 = call @log_softmax(%3) : (tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x1xf32>)
    %5 = stablehlo.multiply %arg3, %4#0 : tensor<8x10xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %8 = stablehlo.divide %7, %cst_1 : tensor<f32>
    %9 = stablehlo.negate %8 : tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.negate %cst_2 : tensor<f32>
    %cst_3 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %11 = stablehlo.divide %10, %cst_3 : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %14 = stablehlo.multiply %arg3, %13 : tensor<8x10xf32>
    %15 = call @log_softmax_0(%4#1, %4#2, %14) : (tensor<8x10xf32>, tensor<8x1xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<8x10xf32>, tensor<f32>) -> tensor<10xf32>
    %17 = stablehlo.reshape %16 : (tensor<10xf32>) -> tensor<1x10xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_5) applies stablehlo.add across dimensions = [0] : (tensor<1x10xf32>, tensor<f32>) -> tensor<10xf32>
    %19 = stablehlo.dot_general %15, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x10xf32>, tensor<8x784xf32>) -> tensor<10x784xf32>
    %20 = stablehlo.transpose %19, dims = [1, 0] : (tensor<10x784xf32>) -> tensor<784x10xf32>
    %cst_6 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<784x10xf32>
    %22 = stablehlo.multiply %21, %20 : tensor<784x10xf32>
    %23 = stablehlo.subtract %arg0, %22 : tensor<784x10xf32>
    %cst_7 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %25 = stablehlo.multiply %24, %18 : tensor<10xf32>
    %26 = stablehlo.subtract %arg1, %25 : tensor<10xf32>
    return %23, %26, %9 : tensor<784x10xf32>, tensor<10xf32>, tensor<f32>
  }
  func.func private @log_softmax(%arg0: tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x10xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x10xf32>
    %6 = stablehlo.exponential %5 : tensor<8x10xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %9 = stablehlo.log %8 : tensor<8x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x10xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<8x10xf32>
    return %11, %6, %8 : tensor<8x10xf32>, tensor<8x10xf32>, tensor<8x1xf32>
  }
  func.func private @log_softmax_0(%arg0: tensor<8x10xf32>, %arg1: tensor<8x1xf32>, %arg2: tensor<8x10xf32>) -> tensor<8x10xf32> {
    %0 = stablehlo.negate %arg2 : tensor<8x10xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.reshape %1 : (tensor<8xf32>) -> tensor<8x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<8x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<8x10xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<8x10xf32>
    return %7 : tensor<8x10xf32>
  }
}
