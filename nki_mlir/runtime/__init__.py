"""The backend on the host: kernel artifacts, the compile cache and the NumPy ISA interpreter.

- :mod:`.artifact`, :mod:`.cache`: the versioned kernel artifact and the compile cache;
- :mod:`.memory`: the physical memory model (HBM arrays, byte-addressed SBUF and PSUM);
- :mod:`.numerics`: ALU operators, activation functions and the fp32 casting rules;
- :mod:`.interpreter`: :func:`~.interpreter.decode` a module once into a
  :class:`~.interpreter.Program`, then ``Program.run(args)`` it.  Its parts:
  :mod:`.handlers` / :mod:`.decoder` / :mod:`.program` / :mod:`.env` (decode and run), :mod:`.control` and
  :mod:`.views` (func/scf/arith and memref.subview), and one module per instruction family
  (:mod:`.isa_memory`, :mod:`.isa_alu`, :mod:`.isa_activation`, :mod:`.isa_matmul`).

Design: docs/backend.md; semantics: the NKI ``nki.isa`` API pages and the NKI architecture guide.
"""
