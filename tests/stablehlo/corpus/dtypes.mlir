module @jit__dtypes attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf16>, %arg1: tensor<3xbf16>, %arg2: tensor<3xui8>) -> (tensor<3xf16> {jax.result_info = "result[0]"}, tensor<3xbf16> {jax.result_info = "result[1]"}, tensor<3xui8> {jax.result_info = "result[2]"}, tensor<3xi1> {jax.result_info = "result[3]"}, tensor<2xi8> {jax.result_info = "result[4]"}, tensor<3xui32> {jax.result_info = "result[5]"}, tensor<2xi1> {jax.result_info = "result[6]"}) {
    %c = stablehlo.constant dense<[1, -2]> : tensor<2xi8>
    %c_0 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<3xf16>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f16>) -> tensor<3xf16>
    %2 = stablehlo.add %0, %1 : tensor<3xf16>
    %3 = stablehlo.convert %arg1 : (tensor<3xbf16>) -> tensor<3xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<3xf32>
    %6 = stablehlo.convert %5 : (tensor<3xf32>) -> tensor<3xbf16>
    %c_2 = stablehlo.constant dense<3> : tensor<ui8>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui8>) -> tensor<3xui8>
    %8 = stablehlo.multiply %arg2, %7 : tensor<3xui8>
    %c_3 = stablehlo.constant dense<1> : tensor<ui8>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui8>) -> tensor<3xui8>
    %10 = stablehlo.add %8, %9 : tensor<3xui8>
    %c_4 = stablehlo.constant dense<5> : tensor<ui8>
    %11 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<ui8>) -> tensor<3xui8>
    %12 = stablehlo.compare GT, %arg2, %11, UNSIGNED : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f16>
    %13 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f16>) -> tensor<3xf16>
    %14 = stablehlo.compare GT, %arg0, %13, FLOAT : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
    %c_6 = stablehlo.constant dense<true> : tensor<i1>
    %15 = stablehlo.reduce(%14 init: %c_6) applies stablehlo.and across dimensions = [0] : (tensor<3xi1>, tensor<i1>) -> tensor<i1>
    %16 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<i1>) -> tensor<3xi1>
    %17 = stablehlo.and %12, %16 : tensor<3xi1>
    %c_7 = stablehlo.constant dense<3> : tensor<i8>
    %18 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i8>) -> tensor<2xi8>
    %19 = stablehlo.multiply %c, %18 : tensor<2xi8>
    %20 = stablehlo.convert %arg2 : (tensor<3xui8>) -> tensor<3xui32>
    %c_8 = stablehlo.constant dense<2147483647> : tensor<ui32>
    %21 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %22 = stablehlo.add %21, %20 : tensor<3xui32>
    %23 = stablehlo.slice %arg2 [0:2] : (tensor<3xui8>) -> tensor<2xui8>
    %c_9 = stablehlo.constant dense<2> : tensor<ui8>
    %24 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<ui8>) -> tensor<2xui8>
    %25 = stablehlo.compare GT, %23, %24, UNSIGNED : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>
    %26 = stablehlo.or %c_0, %25 : tensor<2xi1>
    return %2, %6, %10, %17, %19, %22, %26 : tensor<3xf16>, tensor<3xbf16>, tensor<3xui8>, tensor<3xi1>, tensor<2xi8>, tensor<3xui32>, tensor<2xi1>
  }
}
