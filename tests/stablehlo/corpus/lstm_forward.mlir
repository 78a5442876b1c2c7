module @jit_apply attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>, %arg1: tensor<4xf32>, %arg2: tensor<6x24xf32>, %arg3: tensor<3x24xf32>, %arg4: tensor<6x4xf32>, %arg5: tensor<8x5x3xf32>) -> (tensor<8x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg5, dims = [1, 0, 2] : (tensor<8x5x3xf32>) -> tensor<5x8x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2:7 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg3, %iterArg_1 = %arg2, %iterArg_2 = %arg0, %iterArg_3 = %c, %iterArg_4 = %1, %iterArg_5 = %1) : tensor<5x8x3xf32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>
    cond {
      %c_6 = stablehlo.constant dense<5> : tensor<i32>
      %7 = stablehlo.compare LT, %iterArg_3, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %7 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_3) : (tensor<5x8x3xf32>, tensor<i32>) -> tensor<8x3xf32>
      %8:2 = func.call @closed_call(%iterArg_0, %iterArg_1, %iterArg_2, %iterArg_4, %iterArg_5, %7) : (tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x3xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>)
      %c_6 = stablehlo.constant dense<1> : tensor<i32>
      %9 = stablehlo.add %iterArg_3, %c_6 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_0, %iterArg_1, %iterArg_2, %9, %8#0, %8#1 : tensor<5x8x3xf32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>
    }
    %3 = stablehlo.dot_general %2#5, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    %4 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<8x4xf32>
    %6 = stablehlo.add %3, %5 : tensor<8x4xf32>
    return %6 : tensor<8x4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x8x3xf32>, %arg1: tensor<i32>) -> tensor<8x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 8, 3] : (tensor<5x8x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x3xf32>) -> tensor<8x3xf32>
    return %1 : tensor<8x3xf32>
  }
  func.func private @closed_call(%arg0: tensor<3x24xf32>, %arg1: tensor<6x24xf32>, %arg2: tensor<24xf32>, %arg3: tensor<8x6xf32>, %arg4: tensor<8x6xf32>, %arg5: tensor<8x3xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
    %0 = stablehlo.dot_general %arg5, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x3xf32>, tensor<3x24xf32>) -> tensor<8x24xf32>
    %1 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x24xf32>
    %3 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<24xf32>) -> tensor<1x24xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x24xf32>) -> tensor<8x24xf32>
    %5 = stablehlo.add %2, %4 : tensor<8x24xf32>
    %6 = stablehlo.slice %5 [0:8, 0:6] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %7 = stablehlo.slice %5 [0:8, 6:12] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %8 = stablehlo.slice %5 [0:8, 12:18] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %9 = stablehlo.slice %5 [0:8, 18:24] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %11 = stablehlo.multiply %10, %7 : tensor<8x6xf32>
    %12 = stablehlo.tanh %11 : tensor<8x6xf32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %14 = stablehlo.multiply %13, %12 : tensor<8x6xf32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %16 = stablehlo.add %14, %15 : tensor<8x6xf32>
    %17 = stablehlo.multiply %16, %arg4 : tensor<8x6xf32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %19 = stablehlo.multiply %18, %6 : tensor<8x6xf32>
    %20 = stablehlo.tanh %19 : tensor<8x6xf32>
    %cst_3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %22 = stablehlo.multiply %21, %20 : tensor<8x6xf32>
    %cst_4 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %24 = stablehlo.add %22, %23 : tensor<8x6xf32>
    %25 = stablehlo.tanh %8 : tensor<8x6xf32>
    %26 = stablehlo.multiply %24, %25 : tensor<8x6xf32>
    %27 = stablehlo.add %17, %26 : tensor<8x6xf32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %29 = stablehlo.multiply %28, %9 : tensor<8x6xf32>
    %30 = stablehlo.tanh %29 : tensor<8x6xf32>
    %cst_6 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %32 = stablehlo.multiply %31, %30 : tensor<8x6xf32>
    %cst_7 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %34 = stablehlo.add %32, %33 : tensor<8x6xf32>
    %35 = stablehlo.tanh %27 : tensor<8x6xf32>
    %36 = stablehlo.multiply %34, %35 : tensor<8x6xf32>
    return %36, %27 : tensor<8x6xf32>, tensor<8x6xf32>
  }
}
