build-tsan/obj/llama/graph_cache.o: src/llama/graph_cache.c \
  src/llama/graph_cache.h src/base/base.h include/ggfit.h \
  src/ggml/ggml.h src/ggml/galloc.h src/ggml/ops.h src/ggml/sched.h \
  src/llama/build.h src/llama/arch.h src/llama/model.h

src/llama/graph_cache.h:

src/base/base.h:

include/ggfit.h:

src/ggml/ggml.h:

src/ggml/galloc.h:

src/ggml/ops.h:

src/ggml/sched.h:

src/llama/build.h:

src/llama/arch.h:

src/llama/model.h:
