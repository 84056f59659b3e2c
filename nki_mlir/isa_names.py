"""The names of the ``nki.isa`` instructions (shared by the Beta 2 ``nisa`` module, the Beta 1
one and the frontend, without import cycles)."""

INSTRUCTIONS = [
    # data movement
    "dma_copy", "dma_transpose", "dma_compute", "tensor_copy", "tensor_copy_predicated",
    "nc_n_gather", "local_gather", "nc_stream_shuffle",
    # tensor engine
    "nc_matmul", "nc_matmul_mx", "nc_transpose", "quantize_mx",
    # scalar engine
    "activation", "activation_reduce", "activate2",
    # vector / gpsimd
    "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor", "tensor_reduce",
    "tensor_partition_reduce", "tensor_scalar_reduce", "tensor_scalar_cumulative",
    "tensor_tensor_scan", "bn_stats", "bn_aggr", "reciprocal", "exponential", "select_reduce",
    "range_select", "max8", "nc_find_index8", "nc_match_replace8", "memset", "iota",
    "affine_select", "sequence_bounds", "nonzero_with_count", "topk",
    # random numbers
    "dropout", "rng", "set_rng_seed", "rand_set_state", "rand_get_state", "rand2",
    # cross-core (LNC2)
    "core_barrier", "sendrecv",
    # registers
    "register_alloc", "register_move", "register_load", "register_store",
    # queries
    "get_nc_version", "get_nc_sub_version",
]
