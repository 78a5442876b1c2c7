module @jit__complex attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<3xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.complex %arg0, %arg1 : tensor<3xcomplex<f32>>
    %1 = stablehlo.multiply %0, %0 : tensor<3xcomplex<f32>>
    %2 = stablehlo.real %1 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %cst = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %4 = stablehlo.add %0, %3 : tensor<3xcomplex<f32>>
    %5 = stablehlo.imag %4 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %6 = stablehlo.abs %0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    return %2, %5, %6 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
}
