build-tsan/obj/llama/context.o: src/llama/context.c src/base/base.h \
  include/ggfit.h src/ggml/backend.h src/ggml/sched.h src/ggml/galloc.h \
  src/ggml/ops.h src/llama/build.h src/ggml/ggml.h src/llama/arch.h \
  src/llama/model.h src/llama/debug.h src/llama/graph_cache.h \
  src/llama/project.h

src/base/base.h:

include/ggfit.h:

src/ggml/backend.h:

src/ggml/sched.h:

src/ggml/galloc.h:

src/ggml/ops.h:

src/llama/build.h:

src/ggml/ggml.h:

src/llama/arch.h:

src/llama/model.h:

src/llama/debug.h:

src/llama/graph_cache.h:

src/llama/project.h:
