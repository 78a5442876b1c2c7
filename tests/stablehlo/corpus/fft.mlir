module @jit__fft attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xcomplex<f32>> {jax.result_info = "result[0]"}, tensor<8xf32> {jax.result_info = "result[1]"}) {
    %0 = call @fft(%arg0) : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
    %1 = call @fft_0(%arg0) : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
    %2 = call @fft_1(%1) : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
    return %0, %2 : tensor<8xcomplex<f32>>, tensor<8xf32>
  }
  func.func private @fft(%arg0: tensor<8xf32>) -> tensor<8xcomplex<f32>> {
    %0 = stablehlo.convert %arg0 : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
    %1 = stablehlo.fft %0, type = FFT, length = [8] : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
    return %1 : tensor<8xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<8xf32>) -> tensor<5xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [8] : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
    return %0 : tensor<5xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<5xcomplex<f32>>) -> tensor<8xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [8] : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
