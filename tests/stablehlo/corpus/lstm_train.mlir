module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>, %arg1: tensor<4xf32>, %arg2: tensor<6x24xf32>, %arg3: tensor<3x24xf32>, %arg4: tensor<6x4xf32>, %arg5: tensor<8x5x3xf32>, %arg6: tensor<8x4xf32>) -> (tensor<24xf32> {jax.result_info = "result[0]['b']"}, tensor<4xf32> {jax.result_info = "result[0]['by']"}, tensor<6x24xf32> {jax.result_info = "result[0]['wh']"}, tensor<3x24xf32> {jax.result_info = "result[0]['wx']"}, tensor<6x4xf32> {jax.result_info = "result[0]['wy']"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.transpose %arg5, dims = [1, 0, 2] : (tensor<8x5x3xf32>) -> tensor<5x8x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %2 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<24xf32>) -> tensor<1x24xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<5x8x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %18:22 = stablehlo.while(%iterArg = %0, %iterArg_39 = %arg3, %iterArg_40 = %arg2, %iterArg_41 = %2, %iterArg_42 = %c, %iterArg_43 = %1, %iterArg_44 = %1, %iterArg_45 = %3, %iterArg_46 = %4, %iterArg_47 = %5, %iterArg_48 = %6, %iterArg_49 = %7, %iterArg_50 = %8, %iterArg_51 = %9, %iterArg_52 = %10, %iterArg_53 = %11, %iterArg_54 = %12, %iterArg_55 = %13, %iterArg_56 = %14, %iterArg_57 = %15, %iterArg_58 = %16, %iterArg_59 = %17) : tensor<5x8x3xf32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<1x24xf32>, tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>
    cond {
      %c_60 = stablehlo.constant dense<5> : tensor<i32>
      %90 = stablehlo.compare LT, %iterArg_42, %c_60, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %90 : tensor<i1>
    } do {
      %90 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_42) : (tensor<5x8x3xf32>, tensor<i32>) -> tensor<8x3xf32>
      %91:17 = func.call @closed_call(%iterArg_39, %iterArg_40, %iterArg_41, %iterArg_43, %iterArg_44, %90) : (tensor<3x24xf32>, tensor<6x24xf32>, tensor<1x24xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x3xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>)
      %92 = func.call @dynamic_update_index_in_dim(%iterArg_45, %91#2, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %93 = func.call @dynamic_update_index_in_dim(%iterArg_46, %91#3, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %94 = func.call @dynamic_update_index_in_dim(%iterArg_47, %91#4, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %95 = func.call @dynamic_update_index_in_dim(%iterArg_48, %91#5, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %96 = func.call @dynamic_update_index_in_dim(%iterArg_49, %91#6, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %97 = func.call @dynamic_update_index_in_dim(%iterArg_50, %91#7, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %98 = func.call @dynamic_update_index_in_dim(%iterArg_51, %91#8, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %99 = func.call @dynamic_update_index_in_dim(%iterArg_52, %91#9, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %100 = func.call @dynamic_update_index_in_dim(%iterArg_53, %91#10, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %101 = func.call @dynamic_update_index_in_dim(%iterArg_54, %91#11, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %102 = func.call @dynamic_update_index_in_dim(%iterArg_55, %91#12, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %103 = func.call @dynamic_update_index_in_dim(%iterArg_56, %91#13, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %104 = func.call @dynamic_update_index_in_dim(%iterArg_57, %91#14, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %105 = func.call @dynamic_update_index_in_dim(%iterArg_58, %91#15, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %106 = func.call @dynamic_update_index_in_dim(%iterArg_59, %91#16, %iterArg_42) : (tensor<5x8x6xf32>, tensor<8x6xf32>, tensor<i32>) -> tensor<5x8x6xf32>
      %c_60 = stablehlo.constant dense<1> : tensor<i32>
      %107 = stablehlo.add %iterArg_42, %c_60 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_39, %iterArg_40, %iterArg_41, %107, %91#0, %91#1, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106 : tensor<5x8x3xf32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<1x24xf32>, tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>
    }
    %19 = stablehlo.dot_general %18#5, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    %20 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<8x4xf32>
    %22 = stablehlo.add %19, %21 : tensor<8x4xf32>
    %cst_15 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %23 = stablehlo.reduce(%22 init: %cst_15) applies stablehlo.maximum across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %24 = stablehlo.reshape %23 : (tensor<8xf32>) -> tensor<8x1xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
    %26 = stablehlo.compare EQ, %22, %25, FLOAT : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>
    %27 = stablehlo.convert %26 : (tensor<8x4xi1>) -> tensor<8x4xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%27 init: %cst_16) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %29 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
    %31 = stablehlo.subtract %22, %30 : tensor<8x4xf32>
    %32 = stablehlo.exponential %31 : tensor<8x4xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.reduce(%32 init: %cst_17) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %35 = stablehlo.log %34 : tensor<8x1xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
    %37 = stablehlo.subtract %31, %36 : tensor<8x4xf32>
    %38 = stablehlo.multiply %arg6, %37 : tensor<8x4xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.reduce(%38 init: %cst_18) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.reduce(%39 init: %cst_19) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %cst_20 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %41 = stablehlo.divide %40, %cst_20 : tensor<f32>
    %42 = stablehlo.negate %41 : tensor<f32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %43 = stablehlo.negate %cst_21 : tensor<f32>
    %cst_22 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %44 = stablehlo.divide %43, %cst_22 : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %44, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
    %47 = stablehlo.multiply %arg6, %46 : tensor<8x4xf32>
    %48 = stablehlo.negate %47 : tensor<8x4xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %49 = stablehlo.reduce(%48 init: %cst_23) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %50 = stablehlo.reshape %49 : (tensor<8xf32>) -> tensor<8x1xf32>
    %51 = stablehlo.divide %50, %34 : tensor<8x1xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %52 = stablehlo.reduce(%51 init: %cst_24) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
    %54 = stablehlo.multiply %53, %32 : tensor<8x4xf32>
    %55 = stablehlo.add %47, %54 : tensor<8x4xf32>
    %56 = stablehlo.negate %55 : tensor<8x4xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%56 init: %cst_25) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    %58 = stablehlo.reshape %57 : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %59 = stablehlo.reduce(%58 init: %cst_26) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
    %60 = stablehlo.divide %59, %28 : tensor<8xf32>
    %61 = stablehlo.broadcast_in_dim %60, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
    %62 = stablehlo.multiply %61, %27 : tensor<8x4xf32>
    %63 = stablehlo.add %55, %62 : tensor<8x4xf32>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %64 = stablehlo.reduce(%63 init: %cst_27) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    %65 = stablehlo.reshape %64 : (tensor<4xf32>) -> tensor<1x4xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %66 = stablehlo.reduce(%65 init: %cst_28) applies stablehlo.add across dimensions = [0] : (tensor<1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %67 = stablehlo.dot_general %63, %18#5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
    %68 = stablehlo.transpose %67, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %69 = stablehlo.dot_general %63, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<6x4xf32>) -> tensor<8x6xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %cst_30 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %71 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<3x24xf32>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<6x24xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %c_33 = stablehlo.constant dense<0> : tensor<i32>
    %74:23 = stablehlo.while(%iterArg = %0, %iterArg_39 = %18#7, %iterArg_40 = %18#8, %iterArg_41 = %18#9, %iterArg_42 = %18#10, %iterArg_43 = %18#11, %iterArg_44 = %18#12, %iterArg_45 = %18#13, %iterArg_46 = %18#14, %iterArg_47 = %18#15, %iterArg_48 = %18#16, %iterArg_49 = %18#17, %iterArg_50 = %18#18, %iterArg_51 = %18#19, %iterArg_52 = %18#20, %iterArg_53 = %18#21, %iterArg_54 = %arg2, %iterArg_55 = %c_33, %iterArg_56 = %71, %iterArg_57 = %72, %iterArg_58 = %73, %iterArg_59 = %69, %iterArg_60 = %70) : tensor<5x8x3xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<6x24xf32>, tensor<i32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>
    cond {
      %c_61 = stablehlo.constant dense<5> : tensor<i32>
      %90 = stablehlo.compare LT, %iterArg_55, %c_61, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %90 : tensor<i1>
    } do {
      %c_61 = stablehlo.constant dense<5> : tensor<i32>
      %90 = stablehlo.subtract %c_61, %iterArg_55 : tensor<i32>
      %c_62 = stablehlo.constant dense<1> : tensor<i32>
      %91 = stablehlo.subtract %90, %c_62 : tensor<i32>
      %92 = func.call @dynamic_index_in_dim(%iterArg, %91) : (tensor<5x8x3xf32>, tensor<i32>) -> tensor<8x3xf32>
      %93 = func.call @dynamic_index_in_dim_0(%iterArg_39, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %94 = func.call @dynamic_index_in_dim_0(%iterArg_40, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %95 = func.call @dynamic_index_in_dim_0(%iterArg_41, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %96 = func.call @dynamic_index_in_dim_0(%iterArg_42, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %97 = func.call @dynamic_index_in_dim_0(%iterArg_43, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %98 = func.call @dynamic_index_in_dim_0(%iterArg_44, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %99 = func.call @dynamic_index_in_dim_0(%iterArg_45, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %100 = func.call @dynamic_index_in_dim_0(%iterArg_46, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %101 = func.call @dynamic_index_in_dim_0(%iterArg_47, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %102 = func.call @dynamic_index_in_dim_0(%iterArg_48, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %103 = func.call @dynamic_index_in_dim_0(%iterArg_49, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %104 = func.call @dynamic_index_in_dim_0(%iterArg_50, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %105 = func.call @dynamic_index_in_dim_0(%iterArg_51, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %106 = func.call @dynamic_index_in_dim_0(%iterArg_52, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %107 = func.call @dynamic_index_in_dim_0(%iterArg_53, %91) : (tensor<5x8x6xf32>, tensor<i32>) -> tensor<8x6xf32>
      %108:5 = func.call @closed_call_1(%iterArg_54, %iterArg_56, %iterArg_57, %iterArg_58, %iterArg_59, %iterArg_60, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107) : (tensor<6x24xf32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x3xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>) -> (tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>)
      %c_63 = stablehlo.constant dense<1> : tensor<i32>
      %109 = stablehlo.add %iterArg_55, %c_63 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_39, %iterArg_40, %iterArg_41, %iterArg_42, %iterArg_43, %iterArg_44, %iterArg_45, %iterArg_46, %iterArg_47, %iterArg_48, %iterArg_49, %iterArg_50, %iterArg_51, %iterArg_52, %iterArg_53, %iterArg_54, %109, %108#0, %108#1, %108#2, %108#3, %108#4 : tensor<5x8x3xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<5x8x6xf32>, tensor<6x24xf32>, tensor<i32>, tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>
    }
    %cst_34 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %75 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %76 = stablehlo.multiply %75, %74#20 : tensor<24xf32>
    %77 = stablehlo.subtract %arg0, %76 : tensor<24xf32>
    %cst_35 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %79 = stablehlo.multiply %78, %66 : tensor<4xf32>
    %80 = stablehlo.subtract %arg1, %79 : tensor<4xf32>
    %cst_36 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<6x24xf32>
    %82 = stablehlo.multiply %81, %74#19 : tensor<6x24xf32>
    %83 = stablehlo.subtract %arg2, %82 : tensor<6x24xf32>
    %cst_37 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<3x24xf32>
    %85 = stablehlo.multiply %84, %74#18 : tensor<3x24xf32>
    %86 = stablehlo.subtract %arg3, %85 : tensor<3x24xf32>
    %cst_38 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
    %88 = stablehlo.multiply %87, %68 : tensor<6x4xf32>
    %89 = stablehlo.subtract %arg4, %88 : tensor<6x4xf32>
    return %77, %80, %83, %86, %89, %42 : tensor<24xf32>, tensor<4xf32>, tensor<6x24xf32>, tensor<3x24xf32>, tensor<6x4xf32>, tensor<f32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x8x3xf32>, %arg1: tensor<i32>) -> tensor<8x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 8, 3] : (tensor<5x8x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x3xf32>) -> tensor<8x3xf32>
    return %1 : tensor<8x3xf32>
  }
  func.func private @closed_call(%arg0: tensor<3x24xf32>, %arg1: tensor<6x24xf32>, %arg2: tensor<1x24xf32>, %arg3: tensor<8x6xf32>, %arg4: tensor<8x6xf32>, %arg5: tensor<8x3xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>) {
    %0 = stablehlo.dot_general %arg5, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x3xf32>, tensor<3x24xf32>) -> tensor<8x24xf32>
    %1 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x24xf32>
    %3 = stablehlo.broadcast_in_dim %arg2, dims = [0, 1] : (tensor<1x24xf32>) -> tensor<8x24xf32>
    %4 = stablehlo.add %2, %3 : tensor<8x24xf32>
    %5 = stablehlo.slice %4 [0:8, 0:6] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %6 = stablehlo.slice %4 [0:8, 6:12] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %7 = stablehlo.slice %4 [0:8, 12:18] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %8 = stablehlo.slice %4 [0:8, 18:24] : (tensor<8x24xf32>) -> tensor<8x6xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %10 = stablehlo.multiply %9, %6 : tensor<8x6xf32>
    %11 = stablehlo.tanh %10 : tensor<8x6xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %13 = stablehlo.subtract %12, %11 : tensor<8x6xf32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %15 = stablehlo.multiply %14, %11 : tensor<8x6xf32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %17 = stablehlo.add %15, %16 : tensor<8x6xf32>
    %18 = stablehlo.multiply %17, %arg4 : tensor<8x6xf32>
    %cst_3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %20 = stablehlo.multiply %19, %5 : tensor<8x6xf32>
    %21 = stablehlo.tanh %20 : tensor<8x6xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %23 = stablehlo.subtract %22, %21 : tensor<8x6xf32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %25 = stablehlo.multiply %24, %21 : tensor<8x6xf32>
    %cst_6 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %27 = stablehlo.add %25, %26 : tensor<8x6xf32>
    %28 = stablehlo.tanh %7 : tensor<8x6xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %30 = stablehlo.subtract %29, %28 : tensor<8x6xf32>
    %31 = stablehlo.multiply %27, %28 : tensor<8x6xf32>
    %32 = stablehlo.add %18, %31 : tensor<8x6xf32>
    %cst_8 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %34 = stablehlo.multiply %33, %8 : tensor<8x6xf32>
    %35 = stablehlo.tanh %34 : tensor<8x6xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %37 = stablehlo.subtract %36, %35 : tensor<8x6xf32>
    %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %39 = stablehlo.multiply %38, %35 : tensor<8x6xf32>
    %cst_11 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %41 = stablehlo.add %39, %40 : tensor<8x6xf32>
    %42 = stablehlo.tanh %32 : tensor<8x6xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %44 = stablehlo.subtract %43, %42 : tensor<8x6xf32>
    %45 = stablehlo.multiply %41, %42 : tensor<8x6xf32>
    return %45, %32, %arg3, %11, %13, %arg4, %17, %21, %23, %28, %30, %27, %35, %37, %42, %44, %41 : tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<5x8x6xf32>, %arg1: tensor<8x6xf32>, %arg2: tensor<i32>) -> tensor<5x8x6xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<8x6xf32>) -> tensor<1x8x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<5x8x6xf32>, tensor<1x8x6xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5x8x6xf32>
    return %1 : tensor<5x8x6xf32>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<5x8x6xf32>, %arg1: tensor<i32>) -> tensor<8x6xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 8, 6] : (tensor<5x8x6xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x6xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x8x6xf32>) -> tensor<8x6xf32>
    return %1 : tensor<8x6xf32>
  }
  func.func private @closed_call_1(%arg0: tensor<6x24xf32>, %arg1: tensor<3x24xf32>, %arg2: tensor<6x24xf32>, %arg3: tensor<24xf32>, %arg4: tensor<8x6xf32>, %arg5: tensor<8x6xf32>, %arg6: tensor<8x3xf32>, %arg7: tensor<8x6xf32>, %arg8: tensor<8x6xf32>, %arg9: tensor<8x6xf32>, %arg10: tensor<8x6xf32>, %arg11: tensor<8x6xf32>, %arg12: tensor<8x6xf32>, %arg13: tensor<8x6xf32>, %arg14: tensor<8x6xf32>, %arg15: tensor<8x6xf32>, %arg16: tensor<8x6xf32>, %arg17: tensor<8x6xf32>, %arg18: tensor<8x6xf32>, %arg19: tensor<8x6xf32>, %arg20: tensor<8x6xf32>, %arg21: tensor<8x6xf32>) -> (tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>) {
    %0 = stablehlo.multiply %arg21, %arg4 : tensor<8x6xf32>
    %1 = stablehlo.multiply %arg4, %arg19 : tensor<8x6xf32>
    %2 = stablehlo.multiply %0, %arg20 : tensor<8x6xf32>
    %3 = stablehlo.add %arg5, %2 : tensor<8x6xf32>
    %4 = stablehlo.multiply %2, %arg19 : tensor<8x6xf32>
    %5 = stablehlo.add %3, %4 : tensor<8x6xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %7 = stablehlo.multiply %6, %1 : tensor<8x6xf32>
    %8 = stablehlo.multiply %7, %arg18 : tensor<8x6xf32>
    %9 = stablehlo.multiply %8, %arg17 : tensor<8x6xf32>
    %10 = stablehlo.add %8, %9 : tensor<8x6xf32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %12 = stablehlo.multiply %11, %10 : tensor<8x6xf32>
    %13 = stablehlo.multiply %arg16, %5 : tensor<8x6xf32>
    %14 = stablehlo.multiply %5, %arg14 : tensor<8x6xf32>
    %15 = stablehlo.multiply %13, %arg15 : tensor<8x6xf32>
    %16 = stablehlo.multiply %15, %arg14 : tensor<8x6xf32>
    %17 = stablehlo.add %15, %16 : tensor<8x6xf32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %19 = stablehlo.multiply %18, %14 : tensor<8x6xf32>
    %20 = stablehlo.multiply %19, %arg13 : tensor<8x6xf32>
    %21 = stablehlo.multiply %20, %arg12 : tensor<8x6xf32>
    %22 = stablehlo.add %20, %21 : tensor<8x6xf32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %24 = stablehlo.multiply %23, %22 : tensor<8x6xf32>
    %25 = stablehlo.multiply %arg11, %5 : tensor<8x6xf32>
    %26 = stablehlo.multiply %5, %arg10 : tensor<8x6xf32>
    %cst_3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %28 = stablehlo.multiply %27, %26 : tensor<8x6xf32>
    %29 = stablehlo.multiply %28, %arg9 : tensor<8x6xf32>
    %30 = stablehlo.multiply %29, %arg8 : tensor<8x6xf32>
    %31 = stablehlo.add %29, %30 : tensor<8x6xf32>
    %cst_4 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x6xf32>
    %33 = stablehlo.multiply %32, %31 : tensor<8x6xf32>
    %34 = stablehlo.concatenate %24, %33, %17, %12, dim = 1 : (tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x24xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.reduce(%34 init: %cst_5) applies stablehlo.add across dimensions = [0] : (tensor<8x24xf32>, tensor<f32>) -> tensor<24xf32>
    %36 = stablehlo.reshape %35 : (tensor<24xf32>) -> tensor<1x24xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.reduce(%36 init: %cst_6) applies stablehlo.add across dimensions = [0] : (tensor<1x24xf32>, tensor<f32>) -> tensor<24xf32>
    %38 = stablehlo.add %arg3, %37 : tensor<24xf32>
    %39 = stablehlo.dot_general %34, %arg7, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x24xf32>, tensor<8x6xf32>) -> tensor<24x6xf32>
    %40 = stablehlo.transpose %39, dims = [1, 0] : (tensor<24x6xf32>) -> tensor<6x24xf32>
    %41 = stablehlo.add %arg2, %40 : tensor<6x24xf32>
    %42 = stablehlo.dot_general %34, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x24xf32>, tensor<6x24xf32>) -> tensor<8x6xf32>
    %43 = stablehlo.dot_general %34, %arg6, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x24xf32>, tensor<8x3xf32>) -> tensor<24x3xf32>
    %44 = stablehlo.transpose %43, dims = [1, 0] : (tensor<24x3xf32>) -> tensor<3x24xf32>
    %45 = stablehlo.add %arg1, %44 : tensor<3x24xf32>
    return %45, %41, %38, %42, %25 : tensor<3x24xf32>, tensor<6x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<8x6xf32>
  }
}
