builtin.module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @nki_tensor_add_kernel(%a_input: memref<128x512xf32, #nisa.mem<shared_hbm>>, %b_input: memref<128x512xf32, #nisa.mem<shared_hbm>>) -> memref<128x512xf32, #nisa.mem<shared_hbm>> attributes {nki.output_names = ["c_output"]} {
    %a_tile = nki.ndarray(name=a_tile) : memref<128x512xf32, #nisa.mem<sbuf>>
    nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %a_tile, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %a_input)
    %b_tile = nki.ndarray(name=b_tile) : memref<128x512xf32, #nisa.mem<sbuf>>
    nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %b_tile, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %b_input)
    %c_tile = nki.ndarray(name=c_tile) : memref<128x512xf32, #nisa.mem<sbuf>>
    nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %c_tile, data1=memref<128x512xf32, #nisa.mem<sbuf>> %a_tile, data2=memref<128x512xf32, #nisa.mem<sbuf>> %b_tile, op=add)
    %c_output = nki.ndarray(name=c_output) : memref<128x512xf32, #nisa.mem<shared_hbm>>
    nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %c_output, src=memref<128x512xf32, #nisa.mem<sbuf>> %c_tile)
    func.return %c_output : memref<128x512xf32, #nisa.mem<shared_hbm>>
  }
}
