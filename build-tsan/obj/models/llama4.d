build-tsan/obj/models/llama4.o: src/models/llama4.c src/llama/graph.h \
  src/llama/build.h src/ggml/ggml.h src/ggml/galloc.h include/ggfit.h \
  src/ggml/ops.h src/base/base.h src/ggml/sched.h src/llama/arch.h \
  src/llama/model.h

src/llama/graph.h:

src/llama/build.h:

src/ggml/ggml.h:

src/ggml/galloc.h:

include/ggfit.h:

src/ggml/ops.h:

src/base/base.h:

src/ggml/sched.h:

src/llama/arch.h:

src/llama/model.h:
