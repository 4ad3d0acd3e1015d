build-tsan/obj/llama/debug.o: src/llama/debug.c src/llama/debug.h \
  src/ggml/ggml.h src/ggml/galloc.h include/ggfit.h src/ggml/ops.h \
  src/base/base.h src/ggml/sched.h

src/llama/debug.h:

src/ggml/ggml.h:

src/ggml/galloc.h:

include/ggfit.h:

src/ggml/ops.h:

src/base/base.h:

src/ggml/sched.h:
