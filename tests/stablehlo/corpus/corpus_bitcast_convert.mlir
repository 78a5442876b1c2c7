module @jit__bitcasts attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<2xui16>) -> (tensor<3xui32> {jax.result_info = "result[0]"}, tensor<3x4xui8> {jax.result_info = "result[1]"}, tensor<2xf16> {jax.result_info = "result[2]"}, tensor<3xi32> {jax.result_info = "result[3]"}, tensor<3xui8> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<3xf32>) -> tensor<3xui32>
    %1 = stablehlo.bitcast_convert %arg0 : (tensor<3xf32>) -> tensor<3x4xui8>
    %2 = stablehlo.bitcast_convert %arg1 : (tensor<2xui16>) -> tensor<2xf16>
    %3 = stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
    %4 = stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xui8>
    return %0, %1, %2, %3, %4 : tensor<3xui32>, tensor<3x4xui8>, tensor<2xf16>, tensor<3xi32>, tensor<3xui8>
  }
}
