module @jit__elementwise attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result[0]"}, tensor<3x4xf32> {jax.result_info = "result[1]"}, tensor<3x4xf32> {jax.result_info = "result[2]"}, tensor<3x4xf32> {jax.result_info = "result[3]"}, tensor<3x4xf32> {jax.result_info = "result[4]"}, tensor<3x4xf32> {jax.result_info = "result[5]"}, tensor<3x4xf32> {jax.result_info = "result[6]"}, tensor<3x4xf32> {jax.result_info = "result[7]"}, tensor<3x4xf32> {jax.result_info = "result[8]"}, tensor<3x4xf32> {jax.result_info = "result[9]"}, tensor<3x4xf32> {jax.result_info = "result[10]"}, tensor<3x4xf32> {jax.result_info = "result[11]"}, tensor<3x4xf32> {jax.result_info = "result[12]"}, tensor<3x4xf32> {jax.result_info = "result[13]"}, tensor<3x4xf32> {jax.result_info = "result[14]"}, tensor<3x4xf32> {jax.result_info = "result[15]"}, tensor<3x4xf32> {jax.result_info = "result[16]"}, tensor<3x4xf32> {jax.result_info = "result[17]"}, tensor<3x4xi1> {jax.result_info = "result[18]"}, tensor<3x4xf32> {jax.result_info = "result[19]"}, tensor<3x4xf32> {jax.result_info = "result[20]"}, tensor<3x4xf32> {jax.result_info = "result[21]"}, tensor<3x4xf32> {jax.result_info = "result[22]"}, tensor<3x4xf32> {jax.result_info = "result[23]"}, tensor<3x4xf32> {jax.result_info = "result[24]"}, tensor<3x4xf32> {jax.result_info = "result[25]"}) {
    %0 = stablehlo.abs %arg0 : tensor<3x4xf32>
    %1 = stablehlo.ceil %arg0 : tensor<3x4xf32>
    %2 = stablehlo.floor %arg0 : tensor<3x4xf32>
    %3 = call @round(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %4 = stablehlo.sign %arg0 : tensor<3x4xf32>
    %5 = stablehlo.cosine %arg0 : tensor<3x4xf32>
    %6 = stablehlo.sine %arg0 : tensor<3x4xf32>
    %7 = stablehlo.tan %arg0 : tensor<3x4xf32>
    %8 = stablehlo.exponential %arg0 : tensor<3x4xf32>
    %9 = stablehlo.exponential_minus_one %arg0 : tensor<3x4xf32>
    %10 = stablehlo.abs %arg0 : tensor<3x4xf32>
    %11 = stablehlo.log_plus_one %10 : tensor<3x4xf32>
    %12 = stablehlo.atan2 %arg0, %arg1 : tensor<3x4xf32>
    %13 = stablehlo.abs %arg0 : tensor<3x4xf32>
    %14 = stablehlo.power %13, %arg1 : tensor<3x4xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %16 = stablehlo.add %arg1, %15 : tensor<3x4xf32>
    %17 = call @remainder(%arg0, %16) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %18 = stablehlo.minimum %arg0, %arg1 : tensor<3x4xf32>
    %cst_0 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %19 = call @clip(%arg0, %cst_0, %cst_1) : (tensor<3x4xf32>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>
    %20 = stablehlo.negate %arg0 : tensor<3x4xf32>
    %21 = stablehlo.exponential %20 : tensor<3x4xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %23 = stablehlo.add %22, %21 : tensor<3x4xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %25 = stablehlo.divide %24, %23 : tensor<3x4xf32>
    %26 = stablehlo.cbrt %arg0 : tensor<3x4xf32>
    %27 = stablehlo.divide %arg0, %arg1 : tensor<3x4xf32>
    %28 = stablehlo.is_finite %27 : (tensor<3x4xf32>) -> tensor<3x4xi1>
    %29 = chlo.erf %arg0 : tensor<3x4xf32> -> tensor<3x4xf32>
    %30 = stablehlo.tanh %arg0 : tensor<3x4xf32>
    %31 = chlo.asin %30 : tensor<3x4xf32> -> tensor<3x4xf32>
    %32 = chlo.sinh %arg0 : tensor<3x4xf32> -> tensor<3x4xf32>
    %33 = stablehlo.abs %arg0 : tensor<3x4xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %35 = stablehlo.add %33, %34 : tensor<3x4xf32>
    %36 = call @arccosh(%35) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %37 = chlo.atan %arg0 : tensor<3x4xf32> -> tensor<3x4xf32>
    %38 = chlo.square %arg0 : tensor<3x4xf32> -> tensor<3x4xf32>
    %39 = stablehlo.multiply %arg0, %arg0 : tensor<3x4xf32>
    %40 = stablehlo.multiply %39, %arg0 : tensor<3x4xf32>
    %cst_5 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %42 = stablehlo.multiply %41, %40 : tensor<3x4xf32>
    %43 = stablehlo.add %arg0, %42 : tensor<3x4xf32>
    %cst_6 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %45 = stablehlo.multiply %44, %43 : tensor<3x4xf32>
    %46 = stablehlo.tanh %45 : tensor<3x4xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %48 = stablehlo.add %47, %46 : tensor<3x4xf32>
    %cst_8 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %50 = stablehlo.multiply %49, %48 : tensor<3x4xf32>
    %51 = stablehlo.multiply %arg0, %50 : tensor<3x4xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %11, %12, %14, %17, %18, %19, %25, %26, %28, %29, %31, %32, %36, %37, %38, %51 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
  }
  func.func private @round(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
  func.func private @remainder(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.remainder %arg0, %arg1 : tensor<3x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %2 = stablehlo.compare NE, %0, %1, FLOAT : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %4 = stablehlo.compare LT, %0, %3, FLOAT : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %6 = stablehlo.compare LT, %arg1, %5, FLOAT : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %7 = stablehlo.compare NE, %4, %6, UNSIGNED : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
    %8 = stablehlo.and %7, %2 : tensor<3x4xi1>
    %9 = stablehlo.add %0, %arg1 : tensor<3x4xf32>
    %10 = stablehlo.select %8, %9, %0 : tensor<3x4xi1>, tensor<3x4xf32>
    return %10 : tensor<3x4xf32>
  }
  func.func private @clip(%arg0: tensor<3x4xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<3x4xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<3x4xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<3x4xf32>
    return %5 : tensor<3x4xf32>
  }
  func.func private @arccosh(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = chlo.acosh %arg0 : tensor<3x4xf32> -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
