module @jit__lstm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x3xf32>, %arg1: tensor<3x16xf32>, %arg2: tensor<4x16xf32>, %arg3: tensor<16xf32>) -> (tensor<5x4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2:8 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %arg1, %iterArg_2 = %arg2, %iterArg_3 = %arg3, %iterArg_4 = %c, %iterArg_5 = %0, %iterArg_6 = %0, %iterArg_7 = %1) : tensor<5x3xf32>, tensor<3x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<5x4xf32>
    cond {
      %c_8 = stablehlo.constant dense<5> : tensor<i32>
      %3 = stablehlo.compare LT, %iterArg_4, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_4) : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
      %4:3 = func.call @closed_call(%iterArg_1, %iterArg_2, %iterArg_3, %iterArg_5, %iterArg_6, %3) : (tensor<3x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      %5 = func.call @dynamic_update_index_in_dim(%iterArg_7, %4#2, %iterArg_4) : (tensor<5x4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<5x4xf32>
      %c_8 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg_4, %c_8 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_1, %iterArg_2, %iterArg_3, %6, %4#0, %4#1, %5 : tensor<5x3xf32>, tensor<3x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<5x4xf32>
    }
    return %2#7, %2#5 : tensor<5x4xf32>, tensor<4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x3xf32>, %arg1: tensor<i32>) -> tensor<3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x3xf32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
  func.func private @closed_call(%arg0: tensor<3x16xf32>, %arg1: tensor<4x16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<4xf32>, %arg4: tensor<4xf32>, %arg5: tensor<3xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %0 = stablehlo.dot_general %arg5, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3xf32>, tensor<3x16xf32>) -> tensor<16xf32>
    %1 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4xf32>, tensor<4x16xf32>) -> tensor<16xf32>
    %2 = stablehlo.add %0, %1 : tensor<16xf32>
    %3 = stablehlo.add %2, %arg2 : tensor<16xf32>
    %4 = stablehlo.slice %3 [0:4] : (tensor<16xf32>) -> tensor<4xf32>
    %5 = stablehlo.slice %3 [4:8] : (tensor<16xf32>) -> tensor<4xf32>
    %6 = stablehlo.slice %3 [8:12] : (tensor<16xf32>) -> tensor<4xf32>
    %7 = stablehlo.slice %3 [12:16] : (tensor<16xf32>) -> tensor<4xf32>
    %8 = stablehlo.negate %5 : tensor<4xf32>
    %9 = stablehlo.exponential %8 : tensor<4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %11 = stablehlo.add %10, %9 : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %13 = stablehlo.divide %12, %11 : tensor<4xf32>
    %14 = stablehlo.multiply %13, %arg4 : tensor<4xf32>
    %15 = stablehlo.negate %4 : tensor<4xf32>
    %16 = stablehlo.exponential %15 : tensor<4xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %18 = stablehlo.add %17, %16 : tensor<4xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %20 = stablehlo.divide %19, %18 : tensor<4xf32>
    %21 = stablehlo.tanh %6 : tensor<4xf32>
    %22 = stablehlo.multiply %20, %21 : tensor<4xf32>
    %23 = stablehlo.add %14, %22 : tensor<4xf32>
    %24 = stablehlo.negate %7 : tensor<4xf32>
    %25 = stablehlo.exponential %24 : tensor<4xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %27 = stablehlo.add %26, %25 : tensor<4xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %29 = stablehlo.divide %28, %27 : tensor<4xf32>
    %30 = stablehlo.tanh %23 : tensor<4xf32>
    %31 = stablehlo.multiply %29, %30 : tensor<4xf32>
    return %31, %23, %31 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<5x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<i32>) -> tensor<5x4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<5x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<5x4xf32>
    return %1 : tensor<5x4xf32>
  }
}
