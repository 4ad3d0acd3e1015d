build-tsan/obj/models/ernie4_5_moe.o: src/models/ernie4_5_moe.c \
  src/llama/graph.h src/llama/build.h src/ggml/ggml.h src/ggml/galloc.h \
  include/ggfit.h src/ggml/ops.h src/base/base.h src/ggml/sched.h \
  src/llama/arch.h src/llama/model.h

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
