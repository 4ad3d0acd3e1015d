build-tsan/obj/common/fit.o: src/common/fit.c src/base/base.h \
  include/ggfit.h src/llama/graph_cache.h src/ggml/ggml.h \
  src/ggml/galloc.h src/ggml/ops.h src/ggml/sched.h src/llama/build.h \
  src/llama/arch.h src/llama/model.h src/llama/project.h \
  src/llama/patterns.h

src/base/base.h:

include/ggfit.h:

src/llama/graph_cache.h:

src/ggml/ggml.h:

src/ggml/galloc.h:

src/ggml/ops.h:

src/ggml/sched.h:

src/llama/build.h:

src/llama/arch.h:

src/llama/model.h:

src/llama/project.h:

src/llama/patterns.h:
