"""Running compiled kernels on the host: the NumPy ISA interpreter of the ``nisa`` dialect.

- :mod:`.memory`: the physical memory model (HBM arrays, byte-addressed SBUF and PSUM);
- :mod:`.numerics`: ALU operators, activation functions and the fp32 casting rules;
- :mod:`.interpreter`: :func:`~.interpreter.decode` a module once into a
  :class:`~.interpreter.Program`, then ``Program.run(args)`` it.

Design: ``design.md`` section 8; semantics: ``nki_spec.md`` sections 2, 3 and 5.
"""
